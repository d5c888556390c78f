/**
 * program.profile(): where a run of a program spends its time, per layer of each engine
 * segment and per node of each fallback segment (the types and what each timing means:
 * lib/engine/profile.ts). It runs wherever the program's runs run (the worker, or the calling
 * thread for programs of GPU engines), in three passes over the same inputs: `warmup` untimed
 * runs; `runs` timed runs, each segment's wall clock and each fallback node's time measured;
 * then one run in which each engine segment's backend times that engine's layers on the very
 * values the segment reads (Backend.profileEngine, `runs` times).
 */
import { getBackend } from '../backends';
import type { Engine } from '../engine/backend';
import type { EngineProfile, ProfileEntry, ProfileOptions, ProgramProfile, SegmentProfile } from '../engine/profile';
import type { RunValue } from '../engine/residency';
import { InvalidArgumentError, UnsupportedOpError } from '../errors';
import type { Node } from '../ir/graph';
import type { OpReport, PartitionReport } from '../partitioning/partition';
import type { ProgramExecutor, SegmentHooks } from './execute';
import type { ProgramData } from './segments';

export type { EngineLayerTime, EngineProfile, ProfileEntry, ProfileOptions, ProfileSource, ProfileTiming, ProgramProfile, SegmentProfile } from '../engine/profile';

/** program.profile()'s defaults: 10 timed runs after 1 untimed one. */
export const PROFILE_DEFAULTS = Object.freeze({ runs: 10, warmup: 1 });

/** {@link ProfileOptions} validated, defaults filled. */
export interface ResolvedProfileOptions {
  runs: number;
  warmup: number;
}

/** The backend of fallback segments' entries. */
const INTERPRETER = 'interpreter';

/**
 * Validates program.profile()'s options.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the option and the value at fault.
 */
