/**
 * The NVRTC disk cache (lib/gpu/kernel-cache.ts) with a fake compile function: hits, misses,
 * every key ingredient, corrupt and torn entries, concurrent writers, an unwritable cache.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compileWithCache, defaultCacheDir, kernelCacheKey, type CompileRequest } from '../../lib/gpu/kernel-cache';
import { makeTempDir, removeTempDir } from '../helpers/built-package';

const request: CompileRequest = { source: 'extern "C" __global__ void k() {}', name: 'k.cu', arch: 90, options: ['--minimal'] };

let dir: string;
beforeEach(() => {
  dir = makeTempDir('kcache');
});
afterEach(() => removeTempDir(dir));

/** A fake NVRTC: the "cubin" is the source's bytes behind a marker; counts its calls. */
function fakeCompiler() {
  const calls: CompileRequest[] = [];
  const compile = async (r: CompileRequest) => {
    calls.push(r);
    return { cubin: new Uint8Array(Buffer.from(`CUBIN sm_${r.arch} ${r.source}`)), log: 'compiled' };
  };
  return { calls, compile };
}

function entryFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else out.push(path.join(d, e.name));
    }
  };
  walk(root);
  return out;
}

test('a miss compiles and stores; the same request then comes from disk without compiling', async () => {
  const { calls, compile } = fakeCompiler();
  const first = await compileWithCache(request, { dir, nvrtcVersion: 13000, compile });
  expect(first).toMatchObject({ cached: false, log: 'compiled' });
  const second = await compileWithCache(request, { dir, nvrtcVersion: 13000, compile });
  expect(second.cached).toBe(true);
  expect(Buffer.from(second.cubin).toString()).toBe(`CUBIN sm_90 ${request.source}`);
  expect(calls).toHaveLength(1);
  const files = entryFiles(dir);
  expect(files).toEqual([path.join(dir, 'kernels', first.key.slice(0, 2), `${first.key}.cubin`)]);
});

test('source, name, architecture, options and NVRTC version each change the key', () => {
  const key = kernelCacheKey(request, 13000);
  const variants = [
    kernelCacheKey({ ...request, source: request.source + ' ' }, 13000),
    kernelCacheKey({ ...request, name: 'j.cu' }, 13000),
    kernelCacheKey({ ...request, arch: 89 }, 13000),
    kernelCacheKey({ ...request, options: [] }, 13000),
    kernelCacheKey({ ...request, options: ['--minimal', '-DX'] }, 13000),
    kernelCacheKey(request, 12080),
  ];
  expect(new Set([key, ...variants]).size).toBe(variants.length + 1);
  // Field boundaries are length-prefixed: moving text between option and source is a new key.
  expect(kernelCacheKey({ ...request, options: ['a'], source: 'bc' }, 1)).not.toBe(kernelCacheKey({ ...request, options: ['ab'], source: 'c' }, 1));
  expect(key).toMatch(/^[0-9a-f]{64}$/);
});

test.each([
  ['a flipped byte', (data: Buffer) => { data[data.length - 1] ^= 1; return data; }],
  ['a torn write (truncated)', (data: Buffer) => data.subarray(0, data.length - 5)],
  ['an empty file', () => Buffer.alloc(0)],
])('an entry with %s is ignored, recompiled and rewritten', async (_what, damage) => {
  const { calls, compile } = fakeCompiler();
  const first = await compileWithCache(request, { dir, nvrtcVersion: 13000, compile });
  const [file] = entryFiles(dir);
  fs.writeFileSync(file!, damage(fs.readFileSync(file!)));
  const again = await compileWithCache(request, { dir, nvrtcVersion: 13000, compile });
  expect(again.cached).toBe(false);
  expect(calls).toHaveLength(2);
  expect(Buffer.from(again.cubin).equals(Buffer.from(first.cubin))).toBe(true);
  const third = await compileWithCache(request, { dir, nvrtcVersion: 13000, compile });
  expect(third.cached).toBe(true);
});

test('concurrent writers of one key leave one valid entry and no temporary files', async () => {
  const { compile } = fakeCompiler();
  const results = await Promise.all(Array.from({ length: 8 }, () => compileWithCache(request, { dir, nvrtcVersion: 13000, compile })));
  expect(results.every((r) => !r.cached)).toBe(true);
  const files = entryFiles(dir);
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/\.cubin$/);
  expect((await compileWithCache(request, { dir, nvrtcVersion: 13000, compile })).cached).toBe(true);
});

test('a cache that cannot be written costs only the compile', async () => {
  const blocked = path.join(dir, 'file-not-dir');
  fs.writeFileSync(blocked, 'x');
  const { calls, compile } = fakeCompiler();
  const messages: string[] = [];
  const result = await compileWithCache(request, { dir: blocked, nvrtcVersion: 13000, compile, logger: (_l, m) => messages.push(m) });
  expect(result.cached).toBe(false);
  expect(calls).toHaveLength(1);
  expect(messages.join('\n')).toMatch(/could not write kernel cache entry/);
});

test('dir: null disables the cache', async () => {
  const { calls, compile } = fakeCompiler();
  await compileWithCache(request, { dir: null, nvrtcVersion: 13000, compile });
  await compileWithCache(request, { dir: null, nvrtcVersion: 13000, compile });
  expect(calls).toHaveLength(2);
});

test('the default directory: TENSORRT_NODE_CACHE_DIR, then $XDG_CACHE_HOME, then ~/.cache', () => {
  expect(defaultCacheDir({ TENSORRT_NODE_CACHE_DIR: '/x/y', XDG_CACHE_HOME: '/c' })).toBe('/x/y');
  expect(defaultCacheDir({ XDG_CACHE_HOME: '/c' })).toBe(path.join('/c', 'tensorrt-node'));
  // A relative XDG_CACHE_HOME is invalid per the XDG spec and ignored.
  expect(defaultCacheDir({ XDG_CACHE_HOME: 'rel' })).toBe(path.join(os.homedir(), '.cache', 'tensorrt-node'));
  expect(defaultCacheDir({})).toBe(path.join(os.homedir(), '.cache', 'tensorrt-node'));
});
