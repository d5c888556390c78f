/**
 * Pointwise layers: IElementWiseLayer, IUnaryLayer, IActivationLayer, ICastLayer and
 * ISelectLayer. Inputs of an elementwise or select layer have equal ranks (inferLayer
 * checks), so the kernels' NumPy broadcasting is TensorRT's "a 1 broadcasts".
 */
import { isInteger } from '../../ir/dtype';
import { fromNumbers, readNumbers } from '../../kernels/access';
import {
  add,
  div,
  eq,
  gt,
  logicalAnd,
  logicalOr,
  logicalXor,
  lt,
  maximum,
  minimum,
  mul,
  pow,
  sub,
  where,
} from '../../kernels/elementwise';
import {
  abs,
  cast as castKernel,
  ceil,
  cos,
  elu,
  erf,
  exp,
  floor,
  gelu,
  hardsigmoid,
  isinf,
  isnan,
  leakyRelu,
  log,
  logicalNot,
  neg,
  reciprocal,
  relu,
  round,
  sigmoid,
  sign,
  sin,
  sqrt,
  tan,
  tanh,
} from '../../kernels/unary';
import type { ElementWiseOp, UnaryOp } from '..';
import type { Tensor } from '../../ir/tensor';
import { required, type Executor } from './common';

/** Maps every element through `f` in float64 and rounds once into the input's dtype. */
function mapValues(t: Tensor, f: (x: number) => number): Tensor {
  return fromNumbers(t.dtype, t.shape, readNumbers(t).map(f));
}

/**
 * Integer kDIV (C division, toward zero) and kFLOOR_DIV, exact in every integer type (the
 * kernel's int64 path). A zero divisor, which TensorRT leaves undefined, gives 0 rather
 * than an error: masked-out lanes of a select may divide by zero in valid networks.
 */
function integerDivide(a: Tensor, b: Tensor, mode: 'trunc' | 'floor'): Tensor {
  const zero = eq(b, 0);
  return where(zero, 0, div(a, where(zero, 1, b), mode));
}

const ELEMENTWISE: Record<ElementWiseOp, (a: Tensor, b: Tensor) => Tensor> = {
  sum: add,
  prod: mul,
  max: maximum,
  min: minimum,
  sub,
  div: (a, b) => (isInteger(a.dtype) ? integerDivide(a, b, 'trunc') : div(a, b)),
  floor_div: (a, b) => (isInteger(a.dtype) ? integerDivide(a, b, 'floor') : div(a, b, 'floor')),
  pow,
  and: logicalAnd,
  or: logicalOr,
  xor: logicalXor,
  equal: eq,
  greater: gt,
  less: lt,
};

export const elementwise: Executor<'elementwise'> = (p, inputs, layer) => [ELEMENTWISE[p.op](required(inputs, 0, layer), required(inputs, 1, layer))];

const UNARY: Record<UnaryOp, (a: Tensor) => Tensor> = {
  exp,
  log,
  sqrt,
  recip: reciprocal,
  abs,
  neg,
  sin,
  cos,
  tan,
  sinh: (a) => mapValues(a, Math.sinh),
  cosh: (a) => mapValues(a, Math.cosh),
  asin: (a) => mapValues(a, Math.asin),
  acos: (a) => mapValues(a, Math.acos),
  atan: (a) => mapValues(a, Math.atan),
  asinh: (a) => mapValues(a, Math.asinh),
  acosh: (a) => mapValues(a, Math.acosh),
  atanh: (a) => mapValues(a, Math.atanh),
  ceil,
  floor,
  erf,
  not: logicalNot,
  sign,
  // kROUND: round half to even.
  round: (a) => round(a),
  isinf,
  isnan,
};

export const unary: Executor<'unary'> = (p, inputs, layer) => [UNARY[p.op](required(inputs, 0, layer))];

/** log(1 + e^z) without overflow for large z. */
const softplusNumber = (z: number): number => Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)));

/**
 * IActivationLayer, with alpha and beta as TensorRT's ActivationType documents them
 * (NvInferRuntimeBase.h). Both are float in TensorRT, so they are rounded to float32 here;
 * unset they are 0, TensorRT's default.
 */
export const activation: Executor<'activation'> = (p, inputs, layer) => {
  const a = required(inputs, 0, layer);
  const alpha = Math.fround(p.alpha ?? 0);
  const beta = Math.fround(p.beta ?? 0);
  switch (p.type) {
    case 'relu':
      return [relu(a)];
    case 'sigmoid':
      return [sigmoid(a)];
    case 'tanh':
      return [tanh(a)];
    case 'leaky_relu':
      // x >= 0 ? x : alpha * x
      return [leakyRelu(a, alpha)];
    case 'elu':
      // x >= 0 ? x : alpha * (exp(x) - 1)
      return [elu(a, alpha)];
    case 'selu':
      return [mapValues(a, (x) => (x > 0 ? beta * x : beta * (alpha * Math.exp(x) - alpha)))];
    case 'softsign':
      return [mapValues(a, (x) => x / (1 + Math.abs(x)))];
    case 'softplus':
      // alpha * log(exp(beta * x) + 1)
      return [mapValues(a, (x) => alpha * softplusNumber(beta * x))];
    case 'clip':
      // max(alpha, min(beta, x))
      return [mapValues(a, (x) => Math.max(alpha, Math.min(beta, x)))];
    case 'hard_sigmoid':
      // max(0, min(1, alpha * x + beta))
      return [hardsigmoid(a, { alpha, beta })];
    case 'scaled_tanh':
      return [mapValues(a, (x) => alpha * Math.tanh(beta * x))];
    case 'thresholded_relu':
      // x > alpha ? x : 0 (the header's definition, which ONNX ThresholdedRelu maps to; the
      // operator page's max(0, x - alpha) is not what the parser relies on).
      return [mapValues(a, (x) => (x > alpha ? x : 0))];
    case 'gelu_erf':
      return [gelu(a)];
    case 'gelu_tanh':
      return [gelu(a, { approximate: 'tanh' })];
  }
};

/**
 * ICastLayer: float to integer truncates toward zero (TensorRT's Cast example: 5.6 → 5) and
 * wraps out-of-range values; anything to bool is value != 0; bool to numbers is 0/1.
 */
export const cast: Executor<'cast'> = (p, inputs, layer) => [castKernel(required(inputs, 0, layer), p.to)];

/** ISelectLayer: condition ? then : else, equal ranks, a 1 broadcasts. */
export const select: Executor<'select'> = (_p, inputs, layer) => [
  where(required(inputs, 0, layer), required(inputs, 1, layer), required(inputs, 2, layer)),
];
