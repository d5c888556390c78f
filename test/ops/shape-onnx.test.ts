/**
 * ONNX data-movement ops (SHAPE family): our importer + interpreter against onnxruntime on
 * one-node models, over dtypes (float32, int64, bool, float16), negative axes, size-1 and
 * size-0 dims, attributes, and the opsets where an input form changed.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import type { DType } from '../../lib/ir/dtype';
import { Tensor, type Shape } from '../../lib/ir/tensor';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, type OrtOpSpec } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const rng = new Random(777);
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

const f32 = (shape: Shape): Tensor => rng.tensor(shape, 'float32', -3, 3);
const f16 = (shape: Shape): Tensor => rng.tensor(shape, 'float16', -3, 3);
const i64 = (shape: Shape, lo = -50, hi = 50): Tensor => rng.intTensor(shape, lo, hi, 'int64');
const bools = (shape: Shape): Tensor => rng.intTensor(shape, 0, 1, 'bool');
/** A random tensor of any of the tested dtypes. */
const data = (dtype: DType, shape: Shape): Tensor =>
  dtype === 'float32' ? f32(shape) : dtype === 'float16' ? f16(shape) : dtype === 'bool' ? bools(shape) : rng.intTensor(shape, -50, 50, dtype);
const DTYPES: DType[] = ['float32', 'int64', 'bool', 'float16'];

/** A constant int64 input (an initializer). */
const c64 = (values: ReadonlyArray<number | bigint>, shape: Shape = [values.length]): { constant: Tensor } => ({
  constant: Tensor.from('int64', shape, values.map((v) => BigInt(v))),
});
const ci64 = (v: number): { constant: Tensor } => c64([v], []);

const run = (spec: OrtOpSpec, tol?: { rtol: number; atol: number }): Promise<Tensor[]> => expectOnnxMatchesOrt(spec, tol);

