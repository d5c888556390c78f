/**
 * A prepared GPU plan over device tensors and modules: `run()` enqueues every step and settles
 * when the device is done; `capture()` records the steps once into a CUDA graph, which
 * `replay()` launches with one call. Nothing waits on the JS thread.
 *
 * How run() and replay() wait ({@link PlanRunOptions.completion}): `'pool'` enqueues and waits on a
 * libuv thread-pool thread (one pool thread parked per run); `'thread'` enqueues on the calling
 * thread (launches are asynchronous) and the device's completion thread waits for an event and
 * settles the Promise through a thread-safe function: no pool hop, so a shorter round trip, but
 * the enqueueing itself (about 4 µs a launch on the H200's host) then runs on the caller's thread.
 * `'auto'` (the default) takes the thread for what enqueues quickly — a graph replay (one
 * launch) or a run of at most {@link INLINE_ENQUEUE_STEPS} steps — and the pool for the rest, so a
 * long plan never holds the event loop. For that short work `'auto'` also polls the device on the
 * calling thread for up to {@link PlanRunOptions.pollMicros} µs (default 20) before handing the
 * wait to the completion thread: a tiny kernel is done by then, and its Promise settles without a
 * thread hop or an event-loop wake-up (the JS thread is held at most that long).
 * capture() always uses the pool (it runs the plan once and may block on lazy module loading).
 */
import { InvalidArgumentError } from '../errors';
import { gpuBinding, type NativePlan } from './binding';
import { deviceOrdinal, type DeviceLike } from './device';
import { DeviceTensor } from './device-tensor';
import type { GpuModule } from './module';
import { encodePlan, type PlanSpec } from './plan';

export interface PlanRunOptions {
  /** Who waits for the device: `'auto'` (default), a thread-pool thread (`'pool'`) or the device's completion thread (`'thread'`). */
  completion?: 'auto' | 'pool' | 'thread';
  /**
   * With `'auto'` and short work: how long (µs, 0–1000) the calling thread may poll for the
   * device before the completion thread takes over. Default `TENSORRT_NODE_INLINE_POLL_US` or 20;
   * 0 never polls. `'thread'` and `'pool'` never poll on the calling thread.
   */
  pollMicros?: number;
}

/** What {@link GpuPlan.execute} resolves with. */
export interface PlanExecution {
  /** The destinations, in the order of the outputs asked for. */
  readonly outputs: DeviceTensor[];
  /** The status word read after the run (0: no kernel reported bad data, or no status buffer given). */
  readonly status: number;
}

export interface PlanCreateOptions {
  /**
   * The most milliseconds preparing may spend timing GEMM candidates (`tune` > 1); once spent, the
   * remaining GEMMs take a choice this process remembers, else the heuristic's first. Default: no limit.
   */
  tuningBudgetMs?: number;
}

/** The default of {@link PlanRunOptions.pollMicros}. */
export const DEFAULT_POLL_MICROS = 20;

let envPollMicros: number | undefined;

/** µs a run with `options` may poll on the calling thread, given that it uses the completion thread (exported for tests). */
export function inlinePollMicros(options: PlanRunOptions, env: NodeJS.ProcessEnv = process.env): number {
  if ((options.completion ?? 'auto') !== 'auto') return 0;
  const given = options.pollMicros;
  if (given !== undefined) {
    if (!Number.isInteger(given) || given < 0 || given > 1000) throw new InvalidArgumentError(`pollMicros must be an integer from 0 to 1000, got ${String(given)}`);
    return given;
  }
  if (env !== process.env) return parsePollMicros(env.TENSORRT_NODE_INLINE_POLL_US);
  return (envPollMicros ??= parsePollMicros(env.TENSORRT_NODE_INLINE_POLL_US));
}

function parsePollMicros(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_POLL_MICROS;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 1000) throw new InvalidArgumentError(`TENSORRT_NODE_INLINE_POLL_US must be an integer from 0 to 1000, got "${text}"`);
  return value;
}

/** The most steps `'auto'` enqueues on the caller's thread (about 60 µs of launches at most). */
export const INLINE_ENQUEUE_STEPS = 16;

/** Whether a run that enqueues `enqueuedLaunches` launches settles through the completion thread (exported for tests). */
export function usesCompletionThread(options: PlanRunOptions, enqueuedLaunches: number): boolean {
  const completion = options.completion ?? 'auto';
  if (completion === 'auto') return enqueuedLaunches <= INLINE_ENQUEUE_STEPS;
  if (completion !== 'pool' && completion !== 'thread') {
    throw new InvalidArgumentError(`completion must be 'auto', 'pool' or 'thread', got ${String(completion)}`);
  }
  return completion === 'thread';
}

