/**
 * `tensorrt-node inspect PROGRAM|MODEL`: what a program file holds (manifest, device
 * requirements, I/O, segments) and whether this machine can run it, without loading it. A
 * model is compiled first (with the command's flags) and its program inspected in memory.
 */
import * as fs from 'node:fs';

import { cudaEngineMemory, cudaEnginePrecision, describeEngineMemory } from '../backends/cuda/engine-format';
import { probeDevices, type CudaDevice } from '../devices';
import { BadProgramError, NoCompatibleDeviceError } from '../errors';
import { formatDim, formatShape, isStatic, type Dim } from '../ir/symbolic';
import { currentDeviceAmong } from '../gpu/current-device';
import { deviceTargetOf, formatComputeCapability, selectDevice, type EngineDevice } from '../engine/device-selection';
import { formatSegmentIO, ioLabeler, wrapList } from '../partitioning/report-format';
import { readProgramFile, type ManifestIO, type ProgramManifest } from '../runtime/program-file';
import { isTensorParallelFile } from '../runtime/tensor-parallel/file-read';
import { fileHeader, type DimRange, type EngineRequirement, type InspectIO, type InspectReport } from './inspect-report';
import { formatTensorParallelInspectReport, inspectTensorParallelBytes, type TensorParallelInspectReport } from './inspect-tensor-parallel';
import { isProgramFile, openModel, programOf, refuseCompileFlags, type ModelOptions } from './program-source';
import { createProgress } from './progress';
import { parseShapeOptions, UsageError } from './usage';

export type { DimRange, EngineRequirement, InspectIO, InspectReport } from './inspect-report';

function needsText(d: EngineDevice): string {
  if (d.type === 'cpu') return `no GPU (${d.backend} backend ${d.backendVersion}, runs on the CPU)`;
  const cc = formatComputeCapability(d.computeCapability!);
  const built = `built on device ${d.gpuId} "${d.deviceName}" with ${d.backend} ${d.backendVersion}`;
  if (d.type === 'dla') return `DLA core ${d.dlaCore} of device ${d.gpuId} with compute capability ${cc}${d.allowGpuFallback ? ', GPU fallback allowed' : ''} (${built})`;
  if (d.hardwareCompatibility === 'ampere+') return `a GPU with compute capability 8.0 or newer (hardware compatibility "ampere+"; ${built}, compute capability ${cc})`;
  return `a GPU with compute capability ${cc} (hardware compatibility "${d.hardwareCompatibility}"; ${built})`;
}

/**
 * The run-time dims of a shape with their sizes per profile: from the input's profiles, or,
 * in files before format 1.2, from the symbols' recorded ranges (finite ones; no opt).
 */
function dimRanges(shape: readonly Dim[], profiles: ManifestIO['profiles'], symbols: ProgramManifest['symbols']): DimRange[] {
  const byDim = new Map<string, DimRange>();
  shape.forEach((d, axis) => {
    if (isStatic(d)) return;
    const label = formatDim(d);
    const known = byDim.get(label);
    if (known !== undefined) {
      known.axes.push(axis);
      return;
    }
    if (profiles !== undefined) {
      byDim.set(label, { dim: label, axes: [axis], profiles: profiles.map((p) => ({ min: p.min[axis]!, opt: p.opt[axis]!, max: p.max[axis]! })) });
      return;
    }
    const s = d.op === 'sym' ? symbols.find((x) => x.name === d.name) : undefined;
    if (s !== undefined && typeof s.min === 'number' && typeof s.max === 'number') byDim.set(label, { dim: label, axes: [axis], profiles: [{ min: s.min, max: s.max }] });
  });
  return [...byDim.values()];
}

function ioEntry(x: ManifestIO, symbols?: ProgramManifest['symbols']): InspectIO {
  const shape = x.shape as Dim[];
  const entry: InspectIO = { name: x.name, value: x.value, dtype: x.dtype, shape: formatShape(shape) };
  if (x.profiles !== undefined) entry.profiles = x.profiles;
  if (symbols !== undefined) {
    const ranges = dimRanges(shape, x.profiles, symbols);
    if (ranges.length > 0) entry.ranges = ranges;
  }
  if (x.extra !== undefined) entry.extra = x.extra;
  return entry;
}

