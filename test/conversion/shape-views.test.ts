/**
 * SHAPE converters, part 1: views and reshapes, permutes, joins and splits, slices and
 * selects, expand and repeat. Each converted graph runs on the reference backend and must
 * match the interpreter, on float32, float16, int64 and bool data.
 */
import { selectConverter } from '../../lib/conversion/registry';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { check, INT64_MAX, verdict } from './shape-helpers';

const DTYPES: DType[] = ['float32', 'float16', 'int64', 'bool'];

describe('views and reshapes', () => {
  test.each(DTYPES)('view / reshape / _unsafe_view with -1 (%s)', async (dtype) => {
    await check('aten.view.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, size: [4, -1] }));
    await check('aten.reshape.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, shape: [-1, 2, 2, 3] }));
    await check('aten._unsafe_view.default', [{ dtype, shape: [6, 4] }], (v) => ({ self: v[0]!, size: [24] }));
  });

  test('reshape of a 0-D tensor and of an empty tensor (0 is literal)', async () => {
    await check('aten.reshape.default', [{ dtype: 'float32', shape: [] }], (v) => ({ self: v[0]!, shape: [1, 1] }));
    await check('aten.reshape.default', [{ dtype: 'float32', shape: [1, 1, 1] }], (v) => ({ self: v[0]!, shape: [] }));
    await check('aten.view.default', [{ dtype: 'float32', shape: [0, 3] }], (v) => ({ self: v[0]!, size: [3, 0, 2] }));
  });

  test.each(DTYPES)('flatten and unflatten with negative dims (%s)', async (dtype) => {
    await check('aten.flatten.using_ints', [{ dtype, shape: [2, 3, 4, 5] }], (v) => ({ self: v[0]!, start_dim: 1, end_dim: -2 }));
    await check('aten.flatten.using_ints', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]! }));
    await check('aten.flatten.using_ints', [{ dtype, shape: [] }], (v) => ({ self: v[0]! }));
    await check('aten.unflatten.int', [{ dtype, shape: [2, 12, 5] }], (v) => ({ self: v[0]!, dim: -2, sizes: [3, -1] }));
  });

  test.each(DTYPES)('squeeze (all forms) and unsqueeze (%s)', async (dtype) => {
    await check('aten.squeeze.default', [{ dtype, shape: [1, 3, 1, 2] }], (v) => ({ self: v[0]! }));
    await check('aten.squeeze.dim', [{ dtype, shape: [1, 3, 1, 2] }], (v) => ({ self: v[0]!, dim: -2 }));
    await check('aten.squeeze.dim', [{ dtype, shape: [1, 3, 1, 2] }], (v) => ({ self: v[0]!, dim: 1 }));
    await check('aten.squeeze.dims', [{ dtype, shape: [1, 3, 1, 2] }], (v) => ({ self: v[0]!, dim: [0, -1, 2] }));
    await check('aten.unsqueeze.default', [{ dtype, shape: [3, 2] }], (v) => ({ self: v[0]!, dim: -1 }));
    await check('aten.unsqueeze.default', [{ dtype, shape: [3, 2] }], (v) => ({ self: v[0]!, dim: 0 }));
    await check('aten.unsqueeze.default', [{ dtype, shape: [] }], (v) => ({ self: v[0]!, dim: 0 }));
  });

  test.each(DTYPES)('permute, transpose and t (%s)', async (dtype) => {
    await check('aten.permute.default', [{ dtype, shape: [2, 3, 4, 5] }], (v) => ({ self: v[0]!, dims: [-1, 0, 2, 1] }));
    await check('aten.transpose.int', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, dim0: -1, dim1: 0 }));
    await check('aten.transpose.int', [{ dtype, shape: [5] }], (v) => ({ self: v[0]!, dim0: 0, dim1: -1 }));
    await check('aten.t.default', [{ dtype, shape: [3, 4] }], (v) => ({ self: v[0]! }));
    await check('aten.t.default', [{ dtype, shape: [4] }], (v) => ({ self: v[0]! }));
  });
});

