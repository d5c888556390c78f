/**
 * Building a cuda engine: the network is instantiated and lowered at every profile's min,
 * opt and max shapes that fit together (a static network at its one shape); the distinct kernel sources this
 * gives are compiled with NVRTC for the target device's compute capability (through the
 * on-disk kernel cache, lib/gpu/kernel-cache.ts) and stored with the network in the engine
 * bytes. Kernel source never depends on dims (layers/types.ts), so these cubins serve
 * every shape of the profiles; a shape that needs another kernel compiles it at run time.
 */
import { BadInputError, InternalError, UnsupportedOpError } from '../../errors';
import { resolveLogger, type Logger } from '../../logger';
import { gpuBinding } from '../../gpu/binding';
import { compileWithCache } from '../../gpu/kernel-cache';
import { liveLayers, type Network } from '../../network';
import { describePrecision, REDUCED_MAX } from '../../network/precision';
import type { BuildConfig } from '../../engine/build-config';
import { kernelSources, type PlanModule } from './plan/assemble';
import { CUDA_PASSES, runPasses } from './passes';
import { describeEngineMemory, serializeCudaEngine, type EngineKernel, type EngineMemory, type EngineTarget } from './engine-format';
import { instantiate, profileShapeSets, type HostEvaluator, type Instance } from './plan/instantiate';
import { lowerInstance, type LayerLowerer } from './plan/lower-instance';
import { layoutWeights, weightLocator } from './plan/weights';

/** Compiles one kernel source for one architecture to a cubin. */
export type KernelCompiler = (module: PlanModule, arch: number) => Promise<Uint8Array>;

/** The SM architecture number of a compute capability (9.0 → 90). */
export const archOf = (cc: { major: number; minor: number }): number => cc.major * 10 + cc.minor;

/** A profile corner whose input shapes contradict the network (see {@link networkPlans}). */
export interface UnfitShapeSet {
  shapes: Record<string, number[]>;
  reason: string;
}

/**
 * Every distinct kernel source `network` needs at its profile shapes (min, opt and max of each profile), and the
 * device memory its plans take there (EngineMemory: what `inspect` reports). Pure given `lower`.
 *
 * A corner may be a combination no run can give: a KV-cache model's profile lets the new
 * tokens and the past each reach the maximum length, but the attention mask is their sum, so
 * its max corner makes the mask shorter than the scores. Such a set (its instantiation fails
 * shape inference) is left out and returned in `unfit`; its kernels compile when a run first
 * needs them. When no set fits, the first failure is the network's own error and is thrown.
 * The cost: a network built wrong at one corner only is not caught here; a run at that corner
 * then fails as E_BAD_INPUT naming the layer (plan/instantiate.ts).
 */
export function networkPlans(network: Network, lower?: LayerLowerer, evaluate?: HostEvaluator): { modules: PlanModule[]; memory: EngineMemory; unfit: UnfitShapeSet[] } {
  const layout = layoutWeights(network);
  const weights = weightLocator(layout);
  const all = new Map<string, PlanModule>();
  let arenaBytes = 0;
  const sets = profileShapeSets(network);
  const unfit: UnfitShapeSet[] = [];
  let first: unknown;
  let planned = 0;
  for (const shapes of sets) {
    let instance: Instance;
    try {
      instance = instantiate(network, shapes, evaluate);
    } catch (error) {
      // BadInputError: a layer's rule breaks; InternalError: a host-computed shape value fails.
      if (!(error instanceof BadInputError) && !(error instanceof InternalError)) throw error;
      first ??= error;
      unfit.push({ shapes, reason: error.message });
      continue;
    }
    const lowered = lowerInstance(network, instance, weights, lower);
    arenaBytes = Math.max(arenaBytes, lowered.arenaBytes);
    for (const m of kernelSources(lowered.steps)) if (!all.has(m.key)) all.set(m.key, m);
    planned++;
  }
  if (planned === 0) throw first;
  return { modules: [...all.values()], memory: { weightBytes: layout.bytes, arenaBytes, shapeSets: planned }, unfit };
}

/** NVRTC through the disk cache (the addon's compiler). */
export function nvrtcCompiler(logger?: Logger): KernelCompiler {
  return async (module, arch) => {
    const binding = gpuBinding();
    const nvrtc = await binding.nvrtcInfo();
    const compiled = await compileWithCache(
      { source: module.source, name: `${module.key}.cu`, arch, options: [] },
      { nvrtcVersion: nvrtc.version, logger, compile: (r) => binding.nvrtcCompile(r.source, r.name, r.arch, [...(r.options ?? [])]) },
    );
    return compiled.cubin;
  };
}

