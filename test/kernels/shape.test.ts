import { InvalidArgumentError } from '../../lib/errors';
import type { DType } from '../../lib/ir/dtype';
import {
  arange,
  concat,
  expand,
  expandBidirectional,
  flatten,
  flatten2d,
  flip,
  full,
  pad,
  padsFromTorch,
  permute,
  reshape,
  slice,
  sliceAxes,
  split,
  squeeze,
  tile,
  transpose,
  tril,
  triu,
  unsqueeze,
} from '../../lib/kernels/shape';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact } from '../helpers/compare';
import { floatAttr, runOrtOp } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const i64 = (values: readonly (number | bigint)[]): Tensor => Tensor.from('int64', [values.length], values.map((v) => BigInt(v)));
const scalarI64 = (v: number | bigint): Tensor => Tensor.from('int64', [], [BigInt(v)]);
const INT64_MAX = 9223372036854775807n;

/** A random tensor of any of the dtypes onnxruntime can move. */
function randomOf(rng: Random, shape: number[], dtype: DType): Tensor {
  if (dtype === 'int64') return rng.intTensor(shape, -(2 ** 40), 2 ** 40, 'int64');
  if (dtype === 'int32' || dtype === 'int8') return rng.intTensor(shape, -100, 100, dtype);
  if (dtype === 'bool') return rng.intTensor(shape, 0, 1, 'bool');
  return rng.tensor(shape, dtype, -10, 10);
}

const movedTypes: DType[] = ['float32', 'float16', 'int64', 'int32', 'bool', 'float64'];

describe('reshape', () => {
  const rng = new Random(1);
  it.each([
    [[2, 3, 4], [4, -1]],
    [[2, 3, 4], [0, -1]],
    [[2, 3, 4], [0, 0, 2, 2]],
    [[6], [1, 2, 3]],
    [[1], []],
  ])('matches ONNX Reshape (allowzero 0) for %j -> %j', async (inShape, target) => {
    const x = rng.tensor(inShape);
    const [expected] = await runOrtOp({ opType: 'Reshape', inputs: [x, { constant: i64(target) }] });
    expectExact(reshape(x, target, { copyZeroDims: true }), expected!);
  });

  it('treats 0 as a literal size (PyTorch)', () => {
    const x = new Tensor('float32', [0, 3]);
    expect(reshape(x, [3, 0]).shape).toEqual([3, 0]);
    // as in PyTorch, -1 is ambiguous when the other dims hold no elements
    expect(() => reshape(x, [0, -1, 3])).toThrow(/infer/);
  });

  it('copies int64 exactly and does not share the input buffer', () => {
    const x = i64([INT64_MAX, -INT64_MAX, 3n, 4n]);
    const y = reshape(x, [2, 2]);
    expect([...(y.data as BigInt64Array)]).toEqual([INT64_MAX, -INT64_MAX, 3n, 4n]);
    expect(y.data).not.toBe(x.data);
  });

  it('rejects bad targets', () => {
    const x = new Tensor('float32', [2, 3]);
    expect(() => reshape(x, [4, -1])).toThrow(InvalidArgumentError);
    expect(() => reshape(x, [-1, -1])).toThrow(/reshape/);
    expect(() => reshape(x, [5])).toThrow(/\[2, 3\]/);
  });
});

describe('permute / transpose', () => {
  const rng = new Random(2);
  it.each(movedTypes)('matches ONNX Transpose for %s', async (dtype) => {
    const x = randomOf(rng, [2, 3, 4, 5], dtype);
    const perm = [2, 0, 3, 1];
    const [expected] = await runOrtOp({ opType: 'Transpose', inputs: [x], attributes: { perm } });
    expectExact(permute(x, perm), expected!);
    expectExact(permute(x, [-2, 0, -1, 1]), expected!);
  });

  it('transposes two dims with negative axes', async () => {
    const x = rng.tensor([3, 1, 4]);
    const [expected] = await runOrtOp({ opType: 'Transpose', inputs: [x], attributes: { perm: [2, 1, 0] } });
    expectExact(transpose(x, 0, -1), expected!);
  });

  it('moves bfloat16 bits unchanged (onnxruntime has no bfloat16: checked against the input bits)', () => {
    const bits = Uint16Array.from([0x3f80, 0x7fc1, 0xff80, 0x0001, 0x8000, 0x4049]);
    const x = new Tensor('bfloat16', [2, 3], bits);
    expect([...(permute(x, [1, 0]).data as Uint16Array)]).toEqual([0x3f80, 0x0001, 0x7fc1, 0x8000, 0xff80, 0x4049]);
    expect([...(slice(x, 1, -1, undefined, -2).data as Uint16Array)]).toEqual([0xff80, 0x3f80, 0x4049, 0x0001]);
  });

  it('moves complex pairs together', () => {
    const x = Tensor.from('complex64', [2, 2], [1, 10, 2, 20, 3, 30, 4, 40]);
    expect(permute(x, [1, 0]).toArray()).toEqual([1, 10, 3, 30, 2, 20, 4, 40]);
  });

  it('rejects a bad perm', () => {
    expect(() => permute(new Tensor('float32', [2, 3]), [0, 0])).toThrow(/permute/);
    expect(() => permute(new Tensor('float32', [2, 3]), [0])).toThrow(InvalidArgumentError);
  });
});

