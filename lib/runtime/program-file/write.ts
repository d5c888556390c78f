/**
 * Writing program files: the manifest and blobs of a program, zipped (stored, fixed time
 * stamps, so files are byte-for-byte reproducible).
 *
 * The writer takes the program's plain parts ({@link SavableProgram}), not the Program class:
 * Program.save delegates here, and the loader (load.ts) builds Programs, so this module must
 * not import runtime/program (that was the runtime/program <-> runtime/program-file cycle).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

import { zipSync, type Zippable } from 'fflate';

import { getBackend } from '../../backends';
import { InternalError, InvalidArgumentError } from '../../errors';
import { defineEntry, encodeBound } from '../../io/json-blobs';
import { serializeDim, type SerializedDim } from '../../ir/serialize';
import type { Dim, SymbolRange } from '../../ir/symbolic';
import type { PartitionReport } from '../../partitioning/partition';
import { VERSION } from '../../version';
import type { EngineDevice } from '../../engine/device-selection';
import type { EngineSegment, ProgramData, ProgramIO } from '../segments';
import {
  FIXED_MTIME,
  KNOWN_DATA_KEYS,
  KNOWN_ENGINE_KEYS,
  KNOWN_FALLBACK_KEYS,
  KNOWN_IO_KEYS,
  MANIFEST_ENTRY,
  PROGRAM_FORMAT,
  PROGRAM_FORMAT_VERSION,
  type EncodedValue,
  type ManifestEngineSegment,
  type ManifestFallbackSegment,
  type ManifestIO,
  type ManifestSegment,
  type ProgramManifest,
} from './manifest';
import { encodeValue } from './values';

/** What a program file holds: the parts of a Program that are data (a Program is one). */
export interface SavableProgram {
  readonly data: ProgramData;
  readonly report: PartitionReport;
  readonly backend: string;
  readonly symbolRanges: ReadonlyMap<string, SymbolRange>;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const writeDim = (d: Dim, where: string): SerializedDim => serializeDim(d, (x) => new InternalError(`cannot save ${where}: the dim ${x} is not an integer`));

function writeBound(x: number, where: string): number | 'Infinity' | '-Infinity' {
  const b = encodeBound(x);
  if (b === undefined) throw new InternalError(`cannot save ${where}: it is ${x}`);
  return b;
}

/** Extra (not dedicated) fields of `obj`, or undefined when it has none. */
function extras(obj: object, known: Set<string>, where: string, addBlob: (b: Uint8Array) => string): Record<string, EncodedValue> | undefined {
  let out: Record<string, EncodedValue> | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (known.has(k) || v === undefined) continue;
    out ??= {};
    defineEntry(out, k, encodeValue(v, `${where}.${k}`, addBlob));
  }
  return out;
}

/** The record a segment saved before device records existed gets: only the reference backend's engines can be described. */
function deviceOf(s: EngineSegment, index: number): EngineDevice {
  if (s.device !== undefined) return structuredClone(s.device);
  if (s.backend === 'reference') {
    const version = getBackend('reference').version;
    return { type: 'cpu', gpuId: null, dlaCore: null, allowGpuFallback: false, computeCapability: null, deviceName: null, hardwareCompatibility: 'none', backend: 'reference', backendVersion: version };
  }
  throw new InvalidArgumentError(`cannot save the program: engine segment ${index} (${s.backend}) has no device record`);
}

/**
 * The manifest and blobs of `program` (what {@link saveProgramBuffer} zips).
 *
 * @throws {InvalidArgumentError} an engine segment without a device record that cannot be derived.
 * @throws {InternalError} a ProgramData field that is not data (a library bug).
 */