/** The error loadOnnx throws for `spec` (fails the test when none is thrown). */
function importError(spec: OrtOpSpec): { code: string; message: string } {
  try {
    loadOnnx(buildSingleOpModel(spec));
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error(`${spec.opType}: import succeeded but an error was expected`);
}

/** A node whose shape-like input is a graph input: imported at run time (trt.deferred_node), with onnxruntime's values. */
async function runDeferred(spec: OrtOpSpec): Promise<void> {
  const graph = loadOnnx(buildSingleOpModel(spec));
  expect(graph.nodes.filter((n) => n.kind === 'call').map((n) => n.target)).toEqual(['trt.deferred_node']);
  await run(spec);
}

describe('Reshape', () => {
  for (const opset of [13, 14, 21]) {
    test.each(DTYPES)(`%s with -1 and 0, opset ${opset}`, async (dtype) => {
      await run({ opType: 'Reshape', opset, inputs: [data(dtype, [2, 3, 4]), c64([4, -1])] });
      await run({ opType: 'Reshape', opset, inputs: [data(dtype, [2, 3, 4]), c64([0, -1])] });
      await run({ opType: 'Reshape', opset, inputs: [data(dtype, [2, 3, 4]), c64([0, 0, 2, 2])] });
    });
  }
  test('to and from a scalar', async () => {
    await run({ opType: 'Reshape', inputs: [f32([1, 1]), c64([])] });
    await run({ opType: 'Reshape', inputs: [f32([]), c64([1, 1, 1])] });
  });
  test('size 0 with allowzero=1 (opset 14)', async () => {
    await run({ opType: 'Reshape', opset: 14, inputs: [f32([0, 3]), c64([3, 0])], attributes: { allowzero: 1 } });
    await run({ opType: 'Reshape', opset: 14, inputs: [f32([2, 3, 4]), c64([4, 6])], attributes: { allowzero: 1 } });
  });
  test('size 0 without allowzero copies the dim', async () => {
    await run({ opType: 'Reshape', opset: 14, inputs: [f32([0, 3]), c64([0, 3])] });
    await run({ opType: 'Reshape', opset: 13, inputs: [f32([0, 3]), c64([0, 3, 1])] });
  });
  test('a copied 0 with -1 is ambiguous (onnxruntime rejects it too)', () => {
    expect(importError({ opType: 'Reshape', opset: 14, inputs: [f32([0, 3]), c64([0, -1])] }).code).toBe('E_BAD_MODEL');
  });
  test('0 with -1 under allowzero=1 is a bad model', () => {
    const e = importError({ opType: 'Reshape', opset: 14, inputs: [f32([0, 3]), c64([0, -1])], attributes: { allowzero: 1 } });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Reshape_0');
  });
  test('two -1 is a bad model naming the node', () => {
    const e = importError({ opType: 'Reshape', inputs: [f32([2, 3, 4]), c64([-1, -1])] });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Reshape_0');
  });
  test('a shape computed from tensor data is imported at run time', async () => {
    await runDeferred({ opType: 'Reshape', inputs: [f32([2, 3, 4]), Tensor.from('int64', [2], [4, 6])] });
  });
});

describe('Transpose', () => {
  test.each(DTYPES)('%s default perm reverses', async (dtype) => {
    await run({ opType: 'Transpose', inputs: [data(dtype, [2, 3, 4])] });
  });
  test.each([
    [[1, 0, 2]],
    [[2, 0, 1]],
    [[0, 1, 2]],
  ])('perm %j', async (perm) => {
    await run({ opType: 'Transpose', opset: 13, inputs: [f32([2, 3, 4])], attributes: { perm } });
    await run({ opType: 'Transpose', opset: 21, inputs: [f32([2, 1, 0])], attributes: { perm } });
  });
  test('rank 1 and 0', async () => {
    await run({ opType: 'Transpose', inputs: [f32([5])] });
    await run({ opType: 'Transpose', inputs: [f32([])] });
  });
  test('a wrong perm is a bad model naming the node', () => {
    const e = importError({ opType: 'Transpose', inputs: [f32([2, 3, 4])], attributes: { perm: [0, 1] } });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Transpose_0');
  });
});

describe('Flatten', () => {
  for (const opset of [13, 21]) {
    test.each([0, 1, 2, 3, -1, -3])(`axis %i of [2, 3, 4], opset ${opset}`, async (axis) => {
      await run({ opType: 'Flatten', opset, inputs: [f32([2, 3, 4])], attributes: { axis } });
    });
  }
  test.each(['int64', 'bool', 'float16'] as DType[])('%s', async (dtype) => {
    await run({ opType: 'Flatten', inputs: [data(dtype, [2, 3, 1, 2])], attributes: { axis: 2 } });
  });
  test('rank 2 with axis 1 and a size-0 dim', async () => {
    await run({ opType: 'Flatten', inputs: [f32([3, 4])] });
    await run({ opType: 'Flatten', inputs: [f32([2, 0, 3])], attributes: { axis: 2 } });
  });
  test('axis out of range is a bad model', () => {
    expect(importError({ opType: 'Flatten', inputs: [f32([2, 3])], attributes: { axis: 3 } }).code).toBe('E_BAD_MODEL');
  });
});

describe('Squeeze', () => {
  for (const opset of [13, 21]) {
    test(`axes input with negative axes, opset ${opset}`, async () => {
      await run({ opType: 'Squeeze', opset, inputs: [f32([2, 1, 3, 1]), c64([1, -1])] });
      await run({ opType: 'Squeeze', opset, inputs: [f32([1, 3]), c64([0])] });
    });
    test(`no axes squeezes every 1, opset ${opset}`, async () => {
      await run({ opType: 'Squeeze', opset, inputs: [f32([1, 2, 1, 3, 1])] });
      await run({ opType: 'Squeeze', opset, inputs: [f32([1, 1])] });
    });
  }
  test.each(DTYPES)('%s', async (dtype) => {
    await run({ opType: 'Squeeze', inputs: [data(dtype, [3, 1, 2]), c64([-2])] });
  });
  test('squeezing a dim that is not 1 is a bad model', () => {
    const e = importError({ opType: 'Squeeze', inputs: [f32([2, 3]), c64([1])] });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Squeeze_0');
  });
});

describe('Unsqueeze', () => {
  for (const opset of [13, 21]) {
    test.each([[[0]], [[-1]], [[0, -1]], [[1, 3]], [[3, 0]], [[0, 1, 2]]])(`axes %j, opset ${opset}`, async (axes) => {
      await run({ opType: 'Unsqueeze', opset, inputs: [f32([2, 3]), c64(axes)] });
    });
  }
  test.each(DTYPES)('%s scalar and rank 1', async (dtype) => {
    await run({ opType: 'Unsqueeze', inputs: [data(dtype, []), c64([0])] });
    await run({ opType: 'Unsqueeze', inputs: [data(dtype, [4]), c64([-1, 0])] });
  });
  test('repeated axes are a bad model', () => {
    expect(importError({ opType: 'Unsqueeze', inputs: [f32([2]), c64([0, -3])] }).code).toBe('E_BAD_MODEL');
  });
});

describe('Concat', () => {
  test.each(DTYPES)('%s along axis 1 and -1', async (dtype) => {
    await run({ opType: 'Concat', inputs: [data(dtype, [2, 1, 3]), data(dtype, [2, 4, 3]), data(dtype, [2, 2, 3])], attributes: { axis: 1 } });
    await run({ opType: 'Concat', opset: 21, inputs: [data(dtype, [2, 3]), data(dtype, [2, 1])], attributes: { axis: -1 } });
  });
  test('one input, and a size-0 input', async () => {
    await run({ opType: 'Concat', inputs: [f32([3, 2])], attributes: { axis: 0 } });
    await run({ opType: 'Concat', inputs: [f32([0, 2]), f32([3, 2])], attributes: { axis: 0 } });
  });
  test('mismatched shapes are a bad model naming the node', () => {
    const e = importError({ opType: 'Concat', inputs: [f32([2, 3]), f32([3, 3])], attributes: { axis: 1 } });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Concat_0');
  });
});

describe('Split', () => {
  test.each(DTYPES)('%s with sizes, opset 13', async (dtype) => {
    await run({ opType: 'Split', opset: 13, inputs: [data(dtype, [2, 6, 3]), c64([1, 2, 3])], attributes: { axis: 1 }, outputCount: 3 });
  });
  test('equal split without sizes, negative axis, opset 13', async () => {
    await run({ opType: 'Split', opset: 13, inputs: [f32([2, 6])], attributes: { axis: -1 }, outputCount: 3 });
    await run({ opType: 'Split', opset: 13, inputs: [f32([4, 3])], outputCount: 2 });
  });
  test('sizes with a 0, opset 13 and 18', async () => {
    await run({ opType: 'Split', opset: 13, inputs: [f32([5, 2]), c64([0, 5])], outputCount: 2 });
    await run({ opType: 'Split', opset: 18, inputs: [f32([5, 2]), c64([2, 0, 3])], outputCount: 3 });
  });
  test('num_outputs, even and uneven, opset 18', async () => {
    await run({ opType: 'Split', opset: 18, inputs: [f32([6, 2])], attributes: { num_outputs: 2 }, outputCount: 2 });
    await run({ opType: 'Split', opset: 18, inputs: [f32([2, 7])], attributes: { axis: 1, num_outputs: 3 }, outputCount: 3 });
    await run({ opType: 'Split', opset: 21, inputs: [i64([3, 10])], attributes: { axis: -1, num_outputs: 4 }, outputCount: 4 });
  });
  test('num_outputs leaving an empty or negative last chunk is a bad model (onnxruntime rejects it too)', () => {
    expect(importError({ opType: 'Split', opset: 18, inputs: [f32([4])], attributes: { num_outputs: 3 }, outputCount: 3 }).code).toBe('E_BAD_MODEL');
    expect(importError({ opType: 'Split', opset: 18, inputs: [f32([5])], attributes: { num_outputs: 4 }, outputCount: 4 }).code).toBe('E_BAD_MODEL');
  });
  test('opset 18 without sizes or num_outputs is a bad model', () => {
    expect(importError({ opType: 'Split', opset: 18, inputs: [f32([4])], outputCount: 2 }).code).toBe('E_BAD_MODEL');
  });
  test('sizes that do not add up are a bad model', () => {
    expect(importError({ opType: 'Split', inputs: [f32([4]), c64([1, 2])], outputCount: 2 }).code).toBe('E_BAD_MODEL');
  });
});

describe('Slice', () => {
  for (const opset of [13, 18]) {
    describe(`opset ${opset}`, () => {
      test.each(DTYPES)('%s basic with omitted axes and steps', async (dtype) => {
        await run({ opType: 'Slice', opset, inputs: [data(dtype, [5, 6]), c64([1, 2]), c64([4, 5])] });
      });
      test('negative starts/ends and out-of-range clamping', async () => {
        const x = f32([6, 7]);
        await run({ opType: 'Slice', opset, inputs: [x, c64([-3]), c64([1000]), c64([1])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([-100]), c64([-2]), c64([0])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([5]), c64([2]), c64([1])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([0, 1]), c64([INT64_MAX, -1]), c64([-1, -2])] });
      });
      test('steps > 1', async () => {
        await run({ opType: 'Slice', opset, inputs: [f32([9, 4]), c64([1, 0]), c64([9, 4]), c64([0, 1]), c64([3, 2])] });
        await run({ opType: 'Slice', opset, inputs: [f32([9]), c64([-8]), c64([INT64_MAX]), c64([0]), c64([4])] });
      });
      test('negative steps (reversal, strided, clamped)', async () => {
        const x = f32([5, 6]);
        await run({ opType: 'Slice', opset, inputs: [x, c64([-1]), c64([INT64_MIN]), c64([1]), c64([-1])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([100]), c64([-100]), c64([0]), c64([-2])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([4, 1]), c64([0, 5]), c64([1, 0]), c64([-3, 1])] });
        await run({ opType: 'Slice', opset, inputs: [x, c64([2]), c64([4]), c64([-1]), c64([-1])] });
        await run({ opType: 'Slice', opset, inputs: [i64([7]), c64([INT64_MAX]), c64([-5]), c64([0]), c64([-1])] });
      });
      test('negative axes and several axes at once', async () => {
        await run({ opType: 'Slice', opset, inputs: [f32([3, 4, 5]), c64([1, -4]), c64([-1, 5]), c64([-1, 1]), c64([2, 1])] });
      });
      test('size-0 input dim', async () => {
        await run({ opType: 'Slice', opset, inputs: [f32([0, 4]), c64([0]), c64([2]), c64([1])] });
        await run({ opType: 'Slice', opset, inputs: [f32([0, 4]), c64([-1]), c64([INT64_MIN]), c64([0]), c64([-1])] });
      });
    });
  }
  test('a zero step is a bad model', () => {
    expect(importError({ opType: 'Slice', inputs: [f32([4]), c64([0]), c64([4]), c64([0]), c64([0])] }).code).toBe('E_BAD_MODEL');
  });
  test('starts from tensor data are imported at run time', async () => {
    await runDeferred({ opType: 'Slice', inputs: [f32([4]), Tensor.from('int64', [1], [1]), c64([4])] });
  });
});

describe('Gather', () => {
  test.each(DTYPES)('%s with run-time indices (negative included)', async (dtype) => {
    const indices = Tensor.from('int64', [2, 3], [0, -1, 2, -4, 1, 3]);
    await run({ opType: 'Gather', inputs: [data(dtype, [4, 3]), indices] });
    await run({ opType: 'Gather', inputs: [data(dtype, [2, 4, 3]), indices], attributes: { axis: 1 } });
  });
  test('int32 indices, axis -1, opset 13 and 21', async () => {
    const indices = Tensor.from('int32', [4], [2, -1, 0, 0]);
    await run({ opType: 'Gather', opset: 13, inputs: [f32([2, 3, 5]), indices], attributes: { axis: -1 } });
    await run({ opType: 'Gather', opset: 21, inputs: [f32([2, 3, 5]), indices], attributes: { axis: -1 } });
  });
  test('constant scalar and 1-D indices', async () => {
    await run({ opType: 'Gather', inputs: [f32([3, 4]), ci64(-1)], attributes: { axis: 1 } });
    await run({ opType: 'Gather', inputs: [f32([3, 4]), ci64(2)] });
    await run({ opType: 'Gather', inputs: [i64([3, 4]), c64([-1, 0, 2])], attributes: { axis: 1 } });
    await run({ opType: 'Gather', inputs: [f32([3, 4]), c64([], [0])], attributes: { axis: 1 } });
  });
  test('a constant index out of range is a bad model', () => {
    const e = importError({ opType: 'Gather', inputs: [f32([3, 4]), ci64(3)] });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Gather_0');
  });
});

describe('GatherElements', () => {
  test.each(DTYPES)('%s along axes 0, 1, -1 with negative indices', async (dtype) => {
    const x = data(dtype, [3, 4]);
    await run({ opType: 'GatherElements', inputs: [x, Tensor.from('int64', [2, 4], [0, -1, 2, 1, -3, 0, 1, 2])] });
    await run({ opType: 'GatherElements', inputs: [x, Tensor.from('int64', [3, 2], [3, -4, 0, 1, -1, 2])], attributes: { axis: 1 } });
    await run({ opType: 'GatherElements', opset: 21, inputs: [x, Tensor.from('int32', [1, 3], [0, 3, -2])], attributes: { axis: -1 } });
  });
});

describe('GatherND', () => {
  test.each(DTYPES)('%s with tuples of 1 and 2, batch_dims 0', async (dtype) => {
    const x = data(dtype, [3, 4, 2]);
    await run({ opType: 'GatherND', inputs: [x, Tensor.from('int64', [2, 1], [2, -1])] });
    await run({ opType: 'GatherND', inputs: [x, Tensor.from('int64', [2, 2, 2], [0, 1, 2, 3, -1, 0, 1, -2])] });
    await run({ opType: 'GatherND', inputs: [x, Tensor.from('int64', [3], [1, 2, 1])] });
  });
  test('batch_dims 1', async () => {
    await run({ opType: 'GatherND', inputs: [f32([2, 3, 4]), Tensor.from('int64', [2, 2, 1], [0, 2, 1, 1])], attributes: { batch_dims: 1 } });
  });
});

describe('ScatterND', () => {
  const x = (): Tensor => f32([4, 3]);
  test.each(['float32', 'int64', 'float16', 'bool'] as DType[])('%s reduction none, opset 13', async (dtype) => {
    await run({ opType: 'ScatterND', opset: 13, inputs: [data(dtype, [4, 3]), Tensor.from('int64', [2, 1], [3, 0]), data(dtype, [2, 3])] });
  });
  test('element tuples and negative indices', async () => {
    await run({ opType: 'ScatterND', inputs: [x(), Tensor.from('int64', [3, 2], [0, 0, -1, 2, 2, 1]), f32([3])] });
  });
  for (const [reduction, opset] of [
    ['add', 16],
    ['mul', 16],
    ['max', 18],
    ['min', 18],
  ] as const) {
    test(`reduction ${reduction}, opset ${opset}`, async () => {
      await run({ opType: 'ScatterND', opset, inputs: [x(), Tensor.from('int64', [3, 1], [1, 1, 2]), f32([3, 3])], attributes: { reduction } });
    });
  }
  test('max at opset 16 is a bad model', () => {
    const spec = { opType: 'ScatterND', opset: 16, inputs: [x(), Tensor.from('int64', [1, 1], [1]), f32([1, 3])], attributes: { reduction: 'max' } };
    expect(importError(spec).code).toBe('E_BAD_MODEL');
  });
});

describe('ScatterElements', () => {
  test.each(['float32', 'int64', 'float16', 'bool'] as DType[])('%s reduction none, axes 0 and -1, opset 13', async (dtype) => {
    const x = data(dtype, [3, 4]);
    await run({ opType: 'ScatterElements', opset: 13, inputs: [x, Tensor.from('int64', [2, 4], [0, 2, 1, -1, 1, 0, 2, 0]), data(dtype, [2, 4])] });
    await run({
      opType: 'ScatterElements',
      opset: 13,
      inputs: [x, Tensor.from('int32', [3, 2], [3, 0, -4, 2, 1, 3]), data(dtype, [3, 2])],
      attributes: { axis: -1 },
    });
  });
  for (const [reduction, opset] of [
    ['none', 18],
    ['add', 16],
    ['mul', 16],
    ['max', 18],
    ['min', 18],
  ] as const) {
    test(`reduction ${reduction} with duplicate indices, opset ${opset}`, async () => {
      const indices = Tensor.from('int64', [2, 3], [1, 1, 0, 1, 2, 0]);
      // Duplicates only where the result is order-independent (every reduction but none).
      const idx = reduction === 'none' ? Tensor.from('int64', [2, 3], [1, 0, 2, 0, 2, 1]) : indices;
      await run({ opType: 'ScatterElements', opset, inputs: [f32([3, 3]), idx, f32([2, 3])], attributes: { axis: 0, reduction } });
    });
  }
});

describe('Expand', () => {
  test.each(DTYPES)('%s bidirectional broadcasting', async (dtype) => {
    await run({ opType: 'Expand', inputs: [data(dtype, [1, 4]), c64([3, 1])] });
    await run({ opType: 'Expand', inputs: [data(dtype, [3, 4]), c64([2, 1, 1])] });
    await run({ opType: 'Expand', inputs: [data(dtype, [3, 1]), c64([1])] });
  });
  test('scalar input, size 0, same shape', async () => {
    await run({ opType: 'Expand', inputs: [f32([]), c64([2, 3])] });
    await run({ opType: 'Expand', inputs: [f32([1, 3]), c64([0, 1])] });
    await run({ opType: 'Expand', opset: 21, inputs: [f32([2, 3]), c64([2, 3])] });
  });
  test('incompatible shapes are a bad model', () => {
    expect(importError({ opType: 'Expand', inputs: [f32([2, 3]), c64([4, 3])] }).code).toBe('E_BAD_MODEL');
  });
});

describe('Tile', () => {
  test.each(DTYPES)('%s', async (dtype) => {
    await run({ opType: 'Tile', inputs: [data(dtype, [2, 1, 3]), c64([2, 3, 1])] });
    await run({ opType: 'Tile', opset: 21, inputs: [data(dtype, [2, 3]), c64([1, 0])] });
  });
  test('wrong repeats length is a bad model', () => {
    expect(importError({ opType: 'Tile', inputs: [f32([2, 3]), c64([2])] }).code).toBe('E_BAD_MODEL');
  });
});

describe('Pad', () => {
  for (const opset of [13, 18, 21]) {
    test(`constant with and without a value, cropping, opset ${opset}`, async () => {
      await run({ opType: 'Pad', opset, inputs: [f32([2, 3]), c64([1, 0, 2, 3])] });
      await run({ opType: 'Pad', opset, inputs: [f32([2, 3]), c64([0, 2, 1, 0]), { constant: Tensor.scalar('float32', 1.5) }] });
      await run({ opType: 'Pad', opset, inputs: [i64([2, 3, 4]), c64([0, -1, 1, 1, 0, -2]), { constant: Tensor.scalar('int64', 7) }] });
    });
    test(`reflect and edge, opset ${opset}`, async () => {
      await run({ opType: 'Pad', opset, inputs: [f32([3, 4]), c64([2, 1, 1, 3])], attributes: { mode: 'reflect' } });
      await run({ opType: 'Pad', opset, inputs: [f32([2, 3, 4]), c64([0, 2, 1, 1, 3, 0])], attributes: { mode: 'edge' } });
    });
  }
  test('axes input with negative axes, opset 18', async () => {
    await run({ opType: 'Pad', opset: 18, inputs: [f32([2, 3, 4]), c64([1, 2]), null, c64([-1])], attributes: { mode: 'reflect' } });
    await run({ opType: 'Pad', opset: 18, inputs: [f32([2, 3, 4]), c64([1, 0, 2, 1]), null, c64([0, -1])], attributes: { mode: 'edge' } });
    await run({ opType: 'Pad', opset: 18, inputs: [f32([2, 3, 4]), c64([1, 1]), { constant: Tensor.scalar('float32', -2) }, c64([1])] });
  });
  test('wrap, opset 19', async () => {
    await run({ opType: 'Pad', opset: 19, inputs: [f32([3, 4]), c64([1, 2, 2, 1])], attributes: { mode: 'wrap' } });
  });
  test.each(['int64', 'bool', 'float16'] as DType[])('%s', async (dtype) => {
    await run({ opType: 'Pad', inputs: [data(dtype, [2, 3]), c64([1, 1, 0, 2])] });
  });
  test('wrap before opset 19 and unknown modes are bad models', () => {
    expect(importError({ opType: 'Pad', opset: 18, inputs: [f32([3]), c64([1, 1])], attributes: { mode: 'wrap' } }).code).toBe('E_BAD_MODEL');
    const e = importError({ opType: 'Pad', inputs: [f32([3]), c64([1, 1])], attributes: { mode: 'mirror' } });
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('Pad_0');
  });
});

describe('ConstantOfShape', () => {
  test('default float32 zeros', async () => {
    await run({ opType: 'ConstantOfShape', inputs: [c64([2, 3])] });
  });
  test.each([
    Tensor.from('float32', [1], [2.5]),
    Tensor.from('int64', [1], [-7]),
    Tensor.from('int32', [1], [5]),
    Tensor.from('bool', [1], [1]),
    Tensor.from('float16', [1], [0.5]),
  ])('value %s', async (value) => {
    await run({ opType: 'ConstantOfShape', inputs: [c64([3, 2, 2])], attributes: { value } });
    await run({ opType: 'ConstantOfShape', opset: 21, inputs: [c64([4])], attributes: { value } });
  });
  test('an empty shape gives a scalar; a 0 dim gives an empty tensor', async () => {
    await run({ opType: 'ConstantOfShape', inputs: [c64([])], attributes: { value: Tensor.from('float32', [1], [3]) } });
    await run({ opType: 'ConstantOfShape', inputs: [c64([2, 0])] });
  });
  test('a shape from tensor data is imported at run time', async () => {
    await runDeferred({ opType: 'ConstantOfShape', inputs: [Tensor.from('int64', [2], [2, 3])] });
  });
});

describe('Range', () => {
  test('int64 and int32 (more elements than the folder takes)', async () => {
    await run({ opType: 'Range', inputs: [ci64(-5), ci64(200), ci64(3)] });
    const i32 = (v: number): { constant: Tensor } => ({ constant: Tensor.scalar('int32', v) });
    await run({ opType: 'Range', inputs: [i32(300), i32(0), i32(-4)] });
    await run({ opType: 'Range', inputs: [i32(3), i32(9), i32(-1)] });
  });
  test('float32', async () => {
    const f = (v: number): { constant: Tensor } => ({ constant: Tensor.scalar('float32', v) });
    await run({ opType: 'Range', inputs: [f(0.5), f(10), f(0.75)] });
    await run({ opType: 'Range', opset: 21, inputs: [f(3), f(-2.5), f(-0.5)] });
  });
  test('small int ranges (folded)', async () => {
    await run({ opType: 'Range', inputs: [ci64(2), ci64(7), ci64(2)] });
  });
  test('run-time inputs are imported at run time', async () => {
    const s = (v: number): Tensor => Tensor.scalar('int64', v);
    await runDeferred({ opType: 'Range', inputs: [s(0), s(5), s(1)] });
  });
});

describe('Trilu', () => {
  test.each(DTYPES)('%s upper and lower without k', async (dtype) => {
    await run({ opType: 'Trilu', inputs: [data(dtype, [4, 5])] });
    await run({ opType: 'Trilu', inputs: [data(dtype, [2, 4, 3])], attributes: { upper: 0 } });
  });
  test.each([-2, -1, 1, 3, 10])('k = %i', async (k) => {
    await run({ opType: 'Trilu', inputs: [f32([2, 4, 5]), ci64(k)] });
    await run({ opType: 'Trilu', opset: 21, inputs: [f32([5, 4]), ci64(k)], attributes: { upper: 0 } });
  });
});

describe('OneHot', () => {
  test.each([0, 1, -1, -2])('axis %i with negative and out-of-range indices', async (axis) => {
    const indices = Tensor.from('int64', [2, 3], [0, 4, -1, -5, 7, 2]);
    await run({ opType: 'OneHot', inputs: [indices, ci64(5), { constant: Tensor.from('float32', [2], [-1, 3]) }], attributes: { axis } });
  });
  // onnxruntime implements only some (indices, values, depth) type combinations.
  test('float indices and depth, opset 13 and 21', async () => {
    const indices = Tensor.from('float32', [4], [0, 2, -1, 3]);
    const depth = { constant: Tensor.scalar('float32', 4.2) };
    await run({ opType: 'OneHot', opset: 13, inputs: [indices, depth, { constant: Tensor.from('float32', [2], [0, 9]) }] });
    await run({ opType: 'OneHot', opset: 21, inputs: [indices, depth, { constant: Tensor.from('float32', [2], [0, 9]) }] });
  });
  test('int64 values, int32 indices with run-time values', async () => {
    await run({ opType: 'OneHot', inputs: [Tensor.from('int64', [3], [1, 0, -2]), ci64(3), { constant: Tensor.from('int64', [2], [4, -6]) }] });
    await run({ opType: 'OneHot', inputs: [Tensor.from('int32', [3], [1, 0, 2]), { constant: Tensor.scalar('int32', 3) }, f32([2])] });
  });
});

describe('DepthToSpace / SpaceToDepth', () => {
  test.each(['DCR', 'CRD'])('DepthToSpace %s', async (mode) => {
    await run({ opType: 'DepthToSpace', inputs: [f32([2, 8, 2, 3])], attributes: { blocksize: 2, mode } });
    await run({ opType: 'DepthToSpace', opset: 13, inputs: [f32([1, 9, 2, 2])], attributes: { blocksize: 3, mode } });
  });
  test('SpaceToDepth', async () => {
    await run({ opType: 'SpaceToDepth', inputs: [f32([2, 3, 4, 6])], attributes: { blocksize: 2 } });
    await run({ opType: 'SpaceToDepth', opset: 13, inputs: [data('float16', [1, 2, 3, 3])], attributes: { blocksize: 3 } });
  });
  test('channels not divisible by blocksize² are a bad model', () => {
    expect(importError({ opType: 'DepthToSpace', inputs: [f32([1, 6, 2, 2])], attributes: { blocksize: 2 } }).code).toBe('E_BAD_MODEL');
  });
});
