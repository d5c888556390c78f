/**
 * Pointwise ops built directly in the IR: ATen overloads ONNX never produces, PyTorch's type
 * promotion, complex numbers, symbolic shape inference and bad-argument errors. Expected
 * values are derived by hand.
 */
import type { DType } from '../../lib/ir/dtype';
import { call } from '../../lib/ir/builder';
import { formatType, Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import '../../lib/ir/ops';
import { formatShape, sym, type Dim } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';

/** Builds `target(args)` on fresh inputs (keys of `inputs` name graph inputs), runs it, returns output 0. */
function runOp(target: string, inputs: Record<string, Tensor>, args: Record<string, Arg> = {}): Tensor {
  const graph = new Graph();
  const values: Record<string, Value> = {};
  for (const [name, t] of Object.entries(inputs)) values[name] = graph.addInput(name, tensorType(t.dtype, t.shape));
  const node = call(graph, target, { ...values, ...args });
  graph.setOutputs([node.output]);
  return interpret(graph, Object.values(inputs))[0]!;
}

/** The inferred type of `target` on inputs of the given types, as text (`float32[s0, 4]`). */
function inferType(target: string, inputs: Record<string, [DType, Dim[]]>, args: Record<string, Arg> = {}): string {
  const graph = new Graph();
  const values: Record<string, Value> = {};
  for (const [name, [dtype, shape]] of Object.entries(inputs)) values[name] = graph.addInput(name, tensorType(dtype, shape));
  return formatType(call(graph, target, { ...values, ...args }).output.type);
}

const t = (dtype: DType, shape: number[], values: number[]): Tensor => Tensor.from(dtype, shape, values);
const values = (x: Tensor): number[] => x.toArray();

function expectValues(x: Tensor, dtype: DType, shape: number[], expected: number[], digits = 6): void {
  expect(x.dtype).toBe(dtype);
  expect([...x.shape]).toEqual(shape);
  const got = values(x);
  expect(got).toHaveLength(expected.length);
  expected.forEach((e, i) => {
    if (Number.isNaN(e)) expect(got[i]).toBeNaN();
    else if (!Number.isFinite(e)) expect(got[i]).toBe(e);
    else expect(got[i]).toBeCloseTo(e, digits);
  });
}

function expectErrorCode(f: () => unknown, code: string, pattern: RegExp): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toMatchObject({ code });
  expect((caught as Error).message).toMatch(pattern);
}

