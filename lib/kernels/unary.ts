/**
 * Unary elementwise CPU kernels (math functions, activations, rounding, predicates, clamp and
 * cast) with PyTorch's dtype rules: float functions of integer or bool tensors give float32;
 * activations that PyTorch implements only for floating types reject other inputs. The ops
 * that keep an int64 or uint64 input's type (neg, abs, sign, relu, clamp, cast) compute it exactly.
 * exp, log, log1p, sqrt, rsqrt, reciprocal, sin, cos, tan, tanh and sigmoid of a complex
 * tensor are the complex functions (principal branches, ./complex.ts); the other math
 * functions reject complex input, as PyTorch does for erf.
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, integerBits, isBigIntDType, isComplex, isDType, isFloating, isUnsigned, type DType } from '../ir/dtype';
import { isSubByteInt, wrapSubByte } from '../ir/low-precision';
import { shapeSize, Tensor } from '../ir/tensor';
import { CHUNK_ELEMENTS, fromNumbers, readNumbers, readNumberView, writeNumbers } from './access';
import {
  complexAbs,
  complexCos,
  complexExp,
  complexLog,
  complexLog1p,
  complexReciprocal,
  complexRsqrt,
  complexSigmoid,
  complexSin,
  complexSqrt,
  complexTan,
  complexTanh,
  toComplex,
  type ComplexDType,
} from './complex';
import { broadcastFor, indexMap, operandBigInt, operandValues, resultTypeOf, truthValues, type Operand } from './elementwise';
import { int64AsFloat, type BigIntArray, type BigIntDType } from './int64';

const fmt = (t: Tensor): string => `${t.dtype}[${t.shape.join(', ')}]`;

/** Maps each element through `f` in float64 and rounds once into `outDtype`. */
function mapUnary(t: Tensor, outDtype: DType, f: (x: number) => number): Tensor {
  // Read in place and written a chunk at a time: no float64 copy of the input or the output.
  const v = readNumberView(t);
  const n = v.length;
  const chunk = Math.min(n, CHUNK_ELEMENTS);
  const out = new Float64Array(chunk);
  const data = new (dtypeInfo(outDtype).storage)(n);
  for (let start = 0; start < n; start += chunk) {
    const count = Math.min(chunk, n - start);
    for (let j = 0; j < count; j++) out[j] = f(v[start + j]!);
    writeNumbers(outDtype, data, start, out, count);
  }
  return new Tensor(outDtype, t.shape, data);
}

/** Maps each element of an int64 or uint64 tensor through `f` exactly (stores wrap modulo 2^64). */
function mapBigInt(t: Tensor, f: (x: bigint) => bigint): Tensor {
  const v = t.data as BigIntArray;
  const out = new (dtypeInfo(t.dtype).storage as BigInt64ArrayConstructor | BigUint64ArrayConstructor)(v.length);
  for (let i = 0; i < v.length; i++) out[i] = f(v[i]!);
  return new Tensor(t.dtype, t.shape, out);
}

/** mapUnary, with `exact` for int64 and uint64 input (whose values float64 would round past 2^53). */
function mapSameType(t: Tensor, f: (x: number) => number, exact: (x: bigint) => bigint): Tensor {
  return isBigIntDType(t.dtype) ? mapBigInt(t, exact) : mapUnary(t, t.dtype, f);
}

function rejectComplex(op: string, t: Tensor): void {
  if (isComplex(t.dtype)) throw new InvalidArgumentError(`${op}: complex input is not supported, got ${fmt(t)}`);
}

/** A float function's output type: floats keep theirs, integers and bool give float32. */
function floatResult(op: string, t: Tensor): DType {
  rejectComplex(op, t);
  return isFloating(t.dtype) ? t.dtype : 'float32';
}

/** For kernels PyTorch implements only for floating types. */
function floatOnly(op: string, t: Tensor): DType {
  if (!isFloating(t.dtype)) throw new InvalidArgumentError(`${op}: expected a floating-point tensor, got ${fmt(t)}`);
  return t.dtype;
}

/** For kernels that keep the input type and are defined for numbers, not bool. */
function numericSameType(op: string, t: Tensor): DType {
  rejectComplex(op, t);
  if (t.dtype === 'bool') throw new InvalidArgumentError(`${op}: bool input is not supported, got ${fmt(t)}`);
  return t.dtype;
}

