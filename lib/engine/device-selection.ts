/**
 * Which device runs an engine: the records a compiled engine keeps about the device it was
 * built for, and the selection hierarchy (docs/program-format.md, "Devices") that picks
 * a device for it when a program is loaded.
 *
 * GPU engines:
 *   1. required: the same compute capability as the build device. Hardware-compatible
 *      engines relax this to the range TensorRT's HardwareCompatibilityLevel allows:
 *      `ampere+` (kAMPERE_PLUS) runs on every GPU of compute capability 8.0 or newer;
 *      `same-compute-capability` (kSAME_COMPUTE_CAPABILITY) and `none` (kNONE, the default)
 *      need the build device's compute capability;
 *   2. then prefer (for `ampere+` only) the build device's exact compute capability;
 *   3. then the same device model (name) as the build device;
 *   4. then the current device;
 *   5. then the lowest device id.
 * DLA engines: the same compute capability and the same device id (the DLA cores belong to
 * that device), nothing else to choose.
 *
 * An explicit device (`loadProgram(file, {device})`) goes before every preference, but it
 * never makes an incompatible device acceptable: asking for one is an error.
 *
 * Everything here is pure: the device list and the current device are arguments, so every
 * rule is testable with injected lists (the loader passes `devices()`).
 */
import type { ComputeCapability, CudaDevice } from '../devices';
import { NoCompatibleDeviceError } from '../errors';

/** TensorRT's HardwareCompatibilityLevel: kNONE, kAMPERE_PLUS, kSAME_COMPUTE_CAPABILITY. */
export const HARDWARE_COMPATIBILITY_LEVELS = ['none', 'ampere+', 'same-compute-capability'] as const;

/** How far beyond its build device an engine may run (TensorRT's HardwareCompatibilityLevel). */
export type HardwareCompatibilityLevel = (typeof HARDWARE_COMPATIBILITY_LEVELS)[number];

/** The device CUDA makes current in a process that never chose one: what "the current device" means until the native runtime lets callers set another. */
export const DEFAULT_CURRENT_DEVICE = 0;

/** Compute capabilities of the SoCs with DLA cores (Xavier 7.2, Orin 8.7). */
export const DLA_COMPUTE_CAPABILITIES: readonly string[] = ['7.2', '8.7'];

/**
 * What a compiled engine records about the device it was built for (one per engine segment,
 * saved in program files). Engines of the CPU reference backend say `type: 'cpu'`: they need
 * no GPU, and their device fields are null.
 */
export interface EngineDevice {
  /** `gpu` or `dla`: the engine needs a device that {@link selectDevice} accepts; `cpu`: none. */
  type: 'gpu' | 'dla' | 'cpu';
  /** The CUDA ordinal it was built on (null for `cpu`). */
  gpuId: number | null;
  /** The DLA core (only for `dla`). */
  dlaCore: number | null;
  /** DLA only: layers the DLA cannot run were built for the GPU. */
  allowGpuFallback: boolean;
  /** The build device's compute capability (null for `cpu`). */
  computeCapability: ComputeCapability | null;
  /** The build device's name, e.g. `NVIDIA H200` (null for `cpu`). */
  deviceName: string | null;
  /** `none` unless the engine was built hardware-compatible. */
  hardwareCompatibility: HardwareCompatibilityLevel;
  /** The backend that built the engine (`reference`, `tensorrt`). */
  backend: string;
  /** That backend's version (TensorRT's for `tensorrt`, this package's for `reference`). */
  backendVersion: string;
}

/** The device requirements of a GPU or DLA engine: what {@link selectDevice} matches against. */
export interface DeviceTarget {
  type: 'gpu' | 'dla';
  gpuId: number;
  dlaCore: number | null;
  computeCapability: ComputeCapability;
  deviceName: string;
  hardwareCompatibility: HardwareCompatibilityLevel;
}

/** The facts about a device that selection looks at (every {@link CudaDevice} has them). */
export type SelectableDevice = Pick<CudaDevice, 'ordinal' | 'name' | 'computeCapability'>;

