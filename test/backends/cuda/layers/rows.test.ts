/**
 * Row layers (reduce, softmax, normalization) in the three kernel forms of
 * lib/backends/cuda/layers/rows.ts, run on the CPU kernel emulator against the reference
 * backend: the check's `rows.*` samples (rows of 1 to 4099 elements, strided and multi-axis
 * rows, every reduce op and dtype, IEEE specials, broadcast scale and bias), which form each
 * takes, the loop over rows beyond the grid, determinism, dims-independent source, and kernels
 * broken on purpose (a missing barrier, a missing butterfly level) failing the same
 * comparison.
 */
import { cooperativeThreads, warpElements, warpForm, splitRows } from '../../../../lib/backends/cuda/layers/rows';
import type { KernelLaunch, LoweredStep } from '../../../../lib/backends/cuda/layers';
import type { LayerParams, TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { layerOf, lowerAt, runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { checkSamples, expectSampleMatches as expectMatches, type Sample } from '../../../helpers/cuda-emulator/samples';
import { expectClose } from '../../../helpers/compare';

const samples = checkSamples().filter((s) => s.name.includes('/rows.'));
const launches = (steps: readonly LoweredStep[]): KernelLaunch[] => steps.filter((s): s is KernelLaunch => s.kind === 'launch');

/** The steps of `params` lowered at an input of `shape` (float32; shapes only, no data: a lowering reads none). */
const lowerShaped = (params: LayerParams, shape: number[], outShape = shape, extra: number[][] = []): LoweredStep[] => {
  const shaped = (sh: number[]): Tensor => ({ dtype: 'float32', shape: sh, rank: sh.length, size: sh.reduce((p, d) => p * d, 1) }) as unknown as Tensor;
  const inputs = [shape, ...extra].map(shaped);
  return lowerAt(layerOf(params, inputs, 1), inputs, [{ dtype: 'float32' as TrtDType, shape: outShape }]);
};

const sample = (name: string): Sample => {
  const s = samples.find((c) => c.name === name);
  if (!s) throw new Error(`no sample ${name}`);
  return s;
};

/** The steps with every kernel's source edited (a new key, so the emulator compiles the edit). */
const editSource = (from: RegExp, to: string) => (steps: LoweredStep[]): LoweredStep[] =>
  steps.map((s) => {
    if (s.kind !== 'launch') return s;
    const source = s.kernel.source.replace(from, to);
    expect(source).not.toBe(s.kernel.source);
    return { ...s, kernel: { ...s.kernel, key: `${s.kernel.key}.edited`, source } };
  });

/** Runs `s` twice on the emulator: the outputs must be the same bytes. */
function expectSameBytesTwice(s: Sample): void {
  const [a, b] = [runLayer(s.params, s.inputs).actual[0]!, runLayer(s.params, s.inputs).actual[0]!];
  expect(Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength))).toBe(true);
}

test('the samples cover both forms around the threshold', () => {
  expect(samples.length).toBeGreaterThan(50);
  for (const n of [1, 63, 64, 65, 768, 2048, 4099]) expect(samples.some((s) => s.name.endsWith(`.${n}`))).toBe(true);
  for (const n of [1, 31, 32, 33, 100, 128, 512, 768, 1024, 1025, 2048]) {
    for (const what of ['softmax/rows.warp.float32', 'softmax/rows.warp.float16', 'normalization/rows.warp.float32', 'normalization/rows.warp.float16', 'normalization/rows.warp.broadcast']) {
      expect(samples.some((s) => s.name === `${what}.${n}`)).toBe(true);
    }
  }
});

/**
 * The form a sample should take, derived from its params and shape (not from the lowering):
 * softmax and single-axis normalization over one contiguous axis of at most 1024 run a warp a
 * row (in chunks of V contiguous elements where V divides the row), and up to 2048 where those
 * chunks are at least 4 wide; otherwise rows of 64 or more run a block a row.
 */