describe('expand', () => {
  const rng = new Random(3);
  it.each([
    [[3, 1], [2, 3, 4]],
    [[1], [5]],
    [[2, 1, 3], [1, 4, 1]],
    [[4], [2, 1]],
  ])('matches ONNX Expand for %j with %j', async (inShape, target) => {
    for (const dtype of ['float32', 'int64', 'float16'] as DType[]) {
      const x = randomOf(rng, inShape, dtype);
      const [expected] = await runOrtOp({ opType: 'Expand', inputs: [x, i64(target)] });
      expectExact(expandBidirectional(x, target), expected!);
    }
  });

  it('keeps -1 dims and adds leading dims (PyTorch expand)', async () => {
    const x = rng.tensor([3, 1]);
    const [expected] = await runOrtOp({ opType: 'Expand', inputs: [x, i64([2, 3, 4])] });
    expectExact(expand(x, [2, -1, 4]), expected!);
  });

  it('expands to an empty shape and rejects non-1 mismatches', () => {
    expect(expand(new Tensor('float32', [1, 3]), [0, 3]).shape).toEqual([0, 3]);
    expect(() => expand(new Tensor('float32', [2, 3]), [4, 3])).toThrow(/\[2, 3\]/);
    expect(() => expand(new Tensor('float32', [2, 3]), [3])).toThrow(InvalidArgumentError);
  });
});

describe('squeeze / unsqueeze / flatten', () => {
  const rng = new Random(4);
  it('matches ONNX Squeeze with and without axes', async () => {
    const x = rng.tensor([1, 3, 1, 2, 1]);
    const [all] = await runOrtOp({ opType: 'Squeeze', inputs: [x] });
    expectExact(squeeze(x), all!);
    const [some] = await runOrtOp({ opType: 'Squeeze', inputs: [x, i64([0, -1])] });
    expectExact(squeeze(x, [0, -1]), some!);
  });

  it('leaves non-1 dims alone like PyTorch', () => {
    expect(squeeze(new Tensor('float32', [2, 1]), 0).shape).toEqual([2, 1]);
    expect(squeeze(Tensor.scalar('float32', 3), 0).shape).toEqual([]);
  });

  it('matches ONNX Unsqueeze, with axes indexing the output', async () => {
    const x = randomOf(rng, [3, 4], 'int64');
    const [expected] = await runOrtOp({ opType: 'Unsqueeze', inputs: [x, i64([0, 3, -1])] });
    expectExact(unsqueeze(x, [0, 3, -1]), expected!);
    expect(unsqueeze(x, -1).shape).toEqual([3, 4, 1]);
    expect(unsqueeze(Tensor.scalar('float32', 1), 0).shape).toEqual([1]);
    expect(() => unsqueeze(x, 3)).toThrow(/unsqueeze/);
  });

  it('matches ONNX Flatten with flatten2d', async () => {
    const x = rng.tensor([2, 3, 4, 5]);
    for (const axis of [0, 2, -1, 4]) {
      const [expected] = await runOrtOp({ opType: 'Flatten', inputs: [x], attributes: { axis } });
      expectExact(flatten2d(x, axis), expected!);
    }
  });

  it('flattens a range of dims like torch.flatten', () => {
    const x = rng.tensor([2, 3, 4, 5]);
    expect(flatten(x).shape).toEqual([120]);
    expect(flatten(x, 1).shape).toEqual([2, 60]);
    expect(flatten(x, 1, -2).shape).toEqual([2, 12, 5]);
    expect(flatten(Tensor.scalar('float32', 2)).shape).toEqual([1]);
    expect(flatten(x, 1, 2).toArray()).toEqual(x.toArray());
    expect(() => flatten(x, 2, 1)).toThrow(InvalidArgumentError);
  });
});

