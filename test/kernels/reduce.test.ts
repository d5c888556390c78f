import { InvalidArgumentError } from '../../lib/errors';
import { amax, amin, argmax, argmin, cumsum, logSoftmax, mean, prod, softmax, sum } from '../../lib/kernels/reduce';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor } from '../helpers/compare';
import { runOrtOp1, type OrtAttributes } from '../helpers/ort-single-op';

function ramp(shape: number[], scale = 0.37, offset = -2): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  // Distinct, irregular values (no ties) so argmax/argmin are well defined.
  return Tensor.from('float32', shape, Array.from({ length: n }, (_, i) => offset + Math.sin(i * 1.3 + 0.2) * 3 + i * scale * 0.01));
}

const axesInput = (axes: number[]): Tensor => Tensor.from('int64', [axes.length], axes.map(BigInt));
const keep = (k: boolean): OrtAttributes => ({ keepdims: k ? 1 : 0 });

describe('sum, mean, prod, amax, amin against onnxruntime', () => {
  const x = ramp([2, 3, 4]);
  const axisCases: Array<[number[], boolean]> = [
    [[0], false],
    [[-1], true],
    [[0, 2], false],
    [[-2, 0], true],
    [[1], false],
  ];

  it.each(axisCases)('ReduceSum over %j keepdims=%s', async (axes, keepdim) => {
    expectClose(sum(x, axes, keepdim), await runOrtOp1({ opType: 'ReduceSum', inputs: [x, axesInput(axes)], attributes: keep(keepdim) }));
  });

  it.each(axisCases)('ReduceMean over %j keepdims=%s', async (axes, keepdim) => {
    expectClose(mean(x, axes, keepdim), await runOrtOp1({ opType: 'ReduceMean', inputs: [x], attributes: { axes, ...keep(keepdim) } }));
  });

  it.each(axisCases)('ReduceProd over %j keepdims=%s', async (axes, keepdim) => {
    expectClose(prod(x, axes, keepdim), await runOrtOp1({ opType: 'ReduceProd', inputs: [x], attributes: { axes, ...keep(keepdim) } }));
  });

  it.each(axisCases)('ReduceMax / ReduceMin over %j keepdims=%s', async (axes, keepdim) => {
    const attrs = { axes, ...keep(keepdim) };
    expectExact(amax(x, axes, keepdim), await runOrtOp1({ opType: 'ReduceMax', inputs: [x], attributes: attrs }));
    expectExact(amin(x, axes, keepdim), await runOrtOp1({ opType: 'ReduceMin', inputs: [x], attributes: attrs }));
  });

  it('all axes when none are given', async () => {
    for (const keepdim of [false, true]) {
      const expected = await runOrtOp1({ opType: 'ReduceSum', inputs: [x], attributes: keep(keepdim) });
      expectClose(sum(x, undefined, keepdim), expected);
      expectClose(sum(x, [], keepdim), expected);
      expectClose(mean(x, [], keepdim), await runOrtOp1({ opType: 'ReduceMean', inputs: [x], attributes: keep(keepdim) }));
    }
  });

  it('a size-0 axis sums to zeros', async () => {
    const empty = new Tensor('float32', [0, 3]);
    expectClose(sum(empty, [0]), await runOrtOp1({ opType: 'ReduceSum', inputs: [empty, axesInput([0])], attributes: keep(false) }));
    expectTensor(sum(empty, [1]), 'float32', [0], []);
    expectTensor(prod(empty, [0]), 'float32', [3], [1, 1, 1]);
    expectTensor(mean(empty, [0]), 'float32', [3], [NaN, NaN, NaN]);
  });

  it('int32 ReduceSum matches with dtype kept', async () => {
    const t = Tensor.from('int32', [2, 3], [1, -2, 3, 40, 50, -60]);
    expectExact(sum(t, [1], false, 'int32'), await runOrtOp1({ opType: 'ReduceSum', inputs: [t, axesInput([1])], attributes: keep(false) }));
  });
});

