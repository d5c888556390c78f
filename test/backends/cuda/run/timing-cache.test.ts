import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  addToTimingCache,
  emptyTimingCache,
  gemmsOf,
  parseTimingCache,
  readTimingCache,
  serializeTimingCache,
  TIMING_CACHE_FORMAT,
  timingCacheFile,
  tuningBudgetFromEnv,
  withGemms,
  type TimingScope,
} from '../../../../lib/backends/cuda/run/timing-cache';
import { gpuBinding } from '../../../../lib/gpu/binding';
import { GpuPlan } from '../../../../lib/gpu/gpu-plan';

const H200: TimingScope = { device: 'NVIDIA H200', computeCapability: '9.0', cublasLt: 130100 };
const A100: TimingScope = { device: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0', cublasLt: 130100 };
const algo = (fill: number): Uint8Array => new Uint8Array(64).map((_, i) => (fill + i) & 0xff);
const P1 = 'm=50176 n=256 k=64 dtype=1 transA=0 transB=1';
const P2 = 'm=50176 n=64 k=256 dtype=1 transA=0 transB=1';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-timing-test-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('timingCacheFile', () => {
  it('takes the option, then TENSORRT_NODE_TIMING_CACHE, then the engine cache directory, else none', () => {
    const env = { TENSORRT_NODE_TIMING_CACHE: '/a/t.json', TENSORRT_NODE_ENGINE_CACHE: '/cache' };
    expect(timingCacheFile('/given.json', env)).toBe('/given.json');
    expect(timingCacheFile(undefined, env)).toBe('/a/t.json');
    expect(timingCacheFile(undefined, { TENSORRT_NODE_ENGINE_CACHE: '/cache' })).toBe(path.join('/cache', 'cuda-timing.json'));
    expect(timingCacheFile(undefined, {})).toBeNull();
    expect(timingCacheFile(null, env)).toBeNull();
  });

  it('refuses an empty or non-string option', () => {
    expect(() => timingCacheFile('', {})).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }));
    expect(() => timingCacheFile(3 as unknown as string, {})).toThrow(/timingCache must be a file path or null, got 3/);
  });
});

describe('timing cache contents', () => {
  it('round-trips choices per scope through its text, keeping other scopes', () => {
    const one = withGemms(emptyTimingCache(), H200, [{ problem: P1, algo: algo(1) }, { problem: P2, algo: algo(2) }]);
    expect(one.added).toBe(2);
    const two = withGemms(one.cache, A100, [{ problem: P1, algo: algo(9) }]);
    const parsed = parseTimingCache(serializeTimingCache(two.cache), 'x.json');
    expect(gemmsOf(parsed, H200)).toEqual([
      { problem: P1, algo: algo(1) },
      { problem: P2, algo: algo(2) },
    ]);
    expect(gemmsOf(parsed, A100)).toEqual([{ problem: P1, algo: algo(9) }]);
    expect(gemmsOf(parsed, { ...H200, cublasLt: 130200 })).toEqual([]);
  });

  it('counts only new or changed choices as added', () => {
    const { cache } = withGemms(emptyTimingCache(), H200, [{ problem: P1, algo: algo(1) }]);
    expect(withGemms(cache, H200, [{ problem: P1, algo: algo(1) }]).added).toBe(0);
    expect(withGemms(cache, H200, [{ problem: P1, algo: algo(3) }]).added).toBe(1);
  });

  it('serializes the same choices to the same text whatever their order', () => {
    const a = withGemms(emptyTimingCache(), H200, [{ problem: P1, algo: algo(1) }, { problem: P2, algo: algo(2) }]).cache;
    const b = withGemms(withGemms(emptyTimingCache(), A100, []).cache, H200, [{ problem: P2, algo: algo(2) }, { problem: P1, algo: algo(1) }]).cache;
    const bWithoutA100 = { ...b, scopes: b.scopes.filter((s) => s.device === H200.device) };
    expect(serializeTimingCache(bWithoutA100)).toBe(serializeTimingCache(a));
  });

  it.each([
    ['not JSON', '{', /x\.json: not JSON/],
    ['another format', JSON.stringify({ format: 'something else', version: 1, scopes: [] }), /its format is "something else"/],
    ['a later version', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 2, scopes: [] }), /it is version 2; this tensorrt-node reads version 1/],
    ['scopes not an array', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: {} }), /"scopes" is not an array/],
    ['a bad capability', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: [{ ...H200, computeCapability: '9', gemms: {} }] }), /scopes\[0\]\.computeCapability/],
    ['a bad library version', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: [{ ...H200, cublasLt: '13.1', gemms: {} }] }), /scopes\[0\]\.cublasLt/],
    ['a short algorithm', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: [{ ...H200, gemms: { [P1]: Buffer.alloc(63).toString('base64') } }] }), /gemms\["m=50176.*"\] is not 64 bytes of base64/],
    ['an algorithm that is not base64', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: [{ ...H200, gemms: { [P1]: `${'%'.repeat(84)}==` } }] }), /is not 64 bytes of base64/],
    ['a scope twice', JSON.stringify({ format: TIMING_CACHE_FORMAT, version: 1, scopes: [{ ...H200, gemms: {} }, { ...H200, gemms: {} }] }), /scopes\[0\] and scopes\[1\] are both NVIDIA H200/],
  ])('refuses %s, naming the file and the fix', (_what, text, message) => {
    let error: unknown;
    try {
      parseTimingCache(text, 'x.json');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'E_INVALID_ARGUMENT', details: { file: 'x.json' } });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/delete the file .* or point TENSORRT_NODE_TIMING_CACHE elsewhere/);
  });
});

