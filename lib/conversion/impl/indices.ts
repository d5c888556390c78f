/**
 * Index tensors for gathers and scatters. PyTorch (and the interpreter) count negative
 * indices from the end; TensorRT does not wrap them (an out-of-range gather reads 0). Constant
 * indices are wrapped here at conversion time; run-time indices get
 * `idx < 0 ? idx + dim : idx` as elementwise + select layers.
 */
import type { Value } from '../../ir/graph';
import { fromNumbers, readNumbers } from '../../kernels/access';
import type { NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { cast, reshape } from './basic';
import { dimsOf } from './dynamic';

/** The tensor of a constant IR value, or null when the value is computed. */
export function constantOf(v: Value): Tensor | null {
  return v.producer.kind === 'constant' ? (v.producer.tensor ?? null) : null;
}

/** The TensorRT index type that carries an IR integer dtype exactly. */
export function indexType(dtype: string): 'int32' | 'int64' {
  return dtype === 'int32' ? 'int32' : 'int64';
}

const ones = (n: number): number[] => new Array<number>(Math.max(n, 0)).fill(1);

/**
 * `t` (int32/int64) with negative entries wrapped: `dims` is one size for every entry, or
 * one size per position of the last axis (index tuples of the nd modes).
 */
export function wrapNegative(ctx: ConversionContext, t: NetTensor, dims: number | readonly number[], role = 'indices'): NetTensor {
  const rank = t.shape.length;
  const sizes = typeof dims === 'number' ? Tensor.from(t.dtype, ones(rank), [dims]) : Tensor.from(t.dtype, [...ones(rank - 1), dims.length], [...dims]);
  return wrapBy(ctx, t, ctx.constant(sizes, ctx.name(`${role}_dims`)), role);
}

/** `t < 0 ? t + sizes : t` (`sizes` broadcast to t, of its type). */
function wrapBy(ctx: ConversionContext, t: NetTensor, sizes: NetTensor, role: string): NetTensor {
  const zero = ctx.constant(Tensor.from(t.dtype, ones(t.shape.length), [0]), ctx.name(`${role}_zero`));
  const negative = ctx.add({ kind: 'elementwise', op: 'less' }, [t, zero], `${role}_negative`);
  const wrapped = ctx.add({ kind: 'elementwise', op: 'sum' }, [t, sizes], `${role}_wrapped`);
  return ctx.add({ kind: 'select' }, [negative, wrapped, t], role);
}

/**
 * The network tensor of index value `v` as int32/int64 with negative indices wrapped by
 * `dims` (see {@link wrapNegative}); constants are wrapped at conversion time.
 */
export function indexTensor(ctx: ConversionContext, v: Value, dims: number | readonly number[], role = 'indices'): NetTensor {
  const dtype = v.tensorType.dtype;
  const type = indexType(dtype);
  const data = constantOf(v);
  if (data !== null) {
    const values = readNumbers(data);
    const k = typeof dims === 'number' ? 1 : Math.max(dims.length, 1);
    const wrapped = Array.from(values, (x, i) => (x < 0 ? x + (typeof dims === 'number' ? dims : dims[i % k]!) : x));
    if (data.dtype === type && wrapped.every((x, i) => x === values[i])) return ctx.tensor(v);
    return ctx.constant(fromNumbers(type, data.shape, wrapped), ctx.name(role));
  }
  const t = cast(ctx, ctx.tensor(v), type, `${role}_cast`);
  if (dtype === 'uint8' || dtype === 'bool') return t;
  return wrapNegative(ctx, t, dims, role);
}

/**
 * `v` as an int32/int64 index tensor with its negative entries wrapped by dims `axes` of
 * `data`, read at run time: every entry indexes `axes[0]` (`tuples` false), or the last axis of
 * `v` runs over `axes` (index tuples). Constant non-negative indices, and masks, need nothing.
 */
function wrapByRunTimeDims(ctx: ConversionContext, v: Value, data: NetTensor, axes: readonly number[], tuples: boolean, role: string): NetTensor {
  const dtype = v.tensorType.dtype;
  const type = indexType(dtype);
  const t = cast(ctx, ctx.tensor(v), type, `${role}_cast`);
  const constant = constantOf(v);
  if (dtype === 'uint8' || dtype === 'bool' || (constant !== null && readNumbers(constant).every((x) => x >= 0))) return t;
  const rank = t.shape.length;
  const sizes = cast(ctx, dimsOf(ctx, data, axes, `${role}_sizes`), type, `${role}_sizes_cast`);
  return wrapBy(ctx, t, reshape(ctx, sizes, tuples ? [...ones(rank - 1), axes.length] : ones(rank), `${role}_sizes_rank`), role);
}

/**
 * The index tensor of value `v` into axis `axis` of `data`, which may have run-time dims:
 * as {@link indexTensor} when that axis has a static size; otherwise negative indices are
 * wrapped by the axis's size read at run time.
 */
export function indexTensorAlong(ctx: ConversionContext, v: Value, data: NetTensor, axis: number, role = 'indices'): NetTensor {
  const n = data.shape[axis]!;
  return n >= 0 ? indexTensor(ctx, v, n, role) : wrapByRunTimeDims(ctx, v, data, [axis], false, role);
}

/**
 * Index tuples `v` ([..., k]) into dims `first`..`first + k - 1` of `data`, which may be run-time
 * sizes: as {@link indexTensor} when all k are static; otherwise negative components are
 * wrapped by those sizes read at run time.
 */
export function indexTuplesAlong(ctx: ConversionContext, v: Value, data: NetTensor, first: number, k: number, role = 'indices'): NetTensor {
  const dims = data.shape.slice(first, first + k);
  if (dims.every((d) => d >= 0)) return indexTensor(ctx, v, dims, role);
  return wrapByRunTimeDims(ctx, v, data, Array.from({ length: k }, (_, i) => first + i), true, role);
}

