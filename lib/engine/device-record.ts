/**
 * The record of the device an engine is built for (lib/engine/device-selection.ts's
 * EngineDevice), from a validated device setting and the backend: what compile() gives every
 * engine segment, and what loadProgram() gives an engine it rebuilds for another backend.
 */
import type { CudaDevice } from '../devices';
import { InvalidArgumentError } from '../errors';
import type { Backend } from './backend';
import { DEFAULT_CURRENT_DEVICE, DLA_COMPUTE_CAPABILITIES, formatComputeCapability, formatFoundDevices, type EngineDevice } from './device-selection';

function bad(message: string): never {
  throw new InvalidArgumentError(`compile settings: ${message}`);
}

/** A validated device setting (compile settings `device`, lib/compile/device-target.ts) with defaults filled in (gpuId stays open until a device list is known). */
export interface ResolvedDeviceSetting {
  type: 'gpu' | 'dla';
  gpuId: number | undefined;
  dlaCore: number | null;
  allowGpuFallback: boolean;
}

/** What the device record needs of a backend: its name and version, and where its engines keep values (`host`: on the CPU). */
export type RecordedBackend = Pick<Backend, 'name' | 'version' | 'residency'>;

/**
 * The device record of the engines a backend builds. A backend whose engines keep values on
 * the host (`residency: 'host'`: reference, onnxruntime) runs on the CPU: its engines record
 * `type: 'cpu'` whatever the setting says. Other backends build for the device the setting names (default: `current`, CUDA's current device), found in `available`, whose compute
 * capability and name are recorded.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: the named GPU does not exist, or a DLA
 *   target on a device without DLA cores.
 */
export function engineDeviceRecord(
  setting: ResolvedDeviceSetting,
  backend: RecordedBackend,
  available: readonly CudaDevice[],
  current: number = DEFAULT_CURRENT_DEVICE,
): EngineDevice {
  if (backend.residency === 'host') {
    return {
      type: 'cpu',
      gpuId: null,
      dlaCore: null,
      allowGpuFallback: false,
      computeCapability: null,
      deviceName: null,
      hardwareCompatibility: 'none',
      backend: backend.name,
      backendVersion: backend.version,
    };
  }
  const gpuId = setting.gpuId ?? current;
  const device = available.find((d) => d.ordinal === gpuId);
  if (device === undefined) {
    bad(`device.gpuId ${gpuId}: there is no such CUDA device to build the ${backend.name} engines for (found: ${formatFoundDevices(available)})`);
  }
  const cc = formatComputeCapability(device.computeCapability);
  if (setting.type === 'dla' && !DLA_COMPUTE_CAPABILITIES.includes(cc)) {
    bad(`device.type "dla": device ${gpuId} "${device.name}" (compute capability ${cc}) has no DLA cores (DLA exists on compute capability ${DLA_COMPUTE_CAPABILITIES.join(' and ')})`);
  }
  return {
    type: setting.type,
    gpuId,
    dlaCore: setting.dlaCore,
    allowGpuFallback: setting.allowGpuFallback,
    computeCapability: { ...device.computeCapability },
    deviceName: device.name,
    hardwareCompatibility: 'none',
    backend: backend.name,
    backendVersion: backend.version,
  };
}
