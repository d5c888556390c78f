/**
 * Reduction CPU kernels: sum, mean, prod, amax, amin, argmax, argmin over axes, softmax and
 * logSoftmax along one axis, and cumulative sums, with PyTorch's dtype rules (sums and
 * products of bool or integer tensors are int64; mean of an integer tensor is an error).
 * Integer sums and products, and int64/uint64 extremes and arg-extremes, are exact (bigints,
 * wrapping modulo 2^64, then to the result type's width).
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, isBigIntDType, isComplex, isDType, isFloating, isInteger, type DType } from '../ir/dtype';
import { Tensor, type Shape } from '../ir/tensor';
import { boxOffsets, fromNumbers, normalizeAxis, readNumbers, stridesOf, type NumberView } from './access';
import { toComplex, type ComplexDType } from './complex';
import { valuesAs } from './elementwise';
import { bigintValues, type BigIntArray, type BigIntDType } from './int64';
import { cast } from './unary';

const fmt = (t: Tensor): string => `${t.dtype}[${t.shape.join(', ')}]`;

/** Which elements each output element of a reduction reads. */
interface ReducePlan {
  /** The output shape (reduced axes dropped, or kept as 1 with keepdim). */
  readonly outShape: number[];
  /** For each output element, the input offset of its first reduced element. */
  readonly bases: Int32Array;
  /** The offsets, relative to a base, of all elements reduced into one output element. */
  readonly offsets: Int32Array;
}


/** The normalized, distinct axes to reduce; none given (undefined or []) means all. */
function reducedAxes(op: string, shape: Shape, axes: number | readonly number[] | undefined): Set<number> {
  const list = axes === undefined ? [] : typeof axes === 'number' ? [axes] : axes;
  if (list.length === 0) return new Set(shape.map((_, i) => i));
  const out = new Set<number>();
  for (const a of list) {
    const n = normalizeAxis(a, shape.length, op);
    if (out.has(n)) throw new InvalidArgumentError(`${op}: axis ${a} appears more than once in [${list.join(', ')}]`);
    // Axis 0 of a 0-d tensor is accepted (as PyTorch) and reduces nothing.
    if (shape.length > 0) out.add(n);
  }
  return out;
}

function planReduce(shape: Shape, reduced: Set<number>, keepdim: boolean): ReducePlan {
  const strides = stridesOf(shape);
  const keptDims: number[] = [];
  const keptStrides: number[] = [];
  const redDims: number[] = [];
  const redStrides: number[] = [];
  const outShape: number[] = [];
  shape.forEach((d, i) => {
    if (reduced.has(i)) {
      redDims.push(d);
      redStrides.push(strides[i]!);
      if (keepdim) outShape.push(1);
    } else {
      keptDims.push(d);
      keptStrides.push(strides[i]!);
      outShape.push(d);
    }
  });
  return { outShape, bases: boxOffsets(keptDims, keptStrides), offsets: boxOffsets(redDims, redStrides) };
}

/** Runs `reduceOne` on each group of values (each lane separately for complex) and rounds into `dtype`. */
function reduceWith(
  values: NumberView,
  lanes: number,
  plan: ReducePlan,
  dtype: DType,
  reduceOne: (values: NumberView, base: number, offsets: Int32Array, lanes: number, out: Float64Array, at: number) => void,
): Tensor {
  const out = new Float64Array(plan.bases.length * lanes);
  for (let k = 0; k < plan.bases.length; k++) reduceOne(values, plan.bases[k]!, plan.offsets, lanes, out, k * lanes);
  return fromNumbers(dtype, plan.outShape, out);
}

function sumOne(values: NumberView, base: number, offsets: Int32Array, lanes: number, out: Float64Array, at: number): void {
  for (let l = 0; l < lanes; l++) {
    let s = 0;
    for (let j = 0; j < offsets.length; j++) s += values[(base + offsets[j]!) * lanes + l]!;
    out[at + l] = s;
  }
}

