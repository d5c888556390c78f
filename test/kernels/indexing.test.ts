import { BadInputError, InvalidArgumentError } from '../../lib/errors';
import type { DType } from '../../lib/ir/dtype';
import {
  embedding,
  gather,
  gatherElements,
  gatherND,
  indexSelect,
  indexTensor,
  oneHot,
  resize,
  scatterElements,
  scatterND,
  topk,
  type CoordinateTransform,
  type NearestMode,
} from '../../lib/kernels/indexing';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact } from '../helpers/compare';
import { floatsAttr, runOrtOp } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const i64 = (values: readonly number[], shape: number[] = [values.length]): Tensor => Tensor.from('int64', shape, values.map(BigInt));

function randomOf(rng: Random, shape: number[], dtype: DType): Tensor {
  if (dtype === 'int64') return rng.intTensor(shape, -(2 ** 50), 2 ** 50, 'int64');
  if (dtype === 'bool') return rng.intTensor(shape, 0, 1, 'bool');
  return rng.tensor(shape, dtype);
}

describe('gather', () => {
  const rng = new Random(51);
  it.each([
    [[5, 4, 3], 0, [2, 3]],
    [[5, 4, 3], 1, []],
    [[5, 4, 3], -1, [4]],
    [[5, 4, 3], 2, [2, 0]],
    [[7], 0, [3, 1, 2]],
  ])('matches ONNX Gather for data %j, axis %d, indices %j', async (shape, axis, idxShape) => {
    for (const dtype of ['float32', 'int64', 'float16', 'bool'] as DType[]) {
      const data = randomOf(rng, shape, dtype);
      const dim = shape[axis < 0 ? axis + shape.length : axis]!;
      const indices = rng.intTensor(idxShape, -dim, dim - 1);
      const [expected] = await runOrtOp({ opType: 'Gather', inputs: [data, indices], attributes: { axis } });
      expectExact(gather(data, indices, axis), expected!);
    }
  });

  it('accepts int32 indices and gathers complex pairs', async () => {
    const data = rng.tensor([4, 2]);
    const indices = Tensor.from('int32', [2], [3, -4]);
    const [expected] = await runOrtOp({ opType: 'Gather', inputs: [data, indices] });
    expectExact(gather(data, indices), expected!);
    const c = Tensor.from('complex64', [3], [1, 2, 3, 4, 5, 6]);
    expect(gather(c, i64([2, 0])).toArray()).toEqual([5, 6, 1, 2]);
  });

  it('names an out-of-range index', () => {
    expect(() => gather(rng.tensor([3, 2]), i64([0, 3]))).toThrow(/index 3 is out of range/);
    expect(() => gather(rng.tensor([3, 2]), i64([-4]))).toThrow(BadInputError);
    expect(() => gather(rng.tensor([3, 2]), Tensor.from('int64', [1], [2n ** 63n - 1n]))).toThrow('index 9223372036854775807 is out of range [-3, 3)');
    expect(() => gather(rng.tensor([3]), rng.tensor([1]))).toThrow(/integer/);
  });

  it('implements index_select and embedding as Gather', async () => {
    const weight = rng.tensor([10, 4]);
    const ids = rng.intTensor([2, 3], 0, 9);
    const [expected] = await runOrtOp({ opType: 'Gather', inputs: [weight, ids] });
    expectExact(embedding(weight, ids), expected!);
    const t = rng.tensor([3, 5]);
    const [sel] = await runOrtOp({ opType: 'Gather', inputs: [t, i64([4, 0, 4])], attributes: { axis: 1 } });
    expectExact(indexSelect(t, 1, i64([4, 0, 4])), sel!);
    expect(indexSelect(t, 0, Tensor.scalar('int64', 2)).shape).toEqual([1, 5]);
  });
});

