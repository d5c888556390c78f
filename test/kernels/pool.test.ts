import { InvalidArgumentError } from '../../lib/errors';
import {
  adaptiveAvgPool,
  adaptiveMaxPool,
  adaptiveMaxPoolWithIndices,
  avgPool,
  globalAvgPool,
  globalMaxPool,
  maxPool,
  maxPoolWithIndices,
  type AvgPoolOptions,
  type MaxPoolOptions,
} from '../../lib/kernels/pool';
import { pooledSize } from '../../lib/ir/ops/nn-geometry';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact } from '../helpers/compare';
import { runOrtOp, type OrtAttribute } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

interface MaxCase {
  name: string;
  x: number[];
  attrs: Record<string, OrtAttribute>;
  options: MaxPoolOptions;
}

const maxCases: MaxCase[] = [
  { name: '1-D k3 s2', x: [2, 3, 11], attrs: { kernel_shape: [3], strides: [2] }, options: { kernel: [3], stride: 2 } },
  { name: '1-D dilation and pads', x: [1, 2, 12], attrs: { kernel_shape: [3], dilations: [2], pads: [2, 1] }, options: { kernel: [3], dilation: 2, stride: 1, pads: [2, 1] } },
  { name: '2-D k3 s2 p1 (ResNet stem)', x: [2, 4, 13, 12], attrs: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }, options: { kernel: 3, stride: 2, padding: 1 } },
  { name: '2-D k3 s2 ceil (SqueezeNet)', x: [1, 3, 14, 13], attrs: { kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1 }, options: { kernel: [3, 3], stride: 2, ceilMode: true } },
  { name: '2-D ceil with padding', x: [1, 2, 9, 10], attrs: { kernel_shape: [2, 3], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1 }, options: { kernel: [2, 3], stride: 2, padding: 1, ceilMode: true } },
  { name: '2-D dilation 2', x: [1, 2, 10, 9], attrs: { kernel_shape: [2, 2], dilations: [2, 2], strides: [1, 2] }, options: { kernel: 2, dilation: 2, stride: [1, 2] } },
  { name: '2-D SAME_UPPER', x: [1, 2, 7, 8], attrs: { kernel_shape: [3, 2], strides: [2, 2], auto_pad: 'SAME_UPPER' }, options: { kernel: [3, 2], stride: 2, autoPad: 'SAME_UPPER' } },
  { name: '2-D default stride = kernel', x: [1, 2, 8, 8], attrs: { kernel_shape: [2, 2], strides: [2, 2] }, options: { kernel: 2 } },
  { name: '3-D', x: [1, 2, 5, 6, 7], attrs: { kernel_shape: [2, 3, 2], strides: [1, 2, 2], pads: [0, 1, 1, 1, 1, 0] }, options: { kernel: [2, 3, 2], stride: [1, 2, 2], pads: [0, 1, 1, 1, 1, 0] } },
];