function prodOne(values: NumberView, base: number, offsets: Int32Array, lanes: number, out: Float64Array, at: number): void {
  if (lanes === 1) {
    let p = 1;
    for (let j = 0; j < offsets.length; j++) p *= values[base + offsets[j]!]!;
    out[at] = p;
    return;
  }
  let re = 1;
  let im = 0;
  for (let j = 0; j < offsets.length; j++) {
    const i = (base + offsets[j]!) * 2;
    const r = re * values[i]! - im * values[i + 1]!;
    im = re * values[i + 1]! + im * values[i]!;
    re = r;
  }
  out[at] = re;
  out[at + 1] = im;
}

/** The type sum and prod accumulate into: an explicit dtype, else int64 for bool and integers. */
function accumulationType(op: string, t: Tensor, dtype: DType | undefined): DType {
  if (dtype !== undefined) {
    if (!isDType(dtype)) throw new InvalidArgumentError(`${op}: unknown dtype ${JSON.stringify(dtype)}`);
    return dtype;
  }
  return isFloating(t.dtype) || isComplex(t.dtype) ? t.dtype : 'int64';
}

function rejectComplexInto(op: string, t: Tensor, dtype: DType): void {
  if (isComplex(t.dtype) && !isComplex(dtype)) {
    throw new InvalidArgumentError(`${op}: cannot reduce ${fmt(t)} into the real type ${dtype}; take real() or abs() first`);
  }
}

/** The input's values in `dtype` (PyTorch casts the input first when dtype= is given). */
function valuesIn(op: string, t: Tensor, dtype: DType): NumberView {
  rejectComplexInto(op, t, dtype);
  if (isComplex(dtype)) return readNumbers(toComplex(t, dtype as ComplexDType));
  return valuesAs(t, dtype);
}

/**
 * The 64-bit type an integer result of type `out` accumulates in, exactly: uint64 for uint64,
 * int64 for the others (whose low bits, all a narrower type keeps, wrap alike).
 */
const wideOf = (out: DType): BigIntDType => (out === 'uint64' ? 'uint64' : 'int64');

/** The input's values in `wide` (cast first, as PyTorch does), exactly. */
function bigintIn(op: string, t: Tensor, wide: BigIntDType): BigIntArray {
  rejectComplexInto(op, t, wide);
  return bigintValues(t, wide);
}

/** A result computed in `wide`, as `out` (wrapped to its width when narrower). */
function narrowTo(result: Tensor, out: DType): Tensor {
  return result.dtype === out ? result : cast(result, out);
}

/**
 * An int64 or uint64 reduction: `step` folded over each group from `init`, or from the
 * group's first element when `init` is null; each step's result is wrapped to 64 bits, so
 * products never grow past them.
 */
function reduceBigInt(
  dtype: BigIntDType,
  values: BigIntArray,
  plan: ReducePlan,
  init: bigint | null,
  step: (acc: bigint, v: bigint) => bigint,
): Tensor {
  const out = dtype === 'int64' ? new BigInt64Array(plan.bases.length) : new BigUint64Array(plan.bases.length);
  const wrap = dtype === 'int64' ? (v: bigint) => BigInt.asIntN(64, v) : (v: bigint) => BigInt.asUintN(64, v);
  const { offsets } = plan;
  const from = init === null ? 1 : 0;
  for (let k = 0; k < plan.bases.length; k++) {
    const base = plan.bases[k]!;
    let acc = init ?? values[base + offsets[0]!]!;
    for (let j = from; j < offsets.length; j++) acc = wrap(step(acc, values[base + offsets[j]!]!));
    out[k] = acc;
  }
  return new Tensor(dtype, plan.outShape, out);
}

type Axes = number | readonly number[];