describe('gatherElements / scatterElements', () => {
  const rng = new Random(52);
  it.each([0, 1, -1])('matches ONNX GatherElements on axis %d', async (axis) => {
    const data = randomOf(rng, [4, 5, 3], 'int64');
    const shape = [3, 5, 2];
    const dim = 4 + (axis === 0 ? 0 : axis === 1 ? 1 : -1);
    const indices = rng.intTensor(shape, -dim, dim - 1);
    const [expected] = await runOrtOp({ opType: 'GatherElements', inputs: [data, indices], attributes: { axis } });
    expectExact(gatherElements(data, indices, axis), expected!);
  });

  it.each([
    ['none', 17],
    ['add', 17],
    ['mul', 17],
    ['max', 18],
    ['min', 18],
  ] as const)('matches ONNX ScatterElements with reduction %s', async (reduction, opset) => {
    const data = rng.tensor([4, 5]);
    // distinct indices per column for 'none' (duplicates are order-dependent there)
    const indices = reduction === 'none' ? i64([3, 0, 1, 2, 0, 1, 2, 0, 3, 1], [2, 5]) : rng.intTensor([3, 5], -4, 3);
    const updates = rng.tensor(indices.shape as number[]);
    const [expected] = await runOrtOp({ opType: 'ScatterElements', inputs: [data, indices, updates], attributes: { axis: 0, reduction }, opset });
    expectClose(scatterElements(data, indices, updates, 0, reduction), expected!);
  });

  it('scatters int64 exactly along the last axis and leaves the input untouched', async () => {
    const data = randomOf(rng, [3, 4], 'int64');
    const before = (data.data as BigInt64Array).slice();
    const indices = i64([3, 1, 0, 2, 2, 0], [3, 2]);
    const updates = randomOf(rng, [3, 2], 'int64');
    const [expected] = await runOrtOp({ opType: 'ScatterElements', inputs: [data, indices, updates], attributes: { axis: -1 } });
    expectExact(scatterElements(data, indices, updates, -1), expected!);
    expect(data.data).toEqual(before);
  });

  it('rejects shape mismatches', () => {
    expect(() => gatherElements(rng.tensor([2, 2]), i64([0, 1]), 0)).toThrow(/rank/);
    expect(() => scatterElements(rng.tensor([2, 2]), i64([0, 1], [1, 2]), rng.tensor([2, 1]), 0)).toThrow(/updates/);
  });
});

describe('gatherND / scatterND', () => {
  const rng = new Random(53);
  it.each([
    [[4, 3, 2], [5, 2], 0],
    [[4, 3, 2], [2, 3], 0],
    [[4, 3], [2, 2, 1], 0],
    [[2, 3, 4], [2, 1], 1],
    [[2, 3, 4], [2, 5, 2], 1],
  ])('matches ONNX GatherND for data %j, indices %j, batch_dims %d', async (shape, idxShape, batchDims) => {
    const data = randomOf(rng, shape, 'int64');
    const k = idxShape[idxShape.length - 1]!;
    const values: number[] = [];
    const count = idxShape.reduce((p, d) => p * d, 1) / k;
    for (let t = 0; t < count; t++) for (let j = 0; j < k; j++) values.push(rng.int(-shape[batchDims + j]!, shape[batchDims + j]! - 1));
    const indices = i64(values, idxShape);
    const [expected] = await runOrtOp({ opType: 'GatherND', inputs: [data, indices], attributes: { batch_dims: batchDims } });
    expectExact(gatherND(data, indices, batchDims), expected!);
  });

  it.each([
    ['none', 17],
    ['add', 17],
    ['mul', 17],
    ['max', 18],
  ] as const)('matches ONNX ScatterND with reduction %s', async (reduction, opset) => {
    const data = rng.tensor([4, 3, 2]);
    const indices = i64([2, 0, -4, 1, 1, 2], [3, 2]);
    const updates = rng.tensor([3, 2]);
    const [expected] = await runOrtOp({ opType: 'ScatterND', inputs: [data, indices, updates], attributes: { reduction }, opset });
    expectClose(scatterND(data, indices, updates, reduction), expected!);
    const rows = i64([3, 0], [2, 1]);
    const rowUpdates = rng.tensor([2, 3, 2]);
    const [e2] = await runOrtOp({ opType: 'ScatterND', inputs: [data, rows, rowUpdates], attributes: { reduction }, opset });
    expectClose(scatterND(data, rows, rowUpdates, reduction), e2!);
  });

  it('rejects updates of the wrong shape', () => {
    expect(() => scatterND(rng.tensor([4, 3]), i64([1], [1, 1]), rng.tensor([1, 2]))).toThrow(/\[1, 3\]/);
  });
});

