/**
 * Loading program files: device selection for every GPU or DLA engine (against `devices()`),
 * then the Program, deserializing (and so validating) every graph and engine and checking
 * the program's wiring. A missing device is a NoCompatibleDeviceError (`E_NO_COMPATIBLE_DEVICE`).
 */
import * as fs from 'node:fs';

import { getBackend, isBackendName, type BackendName } from '../../backends';
import { resolveBuildConfig, type BuildSettings } from '../../engine/build-config';
import type { CudaDevice } from '../../devices';
import { BadProgramError, InternalError, InvalidArgumentError, NoCompatibleDeviceError, TensorRTMissingError, TensorRTNodeError } from '../../errors';
import { defineEntry } from '../../io/json-blobs';
import { deserializeGraphFromBuffer } from '../../ir/serialize';
import { formatShape, type SymbolRange } from '../../ir/symbolic';
import { resolveLogger, type Logger } from '../../logger';
import type { PartitionReport } from '../../partitioning/partition';
import { currentDeviceAmong } from '../../gpu/current-device';
import { deviceTargetOf, selectDevice, type DeviceSelection } from '../../engine/device-selection';
import { availableDevices, parseDeviceOption } from '../placement';
import { Program, warmStarted } from '../program';
import { runLimits, type RunLimits } from '../../engine/resource-limits';
import type { EngineSegment, ProgramData, ProgramIO, ProgramSegment } from '../segments';
import {
  KNOWN_DATA_KEYS,
  KNOWN_ENGINE_KEYS,
  KNOWN_FALLBACK_KEYS,
  KNOWN_IO_KEYS,
  type EncodedValue,
  type ManifestEngineSegment,
  type ManifestIO,
  type ProgramFileContents,
} from './manifest';
import { readProgramFile } from './read';
import { prepareEngines, type RebuildPolicy } from './rebuild';
import { Reader } from './reader';
import { decodeValue, tensorFromBytes } from './values';

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
  /** Receives the device chosen for each engine (info), the selection's warnings and each rebuild (warn). */
  logger?: Logger;
  /**
   * The backend the engines run on. `auto` (default): each engine on the backend that built it
   * where that can run here, else on the best backend present (a rebuild, see `rebuild`). A
   * backend name: every engine of another backend is rebuilt for that one.
   */
  backend?: BackendName | 'auto';
  /**
   * What to do with an engine that cannot run here (its backend missing or unusable, no device
   * for it) or that `backend` asks to replace: `auto` (default) builds it again from the Network
   * the file keeps (program format 1.3), with a warning naming both backends and the time it
   * took; `never` refuses the load, typed (E_TENSORRT_MISSING, E_BACKEND_UNAVAILABLE,
   * E_NO_COMPATIBLE_DEVICE), instead of failing at the first run.
   */
  rebuild?: RebuildPolicy;
}

const LOAD_KEYS = ['device', 'availableDevices', 'maxTensorBytes', 'logger', 'backend', 'rebuild'];

/** Tells `log` where each engine runs and what the selection warned about (another model of the same compute capability...). */
export function logSelections(log: Logger, selections: ReadonlyArray<DeviceSelection<CudaDevice> | null>, label: string): void {
  selections.forEach((sel, i) => {
    if (sel === null) return;
    log('info', `${label}: segment ${i} runs on device ${sel.device.ordinal} "${sel.device.name}" (${sel.reason})`);
    for (const w of sel.warnings) log('warn', `${label}: segment ${i}: ${w}`);
  });
}

/**
 * Selects a device for every GPU or DLA engine of a checked file (CPU engines need none).
 *
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE` with the message docs/program-format.md shows.
 */