export class GpuPlan {
  /** @internal */
  readonly native: NativePlan;
  readonly device: number;

  private constructor(native: NativePlan, device: number) {
    this.native = native;
    this.device = device;
  }

  /**
   * Checks and prepares `spec` (library descriptors, algorithms, workspace, timed GEMM
   * candidates). `buffers[i]` is the plan's buffer i and `modules[j]` its module j; they are kept
   * alive while the plan lives.
   */
  static async create(spec: PlanSpec, buffers: readonly DeviceTensor[], modules: readonly GpuModule[] = [], device?: DeviceLike, options: PlanCreateOptions = {}): Promise<GpuPlan> {
    const budget = options.tuningBudgetMs;
    if (budget !== undefined && (!Number.isSafeInteger(budget) || budget < 0)) {
      throw new InvalidArgumentError(`tuningBudgetMs must be a non-negative integer (milliseconds), got ${String(budget)}`);
    }
    const ordinal = deviceOrdinal(device ?? buffers[0]?.device ?? modules[0]?.device ?? 0);
    for (const [i, t] of buffers.entries()) {
      if (t.device !== ordinal) throw new InvalidArgumentError(`plan buffer ${i} is on device ${t.device}, the plan on device ${ordinal}`);
    }
    const encoded = encodePlan(spec);
    const native = await gpuBinding().gpuCreatePlan(
      ordinal,
      encoded,
      buffers.map((t) => t.buffer),
      modules.map((m) => m.native),
      budget,
    );
    return new GpuPlan(native, ordinal);
  }

  get steps(): number {
    return this.native.steps;
  }

  /** Device memory the plan's library steps share (allocated once, at creation). */
  get workspaceBytes(): number {
    return this.native.workspaceBytes;
  }

  get captured(): boolean {
    return this.native.captured;
  }

  /** Runs the steps `times` times in a row (one native call) and waits for the device. */
  run(times = 1, options: PlanRunOptions = {}): Promise<void> {
    try {
      return usesCompletionThread(options, this.native.steps * times) ? this.native.submit(times, false, inlinePollMicros(options)) : this.native.run(times);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Runs once (warming up lazily loaded kernels), then captures the steps into a CUDA graph. */
  capture(): Promise<void> {
    return this.native.capture();
  }

  /** Launches the captured graph `times` times and waits. */
  replay(times = 1, options: PlanRunOptions = {}): Promise<void> {
    try {
      return usesCompletionThread(options, times) ? this.native.submit(times, true, inlinePollMicros(options)) : this.native.replay(times);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * One run of the captured graph with its copies, as one native call and one wait: each
   * `[planBuffer, source]` of `inputs` copied into the plan's buffer, the replay, then each
   * `[planBuffer, destination]` of `outputs` copied out, into the destination or (null) into a
   * new DeviceTensor of the plan buffer's dtype and shape, allocated in stream order. Resolves
   * with the destinations in order. Calls may follow one another without awaiting: the plan's
   * stream orders each call's input copies after the last call's output copies.
   *
   * `status`: a buffer of the plan whose first uint32 the plan's kernels set when they meet bad
   * data (see lib/backends/cuda/plan/run-checks.ts); it is read back after the output copies, in
   * the same wait, as the result's `status` (0 without one).
   */
  async execute(
    inputs: ReadonlyArray<readonly [DeviceTensor, DeviceTensor]>,
    outputs: ReadonlyArray<readonly [DeviceTensor, DeviceTensor | null]>,
    options: PlanRunOptions & { status?: DeviceTensor } = {},
  ): Promise<PlanExecution> {
    const buffers = await this.native.execute(
      inputs.map(([ours, source]) => [ours.buffer, source.buffer] as const),
      outputs.map(([ours, destination]) => [ours.buffer, destination?.buffer ?? null] as const),
      inlinePollMicros({ ...options, completion: 'auto' }),
      options.status?.buffer,
    );
    return {
      outputs: outputs.map(([ours, destination], i) => destination ?? DeviceTensor.adopt(buffers[i]!, ours.dtype, ours.shape)),
      status: buffers.status ?? 0,
    };
  }

  dispose(): void {
    this.native.dispose();
  }
}
