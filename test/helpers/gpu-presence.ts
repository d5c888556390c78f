/**
 * Whether the GPU checks (test/gpu/) can run here, decided once when the test file loads:
 * a machine with no NVIDIA GPU skips them (and says why in the test titles); a machine with
 * a GPU, or with a CUDA driver that is present but fails, runs them, so a broken driver
 * loader is a failure there, never a skip.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

import { PROBE_SCRIPT, REPO_ROOT, type ProbeOutcome } from './built-package';

export type GpuPresence =
  | { kind: 'present'; devices: number }
  | { kind: 'absent'; reason: string }
  | { kind: 'broken'; reason: string };

/** What the decision reads: the devices() outcome and what the machine shows besides it. */
export interface GpuEvidence {
  probe: ProbeOutcome<{ devices: unknown[] }>;
  /** NVIDIA device nodes or driver entries (/dev/nvidia0, /proc/driver/nvidia/gpus/…). */
  hardware: readonly string[];
  /** TENSORRT_NODE_CUDA_LIBRARY is set: a driver was named, so failing to load it is an error. */
  driverOverride: boolean;
  /** TENSORRT_NODE_REQUIRE_GPU=1 (a GPU runner): no GPU is a failure too. */
  requireGpu: boolean;
}

/** dlopen's message for a library that is not there (as opposed to one that is there but fails). */
const NOT_FOUND = /No such file or directory$/;

/** Decides from the evidence; pure. */
export function decideGpuPresence(e: GpuEvidence): GpuPresence {
  const hw = e.hardware.length > 0 ? ` although ${e.hardware.join(', ')} exist` : '';
  if (e.probe.ok) {
    const n = e.probe.value.devices.length;
    return n > 0 ? { kind: 'present', devices: n } : { kind: 'broken', reason: 'devices() resolved with an empty device list' };
  }
  const { code, message, details } = e.probe.error;
  const broken = (why: string): GpuPresence => ({ kind: 'broken', reason: `${why} (${code}: ${message.replace(/\s*\n\s*/g, ' ')})` });
  let absent: string | null = null;
  if (code === 'E_CUDA_MISSING') {
    const tried = (details?.tried as string[] | undefined) ?? [];
    if (e.driverOverride) return broken('TENSORRT_NODE_CUDA_LIBRARY names a CUDA driver that cannot be used');
    if (tried.length === 0 || !tried.every((t) => NOT_FOUND.test(t))) return broken('the CUDA driver library is present but cannot be used');
    absent = 'no CUDA driver library (libcuda.so.1) here';
  } else if (code === 'E_NO_DEVICE') {
    absent = 'the CUDA driver reports no device';
  } else {
    return broken('the CUDA driver or the addon failed');
  }
  if (hw !== '') return broken(`${absent}${hw}`);
  if (e.requireGpu) return broken(`${absent}, and TENSORRT_NODE_REQUIRE_GPU=1 says this machine must have a GPU`);
  return { kind: 'absent', reason: absent };
}

/** NVIDIA device nodes and driver GPU entries visible to this process. */
export function nvidiaHardware(): string[] {
  const list = (dir: string, pattern: RegExp): string[] => {
    try {
      return fs
        .readdirSync(dir)
        .filter((f) => pattern.test(f))
        .map((f) => `${dir}/${f}`);
    } catch {
      return [];
    }
  };
  return [...list('/dev', /^nvidia\d+$/), ...list('/proc/driver/nvidia/gpus', /./)];
}

/** Runs devices() in a child process (the addon keeps the driver it opened) with this environment. */
export function probeDevices(env: NodeJS.ProcessEnv = process.env): ProbeOutcome<{ devices: unknown[] }> {
  const r = spawnSync(process.execPath, [PROBE_SCRIPT, 'devices'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0 || r.signal !== null) {
    const message = `the devices() probe exited with status ${r.status} signal ${r.signal}: ${r.stderr.trim() || r.stdout.trim()}`;
    return { ok: false, error: { name: 'Error', code: 'E_PROBE', message, isTensorRTNodeError: false, hasCause: false } };
  }
  return JSON.parse(r.stdout) as ProbeOutcome<{ devices: unknown[] }>;
}

/** The decision for this machine and environment. */
export function gpuPresence(env: NodeJS.ProcessEnv = process.env): GpuPresence {
  return decideGpuPresence({
    probe: probeDevices(env),
    hardware: nvidiaHardware(),
    driverOverride: (env.TENSORRT_NODE_CUDA_LIBRARY ?? '') !== '',
    requireGpu: env.TENSORRT_NODE_REQUIRE_GPU === '1',
  });
}