const copyOf = (t: Tensor): Tensor => new Tensor(t.dtype, t.shape, t.data.slice());

/** −x; complex negates both parts; bool is an error, as in PyTorch. */
export function neg(t: Tensor): Tensor {
  if (t.dtype === 'bool') throw new InvalidArgumentError(`neg: negation of a bool tensor is not supported (use logicalNot), got ${fmt(t)}`);
  return mapSameType(t, (x) => -x, (x) => -x);
}

/** |x| in the input type; complex input gives its magnitude in the part type. */
export function abs(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexAbs(t);
  return mapSameType(t, Math.abs, (x) => (x < 0n ? -x : x));
}

/** −1, 0 or 1 in the input type; NaN gives 0 as torch.sign does; bool is the identity. */
export function sign(t: Tensor): Tensor {
  rejectComplex('sign', t);
  return mapSameType(
    t,
    (x) => (x > 0 ? 1 : x < 0 ? -1 : 0),
    (x) => (x > 0n ? 1n : x < 0n ? -1n : 0n),
  );
}

/** e^x (integers give float32; complex: e^a·(cos b + i sin b)). */
export function exp(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexExp(t);
  return mapUnary(t, floatResult('exp', t), Math.exp);
}

/** Natural logarithm (integers give float32); log of a negative number is NaN; complex: the principal branch. */
export function log(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexLog(t);
  return mapUnary(t, floatResult('log', t), Math.log);
}

/** log(1 + x), accurate near 0 (integers give float32; complex: the principal branch). */
export function log1p(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexLog1p(t);
  return mapUnary(t, floatResult('log1p', t), Math.log1p);
}

/** √x (integers give float32; complex: the principal root, Re ≥ 0). */
export function sqrt(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexSqrt(t);
  return mapUnary(t, floatResult('sqrt', t), Math.sqrt);
}

/** 1/√x (integers give float32; complex: 1 over the principal root). */
export function rsqrt(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexRsqrt(t);
  return mapUnary(t, floatResult('rsqrt', t), (x) => 1 / Math.sqrt(x));
}

/** 1/x (integers give float32; complex: Smith's division, as c10::complex). */
export function reciprocal(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexReciprocal(t);
  return mapUnary(t, floatResult('reciprocal', t), (x) => 1 / x);
}

/** sin x (integers give float32; complex too). */
export function sin(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexSin(t);
  return mapUnary(t, floatResult('sin', t), Math.sin);
}

/** cos x (integers give float32; complex too). */
export function cos(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexCos(t);
  return mapUnary(t, floatResult('cos', t), Math.cos);
}

/** tan x (integers give float32; complex too). */
export function tan(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexTan(t);
  return mapUnary(t, floatResult('tan', t), Math.tan);
}

/** tanh x (integers give float32; complex too, by Kahan's formula). */
export function tanh(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexTanh(t);
  return mapUnary(t, floatResult('tanh', t), Math.tanh);
}

const sigmoidNumber = (x: number): number => 1 / (1 + Math.exp(-x));

/** 1/(1 + e^−x) (integers give float32; complex too). */
export function sigmoid(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return complexSigmoid(t);
  return mapUnary(t, floatResult('sigmoid', t), sigmoidNumber);
}

