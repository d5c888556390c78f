/**
 * Resizing as PyTorch (upsample_*) and ONNX Resize define it. TensorRT's resize layer maps
 * output coordinates with out/in ratios; when the model gave scales that differ from out/in
 * (a scale_factor with a non-integral in*scale), or for types the layer does not take, the
 * resize is composed from gathers of constant source indices (nearest) and lerp weights
 * (linear), computed here exactly as the reference semantics do.
 */
import type { NetTensor, ResizeCoordinateTransformation, ResizeRoundMode, ResizeSelector } from '../../network';
import type { ConversionContext } from '../context';
import { filterTaps, lerpTaps, nearestIndex, resizedAxes, sourceCoordinate, type CoordinateTransform, type FilterOptions, type NearestMode } from '../../kernels/resize-coords';
import { axesOf, dimsVector } from './dynamic';
import { alongAxis, constantOf, gatherAxis } from './nn-util';

export type CoordinateMode = CoordinateTransform;
export type { NearestMode };

export interface ResizeSpec {
  mode: 'nearest' | 'linear';
  coordinate: CoordinateMode;
  nearest: NearestMode;
  /** Scales per resized (trailing) dim when the model gave them, else null. */
  scales: number[] | null;
  /** ONNX's general filter per resized axis (cubic, antialias, ...): always composed from gathers. */
  filter?: ((axis: number) => FilterOptions) | null;
}

const ROUNDING: Record<NearestMode, ResizeRoundMode> = {
  floor: 'floor',
  ceil: 'ceil',
  round_prefer_ceil: 'half_up',
  round_prefer_floor: 'half_down',
};

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
  if (spec.filter) return filtered(ctx, x, out, spec, spec.filter);
  const outputDims = [...x.shape.slice(0, lead), ...out];
  const innermost = resizedAxes(x.shape, out, spec.scales).every((a) => a >= x.shape.length - 3);
  if (innermost && layerMatches(x.shape, out, spec) && layerTakes(x.dtype, spec.mode)) {
    const coordinateTransformation: ResizeCoordinateTransformation = spec.coordinate === 'pytorch_half_pixel' ? 'half_pixel' : spec.coordinate;
    // A single output pixel maps to the first input pixel in pytorch_half_pixel and align_corners.
    const selector: ResizeSelector = spec.coordinate === 'pytorch_half_pixel' || spec.coordinate === 'align_corners' ? 'upper' : 'formula';
    const params = { kind: 'resize' as const, mode: spec.mode, outputDims, coordinateTransformation, selector, nearestRounding: ROUNDING[spec.nearest] };
    if (outputDims.every((d) => d >= 0)) return ctx.add(params, [x]);
    // Run-time leading dims (the batch): the output dims are a shape tensor copying them.
    return ctx.add(params, [x, dimsVector(ctx, x, [...axesOf(x, 0, lead), ...out], 'output_dims')]);
  }
  let t = x;
  for (const a of resizedAxes(x.shape, out, spec.scales)) {
    const i = a - lead;
    const inSize = x.shape[a]!;
    const o = out[i]!;
    const coord = (k: number): number => sourceCoordinate(k, inSize, o, spec.scales?.[i], spec.coordinate);
    if (spec.mode === 'nearest') {
      const index = Array.from({ length: o }, (_, k) => nearestIndex(coord(k), inSize, spec.nearest));
      t = gatherAxis(ctx, t, a, index, `nearest${i}`);
      continue;
    }
    const taps = Array.from({ length: o }, (_, k) => lerpTaps(coord(k), inSize));
    const i0 = taps.map((p) => p.i0);
    const i1 = taps.map((p) => p.i1);
    const w1 = taps.map((p) => p.w1);
    const shape = alongAxis(t.shape.length, a, o);
    const lo = ctx.add({ kind: 'elementwise', op: 'prod' }, [gatherAxis(ctx, t, a, i0, `lower${i}`), constantOf(ctx, t.dtype, shape, w1.map((w) => 1 - w), `lower_weight${i}`)], `lower_part${i}`);
    const hi = ctx.add({ kind: 'elementwise', op: 'prod' }, [gatherAxis(ctx, t, a, i1, `upper${i}`), constantOf(ctx, t.dtype, shape, w1, `upper_weight${i}`)], `upper_part${i}`);
    t = ctx.add({ kind: 'elementwise', op: 'sum' }, [lo, hi], `lerp${i}`);
  }
  return t === x ? ctx.add({ kind: 'identity' }, [x]) : t;
}

/** Σ_k weight_k · gather(x, index_k) per axis (+ the extrapolation value outside a crop). */
function filtered(ctx: ConversionContext, x: NetTensor, out: readonly number[], spec: ResizeSpec, filter: (axis: number) => FilterOptions): NetTensor {
  const lead = x.shape.length - out.length;
  let t = x;
  out.forEach((o, i) => {
    const a = lead + i;
    const options = filter(i);
    const inSize = x.shape[a]!;
    const taps = Array.from({ length: o }, (_, k) => filterTaps(k, inSize, o, spec.scales?.[i] ?? o / inSize, options));
    const width = Math.max(0, ...taps.map((p) => p.index.length));
    const shape = alongAxis(t.shape.length, a, o);
    let sum: NetTensor | null = null;
    for (let k = 0; k < width; k++) {
      const index = taps.map((p) => p.index[k] ?? 0);
      const weight = taps.map((p) => p.weight[k] ?? 0);
      const part = ctx.add(
        { kind: 'elementwise', op: 'prod' },
        [gatherAxis(ctx, t, a, index, `tap${i}_${k}`), constantOf(ctx, t.dtype, shape, weight, `tap${i}_${k}_weight`)],
        `tap${i}_${k}_part`,
      );
      sum = sum === null ? part : ctx.add({ kind: 'elementwise', op: 'sum' }, [sum, part], `tap${i}_${k}_sum`);
    }
    if (taps.some((p) => p.outside)) {
      const bias = constantOf(ctx, t.dtype, shape, taps.map((p) => (p.outside ? options.extrapolationValue : 0)), `extrapolation${i}`);
      sum = sum === null ? bias : ctx.add({ kind: 'elementwise', op: 'sum' }, [sum, bias], `extrapolated${i}`);
    }
    if (sum !== null) t = sum;
  });
  return t;
}