export function resolveProfileOptions(options: unknown): ResolvedProfileOptions {
  if (options === undefined) return { ...PROFILE_DEFAULTS };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidArgumentError(`profile(): options must be an object {runs?, warmup?}, got ${JSON.stringify(options)}`);
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (key !== 'runs' && key !== 'warmup') throw new InvalidArgumentError(`profile(): unknown option "${key}" (known: runs, warmup)`);
  const count = (key: 'runs' | 'warmup', min: number): number => {
    const v = o[key];
    if (v === undefined) return PROFILE_DEFAULTS[key];
    if (!(Number.isSafeInteger(v) && (v as number) >= min)) throw new InvalidArgumentError(`profile(): ${key} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    return v as number;
  };
  return { runs: count('runs', 1), warmup: count('warmup', 0) };
}

/** Why the tensorrt backend's engines cannot be profiled. */
const TENSORRT_REASON =
  "the native addon does not bind TensorRT's IProfiler (IExecutionContext::setProfiler), so the layers of a TensorRT engine cannot be timed; " +
  'compile the model with the cuda or onnxruntime backend to profile it';

/**
 * Refuses, before anything runs, a program with an engine whose backend cannot time its
 * layers (no Backend.profileEngine: the tensorrt backend).
 *
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP` naming the segment and the backend (`details.backend`, `details.segment`).
 */
export function checkProfilable(data: ProgramData): void {
  data.segments.forEach((s, index) => {
    if (s.kind !== 'engine' || getBackend(s.backend).profileEngine !== undefined) return;
    const why = s.backend === 'tensorrt' ? TENSORRT_REASON : `the ${s.backend} backend cannot time the layers of its engines`;
    throw new UnsupportedOpError(`program.profile(): segment ${index} is a ${s.backend} engine: ${why}`, { details: { backend: s.backend, segment: index, feature: 'profile' } });
  });
}

/** Each fallback node's time, summed over the timed runs, in the order the nodes first ran. */
type NodeTimes = Map<Node, number>;

/**
 * Profiles `runs` runs of the program `executor` runs on `inputs` (in program input order,
 * checked by the caller). Entries have no `from` yet: the partition report that traces them
 * to the model lives with the Program ({@link traceToModel}).
 *
 * @throws {UnsupportedOpError} see {@link checkProfilable}.
 */
export async function profileProgram(data: ProgramData, executor: ProgramExecutor, inputs: readonly RunValue[], options: ResolvedProfileOptions): Promise<ProgramProfile> {
  checkProfilable(data);
  const { runs, warmup } = options;
  const runOnce = async (hooksOf: (index: number) => SegmentHooks | undefined, segmentMs?: number[]): Promise<void> => {
    const { segments, run } = await executor.segmentRun(inputs);
    try {
      for (const [i, s] of segments.entries()) {
        const t0 = performance.now();
        await run.runSegment(s, hooksOf(i));
        if (segmentMs !== undefined) segmentMs[i]! += performance.now() - t0;
      }
      await run.outputs();
    } finally {
      run.release();
    }
  };

  for (let w = 0; w < warmup; w++) await runOnce(() => undefined);

  const segmentMs = data.segments.map(() => 0);
  const nodeTimes = data.segments.map((): NodeTimes => new Map());
  const nodeHooks = nodeTimes.map((times): SegmentHooks => ({ onNode: (node, ms) => times.set(node, (times.get(node) ?? 0) + ms) }));
  let wallMs = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await runOnce((i) => (data.segments[i]!.kind === 'fallback' ? nodeHooks[i] : undefined), segmentMs);
    wallMs += performance.now() - t0;
  }

  const engineProfiles: Array<EngineProfile | undefined> = data.segments.map(() => undefined);
  if (data.segments.some((s) => s.kind === 'engine')) {
    await runOnce((i) => {
      const s = data.segments[i]!;
      if (s.kind !== 'engine') return undefined;
      const backend = getBackend(s.backend);
      return {
        engineRun: async (engine: Engine, feeds, limits) => {
          engineProfiles[i] = await backend.profileEngine!(engine, feeds, { runs, limits });
          return engine.run(feeds, limits);
        },
      };
    });
  }

  const entries: ProfileEntry[] = [];
  const segments: SegmentProfile[] = data.segments.map((s, index) => {
    const before = entries.length;
    if (s.kind === 'engine') {
      const profile = engineProfiles[index]!;
      for (const l of profile.layers) {
        entries.push({
          name: l.name,
          kind: l.kind,
          ...(l.detail !== undefined && { detail: l.detail }),
          ...(l.layer !== undefined && l.layer !== l.name && { layer: l.layer }),
          segment: index,
          segmentKind: 'engine',
          backend: s.backend,
          timing: profile.timing,
          ms: l.ms,
          share: 0,
        });
      }
    } else {
      for (const [node, ms] of nodeTimes[index]!) {
        entries.push({
          name: node.name,
          kind: node.target,
          from: { node: node.name, target: node.target },
          segment: index,
          segmentKind: 'fallback',
          backend: INTERPRETER,
          timing: 'host-wall-clock',
          ms: ms / runs,
          share: 0,
        });
      }
    }
    const layerMs = entries.slice(before).reduce((a, e) => a + e.ms, 0);
    const timing = s.kind === 'engine' ? engineProfiles[index]!.timing : 'host-wall-clock';
    return { index, kind: s.kind, backend: s.kind === 'engine' ? s.backend : INTERPRETER, timing, ms: segmentMs[index]! / runs, layerMs };
  });
  const totalMs = entries.reduce((a, e) => a + e.ms, 0);
  for (const e of entries) e.share = totalMs > 0 ? e.ms / totalMs : 0;
  return { runs, entries, segments, totalMs, wallMs: wallMs / runs };
}

/**
 * The report's op a layer was made from: layers are named after their IR node (`node` or
 * `node/role`, lib/conversion/context.ts), and node names may hold `/` themselves (ONNX's
 * `/features/features.0/Conv`), so the longest node name that is the layer's name or a
 * `/`-prefix of it.
 */
function opOfLayer(layer: string, ops: ReadonlyMap<string, OpReport>): OpReport | undefined {
  for (let end = layer.length; end > 0; end = layer.lastIndexOf('/', end - 1)) {
    const op = ops.get(layer.slice(0, end));
    if (op !== undefined) return op;
  }
  return undefined;
}

/**
 * The report's op an entry's layer was made from: {@link opOfLayer}, or for a step the cuda
 * backend fused from several layers (named `a+b`), the first of them that traces.
 */
function opOfEntry(layer: string, ops: ReadonlyMap<string, OpReport>): OpReport | undefined {
  const op = opOfLayer(layer, ops);
  if (op !== undefined || !layer.includes('+')) return op;
  for (const part of layer.split('+')) {
    const found = opOfLayer(part, ops);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * `profile` with each engine entry's `from` set where the partition report traces its layer
 * back to a node of the model (the report's segments are the program's, in order).
 */
export function traceToModel(profile: ProgramProfile, report: PartitionReport): ProgramProfile {
  const opsBySegment = new Map<number, Map<string, OpReport>>();
  for (const op of report.ops) {
    const ops = opsBySegment.get(op.segment) ?? new Map<string, OpReport>();
    ops.set(op.node, op);
    opsBySegment.set(op.segment, ops);
  }
  const entries = profile.entries.map((e) => {
    if (e.from !== undefined || e.segmentKind !== 'engine') return e;
    const ops = opsBySegment.get(report.segments[e.segment]?.index ?? e.segment);
    const op = ops === undefined ? undefined : opOfEntry(e.layer ?? e.name, ops);
    return op === undefined ? e : { ...e, from: { node: op.node, target: op.target } };
  });
  return { ...profile, entries };
}