describe('type promotion (PyTorch result_type)', () => {
  test.each<[string, Record<string, [DType, Dim[]]>, Record<string, Arg>, string]>([
    // Wrapped numbers do not promote a tensor of the same category...
    ['aten.add.Scalar', { self: ['int32', [3]] }, { other: 2 }, 'int32[3]'],
    ['aten.mul.Scalar', { self: ['float16', [3]] }, { other: 2.5 }, 'float16[3]'],
    ['aten.add.Scalar', { self: ['uint8', [3]] }, { other: 300 }, 'uint8[3]'],
    // ...but do when of a higher category.
    ['aten.add.Scalar', { self: ['int32', [3]] }, { other: 2.5 }, 'float32[3]'],
    ['aten.add.Scalar', { self: ['bool', [3]] }, { other: 2 }, 'int64[3]'],
    ['aten.mul.Scalar', { self: ['bool', [3]] }, { other: true }, 'bool[3]'],
    // 0-d tensors rank between dimensioned tensors and scalars.
    ['aten.add.Tensor', { self: ['int32', [3]], other: ['int64', []] }, {}, 'int32[3]'],
    ['aten.add.Tensor', { self: ['int32', [3]], other: ['float64', []] }, {}, 'float64[3]'],
    ['aten.add.Tensor', { self: ['float16', [3]], other: ['float64', []] }, {}, 'float16[3]'],
    ['aten.add.Tensor', { self: ['int32', []], other: ['int64', []] }, {}, 'int64[]'],
    ['aten.add.Tensor', { self: ['int64', [3]], other: ['int32', [3]] }, {}, 'int64[3]'],
    ['aten.add.Tensor', { self: ['float16', [3]], other: ['bfloat16', [3]] }, {}, 'float32[3]'],
    ['aten.mul.Tensor', { self: ['float64', [3]], other: ['complex64', [3]] }, {}, 'complex128[3]'],
    ['aten.mul.Tensor', { self: ['float32', [2]], other: ['complex64', []] }, {}, 'complex64[2]'],
    // True division of integers gives the default float type; rounding modes keep the type.
    ['aten.div.Tensor', { self: ['int64', [3]], other: ['int64', [3]] }, {}, 'float32[3]'],
    ['aten.div.Tensor_mode', { self: ['int64', [3]], other: ['int64', [3]] }, { rounding_mode: 'floor' }, 'int64[3]'],
    ['aten.div.Scalar_mode', { self: ['int32', [3]] }, { other: 2, rounding_mode: 'trunc' }, 'int32[3]'],
    ['aten.div.Scalar_mode', { self: ['int32', [3]] }, { other: 2, rounding_mode: null }, 'float32[3]'],
    ['aten.pow.Scalar', { exponent: ['int32', [3]] }, { self: 2 }, 'int32[3]'],
    ['aten.pow.Scalar', { exponent: ['int32', [3]] }, { self: 2.5 }, 'float32[3]'],
    ['aten.where.ScalarOther', { condition: ['bool', [3]], self: ['float16', [3]] }, { other: 0 }, 'float16[3]'],
    ['aten.where.Scalar', { condition: ['bool', [3]] }, { self: 1, other: 0 }, 'int64[3]'],
    ['aten.where.Scalar', { condition: ['bool', [3]] }, { self: 1.5, other: 0 }, 'float32[3]'],
    ['aten.clamp.default', { self: ['int64', [3]] }, { min: 0.5 }, 'float32[3]'],
    ['aten.clamp.default', { self: ['int64', [3]] }, { min: 0, max: 5 }, 'int64[3]'],
    ['aten.eq.Scalar', { self: ['int64', [3]] }, { other: 0.5 }, 'bool[3]'],
    ['aten.exp.default', { self: ['int64', [3]] }, {}, 'float32[3]'],
    ['aten.abs.default', { self: ['complex128', [3]] }, {}, 'float64[3]'],
    ['aten.angle.default', { self: ['int32', [3]] }, {}, 'float32[3]'],
    ['aten.masked_fill.Scalar', { self: ['int32', [2, 3]], mask: ['bool', [3]] }, { value: 7 }, 'int32[2, 3]'],
    ['aten.scalar_tensor.default', {}, { s: 3 }, 'float32[]'],
    ['aten.scalar_tensor.default', {}, { s: 3, dtype: 'int64' }, 'int64[]'],
    ['aten._to_copy.default', { self: ['float32', [2]] }, { dtype: 'float16', layout: 'strided', device: 'cuda', non_blocking: true }, 'float16[2]'],
    ['aten._to_copy.default', { self: ['float32', [2]] }, {}, 'float32[2]'],
    ['aten.type_as.default', { self: ['float32', [2]], other: ['int8', [5]] }, {}, 'int8[2]'],
  ])('%s %j %j → %s', (target, inputs, args, expected) => {
    expect(inferType(target, inputs, args)).toBe(expected);
  });

  test('kernels agree: int32 tensor + 2.5 computes in float32', () => {
    expectValues(runOp('aten.add.Scalar', { self: t('int32', [3], [1, 2, 3]) }, { other: 2.5 }), 'float32', [3], [3.5, 4.5, 5.5]);
    expectValues(runOp('aten.add.Scalar', { self: t('uint8', [2], [250, 3]) }, { other: 10 }), 'uint8', [2], [4, 13]);
    const zeroDim = runOp('aten.add.Tensor', { self: t('int32', [2], [1, 2]), other: Tensor.scalar('float64', 0.5) });
    expectValues(zeroDim, 'float64', [2], [1.5, 2.5]);
  });
});

