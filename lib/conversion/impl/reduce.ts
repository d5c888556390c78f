/**
 * Reductions in TensorRT terms: reduce layers for sum/mean/prod/max/min (bool and narrow
 * ints computed in int32), top-k for arg-extrema and values-with-indices (an axis outside
 * TensorRT's last four is moved there first), softmax/log-softmax, logsumexp and cumulative
 * sums.
 */
import type { DType } from '../../ir/dtype';
import type { NetTensor, ReduceOp, TrtDType } from '../../network';
import type { ConversionContext } from '../context';
import { axisOf, cast, elementwise, permute, reshape, trt } from './basic';
import { constantOf, reduce, scalarOf, slice, squeeze, unary } from './nn-util';

/** Axes of an ATen reduction: null or [] is every axis; negatives count from the end. */
export function reductionAxes(ctx: ConversionContext, rank: number, dims: readonly number[] | null): number[] {
  if (rank === 0) return [];
  if (dims === null || dims.length === 0) return Array.from({ length: rank }, (_, i) => i);
  return [...new Set(dims.map((d) => axisOf(ctx, d, rank)))].sort((a, b) => a - b);
}

/** Types the reduce layer cannot take directly and the type to compute them in. */
function computeType(t: TrtDType): TrtDType {
  return t === 'bool' || t === 'uint8' || t === 'int8' ? 'int32' : t;
}

/**
 * A reduction of `x` (already in the result dtype, or cast here to `dtype`) over `axes`,
 * in the reduce layer's terms: bool/int8/uint8 computed in int32 and cast back.
 */
export function reduceTo(ctx: ConversionContext, x: NetTensor, op: ReduceOp, axes: readonly number[], keepDims: boolean, dtype: DType): NetTensor {
  const out = trt(ctx, dtype);
  let t = cast(ctx, x, dtype, 'cast_in');
  const via = computeType(out);
  t = cast(ctx, t, via, 'cast_compute');
  const r = reduce(ctx, t, op, axes, keepDims);
  return cast(ctx, r, dtype, 'cast_out');
}

/** Moves `axis` to the last position when TensorRT's top-k (last four dims only) cannot reach it. */
function topkAxisLayout(rank: number, axis: number): number[] | null {
  if (axis >= rank - 4) return null;
  const perm = Array.from({ length: rank }, (_, i) => i).filter((i) => i !== axis);
  perm.push(axis);
  return perm;
}

/**
 * Top-k along `axis` with int64 indices. Input types top-k lacks (bool, int8, uint8) go
 * through int32 (values cast back); a rank-0 input is treated as [1].
 */
export function topk(ctx: ConversionContext, x: NetTensor, op: 'max' | 'min', k: number, axis: number, role = 'topk'): [NetTensor, NetTensor] {
  const dtype = x.dtype;
  const rank = x.shape.length;
  let t = cast(ctx, x, computeType(dtype), 'cast_in');
  if (rank === 0) t = reshape(ctx, t, [1], 'as_vector');
  const r = t.shape.length;
  const a = rank === 0 ? 0 : axis;
  const perm = topkAxisLayout(r, a);
  if (perm) t = permute(ctx, t, perm, 'axis_last');
  const [values, indices] = ctx.network.add({ kind: 'topk', op, k, axis: perm ? r - 1 : a, indicesType: 'int64' }, [t], ctx.name(role)) as [NetTensor, NetTensor];
  let v = values;
  let i = indices;
  if (perm) {
    const inverse = perm.map((_, j) => perm.indexOf(j));
    v = permute(ctx, v, inverse, 'values_back');
    i = permute(ctx, i, inverse, 'indices_back');
  }
  if (rank === 0) {
    v = reshape(ctx, v, [], 'values_scalar');
    i = reshape(ctx, i, [], 'indices_scalar');
  }
  return [cast(ctx, v, dtype, 'cast_values'), i];
}

/**
 * Index of the first (or with `last`, the last) maximum/minimum along `dim` (null: over the
 * flattened input), as int64, squeezed unless `keepdim`. Ties: top-k's order decides; ONNX's
 * select_last_index flips the axis first and maps the index back.
 */
