/** The engine cache key: what decides a plan changes the key, and nothing else does. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { engineCacheKey, readCachedEngine, writeCachedEngine } from '../../../lib/backends/tensorrt/engine-cache';
import type { EngineDevice } from '../../../lib/engine/device-selection';

const H200: EngineDevice = {
  type: 'gpu', gpuId: 0, dlaCore: null, allowGpuFallback: false, computeCapability: { major: 9, minor: 0 }, deviceName: 'NVIDIA H200',
  hardwareCompatibility: 'none', backend: 'tensorrt', backendVersion: '10.16.0',
};

describe('tensorrt engine cache', () => {
  const program = new TextEncoder().encode('program');
  it('keys by program, TensorRT version and device, not by the ordinal', () => {
    const key = engineCacheKey(program, 101600, H200);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(engineCacheKey(program, 101600, { ...H200, gpuId: 3 })).toBe(key);
    expect(engineCacheKey(new TextEncoder().encode('program2'), 101600, H200)).not.toBe(key);
    expect(engineCacheKey(program, 101601, H200)).not.toBe(key);
    expect(engineCacheKey(program, 101600, { ...H200, deviceName: 'NVIDIA A100', computeCapability: { major: 8, minor: 0 } })).not.toBe(key);
  });

  it('stores and reads back engine bytes; an absent key reads as null', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-engine-cache-'));
    try {
      expect(readCachedEngine(dir, 'k')).toBeNull();
      writeCachedEngine(path.join(dir, 'sub'), 'k', Uint8Array.of(1, 2, 3));
      expect([...readCachedEngine(path.join(dir, 'sub'), 'k')!]).toEqual([1, 2, 3]);
      expect(fs.readdirSync(path.join(dir, 'sub'))).toEqual(['k.trtengine']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
