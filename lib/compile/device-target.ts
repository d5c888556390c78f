/**
 * The compile-time target device (settings `device`, docs/program-format.md "Devices"): validating the setting, and
 * turning it into the record every engine segment keeps (lib/engine/device-selection.ts).
 */
import { probeDevices } from '../devices';
import { currentDevice } from '../gpu/current-device';
import { InvalidArgumentError, NoDeviceError } from '../errors';
import type { Logger } from '../logger';
import type { Backend } from '../engine/backend';
import type { EngineDevice } from '../engine/device-selection';
import { engineDeviceRecord, type RecordedBackend, type ResolvedDeviceSetting } from '../engine/device-record';

export { engineDeviceRecord, type ResolvedDeviceSetting } from '../engine/device-record';

/** `settings.device`: where the engines should run (Torch-TensorRT's CompileSpec::Device). */
export interface DeviceSetting {
  /** `gpu` (default) or `dla`. */
  type?: 'gpu' | 'dla';
  /** CUDA ordinal to build for (default: the current device, CUDA's device 0). */
  gpuId?: number;
  /** DLA only: the DLA core (default 0). */
  dlaCore?: number;
  /** DLA only: build layers the DLA cannot run for the GPU instead of failing (default false). */
  allowGpuFallback?: boolean;
}

const DEVICE_KEYS = ['type', 'gpuId', 'dlaCore', 'allowGpuFallback'];

function bad(message: string): never {
  throw new InvalidArgumentError(`compile settings: ${message}`);
}

/**
 * Validates `settings.device` and fills defaults.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the key and the value at fault.
 */
export function resolveDeviceSetting(value: unknown): ResolvedDeviceSetting {
  if (value === undefined) return { type: 'gpu', gpuId: undefined, dlaCore: null, allowGpuFallback: false };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    bad(`device must be an object {type?, gpuId?, dlaCore?, allowGpuFallback?}, got ${JSON.stringify(value)}`);
  }
  const d = value as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!DEVICE_KEYS.includes(k)) bad(`device has an unknown key "${k}" (known: ${DEVICE_KEYS.join(', ')})`);
  if (d.type !== undefined && d.type !== 'gpu' && d.type !== 'dla') bad(`device.type must be "gpu" or "dla", got ${JSON.stringify(d.type)}`);
  const type = (d.type ?? 'gpu') as 'gpu' | 'dla';
  for (const key of ['gpuId', 'dlaCore'] as const) {
    if (d[key] !== undefined && !(Number.isSafeInteger(d[key]) && (d[key] as number) >= 0)) {
      bad(`device.${key} must be a non-negative integer, got ${JSON.stringify(d[key])}`);
    }
  }
  if (d.allowGpuFallback !== undefined && typeof d.allowGpuFallback !== 'boolean') {
    bad(`device.allowGpuFallback must be a boolean, got ${JSON.stringify(d.allowGpuFallback)}`);
  }
  if (type === 'gpu') {
    if (d.dlaCore !== undefined) bad('device.dlaCore is only meaningful with device.type "dla"');
    if (d.allowGpuFallback !== undefined) bad('device.allowGpuFallback is only meaningful with device.type "dla"');
  }
  return {
    type,
    gpuId: d.gpuId as number | undefined,
    dlaCore: type === 'dla' ? ((d.dlaCore as number | undefined) ?? 0) : null,
    allowGpuFallback: type === 'dla' ? ((d.allowGpuFallback as boolean | undefined) ?? false) : false,
  };
}

/**
 * {@link engineDeviceRecord} for compile(): asks the driver for the device list only when the
 * backend needs a GPU, and logs when a device setting does not apply (reference backend).
 * Also gives the target GPU's total memory (the default program memory budget; undefined on
 * the CPU), from the same query.
 *
 * @throws {NoDeviceError} `E_NO_DEVICE`: a GPU backend, but the driver lists no device.
 */
export async function engineDeviceForBackend(
  setting: ResolvedDeviceSetting,
  backend: RecordedBackend,
  log: Logger,
): Promise<{ device: EngineDevice; memoryBytes: number | undefined }> {
  if (backend.residency === 'host') {
    if (setting.gpuId !== undefined || setting.type !== 'gpu') {
      // A setting with no effect is warned about, as build settings are (./ineffective-settings.ts).
      log('warn', `the setting device has no effect on the ${backend.name} backend, which runs on the CPU: the engines record that they need no GPU`);
    }
    return { device: engineDeviceRecord(setting, backend, []), memoryBytes: undefined };
  }
  const probe = await probeDevices();
  if (probe.devices.length === 0) {
    throw new NoDeviceError(`the ${backend.name} backend needs a CUDA device, but none is usable here: ${probe.error?.message ?? 'no device'}`);
  }
  const device = engineDeviceRecord(setting, backend, probe.devices, currentDevice());
  return { device, memoryBytes: probe.devices.find((d) => d.ordinal === device.gpuId)?.totalMemoryBytes };
}
