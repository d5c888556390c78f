/**
 * Runs a program on the calling thread, for programs whose every segment is an engine that
 * keeps its values on a GPU (cuda, tensorrt): each engine call is a native asynchronous one
 * (copies, plan launches and waits happen off the JS thread), so the event loop is never held
 * for long, and there is no worker hop — a hop costs about 0.4 ms a run and cannot carry
 * DeviceTensors, which belong to the thread that made them. Programs with fallback segments
 * or CPU engines run on the worker (lib/runtime/worker/worker.ts): their work would hold the loop.
 *
 * What runs on this thread besides native calls: loading (engine bytes parsed, kernels loaded,
 * weights uploaded), and, on the first run of each new set of input shapes, the cuda backend's
 * plan instantiation (milliseconds of JS per shape; later runs of that shape reuse the plan).
 */
import type { DeviceValue } from '../engine/residency';
import { InvalidArgumentError } from '../errors';
import type { DeviceTensor } from '../gpu/device-tensor';
import type { ShapedInputs } from '../interpreter/bind-inputs';
import { Tensor } from '../ir/tensor';
import { ProgramExecutor } from './execute';
import { checkRunInputs, type RunInput } from './program-io';
import { profileProgram, type ResolvedProfileOptions } from './profile';
import type { ProgramProfile } from '../engine/profile';
import { segmentDevice } from './residency-plan';
import { asResourceLimitError, type RunLimits } from '../engine/resource-limits';
import type { ProgramData } from './segments';
import type { Logger } from '../logger';

/** Whether `data` runs on the calling thread: it has engines, and every segment is an engine that keeps values on a device. */
export function runsInProcess(data: ProgramData): boolean {
  return data.segments.length > 0 && data.segments.every((s) => segmentDevice(s) !== null);
}

/** The device a program's outputs go to when asked for on a device: the device of its last GPU engine. */
export function outputDeviceOf(data: ProgramData): number | null {
  for (let i = data.segments.length - 1; i >= 0; i--) {
    const ordinal = segmentDevice(data.segments[i]!);
    if (ordinal !== null) return ordinal;
  }
  return null;
}

export class InProcessRunner {
  private readonly executor: ProgramExecutor;
  private disposed = false;

  constructor(
    private readonly data: ProgramData,
    private readonly shaped: ShapedInputs,
    private readonly limits: RunLimits,
    private readonly disposedMessage: string,
    log?: Logger,
  ) {
    this.executor = new ProgramExecutor(data, limits, log);
  }

  /**
   * Checks the inputs (host or device tensors) and runs; outputs on the host, or on the
   * program's device, or written into `targets` (one DeviceTensor per output, on that device).
   */
  async run(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, outputs: 'host' | 'device', targets?: readonly DeviceTensor[]): Promise<Tensor[] | DeviceValue[]> {
    if (this.disposed) throw new InvalidArgumentError(this.disposedMessage);
    // Host inputs are read now, as the worker path does: the caller may reuse their buffers as
    // soon as run() returns, while the engines read them only after awaits.
    const ordered = checkRunInputs(this.shaped, inputs, this.limits, true).map((v) => (v instanceof Tensor ? new Tensor(v.dtype, v.shape, v.data.slice()) : v));
    try {
      if (outputs === 'host') return await this.executor.run(ordered);
      return await this.executor.runToDevice(ordered, outputDeviceOf(this.data) ?? 0, targets);
    } catch (error) {
      throw asResourceLimitError(error);
    }
  }

  /** Checks the inputs as run() does and profiles the program on them here (./profile.ts). */
  async profile(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options: ResolvedProfileOptions): Promise<ProgramProfile> {
    if (this.disposed) throw new InvalidArgumentError(this.disposedMessage);
    const ordered = checkRunInputs(this.shaped, inputs, this.limits, true).map((v) => (v instanceof Tensor ? new Tensor(v.dtype, v.shape, v.data.slice()) : v));
    try {
      return await profileProgram(this.data, this.executor, ordered, options);
    } catch (error) {
      throw asResourceLimitError(error);
    }
  }

  /** Loads the engines now (compile() and loadProgram() warm some programs up). */
  async start(): Promise<void> {
    if (this.disposed) throw new InvalidArgumentError(this.disposedMessage);
    await this.executor.preload();
  }

  /** Releases the engines (each frees its device memory once its queued runs are done). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.executor.dispose();
  }
}
