/**
 * Layer-building helpers for dynamic shapes (-1 dims): shape tensors read from tensors
 * (shape + gather layers), assembled from constants and run-time dims (concat), used as
 * reshape, slice and fill inputs. TensorRT computes what it can of a shape tensor at build
 * time (lib/network/shape-inference.ts tracks it as `known`), so a reshape to
 * `[dim0 of x, 4, 16]` still has static 4 and 16 downstream.
 *
 * Shape tensors here are int64: 1-D for shapes, 0-D for single sizes.
 */
import { InternalError } from '../../errors';
import type { NetTensor, SampleMode } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';

/** True when `t` has a dim only known at run time. */
export const isDynamic = (t: NetTensor): boolean => t.shape.some((d) => d < 0);

/** A 1-D int64 constant (a shape, or start/stride vector). */
export function shapeConstant(ctx: ConversionContext, values: readonly number[], role = 'dims'): NetTensor {
  return ctx.constant(Tensor.from('int64', [values.length], values), ctx.name(role));
}

/** A 0-D int64 constant. */
export function sizeConstant(ctx: ConversionContext, value: number, role = 'size'): NetTensor {
  return ctx.constant(Tensor.from('int64', [], [value]), ctx.name(role));
}

/** The shape of `t` as a 1-D int64 tensor (a shape layer). */
export function shapeOf(ctx: ConversionContext, t: NetTensor, role = 'shape'): NetTensor {
  return ctx.add({ kind: 'shape' }, [t], role);
}

/** Dims `axes` of `t` as a 1-D int64 tensor (static ones as constants). */
export function dimsOf(ctx: ConversionContext, t: NetTensor, axes: readonly number[], role = 'dims'): NetTensor {
  if (axes.every((a) => t.shape[a]! >= 0)) return shapeConstant(ctx, axes.map((a) => t.shape[a]!), role);
  const idx = ctx.constant(Tensor.from('int64', [axes.length], axes), ctx.name(`${role}_index`));
  return ctx.add({ kind: 'gather', mode: 'default', axis: 0 }, [shapeOf(ctx, t, `${role}_shape`), idx], role);
}

/** Dim `axis` of `t` as a 0-D int64 tensor. */
export function dimOf(ctx: ConversionContext, t: NetTensor, axis: number, role = 'dim'): NetTensor {
  if (t.shape[axis]! >= 0) return sizeConstant(ctx, t.shape[axis]!, role);
  const idx = ctx.constant(Tensor.from('int64', [], [axis]), ctx.name(`${role}_index`));
  return ctx.add({ kind: 'gather', mode: 'default', axis: 0 }, [shapeOf(ctx, t, `${role}_shape`), idx], role);
}

/** A 0-D or 1-D int64 tensor as 1-D. */
export function asVector(ctx: ConversionContext, t: NetTensor, role = 'vector'): NetTensor {
  if (t.shape.length === 1) return t;
  if (t.shape.length !== 0) throw new InternalError(`${ctx.name()}: a shape part must be 0-D or 1-D, got rank ${t.shape.length}`);
  return ctx.add({ kind: 'shuffle', reshape: [1], zeroIsPlaceholder: false }, [t], role);
}

/**
 * A 1-D int64 shape tensor from parts: numbers (runs of them become one constant) and 0-D or
 * 1-D int64 tensors, concatenated in order.
 */
export function shapeVector(ctx: ConversionContext, parts: ReadonlyArray<number | NetTensor>, role = 'shape_vector'): NetTensor {
  const pieces: NetTensor[] = [];
  let run: number[] = [];
  const flush = (): void => {
    if (run.length > 0) pieces.push(shapeConstant(ctx, run, `${role}_const${pieces.length}`));
    run = [];
  };
  for (const p of parts) {
    if (typeof p === 'number') run.push(p);
    else {
      flush();
      if (p.dtype !== 'int64') throw new InternalError(`${ctx.name()}: shape parts must be int64, got ${p.dtype}`);
      pieces.push(asVector(ctx, p, `${role}_part${pieces.length}`));
    }
  }
  flush();
  if (pieces.length === 0) return shapeConstant(ctx, [], role);
  if (pieces.length === 1) return pieces[0]!;
  return ctx.add({ kind: 'concat', axis: 0 }, pieces, role);
}

