/**
 * NN converters: reductions (sum/mean/prod/amax/amin/max/min), arg-extrema, max/min.dim,
 * logsumexp, linalg_vector_norm, softmax/log_softmax, cumulative sums and top-k, converted
 * and run on the reference backend against the interpreter.
 */
import { Tensor } from '../../lib/ir/tensor';
import { check, f16, f32, layerKinds, refused, typed } from './nn-helpers';

describe('sum / mean / prod', () => {
  test.each([
    ['dims [1], keepdim', [1], true],
    ['negative dim', [-1], false],
    ['two dims, one negative', [0, -1], true],
    ['all dims (null)', null, false],
    ['all dims ([])', [], true],
  ] as const)('sum.dim_IntList float32 %s', async (_, dim, keepdim) => {
    await check('aten.sum.dim_IntList', [f32(2, 3, 4)], ([x]) => ({ self: x!, dim: dim === null ? null : [...dim], keepdim }));
  });

  test('sum of int32 gives int64 (the IR type), bool too', async () => {
    await check('aten.sum.dim_IntList', [typed('int32', 3, 5)], ([x]) => ({ self: x!, dim: [1], keepdim: false }));
    await check('aten.sum.dim_IntList', [typed('bool', 3, 5)], ([x]) => ({ self: x!, dim: [-2], keepdim: true }));
    await check('aten.sum.default', [typed('int64', 4, 2)], ([x]) => ({ self: x! }));
  });

  test('sum with an explicit dtype, float16 input', async () => {
    await check('aten.sum.dim_IntList', [f16(3, 8)], ([x]) => ({ self: x!, dim: [1], keepdim: false, dtype: 'float32' }));
    await check('aten.sum.default', [f16(3, 4)], ([x]) => ({ self: x! }));
  });

  test('sum of a rank-0 tensor', async () => {
    await check('aten.sum.dim_IntList', [f32()], ([x]) => ({ self: x!, dim: null, keepdim: false }));
  });

  test.each([
    [[2], false],
    [[-1, -3], true],
    [null, false],
  ] as const)('mean.dim %j keepdim %s', async (dim, keepdim) => {
    await check('aten.mean.dim', [f32(2, 3, 4, 5)], ([x]) => ({ self: x!, dim: dim === null ? null : [...dim], keepdim }));
  });

  test('mean.default float16 and mean of int with a float dtype', async () => {
    await check('aten.mean.default', [f16(6, 7)], ([x]) => ({ self: x! }));
    await check('aten.mean.dim', [typed('int32', 4, 6)], ([x]) => ({ self: x!, dim: [1], keepdim: false, dtype: 'float32' }));
  });

  test('prod.dim_int (float, negative dim) and prod of int32 as int64', async () => {
    await check('aten.prod.dim_int', [f32(3, 4, 2)], ([x]) => ({ self: x!, dim: -2, keepdim: true }));
    await check('aten.prod.dim_int', [{ dtype: 'int32', shape: [3, 4], range: [-3, 3] }], ([x]) => ({ self: x!, dim: 1, keepdim: false }));
    await check('aten.prod.default', [{ dtype: 'float32', shape: [2, 3], range: [0.5, 1.5] }], ([x]) => ({ self: x! }));
  });
});

describe('amax / amin / max / min', () => {
  test.each(['amax', 'amin'])('%s over dims, negative dims, keepdim, all', async (op) => {
    await check(`aten.${op}.default`, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: [-1], keepdim: false }));
    await check(`aten.${op}.default`, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: [0, 2], keepdim: true }));
    await check(`aten.${op}.default`, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: [], keepdim: false }));
  });

  test('amax of int32, int64 and bool', async () => {
    await check('aten.amax.default', [typed('int32', 4, 5)], ([x]) => ({ self: x!, dim: [1], keepdim: false }));
    await check('aten.amin.default', [typed('int64', 4, 5)], ([x]) => ({ self: x!, dim: [0], keepdim: true }));
    await check('aten.amax.default', [typed('bool', 4, 5)], ([x]) => ({ self: x!, dim: [1], keepdim: false }));
  });

  test('max.default / min.default', async () => {
    await check('aten.max.default', [f32(3, 7)], ([x]) => ({ self: x! }));
    await check('aten.min.default', [typed('int32', 3, 7)], ([x]) => ({ self: x! }));
  });

  test.each([
    ['max', 1, false],
    ['max', -1, true],
    ['min', 0, false],
    ['min', -2, true],
  ] as const)('%s.dim dim %d keepdim %s: values and int64 indices', async (op, dim, keepdim) => {
    await check(`aten.${op}.dim`, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim, keepdim }));
  });

  test('max.dim on int32 with ties (first index wins), float16, rank 6 (axis moved for top-k)', async () => {
    await check('aten.max.dim', [{ dtype: 'int32', shape: [4, 6], range: [0, 2] }], ([x]) => ({ self: x!, dim: 1, keepdim: false }));
    await check('aten.min.dim', [f16(2, 9)], ([x]) => ({ self: x!, dim: 1, keepdim: false }));
    await check('aten.max.dim', [f32(3, 2, 2, 2, 2, 2)], ([x]) => ({ self: x!, dim: 0, keepdim: false }));
  });

  test('max.dim of a rank-0 tensor', async () => {
    await check('aten.max.dim', [f32()], ([x]) => ({ self: x!, dim: 0, keepdim: false }));
  });
});