describe('ATen arithmetic overloads (hand-computed)', () => {
  const x = t('float32', [4], [1, -2, 3.5, 0]);
  test('add/sub with alpha, rsub', () => {
    expectValues(runOp('aten.add.Tensor', { self: x, other: t('float32', [1], [2]) }, { alpha: 3 }), 'float32', [4], [7, 4, 9.5, 6]);
    expectValues(runOp('aten.sub.Scalar', { self: x }, { other: 1, alpha: 2 }), 'float32', [4], [-1, -4, 1.5, -2]);
    expectValues(runOp('aten.rsub.Scalar', { self: x }, { other: 5, alpha: 2 }), 'float32', [4], [3, 9, -2, 5]);
    expectValues(runOp('aten.rsub.Tensor', { self: x, other: t('float32', [], [1]) }), 'float32', [4], [0, 3, -2.5, 1]);
  });
  test('div rounding modes and floor_divide', () => {
    const a = t('int64', [4], [7, -7, 7, -7]);
    const b = t('int64', [4], [2, 2, -2, -2]);
    expectValues(runOp('aten.div.Tensor_mode', { self: a, other: b }, { rounding_mode: 'trunc' }), 'int64', [4], [3, -3, -3, 3]);
    expectValues(runOp('aten.div.Tensor_mode', { self: a, other: b }, { rounding_mode: 'floor' }), 'int64', [4], [3, -4, -4, 3]);
    expectValues(runOp('aten.floor_divide.default', { self: a, other: b }), 'int64', [4], [3, -4, -4, 3]);
    expectValues(runOp('aten.div.Tensor', { self: a, other: b }), 'float32', [4], [3.5, -3.5, -3.5, 3.5]);
    expectValues(runOp('aten.div.Scalar_mode', { self: t('float32', [2], [7.5, -7.5]) }, { other: 2, rounding_mode: 'floor' }), 'float32', [2], [3, -4]);
    expectValues(runOp('aten.floor_divide.Scalar', { self: t('float32', [2], [7.5, -7.5]) }, { other: 2 }), 'float32', [2], [3, -4]);
  });
  test('pow overloads', () => {
    expectValues(runOp('aten.pow.Tensor_Scalar', { self: t('float32', [3], [4, 9, 2]) }, { exponent: 0.5 }), 'float32', [3], [2, 3, Math.SQRT2]);
    expectValues(runOp('aten.pow.Scalar', { exponent: t('int64', [4], [0, 1, 2, 10]) }, { self: 2 }), 'int64', [4], [1, 2, 4, 1024]);
    expectValues(runOp('aten.pow.Tensor_Tensor', { self: t('int32', [2], [3, -2]), exponent: t('int32', [2], [3, 3]) }), 'int32', [2], [27, -8]);
  });
  test('remainder and fmod scalar overloads', () => {
    const a = t('float32', [4], [5, -5, 5.5, -5.5]);
    expectValues(runOp('aten.remainder.Scalar', { self: a }, { other: 3 }), 'float32', [4], [2, 1, 2.5, 0.5]);
    expectValues(runOp('aten.fmod.Scalar', { self: a }, { other: 3 }), 'float32', [4], [2, -2, 2.5, -2.5]);
    expectValues(runOp('aten.remainder.Scalar_Tensor', { other: t('int64', [2], [3, -3]) }, { self: 5 }), 'int64', [2], [2, -1]);
  });
  test('maximum / minimum propagate NaN', () => {
    const a = t('float32', [3], [1, NaN, 3]);
    const b = t('float32', [3], [2, 0, -1]);
    expectValues(runOp('aten.maximum.default', { self: a, other: b }), 'float32', [3], [2, NaN, 3]);
    expectValues(runOp('aten.minimum.default', { self: a, other: b }), 'float32', [3], [1, NaN, -1]);
    // The .other overloads of max/min (what transformers' exports use) are the same functions.
    expectValues(runOp('aten.max.other', { self: a, other: b }), 'float32', [3], [2, NaN, 3]);
    expectValues(runOp('aten.min.other', { self: a, other: b }), 'float32', [3], [1, NaN, -1]);
  });
  test('comparison Scalar overloads', () => {
    const a = t('int32', [4], [-1, 0, 1, 2]);
    expectValues(runOp('aten.ge.Scalar', { self: a }, { other: 1 }), 'bool', [4], [0, 0, 1, 1]);
    expectValues(runOp('aten.lt.Scalar', { self: a }, { other: 0.5 }), 'bool', [4], [1, 1, 0, 0]);
    expectValues(runOp('aten.ne.Scalar', { self: a }, { other: 0 }), 'bool', [4], [1, 0, 1, 1]);
    expectValues(runOp('aten.eq.Scalar', { self: t('float32', [2], [0.5, 1]) }, { other: 0.5 }), 'bool', [2], [1, 0]);
  });
  test('logical ops on non-bool inputs and bitwise_not', () => {
    const a = t('float32', [4], [0, 2, NaN, 0]);
    const b = t('int64', [4], [0, 0, 5, 1]);
    expectValues(runOp('aten.logical_and.default', { self: a, other: b }), 'bool', [4], [0, 0, 1, 0]);
    expectValues(runOp('aten.logical_or.default', { self: a, other: b }), 'bool', [4], [0, 1, 1, 1]);
    expectValues(runOp('aten.logical_xor.default', { self: a, other: b }), 'bool', [4], [0, 1, 0, 1]);
    expectValues(runOp('aten.logical_not.default', { self: a }), 'bool', [4], [1, 0, 0, 1]);
    expectValues(runOp('aten.bitwise_not.default', { self: t('bool', [2], [1, 0]) }), 'bool', [2], [0, 1]);
    expectValues(runOp('aten.bitwise_not.default', { self: t('int32', [3], [0, 5, -1]) }), 'int32', [3], [-1, -6, 0]);
    expectValues(runOp('aten.bitwise_not.default', { self: t('uint8', [2], [0, 200]) }), 'uint8', [2], [255, 55]);
  });
});

