/**
 * The cuda backend's timing cache: the cuBLASLt algorithm each timed GEMM problem chose, kept in
 * a JSON file so that the next process (a service restart, a second model with the same layer
 * shapes) takes the choice instead of timing the candidates again, as TensorRT's timing cache
 * does for its tactics.
 *
 * Choices are scoped by what makes them valid: the device's name and compute capability and the
 * cuBLASLt version (cuBLASLt documents its algorithm struct as serializable for reuse with the
 * same library version). A file may hold several scopes; a process reads and writes only its
 * own and keeps the others. A choice the library no longer offers among a problem's candidates
 * is ignored and the problem timed again (native/cublaslt), so a stale entry costs time, never
 * a wrong answer.
 *
 * Where the file is (timingCacheFile): the runner's `timingCache` option, else
 * TENSORRT_NODE_TIMING_CACHE, else `cuda-timing.json` in TENSORRT_NODE_ENGINE_CACHE's
 * directory, else nowhere (choices then live for the process only).
 *
 * The timing itself may be bounded per plan (tuningBudgetFromEnv, or the runner's option): the time a plan's creation may
 * spend on it, beyond which its GEMMs keep the heuristic's first candidate.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentError } from '../../../errors';
import type { NativeTunedGemm } from '../../../gpu/binding';
import { engineCacheDir } from '../../../engine/cache-dir';

export const TIMING_CACHE_ENV = 'TENSORRT_NODE_TIMING_CACHE';
export const TIMING_CACHE_FORMAT = 'tensorrt-node cuda timing cache';
export const TIMING_CACHE_VERSION = 1;
/** Bytes of one cuBLASLt algorithm (cublasLtMatmulAlgo_t: 8 × uint64). */
export const ALGORITHM_BYTES = 64;
/** A larger file is refused rather than parsed (a few thousand problems take well under 1 MiB). */
export const MAX_TIMING_CACHE_BYTES = 64 << 20;
const MAX_PROBLEM_CHARS = 1024;

/** What a set of choices is valid for. */
export interface TimingScope {
  /** The device's name, as the driver reports it ("NVIDIA H200"). */
  device: string;
  /** "major.minor". */
  computeCapability: string;
  /** cublasLtGetVersion(), e.g. 130100. */
  cublasLt: number;
}

export interface TimingScopeEntries extends TimingScope {
  /** problem (native/cublaslt's text key) → the chosen algorithm, base64. */
  gemms: Record<string, string>;
}

export interface TimingCacheContents {
  format: typeof TIMING_CACHE_FORMAT;
  version: typeof TIMING_CACHE_VERSION;
  scopes: TimingScopeEntries[];
}

export const emptyTimingCache = (): TimingCacheContents => ({ format: TIMING_CACHE_FORMAT, version: TIMING_CACHE_VERSION, scopes: [] });

/** The timing cache file in effect, or null for none (see the module comment for the order). */
export function timingCacheFile(option: string | null | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  if (option === null) return null;
  if (option !== undefined) {
    if (typeof option !== 'string' || option === '') throw new InvalidArgumentError(`timingCache must be a file path or null, got ${JSON.stringify(option)}`);
    return option;
  }
  const given = env[TIMING_CACHE_ENV];
  if (given !== undefined && given !== '') return given;
  const dir = engineCacheDir(env);
  return dir === null ? null : path.join(dir, 'cuda-timing.json');
}

export const TUNING_BUDGET_ENV = 'TENSORRT_NODE_TUNING_BUDGET_MS';

/**
 * TENSORRT_NODE_TUNING_BUDGET_MS: the most ms one plan's creation may spend timing GEMM
 * candidates, or undefined (no limit) when it is unset. Choices the process or the timing cache
 * already holds cost nothing and are taken whatever the budget. (A budget given as an option is
 * checked where plans are made: GpuPlan.create.)
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the variable: not a non-negative integer.
 */
export function tuningBudgetFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const given = env[TUNING_BUDGET_ENV];
  if (given === undefined || given === '') return undefined;
  if (!/^\d+$/.test(given) || !Number.isSafeInteger(Number(given))) {
    throw new InvalidArgumentError(`${TUNING_BUDGET_ENV} must be a non-negative integer (milliseconds), got ${JSON.stringify(given)}`, { details: { envVar: TUNING_BUDGET_ENV, value: given } });
  }
  return Number(given);
}

const sameScope = (a: TimingScope, b: TimingScope): boolean => a.device === b.device && a.computeCapability === b.computeCapability && a.cublasLt === b.cublasLt;

const describeScope = (s: TimingScope): string => `${s.device} (compute capability ${s.computeCapability}, cuBLASLt ${s.cublasLt})`;

/**
 * Parses and checks a timing cache file's text.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the file and what is wrong in it.
 */
