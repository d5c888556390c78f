/**
 * Where a program's engines run: the device list as loading sees it, and moving a loaded
 * program's engines to another device (`program.to(device)`), which the selection rules of
 * ../engine/device-selection.ts must accept for every engine.
 */
import { devices as listDevices, type CudaDevice } from '../devices';
import { InvalidArgumentError, TensorRTNodeError } from '../errors';
import { currentDeviceAmong } from '../gpu/current-device';
import { deviceTargetOf, selectDevice } from '../engine/device-selection';
import type { ProgramData } from './segments';

/** A device option: a CUDA ordinal or `"cuda:N"` (undefined stays undefined). */
export function parseDeviceOption(x: unknown, where: string): number | undefined {
  if (x === undefined) return undefined;
  if (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0) return x;
  if (typeof x === 'string') {
    const m = /^(?:cuda:)?(\d{1,6})$/.exec(x);
    if (m !== null) return Number(m[1]);
  }
  throw new InvalidArgumentError(`${where}: device must be a CUDA ordinal (e.g. 0) or "cuda:N", got ${JSON.stringify(x)}`);
}

/** The device list, with "no driver" and "no device" as an empty list. */
export async function availableDevices(): Promise<CudaDevice[]> {
  try {
    return (await listDevices()).devices;
  } catch (error) {
    if (error instanceof TensorRTNodeError && (error.code === 'E_CUDA_MISSING' || error.code === 'E_NO_DEVICE')) return [];
    throw error;
  }
}

/**
 * `data` with every GPU engine placed on `device` (CPU engines and fallback segments stay as
 * they are). Pure given `available`.
 *
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: `device` is absent, or cannot run one of the engines.
 */
export function placeOnDevice(data: ProgramData, device: number, available: readonly CudaDevice[]): ProgramData {
  const current = currentDeviceAmong(available);
  const segments = data.segments.map((s) => {
    const target = s.kind === 'engine' && s.device !== undefined ? deviceTargetOf(s.device) : null;
    if (s.kind !== 'engine' || target === null) return s;
    const sel = selectDevice(target, available, current, { device });
    return { ...s, placement: { ordinal: sel.device.ordinal, name: sel.device.name, reason: sel.reason } };
  });
  return { ...data, segments };
}