/** Options of {@link selectDevice}. */
export interface SelectDeviceOptions {
  /** A CUDA ordinal the caller asked for explicitly: preferred over every rule, but it must be compatible. */
  device?: number;
}

/** The rule that decided a selection (the first preference on which the winner beat the rest). */
export type SelectionRule = 'only-candidate' | 'explicit' | 'same-compute-capability' | 'same-name' | 'current-device' | 'lowest-id' | 'dla-device';

/** What {@link selectDevice} chose, and why. */
export interface DeviceSelection<D extends SelectableDevice = SelectableDevice> {
  device: D;
  rule: SelectionRule;
  /** The rule in words, for logs and `inspect`. */
  reason: string;
  /** Every compatible device, most preferred first (`device` is the first). */
  candidates: D[];
  /** Worth telling the user, e.g. a different GPU model than the build device. */
  warnings: string[];
}

/** `{major: 9, minor: 0}` → `9.0`. */
export function formatComputeCapability(cc: ComputeCapability): string {
  return `${cc.major}.${cc.minor}`;
}

function sameCc(a: ComputeCapability, b: ComputeCapability): boolean {
  return a.major === b.major && a.minor === b.minor;
}

function describeDevice(d: SelectableDevice): string {
  return `device ${d.ordinal} "${d.name}" (compute capability ${formatComputeCapability(d.computeCapability)})`;
}

/** The `found: ...` part of the error messages. */
export function formatFoundDevices(available: readonly SelectableDevice[]): string {
  return available.length === 0 ? 'no CUDA device' : available.map(describeDevice).join(', ');
}

/** Whether `device` can run an engine built for `target` (rule 1; DLA: also the same device id). */
export function isCompatibleDevice(target: DeviceTarget, device: SelectableDevice): boolean {
  if (target.type === 'dla') return sameCc(device.computeCapability, target.computeCapability) && device.ordinal === target.gpuId;
  if (target.hardwareCompatibility === 'ampere+') return device.computeCapability.major >= 8;
  return sameCc(device.computeCapability, target.computeCapability);
}

/** What the engines need, in words: `compute capability 9.0`, `compute capability 8.0 or newer`. */
function requirement(target: DeviceTarget): { built: string; needed: string } {
  const cc = formatComputeCapability(target.computeCapability);
  if (target.type === 'dla') {
    return {
      built: `DLA core ${target.dlaCore ?? 0} of device ${target.gpuId} with compute capability ${cc}`,
      needed: `device ${target.gpuId} with compute capability ${cc}`,
    };
  }
  if (target.hardwareCompatibility === 'ampere+') {
    return { built: `compute capability ${cc} with hardware compatibility "ampere+"`, needed: 'device with compute capability 8.0 or newer' };
  }
  return { built: `compute capability ${cc}`, needed: `device with compute capability ${cc}` };
}

const RULE_TEXT: Record<SelectionRule, (target: DeviceTarget, d: SelectableDevice) => string> = {
  'only-candidate': () => 'the only compatible device',
  'dla-device': (t) => `the device the DLA engine was built on (device ${t.gpuId})`,
  explicit: (_, d) => `asked for explicitly (device ${d.ordinal})`,
  'same-compute-capability': (t) => `the same compute capability as the build device (${formatComputeCapability(t.computeCapability)})`,
  'same-name': (t) => `the same model as the build device ("${t.deviceName}")`,
  'current-device': (_, d) => `the current device (device ${d.ordinal})`,
  'lowest-id': () => 'the lowest device id among equally good candidates',
};

/**
 * Picks the device that runs an engine built for `target` from `available`, following the
 * hierarchy in this file's header. `currentDevice` is the CUDA ordinal the caller treats as
 * current (null when there is none).
 *
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: no available device is
 *   compatible (`Unable to deserialize program: engines were built for compute capability
 *   X.Y, but no device with compute capability X.Y is available (found: ...)`), or the
 *   explicitly requested device is absent or incompatible.
 */