function expectedForm(s: Sample, inner: number): string {
  const shape = s.inputs[0]!.shape;
  const last = (axis: number): boolean => shape.slice((axis + shape.length) % shape.length + 1).every((d) => d === 1);
  const p = s.params;
  const oneAxis = p.kind === 'softmax' ? last(p.axis) : p.kind === 'normalization' ? p.nbGroups === 1 && p.axes.length === 1 && last(p.axes[0]!) : false;
  if (oneAxis && inner <= 2048) {
    // Chunks of V contiguous elements where V divides the row and no lane idles (the samples' tensors start aligned).
    const bytes = s.inputs[0]!.dtype === 'float32' ? 4 : 2;
    let v = 16 / bytes;
    while (v >= 2 && !(inner % v === 0 && 32 * v <= inner)) v /= 2;
    if (v < 2) v = 1;
    const e = v > 1 ? v * Math.ceil(inner / (32 * v)) : [1, 2, 4, 8, 16, 32, 64].find((n) => 32 * n >= inner)!;
    // `.full`: every chunk inside the row (32·E = row), tested by no chunk.
    if (e <= 32 || v >= 4) return `${v > 1 ? `warp${e}v${v}` : `warp${e}`}${32 * e === inner ? '.full' : ''}`;
  }
  return inner >= 64 ? 'block' : 'thread';
}

describe.each(samples.map((s) => [s.name, s] as const))('%s', (_name, s) => {
  test('matches the reference backend in the form its row picks', () => {
    const steps = launches(expectMatches(s));
    // Every sample name ends with its row length.
    const inner = Number(/\.(\d+)$/.exec(s.name)![1]);
    expect(steps.length).toBe(1);
    const step = steps[0]!;
    const form = expectedForm(s, inner);
    if (form === 'block') {
      expect(step.kernel.key).toMatch(/\.block$/);
      expect(step.block).toEqual([cooperativeThreads(inner)]);
      expect(step.kernel.source).toContain('__syncthreads()');
    } else if (form === 'thread') {
      expect(step.kernel.key).not.toMatch(/\.(block|warp\d+(v\d+)?(\.full)?)$/);
    } else {
      expect(step.kernel.key).toMatch(new RegExp(`\\.${form.replace('.', '\\.')}$`));
      expect(step.kernel.source).toContain('__shfl_xor_sync');
      expect(step.kernel.source).not.toContain('__syncthreads');
      expect(step.kernel.source).not.toContain('__shared__');
    }
  });
});

describe('row arguments', () => {
  test('inner axes that step through memory as one are walked as one (a global pool over channels-last); others stay apart', () => {
    const [step] = launches(lowerShaped({ kind: 'reduce', op: 'avg', axes: [1, 2], keepDims: true }, [2, 7, 7, 16], [2, 1, 1, 16]));
    // outer, orank, odims, o_x, inner, irank, idims, i_x after y and x.
    const args = step!.args.slice(2);
    expect(args[4]).toEqual({ scalar: 'i64', value: 49 });
    expect(args[5]).toEqual({ scalar: 'i32', value: 1 });
    expect((args[6] as { values: readonly number[] }).values.slice(0, 1)).toEqual([49]);
    expect((args[7] as { values: readonly number[] }).values.slice(0, 1)).toEqual([16]);
    // Height and channels of NCHW's [2, 3, 4, 5] are not one stride apart: two inner axes.
    const [apart] = launches(lowerShaped({ kind: 'reduce', op: 'sum', axes: [1, 3], keepDims: true }, [2, 3, 4, 5], [2, 1, 4, 1]));
    expect(apart!.args.slice(2)[5]).toEqual({ scalar: 'i32', value: 2 });
  });
});