/** Reshape by a 1-D int64 shape tensor (0 is literal; -1 infers one dim). */
export function reshapeTo(ctx: ConversionContext, t: NetTensor, shape: NetTensor, role = 'reshape'): NetTensor {
  return ctx.add({ kind: 'shuffle', zeroIsPlaceholder: false }, [t, shape], role);
}

/** A dim of a shape built from a tensor: a static size, or input axis `axis` of that tensor (copied at run time). */
export type DimRef = number | { axis: number };

/**
 * `dims` as a 1-D int64 shape tensor: static numbers (and -1) as constants, axes of `t`
 * read at run time (consecutive axes from one gather).
 */
export function dimsVector(ctx: ConversionContext, t: NetTensor, dims: readonly DimRef[], role = 'dims'): NetTensor {
  const vector: Array<number | NetTensor> = [];
  let axes: number[] = [];
  const flush = (): void => {
    if (axes.length > 0) vector.push(dimsOf(ctx, t, axes, `${role}_dims${vector.length}`));
    axes = [];
  };
  for (const d of dims) {
    const p = typeof d === 'number' ? d : t.shape[d.axis]! >= 0 ? t.shape[d.axis]! : d;
    if (typeof p === 'number') {
      flush();
      vector.push(p);
    } else axes.push(p.axis);
  }
  flush();
  return shapeVector(ctx, vector, `${role}_shape`);
}

/** `dims` as static sizes when every one is known at build time, else null. */
export function staticDims(t: NetTensor, dims: readonly DimRef[]): number[] | null {
  const out = dims.map((d) => (typeof d === 'number' ? d : t.shape[d.axis]!));
  return out.every((d) => d >= 0) ? out : null;
}

/** The dims of `t` as references to its own axes (to keep them through a reshape). */
export const axesOf = (t: NetTensor, from = 0, to = t.shape.length): DimRef[] => Array.from({ length: to - from }, (_, i) => ({ axis: from + i }));

/**
 * Reshape to dims that are static numbers, or input axes of `t` (copied at run time), or
 * -1 (inferred; at most one). Static all the way: a plain static reshape.
 */
export function reshapeFromDims(ctx: ConversionContext, t: NetTensor, dims: readonly DimRef[], role = 'reshape'): NetTensor {
  const parts = dims.map((d) => (typeof d === 'number' ? d : t.shape[d.axis]! >= 0 ? t.shape[d.axis]! : d));
  if (parts.every((p): p is number => typeof p === 'number')) {
    if (parts.length === t.shape.length && parts.every((d, i) => d === t.shape[i])) return t;
    return ctx.add({ kind: 'shuffle', reshape: parts, zeroIsPlaceholder: false }, [t], role);
  }
  return reshapeTo(ctx, t, dimsVector(ctx, t, dims, role), role);
}

/** Prepends `count` size-1 dims (rank alignment of a tensor with run-time dims). */
export function prependOnes(ctx: ConversionContext, t: NetTensor, count: number, role = 'broadcast'): NetTensor {
  if (count === 0) return t;
  return reshapeFromDims(
    ctx,
    t,
    [...new Array<number>(count).fill(1), ...t.shape.map((_, axis) => ({ axis }))],
    role,
  );
}

/** An elementwise op on 0-D/1-D int64 shape tensors. */
export function shapeArith(ctx: ConversionContext, a: NetTensor, b: NetTensor, op: 'sum' | 'sub' | 'prod' | 'floor_div' | 'max' | 'min', role?: string): NetTensor {
  return ctx.add({ kind: 'elementwise', op }, [a, b], role ?? op);
}

/**
 * A slice whose start and size are 1-D int64 tensors or static vectors, with a static
 * stride. Static everything: a static slice.
 */