describe('concat / split', () => {
  const rng = new Random(5);
  it.each(movedTypes)('matches ONNX Concat for %s', async (dtype) => {
    const parts = [randomOf(rng, [2, 1, 3], dtype), randomOf(rng, [2, 4, 3], dtype), randomOf(rng, [2, 0, 3], dtype)];
    const [expected] = await runOrtOp({ opType: 'Concat', inputs: parts, attributes: { axis: -2 } });
    expectExact(concat(parts, -2), expected!);
  });

  it('concatenates along the first and last axes', async () => {
    const a = rng.tensor([2, 3]);
    const b = rng.tensor([2, 3]);
    for (const axis of [0, 1]) {
      const [expected] = await runOrtOp({ opType: 'Concat', inputs: [a, b], attributes: { axis } });
      expectExact(concat([a, b], axis), expected!);
    }
  });

  it('skips legacy empty 1-D tensors and rejects mismatches', () => {
    const a = rng.tensor([2, 3]);
    expect(concat([a, new Tensor('float32', [0])], 0).shape).toEqual([2, 3]);
    expect(() => concat([a, rng.tensor([3, 2])], 0)).toThrow(/concat/);
    expect(() => concat([a, new Tensor('float64', [2, 3])], 0)).toThrow(/float64/);
    expect(() => concat([], 0)).toThrow(InvalidArgumentError);
  });

  it('matches ONNX Split with explicit sizes', async () => {
    const x = randomOf(rng, [3, 7, 2], 'int64');
    const sizes = [2, 0, 4, 1];
    const expected = await runOrtOp({ opType: 'Split', inputs: [x, i64(sizes)], attributes: { axis: 1 }, outputCount: 4 });
    const got = split(x, sizes, -2);
    expect(got).toHaveLength(4);
    got.forEach((g, i) => expectExact(g, expected[i]!));
  });

  it('splits by chunk size like torch.split', async () => {
    const x = rng.tensor([7, 2]);
    const expected = await runOrtOp({ opType: 'Split', inputs: [x, i64([3, 3, 1])], outputCount: 3 });
    split(x, 3).forEach((g, i) => expectExact(g, expected[i]!));
    expect(split(new Tensor('float32', [0, 2]), 2).map((t) => t.shape)).toEqual([[0, 2]]);
    expect(() => split(x, [3, 3])).toThrow(/split/);
  });
});

describe('slice', () => {
  const rng = new Random(6);
  const x = rng.tensor([5, 6, 4]);
  const cases: [number, number | bigint, number | bigint, number][] = [
    [0, 1, 4, 1],
    [1, -4, -1, 2],
    [2, 0, INT64_MAX, 1],
    [1, -100, 100, 3],
    [1, 5, 1, -2],
    [0, -1, -INT64_MAX, -1],
    [1, INT64_MAX, 2, -1],
    [2, 10, -10, -3],
    [1, 4, 2, 1],
    [0, -1, -1, -1],
    [2, 2, 2, 1],
  ];
  it.each(cases)('matches ONNX Slice on axis %d from %s to %s step %d', async (axis, start, end, step) => {
    const [expected] = await runOrtOp({ opType: 'Slice', inputs: [x, i64([start]), i64([end]), i64([axis]), i64([step])] });
    expectExact(slice(x, axis, start, end, step), expected!);
    expectExact(slice(x, axis - 3, start, end, step), expected!);
  });

  it('slices several axes at once and moves int64 and float16 exactly', async () => {
    for (const dtype of ['int64', 'float16', 'bool'] as DType[]) {
      const t = randomOf(rng, [4, 5, 6], dtype);
      const starts = [1, -1, 0];
      const ends = [100, -6, 5];
      const axes = [0, 2, 1];
      const steps = [2, -2, 1];
      const [expected] = await runOrtOp({ opType: 'Slice', inputs: [t, i64(starts), i64(ends), i64(axes), i64(steps)] });
      expectExact(sliceAxes(t, starts, ends, axes, steps), expected!);
    }
  });

  it('defaults to the whole axis and reverses it with only a negative step', () => {
    const t = Tensor.from('int32', [4], [1, 2, 3, 4]);
    expect(slice(t, 0).toArray()).toEqual([1, 2, 3, 4]);
    expect(slice(t, 0, undefined, undefined, -1).toArray()).toEqual([4, 3, 2, 1]);
    expect(slice(t, 0, 1).toArray()).toEqual([2, 3, 4]);
  });

  it('rejects step 0 and bad axes', () => {
    expect(() => slice(x, 0, 0, 1, 0)).toThrow(/step/);
    expect(() => slice(x, 3, 0, 1)).toThrow(/axis 3/);
  });
});

