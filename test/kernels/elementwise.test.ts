import { InvalidArgumentError } from '../../lib/errors';
import type { DType } from '../../lib/ir/dtype';
import {
  add,
  div,
  eq,
  fmod,
  ge,
  gt,
  le,
  logicalAnd,
  logicalOr,
  logicalXor,
  lt,
  maximum,
  minimum,
  mul,
  ne,
  pow,
  remainder,
  resultType,
  resultTypeOf,
  sub,
  where,
  type Operand,
} from '../../lib/kernels/elementwise';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor } from '../helpers/compare';
import { runOrtOp1 } from '../helpers/ort-single-op';

/** Deterministic pseudo-random values in [lo, hi), so failures reproduce. */
function seeded(n: number, lo: number, hi: number, seed = 1): number[] {
  let s = seed >>> 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(lo + ((hi - lo) * s) / 2 ** 32);
  }
  return out;
}

function rand(dtype: DType, shape: number[], lo = -3, hi = 3, seed = 1): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = seeded(n, lo, hi, seed);
  const ints = dtype === 'int32' || dtype === 'int64' || dtype === 'int8' || dtype === 'uint8';
  return Tensor.from(dtype, shape, ints ? values.map(Math.trunc) : values);
}

describe('resultType (PyTorch promotion)', () => {
  const t = (dtype: DType, shape: number[] = [2]): Tensor => new Tensor(dtype, shape);
  const cases: Array<[string, Operand, Operand, DType]> = [
    ['int tensor + int scalar keeps int32', t('int32'), 2, 'int32'],
    ['int tensor + float scalar gives the default float32', t('int32'), 2.5, 'float32'],
    ['explicit float scalar promotes int to float32', t('int64'), { value: 2, kind: 'float' }, 'float32'],
    ['float16 tensor * float scalar stays float16', t('float16'), { value: 3, kind: 'float' }, 'float16'],
    ['bool tensor + int scalar gives int64', t('bool'), 1, 'int64'],
    ['bool tensor + bool scalar stays bool', t('bool'), true, 'bool'],
    ['float64 0-d tensor does not promote a float32 tensor', t('float32'), t('float64', []), 'float32'],
    ['int64 0-d tensor does not promote an int32 tensor', t('int32'), t('int64', []), 'int32'],
    ['float64 0-d tensor promotes an int tensor to float64', t('int64'), t('float64', []), 'float64'],
    ['two tensors of rank ≥ 1 promote normally', t('float16'), t('float32', [1]), 'float32'],
    ['uint8 with int8 gives int16, as PyTorch', t('uint8'), t('int8'), 'int16'],
    ['float16 with bfloat16 gives float32', t('float16'), t('bfloat16'), 'float32'],
    ['complex64 with float64 tensor gives complex128', t('complex64'), t('float64'), 'complex128'],
    ['complex64 tensor * float scalar stays complex64', t('complex64'), 2.5, 'complex64'],
    ['int8 0-d tensor + int scalar stays int8', t('int8', []), 5, 'int8'],
    ['two scalars: int and float give float32', 2, 2.5, 'float32'],
    ['two int scalars give int64', 2, 3, 'int64'],
  ];
  it.each(cases)('%s', (_name, a, b, expected) => {
    expect(resultType(a, b)).toBe(expected);
    expect(resultType(b, a)).toBe(expected);
  });

  it('combines three operands as torch.result_type does', () => {
    expect(resultTypeOf([t('int32'), 1, 2.5])).toBe('float32');
    expect(resultTypeOf([t('float16'), t('float64', []), 2])).toBe('float16');
  });
});