describe('where and masked_fill overloads', () => {
  const cond = t('bool', [2, 1], [1, 0]);
  test('where with scalar branches broadcasts the condition', () => {
    expectValues(runOp('aten.where.ScalarOther', { condition: cond, self: t('float32', [3], [1, 2, 3]) }, { other: -1 }), 'float32', [2, 3], [1, 2, 3, -1, -1, -1]);
    expectValues(runOp('aten.where.ScalarSelf', { condition: cond, other: t('int32', [3], [1, 2, 3]) }, { self: 9 }), 'int32', [2, 3], [9, 9, 9, 1, 2, 3]);
    expectValues(runOp('aten.where.Scalar', { condition: cond }, { self: 1.5, other: 0 }), 'float32', [2, 1], [1.5, 0]);
  });
  test('masked_fill.Scalar with -inf and with a broadcast mask', () => {
    const scores = t('float32', [2, 3], [1, 2, 3, 4, 5, 6]);
    const mask = t('bool', [3], [0, 1, 1]);
    expectValues(runOp('aten.masked_fill.Scalar', { self: scores, mask }, { value: -Infinity }), 'float32', [2, 3], [1, -Infinity, -Infinity, 4, -Infinity, -Infinity]);
    // The value is converted to self's type (int32: 2.7 → 2).
    expectValues(runOp('aten.masked_fill.Scalar', { self: t('int32', [3], [1, 2, 3]), mask }, { value: 2.7 }), 'int32', [3], [1, 2, 2]);
    // The mask may broadcast self.
    expectValues(runOp('aten.masked_fill.Scalar', { self: t('float32', [3], [1, 2, 3]), mask: t('bool', [2, 1], [1, 0]) }, { value: 0 }), 'float32', [2, 3], [0, 0, 0, 1, 2, 3]);
  });
  test('masked_fill.Tensor takes a 0-d value tensor', () => {
    const out = runOp('aten.masked_fill.Tensor', { self: t('float16', [3], [1, 2, 3]), mask: t('bool', [3], [1, 0, 1]), value: t('float32', [], [0.5]) });
    expectValues(out, 'float16', [3], [0.5, 2, 0.5]);
  });
});