describe('indexTensor (advanced indexing)', () => {
  const rng = new Random(54);
  const x = Tensor.from('int32', [2, 3, 4], Array.from({ length: 24 }, (_, i) => i));

  it('matches Gather for one index tensor', async () => {
    const t = rng.tensor([3, 5, 2]);
    const idx = i64([4, -1, 0, 2], [2, 2]);
    const [expected] = await runOrtOp({ opType: 'Gather', inputs: [t, idx], attributes: { axis: 1 } });
    expectExact(indexTensor(t, [null, idx]), expected!);
    const rows = i64([2, -3, 1]);
    const [first] = await runOrtOp({ opType: 'Gather', inputs: [t, rows] });
    expectExact(indexTensor(t, [rows]), first!);
  });

  it('places adjacent broadcast index dims in place (hand-computed)', () => {
    // x[:, [0, 2], [1, 3]] -> shape [2, 2]: x[b, 0, 1], x[b, 2, 3]
    const y = indexTensor(x, [null, i64([0, 2]), i64([1, 3])]);
    expect(y.shape).toEqual([2, 2]);
    expect(y.toArray()).toEqual([1, 11, 13, 23]);
    // broadcasting [2,1] with [3] -> [2, 3], then the trailing dim of 4
    const z = indexTensor(x, [i64([1, 0], [2, 1]), i64([0, 1, 2])]);
    expect(z.shape).toEqual([2, 3, 4]);
    expect(z.toArray().slice(0, 8)).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
  });

  it('puts non-adjacent index dims first (hand-computed)', () => {
    // x[[0, 1], :, [3, 0]] -> shape [2, 3]: x[0, :, 3], x[1, :, 0]
    const y = indexTensor(x, [i64([0, 1]), null, i64([3, 0])]);
    expect(y.shape).toEqual([2, 3]);
    expect(y.toArray()).toEqual([3, 7, 11, 12, 16, 20]);
  });

  it('expands bool masks into their nonzero coordinates', () => {
    const mask = Tensor.from('bool', [2, 3], [1, 0, 0, 0, 1, 1]);
    const y = indexTensor(x, [mask]);
    expect(y.shape).toEqual([3, 4]);
    expect(y.toArray()).toEqual([0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23]);
    const col = Tensor.from('bool', [4], [0, 1, 0, 1]);
    expect(indexTensor(x, [null, null, col]).toArray().slice(0, 4)).toEqual([1, 3, 5, 7]);
    expect(() => indexTensor(x, [Tensor.from('bool', [3], [1, 0, 1])])).toThrow(/mask/);
  });

  it('names out-of-range indices', () => {
    expect(() => indexTensor(x, [null, i64([3])])).toThrow(/index 3/);
  });
});

describe('oneHot', () => {
  const rng = new Random(55);
  it.each([-1, 0, 1])('matches ONNX OneHot on axis %d', async (axis) => {
    const indices = i64([0, 3, -1, 5, -5, 2], [2, 3]);
    const values = Tensor.from('float32', [2], [-0.5, 2]);
    const depth = Tensor.from('int64', [], [4n]);
    const [expected] = await runOrtOp({ opType: 'OneHot', inputs: [indices, depth, values], attributes: { axis } });
    expectExact(oneHot(indices, 4, values, axis), expected!);
  });

  it('copies int64 values exactly (torch one_hot)', () => {
    const y = oneHot(i64([2, 0]), 3, Tensor.from('int64', [2], [0n, 1n]));
    expect(y.dtype).toBe('int64');
    expect(y.toArray()).toEqual([0, 0, 1, 1, 0, 0]);
    expect(() => oneHot(i64([1]), 3, rng.tensor([3]))).toThrow(/off, on/);
  });
});

describe('topk', () => {
  const rng = new Random(56);
  it.each([
    [[4, 9], 3, -1, 1],
    [[4, 9], 3, 1, 0],
    [[6, 5, 3], 2, 0, 1],
    [[6, 5, 3], 5, 1, 0],
    [[7], 0, 0, 1],
  ])('matches ONNX TopK for %j, k %d, axis %d, largest %d', async (shape, k, axis, largest) => {
    const x = rng.tensor(shape);
    const [values, indices] = await runOrtOp({ opType: 'TopK', inputs: [x, i64([k])], attributes: { axis, largest, sorted: 1 }, outputCount: 2 });
    const [v, i] = topk(x, k, axis, largest === 1);
    expectExact(v, values!);
    expectExact(i, indices!);
  });

  it('keeps ties in index order', async () => {
    const x = Tensor.from('int64', [2, 6], [3n, 1n, 3n, 2n, 3n, 1n, 5n, 5n, 5n, 5n, 5n, 5n]);
    for (const largest of [1, 0]) {
      const [values, indices] = await runOrtOp({ opType: 'TopK', inputs: [x, i64([4])], attributes: { largest }, outputCount: 2 });
      const [v, i] = topk(x, 4, -1, largest === 1);
      expectExact(v, values!);
      expectExact(i, indices!);
    }
  });

  it('orders NaN as the largest value and compares big int64 exactly', () => {
    const x = Tensor.from('float32', [4], [1, NaN, 3, 2]);
    expect(topk(x, 2)[0].toArray()).toEqual([NaN, 3]);
    expect(topk(x, 2, 0, false)[1].toArray()).toEqual([0, 3]);
    const big = Tensor.from('int64', [2], [2n ** 62n, 2n ** 62n + 1n]);
    expect([...(topk(big, 1)[0].data as BigInt64Array)]).toEqual([2n ** 62n + 1n]);
    expect(() => topk(x, 5)).toThrow(/k = 5/);
  });
});

