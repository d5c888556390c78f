/**
 * Pointwise layers as ONNX ops: IElementWiseLayer, IUnaryLayer, IActivationLayer,
 * ICastLayer, ISelectLayer, IIdentityLayer. Equal ranks with a 1 broadcasting is a special
 * case of ONNX's multidirectional broadcasting, so inputs go in as they are.
 */
import type { ActivationType, ElementWiseOp, UnaryOp } from '../../../network';
import { computeIn, whereTypes, type KernelTypes, type LowerContext, type Lowering } from './context';
import { onnxDType } from './onnx-graph';

export const identity: Lowering<'identity'> = (_p, c) => [c.g.op('Identity', [c.input(0)])];

/** ICastLayer: float to integer truncates toward zero (onnxruntime's Cast is a C++ static_cast, which does). */
export const cast: Lowering<'cast'> = (p, c) => [c.g.op('Cast', [c.input(0)], { to: onnxDType(p.to) })];

const SIMPLE_ELEMENTWISE: Partial<Record<ElementWiseOp, [string, KernelTypes]>> = {
  sum: ['Add', 'numeric'],
  prod: ['Mul', 'numeric'],
  max: ['Max', 'numeric'],
  min: ['Min', 'numeric'],
  sub: ['Sub', 'numeric'],
  pow: ['Pow', 'numeric'],
  and: ['And', 'any'],
  or: ['Or', 'any'],
  xor: ['Xor', 'any'],
};

const COMPARISON: Partial<Record<ElementWiseOp, string>> = { equal: 'Equal', greater: 'Greater', less: 'Less' };

const isIntegerType = (d: string): boolean => d === 'int8' || d === 'uint8' || d === 'int32' || d === 'int64';

/**
 * Integer division, toward zero (div) or down (floor_div), with a zero divisor giving 0 as
 * the reference does (a zero divisor is a CPU trap in onnxruntime's integer Div, and masked
 * lanes of a select may divide by zero in a valid network).
 */
function integerDivide(c: LowerContext, a: string, b: string, as: string, floor: boolean): string {
  const g = c.g;
  const zero = g.scalar(as as never, 0);
  const isZero = g.op('Equal', [b, zero]);
  const safe = g.op('Where', [isZero, g.scalar(as as never, 1), b]);
  // a - mod(a, b) is a multiple of b, so its truncated quotient is the floored one.
  const dividend = floor ? g.op('Sub', [a, g.op('Mod', [a, safe], { fmod: 0 })]) : a;
  return g.op('Where', [isZero, zero, g.op('Div', [dividend, safe])]);
}

/**
 * A constant shaped for broadcasting with leading 1s ([1, 1, 64], [1, 1, 1]) without them
 * ([64], a scalar): the same result (both inputs of an elementwise layer have one rank, so
 * the other keeps it), and onnxruntime's fusions (GELU with its bias, layer normalization,
 * scaled MatMul) take only scalars and 1-D biases. At most one input: two would lose the rank.
 */
function squeezedConstants(c: LowerContext): [string, string] {
  const inputs: [string, string] = [c.input(0), c.input(1)];
  for (const i of [1, 0] as const) {
    const value = c.g.constantValue(inputs[i]);
    if (value === undefined || value.shape[0] !== 1 || c.inputShape(1 - i).length !== value.shape.length) continue;
    const leading = value.shape.findIndex((d) => d !== 1);
    inputs[i] = c.g.initializer(value.reshape(leading < 0 ? [] : value.shape.slice(leading)));
    break;
  }
  return inputs;
}

export const elementwise: Lowering<'elementwise'> = (p, c) => {
  const [a, b] = squeezedConstants(c);
  const dtype = c.inputDType(0);
  const simple = SIMPLE_ELEMENTWISE[p.op];
  if (simple !== undefined) return [computeIn(c, [a, b], dtype, simple[1], (ins) => c.g.op(simple[0], ins))];
  const comparison = COMPARISON[p.op];
  if (comparison !== undefined) {
    const types: KernelTypes = dtype === 'bool' && p.op === 'equal' ? 'any' : 'numeric';
    return [computeIn(c, [a, b], dtype, types, (ins) => c.g.op(comparison, ins), 'bool')];
  }
  const floor = p.op === 'floor_div';
  if (isIntegerType(dtype)) return [computeIn(c, [a, b], dtype, 'numeric', (ins, as) => integerDivide(c, ins[0]!, ins[1]!, as, floor))];
  return [computeIn(c, [a, b], dtype, 'float', (ins) => (floor ? c.g.op('Floor', [c.g.op('Div', ins)]) : c.g.op('Div', ins)))];
};

