import { InvalidArgumentError } from '../../lib/errors';
import type { DType } from '../../lib/ir/dtype';
import {
  abs,
  cast,
  ceil,
  clamp,
  cos,
  elu,
  erf,
  erfNumber,
  exp,
  floor,
  gelu,
  hardsigmoid,
  hardswish,
  hardtanh,
  isinf,
  isnan,
  leakyRelu,
  log,
  log1p,
  logicalNot,
  neg,
  reciprocal,
  relu,
  round,
  rsqrt,
  sigmoid,
  sign,
  silu,
  sin,
  softplus,
  sqrt,
  tan,
  tanh,
  trunc,
} from '../../lib/kernels/unary';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor } from '../helpers/compare';
import { floatAttr, runOrtGraph, runOrtOp1 } from '../helpers/ort-single-op';

const X = Tensor.from('float32', [2, 4], [-3.5, -1, -0.25, 0, 0.3, 1, 2.5, 6]);
const POSITIVE = Tensor.from('float32', [2, 3], [0.01, 0.5, 1, 2, 10, 1000]);

describe('float functions against onnxruntime', () => {
  const cases: Array<[string, (t: Tensor) => Tensor, Tensor]> = [
    ['Exp', exp, X],
    ['Log', log, POSITIVE],
    ['Sqrt', sqrt, POSITIVE],
    ['Reciprocal', reciprocal, POSITIVE],
    ['Sin', sin, X],
    ['Cos', cos, X],
    ['Tan', tan, X],
    ['Tanh', tanh, X],
    ['Sigmoid', sigmoid, X],
    ['Relu', relu, X],
    ['Erf', erf, X],
    ['Neg', neg, X],
    ['Abs', abs, X],
    ['Sign', sign, X],
    ['Floor', floor, X],
    ['Ceil', ceil, X],
    ['HardSwish', hardswish, X],
    ['Softplus', softplus, X],
  ];
  it.each(cases)('%s', async (op, f, input) => {
    expectClose(f(input), await runOrtOp1({ opType: op, inputs: [input] }));
  });

  it('Round is half to even', async () => {
    const t = Tensor.from('float32', [10], [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 2.51, -3.7, 7]);
    expectExact(round(t), await runOrtOp1({ opType: 'Round', inputs: [t] }));
  });

  it('HardSigmoid with ONNX (alpha 0.2) and PyTorch (1/6, 0.5) parameters', async () => {
    const onnxDefault = await runOrtOp1({ opType: 'HardSigmoid', inputs: [X] });
    expectClose(hardsigmoid(X, { alpha: 0.2, beta: 0.5 }), onnxDefault);
    const torchLike = await runOrtOp1({ opType: 'HardSigmoid', inputs: [X], attributes: { alpha: floatAttr(1 / 6), beta: floatAttr(0.5) } });
    expectClose(hardsigmoid(X), torchLike);
  });

  it('LeakyRelu and Elu with parameters', async () => {
    expectClose(leakyRelu(X, 0.1), await runOrtOp1({ opType: 'LeakyRelu', inputs: [X], attributes: { alpha: floatAttr(0.1) } }));
    expectClose(elu(X, 0.7), await runOrtOp1({ opType: 'Elu', inputs: [X], attributes: { alpha: floatAttr(0.7) } }));
  });

  it('Clip with min and max', async () => {
    const lo = Tensor.from('float32', [], [-1]);
    const hi = Tensor.from('float32', [], [2]);
    expectExact(clamp(X, lo, hi), await runOrtOp1({ opType: 'Clip', inputs: [X, lo, hi] }));
    expectClose(hardtanh(X), await runOrtOp1({ opType: 'Clip', inputs: [X, Tensor.from('float32', [], [-1]), Tensor.from('float32', [], [1])] }));
  });

  it('exact gelu matches x·(1 + erf(x/√2))/2 built from ONNX Erf', async () => {
    const t = Tensor.from('float32', [3, 3], [-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4]);
    const c = (v: number): Tensor => Tensor.from('float32', [], [v]);
    const [y] = await runOrtGraph({
      nodes: [
        { opType: 'Div', inputs: ['x', 'sqrt2'], outputs: ['a'] },
        { opType: 'Erf', inputs: ['a'], outputs: ['b'] },
        { opType: 'Add', inputs: ['b', 'one'], outputs: ['c'] },
        { opType: 'Mul', inputs: ['x', 'c'], outputs: ['d'] },
        { opType: 'Mul', inputs: ['d', 'half'], outputs: ['y'] },
      ],
      inputs: { x: t, sqrt2: c(Math.SQRT2), one: c(1), half: c(0.5) },
      outputs: ['y'],
    });
    expectClose(gelu(t), y!);
  });

  it('float64 Exp keeps float64', async () => {
    const t = Tensor.from('float64', [4], [-2, -0.1, 0.7, 3]);
    expectClose(exp(t), await runOrtOp1({ opType: 'Exp', inputs: [t] }), { rtol: 1e-12, atol: 0 });
  });

  it('IsNaN, IsInf and Not', async () => {
    const t = Tensor.from('float32', [5], [NaN, Infinity, -Infinity, 0, 1]);
    expectExact(isnan(t), await runOrtOp1({ opType: 'IsNaN', inputs: [t] }));
    expectExact(isinf(t), await runOrtOp1({ opType: 'IsInf', inputs: [t] }));
    const b = Tensor.from('bool', [3], [1, 0, 1]);
    expectExact(logicalNot(b), await runOrtOp1({ opType: 'Not', inputs: [b] }));
  });
});