export function selectDevice<D extends SelectableDevice>(
  target: DeviceTarget,
  available: readonly D[],
  currentDevice: number | null,
  options: SelectDeviceOptions = {},
): DeviceSelection<D> {
  const { built, needed } = requirement(target);
  const details = {
    target: { ...target, computeCapability: { ...target.computeCapability } },
    found: available.map((d) => ({ ordinal: d.ordinal, name: d.name, computeCapability: formatComputeCapability(d.computeCapability) })),
    ...(options.device === undefined ? {} : { requested: options.device }),
  };
  const compatible = available.filter((d) => isCompatibleDevice(target, d));
  if (compatible.length === 0) {
    throw new NoCompatibleDeviceError(
      `Unable to deserialize program: engines were built for ${built}, but no ${needed} is available (found: ${formatFoundDevices(available)})`,
      { details },
    );
  }
  const explicit = options.device;
  if (explicit !== undefined && !compatible.some((d) => d.ordinal === explicit)) {
    const asked = available.find((d) => d.ordinal === explicit);
    const why =
      asked === undefined
        ? `there is no device ${explicit} (found: ${formatFoundDevices(available)})`
        : `engines were built for ${built} and ${describeDevice(asked)} cannot run them (compatible: ${compatible.map(describeDevice).join(', ')})`;
    throw new NoCompatibleDeviceError(`Unable to deserialize program: device ${explicit} was asked for, but ${why}`, { details });
  }

  // Preference keys, most important first; lower is better. DLA has nothing to prefer.
  const rules: Array<[SelectionRule, (d: D) => number]> = [];
  if (explicit !== undefined) rules.push(['explicit', (d) => (d.ordinal === explicit ? 0 : 1)]);
  if (target.type === 'gpu') {
    if (target.hardwareCompatibility === 'ampere+') rules.push(['same-compute-capability', (d) => (sameCc(d.computeCapability, target.computeCapability) ? 0 : 1)]);
    rules.push(['same-name', (d) => (d.name === target.deviceName ? 0 : 1)]);
    rules.push(['current-device', (d) => (d.ordinal === currentDevice ? 0 : 1)]);
  }
  rules.push(['lowest-id', (d) => d.ordinal]);
  const compare = (a: D, b: D): number => {
    for (const [, key] of rules) {
      const diff = key(a) - key(b);
      if (diff !== 0) return diff;
    }
    return 0;
  };
  const candidates = [...compatible].sort(compare);
  const device = candidates[0]!;
  let rule: SelectionRule = target.type === 'dla' ? 'dla-device' : 'only-candidate';
  if (candidates.length > 1) {
    const runnerUp = candidates[1]!;
    rule = rules.find(([, key]) => key(device) !== key(runnerUp))?.[0] ?? 'lowest-id';
  }

  const warnings: string[] = [];
  if (target.type === 'gpu' && !sameCc(device.computeCapability, target.computeCapability)) {
    warnings.push(
      `the engines were built for compute capability ${formatComputeCapability(target.computeCapability)} and run on ${describeDevice(device)} ` +
        'through hardware compatibility "ampere+", which may be slower',
    );
  } else if (target.type === 'gpu' && device.name !== target.deviceName && target.hardwareCompatibility === 'none') {
    warnings.push(
      `the engines were built on "${target.deviceName}" and run on ${describeDevice(device)}: the same compute capability, ` +
        'but another model, which TensorRT supports with possibly different performance',
    );
  }
  return { device, rule, reason: RULE_TEXT[rule](target, device), candidates, warnings };
}

/** The device requirements of an engine record, or null for a CPU engine (which needs no device). */
export function deviceTargetOf(record: EngineDevice): DeviceTarget | null {
  if (record.type === 'cpu') return null;
  return {
    type: record.type,
    gpuId: record.gpuId ?? 0,
    dlaCore: record.dlaCore,
    computeCapability: record.computeCapability ?? { major: 0, minor: 0 },
    deviceName: record.deviceName ?? '',
    hardwareCompatibility: record.hardwareCompatibility,
  };
}