describe('cooperative rows', () => {
  test('block sizes: multiples of the warp from 64 to 512, about four elements a thread', () => {
    expect([64, 65, 256, 257, 768, 2048, 2049, 4099, 1e6].map(cooperativeThreads)).toEqual([64, 64, 64, 128, 256, 512, 512, 512, 512]);
  });

  test('a grid smaller than the rows loops each block over several rows', () => {
    // Rows longer than 1024, so that softmax and normalization run a block a row too.
    const x = Tensor.from('float32', [10, 1100], Array.from({ length: 11000 }, (_, i) => Math.sin(i * 0.37) * 4));
    const small = (steps: LoweredStep[]): LoweredStep[] => steps.map((st) => (st.kind === 'launch' ? { ...st, grid: [3] } : st));
    for (const params of [
      { kind: 'reduce', op: 'max', axes: [1], keepDims: false },
      { kind: 'softmax', axis: 1 },
    ] as LayerParams[]) {
      expectMatches({ kind: params.kind, name: `grid3.${params.kind}`, params, inputs: [x] }, small);
    }
    const scale = Tensor.from('float32', [1, 1100], Array.from({ length: 1100 }, (_, i) => 1 + i / 1100));
    const bias = Tensor.from('float32', [1, 1100], Array.from({ length: 1100 }, (_, i) => -i / 550));
    expectMatches({ kind: 'normalization', name: 'grid3.normalization', params: { kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 }, inputs: [x, scale, bias] }, small);
  });

  test('the result is the same bytes on every run (fixed combination order)', () => {
    expectSameBytesTwice(sample('reduce/rows.sum.float32.4099'));
  });

  test('the source does not depend on the row length, the row count or the block size', () => {
    const params: LayerParams = { kind: 'reduce', op: 'sum', axes: [1], keepDims: false };
    const at = (shape: number[]): KernelLaunch => launches(lowerShaped(params, shape, [shape[0]!]))[0]!;
    const [a, b] = [at([3, 100]), at([70000, 300])];
    expect(a.kernel.key).toBe('reduce.sum.float32.block');
    expect(a.block).not.toEqual(b.block);
    expect(b.grid).toEqual([65536]);
    expect(b.kernel).toEqual(a.kernel);
  });

  test('many strided rows stay one thread per row (neighbouring threads read neighbouring elements)', () => {
    const params: LayerParams = { kind: 'reduce', op: 'sum', axes: [1], keepDims: false };
    const form = (shape: number[]): string => {
      const x = new Tensor('float32', shape, new Float32Array(shape.reduce((p, d) => p * d, 1)));
      return launches(lowerAt(layerOf(params, [x], 1), [x], [{ dtype: 'float32' as TrtDType, shape: [shape[0]!, shape[2]!] }]))[0]!.kernel.key;
    };
    expect(form([2, 64, 8200])).toBe('reduce.sum.float32');
    expect(form([2, 64, 100])).toBe('reduce.sum.float32.block');
  });

  test('without its barriers the cooperative reduction gives a wrong answer the comparison catches', () => {
    const s = sample('reduce/rows.sum.float32.768');
    expect(() => expectMatches(s, editSource(/__syncthreads\(\);/g, ''))).toThrow(/rows\.sum\.float32\.768/);
  });

  test('a butterfly missing its last level gives a wrong answer the comparison catches', () => {
    const s = sample('normalization/rows.float32.2048');
    expect(() => expectMatches(s, editSource(/k > 0; k >>= 1/g, 'k > 1; k >>= 1'))).toThrow(/rows\.float32\.2048/);
  });
});

