/**
 * NCCL communicators over {@link DeviceTensor}s: one rank each, created from a unique id that the
 * ranks share out of band (worker-thread messages, a file, a socket), so ranks may live in other
 * threads or processes. Every wait is bounded: a rank that fails or never joins surfaces as an
 * `E_NCCL` timeout and the communicator is aborted (ncclCommAbort), never as a hang.
 * docs/tensor-parallel.md ("NCCL") says why one rank per process is the recommended layout.
 */
import { InvalidArgumentError } from '../errors';
import { DeviceTensor } from '../gpu/device-tensor';
import { deviceOrdinal, type DeviceLike } from '../gpu/device';
import { ncclBinding, type NativeNcclComm, type NcclCommState } from './binding';
import { ncclReduction, type ReduceOp } from './reduction';

/** How long init waits for every rank to join, and a collective or teardown for its peers. */
export const DEFAULT_INIT_TIMEOUT_MS = 300_000;
export const DEFAULT_OP_TIMEOUT_MS = 60_000;

export const NCCL_UNIQUE_ID_BYTES = 128;

export interface NcclCommunicatorOptions {
  /** The id from {@link NcclCommunicator.uniqueId}, the same bytes on every rank. */
  id: Uint8Array;
  /** Number of ranks. */
  size: number;
  /** This rank, in [0, size). */
  rank: number;
  /** The GPU this rank runs on (one rank per GPU: NCCL refuses two ranks on one device). */
  device?: DeviceLike;
  /** Init aborts after this long (default 300 s). */
  timeoutMs?: number;
}

export interface AllReduceOptions {
  /** Where the result goes (default: in place, into the input). Same dtype, shape and device. */
  output?: DeviceTensor;
  /** The collective aborts the communicator after this long (default 60 s). */
  timeoutMs?: number;
}

function checkTimeout(value: number | undefined, fallback: number, what: string): number {
  const timeout = value ?? fallback;
  if (!Number.isSafeInteger(timeout) || timeout < 1) {
    throw new InvalidArgumentError(`${what} must be a whole number of milliseconds >= 1, got ${String(value)}`);
  }
  return timeout;
}

function checkTensor(tensor: unknown, what: string): DeviceTensor {
  if (!(tensor instanceof DeviceTensor)) throw new InvalidArgumentError(`${what} must be a DeviceTensor`);
  if (tensor.disposed) throw new InvalidArgumentError(`${what} is a disposed DeviceTensor`);
  return tensor;
}

export class NcclCommunicator {
  /** @internal */
  readonly native: NativeNcclComm;
  readonly rank: number;
  readonly size: number;
  readonly device: number;

  private constructor(native: NativeNcclComm) {
    this.native = native;
    this.rank = native.rank;
    this.size = native.size;
    this.device = native.device;
  }

  /** A fresh id for a new communicator (ncclGetUniqueId); hand the same bytes to every rank. */
  static async uniqueId(): Promise<Uint8Array> {
    return new Uint8Array(await ncclBinding().ncclUniqueId());
  }

  /** Joins rank `rank` of a `size`-rank communicator; resolves once every rank has joined. */
  static async create(options: NcclCommunicatorOptions): Promise<NcclCommunicator> {
    const { id, size, rank } = options ?? ({} as NcclCommunicatorOptions);
    if (!(id instanceof Uint8Array) || id.byteLength !== NCCL_UNIQUE_ID_BYTES) {
      throw new InvalidArgumentError(`the NCCL id must be the ${NCCL_UNIQUE_ID_BYTES}-byte Uint8Array from NcclCommunicator.uniqueId()`);
    }
    if (!Number.isSafeInteger(size) || size < 1) throw new InvalidArgumentError(`size must be an integer >= 1, got ${String(size)}`);
    if (!Number.isSafeInteger(rank) || rank < 0 || rank >= size) {
      throw new InvalidArgumentError(`rank must be an integer in [0, ${size}), got ${String(rank)}`);
    }
    const device = deviceOrdinal(options.device);
    const timeoutMs = checkTimeout(options.timeoutMs, DEFAULT_INIT_TIMEOUT_MS, 'timeoutMs');
    return new NcclCommunicator(await ncclBinding().ncclCommInitRank(device, size, rank, id, timeoutMs));
  }

  /** One communicator per device, all driven from this thread (ncclCommInitAll); rank i on devices[i]. */
  static async createAll(devices: DeviceLike[]): Promise<NcclCommunicator[]> {
    if (!Array.isArray(devices) || devices.length === 0) throw new InvalidArgumentError('createAll expects a non-empty list of devices');
    const ordinals = devices.map((d) => deviceOrdinal(d));
    if (new Set(ordinals).size !== ordinals.length) {
      throw new InvalidArgumentError(`createAll needs distinct devices (NCCL refuses two ranks on one GPU), got [${ordinals.join(', ')}]`);
    }
    return (await ncclBinding().ncclCommInitAll(ordinals)).map((native) => new NcclCommunicator(native));
  }