describe('argmax / argmin', () => {
  test.each([
    ['argmax', 1, false],
    ['argmax', -1, true],
    ['argmin', 0, false],
    ['argmin', null, false],
    ['argmax', null, true],
  ] as const)('%s dim %s keepdim %s', async (op, dim, keepdim) => {
    await check(`aten.${op}.default`, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim, keepdim }));
  });

  test('argmax of bool and int64 with ties picks the first', async () => {
    await check('aten.argmax.default', [typed('bool', 4, 6)], ([x]) => ({ self: x!, dim: 1, keepdim: false }));
    await check('aten.argmin.default', [{ dtype: 'int64', shape: [5, 4], range: [0, 2] }], ([x]) => ({ self: x!, dim: 0, keepdim: false }));
  });

  test('trt.argmax_last / argmin_last: ties go to the last index', async () => {
    const ties = Tensor.from('float32', [2, 5], [1, 3, 3, 0, 3, 2, 2, 1, 1, 0]);
    await check('trt.argmax_last', [{ dtype: 'float32', shape: [2, 5], data: ties }], ([x]) => ({ self: x!, dim: 1, keepdim: false }));
    await check('trt.argmin_last', [{ dtype: 'float32', shape: [2, 5], data: ties }], ([x]) => ({ self: x!, dim: -1, keepdim: true }));
    await check('trt.argmax_last', [{ dtype: 'int32', shape: [6, 3], range: [0, 1] }], ([x]) => ({ self: x!, dim: 0, keepdim: true }));
  });
});

describe('logsumexp / linalg_vector_norm', () => {
  test('logsumexp over dims, keepdim, large values, int input', async () => {
    await check('aten.logsumexp.default', [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: [-1], keepdim: false }));
    await check('aten.logsumexp.default', [{ dtype: 'float32', shape: [3, 4], range: [80, 120] }], ([x]) => ({ self: x!, dim: [0, 1], keepdim: true }));
    await check('aten.logsumexp.default', [typed('int32', 3, 4)], ([x]) => ({ self: x!, dim: [1], keepdim: false }));
  });

  test('logsumexp with -inf rows (shift by 0, as PyTorch)', async () => {
    const data = Tensor.from('float32', [2, 3], [-Infinity, -Infinity, -Infinity, 1, 2, 3]);
    await check('aten.logsumexp.default', [{ dtype: 'float32', shape: [2, 3], data }], ([x]) => ({ self: x!, dim: [1], keepdim: false }));
  });

  test.each([2, 1, Infinity, -Infinity, 0, 3, 0.5])('linalg_vector_norm ord %s', async (ord) => {
    const data = Tensor.from('float32', [2, 4], [0, 1.5, -2, 0.25, 3, 0, -1, 0.5]);
    await check('aten.linalg_vector_norm.default', [{ dtype: 'float32', shape: [2, 4], data }], ([x]) => ({ self: x!, ord, dim: [-1], keepdim: false }));
  });

  test('linalg_vector_norm over every dim, keepdim, float16 with a float32 dtype', async () => {
    await check('aten.linalg_vector_norm.default', [f32(3, 4)], ([x]) => ({ self: x!, ord: 2, dim: null, keepdim: true }));
    await check('aten.linalg_vector_norm.default', [f16(3, 4)], ([x]) => ({ self: x!, ord: 2, dim: [0], keepdim: false, dtype: 'float32' }));
  });
});

