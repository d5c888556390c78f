/**
 * Resizing as PyTorch (upsample_*) and ONNX Resize define it. TensorRT's resize layer maps
 * output coordinates with out/in ratios; when the model gave scales that differ from out/in
 * (a scale_factor with a non-integral in*scale), or for types the layer does not take, the
 * resize is composed from gathers of constant source indices (nearest) and lerp weights
 * (linear), computed here exactly as the reference semantics do.
 */
import type { NetTensor, ResizeCoordinateTransformation, ResizeRoundMode, ResizeSelector } from '../../network';
import type { ConversionContext } from '../context';
import { alongAxis, constantOf, gatherAxis } from './nn-util';

export type CoordinateMode = 'half_pixel' | 'pytorch_half_pixel' | 'align_corners' | 'asymmetric';
export type NearestMode = 'round_prefer_floor' | 'round_prefer_ceil' | 'floor' | 'ceil';

export interface ResizeSpec {
  mode: 'nearest' | 'linear';
  coordinate: CoordinateMode;
  nearest: NearestMode;
  /** Scales per resized (trailing) dim when the model gave them, else null. */
  scales: number[] | null;
}

/** The source coordinate of output coordinate `x` (ONNX Resize's coordinate transforms). */
function sourceCoordinate(x: number, inSize: number, outSize: number, scale: number | undefined, mode: CoordinateMode): number {
  const back = (v: number): number => (scale === undefined ? (v * inSize) / outSize : v / scale);
  switch (mode) {
    case 'asymmetric':
      return back(x);
    case 'half_pixel':
      return back(x + 0.5) - 0.5;
    case 'pytorch_half_pixel':
      return outSize > 1 ? back(x + 0.5) - 0.5 : 0;
    case 'align_corners':
      return outSize === 1 ? 0 : (x * (inSize - 1)) / (outSize - 1);
  }
}

function roundNearest(v: number, mode: NearestMode): number {
  switch (mode) {
    case 'floor':
      return Math.floor(v);
    case 'ceil':
      return Math.ceil(v);
    case 'round_prefer_ceil':
      return Math.floor(v + 0.5);
    case 'round_prefer_floor':
      return Math.ceil(v - 0.5);
  }
}

const ROUNDING: Record<NearestMode, ResizeRoundMode> = {
  floor: 'floor',
  ceil: 'ceil',
  round_prefer_ceil: 'half_up',
  round_prefer_floor: 'half_down',
};

/** Axes (of the trailing `out.length`) that actually resize, as the reference semantics skip the rest. */
function resizedAxes(inShape: readonly number[], out: readonly number[], scales: number[] | null): number[] {
  const lead = inShape.length - out.length;
  return out.map((_, i) => lead + i).filter((a, i) => out[i] !== inShape[a] || (scales !== null && scales[i] !== 1));
}

/** True when TensorRT's out/in coordinate mapping equals the model's along every resized axis. */
export function layerMatches(inShape: readonly number[], out: readonly number[], spec: ResizeSpec): boolean {
  if (spec.scales === null || spec.coordinate === 'align_corners') return true;
  const lead = inShape.length - out.length;
  return resizedAxes(inShape, out, spec.scales).every((a) => {
    const i = a - lead;
    const ratio = out[i]! / inShape[a]!;
    return Math.abs(spec.scales![i]! - ratio) <= 1e-12 * ratio;
  });
}

/** Whether the resize layer takes this type in this mode. */
function layerTakes(dtype: string, mode: 'nearest' | 'linear'): boolean {
  return dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16' || (mode === 'nearest' && (dtype === 'int32' || dtype === 'int8'));
}

/** Resizes the trailing `out.length` dims of `x` to `out`. */
export function resize(ctx: ConversionContext, x: NetTensor, out: readonly number[], spec: ResizeSpec): NetTensor {
  const lead = x.shape.length - out.length;
  const outputDims = [...x.shape.slice(0, lead), ...out];
  const innermost = resizedAxes(x.shape, out, spec.scales).every((a) => a >= x.shape.length - 3);
  if (innermost && layerMatches(x.shape, out, spec) && layerTakes(x.dtype, spec.mode)) {
    const coordinateTransformation: ResizeCoordinateTransformation = spec.coordinate === 'pytorch_half_pixel' ? 'half_pixel' : spec.coordinate;
    // A single output pixel maps to the first input pixel in pytorch_half_pixel and align_corners.
    const selector: ResizeSelector = spec.coordinate === 'pytorch_half_pixel' || spec.coordinate === 'align_corners' ? 'upper' : 'formula';
    return ctx.add({ kind: 'resize', mode: spec.mode, outputDims, coordinateTransformation, selector, nearestRounding: ROUNDING[spec.nearest] }, [x]);
  }
  let t = x;
  for (const a of resizedAxes(x.shape, out, spec.scales)) {
    const i = a - lead;
    const inSize = x.shape[a]!;
    const o = out[i]!;
    const coord = (k: number): number => sourceCoordinate(k, inSize, o, spec.scales?.[i], spec.coordinate);
    if (spec.mode === 'nearest') {
      const index = Array.from({ length: o }, (_, k) => Math.min(Math.max(roundNearest(coord(k), spec.nearest), 0), inSize - 1));
      t = gatherAxis(ctx, t, a, index, `nearest${i}`);
      continue;
    }
    const c = Array.from({ length: o }, (_, k) => Math.min(Math.max(coord(k), 0), inSize - 1));
    const i0 = c.map(Math.floor);
    const i1 = i0.map((v) => Math.min(v + 1, inSize - 1));
    const w1 = c.map((v, k) => v - i0[k]!);
    const shape = alongAxis(t.shape.length, a, o);
    const lo = ctx.add({ kind: 'elementwise', op: 'prod' }, [gatherAxis(ctx, t, a, i0, `lower${i}`), constantOf(ctx, t.dtype, shape, w1.map((w) => 1 - w), `lower_weight${i}`)], `lower_part${i}`);
    const hi = ctx.add({ kind: 'elementwise', op: 'prod' }, [gatherAxis(ctx, t, a, i1, `upper${i}`), constantOf(ctx, t.dtype, shape, w1, `upper_weight${i}`)], `upper_part${i}`);
    t = ctx.add({ kind: 'elementwise', op: 'sum' }, [lo, hi], `lerp${i}`);
  }
  return t === x ? ctx.add({ kind: 'identity' }, [x]) : t;
}
