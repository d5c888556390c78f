/**
 * Data-movement helpers (static shapes): slices with sizes computed from PyTorch's bounds,
 * broadcasts by stride-0 slices, filled tensors from one scalar, joins and axis inserts.
 * TensorRT's slice takes a size (not an end), never clamps, and broadcasts on stride 0;
 * these helpers are where PyTorch's clamping turns into that form once.
 */
import { InternalError } from '../../errors';
import type { DType } from '../../ir/dtype';
import type { Value } from '../../ir/graph';
import { full } from '../../kernels/shape';
import type { NetTensor, SampleMode } from '../../network';
import type { ConversionContext } from '../context';
import { reshape, toRank } from './basic';

/** The view ops (a reshape to the IR output shape), converted alike for static and run-time shapes. */
export const VIEW_TARGETS: readonly string[] = [
  'aten.view.default',
  'aten.reshape.default',
  'aten._unsafe_view.default',
  'aten.flatten.using_ints',
  'aten.unflatten.int',
  'aten.squeeze.default',
  'aten.squeeze.dim',
  'aten.squeeze.dims',
  'aten.unsqueeze.default',
];

/** The static shape of an IR tensor value (throws on a symbolic dim: converters here are static-only). */
/**
 * The inputs aten.cat joins: as in PyTorch, 1-D tensors of size 0 (legacy empty tensors) are
 * skipped when the others have another rank. `ref` is the first input that is not one.
 */
export function catParts(all: readonly Value[]): { ref: Value; parts: Value[] } {
  const isLegacyEmpty = (v: Value): boolean => v.tensorType.shape.length === 1 && v.tensorType.shape[0] === 0;
  const ref = all.find((v) => !isLegacyEmpty(v)) ?? all[0]!;
  return { ref, parts: all.filter((v) => v === ref || !isLegacyEmpty(v) || ref.tensorType.shape.length === 1) };
}

export function staticShape(v: Value): number[] {
  return v.tensorType.shape.map((d) => {
    if (typeof d !== 'number') throw new InternalError(`%${v.name} has a symbolic dim; this converter handles static shapes only`);
    return d;
  });
}

/** The static shape of output `i` of the node being converted. */
export function outShape(ctx: ConversionContext, i = 0): number[] {
  const node = ctx.node;
  if (node === null) throw new InternalError('outShape: no node is being converted');
  return staticShape(node.outputs[i]!);
}

/** The IR dtype of output `i` of the node being converted. */
export function outDType(ctx: ConversionContext, i = 0): DType {
  const node = ctx.node;
  if (node === null) throw new InternalError('outDType: no node is being converted');
  return node.outputs[i]!.tensorType.dtype;
}

/**
 * A slice layer with static start/size/stride, or `t` itself when the slice reads it whole
 * (nn-util.ts's `slice` always adds a layer and takes run-time sizes through `sliceSized`).
 * Mode `fill` takes the fill value as a 0-D tensor of `t`'s dtype.
 */
export function sliceOrSelf(
  ctx: ConversionContext,
  t: NetTensor,
  start: readonly number[],
  size: readonly number[],
  stride: readonly number[],
  role = 'slice',
  mode: SampleMode = 'strict_bounds',
  fill: NetTensor | null = null,
): NetTensor {
  const whole = t.shape.every((d, i) => start[i] === 0 && stride[i] === 1 && size[i] === d);
  if (whole && t.shape.length === size.length) return t;
  const params = { kind: 'slice' as const, start: [...start], size: [...size], stride: [...stride], mode };
  return ctx.add(params, mode === 'fill' && fill !== null ? [t, null, null, null, fill] : [t], role);
}

/** Elements start, start+step, ... (`size` of them) along one axis; other axes whole. */
export function sliceAxisOrSelf(ctx: ConversionContext, t: NetTensor, axis: number, start: number, size: number, step = 1, role = 'slice'): NetTensor {
  const starts = t.shape.map((_, i) => (i === axis ? (size === 0 ? 0 : start) : 0));
  const sizes = t.shape.map((d, i) => (i === axis ? size : d));
  const strides = t.shape.map((_, i) => (i === axis ? step : 1));
  return sliceOrSelf(ctx, t, starts, sizes, strides, role);
}

