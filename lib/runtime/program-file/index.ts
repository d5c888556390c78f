/**
 * Program files (`.trtp`): a compiled program saved as a zip archive of `manifest.json` and
 * binary blobs (engines, fallback graphs, constants), each blob with its SHA-256 in the
 * manifest. docs/program-format.md describes the format and its versioning policy.
 *
 * Loading checks, before anything is deserialized: the container (every zip header and
 * CRC-32), the manifest's format and format version, every blob's SHA-256, and that a device
 * can run every GPU or DLA engine (lib/runtime/device-selection.ts, against `devices()`).
 * Only then are graphs and engines deserialized, and the program's wiring checked. Every
 * problem with the file is a BadProgramError (`E_BAD_PROGRAM`) naming the file and the
 * cause; a missing device is a NoCompatibleDeviceError (`E_NO_COMPATIBLE_DEVICE`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

import { zipSync, type Zippable } from 'fflate';

import { getBackend, isBackendName } from '../../backends';
import { devices as listDevices, type CudaDevice } from '../../devices';
import {
  BadProgramError,
  type ErrorOptions,
  InternalError,
  InvalidArgumentError,
  NoCompatibleDeviceError,
  TensorRTMissingError,
  TensorRTNodeError,
} from '../../errors';
import { withZipErrors, ZipArchive } from '../../io/zip/reader';
import { dtypeInfo, isDType, type DType } from '../../ir/dtype';
import { describeJson, JsonReader } from '../../ir/json-reader';
import { deserializeGraphFromBuffer, serializeDim, type SerializedDim } from '../../ir/serialize';
import { formatShape, type Dim, type SymbolRange } from '../../ir/symbolic';
import type { PartitionReport } from '../../partitioning/partition';
import { Tensor } from '../../tensor';
import { VERSION } from '../../version';
import {
  DEFAULT_CURRENT_DEVICE,
  deviceTargetOf,
  formatComputeCapability,
  HARDWARE_COMPATIBILITY_LEVELS,
  selectDevice,
  type DeviceSelection,
  type EngineDevice,
  type HardwareCompatibilityLevel,
} from '../device-selection';
import { Program } from '../program';
import { runLimits, type RunLimits } from '../resource-limits';
import type { EngineSegment, ProgramData, ProgramIO, ProgramSegment } from '../segments';

/** The `format` field of every manifest. */
export const PROGRAM_FORMAT = 'tensorrt-node program';
/** The format version this library writes, and the newest it reads (docs/program-format.md). */
export const PROGRAM_FORMAT_VERSION = { major: 1, minor: 0 } as const;
/** The manifest's entry name. */
export const MANIFEST_ENTRY = 'manifest.json';

const BLOB_NAME = /^(engines|graphs|constants|data)\/[A-Za-z0-9._-]{1,200}$/;
const SHA256 = /^[0-9a-f]{64}$/;
/** How deep generic values and symbolic dims may nest. */
const MAX_DEPTH = 200;
/** DOS time stamp written into every entry (files are byte-for-byte reproducible). */
const FIXED_MTIME = new Date(1980, 0, 1, 0, 0, 0);

// ---------------------------------------------------------------------------------------
// The manifest (JSON)

/** A value that is JSON data, with tags for what JSON cannot hold (see {@link encodeValue}). */
export type EncodedValue = null | boolean | number | string | EncodedValue[] | { [key: string]: EncodedValue };

/** One program input or output. */
export interface ManifestIO {
  name: string;
  value: string;
  dtype: DType;
  /** Integers and symbolic expressions, as lib/ir/serialize.ts writes dims. */
  shape: SerializedDim[];
  /** Other fields of the ProgramIO (profiles, complex adapters...), generically encoded. */
  extra?: Record<string, EncodedValue>;
}

/** An engine segment in the manifest. */
export interface ManifestEngineSegment {
  kind: 'tensorrt';
  backend: string;
  /** The blob holding the engine bytes. */
  engine: string;
  inputs: string[];
  outputs: string[];
  device: EngineDevice;
  extra?: Record<string, EncodedValue>;
}

/** A fallback segment in the manifest. */
export interface ManifestFallbackSegment {
  kind: 'fallback';
  /** The blob holding serializeGraphToBuffer() bytes. */
  graph: string;
  inputs: string[];
  outputs: string[];
  extra?: Record<string, EncodedValue>;
}

export type ManifestSegment = ManifestEngineSegment | ManifestFallbackSegment;

/** `manifest.json`. */
export interface ProgramManifest {
  format: typeof PROGRAM_FORMAT;
  /** `MAJOR.MINOR`. */
  formatVersion: string;
  library: { name: 'tensorrt-node'; version: string };
  /** The program's backend (Program.backend). */
  backend: string;
  /** Every backend an engine uses, with its version. */
  backends: Record<string, string>;
  inputs: ManifestIO[];
  outputs: ManifestIO[];
  /** Ranges of the symbols the I/O shapes use; bounds may be "Infinity" / "-Infinity". */
  symbols: Array<{ name: string; min: number | 'Infinity' | '-Infinity'; max: number | 'Infinity' | '-Infinity' }>;
  /** In execution order. */
  segments: ManifestSegment[];
  /** Program outputs folded to constants at compile time. */
  constants: Array<{ value: string; dtype: DType; shape: number[]; blob: string }>;
  /** The partition report, generically encoded. */
  report: EncodedValue;
  /** Other fields of ProgramData, generically encoded. */
  extra?: Record<string, EncodedValue>;
  /** Every blob of the archive: its SHA-256 (hex) and size. */
  blobs: Record<string, { sha256: string; bytes: number }>;
}