describe('reduction dtype rules', () => {
  it('sum and prod of bool and integers give int64', () => {
    expectTensor(sum(Tensor.from('bool', [4], [1, 1, 0, 1])), 'int64', [], [3]);
    expectTensor(sum(Tensor.from('int8', [3], [100, 100, 100])), 'int64', [], [300]);
    expectTensor(prod(Tensor.from('int32', [3], [2, -3, 4])), 'int64', [], [-24]);
  });

  it('float16 sums in a wide type and rounds once', () => {
    // 2048 + 1 + 1 in float16 steps would stay 2048 (spacing 2); summed exactly it is 2050.
    expectTensor(sum(Tensor.from('float16', [3], [2048, 1, 1])), 'float16', [], [2050]);
  });

  it('mean of an integer tensor is an error unless a float dtype is asked for', () => {
    const t = Tensor.from('int64', [4], [1n, 2n, 3n, 5n]);
    expect(() => mean(t)).toThrow(/mean: .*int64\[4\]/);
    expectTensor(mean(t, undefined, false, 'float32'), 'float32', [], [2.75]);
  });

  it('sum and mean of complex tensors reduce both parts', () => {
    const z = Tensor.from('complex64', [2, 2], [1, 2, 3, 4, 5, 6, 7, 8]);
    expectTensor(sum(z, [0]), 'complex64', [2], [6, 8, 10, 12]);
    expectTensor(mean(z, [1]), 'complex64', [2], [2, 3, 6, 7]);
    // (1+2i)(3+4i) = 3 + 4i + 6i - 8 = -5 + 10i
    expectTensor(prod(Tensor.from('complex64', [2], [1, 2, 3, 4])), 'complex64', [], [-5, 10]);
  });

  it('amax and amin keep the input type and propagate NaN', () => {
    expectTensor(amax(Tensor.from('int32', [2, 2], [1, 9, -4, 2]), [1]), 'int32', [2], [9, 2]);
    expectTensor(amin(Tensor.from('float32', [2, 2], [1, NaN, -4, 2]), 1), 'float32', [2], [NaN, -4]);
    expectTensor(amax(Tensor.from('bool', [3], [0, 1, 0])), 'bool', [], [1]);
  });
});

describe('reduction argument errors', () => {
  const x = new Tensor('float32', [2, 3]);
  it('rejects out-of-range and repeated axes', () => {
    expect(() => sum(x, [2])).toThrow(/sum: axis 2 is out of range for a tensor of rank 2/);
    expect(() => sum(x, [-3])).toThrow(InvalidArgumentError);
    expect(() => amax(x, [1, -1])).toThrow(/amax: axis -1 appears more than once/);
    expect(() => softmax(x, 5)).toThrow(/softmax: axis 5/);
  });

  it('rejects unknown dtypes and out-of-range cumsum axes', () => {
    expect(() => sum(x, [0], false, 'int3' as 'int32')).toThrow(/sum: unknown dtype "int3"/);
    expect(() => cumsum(x, -3)).toThrow(/cumsum: axis -3 is out of range/);
  });

  it('rejects amax, amin, argmax over an empty axis', () => {
    const empty = new Tensor('float32', [2, 0]);
    expect(() => amax(empty, [1])).toThrow(/amax: cannot reduce over a dimension of size 0/);
    expect(() => amin(empty)).toThrow(InvalidArgumentError);
    expect(() => argmax(empty, 1)).toThrow(/argmax: cannot reduce/);
  });

  it('0-d tensors reduce to themselves', () => {
    const s = Tensor.from('float32', [], [4]);
    expectTensor(sum(s), 'float32', [], [4]);
    expectTensor(sum(s, [0]), 'float32', [], [4]);
    expectTensor(softmax(s, -1), 'float32', [], [1]);
    expectTensor(argmax(s), 'int64', [], [0]);
  });
});

describe('argmax and argmin', () => {
  const x = ramp([3, 4, 2]);

  it.each([
    [0, false],
    [1, true],
    [-1, false],
    [-2, true],
  ])('ArgMax / ArgMin axis %d keepdims=%s', async (axis, keepdim) => {
    const attrs = { axis, ...keep(keepdim) };
    expectExact(argmax(x, axis, keepdim), await runOrtOp1({ opType: 'ArgMax', inputs: [x], attributes: attrs }));
    expectExact(argmin(x, axis, keepdim), await runOrtOp1({ opType: 'ArgMin', inputs: [x], attributes: attrs }));
  });

  it('ties go to the first index, or the last with selectLastIndex (as ONNX select_last_index)', async () => {
    const t = Tensor.from('float32', [2, 4], [1, 3, 3, 0, 5, 5, 5, 5]);
    for (const last of [false, true]) {
      const attrs = { axis: 1, keepdims: 0, select_last_index: last ? 1 : 0 };
      expectExact(argmax(t, 1, false, last), await runOrtOp1({ opType: 'ArgMax', inputs: [t], attributes: attrs }));
      expectExact(argmin(t, 1, false, last), await runOrtOp1({ opType: 'ArgMin', inputs: [t], attributes: attrs }));
    }
    expectTensor(argmax(t, 1), 'int64', [2], [1, 0]);
    expectTensor(argmax(t, 1, false, true), 'int64', [2], [2, 3]);
  });

  it('without an axis, indexes the flattened tensor', () => {
    const t = Tensor.from('int32', [2, 3], [4, 1, 9, 9, 0, 2]);
    expectTensor(argmax(t), 'int64', [], [2]);
    expectTensor(argmin(t), 'int64', [], [4]);
    expectTensor(argmax(t, undefined, true), 'int64', [1, 1], [2]);
  });

  it('NaN counts as the extreme, as in PyTorch', () => {
    const t = Tensor.from('float32', [4], [1, NaN, 7, NaN]);
    expectTensor(argmax(t), 'int64', [], [1]);
    expectTensor(argmin(t), 'int64', [], [1]);
    expectTensor(argmax(t, 0, false, true), 'int64', [], [3]);
  });
});

