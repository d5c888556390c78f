/** Interpreter implementations of the pointwise ops (lib/ir/ops/pointwise.ts), on lib/kernels. */
import type { DType } from '../../ir/dtype';
import { dtypeInfo } from '../../ir/dtype';
import { fromNumbers } from '../../kernels/access';
import { angle, conj, imag, polar, real, viewAsComplex, viewAsReal } from '../../kernels/complex';
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
  sub,
  where,
  type Operand,
  type RoundingMode,
} from '../../kernels/elementwise';
import {
  abs,
  cast,
  ceil,
  clamp,
  cos,
  elu,
  erf,
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
} from '../../kernels/unary';
import { Tensor } from '../../ir/tensor';
import { defineImpl, type RuntimeArg } from '../registry';

type Args = Readonly<Record<string, RuntimeArg>>;

const T = (a: RuntimeArg): Tensor => a as Tensor;
/** A Tensor or Scalar argument as a kernel operand (numbers and booleans are wrapped scalars). */
const O = (a: RuntimeArg): Operand => a as Operand;
const num = (a: RuntimeArg): number => a as number;

// Arithmetic.
for (const overload of ['Tensor', 'Scalar']) {
  defineImpl(`aten.add.${overload}`, (a) => [add(O(a.self), O(a.other), num(a.alpha))]);
  defineImpl(`aten.sub.${overload}`, (a) => [sub(O(a.self), O(a.other), num(a.alpha))]);
  defineImpl(`aten.rsub.${overload}`, (a) => [sub(O(a.other), O(a.self), num(a.alpha))]);
  defineImpl(`aten.mul.${overload}`, (a) => [mul(O(a.self), O(a.other))]);
  defineImpl(`aten.div.${overload}`, (a) => [div(O(a.self), O(a.other))]);
  defineImpl(`aten.div.${overload}_mode`, (a) => [div(O(a.self), O(a.other), (a.rounding_mode as RoundingMode | null) ?? undefined)]);
}
defineImpl('aten.floor_divide.default', (a) => [div(O(a.self), O(a.other), 'floor')]);
defineImpl('aten.floor_divide.Scalar', (a) => [div(O(a.self), O(a.other), 'floor')]);
for (const overload of ['Tensor_Tensor', 'Tensor_Scalar', 'Scalar']) {
  defineImpl(`aten.pow.${overload}`, (a) => [pow(O(a.self), O(a.exponent))]);
}
defineImpl('aten.maximum.default', (a) => [maximum(O(a.self), O(a.other))]);
defineImpl('aten.max.other', (a) => [maximum(O(a.self), O(a.other))]);
defineImpl('aten.minimum.default', (a) => [minimum(O(a.self), O(a.other))]);
defineImpl('aten.min.other', (a) => [minimum(O(a.self), O(a.other))]);
for (const overload of ['Tensor', 'Scalar', 'Scalar_Tensor']) defineImpl(`aten.remainder.${overload}`, (a) => [remainder(O(a.self), O(a.other))]);
for (const overload of ['Tensor', 'Scalar']) defineImpl(`aten.fmod.${overload}`, (a) => [fmod(O(a.self), O(a.other))]);

// Comparisons and logical ops.
const comparisons = { eq, ne, lt, le, gt, ge } as const;
for (const [op, f] of Object.entries(comparisons)) {
  for (const overload of ['Tensor', 'Scalar']) defineImpl(`aten.${op}.${overload}`, (a) => [f(O(a.self), O(a.other))]);
}
defineImpl('aten.logical_and.default', (a) => [logicalAnd(T(a.self), T(a.other))]);
defineImpl('aten.logical_or.default', (a) => [logicalOr(T(a.self), T(a.other))]);
defineImpl('aten.logical_xor.default', (a) => [logicalXor(T(a.self), T(a.other))]);
defineImpl('aten.logical_not.default', (a) => [logicalNot(T(a.self))]);
// & | ^ of bool tensors (the op declarations refuse other dtypes).
for (const [op, f] of [['and', logicalAnd], ['or', logicalOr], ['xor', logicalXor]] as const) {
  for (const target of [`aten.__${op}__.Tensor`, `aten.bitwise_${op}.Tensor`]) defineImpl(target, (a) => [f(T(a.self), T(a.other))]);
}
// ~x is logical not for bool and −1 − x (two's complement) for integers.
defineImpl('aten.bitwise_not.default', (a) => [T(a.self).dtype === 'bool' ? logicalNot(T(a.self)) : sub(-1, T(a.self))]);

// where and masked_fill.
for (const overload of ['self', 'ScalarSelf', 'ScalarOther', 'Scalar']) {
  defineImpl(`aten.where.${overload}`, (a) => [where(T(a.condition), O(a.self), O(a.other))]);
}
/** masked_fill: the value where the mask is set, in self's dtype, broadcast over self and mask. */
function maskedFill(a: Args): Tensor {
  const self = T(a.self);
  const r = where(T(a.mask), O(a.value), self);
  return r.dtype === self.dtype ? r : cast(r, self.dtype);
}
defineImpl('aten.masked_fill.Scalar', (a) => [maskedFill(a)]);
defineImpl('aten.masked_fill.Tensor', (a) => [maskedFill(a)]);
/** fill: the value everywhere, in self's dtype and shape (a true condition broadcast over self). */
function fill(a: Args): Tensor {
  const self = T(a.self);
  const r = where(Tensor.scalar('bool', 1), O(a.value), self);
  return r.dtype === self.dtype ? r : cast(r, self.dtype);
}
defineImpl('aten.fill.Scalar', (a) => [fill(a)]);
defineImpl('aten.fill.Tensor', (a) => [fill(a)]);