describe('unary ops and activations (hand-computed)', () => {
  test('float functions', () => {
    const x = t('float32', [3], [0, 1, -1]);
    expectValues(runOp('aten.log1p.default', { self: t('float32', [2], [0, Math.E - 1]) }), 'float32', [2], [0, 1]);
    expectValues(runOp('aten.rsqrt.default', { self: t('int64', [2], [4, 16]) }), 'float32', [2], [0.5, 0.25]);
    expectValues(runOp('aten.silu.default', { self: x }), 'float32', [3], [0, 0.7310585786, -0.2689414214]);
    // gelu(1): exact 0.5·(1 + erf(1/√2)); tanh form 0.5·(1 + tanh(√(2/π)·1.044715)).
    expectValues(runOp('aten.gelu.default', { self: x }), 'float32', [3], [0, 0.8413447461, -0.1586552539]);
    expectValues(runOp('aten.gelu.default', { self: x }, { approximate: 'tanh' }), 'float32', [3], [0, 0.8411919906, -0.1588080094]);
    expectValues(runOp('aten.hardswish.default', { self: t('float32', [4], [-4, -1, 1, 4]) }), 'float32', [4], [0, -1 / 3, 2 / 3, 4]);
    expectValues(runOp('aten.hardsigmoid.default', { self: t('float32', [3], [-4, 0, 1]) }), 'float32', [3], [0, 0.5, 0.5 + 1 / 6]);
    expectValues(runOp('trt.hardsigmoid_onnx', { self: t('float32', [3], [-4, 0, 1]) }, { alpha: 0.2, beta: 0.5 }), 'float32', [3], [0, 0.5, 0.7]);
  });
  test('round.decimals, trunc, and rounding of integers', () => {
    expectValues(runOp('aten.round.decimals', { self: t('float32', [3], [1.2345, -2.5, 0.125]) }, { decimals: 2 }), 'float32', [3], [1.23, -2.5, 0.12]);
    expectValues(runOp('aten.trunc.default', { self: t('float32', [3], [1.7, -1.7, 0]) }), 'float32', [3], [1, -1, 0]);
    expectValues(runOp('aten.floor.default', { self: t('int32', [2], [3, -3]) }), 'int32', [2], [3, -3]);
  });
  test('leaky_relu, elu with scale and input_scale, softplus with beta', () => {
    const x = t('float32', [3], [-2, 0, 3]);
    expectValues(runOp('aten.leaky_relu.default', { self: x }, { negative_slope: 0.1 }), 'float32', [3], [-0.2, 0, 3]);
    expectValues(runOp('aten.leaky_relu.default', { self: x }), 'float32', [3], [-0.02, 0, 3]);
    // scale·x for x > 0, scale·alpha·(e^(input_scale·x) − 1) otherwise.
    const elu = runOp('aten.elu.default', { self: x }, { alpha: 1.5, scale: 2, input_scale: 0.5 });
    expectValues(elu, 'float32', [3], [2 * 1.5 * (Math.exp(-1) - 1), 0, 6]);
    expectValues(runOp('aten.elu.default', { self: x }), 'float32', [3], [Math.exp(-2) - 1, 0, 3]);
    expectValues(runOp('aten.softplus.default', { self: x }, { beta: 2, threshold: 5 }), 'float32', [3], [Math.log1p(Math.exp(-4)) / 2, Math.log(2) / 2, 3]);
  });
  test('clamp family and hardtanh', () => {
    const x = t('float32', [4], [-3, -0.5, 0.5, 3]);
    expectValues(runOp('aten.clamp.default', { self: x }, { min: -1 }), 'float32', [4], [-1, -0.5, 0.5, 3]);
    expectValues(runOp('aten.clamp.default', { self: x }, { max: 0 }), 'float32', [4], [-3, -0.5, 0, 0]);
    expectValues(runOp('aten.clamp_min.default', { self: x }, { min: 0 }), 'float32', [4], [0, 0, 0.5, 3]);
    expectValues(runOp('aten.clamp_max.default', { self: x }, { max: 1 }), 'float32', [4], [-3, -0.5, 0.5, 1]);
    expectValues(runOp('aten.hardtanh.default', { self: x }), 'float32', [4], [-1, -0.5, 0.5, 1]);
    expectValues(runOp('aten.hardtanh.default', { self: x }, { min_val: 0, max_val: 6 }), 'float32', [4], [0, 0, 0.5, 3]);
    const lo = t('float32', [2, 1], [-1, 0]);
    expectValues(runOp('aten.clamp.Tensor', { self: x, min: lo }), 'float32', [2, 4], [-1, -0.5, 0.5, 3, 0, 0, 0.5, 3]);
    expectValues(runOp('aten.clamp_max.Tensor', { self: x, max: t('float32', [], [0]) }), 'float32', [4], [-3, -0.5, 0, 0]);
    expectValues(runOp('aten.clamp.default', { self: t('int64', [3], [-5, 2, 9]) }, { min: 0.5 }), 'float32', [3], [0.5, 2, 9]);
  });
  test('_prelu_kernel broadcasts the weight', () => {
    const x = t('float32', [2, 2], [-1, 2, -3, 4]);
    expectValues(runOp('aten._prelu_kernel.default', { self: x, weight: t('float32', [2], [0.5, 0.25]) }), 'float32', [2, 2], [-0.5, 2, -1.5, 4]);
  });
});