describe('erf', () => {
  // Reference values of erf to 16 digits (e.g. Abramowitz & Stegun table 7.1 to its precision).
  const table: Array<[number, number]> = [
    [0.1, 0.1124629160182849],
    [0.5, 0.5204998778130465],
    [1, 0.8427007929497149],
    [1.5, 0.9661051464753108],
    [2, 0.9953222650189527],
    [2.5, 0.999593047982555],
    [3, 0.9999779095030014],
    [4, 0.9999999845827421],
    [5, 0.9999999999984626],
  ];
  it.each(table)('erf(±%d) is within 1e-7 (in fact 1e-14)', (x, expected) => {
    expect(Math.abs(erfNumber(x) - expected)).toBeLessThan(1e-14);
    expect(Math.abs(erfNumber(-x) + expected)).toBeLessThan(1e-14);
  });

  it('handles 0, tiny, huge and NaN arguments', () => {
    expect(erfNumber(0)).toBe(0);
    expect(Math.abs(erfNumber(1e-10) - 1e-10 * (2 / Math.sqrt(Math.PI)))).toBeLessThan(1e-24);
    expect(erfNumber(30)).toBe(1);
    expect(erfNumber(-Infinity)).toBe(-1);
    expect(erfNumber(NaN)).toBeNaN();
  });

  it('is odd and increasing on a fine grid', () => {
    let previous = -1;
    for (let x = -6; x <= 6; x += 0.01) {
      const y = erfNumber(x);
      expect(y).toBeGreaterThanOrEqual(previous);
      expect(erfNumber(-x)).toBe(-y);
      previous = y;
    }
  });
});

describe('dtype rules', () => {
  it.each<[string, (t: Tensor) => Tensor]>([
    ['exp', exp],
    ['sqrt', sqrt],
    ['sin', sin],
    ['sigmoid', sigmoid],
    ['reciprocal', reciprocal],
    ['erf', erf],
  ])('%s of an int tensor gives float32', (_name, f) => {
    expect(f(Tensor.from('int64', [2], [1n, 4n])).dtype).toBe('float32');
    expect(f(Tensor.from('bool', [2], [1, 0])).dtype).toBe('float32');
  });

  it('sqrt of int gives the float32 values', () => {
    expectTensor(sqrt(Tensor.from('int32', [3], [0, 4, 9])), 'float32', [3], [0, 2, 3]);
    expectTensor(rsqrt(Tensor.from('int32', [2], [4, 16])), 'float32', [2], [0.5, 0.25]);
  });

  it('float16 in, float16 out, rounded once', () => {
    const t = Tensor.from('float16', [3], [0.5, 1, 2]);
    const values = t.toArray();
    expectTensor(exp(t), 'float16', [3], Tensor.from('float16', [3], values.map(Math.exp)).toArray());
    expectTensor(log1p(t), 'float16', [3], Tensor.from('float16', [3], values.map(Math.log1p)).toArray());
  });

  it.each<[string, (t: Tensor) => Tensor]>([
    ['gelu', (t) => gelu(t)],
    ['silu', silu],
    ['hardswish', hardswish],
    ['hardsigmoid', (t) => hardsigmoid(t)],
    ['leakyRelu', (t) => leakyRelu(t)],
    ['elu', (t) => elu(t)],
    ['softplus', (t) => softplus(t)],
  ])('%s rejects integer input, as PyTorch', (name, f) => {
    expect(() => f(Tensor.from('int32', [1], [1]))).toThrow(new RegExp(`${name}: expected a floating-point tensor`));
  });

  it('neg, abs, sign and relu keep integer types', () => {
    const t = Tensor.from('int32', [4], [-3, 0, 2, -128]);
    expectTensor(neg(t), 'int32', [4], [3, 0, -2, 128]);
    expectTensor(abs(t), 'int32', [4], [3, 0, 2, 128]);
    expectTensor(sign(t), 'int32', [4], [-1, 0, 1, -1]);
    expectTensor(relu(t), 'int32', [4], [0, 0, 2, 0]);
    // int8 abs(-128) wraps back to -128, as in PyTorch.
    expectTensor(abs(Tensor.from('int8', [1], [-128])), 'int8', [1], [-128]);
  });

  it('neg of bool is an error; sign of NaN is 0 as torch.sign', () => {
    expect(() => neg(Tensor.from('bool', [1], [1]))).toThrow(InvalidArgumentError);
    expectTensor(sign(Tensor.from('float32', [1], [NaN])), 'float32', [1], [0]);
  });

  it('floor, ceil, round and trunc of integers are copies', () => {
    const t = Tensor.from('int64', [2], [5n, -7n]);
    const r = floor(t);
    expectTensor(r, 'int64', [2], [5, -7]);
    expect(r.data).not.toBe(t.data);
    expectTensor(round(t), 'int64', [2], [5, -7]);
  });
});

