/**
 * Binary elementwise CPU kernels with NumPy broadcasting and PyTorch type promotion:
 * arithmetic, comparisons, logical ops and where().
 *
 * An operand may be a plain JS number or boolean, which plays the part of an ATen Scalar
 * (a "wrapped number"): it does not promote a tensor of the same category. A JS number
 * cannot say whether it was written `2` or `2.0`, so an integer-valued number counts as an
 * int scalar; pass `{ value: 2, kind: 'float' }` where the distinction matters.
 *
 * Operands are first converted to the common dtype (as PyTorch's TensorIterator does), then
 * computed in float64 and rounded once into the result dtype. int64 and uint64 are computed
 * exactly, as bigints wrapping modulo 2^64 (./int64.ts); int32, uint32 and narrower are exact
 * in float64 except products, which go through Math.imul (the stores wrap to the type's width).
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, isBigIntDType, isComplex, isFloating, resultTypeOfOperands, scalarDType, type DType } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { BroadcastCursor, broadcastIndex, broadcastShapes, CHUNK_ELEMENTS, fromNumbers, readNumbers, readNumberView, writeNumbers, type NumberView } from './access';
import { complexAdd, complexDiv, complexMul, complexPow, complexPowScalar, complexSub, imag, real, toComplex, type ComplexDType } from './complex';
import { full } from './shape';
import { bigintOf, bigintValues, floorDivInt64, int64AsFloat, powInt32, powInt64, remainderInt64, type BigIntArray, type BigIntDType } from './int64';

/** A Python-style scalar whose category is explicit (a JS number alone cannot say 2 from 2.0). */
export interface Scalar {
  readonly value: number;
  readonly kind: 'bool' | 'int' | 'float';
}

/** What a binary kernel accepts for an operand: a tensor or a scalar. */
export type Operand = Tensor | number | boolean | Scalar;

/** The rounding modes of torch.div. */
export type RoundingMode = 'trunc' | 'floor';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

function describe(x: Operand): string {
  if (x instanceof Tensor) return `${x.dtype}${fmt(x.shape)}`;
  if (typeof x === 'object') return `${x.kind} scalar ${x.value}`;
  return `scalar ${String(x)}`;
}

function scalarKind(x: number | boolean | Scalar): Scalar['kind'] {
  if (typeof x === 'boolean') return 'bool';
  if (typeof x === 'number') return Number.isInteger(x) ? 'int' : 'float';
  return x.kind;
}

function scalarValue(x: number | boolean | Scalar): number {
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'number') return x;
  return x.value;
}

/**
 * torch.result_type over any number of operands: tensors of rank ≥ 1 outrank 0-d tensors,
 * which outrank scalars; a lower group only promotes when it is of a higher category
 * (bool < int < float < complex). The rule itself is resultTypeOfOperands (lib/ir/dtype.ts),
 * which type inference shares.
 */
export function resultTypeOf(operands: readonly Operand[]): DType {
  const out = resultTypeOfOperands(
    operands.map((x) =>
      x instanceof Tensor ? { dtype: x.dtype, role: x.rank > 0 ? 'tensor' : 'zerodim' } : { dtype: scalarDType(scalarKind(x)), role: 'scalar' },
    ),
  );
  if (out === undefined) throw new InvalidArgumentError('resultTypeOf: no operands');
  return out;
}

/** torch.result_type(a, b): the dtype a binary op on `a` and `b` computes in and returns. */
export function resultType(a: Operand, b: Operand): DType {
  return resultTypeOf([a, b]);
}

const isIntegral = (d: DType): boolean => !isFloating(d) && !isComplex(d);

/** An operand's values as float64 (row-major) with its shape; [] for a scalar. */
export interface Dense {
  /** Read-only: may be an input tensor's own storage (readNumberView). */
  readonly values: NumberView;
  readonly shape: Shape;
}

/** Values of `t` after conversion to the real type `dtype` (rounding as .to(dtype)), as float64. */
export function valuesAs(t: Tensor, dtype: DType): NumberView {
  if (isBigIntDType(t.dtype) && isFloating(dtype)) {
    const v = int64AsFloat(t, dtype);
    return dtype === 'float64' ? v : readNumberView(fromNumbers(dtype, t.shape, v));
  }
  // No conversion: the tensor's own numbers, read in place.
  if (t.dtype === dtype || dtype === 'float64') return readNumberView(t);
  return readNumberView(fromNumbers(dtype, t.shape, readNumbers(t)));
}