  /** `ready`, `aborted` (after abort() or a failure) or `destroyed` (after dispose()). */
  get state(): NcclCommState {
    return this.native.state;
  }

  /**
   * Reduces `tensor` across the ranks with `op` (every rank calls this with a tensor of the same
   * dtype and shape) on this rank's device stream. Resolves with the result: `options.output`,
   * or `tensor` itself, overwritten.
   * @throws {NcclError} `E_NCCL` when NCCL fails or a peer does not take part within the timeout;
   *   the communicator is aborted then, and later calls fail with `details.reason = 'aborted'`.
   */
  async allReduce(tensor: DeviceTensor, op: ReduceOp = 'sum', options: AllReduceOptions = {}): Promise<DeviceTensor> {
    const input = checkTensor(tensor, 'allReduce input');
    const output = options.output === undefined ? input : checkTensor(options.output, 'allReduce output');
    checkSameLayout(input, output);
    this.checkDevice(input);
    const reduction = ncclReduction(input.dtype, op, input.size);
    const timeoutMs = checkTimeout(options.timeoutMs, DEFAULT_OP_TIMEOUT_MS, 'timeoutMs');
    await this.native.allReduce(input.buffer, output.buffer, reduction.count, reduction.dtype, reduction.op, timeoutMs);
    return output;
  }

  /** Tears the communicator down at once without waiting for peers (ncclCommAbort). Idempotent. */
  async abort(): Promise<void> {
    await this.native.abort();
  }

  /**
   * Finalizes and destroys the communicator (ncclCommFinalize, ncclCommDestroy); aborts it if
   * the peers do not finish within `timeoutMs`. Idempotent. A communicator never disposed is
   * aborted when it is garbage-collected.
   */
  async dispose(timeoutMs?: number): Promise<void> {
    await this.native.destroy(checkTimeout(timeoutMs, DEFAULT_OP_TIMEOUT_MS, 'timeoutMs'));
  }

  /** @internal */
  checkDevice(tensor: DeviceTensor): void {
    if (tensor.device !== this.device) {
      throw new InvalidArgumentError(`rank ${this.rank}'s communicator is on device ${this.device}, and the tensor is on device ${tensor.device}`);
    }
  }
}

function checkSameLayout(input: DeviceTensor, output: DeviceTensor): void {
  if (output.dtype !== input.dtype || output.size !== input.size) {
    throw new InvalidArgumentError(
      `allReduce output (${output.dtype} [${output.shape.join(', ')}]) must match the input (${input.dtype} [${input.shape.join(', ')}])`,
    );
  }
}

/**
 * One all-reduce over communicators driven from this thread (those of
 * {@link NcclCommunicator.createAll}), grouped so that NCCL launches them together; tensor i
 * belongs to communicator i. The results go to `options.outputs` (one per tensor, same dtype,
 * size and device) or, without it, overwrite the tensors; resolves with where they went.
 */
export async function allReduceGroup(
  comms: NcclCommunicator[],
  tensors: DeviceTensor[],
  op: ReduceOp = 'sum',
  options: { timeoutMs?: number; outputs?: DeviceTensor[] } = {},
): Promise<DeviceTensor[]> {
  if (!Array.isArray(comms) || !Array.isArray(tensors) || comms.length === 0 || comms.length !== tensors.length) {
    throw new InvalidArgumentError('allReduceGroup needs one DeviceTensor per communicator');
  }
  if (options.outputs !== undefined && (!Array.isArray(options.outputs) || options.outputs.length !== tensors.length)) {
    throw new InvalidArgumentError('allReduceGroup outputs, when given, must be one DeviceTensor per input tensor');
  }
  const checked = tensors.map((t, i) => checkTensor(t, `tensor ${i}`));
  const outputs = options.outputs?.map((t, i) => checkTensor(t, `output ${i}`)) ?? checked;
  checked.forEach((t, i) => {
    checkSameLayout(checked[0]!, t);
    checkSameLayout(t, outputs[i]!);
    comms[i]!.checkDevice(t);
    comms[i]!.checkDevice(outputs[i]!);
  });
  const reduction = ncclReduction(checked[0]!.dtype, op, checked[0]!.size);
  const timeoutMs = checkTimeout(options.timeoutMs, DEFAULT_OP_TIMEOUT_MS, 'timeoutMs');
  await ncclBinding().ncclAllReduceGroup(
    comms.map((c) => c.native),
    checked.map((t) => t.buffer),
    outputs.map((t) => t.buffer),
    reduction.count,
    reduction.dtype,
    reduction.op,
    timeoutMs,
  );
  return outputs;
}