/** `batch: 1..32 (opt 8), seq: 4..64 (opt 16)` for one profile. */
function formatRanges(ranges: readonly DimRange[], profile: number): string {
  return ranges
    .map((r) => {
      const p = r.profiles[profile]!;
      return `${r.dim}: ${p.min}..${p.max}${p.opt === undefined ? '' : ` (opt ${p.opt})`}`;
    })
    .join(', ');
}

/** An input or output line, and for inputs with several profiles one line per profile. */
function formatIOLines(x: InspectIO): string[] {
  const extra = x.extra === undefined ? '' : ` ${JSON.stringify(x.extra)}`;
  const head = `  ${x.name}: ${x.dtype}${x.shape}`;
  const ranges = x.ranges ?? [];
  const count = ranges[0]?.profiles.length ?? 0;
  if (count === 0) return [`${head}${extra}`];
  if (count === 1) return [`${head}  ${formatRanges(ranges, 0)}${extra}`];
  return [`${head}${extra}`, ...Array.from({ length: count }, (_, p) => `    profile ${p}: ${formatRanges(ranges, p)}`)];
}

/**
 * Reads and checks a program file (container, format version, checksums; nothing is
 * deserialized) and says which device each engine would run on here.
 *
 * @param available the device list (default: `probeDevices()`, empty without a GPU).
 * @throws {BadProgramError} `E_BAD_PROGRAM` when the file cannot be read or is malformed.
 */
export async function inspectProgramFile(file: string, available?: readonly CudaDevice[]): Promise<InspectReport> {
  return inspectProgramBytes(readProgramBytes(file), file, `program file "${file}"`, available);
}

function readProgramBytes(file: string): Uint8Array {
  try {
    return fs.readFileSync(file);
  } catch (cause) {
    throw new BadProgramError(`program file "${file}" cannot be read: ${(cause as Error).message}`, { cause, details: { file } });
  }
}