describe('warp rows', () => {
  test('E, the elements a lane holds: the smallest of 1, 2, 4, … 64 that covers the row', () => {
    const e = (n: number): number => warpElements(splitRows([5, n], [1], [[n, 1]]));
    expect([0, 1, 31, 32, 33, 64, 65, 100, 128, 129, 512, 513, 768, 1024, 1025, 2048].map(e)).toEqual([1, 1, 1, 1, 2, 2, 4, 4, 4, 8, 16, 32, 32, 32, 64, 64]);
    expect(e(2049)).toBe(0);
  });

  test('chunks of V contiguous elements where V divides the row and the row starts, and the tensors are aligned', () => {
    const form = (n: number, bytes: number, offsets: number[] = [0, 0], rows = 5): unknown => warpForm(splitRows([rows, n], [1], [[n, 1]]), bytes, offsets);
    expect(form(768, 2)).toEqual({ elements: 24, vector: 8, full: true });
    expect(form(768, 4)).toEqual({ elements: 24, vector: 4, full: true });
    expect(form(128, 2)).toEqual({ elements: 4, vector: 4, full: true }); // 8 a chunk would idle half the lanes
    expect(form(512, 2)).toEqual({ elements: 16, vector: 8, full: true });
    expect(form(766, 2)).toEqual({ elements: 24, vector: 2, full: false });
    expect(form(767, 2)).toEqual({ elements: 32, vector: 1, full: false });
    expect(form(768, 2, [16, 32])).toEqual({ elements: 24, vector: 8, full: true });
    expect(form(768, 2, [8, 0])).toEqual({ elements: 24, vector: 4, full: true });
    expect(form(768, 2, [2, 0])).toEqual({ elements: 32, vector: 1, full: false });
    expect(form(768, 8)).toEqual({ elements: 24, vector: 2, full: true }); // 8-byte storage: two a chunk
    // Past 32 a lane only in chunks of 4 or more: 64 single loads and their offsets spill.
    expect(form(2048, 2)).toEqual({ elements: 64, vector: 8, full: true });
    expect(form(2048, 4)).toEqual({ elements: 64, vector: 4, full: true });
    expect(form(1536, 2)).toEqual({ elements: 48, vector: 8, full: true });
    expect(form(2046, 2)).toBeNull();
    expect(form(2048, 2, [4, 0])).toBeNull();
    expect(form(1025, 2)).toBeNull();
    expect(form(2049, 2)).toBeNull();
  });

  test('softmax and normalization take the warp form only for one contiguous axis of at most 2048', () => {
    const key = (steps: LoweredStep[]): string => launches(steps)[0]!.kernel.key;
    const softmax = (shape: number[], axis: number): string => key(lowerShaped({ kind: 'softmax', axis }, shape));
    const norm = (shape: number[], axes: number[], sb: number[]): string => key(lowerShaped({ kind: 'normalization', axes, epsilon: 1e-5, nbGroups: 1 }, shape, shape, [sb, sb]));
    expect(softmax([4, 1], 1)).toBe('softmax.float32.warp1');
    expect(softmax([4, 100], 1)).toBe('softmax.float32.warp4v2');
    expect(softmax([8, 12, 128, 128], 3)).toBe('softmax.float32.warp4v4.full');
    expect(softmax([1, 16, 512, 512], -1)).toBe('softmax.float32.warp16v4.full');
    expect(softmax([2, 1024], 1)).toBe('softmax.float32.warp32v4.full');
    expect(softmax([2, 100, 1], 1)).toBe('softmax.float32.warp4v2'); // trailing 1s: still contiguous
    expect(softmax([2, 1025], 1)).toBe('softmax.float32.block');
    expect(softmax([2, 2048], 1)).toBe('softmax.float32.warp64v4.full');
    expect(softmax([100, 3], 0)).toBe('softmax.float32.block'); // strided
    expect(softmax([10, 3], 0)).toBe('softmax.float32');
    // Scale and bias: `.s1`/`.b1` read in the row's chunks, `.s0`/`.b0` one value a row.
    expect(norm([8, 128, 768], [2], [1, 1, 768])).toBe('normalization.float32.float32.float32.s1.b1.warp24v4.full');
    expect(norm([4, 100], [1], [1, 1])).toBe('normalization.float32.float32.float32.s0.b0.warp4v2');
    expect(norm([4, 2000], [1], [1, 2000])).toBe('normalization.float32.float32.float32.s1.b1.warp64v4');
    expect(norm([4, 2002], [1], [1, 2002])).toBe('normalization.float32.float32.float32.block');
    expect(norm([2, 100, 3], [1], [1, 100, 1])).toBe('normalization.float32.float32.float32.block'); // strided
    expect(norm([2, 8, 16], [1, 2], [1, 8, 16])).toBe('normalization.float32.float32.float32.block'); // two axes
    expect(key(lowerShaped({ kind: 'reduce', op: 'sum', axes: [1], keepDims: false }, [4, 100], [4]))).toBe('reduce.sum.float32.block');
  });

  test('scale and bias read per row, in chunks, or (off their alignment) one at a time, all against the reference', () => {
    const r = (n: number, lo: number, hi: number, seed: number): number[] => Array.from({ length: n }, (_, i) => lo + (((i * 7919 + seed * 104729) % 1000) / 1000) * (hi - lo));
    const x = Tensor.from('float16', [6, 512], r(6 * 512, -3, 5, 1));
    const rowScale = Tensor.from('float16', [6, 1], r(6, 0.5, 1.5, 2));
    const scale = Tensor.from('float16', [1, 512], r(512, 0.5, 1.5, 3));
    const bias = Tensor.from('float16', [1, 512], r(512, -1, 1, 4));
    const params: LayerParams = { kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 };
    const cases: Array<[string, Tensor[], number[]]> = [
      ['s1.b1', [x, scale, bias], []],
      ['s0.b1', [x, rowScale, bias], []],
      // 2 bytes off a 16-byte chunk: the scale is read one element at a time.
      ['b1', [x, scale, bias], [0, 2, 0]],
      ['s1', [x, scale, bias], [0, 0, 6]],
    ];
    for (const [part, inputs, pads] of cases) {
      const run = runLayer(params, inputs, 'norm', undefined, pads);
      expect(launches(run.steps)[0]!.kernel.key).toBe(`normalization.float16.float16.float16.${part}.warp16v8.full`);
      expectClose(run.actual[0]!, run.expected[0]!, { rtol: 2e-3, atol: 2e-3 }, part);
    }
  });

  test('the source depends on the form (E and V) only; a warp a row, 8 rows a block (4 under 1024 rows), the grid capped', () => {
    const at = (shape: number[]): KernelLaunch => launches(lowerShaped({ kind: 'softmax', axis: 1 }, shape))[0]!;
    const [a, b, c, d] = [at([3, 100]), at([600000, 120]), at([20, 66]), at([1024, 70])];
    expect([a.block, a.grid]).toEqual([[96], [1]]);
    expect([b.block, b.grid]).toEqual([[256], [65536]]);
    expect([c.block, c.grid]).toEqual([[128], [5]]);
    expect([d.block, d.grid]).toEqual([[256], [128]]);
    expect(d.kernel).toEqual(a.kernel);
    expect(b.kernel).toEqual(a.kernel);
    expect(c.kernel).toEqual(a.kernel);
    expect(at([3, 129]).kernel.key).toBe('softmax.float32.warp8');
  });

  test('a grid smaller than the rows loops each warp over several rows', () => {
    const x = Tensor.from('float32', [30, 100], Array.from({ length: 3000 }, (_, i) => Math.sin(i * 0.37) * 4));
    const one = (steps: LoweredStep[]): LoweredStep[] => steps.map((st) => (st.kind === 'launch' ? { ...st, grid: [1] } : st));
    const steps = launches(expectMatches({ kind: 'softmax', name: 'grid1.softmax', params: { kind: 'softmax', axis: 1 }, inputs: [x] }, one));
    expect(steps[0]!.kernel.key).toBe('softmax.float32.warp4v2');
    const scale = Tensor.from('float32', [1, 100], Array.from({ length: 100 }, (_, i) => 1 + i / 100));
    const bias = Tensor.from('float32', [1, 1], [0.5]);
    expectMatches({ kind: 'normalization', name: 'grid1.normalization', params: { kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 }, inputs: [x, scale, bias] }, one);
  });

  test('the result is the same bytes on every run (fixed combination order)', () => {
    expectSameBytesTwice(sample('normalization/rows.warp.float32.1024'));
  });

  test('a butterfly missing its last level gives a wrong answer the comparison catches', () => {
    for (const name of ['softmax/rows.warp.float32.1024', 'normalization/rows.warp.float16.768']) {
      expect(() => expectMatches(sample(name), editSource(/k > 0; k >>= 1/g, 'k > 1; k >>= 1'))).toThrow(name.split('/')[1]);
    }
  });
});
