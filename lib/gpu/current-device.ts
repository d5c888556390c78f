/**
 * CUDA's "current device" for this thread, as the device selection rules of
 * ../engine/device-selection.ts use it: the device whose context is current on the JS
 * thread — chosen with {@link setCurrentDevice} (what `cudaSetDevice` does), or by another
 * CUDA library in the same process — and otherwise device 0, which CUDA makes current in a
 * process that never chose one.
 */
import { CudaError } from '../errors';
import { DEFAULT_CURRENT_DEVICE } from '../engine/device-selection';
import { gpuBinding } from './binding';
import { deviceOrdinal, type DeviceLike } from './device';

/**
 * The current device's ordinal: the context current on this thread, else 0. Without a usable
 * driver (no GPU, a stale addon) it is 0 too: the device rules then see no devices at all.
 */
export function currentDevice(): number {
  let ordinal = -1;
  try {
    ordinal = gpuBinding().gpuCurrentDevice();
  } catch {
    // No driver or no GPU runtime in the addon: nothing can be current.
  }
  return ordinal >= 0 ? ordinal : DEFAULT_CURRENT_DEVICE;
}

/**
 * Makes `device` the current device of this thread (its primary context, set up off the thread
 * first): programs loaded afterwards without a `device` option prefer it.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: not a device ordinal, or no such device.
 * @throws {CudaError} `E_CUDA`: the context could not be made current.
 */
export async function setCurrentDevice(device: DeviceLike): Promise<void> {
  const ordinal = deviceOrdinal(device);
  if (!(await gpuBinding().gpuSetCurrentDevice(ordinal))) {
    throw new CudaError(`cuCtxSetCurrent failed for device ${ordinal}: its context could not be made current on this thread`, {
      details: { call: 'cuCtxSetCurrent', device: ordinal },
    });
  }
}

/** `currentDevice()` when it is one of `available`, else null (the selection rules then skip that rule). */
export function currentDeviceAmong(available: ReadonlyArray<{ ordinal: number }>): number | null {
  const ordinal = currentDevice();
  return available.some((d) => d.ordinal === ordinal) ? ordinal : null;
}