/**
 * PyTorch's slice(start, end, step) of a dim of size n (step > 0): negative bounds count
 * from the end, then both clamp to [0, n] (INT64_MAX and such become n); the count is
 * ceil((end - start) / step), never negative.
 */
export function sliceBounds(n: number, start: number | null, end: number | null, step: number): { start: number; count: number } {
  const clamp = (x: number): number => Math.min(Math.max(x < 0 ? x + n : x, 0), n);
  const s = start === null ? 0 : clamp(start);
  const e = end === null ? n : clamp(end);
  return { start: s, count: Math.max(0, Math.ceil((e - s) / step)) };
}

/**
 * ONNX Slice bounds for a negative step: after wrapping negatives, start clamps to
 * [0, n-1] and end to [-1, n-1]; the count is ceil((start - end) / |step|), never negative.
 */
export function negativeSliceBounds(n: number, start: number, end: number, step: number): { start: number; count: number } {
  const wrap = (x: number): number => (x < 0 ? x + n : x);
  const s = Math.min(Math.max(wrap(start), 0), n - 1);
  const e = Math.min(Math.max(wrap(end), -1), n - 1);
  return { start: Math.max(s, 0), count: Math.max(0, Math.ceil((s - e) / -step)) };
}

/**
 * Broadcasts `t` to `shape` (PyTorch's expand: leading dims are added, size-1 dims stretch)
 * by a slice with stride 0 on the stretched axes.
 */
export function expandTo(ctx: ConversionContext, t: NetTensor, shape: readonly number[], role = 'expand'): NetTensor {
  const x = toRank(ctx, t, shape.length, `${role}_rank`);
  x.shape.forEach((d, i) => {
    if (d !== shape[i] && d !== 1) throw new InternalError(`${ctx.name()}: cannot expand [${x.shape}] to [${shape}]`);
  });
  const stride = x.shape.map((d, i) => (d === 1 && shape[i] !== 1 ? 0 : 1));
  return sliceOrSelf(
    ctx,
    x,
    shape.map(() => 0),
    shape,
    stride,
    role,
  );
}

/** A 0-D or rank-`rank` all-ones constant holding `value` as `dtype` (PyTorch's conversion of the scalar). */
export function scalarConstant(ctx: ConversionContext, value: number | boolean, dtype: DType, rank: number, role = 'scalar'): NetTensor {
  return ctx.constant(full(new Array<number>(rank).fill(1), value, dtype), ctx.name(role));
}

/** A tensor of `shape` filled with `value` as `dtype`: one scalar constant broadcast by a stride-0 slice. */
export function filled(ctx: ConversionContext, value: number | boolean, dtype: DType, shape: readonly number[], role = 'fill'): NetTensor {
  return expandTo(ctx, scalarConstant(ctx, value, dtype, shape.length, `${role}_value`), shape, role);
}

/** Concatenation along `axis` (no layer for a single input). */
export function concat(ctx: ConversionContext, ts: readonly NetTensor[], axis: number, role = 'concat'): NetTensor {
  if (ts.length === 0) throw new InternalError(`${ctx.name()}: concat of nothing`);
  if (ts.length === 1) return ts[0]!;
  return ctx.add({ kind: 'concat', axis }, ts, role);
}

/** Inserts a size-1 dim at `axis` (in [0, rank]). */
export function unsqueeze(ctx: ConversionContext, t: NetTensor, axis: number, role = 'unsqueeze'): NetTensor {
  const shape = [...t.shape];
  shape.splice(axis, 0, 1);
  return reshape(ctx, t, shape, role);
}

/** Removes the size-1 dim at `axis`. */
export function squeezeAxis(ctx: ConversionContext, t: NetTensor, axis: number, role = 'squeeze'): NetTensor {
  return reshape(
    ctx,
    t,
    t.shape.filter((_, i) => i !== axis),
    role,
  );
}

/** The inverse of a permutation. */
export function inversePermutation(perm: readonly number[]): number[] {
  const inv = new Array<number>(perm.length);
  perm.forEach((p, i) => (inv[p] = i));
  return inv;
}