/** max(x, 0) in the input type; NaN stays NaN. */
export function relu(t: Tensor): Tensor {
  numericSameType('relu', t);
  return mapSameType(
    t,
    (x) => (x > 0 || Number.isNaN(x) ? x : 0),
    (x) => (x > 0n ? x : 0n),
  );
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
const INV_SQRT_PI = 1 / Math.sqrt(Math.PI);

/** erf by its everywhere-convergent positive series 2/√π·e^(−x²)·Σ (2x²)^n·x / (2n+1)!!, for 0 ≤ x < 2.5. */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; term > sum * 1e-17; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/** erfc by its continued fraction e^(−x²)/√π / (x + ½/(x + 1/(x + 3⁄2/(x + …)))), for x ≥ 2.5. */
function erfcContinuedFraction(x: number): number {
  let t = x;
  for (let n = 50; n >= 1; n--) t = x + n / 2 / t;
  return (Math.exp(-x * x) * INV_SQRT_PI) / t;
}

/** The error function of a number, |error| below 2e-15 (JS Math has no erf). */
export function erfNumber(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  const ax = Math.abs(x);
  // erfc(6) < 3e-17: erf is ±1 in float64 from there on.
  const r = ax >= 6 ? 1 : ax < 2.5 ? erfSeries(ax) : 1 - erfcContinuedFraction(ax);
  return x < 0 ? -r : r;
}

/** The error function (integers give float32). */
export function erf(t: Tensor): Tensor {
  return mapUnary(t, floatResult('erf', t), erfNumber);
}

const SQRT_HALF = Math.SQRT1_2;
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** The options of gelu: PyTorch's `approximate`. */
export interface GeluOptions {
  approximate?: 'none' | 'tanh';
}

/** x·Φ(x), exactly through erf or with PyTorch's tanh approximation. */
export function gelu(t: Tensor, options: GeluOptions = {}): Tensor {
  const dtype = floatOnly('gelu', t);
  const approximate = options.approximate ?? 'none';
  if (approximate === 'tanh') {
    return mapUnary(t, dtype, (x) => 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))));
  }
  if (approximate !== 'none') throw new InvalidArgumentError(`gelu: approximate must be 'none' or 'tanh', got ${JSON.stringify(approximate)}`);
  return mapUnary(t, dtype, (x) => 0.5 * x * (1 + erfNumber(x * SQRT_HALF)));
}

/** x·sigmoid(x). */
export function silu(t: Tensor): Tensor {
  return mapUnary(t, floatOnly('silu', t), (x) => x * sigmoidNumber(x));
}

/** x·relu6(x + 3)/6. */
export function hardswish(t: Tensor): Tensor {
  return mapUnary(t, floatOnly('hardswish', t), (x) => (x * Math.min(Math.max(x + 3, 0), 6)) / 6);
}

/** The slope and offset of hardsigmoid; PyTorch's are 1/6 and 0.5, ONNX HardSigmoid's default alpha is 0.2. */
export interface HardSigmoidOptions {
  alpha?: number;
  beta?: number;
}

/** max(0, min(1, alpha·x + beta)), PyTorch's defaults alpha = 1/6, beta = 0.5. */
export function hardsigmoid(t: Tensor, options: HardSigmoidOptions = {}): Tensor {
  const alpha = options.alpha ?? 1 / 6;
  const beta = options.beta ?? 0.5;
  return mapUnary(t, floatOnly('hardsigmoid', t), (x) => {
    const y = alpha * x + beta;
    return Number.isNaN(y) ? y : Math.max(0, Math.min(1, y));
  });
}

/** x for x > 0, slope·x otherwise. */
export function leakyRelu(t: Tensor, slope = 0.01): Tensor {
  return mapUnary(t, floatOnly('leakyRelu', t), (x) => (x > 0 ? x : x * slope));
}

/** x for x > 0, alpha·(e^x − 1) otherwise. */
export function elu(t: Tensor, alpha = 1): Tensor {
  return mapUnary(t, floatOnly('elu', t), (x) => (x > 0 ? x : alpha * Math.expm1(x)));
}

/** log(1 + e^(beta·x))/beta, linear where beta·x > threshold (PyTorch's defaults 1 and 20). */
export function softplus(t: Tensor, beta = 1, threshold = 20): Tensor {
  return mapUnary(t, floatOnly('softplus', t), (x) => (x * beta > threshold ? x : Math.log1p(Math.exp(x * beta)) / beta));
}

const unbounded = (v: number): { values: Float64Array; shape: number[] } => ({ values: new Float64Array([v]), shape: [] });

/**
 * min(max(x, min), max) with broadcasting over tensor bounds and PyTorch promotion over all
 * three operands; NaN in any of them propagates; min > max gives max, as torch.clamp.
 */
