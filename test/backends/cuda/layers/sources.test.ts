/**
 * The lowering contract's rules on kernel sources: text never depends on concrete dims (a
 * layer lowered at two shapes launches the same sources), a key names one text, every source
 * is self-contained (no #include), and a missing or unsupported form is a typed error.
 */
import { LOWERINGS, lowerLayer, type KernelLaunch, type LoweredStep } from '../../../../lib/backends/cuda/layers';
import { executeLayer } from '../../../../lib/network/evaluate';
import { UnsupportedOpError } from '../../../../lib/errors';
import { LAYER_KINDS, type LayerKind, type LayerParams, type TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { checkTogether } from '../../../helpers/cuda-emulator';
import { layerOf, lowerAt } from '../../../helpers/cuda-emulator/run-layer';

/** The check() of contexts whose layers (matmul, pooling, resize) register no run-time check. */
const noCheck = (): never => {
  throw new Error('this lowering registers no run-time check');
};

interface Sample {
  kind: LayerKind;
  name: string;
  params: LayerParams;
  inputs: Array<Tensor | null>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const check = require('../../../gpu/cuda-lowering.check.js') as { buildCases(tensor: typeof Tensor): Sample[] };

function lower(params: LayerParams, inputs: ReadonlyArray<Tensor | null>): LoweredStep[] {
  const expected = executeLayer(layerOf(params, inputs, 1), inputs);
  return lowerAt(
    layerOf(params, inputs, expected.length),
    inputs,
    expected.map((t) => ({ dtype: t.dtype as TrtDType, shape: t.shape })),
  );
}

const sources = (steps: readonly LoweredStep[]): string[] => [...new Set(steps.flatMap((s) => (s.kind === 'launch' ? [s.kernel.source] : [])))].sort();

const f32 = (shape: number[]): Tensor => Tensor.from('float32', shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, (_, i) => Math.sin(i)));
const ints = (dtype: 'int32' | 'int64', shape: number[], mod: number): Tensor =>
  Tensor.from(dtype, shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, (_, i) => (i * 7) % mod));
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

/**
 * One layer per kind at two shapes (same parameters, dtypes and ranks) that take the same form:
 * a map's vector width and a row kernel's form are chosen from the dims and named in the key,
 * so a pair that took two forms would launch two keys (each key's one text is checked below).
 */
