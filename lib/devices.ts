/**
 * CUDA devices as the driver reports them. The queries run on a libuv worker thread (the
 * first `cuInit` can take a second) and resolve a Promise.
 */
import { getAddon, type RawDevice, type RawDeviceQuery } from './native';

/** A CUDA device's compute capability, e.g. `{major: 9, minor: 0}` for Hopper. */
export interface ComputeCapability {
  major: number;
  minor: number;
}

/** A PCI address, parsed from the driver's `domain:bus:device.function` string. */
export interface PciAddress {
  domain: number;
  bus: number;
  device: number;
  function: number;
}

/** One CUDA device. */
export interface CudaDevice {
  /** CUDA ordinal (after CUDA_VISIBLE_DEVICES). */
  ordinal: number;
  name: string;
  /** As nvidia-smi prints it: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  uuid: string;
  /** As the driver prints it, e.g. `0000:3B:00.0`. */
  pciBusId: string;
  pci: PciAddress;
  computeCapability: ComputeCapability;
  totalMemoryBytes: number;
  multiprocessorCount: number;
}

/** The CUDA driver in use. */
export interface CudaDriver {
  /** CUDA version the driver supports, e.g. `13.0`. */
  version: string;
  /** The same as the driver encodes it (1000 * major + 10 * minor), e.g. 13000. */
  versionNumber: number;
  /** The libcuda file that was loaded. */
  library: string;
}

export interface DeviceReport {
  driver: CudaDriver;
  devices: CudaDevice[];
}

/** `13000` → `"13.0"`, `12040` → `"12.4"`. */
export function formatCudaVersion(versionNumber: number): string {
  return `${Math.floor(versionNumber / 1000)}.${Math.floor((versionNumber % 1000) / 10)}`;
}

/** 32 hex digits → `GPU-8-4-4-4-12`, the form nvidia-smi and CUDA_VISIBLE_DEVICES use. */
export function formatGpuUuid(hex: string): string {
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`expected 32 hex digits, got ${JSON.stringify(hex)}`);
  const h = hex.toLowerCase();
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `0000:3B:00.0` → `{domain: 0, bus: 0x3b, device: 0, function: 0}`. */
export function parsePciBusId(text: string): PciAddress {
  const match = /^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$/.exec(text);
  if (match === null) throw new TypeError(`not a PCI bus id: ${JSON.stringify(text)}`);
  const [, domain, bus, device, fn] = match;
  return { domain: parseInt(domain!, 16), bus: parseInt(bus!, 16), device: parseInt(device!, 16), function: parseInt(fn!, 10) };
}

/** Shapes one raw driver record into a {@link CudaDevice}. */
export function toCudaDevice(raw: RawDevice): CudaDevice {
  return {
    ordinal: raw.ordinal,
    name: raw.name,
    uuid: formatGpuUuid(raw.uuid),
    pciBusId: raw.pciBusId,
    pci: parsePciBusId(raw.pciBusId),
    computeCapability: { major: raw.computeCapabilityMajor, minor: raw.computeCapabilityMinor },
    totalMemoryBytes: raw.totalMemoryBytes,
    multiprocessorCount: raw.multiprocessorCount,
  };
}

/** Shapes the addon's answer into a {@link DeviceReport}. */
export function toDeviceReport(raw: RawDeviceQuery): DeviceReport {
  return {
    driver: { version: formatCudaVersion(raw.driverVersion), versionNumber: raw.driverVersion, library: raw.libraryPath },
    devices: raw.devices.map(toCudaDevice),
  };
}

/**
 * Lists the CUDA devices and the driver version.
 *
 * @throws {CudaMissingError} `E_CUDA_MISSING`: no CUDA driver library (every name tried is in the message).
 * @throws {NoDeviceError} `E_NO_DEVICE`: the driver loaded but reports no device.
 * @throws {CudaError} `E_CUDA`: a driver call failed (`details.call`, `details.cudaError`).
 * @throws {NativeAddonLoadError} `E_ADDON_LOAD`: the native addon could not be loaded.
 */
export async function devices(): Promise<DeviceReport> {
  return toDeviceReport(await getAddon().binding.cudaDevices());
}

/** A device query that never throws: what `devices --json` prints and `doctor` reports. */
export interface DeviceProbe {
  /** At least one device was found. */
  ok: boolean;
  /** The driver, when it loaded (also when it reports no device). */
  driver: CudaDriver | null;
  devices: CudaDevice[];
  /** Why there are no devices (`E_CUDA_MISSING`, `E_NO_DEVICE`, `E_CUDA`, `E_ADDON_LOAD`). */
  error: { code: string; message: string } | null;
}

/** Like {@link devices}, but reports failures as data instead of throwing them. */
export async function probeDevices(): Promise<DeviceProbe> {
  try {
    const report = await devices();
    return { ok: true, driver: report.driver, devices: report.devices, error: null };
  } catch (error) {
    const { code, message, details } = error as { code?: string; message?: string; details?: Record<string, unknown> };
    const driver =
      typeof details?.driverVersion === 'number' && typeof details.library === 'string'
        ? { version: formatCudaVersion(details.driverVersion), versionNumber: details.driverVersion, library: details.library }
        : null;
    return { ok: false, driver, devices: [], error: { code: code ?? 'E_INTERNAL', message: message ?? String(error) } };
  }
}
