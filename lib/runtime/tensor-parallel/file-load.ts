/**
 * Loading tensor-parallel program files: each rank's engines placed on a device of its own by
 * the selection rules of lib/engine/device-selection.ts (rank r may be given a device;
 * otherwise it gets the preferred compatible device no earlier rank took), then every rank
 * built as a single program is (lib/runtime/program-file/load.ts) and checked against the
 * others, and the ranks returned as one TensorParallelProgram.
 *
 * CPU engines (the reference and onnxruntime backends) need no device: every rank runs on
 * the CPU, as a freshly compiled tensor-parallel program does.
 */
import type { CudaDevice } from '../../devices';
import { InvalidArgumentError, NoCompatibleDeviceError } from '../../errors';
import { deserializeGraphFromBuffer } from '../../ir/serialize';
import { resolveLogger, type Logger } from '../../logger';
import { hasCollectives } from '../../lowering/sharding/split';
import type { DeviceSelection } from '../../engine/device-selection';
import { availableDevices, parseDeviceOption } from '../placement';
import { buildProgramParts, logSelections, readProgramFileBytes, selectProgramDevices, typedLoadErrors, type ProgramParts } from '../program-file/load';
import { Reader } from '../program-file/reader';
import { runLimits } from '../../engine/resource-limits';
import { collectiveOf } from './execute';
import { collectivesPolicyProblem, type CollectivesPolicy } from './collectives-policy';
import type { TensorParallelFileContents } from './file-manifest';
import { readTensorParallelFile } from './file-read';
import { TensorParallelProgram, TensorParallelRank } from './program';

/** Options of {@link loadTensorParallelProgram}. */
export interface LoadTensorParallelOptions {
  /** The device of each rank (index r: rank r; a CUDA ordinal or `"cuda:N"`), for GPU engines; ranks not given one get one by the selection rules. */
  devices?: ReadonlyArray<number | string | undefined>;
  /** The devices to choose from instead of asking the driver (`devices()`). */
  availableDevices?: readonly CudaDevice[];
  /** The largest tensor, in bytes, one run may allocate (default 4 GiB). */
  maxTensorBytes?: number;
  /** Receives the device chosen for each engine (info) and the selection's warnings (warn). */
  logger?: Logger;
  /** Where the all-reduces run: `auto` (default), `nccl` or `host` (as compile()'s `collectives`). */
  collectives?: CollectivesPolicy;
}

const LOAD_KEYS = ['devices', 'availableDevices', 'maxTensorBytes', 'logger', 'collectives'];

type Selections = Array<DeviceSelection<CudaDevice> | null>;

/**
 * A device for every GPU or DLA engine of every rank, each rank on devices no other rank
 * uses. Ranks with only CPU engines need none.
 *
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: a rank's engines fit no device
 *   (naming the rank), or every compatible device is taken by earlier ranks (fewer devices than ranks).
 */
export async function selectRankDevices(
  contents: TensorParallelFileContents,
  options: { devices?: ReadonlyArray<number | undefined>; availableDevices?: readonly CudaDevice[] } = {},
): Promise<Selections[]> {
  const needsDevice = contents.ranks.some((c) => c.manifest.segments.some((s) => s.kind === 'engine' && s.device.type !== 'cpu'));
  const list = needsDevice ? (options.availableDevices ?? (await availableDevices())) : [];
  const taken = new Map<number, number>();
  const out: Selections[] = [];
  for (const [r, rank] of contents.ranks.entries()) {
    const explicit = options.devices?.[r];
    if (explicit !== undefined && taken.has(explicit)) {
      throw new NoCompatibleDeviceError(`${contents.label}: rank ${r} was given device ${explicit}, which rank ${taken.get(explicit)} already uses: every rank needs a device of its own`, {
        details: { rank: r, device: explicit },
      });
    }
    const free = list.filter((d) => !taken.has(d.ordinal));
    let selections: Selections;
    try {
      selections = await selectProgramDevices(rank, { device: explicit, availableDevices: free });
      // A rank's engines share one device: the first engine's choice is asked of the others.
      const first = selections.find((s) => s !== null);
      if (first !== undefined && first !== null && explicit === undefined) selections = await selectProgramDevices(rank, { device: first.device.ordinal, availableDevices: free });
    } catch (error) {
      if (!(error instanceof NoCompatibleDeviceError) || taken.size === 0) throw error;
      // With no device left the inner refusal would say "found: no CUDA device", which reads as
      // if the machine had none: say what is left instead.
      const left = free.length === 0 ? `none of the ${list.length} device(s) found is left` : `the devices left do not fit: ${error.message}`;
      throw new NoCompatibleDeviceError(
        `${contents.label}: rank ${r} has no device: ${contents.ranks.length} ranks need ${contents.ranks.length} compatible devices, one per rank; ` +
          `devices ${[...taken.keys()].join(', ')} are taken by ranks ${[...new Set(taken.values())].join(', ')}, and ${left}`,
        { cause: error, details: { rank: r, ranks: contents.ranks.length, devices: list.map((d) => d.ordinal) } },
      );
    }
    for (const s of selections) if (s !== null) taken.set(s.device.ordinal, r);
    out.push(selections);
  }
  return out;
}

