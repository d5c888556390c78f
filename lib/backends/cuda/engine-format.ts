/**
 * The cuda backend's engine bytes: the container of lib/io/json-blobs.ts under its own magic
 * (`TRTNCUDA`, version 1). The JSON holds the serialized Network (lib/network/serialize.ts,
 * weights in the blob), the build configuration, the device the engine was built for (name
 * and compute capability) and one record per compiled kernel (source key, entry, sha256 of
 * the source, architecture, where its cubin lies in the blob). The plan itself is not
 * stored: it depends on the input dims, and is rebuilt per shape from the network at load
 * (cheap, pure TypeScript); the cubins are what is expensive, and they are all here.
 *
 * Loading checks everything; whatever is wrong is a BadModelError naming it.
 */
import { BadModelError } from '../../errors';
import { blobRange, CodecError, MagicError, unpackContainer, packContainer, type BlobTable } from '../../io/json-blobs';
import type { Network } from '../../network';
import { deserializeNetwork, serializeNetwork } from '../../network/serialize';
import { HARDWARE_COMPATIBILITY, PRECISIONS, type BuildConfig } from '../../engine/build-config';
import { checkNetwork } from '../../network/check';

export const CUDA_ENGINE_MAGIC = 'TRTNCUDA';
/**
 * 2: attentions are `attention` layers (their strided form in `strided`), no longer a field of
 * a matmul; a version-1 engine is refused by version and rebuilt from the model.
 */
export const CUDA_ENGINE_VERSION = 2;
export const CUDA_ENGINE_FORMAT = 'tensorrt-node cuda engine';

const LABEL = 'cuda engine';

/** The device an engine was built for. */
export interface EngineTarget {
  name: string;
  computeCapability: { major: number; minor: number };
}

/** A compiled kernel: the cubin of one kernel source for one architecture. */
export interface EngineKernel {
  key: string;
  entry: string;
  /** sha256 of the source text it was compiled from. */
  sourceHash: string;
  /** SM architecture (90 for sm_90). */
  arch: number;
  cubin: Uint8Array;
}

/** The build settings an engine keeps (the timing cache is a build input only). */
export type EngineConfig = Omit<BuildConfig, 'timingCache'>;

export interface CudaEngineContents {
  network: Network;
  config: EngineConfig;
  target: EngineTarget;
  kernels: EngineKernel[];
  /**
   * What the build's precision pass did (lib/network/precision.ts describePrecision), for
   * `inspect` and logs; the network above is already rewritten. Engines written before the
   * pass existed have none: they compute in the network's own dtypes ("fp32 (not recorded)").
   */
  precision?: string;
  /** The device memory the engine's plans take (recorded at build; engines built before have none). */
  memory?: EngineMemory;
}

/**
 * The device memory of an engine's plans, as the build lowered them at the profile shapes:
 * the weights (one buffer, shared by every plan of the engine) and the largest activation arena
 * (intermediates and layer scratch) over those shapes. Library workspaces (cuBLASLt, cuDNN) and
 * the input and output buffers come on top; they are chosen when a plan is prepared.
 */
export interface EngineMemory {
  weightBytes: number;
  arenaBytes: number;
  /** How many input-shape sets (min/opt/max of each profile, deduplicated) the arena figure covers. */
  shapeSets: number;
}

/** `weights 97.5 MiB, activations up to 12.3 MiB (3 profile shapes), plus library workspaces and I/O buffers`. */
export function describeEngineMemory(m: EngineMemory): string {
  const mib = (n: number): string => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);
  return `weights ${mib(m.weightBytes)}, activations up to ${mib(m.arenaBytes)} (${m.shapeSets} profile shape${m.shapeSets === 1 ? '' : 's'}), plus library workspaces and I/O buffers`;
}

interface KernelRecord {
  key: string;
  entry: string;
  sourceHash: string;
  arch: number;
  offset: number;
  byteLength: number;
}