export function clamp(t: Tensor, min?: Operand, max?: Operand): Tensor {
  if (min === undefined && max === undefined) throw new InvalidArgumentError(`clamp: at least one of min and max is needed, for ${fmt(t)}`);
  const operands = [t, ...(min === undefined ? [] : [min]), ...(max === undefined ? [] : [max])];
  const dtype = resultTypeOf(operands);
  if (isComplex(dtype)) throw new InvalidArgumentError(`clamp: complex input is not supported, got ${fmt(t)}`);
  if (isBigIntDType(dtype)) return clampBigInt(dtype, t, min, max);
  const x = operandValues(t, dtype);
  // A missing bound is ±infinity, which no integer dtype can hold: keep it in float64.
  const lo = min === undefined ? unbounded(-Infinity) : operandValues(min, dtype);
  const hi = max === undefined ? unbounded(Infinity) : operandValues(max, dtype);
  const shape = broadcastFor('clamp', x.shape, lo.shape, hi.shape);
  const n = shapeSize(shape);
  const maps = [x, lo, hi].map((d) => indexMap(d.shape, shape));
  const at = (d: { values: ArrayLike<number> }, m: Int32Array | null, k: number): number => d.values[m === null ? k : m[k]!]!;
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const v = at(x, maps[0]!, k);
    const a = at(lo, maps[1]!, k);
    const b = at(hi, maps[2]!, k);
    out[k] = Number.isNaN(v) || Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(Math.max(v, a), b);
  }
  return fromNumbers(dtype, shape, out);
}

/** clamp computed in int64 or uint64, exactly: min(max(x, min), max) with a missing bound left out. */
function clampBigInt(dtype: BigIntDType, t: Tensor, min?: Operand, max?: Operand): Tensor {
  const x = operandBigInt(t, dtype);
  const lo = min === undefined ? null : operandBigInt(min, dtype);
  const hi = max === undefined ? null : operandBigInt(max, dtype);
  const shape = broadcastFor('clamp', x.shape, lo?.shape ?? [], hi?.shape ?? []);
  const n = shapeSize(shape);
  const mx = indexMap(x.shape, shape);
  const mlo = lo === null ? null : indexMap(lo.shape, shape);
  const mhi = hi === null ? null : indexMap(hi.shape, shape);
  const out = dtype === 'int64' ? new BigInt64Array(n) : new BigUint64Array(n);
  for (let k = 0; k < n; k++) {
    let v = x.values[mx === null ? k : mx[k]!]!;
    if (lo !== null) {
      const a = lo.values[mlo === null ? k : mlo[k]!]!;
      if (v < a) v = a;
    }
    if (hi !== null) {
      const b = hi.values[mhi === null ? k : mhi[k]!]!;
      if (v > b) v = b;
    }
    out[k] = v;
  }
  return new Tensor(dtype, shape, out);
}

/** clamp(x, min, max) with PyTorch's defaults −1 and 1. */
export function hardtanh(t: Tensor, min = -1, max = 1): Tensor {
  return clamp(t, min, max);
}

/** Rounds floats with `f`; integer and bool tensors are returned as copies, as in PyTorch. */
function roundingOp(op: string, t: Tensor, f: (x: number) => number): Tensor {
  rejectComplex(op, t);
  return isFloating(t.dtype) ? mapUnary(t, t.dtype, f) : copyOf(t);
}

/** Largest integer ≤ x. */
export function floor(t: Tensor): Tensor {
  return roundingOp('floor', t, Math.floor);
}

/** Smallest integer ≥ x. */
export function ceil(t: Tensor): Tensor {
  return roundingOp('ceil', t, Math.ceil);
}

/** x rounded toward zero. */
export function trunc(t: Tensor): Tensor {
  return roundingOp('trunc', t, Math.trunc);
}

/** Round half to even (nearbyint), keeping the sign of zero. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  const r = d < 0.5 ? f : d > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
  return r === 0 ? x * 0 : r;
}

/** Round half to even as torch.round and ONNX Round; `decimals` as torch.round(decimals=). */
export function round(t: Tensor, decimals = 0): Tensor {
  if (!Number.isInteger(decimals)) throw new InvalidArgumentError(`round: decimals must be an integer, got ${decimals}`);
  if (decimals === 0) return roundingOp('round', t, roundHalfEven);
  // PyTorch scales by 10^|decimals| and divides back (or the reverse for negative decimals).
  const scale = 10 ** Math.abs(decimals);
  const f = decimals > 0 ? (x: number) => roundHalfEven(x * scale) / scale : (x: number) => roundHalfEven(x / scale) * scale;
  return roundingOp('round', t, f);
}

