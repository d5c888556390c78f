/**
 * Quantize and dequantize layers: what the converters emit (whole layers, which a GPU backend
 * computes in INT8/FP8/INT4), and their spelled-out forms for backends without such kernels
 * (lib/conversion/expand-layers.ts): float arithmetic and casts that give the layers' exact
 * results for int8 and uint8 (lib/network/layers.ts states the arithmetic).
 */
import { UnsupportedOpError } from '../../errors';
import type { DType } from '../../ir/dtype';
import type { NetTensor, QuantizedDType } from '../../network';
import type { ConversionContext } from '../context';
import { cast, reshape } from './basic';

/** How a quantize/dequantize layer reads its scale: the axis (unused per tensor) and the block size (0: none). */
export interface QuantLayout {
  axis: number;
  blockSize: number;
}

const layoutParams = (layout: QuantLayout): { axis: number; blockSize?: number } =>
  layout.blockSize > 0 ? { axis: layout.axis, blockSize: layout.blockSize } : { axis: layout.axis };

/** A quantize layer: x and scale of one float type, zero point (if any) of type `to` and the scale's shape. */
export function quantize(ctx: ConversionContext, x: NetTensor, scale: NetTensor, zeroPoint: NetTensor | null, to: QuantizedDType, layout: QuantLayout): NetTensor {
  return ctx.network.add1({ kind: 'quantize', to, ...layoutParams(layout) }, zeroPoint === null ? [x, scale] : [x, scale, zeroPoint], ctx.name());
}

/** A dequantize layer: (q − zero point) · scale in float32, rounded to `to`. */
export function dequantize(ctx: ConversionContext, q: NetTensor, scale: NetTensor, zeroPoint: NetTensor | null, to: 'float32' | 'float16' | 'bfloat16', layout: QuantLayout): NetTensor {
  return ctx.network.add1({ kind: 'dequantize', to, ...layoutParams(layout) }, zeroPoint === null ? [q, scale] : [q, scale, zeroPoint], ctx.name());
}

/**
 * A scale or zero point shaped to broadcast against x of `rank` (equal ranks, as TensorRT's
 * elementwise layers need): a 0-d one as ones, a per-axis one along `axis`, a blocked one
 * with each element repeated blockSize times along `axis` (a stride-0 slice over an inserted
 * dim, then a reshape), which needs its dims known at build.
 */
function broadcastParam(ctx: ConversionContext, t: NetTensor, rank: number, layout: QuantLayout, role: string): NetTensor {
  const ones = new Array<number>(rank).fill(1);
  if (t.shape.length === 0) return rank === 0 ? t : reshape(ctx, t, ones, role);
  const { axis, blockSize } = layout;
  if (blockSize === 0) return reshape(ctx, t, ones.map((d, i) => (i === axis ? t.shape[0]! : d)), role);
  if (t.shape.some((d) => d < 0)) {
    throw new UnsupportedOpError(`layer "${ctx.name()}": a blocked scale or zero point [${t.shape}] with dims known only at run time cannot be spelled out`, {
      details: { layer: ctx.name() },
    });
  }
  const split = [...t.shape.slice(0, axis + 1), 1, ...t.shape.slice(axis + 1)];
  const size = split.map((d, i) => (i === axis + 1 ? blockSize : d));
  const repeated = ctx.add(
    { kind: 'slice', start: split.map(() => 0), size, stride: split.map((_, i) => (i === axis + 1 ? 0 : 1)), mode: 'strict_bounds' },
    [reshape(ctx, t, split, `${role}_split`)],
    `${role}_repeat`,
  );
  return reshape(ctx, repeated, t.shape.map((d, i) => (i === axis ? d * blockSize : d)), role);
}

/** Refuses the types no primitive layer holds (a float8 or int4 tensor exists only between quantize and dequantize). */
function refuseUnheld(ctx: ConversionContext, dtype: DType, what: string): void {
  if (dtype === 'int8' || dtype === 'uint8') return;
  throw new UnsupportedOpError(
    `layer "${ctx.name()}" (${what} ${dtype}) cannot be spelled out as primitive layers: no other layer holds ${dtype} tensors, and this backend has no ${what} kernel`,
    { details: { layer: ctx.name(), dtype } },
  );
}

/**
 * A quantize layer to int8 or uint8 as primitive layers: x / scale, round half to even,
 * + zero point, a NaN to the type's minimum, clamped to the type's range, cast.
 */
export function spellOutQuantize(ctx: ConversionContext, x: NetTensor, scale: NetTensor, zeroPoint: NetTensor | null, to: QuantizedDType, layout: QuantLayout): NetTensor {
  refuseUnheld(ctx, to, 'quantize to');
  const rank = x.shape.length;
  const [lo, hi] = to === 'int8' ? [-128, 127] : [0, 255];
  const divided = ctx.add({ kind: 'elementwise', op: 'div' }, [x, broadcastParam(ctx, scale, rank, layout, 'scale')], 'divide');
  let q = ctx.add({ kind: 'unary', op: 'round' }, [divided], 'round');
  if (zeroPoint !== null) q = ctx.add({ kind: 'elementwise', op: 'sum' }, [q, cast(ctx, broadcastParam(ctx, zeroPoint, rank, layout, 'zero_point'), x.dtype, 'zero_point_float')], 'shift');
  const nan = ctx.add({ kind: 'unary', op: 'isnan' }, [q], 'is_nan');
  q = ctx.add({ kind: 'select' }, [nan, ctx.scalar(lo, x.dtype, rank, 'minimum'), q], 'nan_to_minimum');
  const clamped = ctx.add({ kind: 'activation', type: 'clip', alpha: lo, beta: hi }, [q], 'saturate');
  return ctx.add({ kind: 'cast', to }, [clamped], 'cast');
}

/** A dequantize layer from int8 or uint8 as primitive layers: (float(q) − float(zero point)) · float(scale) in float32, cast to `to`. */
export function spellOutDequantize(ctx: ConversionContext, q: NetTensor, scale: NetTensor, zeroPoint: NetTensor | null, to: DType, layout: QuantLayout): NetTensor {
  refuseUnheld(ctx, q.dtype, 'dequantize from');
  const rank = q.shape.length;
  let d = cast(ctx, q, 'float32', 'to_float');
  if (zeroPoint !== null) d = ctx.add({ kind: 'elementwise', op: 'sub' }, [d, cast(ctx, broadcastParam(ctx, zeroPoint, rank, layout, 'zero_point'), 'float32', 'zero_point_float')], 'shift');
  const y = ctx.add({ kind: 'elementwise', op: 'prod' }, [d, cast(ctx, broadcastParam(ctx, scale, rank, layout, 'scale'), 'float32', 'scale_float')], 'scale');
  return cast(ctx, y, to, 'cast');
}
