/**
 * The on-disk cache of compiled kernels. A cubin is stored under a sha256 key of everything
 * that decides its bytes: the source, the kernel name, the architecture, the NVRTC options,
 * the NVRTC version and this cache's format. Entries are written to a temporary file and
 * renamed into place (atomic on one filesystem, so concurrent processes never see half a
 * file); each entry starts with the sha256 of its cubin, and an entry whose checksum fails is
 * ignored and rewritten.
 *
 * Where: `TENSORRT_NODE_CACHE_DIR`, else `$XDG_CACHE_HOME/tensorrt-node`, else
 * `~/.cache/tensorrt-node`; kernels go in its `kernels/` folder.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { resolveLogger, type Logger } from '../logger';

/** Bumped when the entry layout or the key's recipe changes. */
const CACHE_FORMAT = 1;
const CHECKSUM_BYTES = 32;

export interface CompileRequest {
  source: string;
  /** Program name NVRTC reports in its log (e.g. `axpb.cu`). */
  name: string;
  /** SM architecture as a number: 90 for sm_90. */
  arch: number;
  options?: readonly string[];
}

export type CompileFunction = (request: CompileRequest) => Promise<{ cubin: Uint8Array; log: string }>;

export interface KernelCacheOptions {
  /** The cache root (default: {@link defaultCacheDir}); `null` disables the cache. */
  dir?: string | null;
  /** NVRTC's version (1000 * major + 10 * minor), part of the key. */
  nvrtcVersion: number;
  compile: CompileFunction;
  logger?: Logger;
}

export interface CompiledKernel {
  cubin: Uint8Array;
  /** The compiler's log ('' when taken from the cache). */
  log: string;
  cached: boolean;
  key: string;
}

/** The cache root for `env` (see the module comment). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TENSORRT_NODE_CACHE_DIR) return env.TENSORRT_NODE_CACHE_DIR;
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'tensorrt-node');
}

/** The cache key of a compile: hex sha256. */
export function kernelCacheKey(request: CompileRequest, nvrtcVersion: number): string {
  const hash = createHash('sha256');
  // Length-prefixed fields: no two different requests serialize to the same bytes.
  const fields = [
    `format=${CACHE_FORMAT}`,
    `nvrtc=${nvrtcVersion}`,
    `arch=sm_${request.arch}`,
    `name=${request.name}`,
    ...(request.options ?? []).map((o) => `option=${o}`),
    `source=${request.source}`,
  ];
  for (const field of fields) {
    const bytes = Buffer.from(field, 'utf8');
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

function entryPath(dir: string, key: string): string {
  return path.join(dir, 'kernels', key.slice(0, 2), `${key}.cubin`);
}

function readEntry(file: string): Uint8Array | null {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch {
    return null;
  }
  if (data.length <= CHECKSUM_BYTES) return null;
  const cubin = data.subarray(CHECKSUM_BYTES);
  const sum = createHash('sha256').update(cubin).digest();
  return sum.equals(data.subarray(0, CHECKSUM_BYTES)) ? new Uint8Array(cubin) : null;
}

function writeEntry(file: string, cubin: Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const sum = createHash('sha256').update(cubin).digest();
    fs.writeFileSync(temp, Buffer.concat([sum, Buffer.from(cubin.buffer, cubin.byteOffset, cubin.byteLength)]));
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Returns the cubin for `request` from the cache, or compiles it with `options.compile` and
 * stores it. A cache that cannot be read or written only costs a compile (logged at debug).
 */
export async function compileWithCache(request: CompileRequest, options: KernelCacheOptions): Promise<CompiledKernel> {
  const log = resolveLogger(options.logger);
  const key = kernelCacheKey(request, options.nvrtcVersion);
  const dir = options.dir === undefined ? defaultCacheDir() : options.dir;
  const file = dir === null ? null : entryPath(dir, key);
  if (file !== null) {
    const hit = readEntry(file);
    if (hit !== null) return { cubin: hit, log: '', cached: true, key };
    if (fs.existsSync(file)) log('debug', `kernel cache entry ${file} is corrupt; recompiling ${request.name}`);
  }
  const compiled = await options.compile(request);
  if (file !== null) {
    try {
      writeEntry(file, compiled.cubin);
    } catch (error) {
      log('debug', `could not write kernel cache entry ${file}: ${(error as Error).message}`);
    }
  }
  return { cubin: compiled.cubin, log: compiled.log, cached: false, key };
}