export function argExtremum(ctx: ConversionContext, x: NetTensor, op: 'max' | 'min', dim: number | null, keepdim: boolean, last = false): NetTensor {
  const rank = x.shape.length;
  if (dim === null) {
    const flat = reshape(ctx, x, [x.shape.reduce((a, d) => a * d, 1)], 'flatten');
    const idx = argExtremum(ctx, flat, op, 0, true, last);
    return reshape(ctx, idx, keepdim ? new Array<number>(rank).fill(1) : [], 'index_shape');
  }
  if (rank === 0) return constantOf(ctx, 'int64', [], [0], 'index');
  const axis = axisOf(ctx, dim, rank);
  const d = x.shape[axis]!;
  let t = x;
  if (last) {
    t = slice(ctx, t, x.shape.map((_, i) => (i === axis ? d - 1 : 0)), x.shape, x.shape.map((_, i) => (i === axis ? -1 : 1)), 'flip');
  }
  let [, idx] = topk(ctx, t, op, 1, axis);
  if (last) idx = elementwise(ctx, scalarOf(ctx, d - 1, 'int64', rank, 'last_index'), idx, 'sub', 'int64', 'unflip');
  return keepdim ? idx : squeeze(ctx, idx, [axis]);
}

/** The softmax ops and whether each is the log-softmax: converted alike for static and run-time shapes. */
export const SOFTMAX_TARGETS: ReadonlyArray<readonly [target: string, log: boolean]> = [
  ['aten._softmax.default', false],
  ['aten.softmax.int', false],
  ['aten._log_softmax.default', true],
  ['aten.log_softmax.int', true],
];

/** Softmax (or log-softmax, as x - max - log(sum(exp(x - max)))) along `dim`, in `dtype`. */
export function softmax(ctx: ConversionContext, x: NetTensor, dim: number, dtype: DType, log: boolean): NetTensor {
  let t = cast(ctx, x, dtype, 'cast_in');
  const rank = t.shape.length;
  if (rank === 0) t = reshape(ctx, t, [1], 'as_vector');
  const axis = rank === 0 ? 0 : axisOf(ctx, dim, rank);
  let out: NetTensor;
  if (!log) {
    out = ctx.add({ kind: 'softmax', axis }, [t]);
  } else {
    const m = reduce(ctx, t, 'max', [axis], true, 'max');
    const shifted = ctx.add({ kind: 'elementwise', op: 'sub' }, [t, m], 'shift');
    const total = reduce(ctx, unary(ctx, shifted, 'exp'), 'sum', [axis], true, 'sum');
    out = ctx.add({ kind: 'elementwise', op: 'sub' }, [shifted, unary(ctx, total, 'log')], 'log_softmax');
  }
  return rank === 0 ? reshape(ctx, out, [], 'as_scalar') : out;
}

/** log(sum(exp(x))) over `axes`, shifted by the (finite) maximum as PyTorch does. */
export function logsumexp(ctx: ConversionContext, x: NetTensor, axes: readonly number[], keepdim: boolean, dtype: DType): NetTensor {
  const t = cast(ctx, x, dtype, 'cast_in');
  if (axes.length === 0) return ctx.add({ kind: 'identity' }, [t], 'logsumexp');
  const rank = t.shape.length;
  const m = reduce(ctx, t, 'max', axes, true, 'max');
  const zero = scalarOf(ctx, 0, t.dtype, rank, 'zero');
  const shift = ctx.add({ kind: 'select' }, [unary(ctx, m, 'isinf'), zero, m], 'finite_max');
  const shifted = ctx.add({ kind: 'elementwise', op: 'sub' }, [t, shift], 'shift');
  const total = unary(ctx, reduce(ctx, unary(ctx, shifted, 'exp'), 'sum', axes, keepdim, 'sum'), 'log');
  const back = keepdim ? shift : squeeze(ctx, shift, axes, 'shift_squeeze');
  return ctx.add({ kind: 'elementwise', op: 'sum' }, [total, back], 'logsumexp');
}

/** Cumulative sum along `dim` in `dtype` (a rank-0 input is its own sum). */
export function cumsum(ctx: ConversionContext, x: NetTensor, dim: number, dtype: DType, exclusive = false, reverse = false): NetTensor {
  const t = cast(ctx, x, dtype, 'cast_in');
  if (t.shape.length === 0) {
    const out = ctx.add({ kind: 'cumulative', op: 'sum', axis: 0, exclusive, reverse }, [reshape(ctx, t, [1], 'as_vector')]);
    return reshape(ctx, out, [], 'as_scalar');
  }
  return ctx.add({ kind: 'cumulative', op: 'sum', axis: axisOf(ctx, dim, t.shape.length), exclusive, reverse }, [t]);
}
