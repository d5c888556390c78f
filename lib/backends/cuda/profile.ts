/**
 * A cuda engine's per-layer profile in the shape every backend gives (lib/engine/profile.ts):
 * CudaRunner.profile()'s plan steps, each timed alone (`launch` mode, `runs` executions in one
 * native call), one entry per step. A layer lowered into several steps has one entry per step;
 * several layers fused into one kernel have one, named after the layer the step was lowered from.
 */
import { InvalidArgumentError } from '../../errors';
import type { Engine } from '../../engine/backend';
import type { EngineProfile } from '../../engine/profile';
import type { RunValue } from '../../engine/residency';
import type { StepProfile } from './run/runner';

/** What the mapping needs of a CudaRunner (tests hand it a fake). */
export interface StepProfiler {
  profile(inputs: Readonly<Record<string, RunValue>>, options: { repeats?: number; mode?: 'launch' | 'graph' }): Promise<StepProfile[]>;
}

/** CudaRunner.profile()'s steps as {@link EngineProfile} layers, in plan order. */
export function stepsAsLayers(steps: readonly StepProfile[]): EngineProfile {
  return { timing: 'cuda-step', layers: steps.map((s) => ({ name: s.layer, kind: s.kind, detail: s.stepKind, ms: s.ms })) };
}

/**
 * Backend.profileEngine of the cuda backend.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: `engine` is not a cuda engine.
 */
export async function profileCudaEngine(engine: Engine, inputs: Readonly<Record<string, RunValue>>, options: { runs: number }): Promise<EngineProfile> {
  const profiler = engine as Partial<StepProfiler>;
  if (typeof profiler.profile !== 'function') throw new InvalidArgumentError('profileEngine(): the engine was not loaded by the cuda backend');
  return stepsAsLayers(await profiler.profile(inputs, { repeats: options.runs, mode: 'launch' }));
}