export function sliceDynamic(
  ctx: ConversionContext,
  t: NetTensor,
  start: NetTensor | readonly number[],
  size: NetTensor | readonly number[],
  stride: readonly number[],
  role = 'slice',
  mode: SampleMode = 'strict_bounds',
): NetTensor {
  const params = {
    kind: 'slice' as const,
    start: Array.isArray(start) ? [...start] : new Array<number>(t.shape.length).fill(0),
    size: Array.isArray(size) ? [...size] : new Array<number>(t.shape.length).fill(0),
    stride: [...stride],
    mode,
  };
  const startT = Array.isArray(start) ? null : (start as NetTensor);
  const sizeT = Array.isArray(size) ? null : (size as NetTensor);
  return ctx.add(params, [t, startT, sizeT], role);
}

/**
 * The size vector of `t` with axis `axis` replaced by `size` (a number or a 0-D int64
 * tensor): the size input of a slice along one axis.
 */
export function sizeWithAxis(ctx: ConversionContext, t: NetTensor, axis: number, size: number | NetTensor, role = 'size'): NetTensor | number[] {
  const rank = t.shape.length;
  if (typeof size === 'number' && t.shape.every((d, i) => i === axis || d >= 0)) return t.shape.map((d, i) => (i === axis ? size : d));
  const parts: Array<number | NetTensor> = [];
  if (axis > 0) parts.push(dimsOf(ctx, t, Array.from({ length: axis }, (_, i) => i), `${role}_before`));
  parts.push(size);
  if (axis < rank - 1) parts.push(dimsOf(ctx, t, Array.from({ length: rank - axis - 1 }, (_, i) => axis + 1 + i), `${role}_after`));
  return shapeVector(ctx, parts, role);
}

/**
 * Broadcasts `t` to the 1-D int64 shape `target` (rank ≥ t's rank; -1 entries keep t's dim)
 * with a slice of stride 0 on dims of size 1, as torch.expand: stride is
 * max(min(d - 1, 1), 0) per (rank-aligned) input dim d.
 */
export function expandToShape(ctx: ConversionContext, t: NetTensor, target: NetTensor, role = 'expand'): NetTensor {
  const rank = target.shape[0]!;
  if (!(rank >= t.shape.length)) throw new InternalError(`${ctx.name()}: cannot expand rank ${t.shape.length} to ${rank}`);
  const x = prependOnes(ctx, t, rank - t.shape.length, `${role}_rank`);
  const inShape = shapeOf(ctx, x, `${role}_in_shape`);
  const minusOne = shapeConstant(ctx, new Array<number>(rank).fill(-1), `${role}_minus_one`);
  const keep = ctx.add({ kind: 'elementwise', op: 'equal' }, [target, minusOne], `${role}_keep`);
  const size = ctx.add({ kind: 'select' }, [keep, inShape, target], `${role}_size`);
  const zeros = shapeConstant(ctx, new Array<number>(rank).fill(0), `${role}_zeros`);
  const ones = shapeConstant(ctx, new Array<number>(rank).fill(1), `${role}_ones`);
  const stride = shapeArith(ctx, shapeArith(ctx, shapeArith(ctx, inShape, ones, 'sub', `${role}_dm1`), ones, 'min', `${role}_cap`), zeros, 'max', `${role}_stride`);
  return ctx.add({ kind: 'slice', start: new Array<number>(rank).fill(0), size: new Array<number>(rank).fill(0), stride: new Array<number>(rank).fill(1), mode: 'strict_bounds' }, [x, zeros, size, stride], role);
}

/** `count` elements from `start` by `step` along a static-size axis; other dims whole. */
export function sliceAlong(ctx: ConversionContext, x: NetTensor, axis: number, start: number, count: number, step: number, role = 'slice'): NetTensor {
  const rank = x.shape.length;
  const starts = Array.from({ length: rank }, (_, i) => (i === axis ? (count === 0 ? 0 : start) : 0));
  const strides = Array.from({ length: rank }, (_, i) => (i === axis ? step : 1));
  return sliceDynamic(ctx, x, starts, sizeWithAxis(ctx, x, axis, count, `${role}_size`), strides, role);
}