describe('maxPool', () => {
  const rng = new Random(31);
  it.each(maxCases)('matches ONNX MaxPool with Indices: $name', async ({ x: xs, attrs, options }) => {
    const x = rng.tensor(xs);
    const [values, indices] = await runOrtOp({ opType: 'MaxPool', inputs: [x], attributes: attrs, outputCount: 2 });
    expectExact(maxPool(x, options), values!);
    const [v, i] = maxPoolWithIndices(x, { ...options, globalIndices: true });
    expectExact(v, values!);
    expectExact(i, indices!);
  });

  it('pools int64 and float16 exactly (as onnxruntime does)', async () => {
    const x = rng.intTensor([1, 2, 6, 6], -1000, 1000, 'int8');
    const [expected] = await runOrtOp({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] } });
    expectExact(maxPool(x, { kernel: 3, stride: 2, padding: 1 }), expected!);
    const h = rng.tensor([1, 2, 6, 6], 'float16');
    const [eh] = await runOrtOp({ opType: 'MaxPool', inputs: [h], attributes: { kernel_shape: [2, 2], strides: [2, 2] } });
    expectExact(maxPool(h, { kernel: 2 }), eh!);
  });

  it('gives PyTorch per-plane indices, first maximum on ties, NaN propagating', () => {
    const x = Tensor.from('float32', [1, 2, 2, 2], [1, 3, 3, 0, 5, NaN, 7, 7]);
    const [v, i] = maxPoolWithIndices(x, { kernel: 2 });
    expect(v.toArray()).toEqual([3, NaN]);
    expect(i.toArray()).toEqual([1, 1]);
  });

  it('drops a last ceil-mode window that would start in the end padding (PyTorch rule)', () => {
    // in 5, k 2, s 2, pad 1: floor gives 3 windows; ceil would give 4, but the 4th starts at
    // padded position 6 = in + padBegin, entirely in the end padding, so it is dropped.
    expect(pooledSize(5, 2, 2, 1, 1, 1, true)).toBe(3);
    expect(pooledSize(6, 3, 2, 0, 0, 1, true)).toBe(3);
    expect(pooledSize(6, 3, 2, 0, 0, 1, false)).toBe(2);
    const x = Tensor.from('float32', [1, 1, 5], [1, 2, 3, 4, 5]);
    expect(maxPool(x, { kernel: [2], stride: 2, padding: 1, ceilMode: true }).toArray()).toEqual([1, 3, 5]);
    // in 6, k 3, s 2, ceil: windows [0,3) [2,5) [4,6): the last is partial but starts inside.
    const y = Tensor.from('float32', [1, 1, 6], [6, 1, 2, 9, 0, 4]);
    expect(maxPool(y, { kernel: [3], stride: 2, ceilMode: true }).toArray()).toEqual([6, 9, 4]);
  });

  it('accepts an unbatched input and rejects bad options', () => {
    const x = rng.tensor([3, 8, 8]);
    expect(maxPool(x, { kernel: [2, 2] }).shape).toEqual([3, 4, 4]);
    expect(() => maxPool(x, { kernel: [9, 9] })).toThrow(/too small/);
    expect(() => maxPool(x, { kernel: [2, 2], stride: 0 })).toThrow(InvalidArgumentError);
    expect(() => maxPool(rng.tensor([8]), { kernel: [2, 2] })).toThrow(/\[8\]/);
  });
});

interface AvgCase {
  name: string;
  x: number[];
  attrs: Record<string, OrtAttribute>;
  options: AvgPoolOptions;
}

const avgCases: AvgCase[] = [
  { name: '1-D', x: [2, 3, 10], attrs: { kernel_shape: [3], strides: [2] }, options: { kernel: [3], stride: 2 } },
  { name: '2-D pads, exclude pad', x: [2, 3, 9, 8], attrs: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }, options: { kernel: 3, stride: 2, padding: 1, countIncludePad: false } },
  { name: '2-D pads, include pad', x: [2, 3, 9, 8], attrs: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], count_include_pad: 1 }, options: { kernel: 3, stride: 2, padding: 1, countIncludePad: true } },
  { name: '2-D asymmetric pads, include pad', x: [1, 2, 7, 6], attrs: { kernel_shape: [2, 3], strides: [1, 2], pads: [0, 2, 1, 1], count_include_pad: 1 }, options: { kernel: [2, 3], stride: [1, 2], pads: [0, 2, 1, 1] } },
  { name: '2-D ceil, exclude pad', x: [1, 2, 8, 7], attrs: { kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1 }, options: { kernel: 3, stride: 2, ceilMode: true, countIncludePad: false } },
  { name: '2-D SAME_LOWER', x: [1, 2, 7, 7], attrs: { kernel_shape: [2, 2], strides: [2, 2], auto_pad: 'SAME_LOWER' }, options: { kernel: 2, autoPad: 'SAME_LOWER', countIncludePad: false } },
  { name: '3-D', x: [1, 2, 4, 5, 6], attrs: { kernel_shape: [2, 2, 3], strides: [2, 1, 2], pads: [1, 0, 1, 1, 1, 0] }, options: { kernel: [2, 2, 3], stride: [2, 1, 2], pads: [1, 0, 1, 1, 1, 0], countIncludePad: false } },
];

