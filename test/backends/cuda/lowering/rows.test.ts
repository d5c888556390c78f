/**
 * Row layers (reduce, softmax, normalization) in both kernel forms of lowering/rows.ts, run
 * on the CPU kernel emulator against the reference backend: the check's `rows.*` samples
 * (rows of 1 to 4099 elements, strided and multi-axis rows, every reduce op and dtype, IEEE
 * specials, broadcast scale and bias), which form each takes, the loop over rows beyond the
 * grid, determinism, dims-independent source, and kernels broken on purpose (a missing
 * barrier, a missing butterfly level) failing the same comparison.
 */
import { cooperativeThreads } from '../../../../lib/backends/cuda/lowering/rows';
import type { KernelLaunch, LoweredStep } from '../../../../lib/backends/cuda/lowering';
import type { LayerParams, TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/tensor';
import { layerOf, lowerAt, runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { checkSamples, expectSampleMatches as expectMatches, type Sample } from '../../../helpers/cuda-emulator/samples';

const samples = checkSamples().filter((s) => s.name.includes('/rows.'));
const launches = (steps: readonly LoweredStep[]): KernelLaunch[] => steps.filter((s): s is KernelLaunch => s.kind === 'launch');

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

test('the samples cover both forms around the threshold', () => {
  expect(samples.length).toBeGreaterThan(50);
  for (const n of [1, 63, 64, 65, 768, 2048, 4099]) expect(samples.some((s) => s.name.endsWith(`.${n}`))).toBe(true);
});

describe.each(samples.map((s) => [s.name, s] as const))('%s', (_name, s) => {
  test('matches the reference backend in the form its row length picks', () => {
    const steps = launches(expectMatches(s));
    // Every sample name ends with its row length.
    const inner = Number(/\.(\d+)$/.exec(s.name)![1]);
    expect(steps.length).toBe(1);
    const step = steps[0]!;
    if (inner >= 64) {
      expect(step.kernel.key).toMatch(/\.block$/);
      expect(step.block).toEqual([cooperativeThreads(inner)]);
      expect(step.kernel.source).toContain('__syncthreads()');
    } else {
      expect(step.kernel.key).not.toMatch(/\.block$/);
    }
  });
});

describe('cooperative rows', () => {
  test('block sizes: multiples of the warp from 64 to 512, about four elements a thread', () => {
    expect([64, 65, 256, 257, 768, 2048, 2049, 4099, 1e6].map(cooperativeThreads)).toEqual([64, 64, 64, 128, 256, 512, 512, 512, 512]);
  });

  test('a grid smaller than the rows loops each block over several rows', () => {
    const x = Tensor.from('float32', [10, 100], Array.from({ length: 1000 }, (_, i) => Math.sin(i * 0.37) * 4));
    const small = (steps: LoweredStep[]): LoweredStep[] => steps.map((st) => (st.kind === 'launch' ? { ...st, grid: [3] } : st));
    for (const params of [
      { kind: 'reduce', op: 'max', axes: [1], keepDims: false },
      { kind: 'softmax', axis: 1 },
    ] as LayerParams[]) {
      expectMatches({ kind: params.kind, name: `grid3.${params.kind}`, params, inputs: [x] }, small);
    }
    const scale = Tensor.from('float32', [1, 100], Array.from({ length: 100 }, (_, i) => 1 + i / 100));
    const bias = Tensor.from('float32', [1, 100], Array.from({ length: 100 }, (_, i) => -i / 50));
    expectMatches({ kind: 'normalization', name: 'grid3.normalization', params: { kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 }, inputs: [x, scale, bias] }, small);
  });

  test('the result is the same bytes on every run (fixed combination order)', () => {
    const s = sample('reduce/rows.sum.float32.4099');
    const a = runLayer(s.params, s.inputs).actual[0]!;
    const b = runLayer(s.params, s.inputs).actual[0]!;
    expect(Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength))).toBe(true);
  });

  test('the source does not depend on the row length, the row count or the block size', () => {
    const params: LayerParams = { kind: 'softmax', axis: 1 };
    const at = (shape: number[]): KernelLaunch => {
      const x = new Tensor('float32', shape, new Float32Array(shape[0]! * shape[1]!));
      return launches(lowerAt(layerOf(params, [x], 1), [x], [{ dtype: 'float32' as TrtDType, shape }]))[0]!;
    };
    const [a, b] = [at([3, 100]), at([70000, 300])];
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