describe('joins and splits', () => {
  test.each(DTYPES)('cat along a negative dim (%s)', async (dtype) => {
    await check('aten.cat.default', [{ dtype, shape: [2, 3] }, { dtype, shape: [2, 1] }, { dtype, shape: [2, 4] }], (v) => ({ tensors: v, dim: -1 }));
    await check('aten.cat.default', [{ dtype, shape: [2, 3] }], (v) => ({ tensors: v, dim: 0 }));
  });

  test('cat of mixed dtypes promotes by casts', async () => {
    await check('aten.cat.default', [{ dtype: 'int64', shape: [2, 3] }, { dtype: 'float16', shape: [1, 3] }], (v) => ({ tensors: v }));
    await check('aten.cat.default', [{ dtype: 'bool', shape: [2, 3] }, { dtype: 'int32', shape: [2, 3] }, { dtype: 'int64', shape: [2, 2] }], (v) => ({
      tensors: v,
      dim: 1,
    }));
    await check('aten.cat.default', [{ dtype: 'float32', shape: [4] }, { dtype: 'float16', shape: [3] }, { dtype: 'bool', shape: [2] }], (v) => ({ tensors: v }));
  });

  test('cat skips 1-D empty tensors (PyTorch legacy) and parts empty along the axis', async () => {
    await check('aten.cat.default', [{ dtype: 'float32', shape: [0] }, { dtype: 'float32', shape: [2, 3] }, { dtype: 'int64', shape: [0] }], (v) => ({
      tensors: v,
      dim: 1,
    }));
    await check('aten.cat.default', [{ dtype: 'float32', shape: [2, 0] }, { dtype: 'float32', shape: [2, 3] }], (v) => ({ tensors: v, dim: -1 }));
    await check('aten.cat.default', [{ dtype: 'float32', shape: [0] }, { dtype: 'float32', shape: [0] }], (v) => ({ tensors: v }));
  });

  test.each(DTYPES)('stack with negative and leading dims (%s)', async (dtype) => {
    await check('aten.stack.default', [{ dtype, shape: [2, 3] }, { dtype, shape: [2, 3] }, { dtype, shape: [2, 3] }], (v) => ({ tensors: v, dim: -1 }));
    await check('aten.stack.default', [{ dtype, shape: [2, 3] }, { dtype, shape: [2, 3] }], (v) => ({ tensors: v, dim: 1 }));
    await check('aten.stack.default', [{ dtype, shape: [] }, { dtype, shape: [] }], (v) => ({ tensors: v }));
  });

  test('stack of mixed dtypes', async () => {
    await check('aten.stack.default', [{ dtype: 'int32', shape: [3] }, { dtype: 'float32', shape: [3] }], (v) => ({ tensors: v }));
  });

  test.each(DTYPES)('split, split_with_sizes, chunk and unbind (%s)', async (dtype) => {
    await check('aten.split.Tensor', [{ dtype, shape: [7, 3] }], (v) => ({ self: v[0]!, split_size: 3 }));
    await check('aten.split.Tensor', [{ dtype, shape: [2, 8] }], (v) => ({ self: v[0]!, split_size: 4, dim: -1 }));
    await check('aten.split_with_sizes.default', [{ dtype, shape: [2, 9] }], (v) => ({ self: v[0]!, split_sizes: [2, 0, 4, 3], dim: -1 }));
    await check('aten.chunk.default', [{ dtype, shape: [3, 10] }], (v) => ({ self: v[0]!, chunks: 4, dim: 1 }));
    await check('aten.chunk.default', [{ dtype, shape: [5, 2] }], (v) => ({ self: v[0]!, chunks: 5 }));
    await check('aten.unbind.int', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, dim: -2 }));
    await check('aten.unbind.int', [{ dtype, shape: [3] }], (v) => ({ self: v[0]! }));
  });
});

describe('slices and selects', () => {
  const slice = (dtype: DType, shape: number[], dim: number, start: number | null, end: number | null, step = 1): Promise<void> =>
    check('aten.slice.Tensor', [{ dtype, shape }], (v: Value[]) => ({ self: v[0]!, dim, start, end, step }));

  test.each(DTYPES)('slice.Tensor edge cases (%s)', async (dtype) => {
    await slice(dtype, [6, 4], 0, 1, 4);
    await slice(dtype, [6, 4], 0, -4, -1); // negative start and end
    await slice(dtype, [6, 4], -1, 1, 100); // end beyond the size
    await slice(dtype, [9, 4], 0, 1, 8, 3); // step > 1, inexact count
    await slice(dtype, [9, 4], 0, 0, INT64_MAX, 2); // INT64_MAX end
    await slice(dtype, [6, 4], 1, -100, INT64_MAX); // start before the front
    await slice(dtype, [6, 4], 0, null, null, 4); // omitted bounds
    await slice(dtype, [6, 4], 0, 5, 2); // start after end: empty
    await slice(dtype, [6, 4], 0, 8, 10); // start beyond the size: empty
    await slice(dtype, [6, 4], 0, -INT64_MAX, 2); // INT64_MIN-like start
  });

  test.each(DTYPES)('trt.slice_onnx with negative steps (%s)', async (dtype) => {
    const onnx = (shape: number[], dim: number, start: number, end: number, step: number): Promise<void> =>
      check('trt.slice_onnx', [{ dtype, shape }], (v) => ({ self: v[0]!, dim, start, end, step }));
    await onnx([7, 3], 0, -1, -INT64_MAX, -1); // whole axis reversed
    await onnx([7, 3], 0, INT64_MAX, -INT64_MAX, -2); // INT64_MAX start with step -2
    await onnx([7, 3], 0, 5, 1, -3);
    await onnx([7, 3], -1, 0, 5, -1); // empty
    await onnx([7, 3], 0, 2, INT64_MAX, 2); // positive step
  });

  test.each(DTYPES)('select.int and narrow (%s)', async (dtype) => {
    await check('aten.select.int', [{ dtype, shape: [4, 5, 2] }], (v) => ({ self: v[0]!, dim: 1, index: -2 }));
    await check('aten.select.int', [{ dtype, shape: [4, 5, 2] }], (v) => ({ self: v[0]!, dim: -1, index: 1 }));
    await check('aten.select.int', [{ dtype, shape: [4] }], (v) => ({ self: v[0]!, dim: 0, index: 3 }));
    await check('aten.narrow.default', [{ dtype, shape: [4, 6] }], (v) => ({ self: v[0]!, dim: -1, start: -4, length: 3 }));
    await check('aten.narrow.default', [{ dtype, shape: [4, 6] }], (v) => ({ self: v[0]!, dim: 0, start: 1, length: 0 }));
  });

  test('slice.Tensor step 0 never reaches selection (the IR rejects it)', () => {
    expect(() => verdict('aten.slice.Tensor', [{ dtype: 'float32', shape: [4] }], (v) => ({ self: v[0]!, step: 0 }))).toThrow(/step/);
  });
});