describe('casts, copies and identity-like ops', () => {
  test('_to_copy, to.dtype and type_as convert as PyTorch', () => {
    const x = t('float32', [4], [1.9, -1.9, 0, 300]);
    expectValues(runOp('aten._to_copy.default', { self: x }, { dtype: 'int32' }), 'int32', [4], [1, -1, 0, 300]);
    expectValues(runOp('aten._to_copy.default', { self: x }, { dtype: 'bool', memory_format: 'preserve_format' }), 'bool', [4], [1, 1, 0, 1]);
    expectValues(runOp('aten.to.dtype', { self: x }, { dtype: 'uint8' }), 'uint8', [4], [1, 255, 0, 44]);
    expectValues(runOp('aten.to.device', { self: x }, { device: 'cpu', dtype: 'int32' }), 'int32', [4], [1, -1, 0, 300]);
    expectValues(runOp('aten.to.dtype_layout', { self: x }, { dtype: 'int32', layout: 'strided', device: 'cpu' }), 'int32', [4], [1, -1, 0, 300]);
    expectValues(runOp('aten.to.dtype_layout', { self: x }, { device: 'cpu' }), 'float32', [4], [1.899999976158142, -1.899999976158142, 0, 300]);
    expectValues(runOp('aten.type_as.default', { self: x, other: t('float16', [1], [0]) }), 'float16', [4], [1.900390625, -1.900390625, 0, 300]);
    expectValues(runOp('aten._to_copy.default', { self: x }, { dtype: 'complex64' }), 'complex64', [4], [1.9, 0, -1.9, 0, 0, 0, 300, 0], 5);
  });
  test.each(['clone', 'alias', 'detach', 'contiguous', 'lift_fresh_copy'])('%s is the identity', (op) => {
    const x = t('float32', [2], [1, 2]);
    expectValues(runOp(`aten.${op}.default`, { self: x }), 'float32', [2], [1, 2]);
  });
  test('dropout in eval mode is the identity; in training mode it is rejected', () => {
    const x = t('float32', [2], [1, 2]);
    expectValues(runOp('aten.dropout.default', { input: x }, { p: 0.5, train: false }), 'float32', [2], [1, 2]);
    expectErrorCode(() => runOp('aten.dropout.default', { input: x }, { p: 0.5, train: true }), 'E_BAD_MODEL', /dropout\b.*eval/);
  });
  test('scalar_tensor', () => {
    expectValues(runOp('aten.scalar_tensor.default', {}, { s: 3 }), 'float32', [], [3]);
    expectValues(runOp('aten.scalar_tensor.default', {}, { s: -2, dtype: 'int64' }), 'int64', [], [-2]);
    expectValues(runOp('aten.scalar_tensor.default', {}, { s: true, dtype: 'bool' }), 'bool', [], [1]);
    expectValues(runOp('aten.scalar_tensor.default', {}, { s: 1.5, dtype: 'complex64' }), 'complex64', [], [1.5, 0]);
  });
});