describe('binary arithmetic against onnxruntime', () => {
  const ops: Array<[string, (a: Tensor, b: Tensor) => Tensor]> = [
    ['Add', (a, b) => add(a, b)],
    ['Sub', (a, b) => sub(a, b)],
    ['Mul', (a, b) => mul(a, b)],
    ['Div', (a, b) => div(a, b)],
  ];
  const shapes: Array<[number[], number[]]> = [
    [[2, 3, 1], [4]],
    [[1, 1], [2, 1]],
    [[3], []],
    [[0, 3], [3]],
    [[2, 1, 3], [1, 4, 1]],
  ];
  for (const [op, f] of ops) {
    it.each(shapes)(`${op} float32 %j with %j broadcasts`, async (sa, sb) => {
      const a = rand('float32', sa, -3, 3, 7);
      const b = rand('float32', sb, 0.5, 4, 11);
      expectClose(f(a, b), await runOrtOp1({ opType: op, inputs: [a, b] }));
    });
  }

  it.each(['Add', 'Mul'])('%s float16 matches', async (op) => {
    const a = rand('float16', [2, 5], -4, 4, 3);
    const b = rand('float16', [5], -4, 4, 5);
    const ours = op === 'Add' ? add(a, b) : mul(a, b);
    expectClose(ours, await runOrtOp1({ opType: op, inputs: [a, b] }), { rtol: 1e-3, atol: 1e-3 });
  });

  it('Add and Mul int32 match', async () => {
    const a = rand('int32', [3, 4], -100, 100, 2);
    const b = rand('int32', [4], -100, 100, 9);
    expectExact(add(a, b), await runOrtOp1({ opType: 'Add', inputs: [a, b] }));
    expectExact(mul(a, b), await runOrtOp1({ opType: 'Mul', inputs: [a, b] }));
  });

  it('integer Div (truncating in ONNX) matches div(trunc)', async () => {
    const a = Tensor.from('int32', [6], [7, -7, 7, -7, 0, 9]);
    const b = Tensor.from('int32', [6], [2, 2, -2, -2, 3, 4]);
    expectExact(div(a, b, 'trunc'), await runOrtOp1({ opType: 'Div', inputs: [a, b] }));
  });

  it('Pow float32 with broadcasting matches', async () => {
    const a = rand('float32', [2, 3], 0.1, 3, 4);
    const b = rand('float32', [3], -2, 2, 8);
    expectClose(pow(a, b), await runOrtOp1({ opType: 'Pow', inputs: [a, b] }));
  });

  it('Mod fmod=1 matches fmod on floats, Mod fmod=0 matches remainder on ints', async () => {
    const a = Tensor.from('float32', [6], [5.5, -5.5, 5.5, -5.5, 3, -0.25]);
    const b = Tensor.from('float32', [6], [2, 2, -2, -2, 1.5, 0.2]);
    expectClose(fmod(a, b), await runOrtOp1({ opType: 'Mod', inputs: [a, b], attributes: { fmod: 1 } }));
    const ia = Tensor.from('int32', [6], [7, -7, 7, -7, 6, -1]);
    const ib = Tensor.from('int32', [6], [3, 3, -3, -3, 3, 5]);
    expectExact(remainder(ia, ib), await runOrtOp1({ opType: 'Mod', inputs: [ia, ib] }));
    expectExact(fmod(ia, ib), await runOrtOp1({ opType: 'Mod', inputs: [ia, ib], attributes: { fmod: 1 } }));
  });

  it('Max and Min match maximum and minimum', async () => {
    const a = rand('float32', [3, 1], -2, 2, 12);
    const b = rand('float32', [1, 4], -2, 2, 13);
    expectExact(maximum(a, b), await runOrtOp1({ opType: 'Max', inputs: [a, b] }));
    expectExact(minimum(a, b), await runOrtOp1({ opType: 'Min', inputs: [a, b] }));
  });
});

describe('comparisons and logic against onnxruntime', () => {
  const a = Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6]);
  const b = Tensor.from('float32', [3], [2, 2, 5]);
  const cmp: Array<[string, (x: Tensor, y: Tensor) => Tensor]> = [
    ['Equal', eq],
    ['Less', lt],
    ['LessOrEqual', le],
    ['Greater', gt],
    ['GreaterOrEqual', ge],
  ];
  it.each(cmp)('%s', async (op, f) => {
    expectExact(f(a, b), await runOrtOp1({ opType: op, inputs: [a, b] }));
  });

  const p = Tensor.from('bool', [2, 2], [1, 1, 0, 0]);
  const q = Tensor.from('bool', [2], [1, 0]);
  const logic: Array<[string, (x: Tensor, y: Tensor) => Tensor]> = [
    ['And', logicalAnd],
    ['Or', logicalOr],
    ['Xor', logicalXor],
  ];
  it.each(logic)('%s', async (op, f) => {
    expectExact(f(p, q), await runOrtOp1({ opType: op, inputs: [p, q] }));
  });

  it('Where with three-way broadcasting', async () => {
    const cond = Tensor.from('bool', [2, 1, 3], [1, 0, 1, 0, 0, 1]);
    const x = rand('float32', [4, 1], -1, 1, 21);
    const y = rand('float32', [3], -1, 1, 22);
    expectExact(where(cond, x, y), await runOrtOp1({ opType: 'Where', inputs: [cond, x, y] }));
  });

  it('Where on int64 with a size-0 dimension', async () => {
    const cond = new Tensor('bool', [0, 2]);
    const x = Tensor.from('int64', [2], [1n, 2n]);
    const y = Tensor.from('int64', [1], [9n]);
    expectExact(where(cond, x, y), await runOrtOp1({ opType: 'Where', inputs: [cond, x, y] }));
  });
});