describe('expand and repeat', () => {
  test.each(DTYPES)('expand with -1 and new leading dims (%s)', async (dtype) => {
    await check('aten.expand.default', [{ dtype, shape: [3, 1] }], (v) => ({ self: v[0]!, size: [2, 3, 4] }));
    await check('aten.expand.default', [{ dtype, shape: [1, 4] }], (v) => ({ self: v[0]!, size: [5, -1] }));
    await check('aten.expand.default', [{ dtype, shape: [] }], (v) => ({ self: v[0]!, size: [2, 2] }));
    await check('aten.expand.default', [{ dtype, shape: [2, 1] }], (v) => ({ self: v[0]!, size: [2, 0] }));
    await check('aten.expand_as.default', [{ dtype, shape: [1, 3] }, { dtype: 'float32', shape: [4, 2, 3] }], (v) => ({ self: v[0]!, other: v[1]! }));
  });

  test.each(DTYPES)('repeat with extra leading dims and zero repeats (%s)', async (dtype) => {
    await check('aten.repeat.default', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, repeats: [2, 1, 3] }));
    await check('aten.repeat.default', [{ dtype, shape: [3] }], (v) => ({ self: v[0]!, repeats: [4] }));
    await check('aten.repeat.default', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, repeats: [0, 2] }));
    await check('aten.repeat.default', [{ dtype, shape: [] }], (v) => ({ self: v[0]!, repeats: [3, 2] }));
  });

  test.each(DTYPES)('repeat_interleave.self_int (%s)', async (dtype) => {
    await check('aten.repeat_interleave.self_int', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, repeats: 3 }));
    await check('aten.repeat_interleave.self_int', [{ dtype, shape: [2, 3, 2] }], (v) => ({ self: v[0]!, repeats: 2, dim: -2 }));
    await check('aten.repeat_interleave.self_int', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, repeats: 2, dim: 0 }));
    await check('aten.repeat_interleave.self_int', [{ dtype, shape: [] }], (v) => ({ self: v[0]!, repeats: 4, dim: 0 }));
  });
});

describe('refusals', () => {
  test('int8 and uint8 tensors are refused with the reason', () => {
    expect(verdict('aten.permute.default', [{ dtype: 'uint8', shape: [2, 3] }], (v) => ({ self: v[0]!, dims: [1, 0] }))).toMatch(/UINT8 only as a network I\/O type/);
    expect(verdict('aten.cat.default', [{ dtype: 'int8', shape: [2] }, { dtype: 'float32', shape: [2] }], (v) => ({ tensors: v }))).toMatch(/INT8 only for quantized/);
  });

  test('converters without a dynamic registration leave a node with a symbolic dim to fallback', () => {
    expect(verdict('aten.view.default', [{ dtype: 'float32', shape: [2, 3] }], (v) => ({ self: v[0]!, size: [6] }))).toBe(true);
    const g = new Graph('dyn');
    g.symbols.set('s0', { min: 2, max: 64 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 3]));
    const node = call(g, 'aten.flip.default', { self: x, dims: [0] });
    const s = selectConverter(node);
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.reasons.join('; ')).toMatch(/support only static shapes/);
  });
});