describe('complex numbers', () => {
  test('view_as_complex → mul.Tensor with a complex tensor → view_as_real', () => {
    // (1+2i)(3+4i) = -5+10i; (0.5-1i)(2+0i) = 1-2i; (-1+0i)(0+1i) = -1i.
    const graph = new Graph();
    const a = graph.addInput('a', tensorType('float32', [3, 2]));
    const b = graph.addInput('b', tensorType('float32', [3, 2]));
    const ca = call(graph, 'aten.view_as_complex.default', { self: a }).output;
    const cb = call(graph, 'aten.view_as_complex.default', { self: b }).output;
    expect(formatType(ca.type)).toBe('complex64[3]');
    const prod = call(graph, 'aten.mul.Tensor', { self: ca, other: cb }).output;
    expect(formatType(prod.type)).toBe('complex64[3]');
    const out = call(graph, 'aten.view_as_real.default', { self: prod }).output;
    expect(formatType(out.type)).toBe('float32[3, 2]');
    graph.setOutputs([out]);
    const [r] = interpret(graph, [t('float32', [3, 2], [1, 2, 0.5, -1, -1, 0]), t('float32', [3, 2], [3, 4, 2, 0, 0, 1])]);
    expectValues(r!, 'float32', [3, 2], [-5, 10, 1, -2, 0, -1]);
  });
  test('add, sub and div with complex operands (real operands promoted)', () => {
    const z = t('complex64', [2], [1, 2, 3, -4]);
    const w = t('complex64', [2], [1, 1, 0, 2]);
    expectValues(runOp('aten.add.Tensor', { self: z, other: w }, { alpha: 2 }), 'complex64', [2], [3, 4, 3, 0]);
    expectValues(runOp('aten.sub.Tensor', { self: z, other: t('float32', [1], [1]) }), 'complex64', [2], [0, 2, 2, -4]);
    // (1+2i)/(1+i) = (1+2i)(1-i)/2 = (3+i)/2; (3-4i)/(2i) = (3-4i)(-2i)/4 = (-8-6i)/4.
    expectValues(runOp('aten.div.Tensor', { self: z, other: w }), 'complex64', [2], [1.5, 0.5, -2, -1.5]);
  });
  test('abs, angle, real, imag, conj of complex', () => {
    const z = t('complex64', [2], [3, 4, 0, -2]);
    expectValues(runOp('aten.abs.default', { self: z }), 'float32', [2], [5, 2]);
    expectValues(runOp('aten.angle.default', { self: z }), 'float32', [2], [Math.atan2(4, 3), -Math.PI / 2]);
    expectValues(runOp('aten.real.default', { self: z }), 'float32', [2], [3, 0]);
    expectValues(runOp('aten.imag.default', { self: z }), 'float32', [2], [4, -2]);
    expectValues(runOp('aten.conj_physical.default', { self: z }), 'complex64', [2], [3, -4, 0, 2]);
    expectValues(runOp('aten._conj.default', { self: z }), 'complex64', [2], [3, -4, 0, 2]);
    expectValues(runOp('aten.angle.default', { self: t('float32', [3], [-1, 0, 2]) }), 'float32', [3], [Math.PI, 0, 0]);
    expectValues(runOp('aten.real.default', { self: t('float32', [1], [7]) }), 'float32', [1], [7]);
  });
  test('polar broadcasts abs against angle', () => {
    const out = runOp('aten.polar.default', { abs: t('float32', [2, 1], [1, 2]), angle: t('float32', [2], [0, Math.PI / 2]) });
    expectValues(out, 'complex64', [2, 2], [1, 0, 0, 1, 2, 0, 0, 2]);
  });
  test('eq on complex compares both parts; ordering is rejected', () => {
    const z = t('complex64', [2], [1, 2, 1, 3]);
    expectValues(runOp('aten.eq.Tensor', { self: z, other: t('complex64', [1], [1, 2]) }), 'bool', [2], [1, 0]);
    expectErrorCode(() => inferType('aten.lt.Tensor', { self: ['complex64', [2]], other: ['complex64', [2]] }), 'E_BAD_MODEL', /lt.*complex/);
  });
  test('bad complex arguments', () => {
    expectErrorCode(() => inferType('aten.view_as_complex.default', { self: ['float32', [3, 3]] }), 'E_BAD_MODEL', /last dimension of size 2/);
    expectErrorCode(() => inferType('aten.view_as_complex.default', { self: ['float16', [3, 2]] }), 'E_BAD_MODEL', /float32 or float64/);
    expectErrorCode(() => inferType('aten.view_as_real.default', { self: ['float32', [3]] }), 'E_BAD_MODEL', /complex/);
    expectErrorCode(() => inferType('aten.imag.default', { self: ['float32', [3]] }), 'E_BAD_MODEL', /complex/);
    expectErrorCode(() => inferType('aten.polar.default', { abs: ['float32', [3]], angle: ['float64', [3]] }), 'E_BAD_MODEL', /float32/);
  });
});