/** Sum over `axes` (all when undefined or []); bool and integers give int64 unless `dtype` is given. */
export function sum(t: Tensor, axes?: Axes, keepdim = false, dtype?: DType): Tensor {
  const out = accumulationType('sum', t, dtype);
  const plan = planReduce(t.shape, reducedAxes('sum', t.shape, axes), keepdim);
  if (isInteger(out)) return narrowTo(reduceBigInt(wideOf(out), bigintIn('sum', t, wideOf(out)), plan, 0n, (acc, v) => acc + v), out);
  return reduceWith(valuesIn('sum', t, out), dtypeInfo(out).lanes, plan, out, sumOne);
}

/** Product over `axes` (all when undefined or []); bool and integers give int64 unless `dtype` is given. */
export function prod(t: Tensor, axes?: Axes, keepdim = false, dtype?: DType): Tensor {
  const out = accumulationType('prod', t, dtype);
  const plan = planReduce(t.shape, reducedAxes('prod', t.shape, axes), keepdim);
  if (isInteger(out)) return narrowTo(reduceBigInt(wideOf(out), bigintIn('prod', t, wideOf(out)), plan, 1n, (acc, v) => acc * v), out);
  return reduceWith(valuesIn('prod', t, out), dtypeInfo(out).lanes, plan, out, prodOne);
}

/** Mean over `axes` (all when undefined or []); needs a float or complex input or `dtype`, as PyTorch. */
export function mean(t: Tensor, axes?: Axes, keepdim = false, dtype?: DType): Tensor {
  const out = dtype ?? t.dtype;
  if (!isDType(out)) throw new InvalidArgumentError(`mean: unknown dtype ${JSON.stringify(out)}`);
  if (!isFloating(out) && !isComplex(out)) {
    throw new InvalidArgumentError(`mean: the input must be floating-point or complex (or pass a float dtype), got ${fmt(t)}`);
  }
  const plan = planReduce(t.shape, reducedAxes('mean', t.shape, axes), keepdim);
  const count = plan.offsets.length;
  return reduceWith(valuesIn('mean', t, out), dtypeInfo(out).lanes, plan, out, (values, base, offsets, lanes, acc, at) => {
    sumOne(values, base, offsets, lanes, acc, at);
    for (let l = 0; l < lanes; l++) acc[at + l] = acc[at + l]! / count;
  });
}

/** amax/amin: the extreme of each group in the input type; NaN propagates; empty groups are an error. */
function extreme(op: string, t: Tensor, axes: Axes | undefined, keepdim: boolean, pick: (a: number, b: number) => number): Tensor {
  if (isComplex(t.dtype)) throw new InvalidArgumentError(`${op}: complex input cannot be ordered, got ${fmt(t)}`);
  const plan = planReduce(t.shape, reducedAxes(op, t.shape, axes), keepdim);
  if (plan.offsets.length === 0) {
    throw new InvalidArgumentError(`${op}: cannot reduce over a dimension of size 0 in ${fmt(t)} (axes ${JSON.stringify(axes ?? [])})`);
  }
  if (isBigIntDType(t.dtype)) {
    const greater = pick === Math.max;
    return reduceBigInt(t.dtype, t.data as BigIntArray, plan, null, (m, v) => ((greater ? v > m : v < m) ? v : m));
  }
  return reduceWith(readNumbers(t), 1, plan, t.dtype, (values, base, offsets, _lanes, out, at) => {
    let m = values[base + offsets[0]!]!;
    for (let j = 1; j < offsets.length && !Number.isNaN(m); j++) {
      const v = values[base + offsets[j]!]!;
      m = Number.isNaN(v) ? v : pick(m, v);
    }
    out[at] = m;
  });
}

/** Maximum over `axes` (all when undefined or []); NaN propagates. */
export function amax(t: Tensor, axes?: Axes, keepdim = false): Tensor {
  return extreme('amax', t, axes, keepdim, Math.max);
}

/** Minimum over `axes` (all when undefined or []); NaN propagates. */
export function amin(t: Tensor, axes?: Axes, keepdim = false): Tensor {
  return extreme('amin', t, axes, keepdim, Math.min);
}

