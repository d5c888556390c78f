/**
 * A tensor whose elements live in device memory. Created by {@link toDevice} (a copy of a host
 * {@link Tensor}) or {@link DeviceTensor.allocate}; read back with {@link DeviceTensor.toHost}.
 * `dispose()` frees the memory at once; a tensor that is never disposed is freed by its
 * finalizer when collected (and its bytes count towards V8's external memory meanwhile, so
 * the collector knows they are there).
 */
import type { DeviceValue } from '../engine/residency';
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, isDType, type DType } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { gpuBinding, type NativeDeviceBuffer } from './binding';
import { deviceOrdinal, type DeviceLike } from './device';

function checkShape(shape: Shape): void {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new InvalidArgumentError(`a DeviceTensor shape must be a list of integers >= 0, got ${JSON.stringify(shape)}`);
  }
}

export class DeviceTensor implements DeviceValue {
  readonly device: number;
  readonly dtype: DType;
  readonly shape: Shape;
  readonly byteLength: number;
  /** @internal The native allocation (what plans point into). */
  readonly buffer: NativeDeviceBuffer;

  private constructor(buffer: NativeDeviceBuffer, dtype: DType, shape: Shape) {
    this.buffer = buffer;
    this.device = buffer.device;
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.byteLength = buffer.byteLength;
  }

  /** An uninitialized device tensor. */
  static async allocate(dtype: DType, shape: Shape, device: DeviceLike = 0): Promise<DeviceTensor> {
    if (!isDType(dtype)) throw new InvalidArgumentError(`unknown dtype ${JSON.stringify(dtype)}`);
    checkShape(shape);
    const bytes = shapeSize(shape) * dtypeInfo(dtype).itemBytes;
    const buffer = await gpuBinding().gpuAlloc(deviceOrdinal(device), bytes);
    return new DeviceTensor(buffer, dtype, shape);
  }

  /**
   * @internal A DeviceTensor over a native allocation this process just made for it (a plan's
   * fresh output): it owns the memory from now on.
   */
  static adopt(buffer: NativeDeviceBuffer, dtype: DType, shape: Shape): DeviceTensor {
    const bytes = shapeSize(shape) * dtypeInfo(dtype).itemBytes;
    if (bytes !== buffer.byteLength) throw new InvalidArgumentError(`cannot adopt ${buffer.byteLength} device bytes as ${dtype} [${shape.join(', ')}] (${bytes} bytes)`);
    return new DeviceTensor(buffer, dtype, shape);
  }

  /**
   * @internal The same device memory seen as `dtype` and `shape` (the same byte length): how a
   * program hands a complex64 input to its engines as the float32 carrier [..., 2] without a
   * copy. The view does not own the memory: only the original may be disposed.
   */
  static reinterpret(t: DeviceTensor, dtype: DType, shape: Shape): DeviceTensor {
    checkShape(shape);
    const bytes = shapeSize(shape) * dtypeInfo(dtype).itemBytes;
    if (bytes !== t.byteLength) throw new InvalidArgumentError(`cannot view ${t.byteLength} bytes as ${dtype} [${shape.join(', ')}] (${bytes} bytes)`);
    return new DeviceTensor(t.buffer, dtype, shape);
  }

  /** Where the elements live (lib/engine/residency.ts): what lets programs take DeviceTensors. */
  get residency(): { kind: 'device'; ordinal: number } {
    return { kind: 'device', ordinal: this.device };
  }

  get size(): number {
    return shapeSize(this.shape);
  }

  /** True once disposed. */
  get disposed(): boolean {
    return this.buffer.disposed;
  }

  /** Copies the elements back into a new host {@link Tensor}. */
  async toHost(): Promise<Tensor> {
    this.checkLive('toHost()');
    const info = dtypeInfo(this.dtype);
    const data = new info.storage(this.size * info.lanes);
    await gpuBinding().gpuCopyDtoH(this.buffer, 0, data);
    return new Tensor(this.dtype, this.shape, data);
  }

  /** A new device tensor with the same elements (a device-to-device copy on the same device). */
  clone(): Promise<DeviceTensor> {
    return this.copyTo(this.device, 'clone()');
  }

  /**
   * A copy on `device`: a device-to-device copy on the same device, a peer copy
   * (cuMemcpyPeerAsync) from another. An ordinal this process does not see is E_INVALID_ARGUMENT.
   */
  async to(device: DeviceLike): Promise<DeviceTensor> {
    const ordinal = deviceOrdinal(device);
    return this.copyTo(ordinal, `to(${ordinal})`);
  }

  private async copyTo(ordinal: number, what: string): Promise<DeviceTensor> {
    this.checkLive(what);
    const copy = await DeviceTensor.allocate(this.dtype, this.shape, ordinal);
    try {
      await copy.copyFrom(this);
    } catch (error) {
      copy.dispose();
      throw error;
    }
    return copy;
  }

  /**
   * @internal Overwrites all the bytes with those of `src`, a device tensor of the same byte
   * length (a device-to-device copy; cuMemcpyDtoDAsync also crosses devices under unified
   * addressing): what clone() and a cuda engine's input and output copies make.
   */
  async copyFrom(src: DeviceTensor): Promise<void> {
    this.checkLive('copyFrom()');
    src.checkLive('copyFrom()');
    if (src.byteLength !== this.byteLength) throw new InvalidArgumentError(`cannot copy ${src.byteLength} bytes into a DeviceTensor of ${this.byteLength}`);
    if (this.byteLength > 0) await gpuBinding().gpuCopyDtoD(this.buffer, 0, src.buffer, 0, this.byteLength);
  }

  /** Overwrites the elements with those of a host tensor of the same dtype and size. */
  async write(tensor: Tensor): Promise<void> {
    this.checkLive('write()');
    if (tensor.dtype !== this.dtype || tensor.size !== this.size) {
      throw new InvalidArgumentError(
        `cannot write a ${tensor.dtype} tensor of shape [${tensor.shape.join(', ')}] into a ${this.dtype} DeviceTensor of shape [${this.shape.join(', ')}]`,
      );
    }
    await gpuBinding().gpuCopyHtoD(this.buffer, 0, tensor.data);
  }

  /** Frees the device memory. Idempotent; a copy or plan still using it frees it when done. */
  dispose(): void {
    this.buffer.dispose();
  }

  private checkLive(what: string): void {
    if (this.buffer.disposed) {
      throw new InvalidArgumentError(`${what} on a disposed DeviceTensor (${this.dtype} [${this.shape.join(', ')}], device ${this.device})`);
    }
  }
}

/** Copies a host tensor to a device. */
export async function toDevice(tensor: Tensor, device: DeviceLike = 0): Promise<DeviceTensor> {
  if (!(tensor instanceof Tensor)) throw new InvalidArgumentError('toDevice expects a Tensor');
  const deviceTensor = await DeviceTensor.allocate(tensor.dtype, tensor.shape, device);
  try {
    await gpuBinding().gpuCopyHtoD(deviceTensor.buffer, 0, tensor.data);
  } catch (error) {
    deviceTensor.dispose();
    throw error;
  }
  return deviceTensor;
}