const PAIRS: Record<LayerKind, { params: LayerParams; at: Array<Array<Tensor | null>> } | null> = {
  constant: null, // no inputs: its only shape is its weights'
  identity: null, // a device copy
  cast: { params: { kind: 'cast', to: 'float16' }, at: [[f32([2, 3])], [f32([5, 2])]] },
  elementwise: { params: { kind: 'elementwise', op: 'sum' }, at: [[f32([2, 3]), f32([1, 3])], [f32([4, 5]), f32([4, 1])]] },
  unary: { params: { kind: 'unary', op: 'exp' }, at: [[f32([3])], [f32([11])]] },
  activation: { params: { kind: 'activation', type: 'elu', alpha: 1 }, at: [[f32([3])], [f32([5])]] },
  // Batch dims that broadcast on both sides expand into scratch through a copy kernel.
  matmul: { params: { kind: 'matmul', opA: 'none', opB: 'none' }, at: [[f32([2, 1, 3, 4]), f32([1, 3, 4, 5])], [f32([1, 2, 2, 2]), f32([4, 1, 2, 6])]] },
  attention: null, // the strided form only (its own tests: test/backends/cuda/layers/attention*.test.ts); a plain one never reaches the lowerings
  shuffle: {
    params: { kind: 'shuffle', firstTranspose: [1, 0, 2], reshape: [0, -1], secondTranspose: [1, 0], zeroIsPlaceholder: true },
    at: [[f32([2, 3, 4])], [f32([3, 2, 4])]],
  },
  slice: { params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'wrap' }, at: [[f32([3, 3]), i64([-1, 0]), i64([2, 2]), i64([1, 1])], [f32([5, 4]), i64([1, 2]), i64([7, 3]), i64([2, 1])]] },
  concat: { params: { kind: 'concat', axis: 1 }, at: [[f32([2, 1]), f32([2, 3])], [f32([4, 1]), f32([4, 3])]] },
  gather: { params: { kind: 'gather', mode: 'default', axis: 1 }, at: [[f32([2, 4]), ints('int64', [3], 4)], [f32([3, 6]), ints('int64', [2, 2], 6)]] },
  scatter: { params: { kind: 'scatter', mode: 'nd', axis: 0 }, at: [[f32([4, 2]), i64([0, 2]).reshape([2, 1]), f32([2, 2])], [f32([6, 3]), i64([5]).reshape([1, 1]), f32([1, 3])]] },
  reduce: { params: { kind: 'reduce', op: 'max', axes: [1], keepDims: false }, at: [[f32([2, 3, 4])], [f32([5, 1, 2])]] },
  softmax: { params: { kind: 'softmax', axis: 1 }, at: [[f32([2, 3])], [f32([4, 8])]] },
  shape: { params: { kind: 'shape' }, at: [[f32([2, 3])], [f32([4, 8])]] },
  fill: { params: { kind: 'fill', dims: [1], alpha: 1, beta: [2], dtype: 'int64' }, at: [[i64([3])], [i64([9])]] },
  select: {
    params: { kind: 'select' },
    at: [
      [Tensor.from('bool', [2, 1], [1, 0]), f32([1, 3]), f32([2, 3])],
      [Tensor.from('bool', [1, 5], [1, 0, 0, 1, 1]), f32([3, 5]), f32([3, 1])],
    ],
  },
  convolution: null, // library steps: no kernel source unless the weights need a cast
  deconvolution: null,
  pooling: {
    params: { kind: 'pooling', type: 'average', window: [2, 2], stride: [1, 1], prePadding: [1, 0], postPadding: [0, 1], paddingMode: 'explicit_round_down', averageCountExcludesPadding: false },
    at: [[f32([1, 2, 4, 4])], [f32([2, 3, 5, 3])]],
  },
  normalization: { params: { kind: 'normalization', axes: [2], epsilon: 1e-5, nbGroups: 1 }, at: [[f32([2, 3, 4]), f32([1, 1, 4]), f32([1, 1, 4])], [f32([1, 5, 2]), f32([1, 1, 2]), f32([1, 1, 2])]] },
  resize: {
    params: { kind: 'resize', mode: 'linear', outputDims: [1, 1], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' },
    at: [[f32([2, 3]), i64([4, 6])], [f32([5, 2]), i64([3, 3])]],
  },
  topk: { params: { kind: 'topk', op: 'max', k: 2, axis: 1, indicesType: 'int32' }, at: [[f32([2, 3])], [f32([4, 9])]] },
  cumulative: { params: { kind: 'cumulative', op: 'sum', axis: 0, exclusive: true, reverse: false }, at: [[f32([3, 2])], [f32([7, 5])]] },
  nonzero: null, // refused at build (its output size is known only after a run): never lowered
  nms: null, // refused at build as nonzero
  unique: null, // refused at build as nonzero
  quantize: null, // spelled out at build (the spell-out-quantization pass): never lowered
  dequantize: null, // spelled out at build, as quantize
};

