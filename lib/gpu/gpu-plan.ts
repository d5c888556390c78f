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
 * long plan never holds the event loop.
 * capture() always uses the pool (it runs the plan once and may block on lazy module loading).
 */
import { InvalidArgumentError } from '../errors';
import { gpuBinding, type NativePlan } from './binding';
import { deviceOrdinal, type DeviceLike } from './device';
import type { DeviceTensor } from './device-tensor';
import type { GpuModule } from './module';
import { encodePlan, type PlanSpec } from './plan';

export interface PlanRunOptions {
  /** Who waits for the device: `'auto'` (default), a thread-pool thread (`'pool'`) or the device's completion thread (`'thread'`). */
  completion?: 'auto' | 'pool' | 'thread';
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
   * Checks and prepares `spec` (library descriptors, algorithms, workspace). `buffers[i]` is the
   * plan's buffer i and `modules[j]` its module j; they are kept alive while the plan lives.
   */
  static async create(spec: PlanSpec, buffers: readonly DeviceTensor[], modules: readonly GpuModule[] = [], device?: DeviceLike): Promise<GpuPlan> {
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
      return usesCompletionThread(options, this.native.steps * times) ? this.native.submit(times, false) : this.native.run(times);
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
      return usesCompletionThread(options, times) ? this.native.submit(times, true) : this.native.replay(times);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  dispose(): void {
    this.native.dispose();
  }
}