/** Whether `v` replaces the current best `best`: NaN wins as in PyTorch; ties go to the first unless `last`. */
function beats(v: number, best: number, greater: boolean, last: boolean): boolean {
  if (Number.isNaN(best)) return last && Number.isNaN(v);
  if (Number.isNaN(v)) return true;
  if (v === best) return last;
  return greater ? v > best : v < best;
}

function argExtreme(op: string, t: Tensor, axis: number | undefined, keepdim: boolean, last: boolean, greater: boolean): Tensor {
  if (isComplex(t.dtype)) throw new InvalidArgumentError(`${op}: complex input cannot be ordered, got ${fmt(t)}`);
  // No axis: the index into the flattened tensor, as torch.argmax(dim=None).
  const reduced = axis === undefined ? reducedAxes(op, t.shape, undefined) : reducedAxes(op, t.shape, [axis]);
  const plan = planReduce(t.shape, reduced, keepdim);
  if (plan.offsets.length === 0) {
    throw new InvalidArgumentError(`${op}: cannot reduce over a dimension of size 0 in ${fmt(t)} (axis ${axis ?? 'all'})`);
  }
  if (isBigIntDType(t.dtype)) return argExtremeBigInt(t.data as BigIntArray, plan, last, greater);
  return reduceWith(readNumbers(t), 1, plan, 'int64', (values, base, offsets, _lanes, out, at) => {
    let best = values[base + offsets[0]!]!;
    let index = 0;
    for (let j = 1; j < offsets.length; j++) {
      const v = values[base + offsets[j]!]!;
      if (beats(v, best, greater, last)) {
        best = v;
        index = j;
      }
    }
    out[at] = index;
  });
}

/** argExtreme of int64 or uint64 values, compared exactly (float64 would tie values past 2^53). */
function argExtremeBigInt(values: BigIntArray, plan: ReducePlan, last: boolean, greater: boolean): Tensor {
  const out = new BigInt64Array(plan.bases.length);
  const { offsets } = plan;
  for (let k = 0; k < plan.bases.length; k++) {
    const base = plan.bases[k]!;
    let best = values[base + offsets[0]!]!;
    let index = 0;
    for (let j = 1; j < offsets.length; j++) {
      const v = values[base + offsets[j]!]!;
      if (v === best ? last : greater ? v > best : v < best) {
        best = v;
        index = j;
      }
    }
    out[k] = BigInt(index);
  }
  return new Tensor('int64', plan.outShape, out);
}

/** Index (int64) of the maximum along `axis` (flattened when undefined); first on ties unless selectLastIndex; NaN counts as the maximum. */
export function argmax(t: Tensor, axis?: number, keepdim = false, selectLastIndex = false): Tensor {
  return argExtreme('argmax', t, axis, keepdim, selectLastIndex, true);
}

/** Index (int64) of the minimum along `axis` (flattened when undefined); first on ties unless selectLastIndex; NaN counts as the minimum. */
export function argmin(t: Tensor, axis?: number, keepdim = false, selectLastIndex = false): Tensor {
  return argExtreme('argmin', t, axis, keepdim, selectLastIndex, false);
}

/** The plan of a per-axis normalization (softmax): groups along one axis, shape kept. */
function planAlong(op: string, t: Tensor, axis: number): ReducePlan {
  if (!isFloating(t.dtype)) throw new InvalidArgumentError(`${op}: expected a floating-point tensor, got ${fmt(t)}`);
  const a = normalizeAxis(axis, t.rank, op);
  return planReduce(t.shape, new Set(t.rank === 0 ? [] : [a]), true);
}

/** For each group along the axis: its maximum and Σ exp(x − max), the stable parts of softmax. */
function softmaxParts(values: NumberView, base: number, offsets: Int32Array): { max: number; total: number } {
  let max = -Infinity;
  for (let j = 0; j < offsets.length; j++) max = Math.max(max, values[base + offsets[j]!]!);
  let total = 0;
  for (let j = 0; j < offsets.length; j++) total += Math.exp(values[base + offsets[j]!]! - max);
  return { max, total };
}