describe('timing cache file', () => {
  it('reads an absent file as empty, and writes only when something is new', () => {
    const file = path.join(dir, 'sub', 'cuda-timing.json');
    expect(readTimingCache(file)).toEqual(emptyTimingCache());
    expect(addToTimingCache(file, H200, [{ problem: P1, algo: algo(1) }])).toBe(1);
    const mtime = fs.statSync(file).mtimeMs;
    expect(addToTimingCache(file, H200, [{ problem: P1, algo: algo(1) }])).toBe(0);
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['cuda-timing.json']);
  });

  it('keeps what another process wrote between our read and our write', () => {
    const file = path.join(dir, 'cuda-timing.json');
    addToTimingCache(file, H200, [{ problem: P1, algo: algo(1) }]);
    // Another process adds its device's choices to the same file.
    fs.writeFileSync(file, serializeTimingCache(withGemms(readTimingCache(file), A100, [{ problem: P2, algo: algo(7) }]).cache));
    addToTimingCache(file, H200, [{ problem: P2, algo: algo(2) }]);
    const final = readTimingCache(file);
    expect(gemmsOf(final, H200).map((e) => e.problem)).toEqual([P1, P2]);
    expect(gemmsOf(final, A100)).toEqual([{ problem: P2, algo: algo(7) }]);
  });

  it('refuses a malformed file without touching it, and an unwritable place', () => {
    const file = path.join(dir, 'cuda-timing.json');
    fs.writeFileSync(file, '[1, 2]');
    expect(() => addToTimingCache(file, H200, [{ problem: P1, algo: algo(1) }])).toThrow(/timing cache .*cuda-timing\.json: not a JSON object/);
    expect(fs.readFileSync(file, 'utf8')).toBe('[1, 2]');
    fs.writeFileSync(path.join(dir, 'plain-file'), '');
    expect(() => addToTimingCache(path.join(dir, 'plain-file', 't.json'), H200, [{ problem: P1, algo: algo(1) }])).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringMatching(/cannot (read|write) it/) }),
    );
  });

  it('refuses a file larger than a timing cache can be', () => {
    const file = path.join(dir, 'huge.json');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, (64 << 20) + 1);
    expect(() => readTimingCache(file)).toThrow(/is 67108865 bytes, more than the 67108864/);
  });
});

describe('native GEMM choices (no GPU needed: plain data)', () => {
  // Device ordinals no test machine has, so the process's real choices are not disturbed.
  it('seeds, keeps its own choice over a file\'s, and exports the bytes it was given', () => {
    const binding = gpuBinding();
    expect(binding.gpuTunedGemms(900)).toEqual([]);
    expect(binding.gpuSeedTunedGemms(900, [{ problem: P1, algo: algo(1) }, { problem: P2, algo: algo(2) }])).toBe(2);
    expect(binding.gpuSeedTunedGemms(900, [{ problem: P1, algo: algo(5) }])).toBe(0);
    const exported = binding.gpuTunedGemms(900).map((e) => ({ problem: e.problem, algo: new Uint8Array(e.algo) }));
    expect(exported).toEqual([
      { problem: P1, algo: algo(1) },
      { problem: P2, algo: algo(2) },
    ]);
    expect(binding.gpuTunedGemms(901)).toEqual([]);
  });

  it('refuses an algorithm of the wrong size or type', () => {
    const binding = gpuBinding();
    expect(() => binding.gpuSeedTunedGemms(902, [{ problem: P1, algo: new Uint8Array(63) }])).toThrow(/entry 0's algo must be 64 bytes/);
    expect(() => binding.gpuSeedTunedGemms(902, [{ problem: P1, algo: new Float32Array(16) as unknown as Uint8Array }])).toThrow(/must be 64 bytes \(a Uint8Array\)/);
    expect(() => binding.gpuSeedTunedGemms(902, [{ problem: 3 as unknown as string, algo: algo(1) }])).toThrow(/needs a string problem/);
    expect(binding.gpuTunedGemms(902)).toEqual([]);
  });
});

describe('the timing budget', () => {
  it('TENSORRT_NODE_TUNING_BUDGET_MS gives it; unset or empty, there is no limit', () => {
    expect(tuningBudgetFromEnv({ TENSORRT_NODE_TUNING_BUDGET_MS: '10' })).toBe(10);
    expect(tuningBudgetFromEnv({ TENSORRT_NODE_TUNING_BUDGET_MS: '0' })).toBe(0);
    expect(tuningBudgetFromEnv({})).toBeUndefined();
    expect(tuningBudgetFromEnv({ TENSORRT_NODE_TUNING_BUDGET_MS: '' })).toBeUndefined();
  });

  it.each(['-1', '1.5', 'ten', '1e3', ' 5'])('refuses TENSORRT_NODE_TUNING_BUDGET_MS=%j, naming the variable', (value) => {
    expect(() => tuningBudgetFromEnv({ TENSORRT_NODE_TUNING_BUDGET_MS: value })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining(`TENSORRT_NODE_TUNING_BUDGET_MS must be a non-negative integer (milliseconds), got ${JSON.stringify(value)}`) }),
    );
  });

  it.each([-1, 0.5, Number.NaN, Infinity])('GpuPlan.create refuses the option %p before making a plan', async (value) => {
    await expect(GpuPlan.create({ steps: [] }, [], [], 0, { tuningBudgetMs: value })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: expect.stringMatching(/tuningBudgetMs must be a non-negative integer/) });
  });

  it('the addon refuses a negative budget too', () => {
    expect(() => gpuBinding().gpuCreatePlan(0, new Uint8Array(12), [], [], -5)).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringMatching(/tuningBudgetMs must be an integer >= 0/) }));
  });
});