/** Engine bytes of `contents` (the network is assumed checked). */
export function serializeCudaEngine(contents: CudaEngineContents): Uint8Array<ArrayBuffer> {
  const { json: network, blobs } = serializeNetwork(contents.network);
  const table = blobs as BlobTable<unknown>;
  const kernels: KernelRecord[] = contents.kernels.map((k) => ({
    key: k.key,
    entry: k.entry,
    sourceHash: k.sourceHash,
    arch: k.arch,
    offset: table.add(k, k.cubin, true),
    byteLength: k.cubin.byteLength,
  }));
  const { precisions, workspaceBytes, hardwareCompatibility, optimizationLevel } = contents.config;
  const config = { precisions: [...precisions], workspaceBytes: workspaceBytes ?? null, hardwareCompatibility, optimizationLevel };
  const target = { name: contents.target.name, computeCapability: { ...contents.target.computeCapability } };
  const precision = contents.precision === undefined ? {} : { precision: contents.precision };
  const memory = contents.memory === undefined ? {} : { memory: { ...contents.memory } };
  return packContainer(CUDA_ENGINE_MAGIC, CUDA_ENGINE_VERSION, { format: CUDA_ENGINE_FORMAT, network, config, target, kernels, ...precision, ...memory }, table);
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isCount = (x: unknown, min = 0): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= min;

function fail(message: string, cause?: unknown): never {
  throw new BadModelError(`${LABEL}: ${message}`, cause === undefined ? undefined : { cause });
}

function asBytes(engine: unknown): Uint8Array {
  if (!ArrayBuffer.isView(engine) || engine instanceof DataView || (engine as Uint8Array).BYTES_PER_ELEMENT !== 1) {
    fail(`engine bytes must be a Uint8Array, got ${engine === null ? 'null' : typeof engine === 'object' ? ((engine as object).constructor?.name ?? 'an object') : typeof engine}`);
  }
  const view = engine as Uint8Array;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function readConfig(x: unknown): EngineConfig {
  if (!isObject(x)) fail('the build configuration is missing');
  const { precisions, workspaceBytes, hardwareCompatibility, optimizationLevel } = x;
  if (!Array.isArray(precisions) || !precisions.includes('fp32') || !precisions.every((p) => (PRECISIONS as readonly unknown[]).includes(p))) {
    fail(`the build configuration has invalid precisions ${JSON.stringify(precisions)}`);
  }
  if (workspaceBytes !== null && !isCount(workspaceBytes, 1)) fail(`the build configuration has an invalid workspaceBytes ${JSON.stringify(workspaceBytes)}`);
  if (!(HARDWARE_COMPATIBILITY as readonly unknown[]).includes(hardwareCompatibility)) {
    fail(`the build configuration has an invalid hardwareCompatibility ${JSON.stringify(hardwareCompatibility)}`);
  }
  if (!isCount(optimizationLevel) || optimizationLevel > 5) fail(`the build configuration has an invalid optimizationLevel ${JSON.stringify(optimizationLevel)}`);
  return {
    precisions: precisions as BuildConfig['precisions'],
    workspaceBytes: workspaceBytes === null ? undefined : (workspaceBytes as number),
    hardwareCompatibility: hardwareCompatibility as BuildConfig['hardwareCompatibility'],
    optimizationLevel: optimizationLevel as number,
  };
}

function readTarget(x: unknown): EngineTarget {
  if (!isObject(x) || typeof x.name !== 'string' || x.name === '') fail('the build device is missing or has no name');
  const cc = x.computeCapability;
  if (!isObject(cc) || !isCount(cc.major, 1) || !isCount(cc.minor)) fail(`the build device "${x.name}" has an invalid compute capability ${JSON.stringify(cc)}`);
  return { name: x.name, computeCapability: { major: cc.major as number, minor: cc.minor as number } };
}

function readKernels(x: unknown, blob: Uint8Array): EngineKernel[] {
  if (!Array.isArray(x)) fail('the kernel list is missing');
  const seen = new Set<string>();
  return x.map((k: unknown, i) => {
    const what = `kernel ${i}`;
    if (!isObject(k) || typeof k.key !== 'string' || typeof k.entry !== 'string' || !/^[A-Za-z_]\w*$/.test(k.entry)) fail(`${what} is malformed (it needs a key and a C identifier as its entry)`);
    if (typeof k.sourceHash !== 'string' || !/^[0-9a-f]{64}$/.test(k.sourceHash)) fail(`${what} ("${k.key}") has no sha256 of its source`);
    if (!isCount(k.arch, 10)) fail(`${what} ("${k.key}") has an invalid architecture ${JSON.stringify(k.arch)}`);
    if (!isCount(k.byteLength, 1)) fail(`${what} ("${k.key}") has an invalid cubin length ${JSON.stringify(k.byteLength)}`);
    const id = `${k.key}@${k.arch}`;
    if (seen.has(id)) fail(`${what}: the kernel "${k.key}" for sm_${k.arch} appears twice`);
    seen.add(id);
    let offset: number;
    try {
      offset = blobRange(k.offset, k.byteLength, blob.byteLength, `${what} ("${k.key}")'s cubin`);
    } catch (e) {
      return fail((e as Error).message, e);
    }
    return { key: k.key, entry: k.entry, sourceHash: k.sourceHash, arch: k.arch, cubin: blob.subarray(offset, offset + k.byteLength) };
  });
}

/** The engine's description (JSON) without reading its network, or null for bytes that are not a readable cuda engine. */
function engineDescription(engine: Uint8Array): Record<string, unknown> | null {
  try {
    const json = unpackContainer(asBytes(engine), CUDA_ENGINE_MAGIC, [CUDA_ENGINE_VERSION]).json as Record<string, unknown>;
    return isObject(json) && json.format === CUDA_ENGINE_FORMAT ? json : null;
  } catch (e) {
    if (e instanceof CodecError || e instanceof BadModelError) return null;
    throw e;
  }
}

/**
 * The precision summary of engine bytes without reading the network (for `inspect`): the
 * string the build recorded, 'fp32 (not recorded)' for an engine written before the
 * precision pass, or null for bytes that are not a readable cuda engine.
 */
export function cudaEnginePrecision(engine: Uint8Array): string | null {
  const json = engineDescription(engine);
  if (json === null) return null;
  return typeof json.precision === 'string' ? json.precision : 'fp32 (not recorded)';
}

/** The device memory the build recorded (for `inspect`), or null: not recorded (an older engine), malformed, or not a cuda engine. */
export function cudaEngineMemory(engine: Uint8Array): EngineMemory | null {
  const json = engineDescription(engine);
  return json === null ? null : (memoryOf(json.memory) ?? null);
}

/** A recorded EngineMemory; undefined when absent or malformed. */
function memoryOf(x: unknown): EngineMemory | undefined {
  if (!isObject(x)) return undefined;
  const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  if (!count(x.weightBytes) || !count(x.arenaBytes) || !count(x.shapeSets)) return undefined;
  return { weightBytes: x.weightBytes, arenaBytes: x.arenaBytes, shapeSets: x.shapeSets };
}

/** Reads engine bytes (zero-copy: weights and cubins view them). @throws {BadModelError} naming what is wrong. */
export function deserializeCudaEngine(engine: Uint8Array): CudaEngineContents {
  let container;
  try {
    container = unpackContainer(asBytes(engine), CUDA_ENGINE_MAGIC, [CUDA_ENGINE_VERSION]);
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    const message =
      e instanceof MagicError
        ? `not a cuda engine: the bytes start with ${JSON.stringify(e.found)}, expected ${JSON.stringify(CUDA_ENGINE_MAGIC)} (each backend loads only its own engines)`
        : e.message;
    return fail(message, e);
  }
  const json = container.json;
  if (!isObject(json) || json.format !== CUDA_ENGINE_FORMAT) fail(`the description is not a cuda engine (format ${JSON.stringify(isObject(json) ? json.format : json)})`);
  const config = readConfig(json.config);
  const target = readTarget(json.target);
  const kernels = readKernels(json.kernels, container.blob);
  const network = deserializeNetwork(json.network, container.blob, LABEL, checkNetwork);
  if (json.precision !== undefined && typeof json.precision !== 'string') fail(`the precision summary is not a string (${JSON.stringify(json.precision)})`);
  const memory = memoryOf(json.memory);
  if (json.memory !== undefined && memory === undefined) fail(`the memory record is not {weightBytes, arenaBytes, shapeSets} of byte counts (${JSON.stringify(json.memory)})`);
  return { network, config, target, kernels, ...(json.precision === undefined ? {} : { precision: json.precision }), ...(memory === undefined ? {} : { memory }) };
}