describe('tile / flip', () => {
  const rng = new Random(7);
  it.each(movedTypes)('matches ONNX Tile for %s', async (dtype) => {
    const x = randomOf(rng, [2, 3, 1], dtype);
    const repeats = [2, 1, 3];
    const [expected] = await runOrtOp({ opType: 'Tile', inputs: [x, i64(repeats)] });
    expectExact(tile(x, repeats), expected!);
  });

  it('adds leading dims like torch.repeat and pads repeats like torch.tile', async () => {
    const x = rng.tensor([2, 3]);
    const [expected] = await runOrtOp({ opType: 'Tile', inputs: [reshape(x, [1, 2, 3]), i64([2, 2, 1])] });
    expectExact(tile(x, [2, 2, 1]), expected!);
    const [same] = await runOrtOp({ opType: 'Tile', inputs: [x, i64([1, 2])] });
    expectExact(tile(x, [2]), same!);
    expect(tile(x, [0, 1]).shape).toEqual([0, 3]);
  });

  it('flips like ONNX Slice with step -1', async () => {
    for (const dtype of ['float32', 'int64', 'float16'] as DType[]) {
      const x = randomOf(rng, [3, 4, 5], dtype);
      const [expected] = await runOrtOp({
        opType: 'Slice',
        inputs: [x, i64([-1, -1]), i64([-INT64_MAX, -INT64_MAX]), i64([0, 2]), i64([-1, -1])],
      });
      expectExact(flip(x, [0, -1]), expected!);
    }
    expect(flip(new Tensor('float32', [0, 2]), [0]).shape).toEqual([0, 2]);
  });
});

describe('pad', () => {
  const rng = new Random(8);
  it.each([
    ['constant', [1, 0, 2, 0, 3, 1]],
    ['constant', [0, -1, 2, 1, 0, -2]],
    ['reflect', [0, 2, 1, 0, 3, 2]],
    ['edge', [1, 3, 0, 2, 0, 4]],
  ] as const)('matches ONNX Pad (%s, pads %j)', async (mode, pads) => {
    const x = rng.tensor([2, 4, 5]);
    const [expected] = await runOrtOp({ opType: 'Pad', inputs: [x, i64(pads), Tensor.scalar('float32', 1.5)], attributes: { mode } });
    expectExact(pad(x, pads, mode, 1.5), expected!);
  });

  it('matches ONNX Pad wrap mode (opset 19)', async () => {
    const x = rng.tensor([3, 4]);
    const pads = [2, 1, 1, 3];
    const [expected] = await runOrtOp({ opType: 'Pad', inputs: [x, i64(pads)], attributes: { mode: 'wrap' }, opset: 19 });
    expectExact(pad(x, pads, 'wrap'), expected!);
  });

  it('pads int64 with an exact bigint constant and float16 bits', async () => {
    const x = randomOf(rng, [2, 3], 'int64');
    const [expected] = await runOrtOp({ opType: 'Pad', inputs: [x, i64([1, 0, 0, 2]), scalarI64(INT64_MAX)] });
    expectExact(pad(x, [1, 0, 0, 2], 'constant', INT64_MAX), expected!);
    const h = randomOf(rng, [2, 3], 'float16');
    const [eh] = await runOrtOp({ opType: 'Pad', inputs: [h, i64([0, 1, 1, 1])], attributes: { mode: 'reflect' } });
    expectExact(pad(h, [0, 1, 1, 1], 'reflect'), eh!);
  });

  it('converts torch F.pad lists (last dim first)', () => {
    expect(padsFromTorch([1, 2], 3)).toEqual([0, 0, 1, 0, 0, 2]);
    expect(padsFromTorch([1, 2, 3, 4], 3)).toEqual([0, 3, 1, 0, 4, 2]);
    const x = Tensor.from('int32', [1, 3], [1, 2, 3]);
    expect(pad(x, padsFromTorch([2, 1], 2), 'reflect').toArray()).toEqual([3, 2, 1, 2, 3, 2]);
    expect(pad(x, padsFromTorch([2, 1], 2), 'wrap').toArray()).toEqual([2, 3, 1, 2, 3, 1]);
  });

  it('pads complex with (value, 0) pairs', () => {
    const x = Tensor.from('complex64', [1], [1, 2]);
    expect(pad(x, [1, 1], 'constant', 7).toArray()).toEqual([7, 0, 1, 2, 7, 0]);
  });

  it('rejects bad pads', () => {
    expect(() => pad(rng.tensor([2]), [1])).toThrow(/pad/);
    expect(() => pad(rng.tensor([2]), [-2, -1])).toThrow(InvalidArgumentError);
    expect(() => pad(new Tensor('float32', [0]), [1, 0], 'edge')).toThrow(/empty/);
  });
});