/** An operand as float64 values in `dtype`'s value set; scalars become shape []. */
export function operandValues(x: Operand, dtype: DType): Dense {
  if (x instanceof Tensor) return { values: valuesAs(x, dtype), shape: x.shape };
  const v = new Float64Array([scalarValue(x)]);
  return { values: dtype === 'float64' ? v : readNumbers(fromNumbers(dtype, [], v)), shape: [] };
}

/** An operand as a tensor of `dtype` (scalars become 0-d tensors). */
function operandTensor(x: Operand, dtype: DType): Tensor {
  if (isComplex(dtype)) return toComplex(x instanceof Tensor ? x : scalarValue(x), dtype as ComplexDType);
  if (isBigIntDType(dtype)) {
    const d = operandBigInt(x, dtype);
    return new Tensor(dtype, d.shape, d.values);
  }
  const d = operandValues(x, dtype);
  return fromNumbers(dtype, d.shape, d.values);
}

/** broadcastShapes with the kernel's name in the error. */
export function broadcastFor(op: string, ...shapes: Shape[]): number[] {
  try {
    return broadcastShapes(...shapes);
  } catch (e) {
    throw new InvalidArgumentError(`${op}: ${(e as Error).message}`);
  }
}

/** Index map from `outShape` into `shape`, or null when no broadcasting happens. */
export function indexMap(shape: Shape, outShape: Shape): Int32Array | null {
  if (shape.length === outShape.length && shape.every((d, i) => d === outShape[i])) return null;
  return broadcastIndex(shape, outShape);
}

/** The broadcast of two operand shapes: its shape, size, and each side's index map (null: read in place). */
function pairPlan(op: string, a: Shape, b: Shape): { shape: number[]; n: number; ix: Int32Array | null; iy: Int32Array | null } {
  const shape = broadcastFor(op, a, b);
  return { shape, n: shapeSize(shape), ix: indexMap(a, shape), iy: indexMap(b, shape) };
}

/**
 * Applies `f` over the broadcast of two dense operands and rounds the results into a tensor of
 * `outDtype`, a chunk of CHUNK_ELEMENTS at a time: the float64 results and the broadcast
 * indices never exist for the whole output, so a large op holds its operands and its output
 * and little more.
 */
function zipDense(op: string, x: Dense, y: Dense, f: (a: number, b: number) => number, outDtype: DType): Tensor {
  const shape = broadcastFor(op, x.shape, y.shape);
  const n = shapeSize(shape);
  const xv = x.values;
  const yv = y.values;
  const sameShape = (s: Shape): boolean => s.length === shape.length && s.every((d, i) => d === shape[i]);
  const cx = sameShape(x.shape) ? null : new BroadcastCursor(x.shape, shape);
  const cy = sameShape(y.shape) ? null : new BroadcastCursor(y.shape, shape);
  const chunk = Math.min(n, CHUNK_ELEMENTS);
  const ix = new Int32Array(cx === null ? 0 : chunk);
  const iy = new Int32Array(cy === null ? 0 : chunk);
  const values = new Float64Array(chunk);
  const data = new (dtypeInfo(outDtype).storage)(n);
  for (let start = 0; start < n; start += chunk) {
    const count = Math.min(chunk, n - start);
    cx?.next(count, ix);
    cy?.next(count, iy);
    for (let j = 0; j < count; j++) values[j] = f(xv[cx === null ? start + j : ix[j]!]!, yv[cy === null ? start + j : iy[j]!]!);
    writeNumbers(outDtype, data, start, values, count);
  }
  return new Tensor(outDtype, shape, data);
}

/** An operand's values as int64 or uint64 bigints (row-major) with its shape; [] for a scalar. */
interface DenseBigInt {
  readonly values: BigIntArray;
  readonly shape: Shape;
}

/** An operand converted to int64 or uint64 (as a cast; see bigintValues); scalars become shape []. */
export function operandBigInt(x: Operand, dtype: BigIntDType): DenseBigInt {
  if (x instanceof Tensor) return { values: bigintValues(x, dtype), shape: x.shape };
  const v = bigintOf(scalarValue(x), dtype);
  return { values: dtype === 'int64' ? BigInt64Array.of(v) : BigUint64Array.of(v), shape: [] };
}