describe('symbolic shape inference', () => {
  const s0 = sym('s0');
  const s1 = sym('s1');
  test.each<[string, Record<string, [DType, Dim[]]>, Record<string, Arg>, string]>([
    ['aten.add.Tensor', { self: ['float32', [s0, 4]], other: ['float32', [4]] }, {}, 'float32[s0, 4]'],
    ['aten.mul.Tensor', { self: ['float32', [s0, 1]], other: ['float32', [1, s1]] }, {}, 'float32[s0, s1]'],
    ['aten.sub.Tensor', { self: ['float32', [s0, 3]], other: ['float32', [s1, 3]] }, {}, 'float32[max(s0, s1), 3]'],
    ['aten.div.Tensor', { self: ['int64', [2, s0, 3]], other: ['int64', [3]] }, {}, 'float32[2, s0, 3]'],
    ['aten.add.Tensor', { self: ['float32', [s0, 4]], other: ['float32', [s0, 4]] }, {}, 'float32[s0, 4]'],
    ['aten.lt.Tensor', { self: ['float32', [s0]], other: ['float32', []] }, {}, 'bool[s0]'],
    ['aten.where.self', { condition: ['bool', [s0, 1]], self: ['float32', [1, s1]], other: ['float32', []] }, {}, 'float32[s0, s1]'],
    ['aten.clamp.Tensor', { self: ['float32', [s0, 4]], min: ['float32', [4]] }, {}, 'float32[s0, 4]'],
    ['aten.masked_fill.Scalar', { self: ['float32', [s0, s1]], mask: ['bool', [s1]] }, { value: 0 }, 'float32[s0, s1]'],
    ['aten.exp.default', { self: ['float16', [s0, 0]] }, {}, 'float16[s0, 0]'],
    ['aten.view_as_real.default', { self: ['complex64', [s0]] }, {}, 'float32[s0, 2]'],
    ['aten.view_as_complex.default', { self: ['float64', [s0, 2]] }, {}, 'complex128[s0]'],
    ['aten._to_copy.default', { self: ['float32', [s0, 3]] }, { dtype: 'int64' }, 'int64[s0, 3]'],
  ])('%s %j → %s', (target, inputs, args, expected) => {
    expect(inferType(target, inputs, args)).toBe(expected);
  });

  test('a symbolic graph runs with the symbols bound by the inputs', () => {
    const graph = new Graph();
    graph.symbols.set('s0', { min: 1, max: 64 });
    const x = graph.addInput('x', tensorType('float32', [s0, 3]));
    const y = graph.addInput('y', tensorType('float32', [3]));
    const sum = call(graph, 'aten.add.Tensor', { self: x, other: y }).output;
    const out = call(graph, 'aten.relu.default', { self: sum }).output;
    expect(formatShape(out.tensorType.shape)).toBe('[s0, 3]');
    graph.setOutputs([out]);
    const [r] = interpret(graph, [t('float32', [2, 3], [1, -2, 3, -4, 5, -6]), t('float32', [3], [1, 1, 1])]);
    expectValues(r!, 'float32', [2, 3], [2, 0, 4, 0, 6, 0]);
  });

  test('a SymInt is an integer Scalar', () => {
    const graph = new Graph();
    graph.symbols.set('s0', { min: 1, max: 64 });
    const x = graph.addInput('x', tensorType('int32', [s0]));
    const n = call(graph, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const out = call(graph, 'aten.add.Scalar', { self: x, other: n }).output;
    expect(formatType(out.type)).toBe('int32[s0]');
    graph.setOutputs([out]);
    expectValues(interpret(graph, [t('int32', [3], [1, 2, 3])])[0]!, 'int32', [3], [4, 5, 6]);
  });
});

describe('bad arguments are E_BAD_MODEL naming the node', () => {
  test.each<[string, Record<string, [DType, Dim[]]>, Record<string, Arg>, RegExp]>([
    ['aten.add.Tensor', { self: ['float32', [2, 3]], other: ['float32', [4]] }, {}, /node "aten.add.Tensor".*broadcast/],
    ['aten.sub.Tensor', { self: ['bool', [2]], other: ['bool', [2]] }, {}, /bool/],
    ['aten.neg.default', { self: ['bool', [2]] }, {}, /bool/],
    ['aten.add.Scalar', { self: ['int32', [2]] }, { other: 1, alpha: 0.5 }, /alpha/],
    ['aten.div.Tensor_mode', { self: ['float32', [2]], other: ['float32', [2]] }, { rounding_mode: 'ceil' }, /rounding_mode/],
    ['aten.where.self', { condition: ['int64', [2]], self: ['float32', [2]], other: ['float32', [2]] }, {}, /bool/],
    ['aten.masked_fill.Tensor', { self: ['float32', [2]], mask: ['bool', [2]], value: ['float32', [1]] }, {}, /0-dimensional/],
    ['aten.gelu.default', { self: ['float32', [2]] }, { approximate: 'fast' }, /approximate/],
    ['aten.silu.default', { self: ['int64', [2]] }, {}, /floating-point/],
    ['aten.clamp.default', { self: ['float32', [2]] }, {}, /min and max/],
    ['aten.hardtanh.default', { self: ['int64', [2]] }, { min_val: -0.5, max_val: 0.5 }, /do not fit/],
    ['aten.bitwise_not.default', { self: ['float32', [2]] }, {}, /integer/],
    ['aten.maximum.default', { self: ['complex64', [2]], other: ['complex64', [2]] }, {}, /complex/],
  ])('%s %j %j', (target, inputs, args, pattern) => {
    expectErrorCode(() => inferType(target, inputs, args), 'E_BAD_MODEL', pattern);
  });

  test('the node name given by the frontend appears in the message', () => {
    const graph = new Graph();
    const a = graph.addInput('a', tensorType('float32', [2, 3]));
    const b = graph.addInput('b', tensorType('float32', [5]));
    expectErrorCode(() => call(graph, 'aten.mul.Tensor', { self: a, other: b }, { where: 'ONNX node "Mul_7" (Mul)' }), 'E_BAD_MODEL', /ONNX node "Mul_7" \(Mul\) \(aten.mul.Tensor\): shapes/);
  });
});