describe('scalar operands', () => {
  it('int tensor + 2 stays int32, + 2.5 gives float32', () => {
    const t = Tensor.from('int32', [3], [1, -2, 3]);
    expectTensor(add(t, 2), 'int32', [3], [3, 0, 5]);
    expectTensor(add(t, 2.5), 'float32', [3], [3.5, 0.5, 5.5]);
    expectTensor(add(2, t), 'int32', [3], [3, 0, 5]);
  });

  it('float16 tensor * 3 stays float16', () => {
    const t = Tensor.from('float16', [2], [0.5, 1.5]);
    expectTensor(mul(t, { value: 3, kind: 'float' }), 'float16', [2], [1.5, 4.5]);
  });

  it('bool tensor + 1 gives int64', () => {
    expectTensor(add(Tensor.from('bool', [2], [1, 0]), 1), 'int64', [2], [2, 1]);
  });

  it('compares in the common dtype, so float16(0.1) == 0.1', () => {
    const t = Tensor.from('float16', [1], [0.1]);
    expectTensor(eq(t, 0.1), 'bool', [1], [1]);
    expectTensor(eq(Tensor.from('float32', [1], [0.1]), 0.1), 'bool', [1], [1]);
    expectTensor(eq(Tensor.from('float64', [1], [0.1]), Math.fround(0.1)), 'bool', [1], [0]);
  });

  it('sub and mul with a scalar on the left', () => {
    expectTensor(sub(10, Tensor.from('int64', [2], [1n, 4n])), 'int64', [2], [9, 6]);
    expectTensor(div(1, Tensor.from('float32', [2], [4, 8])), 'float32', [2], [0.25, 0.125]);
  });
});

