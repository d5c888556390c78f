import type { DeviceProbe } from '../devices';
import type { DeviceMemoryInfo } from '../gpu/device';

/** Exit codes of `tensorrt-node devices`. */
export const DEVICES_EXIT = {
  /** At least one device was listed. */
  ok: 0,
  /** A driver call or the addon failed (E_CUDA, E_ADDON_LOAD, ...). */
  error: 1,
  /** No CUDA driver (E_CUDA_MISSING) or no device (E_NO_DEVICE): nothing to list. */
  noDevice: 2,
} as const;

export function devicesExitCode(probe: DeviceProbe): number {
  if (probe.ok) return DEVICES_EXIT.ok;
  const code = probe.error?.code;
  return code === 'E_CUDA_MISSING' || code === 'E_NO_DEVICE' ? DEVICES_EXIT.noDevice : DEVICES_EXIT.error;
}

const GIB = 1024 ** 3;

function freeOf(memory: readonly DeviceMemoryInfo[], ordinal: number): string {
  const info = memory.find((m) => m.device === ordinal);
  return info ? `${(info.freeBytes / GIB).toFixed(1)} GiB` : '?';
}

/**
 * The probe as a table for a terminal; `memory` (cuMemGetInfo per device) fills the free column,
 * `?` where a device could not report it.
 */
export function formatDevices(probe: DeviceProbe, memory: readonly DeviceMemoryInfo[] = []): string {
  const lines: string[] = [];
  if (probe.driver) lines.push(`CUDA driver ${probe.driver.version} (${probe.driver.library})`);
  if (!probe.ok) {
    lines.push(`No CUDA device available [${probe.error?.code}]`, probe.error?.message ?? '');
    return lines.join('\n');
  }
  const rows = probe.devices.map((d) => [
    String(d.ordinal),
    d.name,
    `${d.computeCapability.major}.${d.computeCapability.minor}`,
    `${(d.totalMemoryBytes / GIB).toFixed(1)} GiB`,
    freeOf(memory, d.ordinal),
    String(d.multiprocessorCount),
    d.pciBusId,
    d.uuid,
  ]);
  const header = ['#', 'name', 'cc', 'memory', 'free', 'SMs', 'PCI bus', 'UUID'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  lines.push(fmt(header), ...rows.map(fmt));
  return lines.join('\n');
}