/** Compiles every kernel of `modules` for `arch`. */
export async function compileKernels(modules: readonly PlanModule[], arch: number, compile: KernelCompiler): Promise<EngineKernel[]> {
  const out: EngineKernel[] = [];
  for (const m of modules) out.push({ key: m.key, entry: m.entry, sourceHash: m.sourceHash, arch, cubin: await compile(m, arch) });
  return out;
}

/**
 * Refuses a network that still holds float8e4m3fn or int4 tensors after the passes (a network
 * input of those types, or a live layer's output, such as a constant one the spelled-out
 * quantization did not consume): no kernel of this backend loads or stores them. Layers that
 * reach no output (a quantized weight the pass computed at build) are never planned.
 */
export function refuseUnheldTypes(network: Network): void {
  const unheld = (id: number): boolean => network.tensor(id).dtype === 'float8e4m3fn' || network.tensor(id).dtype === 'int4';
  const id = [...network.inputs.map((i) => i.tensor), ...liveLayers(network).flatMap((l) => l.outputs)].find(unheld);
  if (id === undefined) return;
  const t = network.tensor(id);
  const layer = t.producer >= 0 ? network.layers[t.producer] : undefined;
  const where = layer === undefined ? `input "${t.name}"` : `layer "${layer.name}" (${layer.params.kind})`;
  throw new UnsupportedOpError(`the cuda backend cannot hold ${t.dtype} tensors: ${where} makes ${t.dtype} tensor "${t.name}" (quantized values exist only between quantize and dequantize layers, which this backend spells out in float arithmetic)`, {
    details: { ...(layer === undefined ? { input: t.name } : { layer: layer.name }), dtype: t.dtype },
  });
}

export interface BuildOptions {
  lower?: LayerLowerer;
  compile?: KernelCompiler;
  logger?: Logger;
}

/**
 * Engine bytes for `network` (checked by the caller) built for `target`. The pass list
 * (./passes/index.ts) runs once: the engine stores the rewritten network, so a loaded engine
 * runs exactly what was built.
 */
export async function buildCudaEngine(source: Network, config: BuildConfig, target: EngineTarget, options: BuildOptions = {}): Promise<Uint8Array> {
  const log = resolveLogger(options.logger);
  const passes = runPasses(source, { precisions: config.precisions });
  const { network, precision: report } = passes;
  refuseUnheldTypes(network);
  const precision = describePrecision(report);
  CUDA_PASSES.forEach((pass, i) => {
    const line = pass.describe(passes.outcomes[i]!.counts);
    if (line !== null) log('debug', `cuda backend: network "${source.name}": ${pass.name}: ${line}`);
  });
  log('info', `cuda backend: network "${source.name}" computes in ${precision}`);
  if (config.timingCache !== undefined) {
    // The setting is TensorRT's builder cache; this backend times its GEMMs when a plan is made,
    // after build() and possibly on another machine, so a build-time path cannot reach them.
    log('warn', `cuda backend: the timingCache setting is TensorRT's and the cuda backend does not read it; its GEMM timings go to TENSORRT_NODE_TIMING_CACHE (or TENSORRT_NODE_ENGINE_CACHE's directory) when a plan is made (docs/cuda-backend.md, "Timing cache")`);
  }
  if (report.clampedValues > 0) {
    log('warn', `cuda backend: network "${source.name}": ${report.clampedValues} weight values are beyond the ${report.dtype} range; clamped to ±${REDUCED_MAX[report.dtype!]}`);
  }
  const { modules, memory, unfit } = networkPlans(network, options.lower);
  for (const u of unfit) {
    const shapes = Object.entries(u.shapes).map(([name, dims]) => `${name} [${dims.join(', ')}]`).join(', ');
    log('debug', `cuda backend: network "${network.name}": the profile shapes ${shapes} do not fit together (${u.reason}); no plan is made for them at build`);
  }
  log('info', `cuda backend: network "${network.name}" takes ${describeEngineMemory(memory)}`);
  const arch = archOf(target.computeCapability);
  const kernels = await compileKernels(modules, arch, options.compile ?? nvrtcCompiler(options.logger));
  log('debug', `cuda backend: network "${network.name}" needs ${kernels.length} kernels; compiled for sm_${arch} (${target.name})`);
  return serializeCudaEngine({ network, config, target, kernels, precision, memory });
}