// ---------------------------------------------------------------------------------------
// Generic values: what ProgramData fields without a dedicated manifest form become.

/**
 * Encodes `value` as JSON data. Typed arrays and Tensors become blobs (`{"$bytes": name,
 * "$type": ctor}`, `{"$tensor": {dtype, shape, blob}}`); numbers JSON cannot hold become
 * `{"$number": "NaN"|"Infinity"|"-Infinity"|"-0"}`; bigints `{"$bigint": "123"}`; Maps and
 * Sets `{"$map": [[k, v]...]}`, `{"$set": [...]}`; `undefined` object entries are left out;
 * object keys starting with `$` get a second `$`. Anything else (functions, class
 * instances) is a library bug: InternalError naming `where`.
 */
function encodeValue(value: unknown, where: string, addBlob: (bytes: Uint8Array) => string, depth = 0): EncodedValue {
  if (depth > MAX_DEPTH) throw new InternalError(`cannot save ${where}: it nests more than ${MAX_DEPTH} levels deep`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return { $number: 'NaN' };
    if (value === Infinity) return { $number: 'Infinity' };
    if (value === -Infinity) return { $number: '-Infinity' };
    if (Object.is(value, -0)) return { $number: '-0' };
    return value;
  }
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Tensor) {
    const d = value.data;
    return { $tensor: { dtype: value.dtype, shape: [...value.shape], blob: addBlob(new Uint8Array(d.buffer, d.byteOffset, d.byteLength).slice()) } };
  }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const type = Object.prototype.toString.call(value).slice(8, -1);
    if (!TYPED_ARRAYS.has(type)) throw new InternalError(`cannot save ${where}: a ${type} is not data`);
    return { $bytes: addBlob(new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice()), $type: type };
  }
  if (Array.isArray(value)) return value.map((v, i) => encodeValue(v, `${where}[${i}]`, addBlob, depth + 1));
  if (value instanceof Map) return { $map: [...value].map(([k, v], i) => [encodeValue(k, `${where} key ${i}`, addBlob, depth + 1), encodeValue(v, `${where} entry ${i}`, addBlob, depth + 1)]) };
  if (value instanceof Set) return { $set: [...value].map((v, i) => encodeValue(v, `${where} item ${i}`, addBlob, depth + 1)) };
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new InternalError(`cannot save ${where}: a ${(value as object).constructor?.name ?? 'object'} is not data`);
    }
    const out: Record<string, EncodedValue> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      defineEntry(out, k.startsWith('$') ? `$${k}` : k, encodeValue(v, `${where}.${k}`, addBlob, depth + 1));
    }
    return out;
  }
  throw new InternalError(`cannot save ${where}: a ${typeof value} is not data`);
}

const TYPED_ARRAYS = new Map<string, { BYTES_PER_ELEMENT: number; new (buffer: ArrayBuffer, offset: number, length: number): ArrayBufferView }>([
  ['Uint8Array', Uint8Array],
  ['Int8Array', Int8Array],
  ['Uint8ClampedArray', Uint8ClampedArray],
  ['Uint16Array', Uint16Array],
  ['Int16Array', Int16Array],
  ['Uint32Array', Uint32Array],
  ['Int32Array', Int32Array],
  ['Float32Array', Float32Array],
  ['Float64Array', Float64Array],
  ['BigInt64Array', BigInt64Array],
  ['BigUint64Array', BigUint64Array],
]);

/** Sets `obj[key]` as an own data property, also for "__proto__". */
function defineEntry<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------------------------------
// Saving

const KNOWN_IO_KEYS = new Set(['name', 'value', 'dtype', 'shape']);
const KNOWN_ENGINE_KEYS = new Set(['kind', 'backend', 'engine', 'inputs', 'outputs', 'device', 'placement']);
const KNOWN_FALLBACK_KEYS = new Set(['kind', 'graph', 'inputs', 'outputs']);
const KNOWN_DATA_KEYS = new Set(['inputs', 'outputs', 'segments', 'constants']);

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const writeDim = (d: Dim, where: string): SerializedDim => serializeDim(d, (x) => new InternalError(`cannot save ${where}: the dim ${x} is not an integer`));