// Unary math.
const unary: Record<string, (t: Tensor) => Tensor> = {
  exp,
  log,
  log1p,
  sqrt,
  rsqrt,
  reciprocal,
  sin,
  cos,
  tan,
  tanh,
  sigmoid,
  erf,
  neg,
  abs,
  sign,
  relu,
  floor,
  ceil,
  trunc,
  round: (t) => round(t),
  isnan,
  isinf,
  silu,
  hardswish,
  hardsigmoid: (t) => hardsigmoid(t),
};
for (const [op, f] of Object.entries(unary)) defineImpl(`aten.${op}.default`, (a) => [f(T(a.self))]);
defineImpl('aten.round.decimals', (a) => [round(T(a.self), num(a.decimals))]);

// Activations.
defineImpl('aten.gelu.default', (a) => [gelu(T(a.self), { approximate: a.approximate as 'none' | 'tanh' })]);
defineImpl('aten.leaky_relu.default', (a) => [leakyRelu(T(a.self), num(a.negative_slope))]);
defineImpl('aten.elu.default', (a) => {
  const x = T(a.self);
  const alpha = num(a.alpha);
  const scale = num(a.scale);
  const inputScale = num(a.input_scale);
  if (scale === 1 && inputScale === 1) return [elu(x, alpha)];
  // scale·x for x > 0, scale·alpha·(e^(input_scale·x) − 1) otherwise.
  const negative = mul(elu(mul(x, inputScale), alpha), scale);
  return [where(gt(x, 0), mul(x, scale), negative)];
});
defineImpl('aten.softplus.default', (a) => [softplus(T(a.self), num(a.beta), num(a.threshold))]);
defineImpl('trt.hardsigmoid_onnx', (a) => [hardsigmoid(T(a.self), { alpha: num(a.alpha), beta: num(a.beta) })]);
defineImpl('aten._prelu_kernel.default', (a) => {
  const x = T(a.self);
  return [where(gt(x, 0), x, mul(x, T(a.weight)))];
});

// Clamps.
const optional = (a: RuntimeArg): Operand | undefined => (a === null || a === undefined ? undefined : O(a));
defineImpl('aten.clamp.default', (a) => [clamp(T(a.self), optional(a.min), optional(a.max))]);
defineImpl('aten.clamp.Tensor', (a) => [clamp(T(a.self), optional(a.min), optional(a.max))]);
for (const overload of ['default', 'Tensor']) {
  defineImpl(`aten.clamp_min.${overload}`, (a) => [clamp(T(a.self), O(a.min))]);
  defineImpl(`aten.clamp_max.${overload}`, (a) => [clamp(T(a.self), undefined, O(a.max))]);
}
defineImpl('aten.hardtanh.default', (a) => [hardtanh(T(a.self), num(a.min_val), num(a.max_val))]);

// Casts, copies and identity-like ops (tensors are never mutated, so identity may share data).
defineImpl('aten._to_copy.default', (a) => [cast(T(a.self), (a.dtype as DType | null) ?? T(a.self).dtype)]);
defineImpl('aten.to.dtype', (a) => [cast(T(a.self), a.dtype as DType)]);
defineImpl('aten.to.device', (a) => [cast(T(a.self), a.dtype as DType)]);
defineImpl('aten.to.dtype_layout', (a) => [cast(T(a.self), (a.dtype as DType | null) ?? T(a.self).dtype)]);
defineImpl('aten.type_as.default', (a) => [cast(T(a.self), T(a.other).dtype)]);
for (const op of ['clone', 'alias', 'detach', 'contiguous', 'lift_fresh_copy']) defineImpl(`aten.${op}.default`, (a) => [T(a.self)]);
defineImpl('aten.dropout.default', (a) => [T(a.input)]);
defineImpl('aten.scalar_tensor.default', (a) => {
  const dtype = (a.dtype as DType | null) ?? 'float32';
  const v = Number(a.s as number | boolean);
  return [fromNumbers(dtype, [], dtypeInfo(dtype).lanes === 2 ? [v, 0] : [v])];
});

// Complex numbers.
defineImpl('aten.view_as_real.default', (a) => [viewAsReal(T(a.self))]);
defineImpl('aten.view_as_complex.default', (a) => [viewAsComplex(T(a.self))]);
defineImpl('aten.polar.default', (a) => [polar(T(a.abs), T(a.angle))]);
defineImpl('aten.real.default', (a) => [real(T(a.self))]);
defineImpl('aten.imag.default', (a) => [imag(T(a.self))]);
defineImpl('aten.conj_physical.default', (a) => [conj(T(a.self))]);
defineImpl('aten._conj.default', (a) => [conj(T(a.self))]);
defineImpl('aten.angle.default', (a) => [angle(T(a.self))]);
