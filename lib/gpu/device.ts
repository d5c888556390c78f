/**
 * Device-level controls of the GPU runtime: which device, how much memory is free, the memory
 * pool's release threshold, pinned host buffers and live-allocation statistics.
 */
import { InvalidArgumentError } from '../errors';
import { gpuBinding, type NativeGpuStats } from './binding';

/** A CUDA device: its ordinal, or anything with one (a {@link CudaDevice} from `devices()`). */
export type DeviceLike = number | { ordinal: number };

/** The ordinal of `device`, checked. */
export function deviceOrdinal(device: DeviceLike = 0): number {
  const ordinal = typeof device === 'number' ? device : device?.ordinal;
  if (typeof ordinal !== 'number' || !Number.isInteger(ordinal) || ordinal < 0) {
    throw new InvalidArgumentError(`a device must be a CUDA ordinal (an integer >= 0) or a device from devices(), got ${String(device)}`);
  }
  return ordinal;
}

export interface DeviceMemoryInfo {
  device: number;
  freeBytes: number;
  totalBytes: number;
}

/** Free and total device memory as the driver reports them (cuMemGetInfo). */
export async function deviceMemoryInfo(device: DeviceLike = 0): Promise<DeviceMemoryInfo> {
  const info = await gpuBinding().gpuMemoryInfo(deviceOrdinal(device));
  return { device: info.ordinal, freeBytes: info.freeBytes, totalBytes: info.totalBytes };
}

/**
 * Free and total memory of each device that can report it; a device whose query fails (no
 * runtime entry points, a context that cannot be made) is left out, never thrown for.
 */
export async function memoryOfDevices(devices: readonly DeviceLike[]): Promise<DeviceMemoryInfo[]> {
  const infos = await Promise.all(devices.map((d) => deviceMemoryInfo(d).catch(() => null)));
  return infos.filter((m): m is DeviceMemoryInfo => m !== null);
}

/** Waits until all copies, allocations and frees queued on the device's runtime stream are done. */
export async function synchronizeDevice(device: DeviceLike = 0): Promise<void> {
  await gpuBinding().gpuSynchronize(deviceOrdinal(device));
}

/**
 * How many unused bytes the device's memory pool keeps instead of returning them to the driver
 * at each synchronize (default 1 GiB, or `TENSORRT_NODE_POOL_RELEASE_THRESHOLD`). `Infinity`
 * keeps everything.
 */
export async function setPoolReleaseThreshold(device: DeviceLike, bytes: number): Promise<void> {
  if (!(bytes === Infinity || (Number.isSafeInteger(bytes) && bytes >= 0))) {
    throw new InvalidArgumentError(`a pool release threshold must be a byte count >= 0 or Infinity, got ${bytes}`);
  }
  await gpuBinding().gpuSetPoolReleaseThreshold(deviceOrdinal(device), bytes);
}

/** Returns the pool's unused memory to the driver, keeping at most `keepBytes`. */
export async function trimDevicePool(device: DeviceLike = 0, keepBytes = 0): Promise<void> {
  await gpuBinding().gpuTrimPool(deviceOrdinal(device), keepBytes);
}

/**
 * Page-locked host memory as an ArrayBuffer: copies from and to it need no staging and run at
 * the bus's speed. Freed by {@link freePinnedBuffer} or, failing that, when collected. Not
 * available in Electron (no external ArrayBuffers there).
 */
export async function allocatePinnedBuffer(device: DeviceLike, bytes: number): Promise<ArrayBuffer> {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new InvalidArgumentError(`a pinned buffer size must be a byte count, got ${bytes}`);
  return gpuBinding().gpuAllocPinned(deviceOrdinal(device), bytes);
}

/** Frees a buffer from {@link allocatePinnedBuffer} now and detaches it; false if it was not one. */
export function freePinnedBuffer(buffer: ArrayBuffer): boolean {
  return gpuBinding().gpuFreePinned(buffer);
}

/** Live device allocations of this process (all devices), and how many only a finalizer freed. */
export function gpuAllocationStats(): NativeGpuStats {
  return gpuBinding().gpuStats();
}