function writeBound(x: number): number | 'Infinity' | '-Infinity' {
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return x;
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
export function programManifest(program: Program): { manifest: ProgramManifest; blobs: Map<string, Uint8Array> } {
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
    const extra = extras(x, KNOWN_IO_KEYS, where, addBlob);
    if (extra !== undefined) entry.extra = extra;
    return entry;
  };
  const backends: Record<string, string> = {};
  const segments = data.segments.map((s, i): ManifestSegment => {
    if (s.kind === 'tensorrt') {
      const device = deviceOf(s, i);
      defineEntry(backends, device.backend, device.backendVersion);
      const seg: ManifestEngineSegment = {
        kind: 'tensorrt',
        backend: s.backend,
        engine: put(`engines/segment${i}.engine`, s.engine),
        inputs: [...s.inputs],
        outputs: [...s.outputs],
        device,
      };
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
    symbols: [...program.symbolRanges].map(([name, r]) => ({ name, min: writeBound(r.min), max: writeBound(r.max) })),
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
export function saveProgramBuffer(program: Program): Uint8Array {
  const { manifest, blobs } = programManifest(program);
  return packProgramFile(manifest, blobs);
}

/** Writes the program to `file` as a `.trtp` program file (docs/program-format.md). */
export async function saveProgram(program: Program, file: string): Promise<void> {
  if (typeof file !== 'string' || file.length === 0) throw new InvalidArgumentError('save: the path must be a non-empty string');
  await fs.promises.writeFile(file, saveProgramBuffer(program));
}

// ---------------------------------------------------------------------------------------
// Reading and checking

const describe = (x: unknown): string => describeJson(x, 60);

/** Validating accessors over untrusted JSON; every failure is a BadProgramError prefixed with the label. */
class Reader extends JsonReader {
  constructor(label: string) {
    super(label, { maxDepth: MAX_DEPTH, quoteLength: 60, strict: true });
  }

  fail(message: string, details?: Record<string, unknown>): never {
    throw new BadProgramError(`${this.label}: ${message}`, details === undefined ? undefined : { details });
  }

  strings(x: unknown, what: string): string[] {
    return this.array(x, what).map((s, i) => this.string(s, `${what}[${i}]`));
  }

  boolean(x: unknown, what: string): boolean {
    if (typeof x !== 'boolean') this.fail(`${what} is not a boolean (got ${describe(x)})`);
    return x;
  }

  dtype(x: unknown, what: string): DType {
    if (!isDType(x)) this.fail(`${what} is the unknown dtype ${describe(x)}`);
    return x;
  }

  blobRef(x: unknown, what: string, referenced: Set<string>): string {
    const name = this.string(x, what);
    if (!BLOB_NAME.test(name)) this.fail(`${what} names the blob ${describe(name)}, which is not a blob name`);
    if (referenced.has(name)) this.fail(`${what} names the blob "${name}", which something else already uses`);
    referenced.add(name);
    return name;
  }
}

/** Checks a generic value's shape while reading (decoding waits until checksums are verified). */
function checkEncoded(r: Reader, x: unknown, what: string, referenced: Set<string>, depth = 0): void {
  if (depth > MAX_DEPTH) r.fail(`${what} nests too deeply`);
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return;
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) r.fail(`${what} is ${x}, which JSON cannot hold`);
    return;
  }
  if (Array.isArray(x)) {
    x.forEach((v, i) => checkEncoded(r, v, `${what}[${i}]`, referenced, depth + 1));
    return;
  }
  const o = r.object(x, what);
  const keys = Object.keys(o);
  const tag = keys.find((k) => k.startsWith('$') && !k.startsWith('$$'));
  if (tag === undefined) {
    for (const k of keys) checkEncoded(r, o[k], `${what}.${k}`, referenced, depth + 1);
    return;
  }
  switch (tag) {
    case '$number':
      r.object(x, what, { required: ['$number'] });
      if (!['NaN', 'Infinity', '-Infinity', '-0'].includes(o.$number as string)) r.fail(`${what} is the unknown number ${describe(o.$number)}`);
      return;
    case '$bigint':
      r.object(x, what, { required: ['$bigint'] });
      if (typeof o.$bigint !== 'string' || !/^-?\d{1,400}$/.test(o.$bigint)) r.fail(`${what} is not a bigint (got ${describe(o.$bigint)})`);
      return;
    case '$bytes':
    case '$type':
      r.object(x, what, { required: ['$bytes', '$type'] });
      if (!TYPED_ARRAYS.has(o.$type as string)) r.fail(`${what} has the unknown array type ${describe(o.$type)}`);
      r.blobRef(o.$bytes, `${what}`, referenced);
      return;
    case '$tensor': {
      r.object(x, what, { required: ['$tensor'] });
      const t = r.object(o.$tensor, what, { required: ['dtype', 'shape', 'blob'] });
      r.dtype(t.dtype, `${what}'s dtype`);
      r.array(t.shape, `${what}'s shape`).forEach((d, i) => r.index(d, `${what}'s shape[${i}]`));
      r.blobRef(t.blob, what, referenced);
      return;
    }
    case '$map':
      r.object(x, what, { required: ['$map'] });
      r.array(o.$map, what).forEach((pair, i) => {
        const p = r.array(pair, `${what} entry ${i}`);
        if (p.length !== 2) r.fail(`${what} entry ${i} is not a [key, value] pair`);
        checkEncoded(r, p[0], `${what} key ${i}`, referenced, depth + 1);
        checkEncoded(r, p[1], `${what} entry ${i}`, referenced, depth + 1);
      });
      return;
    case '$set':
      r.object(x, what, { required: ['$set'] });
      r.array(o.$set, what).forEach((v, i) => checkEncoded(r, v, `${what} item ${i}`, referenced, depth + 1));
      return;
    default:
      r.fail(`${what} has the unknown tag "${tag}"`);
  }
}

/** Decodes a value {@link checkEncoded} accepted (blobs already verified). */
function decodeValue(r: Reader, x: EncodedValue, what: string, blobs: ReadonlyMap<string, Uint8Array>): unknown {
  if (x === null || typeof x !== 'object') return x;
  if (Array.isArray(x)) return x.map((v, i) => decodeValue(r, v, `${what}[${i}]`, blobs));
  const keys = Object.keys(x);
  const tag = keys.find((k) => k.startsWith('$') && !k.startsWith('$$'));
  const copy = (name: string): Uint8Array => blobs.get(name)!.slice();
  switch (tag) {
    case undefined: {
      const out: Record<string, unknown> = {};
      for (const k of keys) defineEntry(out, k.startsWith('$$') ? k.slice(1) : k, decodeValue(r, x[k]!, `${what}.${k}`, blobs));
      return out;
    }
    case '$number':
      return { NaN, Infinity, '-Infinity': -Infinity, '-0': -0 }[x.$number as string];
    case '$bigint':
      return BigInt(x.$bigint as string);
    case '$bytes':
    case '$type': {
      const ctor = TYPED_ARRAYS.get(x.$type as string)!;
      const bytes = copy(x.$bytes as string);
      if (bytes.byteLength % ctor.BYTES_PER_ELEMENT !== 0) r.fail(`${what}: ${bytes.byteLength} bytes do not make a ${x.$type as string}`);
      return new ctor(bytes.buffer as ArrayBuffer, 0, bytes.byteLength / ctor.BYTES_PER_ELEMENT);
    }
    case '$tensor': {
      const t = x.$tensor as { dtype: DType; shape: number[]; blob: string };
      return tensorFromBytes(r, t.dtype, t.shape, copy(t.blob), what);
    }
    case '$map':
      return new Map((x.$map as EncodedValue[][]).map((p, i) => [decodeValue(r, p[0]!, `${what} key ${i}`, blobs), decodeValue(r, p[1]!, `${what} entry ${i}`, blobs)]));
    default:
      return new Set((x.$set as EncodedValue[]).map((v, i) => decodeValue(r, v, `${what} item ${i}`, blobs)));
  }
}

function tensorFromBytes(r: Reader, dtype: DType, shape: number[], bytes: Uint8Array, what: string): Tensor {
  const info = dtypeInfo(dtype);
  let size = 1;
  for (const d of shape) size *= d;
  if (!Number.isSafeInteger(size) || size * info.itemBytes !== bytes.byteLength) {
    r.fail(`${what}: a ${dtype}[${shape.join(', ')}] tensor needs ${size * info.itemBytes} bytes, its blob has ${bytes.byteLength}`);
  }
  return new Tensor(dtype, shape, new info.storage(bytes.buffer as ArrayBuffer, 0, size * info.lanes));
}

/** A checked manifest and its verified blobs: what {@link readProgramFile} returns. */
export interface ProgramFileContents {
  manifest: ProgramManifest;
  /** Blob name → bytes (SHA-256 verified). */
  blobs: Map<string, Uint8Array>;
  /** Where the bytes came from, for messages: `program file "x.trtp"` or `program buffer`. */
  label: string;
}

/** Parses `M.m`; anything else is null. */
function parseVersion(x: unknown): { major: number; minor: number } | null {
  if (typeof x !== 'string') return null;
  const m = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/.exec(x);
  return m === null ? null : { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * Whether this library reads format version `found` (docs/program-format.md): the same
 * major version and a minor version no newer than `supported`.
 *
 * @throws {BadProgramError} naming the version the file needs and the one this library reads.
 */
export function checkFormatVersion(
  found: unknown,
  label: string,
  writtenBy: string | undefined,
  supported: { major: number; minor: number } = PROGRAM_FORMAT_VERSION,
): { major: number; minor: number } {
  const here = `${supported.major}.${supported.minor}`;
  const v = parseVersion(found);
  const details = { formatVersion: found, supported: here, writtenBy };
  const by = writtenBy === undefined ? '' : ` (it was written by tensorrt-node ${writtenBy})`;
  if (v === null) {
    throw new BadProgramError(`${label}: unknown format version ${describe(found)}: this tensorrt-node (${VERSION}) reads format versions ${supported.major}.0 to ${here}`, { details });
  }
  const text = `${v.major}.${v.minor}`;
  if (v.major > supported.major || (v.major === supported.major && v.minor > supported.minor)) {
    throw new BadProgramError(
      `${label}: format version ${text} is newer than this tensorrt-node (${VERSION}) reads (up to ${here}): reading it needs a tensorrt-node that reads format ${text}${by}`,
      { details },
    );
  }
  if (v.major < supported.major) {
    throw new BadProgramError(
      `${label}: format version ${text} is no longer read by this tensorrt-node (${VERSION}), which reads ${supported.major}.x: load it with the tensorrt-node that wrote it${by} and recompile`,
      { details },
    );
  }
  return v;
}

function readDevice(r: Reader, x: unknown, what: string): EngineDevice {
  const o = r.object(x, what, {
    required: ['type', 'gpuId', 'dlaCore', 'allowGpuFallback', 'computeCapability', 'deviceName', 'hardwareCompatibility', 'backend', 'backendVersion'],
  });
  if (o.type !== 'gpu' && o.type !== 'dla' && o.type !== 'cpu') r.fail(`${what}.type is ${describe(o.type)}, not "gpu", "dla" or "cpu"`);
  const type = o.type;
  const nullable = <T>(v: unknown, read: (v: unknown) => T): T | null => (v === null ? null : read(v));
  const gpuId = nullable(o.gpuId, (v) => r.index(v, `${what}.gpuId`));
  const dlaCore = nullable(o.dlaCore, (v) => r.index(v, `${what}.dlaCore`));
  const cc = nullable(o.computeCapability, (v) => {
    const c = r.object(v, `${what}.computeCapability`, { required: ['major', 'minor'] });
    return { major: r.index(c.major, `${what}.computeCapability.major`), minor: r.index(c.minor, `${what}.computeCapability.minor`) };
  });
  const deviceName = nullable(o.deviceName, (v) => r.string(v, `${what}.deviceName`));
  if (!HARDWARE_COMPATIBILITY_LEVELS.includes(o.hardwareCompatibility as HardwareCompatibilityLevel)) {
    r.fail(`${what}.hardwareCompatibility is ${describe(o.hardwareCompatibility)}, not one of ${HARDWARE_COMPATIBILITY_LEVELS.map((l) => `"${l}"`).join(', ')}`);
  }
  const level = o.hardwareCompatibility as HardwareCompatibilityLevel;
  const record: EngineDevice = {
    type,
    gpuId,
    dlaCore,
    allowGpuFallback: r.boolean(o.allowGpuFallback, `${what}.allowGpuFallback`),
    computeCapability: cc,
    deviceName,
    hardwareCompatibility: level,
    backend: r.string(o.backend, `${what}.backend`),
    backendVersion: r.string(o.backendVersion, `${what}.backendVersion`),
  };
  if (type === 'cpu') {
    if (gpuId !== null || dlaCore !== null || cc !== null || deviceName !== null) r.fail(`${what}: a CPU engine has no GPU id, DLA core, compute capability or device name`);
    if (level !== 'none') r.fail(`${what}: a CPU engine has no hardware compatibility level`);
  } else {
    if (gpuId === null || cc === null || deviceName === null) r.fail(`${what}: a ${type.toUpperCase()} engine needs gpuId, computeCapability and deviceName`);
    if (type === 'dla' && dlaCore === null) r.fail(`${what}: a DLA engine needs its dlaCore`);
    if (type === 'gpu' && dlaCore !== null) r.fail(`${what}: a GPU engine has no DLA core`);
    if (type === 'dla' && level !== 'none') r.fail(`${what}: DLA engines are not hardware-compatible`);
    if (level === 'ampere+' && cc.major < 8) r.fail(`${what}: an "ampere+" engine cannot have been built on compute capability ${formatComputeCapability(cc)}`);
  }
  return record;
}

/**
 * Reads and checks a program file without deserializing anything: the container, the
 * format and its version, the manifest's structure, and every blob's SHA-256. What
 * `tensorrt-node inspect` shows, and the first half of loading.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the file and what is wrong.
 */
export function readProgramFile(bytes: Uint8Array, label = 'program buffer'): ProgramFileContents {
  if (!ArrayBuffer.isView(bytes) || Object.prototype.toString.call(bytes) !== '[object Uint8Array]') {
    throw new InvalidArgumentError('a program buffer must be a Uint8Array (or a Buffer)');
  }
  const r: Reader = new Reader(label);
  // A problem with no entry to name is with the container itself: not a (sound) program file.
  const toError = (problem: string, options: ErrorOptions): Error =>
    new BadProgramError(`${label}: ${options.details?.entry === undefined ? 'not a program file: ' : ''}${problem}`, options);
  const zip = withZipErrors(() => ZipArchive.open(bytes), label, toError);
  // Entries are inflated and CRC-checked only when the manifest asks for them.
  const entry = (name: string): Uint8Array | undefined => (zip.has(name) ? withZipErrors(() => zip.read(name), label, toError) : undefined);
  const manifestBytes = entry(MANIFEST_ENTRY);
  if (manifestBytes === undefined) r.fail(`no ${MANIFEST_ENTRY} in the archive: not a tensorrt-node program file`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(manifestBytes));
  } catch (cause) {
    throw new BadProgramError(`${label}: ${MANIFEST_ENTRY} is not readable JSON: ${(cause as Error).message}`, { cause });
  }
  const m = r.object(json, MANIFEST_ENTRY);
  if (m.format !== PROGRAM_FORMAT) r.fail(`${MANIFEST_ENTRY} says format ${describe(m.format)}, not "${PROGRAM_FORMAT}": not a tensorrt-node program file`);
  const lib = typeof m.library === 'object' && m.library !== null ? (m.library as Record<string, unknown>) : {};
  checkFormatVersion(m.formatVersion, label, typeof lib.version === 'string' ? lib.version : undefined);

  // Version 1.x: the structure.
  r.object(m, MANIFEST_ENTRY, {
    required: ['format', 'formatVersion', 'library', 'backend', 'backends', 'inputs', 'outputs', 'symbols', 'segments', 'constants', 'report', 'blobs'],
    optional: ['extra'],
  });
  const referenced = new Set<string>();
  const library = r.object(m.library, 'library', { required: ['name', 'version'] });
  if (library.name !== 'tensorrt-node') r.fail(`library.name is ${describe(library.name)}, not "tensorrt-node"`);
  r.string(library.version, 'library.version');
  r.string(m.backend, 'backend');
  const backends = r.object(m.backends, 'backends');
  for (const [k, v] of Object.entries(backends)) r.string(v, `backends.${k}`);
  const readExtra = (x: unknown, what: string): void => {
    const o = r.object(x, what);
    for (const [k, v] of Object.entries(o)) checkEncoded(r, v, `${what}.${k}`, referenced);
  };
  const readIO = (x: unknown, what: string): void => {
    const o = r.object(x, what, { required: ['name', 'value', 'dtype', 'shape'], optional: ['extra'] });
    r.string(o.name, `${what}.name`);
    r.string(o.value, `${what}.value`);
    r.dtype(o.dtype, `${what}.dtype`);
    r.array(o.shape, `${what}.shape`).forEach((d, i) => r.dim(d, `${what}.shape[${i}]`));
    if (o.extra !== undefined) readExtra(o.extra, `${what}.extra`);
  };
  r.array(m.inputs, 'inputs').forEach((x, i) => readIO(x, `inputs[${i}]`));
  r.array(m.outputs, 'outputs').forEach((x, i) => readIO(x, `outputs[${i}]`));
  const symbolNames = new Set<string>();
  r.array(m.symbols, 'symbols').forEach((x, i) => {
    const o = r.object(x, `symbols[${i}]`, { required: ['name', 'min', 'max'] });
    const name = r.string(o.name, `symbols[${i}].name`);
    if (symbolNames.has(name)) r.fail(`symbol ${name} is declared twice`);
    symbolNames.add(name);
    r.bound(o.min, `symbols[${i}].min`);
    r.bound(o.max, `symbols[${i}].max`);
  });
  r.array(m.segments, 'segments').forEach((x, i) => {
    const what = `segments[${i}]`;
    const o = r.object(x, what);
    if (o.kind === 'tensorrt') {
      r.object(x, what, { required: ['kind', 'backend', 'engine', 'inputs', 'outputs', 'device'], optional: ['extra'] });
      const backend = r.string(o.backend, `${what}.backend`);
      r.blobRef(o.engine, `${what}.engine`, referenced);
      const device = readDevice(r, o.device, `${what}.device`);
      if (device.backend !== backend) r.fail(`${what}: its device record names the backend "${device.backend}", the segment "${backend}"`);
      if (!Object.hasOwn(backends, backend)) r.fail(`${what} uses the backend "${backend}", which "backends" does not list`);
    } else if (o.kind === 'fallback') {
      r.object(x, what, { required: ['kind', 'graph', 'inputs', 'outputs'], optional: ['extra'] });
      r.blobRef(o.graph, `${what}.graph`, referenced);
    } else r.fail(`${what}.kind is ${describe(o.kind)}, not "tensorrt" or "fallback"`);
    r.strings(o.inputs, `${what}.inputs`);
    r.strings(o.outputs, `${what}.outputs`);
    if (o.extra !== undefined) readExtra(o.extra, `${what}.extra`);
  });
  const constantValues = new Set<string>();
  r.array(m.constants, 'constants').forEach((x, i) => {
    const what = `constants[${i}]`;
    const o = r.object(x, what, { required: ['value', 'dtype', 'shape', 'blob'] });
    const value = r.string(o.value, `${what}.value`);
    if (constantValues.has(value)) r.fail(`${what}: the constant ${value} is listed twice`);
    constantValues.add(value);
    r.dtype(o.dtype, `${what}.dtype`);
    r.array(o.shape, `${what}.shape`).forEach((d, k) => r.index(d, `${what}.shape[${k}]`));
    r.blobRef(o.blob, `${what}.blob`, referenced);
  });
  checkEncoded(r, m.report, 'report', referenced);
  if (m.extra !== undefined) readExtra(m.extra, 'extra');

  // The blobs: listed, present, referenced, and intact.
  const listed = r.object(m.blobs, 'blobs');
  // Unlisted entries are refused before any blob is inflated.
  for (const e of zip.entries) {
    if (e.name !== MANIFEST_ENTRY && !Object.hasOwn(listed, e.name)) r.fail(`the archive holds "${e.name}", which the manifest does not list`);
  }
  const blobs = new Map<string, Uint8Array>();
  for (const [name, info] of Object.entries(listed)) {
    const what = `blob "${name}"`;
    if (!BLOB_NAME.test(name)) r.fail(`blobs lists ${describe(name)}, which is not a blob name`);
    const o = r.object(info, `blobs.${name}`, { required: ['sha256', 'bytes'] });
    const expected = r.string(o.sha256, `${what}'s sha256`);
    if (!SHA256.test(expected)) r.fail(`${what}'s sha256 is not 64 lowercase hex digits`);
    const size = r.index(o.bytes, `${what}'s size`);
    if (!referenced.has(name)) r.fail(`${what} is listed, but nothing in the manifest uses it`);
    const data = entry(name);
    if (data === undefined) r.fail(`${what} is missing from the archive (the manifest lists it)`, { blob: name });
    if (data.byteLength !== size) r.fail(`${what} is corrupt: ${data.byteLength} bytes, the manifest says ${size}`, { blob: name });
    const actual = sha256(data);
    if (actual !== expected) r.fail(`${what} is corrupt: its SHA-256 is ${actual}, the manifest says ${expected}`, { blob: name });
    blobs.set(name, data);
  }
  for (const name of referenced) if (!blobs.has(name)) r.fail(`blob "${name}" is used by the manifest but not listed in "blobs"`, { blob: name });
  return { manifest: m as unknown as ProgramManifest, blobs, label };
}

// ---------------------------------------------------------------------------------------
// Loading

/** Options of {@link loadProgram} and {@link loadProgramBuffer}. */
export interface LoadProgramOptions {
  /**
   * Preferred device (a CUDA ordinal, or `"cuda:N"`): chosen before every other preference
   * when it can run the engines; when it cannot, loading fails (E_NO_COMPATIBLE_DEVICE).
   */
  device?: number | string;
  /** The devices to choose from instead of asking the driver (`devices()`): for tools and tests that hold the list. */
  availableDevices?: readonly CudaDevice[];
  /** The largest tensor, in bytes, one run may allocate (as compile()'s `maxTensorBytes`; default 4 GiB). */
  maxTensorBytes?: number;
}

const LOAD_KEYS = ['device', 'availableDevices', 'maxTensorBytes'];

function parseDeviceOption(x: unknown): number | undefined {
  if (x === undefined) return undefined;
  if (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0) return x;
  if (typeof x === 'string') {
    const m = /^(?:cuda:)?(\d{1,6})$/.exec(x);
    if (m !== null) return Number(m[1]);
  }
  throw new InvalidArgumentError(`load options: device must be a CUDA ordinal (e.g. 0) or "cuda:N", got ${JSON.stringify(x)}`);
}

/** The device list, with "no driver" and "no device" as an empty list. */
async function availableDevices(): Promise<CudaDevice[]> {
  try {
    return (await listDevices()).devices;
  } catch (error) {
    if (error instanceof TensorRTNodeError && (error.code === 'E_CUDA_MISSING' || error.code === 'E_NO_DEVICE')) return [];
    throw error;
  }
}

/**
 * Selects a device for every GPU or DLA engine of a checked file (CPU engines need none).
 *
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE` with the message docs/program-format.md shows.
 */
export async function selectProgramDevices(
  contents: ProgramFileContents,
  options: { device?: number; availableDevices?: readonly CudaDevice[] } = {},
): Promise<Array<DeviceSelection<CudaDevice> | null>> {
  const targets = contents.manifest.segments.map((s) => (s.kind === 'tensorrt' ? deviceTargetOf(s.device) : null));
  if (targets.every((t) => t === null)) return targets.map(() => null);
  const list = options.availableDevices ?? (await availableDevices());
  const current = list.some((d) => d.ordinal === DEFAULT_CURRENT_DEVICE) ? DEFAULT_CURRENT_DEVICE : null;
  return targets.map((target, i) => {
    if (target === null) return null;
    try {
      return selectDevice(target, list, current, { device: options.device });
    } catch (error) {
      if (!(error instanceof NoCompatibleDeviceError) || !contents.label.startsWith('program file')) throw error;
      const message = error.message.replace(/^Unable to deserialize program:/, `Unable to deserialize ${contents.label}:`);
      throw new NoCompatibleDeviceError(message, { details: { ...error.details, segment: i } });
    }
  });
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && new Set(a).size === a.length && a.every((x) => b.includes(x));
}

/** Rebuilds ProgramData from checked contents, deserializing (and so validating) every graph and engine. */
function buildProgram(contents: ProgramFileContents, selections: Array<DeviceSelection<CudaDevice> | null>, limits: RunLimits): Program {
  const { manifest: m, blobs, label } = contents;
  const r: Reader = new Reader(label);
  const copy = (name: string): Uint8Array => blobs.get(name)!.slice();
  const withExtra = <T extends object>(target: T, extra: Record<string, EncodedValue> | undefined, known: Set<string>, what: string): T => {
    for (const [k, v] of Object.entries(extra ?? {})) {
      if (known.has(k)) r.fail(`${what}.extra repeats the field "${k}"`);
      defineEntry(target as Record<string, unknown>, k, decodeValue(r, v, `${what}.extra.${k}`, blobs));
    }
    return target;
  };
  const io = (x: ManifestIO, what: string): ProgramIO =>
    withExtra({ name: x.name, value: x.value, dtype: x.dtype, shape: x.shape.map((d, i) => r.dim(d, `${what}.shape[${i}]`)) }, x.extra, KNOWN_IO_KEYS, what);
  const inputs = m.inputs.map((x, i) => io(x, `inputs[${i}]`));
  const outputs = m.outputs.map((x, i) => io(x, `outputs[${i}]`));
  const unique = (list: readonly string[], what: string): void => {
    const seen = new Set<string>();
    for (const x of list) {
      if (seen.has(x)) r.fail(`${what} "${x}" appears twice`);
      seen.add(x);
    }
  };
  unique(inputs.map((x) => x.name), 'the input name');
  unique(inputs.map((x) => x.value), 'the input value');
  unique(outputs.map((x) => x.name), 'the output name');

  const constants: ProgramData['constants'] = {};
  for (const [i, c] of m.constants.entries()) {
    const bytes = copy(c.blob);
    tensorFromBytes(r, c.dtype, c.shape, bytes, `constants[${i}] (${c.value})`);
    defineEntry(constants, c.value, { dtype: c.dtype, shape: [...c.shape], data: bytes });
  }

  // Wiring: every value a segment or output reads is computed before.
  const known = new Set<string>([...inputs.map((x) => x.value), ...Object.keys(constants)]);
  const segments: ProgramSegment[] = m.segments.map((s, i) => {
    const what = `segments[${i}]`;
    for (const v of s.inputs) if (!known.has(v)) r.fail(`${what} reads the value "${v}", which no input, constant or earlier segment provides`);
    unique(s.inputs, `${what}: the input`);
    unique(s.outputs, `${what}: the output`);
    for (const v of s.outputs) if (known.has(v) && !s.inputs.includes(v)) r.fail(`${what} computes the value "${v}" again (an input, constant or earlier segment provides it)`);
    if (s.kind === 'tensorrt') {
      const engine = copy(s.engine);
      const backend = loadBackend(r, s, what);
      let runner;
      try {
        runner = backend.inspect(engine);
      } catch (cause) {
        throw new BadProgramError(`${label}: ${what}: engine "${s.engine}" cannot be loaded: ${(cause as Error).message}`, { cause });
      }
      if (!sameSet(runner.inputNames, s.inputs)) {
        r.fail(`${what}: engine "${s.engine}" takes the inputs ${runner.inputNames.join(', ')}, the manifest says ${s.inputs.join(', ')}`);
      }
      const missing = s.outputs.filter((o) => !runner.outputNames.includes(o) && !s.inputs.includes(o));
      if (missing.length > 0) r.fail(`${what}: engine "${s.engine}" does not compute ${missing.join(', ')}`);
      const sel = selections[i];
      const seg: EngineSegment = { kind: 'tensorrt', backend: s.backend, engine, inputs: [...s.inputs], outputs: [...s.outputs], device: structuredClone(s.device) };
      if (sel !== null && sel !== undefined) seg.placement = { ordinal: sel.device.ordinal, name: sel.device.name, reason: sel.reason };
      s.outputs.forEach((v) => known.add(v));
      return withExtra(seg, s.extra, KNOWN_ENGINE_KEYS, what);
    }
    const graphBytes = copy(s.graph);
    let graph;
    try {
      graph = deserializeGraphFromBuffer(graphBytes);
    } catch (cause) {
      throw new BadProgramError(`${label}: ${what}: graph "${s.graph}" cannot be loaded: ${(cause as Error).message}`, { cause });
    }
    if (graph.inputs.length !== s.inputs.length || graph.outputs.length !== s.outputs.length) {
      r.fail(`${what}: graph "${s.graph}" has ${graph.inputs.length} inputs and ${graph.outputs.length} outputs, the manifest says ${s.inputs.length} and ${s.outputs.length}`);
    }
    s.outputs.forEach((v) => known.add(v));
    return withExtra({ kind: 'fallback', graph: graphBytes, inputs: [...s.inputs], outputs: [...s.outputs] }, s.extra, KNOWN_FALLBACK_KEYS, what);
  });
  outputs.forEach((o, i) => {
    if (!known.has(o.value)) r.fail(`outputs[${i}] (${o.name}) is the value "${o.value}", which nothing computes`);
    const input = inputs.find((x) => x.value === o.value);
    if (input !== undefined && (input.dtype !== o.dtype || formatShape(input.shape) !== formatShape(o.shape))) {
      r.fail(`outputs[${i}] (${o.name}) is the input "${input.name}", but their types differ (${input.dtype}${formatShape(input.shape)} and ${o.dtype}${formatShape(o.shape)})`);
    }
  });
  // compile() gives a segment only outputs that a later segment or the program reads: one nothing reads means a dropped output.
  const read = new Set([...m.segments.flatMap((s) => s.inputs), ...outputs.map((o) => o.value)]);
  m.segments.forEach((s, i) => {
    for (const v of s.outputs) if (!read.has(v)) r.fail(`segments[${i}] computes the value "${v}", which no later segment or program output reads`);
  });
  const symbols = new Map<string, SymbolRange>(m.symbols.map((s) => [s.name, { min: r.bound(s.min, 'symbol'), max: r.bound(s.max, 'symbol') }]));
  const data = withExtra({ inputs, outputs, segments, constants } as ProgramData, m.extra, KNOWN_DATA_KEYS, 'manifest');
  const report = decodeValue(r, m.report, 'report', blobs) as PartitionReport;
  const rep = r.object(report, 'report');
  r.array(rep.ops, 'report.ops');
  r.array(rep.segments, 'report.segments');
  return new Program(data, report, m.backend, symbols, limits);
}

function loadBackend(r: Reader, s: ManifestEngineSegment, what: string): ReturnType<typeof getBackend> {
  if (!isBackendName(s.backend)) return r.fail(`${what} needs the backend "${s.backend}", which this tensorrt-node does not have`);
  const backend = getBackend(s.backend);
  if (!backend.implemented) {
    const kind = s.backend === 'tensorrt' ? 'TensorRT' : s.backend;
    throw new TensorRTMissingError(`${r.label}: ${what} is a ${kind} engine, but this tensorrt-node has no usable ${kind} backend; \`tensorrt-node doctor\` says why`, { details: { backend: s.backend } });
  }
  // TensorRT plans only load into the TensorRT version that built them.
  if (s.backend === 'tensorrt' && backend.version !== s.device.backendVersion) {
    r.fail(`${what} was built with TensorRT ${s.device.backendVersion}, this machine has TensorRT ${backend.version}: recompile the model here`);
  }
  return backend;
}

/**
 * Loads a program from `.trtp` bytes. Checks the container, format version, checksums and
 * device compatibility before deserializing anything, then validates every graph and engine.
 * `label` names the bytes in error messages (loadProgram passes `program file "<path>"`).
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM`: malformed, corrupt, or of an unreadable format version.
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: no device can run a GPU or DLA engine.
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: TensorRT engines, but no TensorRT backend here.
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad options.
 */
export async function loadProgramBuffer(bytes: Uint8Array, options: LoadProgramOptions = {}, label = 'program buffer'): Promise<Program> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('load options must be an object');
  for (const k of Object.keys(options)) if (!LOAD_KEYS.includes(k)) throw new InvalidArgumentError(`load options: unknown key "${k}" (known: ${LOAD_KEYS.join(', ')})`);
  const device = parseDeviceOption(options.device);
  const limits = runLimits(options.maxTensorBytes, 'load options');
  if (options.availableDevices !== undefined && !Array.isArray(options.availableDevices)) {
    throw new InvalidArgumentError('load options: availableDevices must be a list of devices (as devices() returns them)');
  }
  const contents = readProgramFile(bytes, label);
  const selections = await selectProgramDevices(contents, { device, availableDevices: options.availableDevices });
  try {
    return buildProgram(contents, selections, limits);
  } catch (error) {
    if (error instanceof TensorRTNodeError) throw error;
    throw new BadProgramError(`${label}: cannot be loaded: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Loads a program saved with `program.save(file)`. Like {@link loadProgramBuffer}; errors
 * name the file.
 *
 * @throws {BadProgramError} also when the file cannot be read (the cause says why).
 */
export async function loadProgram(file: string, options: LoadProgramOptions = {}): Promise<Program> {
  if (typeof file !== 'string' || file.length === 0) throw new InvalidArgumentError('loadProgram: the path must be a non-empty string');
  let bytes: Uint8Array;
  try {
    bytes = await fs.promises.readFile(file);
  } catch (cause) {
    throw new BadProgramError(`program file "${file}" cannot be read: ${(cause as Error).message}`, { cause, details: { file } });
  }
  return loadProgramBuffer(bytes, options, `program file "${file}"`);
}

export { selectDevice } from '../device-selection';
export type { DeviceSelection, DeviceTarget, EngineDevice, HardwareCompatibilityLevel } from '../device-selection';