/** An operand converted to int64 (as .to(torch.int64)); scalars become shape []. */
export function operandInt64(x: Operand): { readonly values: BigInt64Array; readonly shape: Shape } {
  return operandBigInt(x, 'int64') as { values: BigInt64Array; shape: Shape };
}

/**
 * Applies `f` over the broadcast of two operands converted to `dtype` (int64 or uint64),
 * writing each result with `store` into an array of `length` that `create` allocates
 * (BigInt64Array and BigUint64Array stores wrap modulo 2^64).
 */
function zipBigInt<A extends BigIntArray | Uint8Array, R>(
  op: string,
  dtype: BigIntDType,
  a: Operand,
  b: Operand,
  create: (length: number) => A,
  f: (x: bigint, y: bigint) => R,
  store: (out: A, k: number, r: R) => void,
): { out: A; shape: number[] } {
  const { values: xv, shape: xs } = operandBigInt(a, dtype);
  const { values: yv, shape: ys } = operandBigInt(b, dtype);
  const { shape, n, ix, iy } = pairPlan(op, xs, ys);
  const out = create(n);
  for (let k = 0; k < n; k++) store(out, k, f(xv[ix === null ? k : ix[k]!]!, yv[iy === null ? k : iy[k]!]!));
  return { out, shape };
}

const storeBigInt = (out: BigIntArray, k: number, r: bigint): void => {
  out[k] = r;
};

/** An int64 or uint64 binary op, exact with wrap-around modulo 2^64. */
function mapBigInt(op: string, dtype: BigIntDType, a: Operand, b: Operand, f: (x: bigint, y: bigint) => bigint): Tensor {
  const create = (n: number): BigIntArray => (dtype === 'int64' ? new BigInt64Array(n) : new BigUint64Array(n));
  const { out, shape } = zipBigInt(op, dtype, a, b, create, f, storeBigInt);
  return new Tensor(dtype, shape, out);
}

/** How a real binary op computes: in float64, and exactly (bigints) for int64 and uint64 results. */
interface BinaryFns {
  readonly number: (x: number, y: number) => number;
  readonly int64?: (x: bigint, y: bigint) => bigint;
}

/** The shared body of the real binary kernels: convert to `computeDtype`, map, round into `outDtype`. */
function mapBinary(op: string, a: Operand, b: Operand, computeDtype: DType, outDtype: DType, f: BinaryFns | ((x: number, y: number) => number)): Tensor {
  const fns: BinaryFns = typeof f === 'function' ? { number: f } : f;
  if (isBigIntDType(computeDtype) && outDtype === computeDtype && fns.int64 !== undefined) return mapBigInt(op, computeDtype, a, b, fns.int64);
  return zipDense(op, operandValues(a, computeDtype), operandValues(b, computeDtype), fns.number, outDtype);
}

function rejectComplex(op: string, a: Operand, b: Operand, dtype: DType): void {
  if (isComplex(dtype)) throw new InvalidArgumentError(`${op}: complex operands are not supported (got ${describe(a)} and ${describe(b)})`);
}

function checkAlpha(op: string, alpha: number, dtype: DType): void {
  if (isIntegral(dtype) && !Number.isInteger(alpha)) {
    throw new InvalidArgumentError(`${op}: alpha must be an integer for ${dtype} operands, got ${alpha}`);
  }
}

/** a + alpha·b with broadcasting and PyTorch promotion (complex operands supported). */
export function add(a: Operand, b: Operand, alpha = 1): Tensor {
  const dtype = resultType(a, b);
  checkAlpha('add', alpha, dtype);
  if (isComplex(dtype)) return complexAdd(operandTensor(a, dtype), operandTensor(b, dtype), alpha, dtype);
  const k = isIntegral(dtype) ? BigInt(alpha) : 0n;
  return mapBinary('add', a, b, dtype, dtype, { number: (x, y) => x + alpha * y, int64: (x, y) => x + k * y });
}

function isBoolOperand(x: Operand): boolean {
  return x instanceof Tensor ? x.dtype === 'bool' : scalarKind(x) === 'bool';
}