describe('activations by their definitions', () => {
  const xs = [-25, -3, -1, -0.5, 0, 0.5, 1, 3, 25];
  const t = Tensor.from('float64', [xs.length], xs);
  const near = (actual: Tensor, expected: number[]): void => expectClose(actual, Tensor.from('float64', [expected.length], expected), { rtol: 1e-12, atol: 1e-15 });

  it('silu = x·sigmoid(x)', () => near(silu(t), xs.map((x) => x / (1 + Math.exp(-x)))));
  it('hardswish = x·relu6(x + 3)/6', () => near(hardswish(t), xs.map((x) => (x * Math.min(6, Math.max(0, x + 3))) / 6)));
  it('tanh gelu follows its formula', () =>
    near(
      gelu(t, { approximate: 'tanh' }),
      xs.map((x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)))),
    ));
  it('softplus with beta and threshold', () => {
    near(softplus(t, 2, 5), xs.map((x) => (2 * x > 5 ? x : Math.log(1 + Math.exp(2 * x)) / 2)));
    // Default threshold 20: x = 25 is returned as is.
    expect(softplus(t).toArray()[8]).toBe(25);
  });
  it('elu default alpha 1', () => near(elu(t), xs.map((x) => (x > 0 ? x : Math.exp(x) - 1))));
  it('relu keeps NaN', () => expect(relu(Tensor.from('float32', [1], [NaN])).toArray()[0]).toBeNaN());
  it('gelu rejects an unknown approximation', () =>
    expect(() => gelu(t, { approximate: 'fast' as 'tanh' })).toThrow(InvalidArgumentError));
});

describe('round', () => {
  it('rounds half to even and keeps the sign of zero', () => {
    const t = Tensor.from('float64', [7], [0.5, 1.5, 2.5, -0.5, -2.5, -0.4, 3.5]);
    const r = round(t).toArray();
    expect(r).toEqual([0, 2, 2, -0, -2, -0, 4]);
    expect(Object.is(r[3], -0)).toBe(true);
  });

  it('takes decimals as torch.round (scale, round half to even, scale back)', () => {
    // 0.125·100 = 12.5 exactly, which rounds to the even 12.
    expectClose(round(Tensor.from('float64', [4], [1.2345, -2.5051, 0.125, 1234.5]), 2), Tensor.from('float64', [4], [1.23, -2.51, 0.12, 1234.5]), { rtol: 0, atol: 1e-12 });
    expectTensor(round(Tensor.from('float32', [2], [1250, 1350]), -2), 'float32', [2], [1200, 1400]);
    expectTensor(trunc(Tensor.from('float32', [2], [-2.7, 2.7])), 'float32', [2], [-2, 2]);
  });
});

describe('clamp', () => {
  it('broadcasts tensor bounds', () => {
    const t = Tensor.from('float32', [2, 3], [-5, 0, 5, -5, 0, 5]);
    const lo = Tensor.from('float32', [2, 1], [-1, 1]);
    expectTensor(clamp(t, lo, 3), 'float32', [2, 3], [-1, 0, 3, 1, 1, 3]);
    expectTensor(clamp(t, undefined, Tensor.from('float32', [3], [0, -1, 10])), 'float32', [2, 3], [-5, -1, 5, -5, -1, 5]);
  });

  it('propagates NaN and gives max when min > max', () => {
    const t = Tensor.from('float32', [3], [NaN, 0, 7]);
    const r = clamp(t, 2, 1).toArray();
    expect(r[0]).toBeNaN();
    expect(r.slice(1)).toEqual([1, 1]);
  });

  it('promotes like torch.clamp: int tensor with float bounds gives float32', () => {
    const t = Tensor.from('int32', [3], [-5, 0, 5]);
    expectTensor(clamp(t, -1, 2), 'int32', [3], [-1, 0, 2]);
    expectTensor(clamp(t, -0.5, 2.5), 'float32', [3], [-0.5, 0, 2.5]);
    expectTensor(clamp(t, 0), 'int32', [3], [0, 0, 5]);
  });

  it('needs a bound and compatible shapes', () => {
    expect(() => clamp(X)).toThrow(/clamp: at least one/);
    expect(() => clamp(X, Tensor.from('float32', [3], [0, 0, 0]))).toThrow(/clamp: .*\[2, 4\].*\[3\]/);
  });
});