describe('triu / tril', () => {
  const rng = new Random(9);
  it.each([0, 1, -1, 3, -5])('matches ONNX Trilu with k = %d', async (k) => {
    for (const dtype of ['float32', 'int64'] as DType[]) {
      const x = randomOf(rng, [2, 4, 5], dtype);
      const [upper] = await runOrtOp({ opType: 'Trilu', inputs: [x, scalarI64(k)], attributes: { upper: 1 } });
      const [lower] = await runOrtOp({ opType: 'Trilu', inputs: [x, scalarI64(k)], attributes: { upper: 0 } });
      expectExact(triu(x, k), upper!);
      expectExact(tril(x, k), lower!);
    }
  });

  it('needs two dims', () => {
    expect(() => triu(rng.tensor([3]))).toThrow(/triu/);
  });
});

describe('arange / full', () => {
  it.each([
    [0, 10, 3],
    [5, -3, -2],
    [2, 2, 1],
    [3, 1, 1],
  ])('matches ONNX Range on int64 (%d, %d, %d)', async (start, limit, delta) => {
    const [expected] = await runOrtOp({ opType: 'Range', inputs: [scalarI64(start), scalarI64(limit), scalarI64(delta)] });
    expectExact(arange(start, limit, delta), expected!);
  });

  it.each([
    [0, 1, 0.1],
    [-1.5, 2.25, 0.5],
    [1, -1, -0.3],
  ])('matches ONNX Range on float32 (%d, %d, %d)', async (start, limit, delta) => {
    const f = (v: number) => Tensor.scalar('float32', v);
    const [expected] = await runOrtOp({ opType: 'Range', inputs: [f(start), f(limit), f(delta)] });
    // onnxruntime accumulates start + i*delta in float32 from float32-rounded inputs
    const got = arange(Math.fround(start), Math.fround(limit), Math.fround(delta), 'float32');
    expectClose(got, expected!, { rtol: 1e-6, atol: 1e-6 });
  });

  it('keeps large int64 values exact', () => {
    const big = 2n ** 60n;
    expect([...(arange(big, big + 6n, 2n).data as BigInt64Array)]).toEqual([big, big + 2n, big + 4n]);
    expect(arange(0, 5).dtype).toBe('int64');
    expect(arange(0, 1, 0.25).toArray()).toEqual([0, 0.25, 0.5, 0.75]);
    expect(arange(0, 3, 1, 'float64').toArray()).toEqual([0, 1, 2]);
    expect(() => arange(0, 3, 0)).toThrow(InvalidArgumentError);
  });

  it('matches ONNX ConstantOfShape', async () => {
    const [expected] = await runOrtOp({ opType: 'ConstantOfShape', inputs: [i64([2, 3])], attributes: { value: Tensor.from('float32', [1], [2.5]) } });
    expectExact(full([2, 3], 2.5, 'float32'), expected!);
    const [e64] = await runOrtOp({ opType: 'ConstantOfShape', inputs: [i64([4])], attributes: { value: Tensor.from('int64', [1], [INT64_MAX]) } });
    expectExact(full([4], INT64_MAX, 'int64'), e64!);
    expect(full([2], 1.5, 'complex64').toArray()).toEqual([1.5, 0, 1.5, 0]);
    expect(full([2], true, 'bool').toArray()).toEqual([1, 1]);
    expect(full([0, 3], 1, 'float16').size).toBe(0);
  });

  it('uses the float attribute marker', () => {
    expect(floatAttr(1)).toEqual({ float: 1 });
  });
});