/** a − alpha·b with broadcasting and promotion; bool operands are an error, as in PyTorch. */
export function sub(a: Operand, b: Operand, alpha = 1): Tensor {
  if (isBoolOperand(a) || isBoolOperand(b)) {
    throw new InvalidArgumentError(
      `sub: subtraction with a bool operand is not supported (got ${describe(a)} and ${describe(b)}); use logicalXor or logicalNot`,
    );
  }
  const dtype = resultType(a, b);
  checkAlpha('sub', alpha, dtype);
  if (isComplex(dtype)) return complexSub(operandTensor(a, dtype), operandTensor(b, dtype), alpha, dtype);
  const k = isIntegral(dtype) ? BigInt(alpha) : 0n;
  return mapBinary('sub', a, b, dtype, dtype, { number: (x, y) => x - alpha * y, int64: (x, y) => x - k * y });
}

/** a · b with broadcasting and promotion (complex operands supported). */
export function mul(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  if (isComplex(dtype)) return complexMul(operandTensor(a, dtype), operandTensor(b, dtype), dtype);
  // A product of two int32 values can pass 2^53; Math.imul wraps it exactly, as C does.
  return mapBinary('mul', a, b, dtype, dtype, { number: isIntegral(dtype) ? Math.imul : (x, y) => x * y, int64: (x, y) => x * y });
}

/** Wraps an integer op so that a zero divisor throws, as PyTorch's ZeroDivisionError. */
function nonzeroDivisor<T extends number | bigint>(op: string, f: (x: T, y: T) => T): (x: T, y: T) => T {
  return (x, y) => {
    if (y === 0 || y === 0n) throw new InvalidArgumentError(`${op}: integer division by zero`);
    return f(x, y);
  };
}

/** Integer division on both paths: C truncation or Python floor; a zero divisor throws. */
function integerDivision(op: string, mode: RoundingMode): BinaryFns {
  return mode === 'trunc'
    ? { number: nonzeroDivisor(op, integerTruncDivide), int64: nonzeroDivisor(op, (x: bigint, y: bigint) => x / y) }
    : { number: nonzeroDivisor(op, floorDivide), int64: nonzeroDivisor(op, floorDivInt64) };
}

/**
 * Python floor division on float64 (as PyTorch's div_floor_floating): exact for integers,
 * and avoids floor(a / b) being off by one when a / b rounds up to an integer.
 */
export function floorDivide(a: number, b: number): number {
  if (b === 0) return a / b;
  const mod = a % b;
  let div = (a - mod) / b;
  if (mod !== 0 && b < 0 !== mod < 0) div -= 1;
  if (div === 0) return Math.sign(a / b) * 0;
  let floordiv = Math.floor(div);
  if (div - floordiv > 0.5) floordiv += 1;
  return floordiv;
}

function truncDivide(a: number, b: number): number {
  return Math.trunc(a / b);
}

function integerTruncDivide(a: number, b: number): number {
  return (a - (a % b)) / b;
}

/**
 * a / b with broadcasting. Without a rounding mode it is true division and integer or bool
 * operands give float32; 'trunc' and 'floor' keep the promoted type. Integer division by
 * zero is an error, as in PyTorch.
 */
export function div(a: Operand, b: Operand, roundingMode?: RoundingMode): Tensor {
  const common = resultType(a, b);
  if (roundingMode === undefined) {
    const dtype = isIntegral(common) ? 'float32' : common;
    if (isComplex(dtype)) return complexDiv(operandTensor(a, dtype), operandTensor(b, dtype), dtype);
    return mapBinary('div', a, b, dtype, dtype, (x, y) => x / y);
  }
  if (roundingMode !== 'trunc' && roundingMode !== 'floor') {
    throw new InvalidArgumentError(`div: rounding mode must be undefined, 'trunc' or 'floor', got ${JSON.stringify(roundingMode)}`);
  }
  rejectComplex('div', a, b, common);
  const op = `div(${roundingMode})`;
  if (isIntegral(common)) return mapBinary(op, a, b, common, common, integerDivision(op, roundingMode));
  return mapBinary(op, a, b, common, common, roundingMode === 'trunc' ? truncDivide : floorDivide);
}

/** C pow semantics where JS differs: pow(1, y) = 1 and pow(-1, ±inf) = 1. */
function floatPow(x: number, y: number): number {
  if (x === 1) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}