export async function selectProgramDevices(
  contents: ProgramFileContents,
  options: { device?: number; availableDevices?: readonly CudaDevice[]; listDevices?: () => Promise<readonly CudaDevice[]> } = {},
): Promise<Array<DeviceSelection<CudaDevice> | null>> {
  const targets = contents.manifest.segments.map((s) => (s.kind === 'engine' ? deviceTargetOf(s.device) : null));
  if (targets.every((t) => t === null)) return targets.map(() => null);
  const list = options.availableDevices ?? (await (options.listDevices ?? availableDevices)());
  const current = currentDeviceAmong(list);
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

/** What a checked file holds once deserialized: the parts a Program is made of. */
export interface ProgramParts {
  data: ProgramData;
  report: PartitionReport;
  backend: string;
  symbols: Map<string, SymbolRange>;
}

/**
 * Rebuilds ProgramData from checked contents, deserializing (and so validating) every graph
 * and engine (the tensor-parallel loader builds each rank with it).
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the segment, entry and cause.
 */
export function buildProgramParts(contents: ProgramFileContents, selections: ReadonlyArray<DeviceSelection<CudaDevice> | null>): ProgramParts {
  const { manifest: m, blobs, label } = contents;
  const r: Reader = new Reader(label);
  const copy = (name: string): Uint8Array => new Uint8Array(blobs.get(name)!);
  const withExtra = <T extends object>(target: T, extra: Record<string, EncodedValue> | undefined, known: Set<string>, what: string): T => {
    for (const [k, v] of Object.entries(extra ?? {})) {
      if (known.has(k)) r.fail(`${what}.extra repeats the field "${k}"`);
      defineEntry(target as Record<string, unknown>, k, decodeValue(r, v, `${what}.extra.${k}`, blobs));
    }
    return target;
  };
  const io = (x: ManifestIO, what: string): ProgramIO => {
    const entry: ProgramIO = { name: x.name, value: x.value, dtype: x.dtype, shape: x.shape.map((d, i) => r.dim(d, `${what}.shape[${i}]`)) };
    // readProgramFile checked them; files before format 1.2 have none.
    if (x.profiles !== undefined) entry.profiles = x.profiles.map((p) => ({ min: [...p.min], opt: [...p.opt], max: [...p.max] }));
    return withExtra(entry, x.extra, KNOWN_IO_KEYS, what);
  };
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
    if (s.kind === 'engine') {
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
      const seg: EngineSegment = { kind: 'engine', backend: s.backend, engine, inputs: [...s.inputs], outputs: [...s.outputs], device: structuredClone(s.device) };
      if (s.source !== undefined) {
        const build = resolveBuildConfig(s.source.build as BuildSettings, `${label}: ${what}.source.build`);
        seg.source = { network: copy(s.source.network), build: { precisions: build.precisions, workspaceBytes: build.workspaceBytes, hardwareCompatibility: build.hardwareCompatibility, optimizationLevel: build.optimizationLevel } };
      }
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
  // Reports of format 1.0 files do not name the backend that built their engine segments: the program's.
  if (rep.backend === undefined) report.backend = m.backend;
  return { data, report, backend: m.backend, symbols };
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
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: engines of a backend this tensorrt-node cannot use (the tensorrt backend without TensorRT, most often).
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad options.
 */
export async function loadProgramBuffer(bytes: Uint8Array, options: LoadProgramOptions = {}, label = 'program buffer'): Promise<Program> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('load options must be an object');
  for (const k of Object.keys(options)) if (!LOAD_KEYS.includes(k)) throw new InvalidArgumentError(`load options: unknown key "${k}" (known: ${LOAD_KEYS.join(', ')})`);
  const device = parseDeviceOption(options.device, 'load options');
  const limits = runLimits(options.maxTensorBytes, 'load options');
  if (options.logger !== undefined && typeof options.logger !== 'function') throw new InvalidArgumentError('load options: logger must be a function (level, message)');
  if (options.availableDevices !== undefined && !Array.isArray(options.availableDevices)) {
    throw new InvalidArgumentError('load options: availableDevices must be a list of devices (as devices() returns them)');
  }
  const wanted = options.backend ?? 'auto';
  if (wanted !== 'auto' && !isBackendName(wanted)) throw new InvalidArgumentError(`load options: backend must be "auto" or a backend name, got ${JSON.stringify(wanted)}`);
  const rebuild = options.rebuild ?? 'auto';
  if (rebuild !== 'auto' && rebuild !== 'never') throw new InvalidArgumentError(`load options: rebuild must be "auto" or "never", got ${JSON.stringify(rebuild)}`);
  const contents = readProgramFile(bytes, label);
  const log = resolveLogger(options.logger);
  let listed: Promise<readonly CudaDevice[]> | undefined;
  const deviceList = (): Promise<readonly CudaDevice[]> => (listed ??= options.availableDevices !== undefined ? Promise.resolve(options.availableDevices) : availableDevices());
  const rebuilt = await prepareEngines(contents, { backend: wanted, rebuild, device, devices: deviceList, log });
  // The list the rebuild check may already have asked the driver for (asked once, and only for GPU engines).
  const selections = await selectProgramDevices(contents, { device, listDevices: deviceList });
  logSelections(log, selections, label);
  const { data, report, backend, symbols } = typedLoadErrors(label, () => buildProgramParts(contents, selections));
  // The report names the backend of the engine segments: after a rebuild, the new one.
  if (rebuilt.length > 0) report.backend = backend;
  return warmStarted(new Program(data, report, backend, symbols, limits, [], log));
}

/**
 * `build()`, with every error that is not one of ours made an E_INTERNAL naming `label`:
 * every malformed-file case is refused as E_BAD_PROGRAM where it is found; anything else is
 * a bug of ours, and must look like one (the fuzz harness counts E_INTERNAL as a finding).
 */
export function typedLoadErrors<T>(label: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof TensorRTNodeError) throw error;
    throw new InternalError(`${label}: loading failed unexpectedly: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Loads a program saved with `program.save(file)`. Like {@link loadProgramBuffer}; errors
 * name the file.
 *
 * @throws {BadProgramError} also when the file cannot be read (the cause says why).
 */
export async function loadProgram(file: string, options: LoadProgramOptions = {}): Promise<Program> {
  return loadProgramBuffer(await readProgramFileBytes(file, 'loadProgram'), options, `program file "${file}"`);
}

/**
 * The bytes of the program file `file` (`caller` names the function in a bad-path message).
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` when the file cannot be read (the cause says why).
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` when `file` is not a non-empty string.
 */
export async function readProgramFileBytes(file: string, caller: string): Promise<Uint8Array> {
  if (typeof file !== 'string' || file.length === 0) throw new InvalidArgumentError(`${caller}: the path must be a non-empty string`);
  try {
    return await fs.promises.readFile(file);
  } catch (cause) {
    throw new BadProgramError(`program file "${file}" cannot be read: ${(cause as Error).message}`, { cause, details: { file } });
  }
}