const UNARY: Record<UnaryOp, [string, KernelTypes]> = {
  exp: ['Exp', 'float'],
  log: ['Log', 'float'],
  sqrt: ['Sqrt', 'float'],
  recip: ['Reciprocal', 'float'],
  abs: ['Abs', 'numeric'],
  neg: ['Neg', 'numeric'],
  sin: ['Sin', 'float'],
  cos: ['Cos', 'float'],
  tan: ['Tan', 'float'],
  sinh: ['Sinh', 'float'],
  cosh: ['Cosh', 'float'],
  asin: ['Asin', 'float'],
  acos: ['Acos', 'float'],
  atan: ['Atan', 'float'],
  asinh: ['Asinh', 'float'],
  acosh: ['Acosh', 'float'],
  atanh: ['Atanh', 'float'],
  ceil: ['Ceil', 'float'],
  floor: ['Floor', 'float'],
  erf: ['Erf', 'float'],
  not: ['Not', 'any'],
  sign: ['Sign', 'numeric'],
  // Round half to even, as kROUND.
  round: ['Round', 'float'],
  isinf: ['IsInf', 'float'],
  isnan: ['IsNaN', 'float'],
};

export const unary: Lowering<'unary'> = (p, c) => {
  const [op, types] = UNARY[p.op];
  const dtype = c.inputDType(0);
  // Integer ceil, floor and round are the identity (onnxruntime has no integer kernels for them).
  if ((p.op === 'ceil' || p.op === 'floor' || p.op === 'round') && isIntegerType(dtype)) return [c.g.op('Identity', [c.input(0)])];
  return [computeIn(c, [c.input(0)], dtype, types, (ins) => c.g.op(op, ins), c.outputDType(0))];
};

/** ONNX ops whose attributes are TensorRT's alpha (and beta) as they are. */
const DIRECT_ACTIVATION: Partial<Record<ActivationType, [string, (alpha: number, beta: number) => Record<string, { float: number }>]>> = {
  relu: ['Relu', () => ({})],
  sigmoid: ['Sigmoid', () => ({})],
  tanh: ['Tanh', () => ({})],
  leaky_relu: ['LeakyRelu', (alpha) => ({ alpha: { float: alpha } })],
  elu: ['Elu', (alpha) => ({ alpha: { float: alpha } })],
  // beta·(x > 0 ? x : alpha·(eˣ − 1)) is ONNX Selu with gamma = beta.
  selu: ['Selu', (alpha, beta) => ({ alpha: { float: alpha }, gamma: { float: beta } })],
  softsign: ['Softsign', () => ({})],
  hard_sigmoid: ['HardSigmoid', (alpha, beta) => ({ alpha: { float: alpha }, beta: { float: beta } })],
  // x > alpha ? x : 0.
  thresholded_relu: ['ThresholdedRelu', (alpha) => ({ alpha: { float: alpha } })],
};

/** IActivationLayer; alpha and beta are float in TensorRT (unset: 0). */
export const activation: Lowering<'activation'> = (p, c) => {
  const alpha = Math.fround(p.alpha ?? 0);
  const beta = Math.fround(p.beta ?? 0);
  const g = c.g;
  const direct = DIRECT_ACTIVATION[p.type];
  const emit = (ins: string[], as: string): string => {
    const x = ins[0]!;
    const k = (v: number): string => g.scalar(as as never, v);
    if (direct !== undefined) return g.op(direct[0], [x], direct[1](alpha, beta));
    switch (p.type) {
      case 'softplus':
        // alpha·log(e^(beta·x) + 1)
        return g.op('Mul', [k(alpha), g.op('Softplus', [g.op('Mul', [k(beta), x])])]);
      case 'clip':
        return g.op('Clip', [x, k(alpha), k(beta)]);
      case 'scaled_tanh':
        return g.op('Mul', [k(alpha), g.op('Tanh', [g.op('Mul', [k(beta), x])])]);
      case 'gelu_erf':
        // onnxruntime's own Gelu kernel (x·Φ(x), with erf).
        return g.op('Gelu', [x], {}, 'com.microsoft');
      case 'gelu_tanh':
        // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
        return g.op('FastGelu', [x], {}, 'com.microsoft');
      default:
        return c.unsupported(`activation ${p.type} has no ONNX form`);
    }
  };
  return [computeIn(c, [c.input(0)], c.inputDType(0), 'float', emit)];
};

/** ISelectLayer: condition ? then : else. */
export const select: Lowering<'select'> = (_p, c) => {
  const dtype = c.inputDType(1);
  return [computeIn(c, [c.input(1), c.input(2)], dtype, whereTypes(dtype), (ins) => c.g.op('Where', [c.input(0), ...ins]))];
};