/**
 * a ** b with broadcasting and promotion. Integer powers wrap as PyTorch's powi does (by
 * squaring, in the type's width); int ** negative int is 1/x truncated (0 unless |x| = 1).
 * Complex powers follow torch.pow's three forms: a Scalar exponent has its special cases
 * (0, 1, ±0.5, −1, 2, 3, −2; ./complex.ts powScalarPair), a Scalar base 1 gives 1, and
 * otherwise z^w = e^(w·log z) on the principal branch.
 */
export function pow(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  if (isComplex(dtype)) {
    if (!(b instanceof Tensor)) return complexPowScalar(operandTensor(a, dtype), scalarValue(b));
    if (!(a instanceof Tensor) && scalarValue(a) === 1) return full(b.shape, 1, dtype);
    return complexPow(operandTensor(a, dtype), operandTensor(b, dtype), dtype);
  }
  return mapBinary('pow', a, b, dtype, dtype, isIntegral(dtype) ? { number: powInt32, int64: powInt64 } : floatPow);
}

/** Elementwise maximum with broadcasting; NaN propagates. */
export function maximum(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  rejectComplex('maximum', a, b, dtype);
  return mapBinary('maximum', a, b, dtype, dtype, {
    number: (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.max(x, y)),
    int64: (x, y) => (x > y ? x : y),
  });
}

/** Elementwise minimum with broadcasting; NaN propagates. */
export function minimum(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  rejectComplex('minimum', a, b, dtype);
  return mapBinary('minimum', a, b, dtype, dtype, {
    number: (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.min(x, y)),
    int64: (x, y) => (x < y ? x : y),
  });
}

/** Python modulo: the result has the sign of the divisor. */
function pythonRemainder(x: number, y: number): number {
  let mod = x % y;
  if (mod !== 0 && y < 0 !== mod < 0) mod += y;
  return mod;
}

/** torch.remainder: a − floor(a / b)·b, the sign of the divisor (Python %); integer by zero is an error. */
export function remainder(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  rejectComplex('remainder', a, b, dtype);
  if (isIntegral(dtype)) {
    return mapBinary('remainder', a, b, dtype, dtype, {
      number: nonzeroDivisor('remainder', pythonRemainder),
      int64: nonzeroDivisor('remainder', remainderInt64),
    });
  }
  return mapBinary('remainder', a, b, dtype, dtype, pythonRemainder);
}

/** torch.fmod / ONNX Mod with fmod=1: C fmod, the sign of the dividend; integer by zero is an error. */
export function fmod(a: Operand, b: Operand): Tensor {
  const dtype = resultType(a, b);
  rejectComplex('fmod', a, b, dtype);
  if (isIntegral(dtype)) {
    return mapBinary('fmod', a, b, dtype, dtype, {
      number: nonzeroDivisor('fmod', (x: number, y: number) => x % y),
      int64: nonzeroDivisor('fmod', (x: bigint, y: bigint) => x % y),
    });
  }
  return mapBinary('fmod', a, b, dtype, dtype, (x, y) => x % y);
}

type Comparison = <T extends number | bigint>(x: T, y: T) => boolean;

const storeBool = (out: Uint8Array, k: number, r: boolean): void => {
  out[k] = r ? 1 : 0;
};

/** Compares in the promoted type (int64 and uint64 as bigints); complex operands allow only eq and ne. */
function compare(op: string, a: Operand, b: Operand, f: Comparison): Tensor {
  const dtype = resultType(a, b);
  if (isComplex(dtype)) {
    if (op !== 'eq' && op !== 'ne') {
      throw new InvalidArgumentError(`${op}: complex operands cannot be ordered (got ${describe(a)} and ${describe(b)})`);
    }
    return compareComplex(op, operandTensor(a, dtype), operandTensor(b, dtype));
  }
  if (isBigIntDType(dtype)) {
    const { out, shape } = zipBigInt(op, dtype, a, b, (n) => new Uint8Array(n), f, storeBool);
    return new Tensor('bool', shape, out);
  }
  return mapBinary(op, a, b, dtype, 'bool', (x, y) => (f(x, y) ? 1 : 0));
}

