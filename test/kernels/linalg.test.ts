import { InvalidArgumentError } from '../../lib/errors';
import { addmm, gemm, linear, matmul } from '../../lib/kernels/linalg';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact } from '../helpers/compare';
import { floatAttr, runOrtOp } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

describe('matmul', () => {
  const rng = new Random(11);
  it.each([
    [[4], [4]],
    [[3], [3, 5]],
    [[2, 3], [3]],
    [[2, 3], [3, 4]],
    [[2, 1, 3, 4], [5, 4, 2]],
    [[3, 4], [2, 4, 6]],
    [[7], [2, 7, 3]],
    [[2, 5, 7], [7]],
    [[1, 3, 0], [0, 2]],
    [[0, 2, 3], [3, 4]],
    [[17, 33], [33, 65]],
  ])('matches ONNX MatMul for %j x %j', async (aShape, bShape) => {
    const a = rng.tensor(aShape);
    const b = rng.tensor(bShape);
    const [expected] = await runOrtOp({ opType: 'MatMul', inputs: [a, b] });
    expectClose(matmul(a, b), expected!);
  });

  it('multiplies float64 and int64', async () => {
    const a = rng.tensor([3, 4], 'float64');
    const b = rng.tensor([4, 2], 'float64');
    const [expected] = await runOrtOp({ opType: 'MatMul', inputs: [a, b] });
    expectClose(matmul(a, b), expected!, { rtol: 1e-12, atol: 1e-12 });
    const ia = rng.intTensor([2, 3], -50, 50);
    const ib = rng.intTensor([3, 2], -50, 50);
    const [ie] = await runOrtOp({ opType: 'MatMul', inputs: [ia, ib] });
    expectExact(matmul(ia, ib), ie!);
  });

  it('rounds float16 once from a float64 accumulation', async () => {
    const a = rng.tensor([4, 8], 'float16');
    const b = rng.tensor([8, 3], 'float16');
    const [expected] = await runOrtOp({ opType: 'MatMul', inputs: [a, b] });
    expectClose(matmul(a, b), expected!, { rtol: 2e-3, atol: 2e-3 });
  });

  it('multiplies complex matrices (hand-computed)', () => {
    // [1+2i, 3] @ [[i], [1-i]] = (1+2i)i + 3(1-i) = -2+i + 3-3i = 1-2i
    const a = Tensor.from('complex64', [1, 2], [1, 2, 3, 0]);
    const b = Tensor.from('complex64', [2, 1], [0, 1, 1, -1]);
    const y = matmul(a, b);
    expect(y.shape).toEqual([1, 1]);
    expect(y.toArray()).toEqual([1, -2]);
    // promotion of a real operand
    expect(matmul(Tensor.from('float32', [1], [2]), Tensor.from('complex64', [1], [1, 1])).toArray()).toEqual([2, 2]);
  });

  it('rejects mismatched shapes naming them', () => {
    expect(() => matmul(rng.tensor([2, 3]), rng.tensor([4, 2]))).toThrow(/\[2, 3\] and \[4, 2\]/);
    expect(() => matmul(rng.tensor([2, 2, 3]), rng.tensor([3, 3, 2]))).toThrow(InvalidArgumentError);
    expect(() => matmul(Tensor.scalar('float32', 1), rng.tensor([2]))).toThrow(/matmul/);
  });
});

describe('gemm', () => {
  const rng = new Random(12);
  it.each([
    [false, false, [3, 5]],
    [true, false, [5]],
    [false, true, [1, 5]],
    [true, true, [3, 1]],
    [false, false, []],
    [false, false, null],
  ])('matches ONNX Gemm (transA %s, transB %s, C %j)', async (transA, transB, cShape) => {
    const a = rng.tensor(transA ? [4, 3] : [3, 4]);
    const b = rng.tensor(transB ? [5, 4] : [4, 5]);
    const c = cShape === null ? null : rng.tensor(cShape);
    const attributes = { alpha: floatAttr(0.75), beta: floatAttr(-1.5), transA: transA ? 1 : 0, transB: transB ? 1 : 0 };
    const [expected] = await runOrtOp({ opType: 'Gemm', inputs: [a, b, c], attributes });
    expectClose(gemm(a, b, c, { alpha: 0.75, beta: -1.5, transA, transB }), expected!);
  });

  it('rejects a C that does not broadcast', () => {
    expect(() => gemm(rng.tensor([2, 3]), rng.tensor([3, 4]), rng.tensor([3, 4]))).toThrow(/\[3, 4\]/);
  });
});

describe('linear / addmm', () => {
  const rng = new Random(13);
  it('matches x @ W^T + b via ONNX Gemm(transB) on 2-D inputs', async () => {
    const x = rng.tensor([5, 7]);
    const w = rng.tensor([3, 7]);
    const b = rng.tensor([3]);
    const [expected] = await runOrtOp({ opType: 'Gemm', inputs: [x, w, b], attributes: { transB: 1 } });
    expectClose(linear(x, w, b), expected!);
  });

  it('keeps leading batch dims (ONNX MatMul with the transposed weight)', async () => {
    const x = rng.tensor([2, 3, 7]);
    const w = rng.tensor([4, 7]);
    const wt = Tensor.from('float32', [7, 4], Array.from({ length: 28 }, (_, k) => w.toArray()[(k % 4) * 7 + Math.floor(k / 4)]!));
    const [expected] = await runOrtOp({ opType: 'MatMul', inputs: [x, wt] });
    expectClose(linear(x, w), expected!);
  });

  it('handles a 1-D weight and an empty batch (hand-computed)', () => {
    const x = Tensor.from('float32', [2, 2], [1, 2, 3, 4]);
    const w = Tensor.from('float32', [2], [10, 1]);
    const y = linear(x, w, Tensor.scalar('float32', 0.5));
    expect(y.shape).toEqual([2]);
    expect(y.toArray()).toEqual([12.5, 34.5]);
    expect(linear(new Tensor('float32', [0, 2]), rng.tensor([3, 2])).shape).toEqual([0, 3]);
    expect(() => linear(x, rng.tensor([3, 5]))).toThrow(/linear/);
  });

  it('matches ONNX Gemm for addmm with beta and alpha', async () => {
    const bias = rng.tensor([1, 4]);
    const a = rng.tensor([3, 5]);
    const b = rng.tensor([5, 4]);
    const [expected] = await runOrtOp({ opType: 'Gemm', inputs: [a, b, bias], attributes: { alpha: floatAttr(2), beta: floatAttr(0.5) } });
    expectClose(addmm(bias, a, b, 0.5, 2), expected!);
  });

  it('ignores the bias (even NaN) when beta is 0, as PyTorch', () => {
    const y = addmm(Tensor.from('float32', [1], [NaN]), Tensor.from('float32', [1, 1], [2]), Tensor.from('float32', [1, 1], [3]), 0);
    expect(y.toArray()).toEqual([6]);
  });
});