describe('resize', () => {
  const rng = new Random(57);
  const sizes = [
    [8, 6],
    [3, 2],
    [5, 9],
    [1, 1],
    [4, 4],
  ];
  const nearestModes: [CoordinateTransform, NearestMode][] = [
    ['asymmetric', 'floor'],
    ['half_pixel', 'round_prefer_floor'],
    ['half_pixel', 'round_prefer_ceil'],
    ['align_corners', 'round_prefer_floor'],
    ['pytorch_half_pixel', 'ceil'],
  ];
  it.each(nearestModes)('matches ONNX Resize nearest (%s, %s)', async (ctm, nearestMode) => {
    for (const size of sizes) {
      // onnxruntime's Resize has no int64 kernel; int32 still shows the copy is exact
      const x = ctm === 'asymmetric' ? rng.intTensor([2, 3, 4, 4], -1000, 1000, 'int32') : rng.tensor([2, 3, 4, 4]);
      const [expected] = await runOrtOp({
        opType: 'Resize',
        inputs: [x, null, null, i64([2, 3, ...size])],
        attributes: { mode: 'nearest', coordinate_transformation_mode: ctm, nearest_mode: nearestMode },
      });
      expectExact(resize(x, size, { mode: 'nearest', coordinateTransformationMode: ctm, nearestMode }), expected!);
    }
  });

  it.each(['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric'] as CoordinateTransform[])(
    'matches ONNX Resize linear (%s)',
    async (ctm) => {
      for (const size of sizes) {
        const x = rng.tensor([1, 2, 4, 5]);
        const [expected] = await runOrtOp({
          opType: 'Resize',
          inputs: [x, null, null, i64([1, 2, ...size])],
          attributes: { mode: 'linear', coordinate_transformation_mode: ctm },
        });
        expectClose(resize(x, [1, 2, ...size], { mode: 'linear', coordinateTransformationMode: ctm }), expected!);
      }
    },
  );

  it('uses given scale factors in the coordinate transform (ONNX scales input)', async () => {
    const x = rng.tensor([1, 1, 5, 7]);
    const scales = [1, 1, 1.7, 0.6];
    for (const mode of ['nearest', 'linear'] as const) {
      const [expected] = await runOrtOp({
        opType: 'Resize',
        inputs: [x, null, Tensor.from('float32', [4], scales)],
        attributes: { mode, coordinate_transformation_mode: 'half_pixel', nearest_mode: 'floor' },
      });
      const out = [Math.floor(5 * 1.7), Math.floor(7 * 0.6)];
      // onnxruntime divides in float32, where 1.5 / 0.6f rounds to exactly 2.5; the decimal
      // scales reproduce that in float64 (Math.fround(0.6) would land just below 2.5)
      const got = resize(x, out, { mode, coordinateTransformationMode: 'half_pixel', nearestMode: 'floor', scales: [1.7, 0.6] });
      expectClose(got, expected!);
    }
  });

  it('upsamples like PyTorch nearest (asymmetric, floor) and bilinear align_corners (hand-computed)', () => {
    const x = Tensor.from('float32', [1, 1, 2, 2], [1, 2, 3, 4]);
    expect(resize(x, [3, 3], { mode: 'nearest', coordinateTransformationMode: 'asymmetric', nearestMode: 'floor' }).toArray()).toEqual([
      1, 1, 2, 1, 1, 2, 3, 3, 4,
    ]);
    expect(resize(x, [3, 3], { mode: 'linear', coordinateTransformationMode: 'align_corners' }).toArray()).toEqual([
      1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4,
    ]);
  });

  it('rejects a size of the wrong length', () => {
    expect(() => resize(rng.tensor([1, 1, 2, 2]), [3])).toThrow(/size/);
  });

  it('marks float lists for attributes', () => {
    expect(floatsAttr([1, 2])).toEqual({ floats: [1, 2] });
  });
});