function normalizeAlong(op: string, t: Tensor, axis: number, f: (x: number, max: number, total: number) => number): Tensor {
  const plan = planAlong(op, t, axis);
  const values = readNumbers(t);
  const out = new Float64Array(values.length);
  for (let k = 0; k < plan.bases.length; k++) {
    const base = plan.bases[k]!;
    const { max, total } = softmaxParts(values, base, plan.offsets);
    for (let j = 0; j < plan.offsets.length; j++) {
      const i = base + plan.offsets[j]!;
      out[i] = f(values[i]!, max, total);
    }
  }
  return fromNumbers(t.dtype, t.shape, out);
}

/** exp(x − max) / Σ exp(x − max) along `axis` (floating types only). */
export function softmax(t: Tensor, axis: number): Tensor {
  return normalizeAlong('softmax', t, axis, (x, max, total) => Math.exp(x - max) / total);
}

/** x − max − log Σ exp(x − max) along `axis` (floating types only). */
export function logSoftmax(t: Tensor, axis: number): Tensor {
  return normalizeAlong('logSoftmax', t, axis, (x, max, total) => x - max - Math.log(total));
}

/** The attributes of ONNX CumSum plus PyTorch's dtype. */
export interface CumsumOptions {
  /** Each output excludes its own element (ONNX exclusive=1). */
  exclusive?: boolean;
  /** Accumulate from the end of the axis (ONNX reverse=1). */
  reverse?: boolean;
  /** The output type; PyTorch's default turns bool and integers into int64, ONNX keeps the input type. */
  dtype?: DType;
}

/** Cumulative sum along `axis`; PyTorch's torch.cumsum with no options, ONNX CumSum with them. */
export function cumsum(t: Tensor, axis: number, options: CumsumOptions = {}): Tensor {
  const dtype = accumulationType('cumsum', t, options.dtype);
  const lanes = dtypeInfo(dtype).lanes;
  const a = normalizeAxis(axis, t.rank, 'cumsum');
  const plan = planReduce(t.shape, new Set(t.rank === 0 ? [] : [a]), true);
  if (isInteger(dtype)) return narrowTo(cumsumBigInt(wideOf(dtype), bigintIn('cumsum', t, wideOf(dtype)), t.shape, plan, options), dtype);
  const values = valuesIn('cumsum', t, dtype);
  const out = new Float64Array(values.length);
  const { offsets } = plan;
  const n = offsets.length;
  for (let k = 0; k < plan.bases.length; k++) {
    const base = plan.bases[k]!;
    for (let l = 0; l < lanes; l++) {
      let s = 0;
      for (let step = 0; step < n; step++) {
        const i = (base + offsets[options.reverse ? n - 1 - step : step]!) * lanes + l;
        if (options.exclusive) {
          out[i] = s;
          s += values[i]!;
        } else {
          s += values[i]!;
          out[i] = s;
        }
      }
    }
  }
  return fromNumbers(dtype, t.shape, out);
}

/** cumsum in int64 or uint64, exactly (wrapping modulo 2^64). */
function cumsumBigInt(dtype: BigIntDType, values: BigIntArray, shape: Shape, plan: ReducePlan, options: CumsumOptions): Tensor {
  const out = dtype === 'int64' ? new BigInt64Array(values.length) : new BigUint64Array(values.length);
  const wrap = dtype === 'int64' ? (v: bigint) => BigInt.asIntN(64, v) : (v: bigint) => BigInt.asUintN(64, v);
  const { offsets } = plan;
  const n = offsets.length;
  for (let k = 0; k < plan.bases.length; k++) {
    const base = plan.bases[k]!;
    let s = 0n;
    for (let step = 0; step < n; step++) {
      const i = base + offsets[options.reverse ? n - 1 - step : step]!;
      if (options.exclusive) {
        out[i] = s;
        s = wrap(s + values[i]!);
      } else {
        s = wrap(s + values[i]!);
        out[i] = s;
      }
    }
  }
  return new Tensor(dtype, shape, out);
}
