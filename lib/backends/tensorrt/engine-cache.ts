/**
 * The engine cache: built engines on disk, keyed by what decides the plan — the replay
 * program (the network and every build setting, the timing cache excluded), the TensorRT
 * version and the device (name, compute capability) — so a second compile of the same model
 * on the same machine skips the TensorRT build. It lives in TENSORRT_NODE_ENGINE_CACHE when
 * that is set (no cache otherwise); the timing cache of builds without an explicit
 * `timingCache` setting is kept beside it (`timing.cache`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineDevice } from '../../engine/device-selection';

export { ENGINE_CACHE_ENV, engineCacheDir } from '../../engine/cache-dir';

/** The key of an engine: hex SHA-256 of program, TensorRT version and device identity. */
export function engineCacheKey(program: Uint8Array, libraryVersion: number, device: EngineDevice): string {
  const h = createHash('sha256');
  h.update(program);
  const cc = device.computeCapability === null ? 'none' : `${device.computeCapability.major}.${device.computeCapability.minor}`;
  h.update(JSON.stringify({ libraryVersion, device: device.deviceName, type: device.type, cc, dla: device.dlaCore }));
  return h.digest('hex');
}

const entry = (dir: string, key: string): string => path.join(dir, `${key}.trtengine`);

/** The cached engine bytes, or null. */
export function readCachedEngine(dir: string, key: string): Uint8Array | null {
  try {
    return new Uint8Array(fs.readFileSync(entry(dir, key)));
  } catch {
    return null;
  }
}

/** Stores engine bytes atomically (a temp file renamed), so a concurrent reader never sees half a file. */
export function writeCachedEngine(dir: string, key: string, bytes: Uint8Array): void {
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${entry(dir, key)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, entry(dir, key));
}

/** Where the timing cache of a cache directory is kept. */
export const timingCachePath = (dir: string): string => path.join(dir, 'timing.cache');
