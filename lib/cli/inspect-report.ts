/**
 * What `inspect` reports of every kind of program file, single or tensor-parallel, as data
 * (`--json` prints it): the types inspect-command.ts and inspect-tensor-parallel.ts fill in.
 */
import type { EngineMemory } from '../backends/cuda/engine-format';
import type { EngineDevice } from '../engine/device-selection';
import type { ProgramManifest } from '../runtime/program-file';

/** The report fields every kind of program file has. */
export interface FileHeader {
  file: string;
  bytes: number;
  format: string;
  formatVersion: string;
  writtenBy: string;
  backend: string;
}

/** The {@link FileHeader} of a file's manifest. */
export function fileHeader(
  file: string,
  bytes: Uint8Array,
  m: { format: string; formatVersion: string; library: { name: string; version: string }; backend: string },
): FileHeader {
  return { file, bytes: bytes.byteLength, format: m.format, formatVersion: m.formatVersion, writtenBy: `${m.library.name} ${m.library.version}`, backend: m.backend };
}

/** One engine's device needs, and what this machine would do with it. */
export interface EngineRequirement {
  segment: number;
  device: EngineDevice;
  /** In words, e.g. `GPU with compute capability 9.0`. */
  needs: string;
  /** Here: the device it would run on, or why none can (absent for CPU engines). */
  here?: { device: number; name: string; reason: string; warnings: string[] } | { error: string };
}

/**
 * One run-time dim of a program input (a symbol or an expression, as the shape prints it) and
 * its sizes in each optimization profile. `opt` is absent where the file does not record it
 * (files before format 1.2 keep only the symbols' overall range: one entry, no opt).
 */
export interface DimRange {
  dim: string;
  /** Where it appears in the input's shape. */
  axes: number[];
  profiles: Array<{ min: number; opt?: number; max: number }>;
}

/** One program input or output as `inspect` reports it. */
export interface InspectIO {
  name: string;
  value: string;
  dtype: string;
  shape: string;
  /** Inputs with run-time dims: min/opt/max shapes per optimization profile, as the file holds them. */
  profiles?: Array<{ min: number[]; opt: number[]; max: number[] }>;
  /** Inputs with run-time dims: each such dim's range per profile (what the text form prints). */
  ranges?: DimRange[];
  extra?: unknown;
}

/** What `inspect` reports (`--json` prints it). */
export interface InspectReport extends FileHeader {
  backends: Record<string, string>;
  /** True when some engine needs a GPU or DLA. */
  needsGpu: boolean;
  engines: EngineRequirement[];
  inputs: InspectIO[];
  outputs: InspectIO[];
  /** Segment inputs and outputs are value names; `inputs`/`outputs` above map the program's names to theirs where they differ. */
  /** `precision`: what a cuda engine computes in and how many layers stayed fp32 (lib/network/precision.ts). */
  /** `memory`: the device memory a cuda engine's plans take, as its build recorded it (EngineMemory). */
  segments: Array<{ index: number; kind: string; backend?: string; blob: string; bytes: number; inputs: string[]; outputs: string[]; precision?: string; memory?: EngineMemory }>;
  constants: Array<{ value: string; dtype: string; shape: number[]; bytes: number }>;
  /** Every blob's SHA-256 was checked against the manifest. */
  checksumsVerified: boolean;
  manifest: ProgramManifest;
}