function compareComplex(op: 'eq' | 'ne', a: Tensor, b: Tensor): Tensor {
  const same = logicalAnd(eq(real(a), real(b)), eq(imag(a), imag(b)));
  return op === 'eq' ? same : logicalXor(same, true);
}

/** a == b, bool output. */
export function eq(a: Operand, b: Operand): Tensor {
  return compare('eq', a, b, (x, y) => x === y);
}

/** a != b, bool output (NaN != NaN is true). */
export function ne(a: Operand, b: Operand): Tensor {
  return compare('ne', a, b, (x, y) => x !== y);
}

/** a < b, bool output. */
export function lt(a: Operand, b: Operand): Tensor {
  return compare('lt', a, b, (x, y) => x < y);
}

/** a <= b, bool output. */
export function le(a: Operand, b: Operand): Tensor {
  return compare('le', a, b, (x, y) => x <= y);
}

/** a > b, bool output. */
export function gt(a: Operand, b: Operand): Tensor {
  return compare('gt', a, b, (x, y) => x > y);
}

/** a >= b, bool output. */
export function ge(a: Operand, b: Operand): Tensor {
  return compare('ge', a, b, (x, y) => x >= y);
}

/** Each element as 1 (nonzero, NaN included; complex: either part nonzero) or 0. */
export function truthValues(x: Operand): Dense {
  if (!(x instanceof Tensor)) return { values: new Float64Array([scalarValue(x) !== 0 ? 1 : 0]), shape: [] };
  const v = readNumbers(x);
  const out = new Float64Array(x.size);
  if (isComplex(x.dtype)) for (let k = 0; k < out.length; k++) out[k] = v[2 * k] !== 0 || v[2 * k + 1] !== 0 ? 1 : 0;
  else for (let k = 0; k < out.length; k++) out[k] = v[k] !== 0 ? 1 : 0;
  return { values: out, shape: x.shape };
}

function logical(op: string, a: Operand, b: Operand, f: (x: number, y: number) => number): Tensor {
  return zipDense(op, truthValues(a), truthValues(b), f, 'bool');
}

/** Logical and of truth values (nonzero = true), bool output. */
export function logicalAnd(a: Operand, b: Operand): Tensor {
  return logical('logicalAnd', a, b, (x, y) => x & y);
}

/** Logical or of truth values (nonzero = true), bool output. */
export function logicalOr(a: Operand, b: Operand): Tensor {
  return logical('logicalOr', a, b, (x, y) => x | y);
}

/** Logical xor of truth values (nonzero = true), bool output. */
export function logicalXor(a: Operand, b: Operand): Tensor {
  return logical('logicalXor', a, b, (x, y) => x ^ y);
}

/** Element slots of any typed array, read and written without conversion. */
type Slots = { [index: number]: number | bigint; readonly length: number };

/**
 * cond ? a : b with three-way broadcasting; `cond` must be bool, a and b are promoted
 * together. Elements are copied as stored in the promoted type, so every dtype is exact.
 */
export function where(cond: Tensor, a: Operand, b: Operand): Tensor {
  if (cond.dtype !== 'bool') throw new InvalidArgumentError(`where: the condition must be a bool tensor, got ${cond.dtype}${fmt(cond.shape)}`);
  const dtype = resultType(a, b);
  const x = a instanceof Tensor && a.dtype === dtype ? a : operandTensor(a, dtype);
  const y = b instanceof Tensor && b.dtype === dtype ? b : operandTensor(b, dtype);
  const shape = broadcastFor('where', cond.shape, x.shape, y.shape);
  const n = shapeSize(shape);
  const ic = broadcastIndex(cond.shape, shape);
  const ix = broadcastIndex(x.shape, shape);
  const iy = broadcastIndex(y.shape, shape);
  const lanes = isComplex(dtype) ? 2 : 1;
  const c = cond.data;
  const out = new Tensor(dtype, shape);
  const dst = out.data as unknown as Slots;
  const xs = x.data as unknown as Slots;
  const ys = y.data as unknown as Slots;
  for (let k = 0; k < n; k++) {
    const pick = c[ic[k]!] !== 0;
    const src = pick ? xs : ys;
    const i = pick ? ix[k]! : iy[k]!;
    for (let l = 0; l < lanes; l++) dst[k * lanes + l] = src[i * lanes + l]!;
  }
  return out;
}
