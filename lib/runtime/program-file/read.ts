/**
 * Reading program files: the container (through the strict zip reader lib/io/zip/), the
 * manifest's format, version and structure, and every blob's SHA-256, before anything is
 * deserialized. What `tensorrt-node inspect` shows, and the first half of loading.
 */
import { BadProgramError, type ErrorOptions, InvalidArgumentError } from '../../errors';
import { CodecError, parseJsonText } from '../../io/json-blobs';
import { withZipErrors, ZipArchive } from '../../io/zip/reader';
import { VERSION } from '../../version';
import {
  formatComputeCapability,
  HARDWARE_COMPATIBILITY_LEVELS,
  type EngineDevice,
  type HardwareCompatibilityLevel,
} from '../../engine/device-selection';
import { formatDim, formatShape, isStatic, type Dim, type SymbolRange } from '../../ir/symbolic';
import type { ShapeProfile } from '../segments';
import { resolveBuildConfig, type BuildSettings } from '../../engine/build-config';
import {
  BLOB_NAME,
  LEGACY_ENGINE_KIND,
  MANIFEST_ENTRY,
  PROFILES_SINCE,
  SOURCES_SINCE,
  PROGRAM_FORMAT,
  PROGRAM_FORMAT_VERSION,
  SHA256,
  TENSOR_PARALLEL_FORMAT,
  type ProgramFileContents,
  type ProgramManifest,
} from './manifest';
import { describe, Reader } from './reader';
import { checkEncoded } from './values';
import { sha256 } from './write';

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

/** An opened archive of a program file: its entries (inflated and CRC-checked when read) and its parsed manifest. */
export interface OpenedArchive {
  r: Reader;
  zip: ZipArchive;
  entry(name: string): Uint8Array | undefined;
  /** manifest.json, parsed but not checked. */
  json: unknown;
}

/**
 * Opens program-file bytes (single or tensor-parallel): the container and `manifest.json`'s
 * JSON, nothing else.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM`: not a zip, a damaged container, no readable manifest.
 */
export function openArchive(bytes: Uint8Array, label: string): OpenedArchive {
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
  try {
    return { r, zip, entry, json: parseJsonText(manifestBytes) };
  } catch (cause) {
    if (!(cause instanceof CodecError)) throw cause;
    throw new BadProgramError(`${label}: ${MANIFEST_ENTRY} is not readable JSON: ${cause.message}`, { cause });
  }
}

/**
 * Every blob `listed` names, each checked: a blob name (`isName`), used (`referenced`),
 * present, of the listed size and SHA-256; and no archive entry the manifest does not list.
 * Unlisted entries are refused before any blob is inflated.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the blob.
 */