export function programManifest(program: SavableProgram): { manifest: ProgramManifest; blobs: Map<string, Uint8Array> } {
  const data = program.data;
  const blobs = new Map<string, Uint8Array>();
  const put = (name: string, bytes: Uint8Array): string => {
    blobs.set(name, bytes);
    return name;
  };
  let extraCount = 0;
  const addBlob = (bytes: Uint8Array): string => put(`data/${extraCount++}.bin`, bytes);

  const io = (x: ProgramIO, where: string): ManifestIO => {
    const entry: ManifestIO = { name: x.name, value: x.value, dtype: x.dtype, shape: x.shape.map((d) => writeDim(d, `${where}'s shape`)) };
    if (x.profiles !== undefined && x.profiles.length > 0) entry.profiles = x.profiles.map((p) => ({ min: [...p.min], opt: [...p.opt], max: [...p.max] }));
    const extra = extras(x, KNOWN_IO_KEYS, where, addBlob);
    if (extra !== undefined) entry.extra = extra;
    return entry;
  };
  const backends: Record<string, string> = {};
  const segments = data.segments.map((s, i): ManifestSegment => {
    if (s.kind === 'engine') {
      const device = deviceOf(s, i);
      defineEntry(backends, device.backend, device.backendVersion);
      const seg: ManifestEngineSegment = {
        kind: 'engine',
        backend: s.backend,
        engine: put(`engines/segment${i}.engine`, s.engine),
        inputs: [...s.inputs],
        outputs: [...s.outputs],
        device,
      };
      if (s.source !== undefined) {
        const b = s.source.build;
        seg.source = {
          network: put(`networks/segment${i}.network`, s.source.network),
          build: { precisions: [...b.precisions], ...(b.workspaceBytes === undefined ? {} : { workspaceBytes: b.workspaceBytes }), hardwareCompatibility: b.hardwareCompatibility, optimizationLevel: b.optimizationLevel },
        };
      }
      const extra = extras(s, KNOWN_ENGINE_KEYS, `segment ${i}`, addBlob);
      if (extra !== undefined) seg.extra = extra;
      return seg;
    }
    const seg: ManifestFallbackSegment = { kind: 'fallback', graph: put(`graphs/segment${i}.graph`, s.graph), inputs: [...s.inputs], outputs: [...s.outputs] };
    const extra = extras(s, KNOWN_FALLBACK_KEYS, `segment ${i}`, addBlob);
    if (extra !== undefined) seg.extra = extra;
    return seg;
  });
  const constants = Object.entries(data.constants).map(([value, c], i) => ({ value, dtype: c.dtype, shape: [...c.shape], blob: put(`constants/${i}.bin`, c.data) }));
  const manifest: ProgramManifest = {
    format: PROGRAM_FORMAT,
    formatVersion: `${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor}`,
    library: { name: 'tensorrt-node', version: VERSION },
    backend: program.backend,
    backends,
    inputs: data.inputs.map((x, i) => io(x, `input ${i} (${x.name})`)),
    outputs: data.outputs.map((x, i) => io(x, `output ${i} (${x.name})`)),
    symbols: [...program.symbolRanges].map(([name, r]) => ({ name, min: writeBound(r.min, `symbol ${name}'s minimum`), max: writeBound(r.max, `symbol ${name}'s maximum`) })),
    segments,
    constants,
    report: encodeValue(program.report, 'the partition report', addBlob),
    blobs: {},
  };
  const extra = extras(data, KNOWN_DATA_KEYS, 'the program data', addBlob);
  if (extra !== undefined) manifest.extra = extra;
  for (const [name, bytes] of blobs) defineEntry(manifest.blobs, name, { sha256: sha256(bytes), bytes: bytes.byteLength });
  return { manifest, blobs };
}

/** Zips a manifest and its blobs (stored, not compressed; fixed time stamps). */
export function packProgramFile(manifest: unknown, blobs: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const files: Zippable = {};
  const opts = { level: 0 as const, mtime: FIXED_MTIME };
  defineEntry(files, MANIFEST_ENTRY, [new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`), opts]);
  for (const [name, bytes] of blobs) defineEntry(files, name, [bytes, opts]);
  return zipSync(files);
}

/** The program as `.trtp` bytes (docs/program-format.md). */
export function saveProgramBuffer(program: SavableProgram): Uint8Array {
  const { manifest, blobs } = programManifest(program);
  return packProgramFile(manifest, blobs);
}

/** Writes the program to `file` as a `.trtp` program file (docs/program-format.md). */
export async function saveProgram(program: SavableProgram, file: string): Promise<void> {
  if (typeof file !== 'string' || file.length === 0) throw new InvalidArgumentError('save: the path must be a non-empty string');
  await fs.promises.writeFile(file, saveProgramBuffer(program));
}