describe('kernel sources', () => {
  test.each([...LAYER_KINDS])('%s launches the same sources at two shapes', (kind) => {
    const pair = PAIRS[kind];
    if (pair === null) {
      // Kinds without shaped kernel launches: their steps never embed source text that could vary.
      expect(['constant', 'identity', 'convolution', 'deconvolution', 'attention', 'nonzero', 'nms', 'unique', 'quantize', 'dequantize']).toContain(kind);
      return;
    }
    const [a, b] = pair.at.map((inputs) => lower(pair.params, inputs));
    expect(sources(a!).length).toBeGreaterThan(0);
    expect(sources(b!)).toEqual(sources(a!));
  });

  const samples = check.buildCases(Tensor);
  const launches = samples.flatMap((s) => lower(s.params, s.inputs).flatMap((step) => (step.kind === 'launch' ? [{ sample: s.name, step }] : [])));

  test('a key names one source text, every source is self-contained and defines its entry', () => {
    const byKey = new Map<string, string>();
    for (const { sample, step } of launches) {
      const { key, entry, source } = step.kernel;
      const known = byKey.get(key);
      if (known !== undefined && known !== source) throw new Error(`${sample}: key ${key} names two different sources`);
      byKey.set(key, source);
      expect(source).not.toMatch(/#\s*include/);
      expect(source).toContain(`extern "C" __global__ void ${entry}(`);
      for (const v of [...(step.grid as readonly number[]), ...(step.block as readonly number[])]) expect(v).toBeGreaterThanOrEqual(1);
    }
    expect(byKey.size).toBeGreaterThan(100);
  });

  test('every distinct source compiles with the others in one module (include-guarded prelude, entry-named helpers)', () => {
    const distinct = new Map(launches.map(({ step }) => [step.kernel.key, step.kernel]));
    expect(() => checkTogether([...distinct.values()])).not.toThrow();
  }, 120_000);

  test('the lowering table covers the catalogue and nothing else', () => {
    expect(Object.keys(LOWERINGS).sort()).toEqual([...LAYER_KINDS].sort());
  });

  test('a kind without a lowering and an unsupported form are UnsupportedOpErrors naming the layer', () => {
    const base = { inputs: [], outputs: [], values: [], scratch: () => ({ buffer: 9 }), weight: () => ({ buffer: 9 }), check: noCheck };
    const bogus = () => lowerLayer({ ...base, layer: { index: 0, name: 'n/bogus', params: { kind: 'bogus' } as unknown as LayerParams, inputs: [], outputs: [] } });
    expect(bogus).toThrow(UnsupportedOpError);
    expect(bogus).toThrow(/n\/bogus/);
    const cubic = () =>
      lower({ kind: 'resize', mode: 'cubic', outputDims: [4], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' }, [f32([2])]);
    // The reference refuses cubic too, so lower it directly.
    expect(() =>
      lowerLayer({
        ...base,
        layer: { index: 0, name: 'n/cubic', params: { kind: 'resize', mode: 'cubic', outputDims: [4], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' }, inputs: [0], outputs: [1] },
        inputs: [{ dtype: 'float32', shape: [2], at: { buffer: 0 } }],
        outputs: [{ dtype: 'float32', shape: [4], at: { buffer: 1 } }],
        values: [undefined],
      }),
    ).toThrow(/n\/cubic.*cubic/);
    expect(cubic).toThrow();
    // A nonzero's output size is known only after it has run; plans are made before.
    const nonzero = () =>
      lowerLayer({
        ...base,
        layer: { index: 0, name: 'n/nonzero', params: { kind: 'nonzero' }, inputs: [0], outputs: [1] },
        inputs: [{ dtype: 'float32', shape: [2], at: { buffer: 0 } }],
        outputs: [{ dtype: 'int64', shape: [1, 2], at: { buffer: 1 } }],
        values: [undefined],
      });
    expect(nonzero).toThrow(UnsupportedOpError);
    expect(nonzero).toThrow(/n\/nonzero.*depends on tensor data/);
  });
});

describe('TF32', () => {
  const gemmOf = (dtype: TrtDType, tf32: boolean | undefined): LoweredStep | undefined => {
    const steps = lowerLayer({
      layer: { index: 0, name: 'mm', params: { kind: 'matmul', opA: 'none', opB: 'none' }, inputs: [0, 1], outputs: [2] },
      inputs: [
        { dtype, shape: [2, 3], at: { buffer: 0 } },
        { dtype, shape: [3, 4], at: { buffer: 1 } },
      ],
      outputs: [{ dtype, shape: [2, 4], at: { buffer: 2 } }],
      values: [undefined, undefined],
      scratch: () => ({ buffer: 9 }),
      check: noCheck,
      weight: () => ({ buffer: 9 }),
      ...(tf32 === undefined ? {} : { tf32 }),
    });
    return steps.find((s) => s.kind === 'gemm');
  };

  test('float32 GEMMs use TF32 only when the build allows it; other dtypes never carry the flag', () => {
    expect(gemmOf('float32', undefined)).toMatchObject({ kind: 'gemm', m: 2, n: 4, k: 3 });
    expect(gemmOf('float32', undefined)).not.toHaveProperty('tf32');
    expect(gemmOf('float32', false)).not.toHaveProperty('tf32');
    expect(gemmOf('float32', true)).toMatchObject({ kind: 'gemm', tf32: true });
    expect(gemmOf('float16', true)).toMatchObject({ kind: 'gemm', dtype: 'float16' });
    expect(gemmOf('float16', true)).not.toHaveProperty('tf32');
  });
});

describe('GEMM shape', () => {
  const gemmOf = (shapeA: number[], shapeB: number[], opA: 'none' | 'transpose' = 'none', opB: 'none' | 'transpose' = 'none'): LoweredStep[] =>
    lowerLayer({
      layer: { index: 0, name: 'mm', params: { kind: 'matmul', opA, opB }, inputs: [0, 1], outputs: [2] },
      inputs: [
        { dtype: 'float16', shape: shapeA, at: { buffer: 0 } },
        { dtype: 'float16', shape: shapeB, at: { buffer: 1 } },
      ],
      outputs: [{ dtype: 'float16', shape: [8, 128, 768], at: { buffer: 2 } }],
      values: [undefined, undefined],
      scratch: () => ({ buffer: 9 }),
      check: noCheck,
      weight: () => ({ buffer: 9 }),
    }).filter((s) => s.kind === 'gemm');

  test('a linear layer over [batch, seq, k] (one B for every batch) is one GEMM over all the rows', () => {
    const [g, ...rest] = gemmOf([8, 128, 768], [1, 768, 768], 'none', 'transpose');
    expect(rest).toHaveLength(0);
    expect(g).toMatchObject({ m: 1024, n: 768, k: 768, transB: true });
    expect(g).not.toHaveProperty('batch');
  });

  test('a transposed A, or a B per batch, stays a batched GEMM', () => {
    expect(gemmOf([8, 768, 128], [1, 768, 768], 'transpose')[0]).toMatchObject({ m: 128, batch: 8, strideA: 128 * 768, strideB: 0, strideD: 128 * 768 });
    expect(gemmOf([8, 128, 768], [8, 768, 768])[0]).toMatchObject({ m: 128, batch: 8, strideB: 768 * 768 });
  });
});

describe('channels-last pooling forms', () => {
  const keyOf = (window: number[], shape: number[], dtype: TrtDType = 'float16', offset = 0): string => {
    const params: LayerParams = { kind: 'pooling', type: 'max', window, stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], paddingMode: 'explicit_round_down', averageCountExcludesPadding: true, channelsLast: true };
    const out = [shape[0]!, Math.floor((shape[1]! + 2 - window[0]!) / 2) + 1, Math.floor((shape[2]! + 2 - window[1]!) / 2) + 1, shape[3]!];
    const steps = lowerLayer({
      layer: { index: 0, name: 'pool', params, inputs: [0], outputs: [1] },
      inputs: [{ dtype, shape, at: { buffer: 0, offset } }],
      outputs: [{ dtype, shape: out, at: { buffer: 1 } }],
      values: [undefined],
      scratch: () => ({ buffer: 9 }),
      check: noCheck,
      weight: () => ({ buffer: 9 }),
    });
    return (steps[0] as KernelLaunch).kernel.key;
  };

  test('a window of up to 16 positions over 8-channel groups is unrolled (the key names it); a larger one, odd channels or an unaligned input take the general kernel', () => {
    expect(keyOf([3, 3], [2, 9, 9, 64])).toBe('pooling.max.float16.nhwc8w.3x3');
    expect(keyOf([3, 3], [2, 9, 9, 64], 'float32')).toBe('pooling.max.float32.nhwc8w.3x3');
    expect(keyOf([5, 5], [2, 9, 9, 64])).toBe('pooling.max.float16.nhwc8w');
    expect(keyOf([3, 3], [2, 9, 9, 12])).toBe('pooling.max.float16.nhwc1');
    expect(keyOf([3, 3], [2, 9, 9, 64], 'float16', 2)).toBe('pooling.max.float16.nhwc8');
  });
});