describe('avgPool', () => {
  const rng = new Random(32);
  it.each(avgCases)('matches ONNX AveragePool: $name', async ({ x: xs, attrs, options }) => {
    const x = rng.tensor(xs);
    const [expected] = await runOrtOp({ opType: 'AveragePool', inputs: [x], attributes: attrs });
    expectClose(avgPool(x, options), expected!);
  });

  it('counts padding but not the overhang past it with ceil mode and count_include_pad (PyTorch)', () => {
    // in 4, k 3, s 2, pad 1, ceil: windows start at -1, 1, 3 over the padded range [-1, 5).
    // Divisors: [-1,2) -> 3, [1,4) -> 3, [3,5) -> 2 (clipped to the padded input, not 3).
    const x = Tensor.from('float32', [1, 1, 4], [1, 2, 3, 4]);
    const y = avgPool(x, { kernel: [3], stride: 2, padding: 1, ceilMode: true, countIncludePad: true });
    expect(y.toArray()).toEqual([(0 + 1 + 2) / 3, (2 + 3 + 4) / 3, (4 + 0) / 2].map(Math.fround));
    const z = avgPool(x, { kernel: [3], stride: 2, padding: 1, ceilMode: true, countIncludePad: false });
    expect(z.toArray()).toEqual([(1 + 2) / 2, (2 + 3 + 4) / 3, 4].map(Math.fround));
  });

  it('uses divisorOverride', () => {
    const x = Tensor.from('float32', [1, 1, 2, 2], [1, 2, 3, 4]);
    expect(avgPool(x, { kernel: 2, divisorOverride: 2 }).toArray()).toEqual([5]);
    expect(() => avgPool(x, { kernel: 2, divisorOverride: 0 })).toThrow(/divisorOverride/);
  });
});

describe('adaptive pooling', () => {
  const rng = new Random(33);
  it('matches ONNX AveragePool/MaxPool when the output divides the input', async () => {
    const x = rng.tensor([2, 3, 8, 12]);
    const [avg] = await runOrtOp({ opType: 'AveragePool', inputs: [x], attributes: { kernel_shape: [4, 3], strides: [4, 3] } });
    expectClose(adaptiveAvgPool(x, [2, 4]), avg!);
    const [max] = await runOrtOp({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [4, 3], strides: [4, 3] } });
    expectExact(adaptiveMaxPool(x, [2, 4]), max!);
  });

  it('uses overlapping windows [floor(i*In/Out), ceil((i+1)*In/Out)) otherwise (hand-computed)', () => {
    // In 5 -> Out 3: windows [0,2), [1,4), [3,5)
    const x = Tensor.from('float32', [1, 1, 5], [1, 2, 3, 4, 10]);
    expect(adaptiveAvgPool(x, 3).toArray()).toEqual([1.5, 3, 7]);
    expect(adaptiveMaxPool(x, [3]).toArray()).toEqual([2, 4, 10]);
    // In 3 -> Out 5: windows [0,1) [0,2) [1,2) [1,3) [2,3)
    const y = Tensor.from('float32', [1, 3], [2, 4, 9]);
    expect(adaptiveAvgPool(y, [5]).toArray()).toEqual([2, 3, 4, 6.5, 9]);
    const [v, i] = adaptiveMaxPoolWithIndices(y, [5]);
    expect(v.toArray()).toEqual([2, 4, 4, 9, 9]);
    expect(i.dtype).toBe('int64');
    expect(i.toArray()).toEqual([0, 1, 1, 2, 2]);
  });

  it('pools 2-D windows and keeps None sizes (hand-computed)', () => {
    // 3x2 -> (2, None): rows [0,2) and [1,3); columns kept
    const x = Tensor.from('float32', [1, 1, 3, 2], [1, 2, 3, 4, 5, 6]);
    const y = adaptiveAvgPool(x, [2, null]);
    expect(y.shape).toEqual([1, 1, 2, 2]);
    expect(y.toArray()).toEqual([2, 3, 4, 5]);
    expect(adaptiveAvgPool(rng.tensor([1, 2, 4, 4, 4]), [1, 2, 1]).shape).toEqual([1, 2, 1, 2, 1]);
  });

  it('matches ONNX GlobalAveragePool / GlobalMaxPool', async () => {
    const x = rng.tensor([2, 3, 5, 7]);
    const [avg] = await runOrtOp({ opType: 'GlobalAveragePool', inputs: [x] });
    const [max] = await runOrtOp({ opType: 'GlobalMaxPool', inputs: [x] });
    expectClose(globalAvgPool(x), avg!);
    expectExact(globalMaxPool(x), max!);
    expectClose(adaptiveAvgPool(x, [1, 1]), avg!);
    const x3 = rng.tensor([1, 4, 3, 2, 2]);
    const [avg3] = await runOrtOp({ opType: 'GlobalAveragePool', inputs: [x3] });
    expectClose(globalAvgPool(x3), avg3!);
  });

  it('rejects bad output sizes', () => {
    expect(() => adaptiveAvgPool(rng.tensor([1, 1, 4]), [-1])).toThrow(InvalidArgumentError);
    expect(() => globalAvgPool(rng.tensor([3]))).toThrow(/globalAvgPool/);
  });
});