/** Mapping of truth values (nonzero, NaN included, is true) to a bool tensor. */
function predicate(t: Tensor, f: (x: number) => boolean): Tensor {
  const v = readNumbers(t);
  const out = new Float64Array(t.size);
  const lanes = dtypeInfo(t.dtype).lanes;
  for (let k = 0; k < out.length; k++) {
    let hit = false;
    for (let l = 0; l < lanes; l++) hit ||= f(v[k * lanes + l]!);
    out[k] = hit ? 1 : 0;
  }
  return fromNumbers('bool', t.shape, out);
}

/** Not of the truth value (zero is false, anything else, NaN included, true); bool output. */
export function logicalNot(t: Tensor): Tensor {
  const truth = truthValues(t).values;
  const out = new Float64Array(truth.length);
  for (let k = 0; k < out.length; k++) out[k] = 1 - truth[k]!;
  return fromNumbers('bool', t.shape, out);
}

/** Whether each element is NaN (complex: either part); bool output. */
export function isnan(t: Tensor): Tensor {
  return predicate(t, Number.isNaN);
}

/** Whether each element is ±infinity (complex: either part); bool output. */
export function isinf(t: Tensor): Tensor {
  return predicate(t, (x) => x === Infinity || x === -Infinity);
}

/**
 * int64 or uint64 to an integer type or bool exactly (float64 would lose bits beyond 2^53),
 * wrapping to the target's width as C does (two's complement).
 */
function castBigIntToInteger(t: Tensor, dtype: DType): Tensor {
  const src = t.data as BigIntArray;
  const info = dtypeInfo(dtype);
  const out = new info.storage(src.length);
  if (dtype === 'int64') for (let i = 0; i < src.length; i++) out[i] = BigInt.asIntN(64, src[i]!);
  else if (dtype === 'uint64') for (let i = 0; i < src.length; i++) out[i] = BigInt.asUintN(64, src[i]!);
  else if (dtype === 'bool') for (let i = 0; i < src.length; i++) out[i] = src[i] !== 0n ? 1 : 0;
  else {
    // The low 32 bits are exact in a number; the typed-array store wraps them to the target's width.
    const bits = integerBits(dtype)!;
    const wrap = isSubByteInt(dtype)
      ? (v: bigint) => wrapSubByte(Number(BigInt.asIntN(32, v)), dtype) // a typed-array store would wrap to 8 bits, not 4 or 2
      : isUnsigned(dtype) || bits < 32
        ? (v: bigint) => Number(BigInt.asUintN(32, v))
        : (v: bigint) => Number(BigInt.asIntN(32, v));
    for (let i = 0; i < src.length; i++) out[i] = wrap(src[i]!);
  }
  return new Tensor(dtype, t.shape, out);
}

/** Real parts of a complex tensor as a float64 tensor of its shape. */
function realParts(t: Tensor): Float64Array {
  const v = readNumbers(t);
  const out = new Float64Array(t.size);
  for (let k = 0; k < out.length; k++) out[k] = v[2 * k]!;
  return out;
}

/**
 * Converts to `dtype` as PyTorch's `.to(dtype)`: floats round to nearest even (int64 and
 * uint64 round once, exactly), integers to integers wrap to the target's width (two's
 * complement, as ONNX Cast), floats to integers truncate toward zero and wrap (int64 and
 * uint64 saturate past their range, NaN gives 0: see floatToInt64, floatToUint64), bool is nonzero, real → complex gets a zero imaginary part,
 * complex → real drops it (complex → bool: either part nonzero). Always a new tensor.
 */
export function cast(t: Tensor, dtype: DType): Tensor {
  if (!isDType(dtype)) throw new InvalidArgumentError(`cast: unknown dtype ${JSON.stringify(dtype)} for ${fmt(t)}`);
  if (t.dtype === dtype) return copyOf(t);
  if (isComplex(dtype)) return toComplex(t, dtype as ComplexDType);
  if (isBigIntDType(t.dtype) && (dtype === 'bool' || dtypeInfo(dtype).kind === 'int')) return castBigIntToInteger(t, dtype);
  if (isComplex(t.dtype)) {
    if (dtype === 'bool') return fromNumbers('bool', t.shape, truthValues(t).values);
    return fromNumbers(dtype, t.shape, realParts(t));
  }
  return fromNumbers(dtype, t.shape, isBigIntDType(t.dtype) && isFloating(dtype) ? int64AsFloat(t, dtype) : readNumbers(t));
}