describe('arithmetic details', () => {
  it('add and sub take alpha on the second operand', () => {
    const a = Tensor.from('float32', [2], [1, 2]);
    const b = Tensor.from('float32', [2], [10, 20]);
    expectTensor(add(a, b, 0.5), 'float32', [2], [6, 12]);
    expectTensor(sub(a, b, 2), 'float32', [2], [-19, -38]);
    expect(() => add(Tensor.from('int32', [1], [1]), 1, 0.5)).toThrow(InvalidArgumentError);
  });

  it('sub with a bool operand is an error, as in PyTorch', () => {
    const b = Tensor.from('bool', [1], [1]);
    expect(() => sub(b, b)).toThrow(/sub: .*bool/);
    expect(() => sub(Tensor.from('int32', [1], [1]), true)).toThrow(InvalidArgumentError);
  });

  it('bool + bool and bool * bool stay bool (or / and)', () => {
    const p = Tensor.from('bool', [4], [0, 0, 1, 1]);
    const q = Tensor.from('bool', [4], [0, 1, 0, 1]);
    expectTensor(add(p, q), 'bool', [4], [0, 1, 1, 1]);
    expectTensor(mul(p, q), 'bool', [4], [0, 0, 0, 1]);
  });

  it('int32 overflow wraps as in PyTorch', () => {
    expectTensor(add(Tensor.from('int32', [1], [2147483647]), 1), 'int32', [1], [-2147483648]);
    expectTensor(mul(Tensor.from('int8', [1], [100]), Tensor.from('int8', [1], [3])), 'int8', [1], [44]);
    // Products and powers past 2^53 keep their low 32 bits exactly (hand-computed mod 2^32):
    // (2^31 − 1)^2 = 2^62 − 2^32 + 1 ≡ 1, and 3^40 ≡ 689956897.
    expectTensor(mul(Tensor.from('int32', [1], [2147483647]), Tensor.from('int32', [1], [2147483647])), 'int32', [1], [1]);
    expectTensor(pow(Tensor.from('int32', [1], [3]), Tensor.from('int32', [1], [40])), 'int32', [1], [689956897]);
  });

  it('true division of integers gives float32', () => {
    expectTensor(div(Tensor.from('int64', [2], [7n, -7n]), Tensor.from('int64', [2], [2n, 2n])), 'float32', [2], [3.5, -3.5]);
    expectTensor(div(Tensor.from('bool', [1], [1]), Tensor.from('bool', [1], [1])), 'float32', [1], [1]);
  });

  it('floor and trunc rounding modes', () => {
    const a = Tensor.from('int32', [4], [7, -7, 7, -7]);
    const b = Tensor.from('int32', [4], [2, 2, -2, -2]);
    expectTensor(div(a, b, 'floor'), 'int32', [4], [3, -4, -4, 3]);
    expectTensor(div(a, b, 'trunc'), 'int32', [4], [3, -3, -3, 3]);
    const fa = Tensor.from('float64', [4], [7.5, -7.5, 1, 5]);
    const fb = Tensor.from('float64', [4], [2, 2, 0.1, 0]);
    // Python: 7.5 // 2 = 3, -7.5 // 2 = -4, 1 // 0.1 = 9 (0.1 is slightly above 1/10), 5 // 0 = inf.
    expectTensor(div(fa, fb, 'floor'), 'float64', [4], [3, -4, 9, Infinity]);
    expectTensor(div(fa, fb, 'trunc'), 'float64', [4], [3, -3, 10, Infinity]);
  });

  it('integer division by zero throws', () => {
    const a = Tensor.from('int32', [2], [1, 2]);
    const z = Tensor.from('int32', [2], [1, 0]);
    expect(() => div(a, z, 'floor')).toThrow(/division by zero/);
    expect(() => remainder(a, z)).toThrow(InvalidArgumentError);
    expect(() => fmod(a, z)).toThrow(InvalidArgumentError);
    expectTensor(div(a, z), 'float32', [2], [1, Infinity]);
  });

  it('remainder has the sign of the divisor, fmod that of the dividend', () => {
    const a = Tensor.from('float32', [4], [-3, 3, -3, 3]);
    const b = Tensor.from('float32', [4], [2, -2, -2, 2]);
    expectTensor(remainder(a, b), 'float32', [4], [1, -1, -1, 1]);
    expectTensor(fmod(a, b), 'float32', [4], [-1, 1, -1, 1]);
    expect(remainder(Tensor.from('float32', [1], [1]), 0).toArray()[0]).toBeNaN();
  });

  it('integer pow follows PyTorch for negative exponents', () => {
    const base = Tensor.from('int64', [5], [2n, 1n, -1n, -1n, 3n]);
    const exp = Tensor.from('int64', [5], [-1n, -3n, -3n, -2n, 4n]);
    expectTensor(pow(base, exp), 'int64', [5], [0, 1, -1, 1, 81]);
    expectTensor(pow(Tensor.from('int32', [2], [4, 9]), 0.5), 'float32', [2], [2, 3]);
  });

  it('pow keeps C semantics for 1 ** NaN and (-1) ** inf', () => {
    const r = pow(Tensor.from('float64', [3], [1, -1, NaN]), Tensor.from('float64', [3], [NaN, Infinity, 0]));
    expectTensor(r, 'float64', [3], [1, 1, 1]);
  });

  it('maximum and minimum propagate NaN', () => {
    const a = Tensor.from('float32', [3], [NaN, 1, 2]);
    const b = Tensor.from('float32', [3], [0, NaN, 3]);
    expectTensor(maximum(a, b), 'float32', [3], [NaN, NaN, 3]);
    expectTensor(minimum(a, b), 'float32', [3], [NaN, NaN, 2]);
  });

  it('comparisons with NaN, and ne', () => {
    const a = Tensor.from('float32', [2], [NaN, 1]);
    expectTensor(eq(a, a), 'bool', [2], [0, 1]);
    expectTensor(ne(a, a), 'bool', [2], [1, 0]);
    expectTensor(lt(a, 2), 'bool', [2], [0, 1]);
  });

  it('logical ops treat nonzero (NaN too) as true on any dtype', () => {
    const a = Tensor.from('float32', [4], [0, NaN, -2, 0]);
    const b = Tensor.from('int32', [4], [0, 0, 5, 1]);
    expectTensor(logicalAnd(a, b), 'bool', [4], [0, 0, 1, 0]);
    expectTensor(logicalOr(a, b), 'bool', [4], [0, 1, 1, 1]);
    expectTensor(logicalXor(a, b), 'bool', [4], [0, 1, 0, 1]);
  });

  it('where promotes its branches and takes scalars', () => {
    const cond = Tensor.from('bool', [3], [1, 0, 1]);
    expectTensor(where(cond, Tensor.from('int32', [3], [1, 2, 3]), 0.5), 'float32', [3], [1, 0.5, 3]);
    expectTensor(where(cond, 1, 0), 'int64', [3], [1, 0, 1]);
    expect(() => where(Tensor.from('uint8', [3], [1, 0, 1]), 1, 0)).toThrow(/where: the condition must be a bool tensor/);
  });

  it('shape clashes name the kernel and both shapes', () => {
    const a = new Tensor('float32', [2, 3]);
    const b = new Tensor('float32', [4]);
    expect(() => add(a, b)).toThrow(InvalidArgumentError);
    expect(() => add(a, b)).toThrow(/add: .*\[2, 3\].*\[4\]/);
    expect(() => where(new Tensor('bool', [5]), a, a)).toThrow(/where: .*\[5\]/);
  });

  it('does not mutate its inputs', () => {
    const a = Tensor.from('float32', [2], [1, 2]);
    const b = Tensor.from('float64', [], [0.5]);
    add(a, b, 3);
    div(a, b, 'floor');
    expect(a.toArray()).toEqual([1, 2]);
    expect(b.toArray()).toEqual([0.5]);
  });
});