/** {@link inspectProgramFile} of program bytes; `file` is what the report calls them. */
export async function inspectProgramBytes(bytes: Uint8Array, file: string, label: string, available?: readonly CudaDevice[]): Promise<InspectReport> {
  const { manifest: m, blobs } = readProgramFile(bytes, label);
  const engines: EngineRequirement[] = [];
  let list = available;
  for (const [i, s] of m.segments.entries()) {
    if (s.kind !== 'engine') continue;
    const req: EngineRequirement = { segment: i, device: s.device, needs: needsText(s.device) };
    const target = deviceTargetOf(s.device);
    if (target !== null) {
      list ??= (await probeDevices()).devices;
      try {
        const sel = selectDevice(target, list, currentDeviceAmong(list));
        req.here = { device: sel.device.ordinal, name: sel.device.name, reason: sel.reason, warnings: sel.warnings };
      } catch (error) {
        if (!(error instanceof NoCompatibleDeviceError)) throw error;
        req.here = { error: error.message };
      }
    }
    engines.push(req);
  }
  return {
    ...fileHeader(file, bytes, m),
    backends: m.backends,
    needsGpu: engines.some((e) => e.device.type !== 'cpu'),
    engines,
    inputs: m.inputs.map((x) => ioEntry(x, m.symbols)),
    outputs: m.outputs.map((x) => ioEntry(x)),
    segments: m.segments.map((s, index) => {
      const blob = s.kind === 'engine' ? s.engine : s.graph;
      const cuda = s.kind === 'engine' && s.backend === 'cuda';
      const precision = cuda ? cudaEnginePrecision(blobs.get(blob)!) : null;
      const memory = cuda ? cudaEngineMemory(blobs.get(blob)!) : null;
      return {
        index,
        kind: s.kind,
        ...(s.kind === 'engine' ? { backend: s.backend } : {}),
        blob,
        bytes: blobs.get(blob)!.byteLength,
        inputs: s.inputs,
        outputs: s.outputs,
        ...(precision === null ? {} : { precision }),
        ...(memory === null ? {} : { memory }),
      };
    }),
    constants: m.constants.map((c) => ({ value: c.value, dtype: c.dtype, shape: c.shape, bytes: blobs.get(c.blob)!.byteLength })),
    checksumsVerified: true,
    manifest: m,
  };
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The human-readable form of an {@link InspectReport}. */
export function formatInspectReport(r: InspectReport): string {
  const lines: string[] = [];
  lines.push(`${r.file}: ${r.format}, format version ${r.formatVersion}, written by ${r.writtenBy} (${formatBytes(r.bytes)})`);
  lines.push(`backends: ${Object.entries(r.backends).map(([n, v]) => `${n} ${v}`).join(', ') || 'none'}`);
  lines.push('');
  lines.push(`device requirements: ${r.needsGpu ? 'a GPU' : 'none (every engine runs on the CPU)'}`);
  for (const e of r.engines) {
    lines.push(`  segment ${e.segment}: ${e.needs}`);
    if (e.here === undefined) continue;
    if ('error' in e.here) lines.push(`    here: cannot run: ${e.here.error}`);
    else {
      lines.push(`    here: device ${e.here.device} "${e.here.name}" (${e.here.reason})`);
      for (const w of e.here.warnings) lines.push(`    warning: ${w}`);
    }
  }
  lines.push('');
  lines.push('inputs:');
  for (const x of r.inputs) lines.push(...formatIOLines(x));
  lines.push('outputs:');
  for (const x of r.outputs) lines.push(...formatIOLines(x));
  lines.push('');
  lines.push('segments:');
  const label = ioLabeler(r);
  for (const s of r.segments) {
    const what = s.kind === 'engine' ? `engine (${s.backend})` : 'fallback graph';
    lines.push(...wrapList(`  ${s.index}: ${what}, ${s.blob} (${formatBytes(s.bytes)}):`, [formatSegmentIO(s.inputs, s.outputs, label)], 6));
    if (s.precision !== undefined) lines.push(`      precision: ${s.precision}`);
    if (s.memory !== undefined) lines.push(`      device memory: ${describeEngineMemory(s.memory)}`);
  }
  if (r.constants.length > 0) {
    lines.push('constant outputs:');
    for (const c of r.constants) lines.push(`  ${c.value}: ${c.dtype}[${c.shape.join(', ')}] (${formatBytes(c.bytes)})`);
  }
  lines.push('');
  const blobCount = Object.keys(r.manifest.blobs).length;
  lines.push(`blobs: ${blobCount}, SHA-256 ${r.checksumsVerified ? 'verified' : 'not verified'}`);
  return lines.join('\n');
}

/** `inspect PROGRAM|MODEL [--json]`: a model is compiled with the flags, then inspected in memory. */
export async function inspectCommand(file: string, options: ModelOptions & { json?: boolean }, print: (s: string) => void): Promise<void> {
  const shapes = parseShapeOptions(options.shape);
  let report: InspectReport | TensorParallelInspectReport;
  if (isProgramFile(file)) {
    refuseCompileFlags(file, options);
    if (shapes.size > 0) throw new UsageError(`--shape applies when compiling a model; ${file} is a compiled program file`, { details: { flag: '--shape', file } });
    const bytes = readProgramBytes(file);
    const label = `program file "${file}"`;
    report = isTensorParallelFile(bytes) ? await inspectTensorParallelBytes(bytes, file, label, inspectProgramBytes) : await inspectProgramBytes(bytes, file, label);
  } else {
    const progress = createProgress(options);
    const source = openModel(file);
    const program = await programOf(source, options, shapes, progress);
    try {
      report = await inspectProgramBytes(program.saveBuffer(), `${file} (compiled in memory)`, `the program of ${file}`);
    } finally {
      await program.dispose();
    }
  }
  print(options.json ? JSON.stringify(report, null, 2) : 'ranks' in report ? formatTensorParallelInspectReport(report, formatInspectReport) : formatInspectReport(report));
}