describe('softmax / log_softmax', () => {
  test.each(['aten._softmax.default', 'aten._log_softmax.default'])('%s, dims 0 / -1, half_to_float', async (target) => {
    await check(target, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: -1, half_to_float: false }));
    await check(target, [f32(3, 4, 5)], ([x]) => ({ self: x!, dim: 0, half_to_float: false }));
    await check(target, [f16(3, 6)], ([x]) => ({ self: x!, dim: 1, half_to_float: true }));
    await check(target, [f16(3, 6)], ([x]) => ({ self: x!, dim: 1, half_to_float: false }));
  });

  test.each(['aten.softmax.int', 'aten.log_softmax.int'])('%s with and without dtype', async (target) => {
    await check(target, [f32(2, 7)], ([x]) => ({ self: x!, dim: -1 }));
    await check(target, [f16(2, 7)], ([x]) => ({ self: x!, dim: 1, dtype: 'float32' }));
  });

  test('log_softmax stays finite for very negative logits', async () => {
    const data = Tensor.from('float32', [1, 3], [0, -200, -1000]);
    await check('aten._log_softmax.default', [{ dtype: 'float32', shape: [1, 3], data }], ([x]) => ({ self: x!, dim: 1, half_to_float: false }));
  });

  test('softmax of a rank-0 tensor', async () => {
    await check('aten._softmax.default', [f32()], ([x]) => ({ self: x!, dim: 0, half_to_float: false }));
    await check('aten._log_softmax.default', [f32()], ([x]) => ({ self: x!, dim: 0, half_to_float: false }));
  });
});

describe('cumsum', () => {
  test('float along dims 0 and -1, int32 to int64, dtype', async () => {
    await check('aten.cumsum.default', [f32(3, 4)], ([x]) => ({ self: x!, dim: 0 }));
    await check('aten.cumsum.default', [f32(3, 4)], ([x]) => ({ self: x!, dim: -1 }));
    await check('aten.cumsum.default', [typed('int32', 3, 4)], ([x]) => ({ self: x!, dim: 1 }));
    await check('aten.cumsum.default', [typed('bool', 5)], ([x]) => ({ self: x!, dim: 0 }));
    await check('aten.cumsum.default', [f16(2, 6)], ([x]) => ({ self: x!, dim: 1, dtype: 'float32' }));
  });

  test.each([
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])('trt.cumsum_onnx exclusive %s reverse %s', async (exclusive, reverse) => {
    await check('trt.cumsum_onnx', [f32(3, 5)], ([x]) => ({ self: x!, dim: 1, exclusive, reverse }));
    await check('trt.cumsum_onnx', [typed('int64', 4, 2)], ([x]) => ({ self: x!, dim: -2, exclusive, reverse }));
  });

  test('cumsum of a rank-0 tensor', async () => {
    await check('aten.cumsum.default', [f32()], ([x]) => ({ self: x!, dim: 0 }));
  });

  test('refused: a cumulative sum TensorRT cannot compute in int8', () => {
    expect(refused('trt.cumsum_onnx', [typed('int8', 4)], ([x]) => ({ self: x!, dim: 0 }))).toMatch(/cumulative layer does not compute int8/);
  });
});

describe('topk', () => {
  test.each([
    [3, -1, true],
    [2, 0, false],
    [1, 1, true],
  ] as const)('k %d dim %d largest %s', async (k, dim, largest) => {
    await check('aten.topk.default', [f32(4, 5, 6)], ([x]) => ({ self: x!, k, dim, largest, sorted: true }));
  });

  test('int32 and int64, k = dim size', async () => {
    await check('aten.topk.default', [typed('int32', 3, 8)], ([x]) => ({ self: x!, k: 8, dim: 1, largest: false, sorted: true }));
    await check('aten.topk.default', [typed('int64', 3, 8)], ([x]) => ({ self: x!, k: 3, dim: -1, largest: true, sorted: true }));
  });

  test('a rank-0 input', async () => {
    await check('aten.topk.default', [f32()], ([x]) => ({ self: x!, k: 1, dim: 0, largest: true, sorted: true }));
  });

  test('uses one top-k layer', () => {
    expect(layerKinds('aten.topk.default', [f32(4, 5)], ([x]) => ({ self: x!, k: 2, dim: -1, largest: true, sorted: true }))).toEqual(['topk']);
  });

  test('refused: k = 0 and k above 3840', () => {
    expect(refused('aten.topk.default', [f32(4, 5)], ([x]) => ({ self: x!, k: 0, dim: -1, largest: true, sorted: true }))).toMatch(/k = 0/);
    expect(refused('aten.topk.default', [f32(2, 4000)], ([x]) => ({ self: x!, k: 3900, dim: -1, largest: true, sorted: true }))).toMatch(/3840/);
  });
});