export function parseTimingCache(text: string, file: string): TimingCacheContents {
  const bad = (what: string): never => {
    throw new InvalidArgumentError(`timing cache ${file}: ${what}; delete the file (it is rebuilt by timing) or point ${TIMING_CACHE_ENV} elsewhere`, { details: { file } });
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return bad(`not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('not a JSON object');
  const o = value as Record<string, unknown>;
  if (o.format !== TIMING_CACHE_FORMAT) return bad(`its format is ${JSON.stringify(o.format)}, not "${TIMING_CACHE_FORMAT}"`);
  if (o.version !== TIMING_CACHE_VERSION) return bad(`it is version ${JSON.stringify(o.version)}; this tensorrt-node reads version ${TIMING_CACHE_VERSION}`);
  if (!Array.isArray(o.scopes)) return bad('"scopes" is not an array');
  const scopes = o.scopes.map((raw: unknown, i): TimingScopeEntries => {
    const at = `scopes[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad(`${at} is not an object`);
    const s = raw as Record<string, unknown>;
    if (typeof s.device !== 'string' || s.device === '') return bad(`${at}.device is not a device name`);
    if (typeof s.computeCapability !== 'string' || !/^\d+\.\d+$/.test(s.computeCapability)) return bad(`${at}.computeCapability is not "major.minor"`);
    if (typeof s.cublasLt !== 'number' || !Number.isInteger(s.cublasLt) || s.cublasLt <= 0) return bad(`${at}.cublasLt is not a library version`);
    if (typeof s.gemms !== 'object' || s.gemms === null || Array.isArray(s.gemms)) return bad(`${at}.gemms is not an object`);
    const gemms: Record<string, string> = {};
    for (const [problem, algo] of Object.entries(s.gemms as Record<string, unknown>)) {
      if (problem === '' || problem.length > MAX_PROBLEM_CHARS) return bad(`${at}.gemms has a problem key of ${problem.length} characters`);
      if (typeof algo !== 'string' || decodeAlgorithm(algo) === null) return bad(`${at}.gemms["${problem}"] is not ${ALGORITHM_BYTES} bytes of base64`);
      gemms[problem] = algo;
    }
    return { device: s.device, computeCapability: s.computeCapability, cublasLt: s.cublasLt, gemms };
  });
  for (let i = 0; i < scopes.length; i++) {
    for (let j = 0; j < i; j++) if (sameScope(scopes[i]!, scopes[j]!)) bad(`scopes[${j}] and scopes[${i}] are both ${describeScope(scopes[i]!)}`);
  }
  return { format: TIMING_CACHE_FORMAT, version: TIMING_CACHE_VERSION, scopes };
}

function decodeAlgorithm(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.byteLength === ALGORITHM_BYTES ? new Uint8Array(bytes) : null;
}

/** The choices of `scope`, as the native seeding takes them. */
export function gemmsOf(cache: TimingCacheContents, scope: TimingScope): NativeTunedGemm[] {
  const found = cache.scopes.find((s) => sameScope(s, scope));
  if (found === undefined) return [];
  return Object.entries(found.gemms).map(([problem, algo]) => ({ problem, algo: decodeAlgorithm(algo)! }));
}

/** `cache` with `entries` added to `scope` (an entry already there is replaced); `added`: entries that were new or changed. */
export function withGemms(cache: TimingCacheContents, scope: TimingScope, entries: readonly NativeTunedGemm[]): { cache: TimingCacheContents; added: number } {
  const scopes = cache.scopes.map((s) => ({ ...s, gemms: { ...s.gemms } }));
  let target = scopes.find((s) => sameScope(s, scope));
  if (target === undefined) {
    target = { device: scope.device, computeCapability: scope.computeCapability, cublasLt: scope.cublasLt, gemms: {} };
    scopes.push(target);
  }
  let added = 0;
  for (const e of entries) {
    if (e.algo.byteLength !== ALGORITHM_BYTES) throw new InvalidArgumentError(`timing cache: the algorithm of "${e.problem}" is ${e.algo.byteLength} bytes, not ${ALGORITHM_BYTES}`);
    const text = Buffer.from(e.algo.buffer, e.algo.byteOffset, e.algo.byteLength).toString('base64');
    if (target.gemms[e.problem] !== text) added++;
    target.gemms[e.problem] = text;
  }
  return { cache: { format: TIMING_CACHE_FORMAT, version: TIMING_CACHE_VERSION, scopes }, added };
}

/** Stable text: scopes and problems sorted, so that a file diffs and hashes the same for the same choices. */
export function serializeTimingCache(cache: TimingCacheContents): string {
  const scopes = [...cache.scopes]
    .sort((a, b) => describeScope(a).localeCompare(describeScope(b)))
    .map((s) => ({ device: s.device, computeCapability: s.computeCapability, cublasLt: s.cublasLt, gemms: Object.fromEntries(Object.entries(s.gemms).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }));
  return `${JSON.stringify({ format: TIMING_CACHE_FORMAT, version: TIMING_CACHE_VERSION, scopes }, null, 1)}\n`;
}

/**
 * The file's contents; an absent file is an empty cache.
 *
 * @throws {InvalidArgumentError} the file cannot be read, is too large or is malformed.
 */
export function readTimingCache(file: string): TimingCacheContents {
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_TIMING_CACHE_BYTES) throw new InvalidArgumentError(`timing cache ${file} is ${size} bytes, more than the ${MAX_TIMING_CACHE_BYTES} a timing cache may have`, { details: { file } });
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyTimingCache();
    throw new InvalidArgumentError(`timing cache ${file}: cannot read it: ${(error as Error).message}`, { details: { file }, cause: error });
  }
  return parseTimingCache(text, file);
}

/**
 * Adds `entries` to the file's `scope` and writes it back atomically (a temp file renamed), read
 * again just before so that choices another process wrote meanwhile are kept (there is no lock:
 * two writers in the same instant may drop each other's newest entries, which only costs their
 * timing again). Returns how many entries were new or changed (0: the file was not written).
 *
 * @throws {InvalidArgumentError} the file cannot be read or written, or is malformed.
 */
export function addToTimingCache(file: string, scope: TimingScope, entries: readonly NativeTunedGemm[]): number {
  const { cache, added } = withGemms(readTimingCache(file), scope, entries);
  if (added === 0) return 0;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, serializeTimingCache(cache));
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw new InvalidArgumentError(`timing cache ${file}: cannot write it: ${(error as Error).message}`, { details: { file }, cause: error });
  }
  return added;
}