/** Checks what single program files cannot know: each rank's collectives are where the manifest says, and the ranks agree. */
function checkRanks(contents: TensorParallelFileContents, parts: readonly ProgramParts[]): void {
  const r: Reader = new Reader(contents.label);
  const sequences = parts.map((p, rank) => {
    const entry = contents.manifest.ranks[rank]!;
    const what = `rank ${rank} ("${entry.program}")`;
    const listed = new Set(entry.collectiveSegments);
    if (listed.size !== entry.collectiveSegments.length) r.fail(`${what}: collectiveSegments lists a segment twice`, { rank });
    const nodes: string[] = [];
    p.data.segments.forEach((seg, i) => {
      if (seg.kind !== 'fallback') {
        if (listed.has(i)) r.fail(`${what}: collectiveSegments lists segment ${i}, an engine, not an all-reduce`, { rank, segment: i });
        return;
      }
      const graph = deserializeGraphFromBuffer(seg.graph);
      const collective = collectiveOf(graph);
      if (listed.has(i)) {
        if (collective === undefined || seg.inputs.length !== 1 || seg.outputs.length !== 1) r.fail(`${what}: collectiveSegments lists segment ${i}, which is not one all-reduce`, { rank, segment: i });
        nodes.push(`${collective.node} (${collective.op})`);
      } else if (hasCollectives(graph)) {
        // Run as a plain fallback graph, an all-reduce is the identity: a silent wrong answer.
        r.fail(`${what}: segment ${i} holds an all-reduce that collectiveSegments does not list`, { rank, segment: i });
      }
    });
    for (const i of listed) if (i >= p.data.segments.length) r.fail(`${what}: collectiveSegments lists segment ${i}, but the rank has ${p.data.segments.length} segments`, { rank });
    return nodes;
  });
  const sig = (p: ProgramParts): string => JSON.stringify([p.data.inputs.map((x) => [x.name, x.dtype]), p.data.outputs.map((x) => [x.name, x.dtype])]);
  parts.forEach((p, rank) => {
    if (sig(p) !== sig(parts[0]!)) r.fail(`rank ${rank}'s inputs and outputs differ from rank 0's: the ranks are not one program`, { rank });
    if (JSON.stringify(sequences[rank]) !== JSON.stringify(sequences[0])) {
      r.fail(`rank ${rank}'s all-reduces (${sequences[rank]!.join(', ') || 'none'}) differ from rank 0's (${sequences[0]!.join(', ') || 'none'}): the ranks would not meet`, { rank });
    }
  });
}

/**
 * Loads a tensor-parallel program from its `.trtp` bytes (saved by `saveBuffer()`). Checks
 * everything (container, versions, checksums of the file and of every rank's program file,
 * devices) before deserializing any graph or engine.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM`: malformed, corrupt, truncated, a missing rank, a
 *   single program file (use loadProgram), or an unreadable format version; naming the rank and entry.
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: GPU engines and fewer compatible devices than ranks.
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: engines of a backend this tensorrt-node cannot use (the tensorrt backend without TensorRT, most often).
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad options.
 */
export async function loadTensorParallelProgramBuffer(bytes: Uint8Array, options: LoadTensorParallelOptions = {}, label = 'tensor-parallel program buffer'): Promise<TensorParallelProgram> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('load options must be an object');
  for (const k of Object.keys(options)) if (!LOAD_KEYS.includes(k)) throw new InvalidArgumentError(`load options: unknown key "${k}" (known: ${LOAD_KEYS.join(', ')})`);
  if (options.devices !== undefined && !Array.isArray(options.devices)) throw new InvalidArgumentError('load options: devices must be a list (index r: the device of rank r)');
  const devices = options.devices?.map((d, r) => parseDeviceOption(d, `load options: devices[${r}]`));
  const limits = runLimits(options.maxTensorBytes, 'load options');
  if (options.logger !== undefined && typeof options.logger !== 'function') throw new InvalidArgumentError('load options: logger must be a function (level, message)');
  if (options.availableDevices !== undefined && !Array.isArray(options.availableDevices)) {
    throw new InvalidArgumentError('load options: availableDevices must be a list of devices (as devices() returns them)');
  }
  const problem = collectivesPolicyProblem(options.collectives, 'load options: collectives');
  if (problem !== null) throw new InvalidArgumentError(problem);
  const contents = readTensorParallelFile(bytes, label);
  if (devices !== undefined && devices.length > contents.ranks.length) {
    throw new InvalidArgumentError(`load options: devices names ${devices.length} devices, but ${label} has ${contents.ranks.length} ranks`);
  }
  const selections = await selectRankDevices(contents, { devices, availableDevices: options.availableDevices });
  const log = resolveLogger(options.logger);
  const parts = contents.ranks.map((rank, r) => {
    logSelections(log, selections[r]!, rank.label);
    return typedLoadErrors(rank.label, () => buildProgramParts(rank, selections[r]!));
  });
  typedLoadErrors(label, () => checkRanks(contents, parts));
  const ranks = parts.map((p, r) => {
    const entry = contents.manifest.ranks[r]!;
    return new TensorParallelRank(r, p.data, p.report, p.backend, { type: 'gpu', gpuId: entry.targetDevice.gpuId }, [...entry.collectiveSegments].sort((a, b) => a - b));
  });
  return new TensorParallelProgram(ranks, contents.manifest.blocks, parts[0]!.symbols, limits, options.collectives);
}

/**
 * Loads a tensor-parallel program saved with `program.save(file)`. Like
 * {@link loadTensorParallelProgramBuffer}; errors name the file.
 *
 * @throws {BadProgramError} also when the file cannot be read (the cause says why).
 */
export async function loadTensorParallelProgram(file: string, options: LoadTensorParallelOptions = {}): Promise<TensorParallelProgram> {
  return loadTensorParallelProgramBuffer(await readProgramFileBytes(file, 'loadTensorParallelProgram'), options, `program file "${file}"`);
}