export function readBlobs(a: OpenedArchive, listedJson: unknown, referenced: ReadonlySet<string>, isName: (name: string) => boolean): Map<string, Uint8Array> {
  const { zip, entry } = a;
  const r: Reader = a.r;
  const listed = r.object(listedJson, 'blobs');
  for (const e of zip.entries) {
    if (e.name !== MANIFEST_ENTRY && !Object.hasOwn(listed, e.name)) r.fail(`the archive holds "${e.name}", which the manifest does not list`);
  }
  const blobs = new Map<string, Uint8Array>();
  for (const [name, info] of Object.entries(listed)) {
    const what = `blob "${name}"`;
    if (!isName(name)) r.fail(`blobs lists ${describe(name)}, which is not a blob name`);
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
  return blobs;
}

/**
 * An input's `profiles`: a non-empty list of `{min, opt, max}`, each a shape of the input's
 * rank with min <= opt <= max per dim and a static dim's own size in all three, on an input
 * that has a run-time dim (a static input has nothing to profile).
 */
function readProfiles(r: Reader, x: unknown, shape: readonly Dim[], what: string): ShapeProfile[] {
  const list = r.array(x, what);
  if (list.length === 0) r.fail(`${what} is empty (an input without run-time dims has no profiles)`);
  if (shape.every(isStatic)) r.fail(`${what}: the input's shape ${formatShape(shape)} has no run-time dim to profile`);
  return list.map((p, k) => {
    const at = `${what}[${k}]`;
    const o = r.object(p, at, { required: ['min', 'opt', 'max'] });
    const dims = (key: 'min' | 'opt' | 'max'): number[] => {
      const a = r.array(o[key], `${at}.${key}`).map((d, i) => r.index(d, `${at}.${key}[${i}]`));
      if (a.length !== shape.length) r.fail(`${at}.${key} has ${a.length} dims, the input ${shape.length} ${formatShape(shape)}`);
      return a;
    };
    const profile = { min: dims('min'), opt: dims('opt'), max: dims('max') };
    shape.forEach((d, i) => {
      const [lo, opt, hi] = [profile.min[i]!, profile.opt[i]!, profile.max[i]!];
      if (isStatic(d) && (lo !== d || opt !== d || hi !== d)) r.fail(`${at}: dim ${i} is ${d}, but the profile gives min ${lo}, opt ${opt}, max ${hi}`);
      if (!(lo <= opt && opt <= hi)) r.fail(`${at}: dim ${i} (${formatDim(d)}) has min ${lo}, opt ${opt}, max ${hi}, not min <= opt <= max`);
    });
    return profile;
  });
}

/**
 * Across inputs: every input with profiles has the same number (one per optimization
 * profile of the program), and a dim that is a symbol stays inside the symbol's range.
 */
function checkProfiles(r: Reader, profiled: ReadonlyArray<{ what: string; shape: Dim[]; profiles: ShapeProfile[] }>, symbols: ReadonlyMap<string, SymbolRange>): void {
  const first = profiled[0];
  for (const { what, shape, profiles } of profiled) {
    if (profiles.length !== first!.profiles.length) r.fail(`${what} lists ${profiles.length} profiles, ${first!.what} ${first!.profiles.length}: every input has one per optimization profile`);
    shape.forEach((d, i) => {
      if (isStatic(d) || d.op !== 'sym') return;
      const range = symbols.get(d.name);
      if (range === undefined) return;
      profiles.forEach((p, k) => {
        if (p.min[i]! < range.min || p.max[i]! > range.max) {
          r.fail(`${what}[${k}]: dim ${i} (${d.name}) ranges over [${p.min[i]}, ${p.max[i]}], outside the symbol's range [${range.min}, ${range.max}]`);
        }
      });
    });
  }
}

/**
 * An engine segment's `source` (format 1.3): the blob of its Network and the build settings,
 * checked as compile settings are (resolveBuildConfig), so that a rebuild gets valid ones.
 */
function readSource(r: Reader, x: unknown, what: string, referenced: Set<string>): void {
  const o = r.object(x, what, { required: ['network', 'build'] });
  r.blobRef(o.network, `${what}.network`, referenced);
  const b = r.object(o.build, `${what}.build`, { required: ['precisions', 'hardwareCompatibility', 'optimizationLevel'], optional: ['workspaceBytes'] });
  try {
    resolveBuildConfig(b as BuildSettings, `${what}.build`);
  } catch (error) {
    r.fail((error as Error).message);
  }
}

/**
 * The partition report of a format 1.0 file calls its engine segments `"tensorrt"` too
 * (`report.segments[i].kind`): renamed in place to `"engine"`, as the manifest's segments are.
 * The report is generically encoded, but plain objects and strings encode as themselves.
 */
function renameLegacyReportKinds(report: unknown): void {
  const segments = typeof report === 'object' && report !== null ? (report as Record<string, unknown>).segments : undefined;
  if (!Array.isArray(segments)) return;
  for (const s of segments) {
    if (typeof s === 'object' && s !== null && (s as Record<string, unknown>).kind === LEGACY_ENGINE_KIND) (s as Record<string, unknown>).kind = 'engine';
  }
}

/**
 * Reads and checks a program file without deserializing anything: the container, the
 * format and its version, the manifest's structure, and every blob's SHA-256. What
 * `tensorrt-node inspect` shows, and the first half of loading.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the file and what is wrong.
 */
export function readProgramFile(bytes: Uint8Array, label = 'program buffer'): ProgramFileContents {
  const opened = openArchive(bytes, label);
  const { zip, entry, json } = opened;
  const r: Reader = opened.r;
  const m = r.object(json, MANIFEST_ENTRY);
  if (m.format === TENSOR_PARALLEL_FORMAT) {
    const ranks = Array.isArray(m.ranks) ? ` (${m.ranks.length} ranks)` : '';
    r.fail(`this is a tensor-parallel program file${ranks}, not a single program: load it with loadTensorParallelProgram()`, { format: TENSOR_PARALLEL_FORMAT });
  }
  if (m.format !== PROGRAM_FORMAT) r.fail(`${MANIFEST_ENTRY} says format ${describe(m.format)}, not "${PROGRAM_FORMAT}": not a tensorrt-node program file`);
  const lib = typeof m.library === 'object' && m.library !== null ? (m.library as Record<string, unknown>) : {};
  const version = checkFormatVersion(m.formatVersion, label, typeof lib.version === 'string' ? lib.version : undefined);
  // checkFormatVersion let only this major version through.
  const hasProfiles = version.minor >= PROFILES_SINCE.minor;
  const hasSources = version.minor >= SOURCES_SINCE.minor;

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
  const profiled: Array<{ what: string; shape: Dim[]; profiles: ShapeProfile[] }> = [];
  const readIO = (x: unknown, what: string, isInput: boolean): void => {
    if (r.object(x, what).profiles !== undefined) {
      if (!isInput) r.fail(`${what}.profiles: outputs have no optimization profiles`);
      if (!hasProfiles) r.fail(`${what}.profiles: format ${version.major}.${version.minor} files have no profiles (they came with format ${PROFILES_SINCE.major}.${PROFILES_SINCE.minor})`);
    }
    const o = r.object(x, what, { required: ['name', 'value', 'dtype', 'shape'], optional: ['extra', 'profiles'] });
    r.string(o.name, `${what}.name`);
    r.string(o.value, `${what}.value`);
    r.dtype(o.dtype, `${what}.dtype`);
    const shape = r.array(o.shape, `${what}.shape`).map((d, i) => r.dim(d, `${what}.shape[${i}]`));
    if (o.profiles !== undefined) profiled.push({ what: `${what}.profiles`, shape, profiles: readProfiles(r, o.profiles, shape, `${what}.profiles`) });
    if (o.extra !== undefined) readExtra(o.extra, `${what}.extra`);
  };
  r.array(m.inputs, 'inputs').forEach((x, i) => readIO(x, `inputs[${i}]`, true));
  r.array(m.outputs, 'outputs').forEach((x, i) => readIO(x, `outputs[${i}]`, false));
  const symbolRanges = new Map<string, SymbolRange>();
  r.array(m.symbols, 'symbols').forEach((x, i) => {
    const o = r.object(x, `symbols[${i}]`, { required: ['name', 'min', 'max'] });
    const name = r.string(o.name, `symbols[${i}].name`);
    if (symbolRanges.has(name)) r.fail(`symbol ${name} is declared twice`);
    symbolRanges.set(name, { min: r.bound(o.min, `symbols[${i}].min`), max: r.bound(o.max, `symbols[${i}].max`) });
  });
  checkProfiles(r, profiled, symbolRanges);
  r.array(m.segments, 'segments').forEach((x, i) => {
    const what = `segments[${i}]`;
    const o = r.object(x, what);
    // Format 1.0 named engine segments "tensorrt" whatever backend built them: the same segment.
    if (o.kind === LEGACY_ENGINE_KIND) o.kind = 'engine';
    if (o.kind === 'engine') {
      r.object(x, what, { required: ['kind', 'backend', 'engine', 'inputs', 'outputs', 'device'], optional: ['extra', 'source'] });
      const backend = r.string(o.backend, `${what}.backend`);
      r.blobRef(o.engine, `${what}.engine`, referenced);
      if (o.source !== undefined) {
        if (!hasSources) r.fail(`${what}.source: format ${version.major}.${version.minor} files have no engine sources (they came with format ${SOURCES_SINCE.major}.${SOURCES_SINCE.minor})`);
        readSource(r, o.source, `${what}.source`, referenced);
      }
      const device = readDevice(r, o.device, `${what}.device`);
      if (device.backend !== backend) r.fail(`${what}: its device record names the backend "${device.backend}", the segment "${backend}"`);
      if (!Object.hasOwn(backends, backend)) r.fail(`${what} uses the backend "${backend}", which "backends" does not list`);
    } else if (o.kind === 'fallback') {
      r.object(x, what, { required: ['kind', 'graph', 'inputs', 'outputs'], optional: ['extra'] });
      r.blobRef(o.graph, `${what}.graph`, referenced);
    } else r.fail(`${what}.kind is ${describe(o.kind)}, not "engine" or "fallback"`);
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
  renameLegacyReportKinds(m.report);
  if (m.extra !== undefined) readExtra(m.extra, 'extra');

  const blobs = readBlobs(opened, m.blobs, referenced, (name) => BLOB_NAME.test(name));
  return { manifest: m as unknown as ProgramManifest, blobs, label };
}