describe('predicates', () => {
  it('logicalNot treats nonzero (NaN too) as true', () => {
    expectTensor(logicalNot(Tensor.from('float32', [4], [0, NaN, -1, 0.5])), 'bool', [4], [1, 0, 0, 0]);
    expectTensor(logicalNot(Tensor.from('complex64', [2], [0, 0, 0, 1])), 'bool', [2], [1, 0]);
  });

  it('isnan and isinf look at both parts of complex numbers; integers are never either', () => {
    const z = Tensor.from('complex64', [3], [NaN, 0, 0, Infinity, 1, 1]);
    expectTensor(isnan(z), 'bool', [3], [1, 0, 0]);
    expectTensor(isinf(z), 'bool', [3], [0, 1, 0]);
    expectTensor(isnan(Tensor.from('int32', [2], [1, 0])), 'bool', [2], [0, 0]);
  });
});

describe('cast', () => {
  it('matches ONNX Cast for float → int32, bool and float16', async () => {
    const t = Tensor.from('float32', [6], [2.7, -2.7, 0, 0.1, 65504, 1e-3]);
    for (const to of ['int32', 'bool', 'float16'] as DType[]) {
      const code = { int32: 6, bool: 9, float16: 10 }[to as 'int32' | 'bool' | 'float16'];
      expectExact(cast(t, to), await runOrtOp1({ opType: 'Cast', inputs: [t], attributes: { to: code } }));
    }
  });

  it('truncates and wraps to narrow integers; NaN becomes 0', () => {
    expectTensor(cast(Tensor.from('float32', [3], [300.7, -1.5, NaN]), 'int8'), 'int8', [3], [44, -1, 0]);
    expectTensor(cast(Tensor.from('float32', [2], [-1, 256]), 'uint8'), 'uint8', [2], [255, 0]);
  });

  it('int64 to int32 keeps the low bits exactly', () => {
    const big = 2n ** 40n + 5n;
    expectTensor(cast(Tensor.from('int64', [2], [big, -big]), 'int32'), 'int32', [2], [5, -5]);
    const beyond = 2n ** 60n + 1n;
    const same = cast(Tensor.from('int64', [1], [beyond]), 'int64');
    expect((same.data as BigInt64Array)[0]).toBe(beyond);
  });

  it('complex to real drops the imaginary part; to bool tests both parts', () => {
    const z = Tensor.from('complex64', [3], [1.5, 2, 0, 3, 0, 0]);
    expectTensor(cast(z, 'float32'), 'float32', [3], [1.5, 0, 0]);
    expectTensor(cast(z, 'bool'), 'bool', [3], [1, 1, 0]);
    expectTensor(cast(Tensor.from('float32', [2], [1, -2]), 'complex128'), 'complex128', [2], [1, 0, -2, 0]);
  });

  it('rounds float64 to float16 to nearest even', () => {
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to the even 1.
    expectTensor(cast(Tensor.from('float64', [2], [1 + 2 ** -11, 1 + 3 * 2 ** -11]), 'float16'), 'float16', [2], [1, 1 + 2 ** -9]);
  });

  it('rejects an unknown dtype', () => {
    expect(() => cast(Tensor.from('float32', [1], [1]), 'float8' as DType)).toThrow(/cast: unknown dtype "float8"/);
  });

  it('to the same dtype copies', () => {
    const t = Tensor.from('float32', [1], [1]);
    const c = cast(t, 'float32');
    expect(c.data).not.toBe(t.data);
    expect(c.toArray()).toEqual([1]);
  });

  it('does not mutate its input', () => {
    const t = Tensor.from('float32', [2], [1.5, -2]);
    cast(t, 'int32');
    exp(t);
    clamp(t, 0, 1);
    expect(t.toArray()).toEqual([1.5, -2]);
  });
});

describe('complex inputs', () => {
  it('abs gives the magnitude, neg negates both parts, exp is e^a·(cos b + i sin b), functions PyTorch has no complex kernel for refuse', () => {
    const z = Tensor.from('complex64', [2], [3, 4, -1, 0]);
    expectTensor(abs(z), 'float32', [2], [5, 1]);
    expectTensor(neg(z), 'complex64', [2], [-3, -4, 1, -0]);
    expectClose(exp(z), Tensor.from('complex64', [2], [Math.exp(3) * Math.cos(4), Math.exp(3) * Math.sin(4), Math.exp(-1), 0]));
    expect(() => erf(z)).toThrow(/erf: complex input/);
  });
});