describe('softmax and logSoftmax', () => {
  const x = ramp([2, 3, 4], 1, 0);

  it.each([0, 1, 2, -1, -3])('Softmax / LogSoftmax axis %d', async (axis) => {
    expectClose(softmax(x, axis), await runOrtOp1({ opType: 'Softmax', inputs: [x], attributes: { axis } }));
    expectClose(logSoftmax(x, axis), await runOrtOp1({ opType: 'LogSoftmax', inputs: [x], attributes: { axis } }));
  });

  it('is stable for large inputs', () => {
    const t = Tensor.from('float64', [3], [1000, 1001, -Infinity]);
    const e = Math.E;
    expectClose(softmax(t, 0), Tensor.from('float64', [3], [1 / (1 + e), e / (1 + e), 0]), { rtol: 1e-14, atol: 0 });
    expectClose(logSoftmax(t, 0), Tensor.from('float64', [3], [-Math.log(1 + e), 1 - Math.log(1 + e), -Infinity]), { rtol: 1e-14, atol: 0 });
  });

  it('keeps float16 and handles size-1 and size-0 axes', () => {
    const h = Tensor.from('float16', [2, 1], [3, -7]);
    expectTensor(softmax(h, 1), 'float16', [2, 1], [1, 1]);
    expectTensor(logSoftmax(h, 1), 'float16', [2, 1], [0, 0]);
    expectTensor(softmax(new Tensor('float32', [0, 5]), 1), 'float32', [0, 5], []);
  });

  it('rejects integer input, as PyTorch', () => {
    expect(() => softmax(Tensor.from('int32', [2], [1, 2]), 0)).toThrow(/softmax: expected a floating-point tensor/);
  });
});

describe('cumsum', () => {
  const x = ramp([3, 4]);
  const axisT = (a: number): Tensor => Tensor.from('int64', [], [BigInt(a)]);

  it.each([
    [0, false, false],
    [1, false, false],
    [-1, true, false],
    [1, false, true],
    [-2, true, true],
  ])('CumSum axis %d exclusive=%s reverse=%s', async (axis, exclusive, reverse) => {
    const attrs = { exclusive: exclusive ? 1 : 0, reverse: reverse ? 1 : 0 };
    expectClose(cumsum(x, axis, { exclusive, reverse }), await runOrtOp1({ opType: 'CumSum', inputs: [x, axisT(axis)], attributes: attrs }));
  });

  it('int32 CumSum keeps int32 when asked (ONNX), PyTorch default gives int64', async () => {
    const t = Tensor.from('int32', [2, 3], [1, 2, 3, 4, 5, 6]);
    expectExact(cumsum(t, 1, { dtype: 'int32' }), await runOrtOp1({ opType: 'CumSum', inputs: [t, axisT(1)] }));
    expectTensor(cumsum(t, 0), 'int64', [2, 3], [1, 2, 3, 5, 7, 9]);
    expectTensor(cumsum(Tensor.from('bool', [3], [1, 0, 1]), 0), 'int64', [3], [1, 1, 2]);
  });

  it('handles size-0 and complex tensors', () => {
    expectTensor(cumsum(new Tensor('float32', [2, 0]), 1), 'float32', [2, 0], []);
    expectTensor(cumsum(Tensor.from('complex64', [2], [1, 2, 3, 4]), 0), 'complex64', [2], [1, 2, 4, 6]);
  });

  it('does not mutate its input', () => {
    const t = Tensor.from('float32', [3], [1, 2, 3]);
    cumsum(t, 0, { reverse: true });
    softmax(t, 0);
    expect(t.toArray()).toEqual([1, 2, 3]);
  });
});