describe('complex dispatch from the real entry points', () => {
  const z = Tensor.from('complex64', [2], [1, 2, 3, -4]);

  it('add, sub, mul and div accept complex and real operands', () => {
    const r = Tensor.from('float32', [2], [10, 2]);
    // (1+2i)+10 = 11+2i, (3-4i)+2 = 5-4i
    expectTensor(add(z, r), 'complex64', [2], [11, 2, 5, -4]);
    expectTensor(sub(z, r, 2), 'complex64', [2], [-19, 2, -1, -4]);
    // (1+2i)(3-4i) = 3 - 4i + 6i + 8 = 11 + 2i; (3-4i)(3-4i) = 9 - 24i - 16 = -7 - 24i
    expectTensor(mul(z, Tensor.from('complex64', [], [3, -4])), 'complex64', [2], [11, 2, -7, -24]);
    // (1+2i)/(1+2i) = 1; (3-4i)/(1+2i) = (3-4i)(1-2i)/5 = (3 - 6i - 4i - 8)/5 = -1 - 2i
    expectTensor(div(z, Tensor.from('complex64', [], [1, 2])), 'complex64', [2], [1, 0, -1, -2]);
    expectTensor(mul(z, 2), 'complex64', [2], [2, 4, 6, -8]);
  });

  it('complex64 with a float64 tensor gives complex128', () => {
    expect(add(z, Tensor.from('float64', [1], [1])).dtype).toBe('complex128');
  });

  it('eq and ne compare both parts; ordering is an error', () => {
    const w = Tensor.from('complex64', [2], [1, 2, 3, 4]);
    expectTensor(eq(z, w), 'bool', [2], [1, 0]);
    expectTensor(ne(z, w), 'bool', [2], [0, 1]);
    expect(() => lt(z, w)).toThrow(/lt: complex/);
    expect(() => maximum(z, w)).toThrow(InvalidArgumentError);
  });

  it('pow is the complex power: z² a product (as torch.pow with the Scalar 2), a real base promoted', () => {
    // (1 + 2i)² = −3 + 4i, (3 − 4i)² = −7 − 24i.
    expectTensor(pow(z, 2), 'complex64', [2], [-3, 4, -7, -24]);
    // 4^(1/2 + 0i) through e^(w·log 4) is 2 up to rounding.
    expectClose(pow(Tensor.from('float32', [1], [4]), Tensor.from('complex64', [1], [0.5, 0])), Tensor.from('complex64', [1], [2, 0]));
  });

  it('where selects complex pairs', () => {
    const cond = Tensor.from('bool', [2], [0, 1]);
    expectTensor(where(cond, z, 0), 'complex64', [2], [0, 0, 3, -4]);
  });
});
