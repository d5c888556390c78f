/**
 * Coordinate math of ONNX Resize / torch upsample, shared by the CPU kernel (kernels/indexing)
 * and the converter that composes resizes from gathers and lerp weights (conversion/impl/resize).
 */

/** ONNX Resize coordinate_transformation_mode: how an output coordinate maps back to the input. */
export type CoordinateTransform = 'half_pixel' | 'pytorch_half_pixel' | 'align_corners' | 'asymmetric';

/** ONNX Resize nearest_mode: how a fractional source coordinate picks a pixel. */
export type NearestMode = 'round_prefer_floor' | 'round_prefer_ceil' | 'floor' | 'ceil';

/**
 * The axes of `inShape` that a resize of its trailing `size.length` dims to `size` actually
 * changes: those whose size changes or whose given scale is not 1 (the rest are copied as is).
 */
export function resizedAxes(inShape: readonly number[], size: readonly number[], scales: readonly number[] | null | undefined): number[] {
  const lead = inShape.length - size.length;
  return size.map((_, i) => lead + i).filter((a, i) => size[i] !== inShape[a] || (scales != null && scales[i] !== 1));
}

/** The source coordinate of output coordinate `x` along a dim resized from `inSize` to `outSize`. */
export function sourceCoordinate(x: number, inSize: number, outSize: number, scale: number | undefined, mode: CoordinateTransform): number {
  // With no explicit scale, in/out is used as an exact ratio so integer results stay exact.
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

/** The input pixel nearest resizing picks for source coordinate `c`, clamped to [0, inSize). */
export function nearestIndex(c: number, inSize: number, mode: NearestMode): number {
  return Math.min(Math.max(roundNearest(c, mode), 0), inSize - 1);
}

/**
 * The two input pixels linear resizing blends for source coordinate `c` (clamped to the input)
 * and the weight of the upper one: out = (1 - w1) * in[i0] + w1 * in[i1].
 */
export function lerpTaps(c: number, inSize: number): { i0: number; i1: number; w1: number } {
  const clamped = Math.min(Math.max(c, 0), inSize - 1);
  const i0 = Math.floor(clamped);
  return { i0, i1: Math.min(i0 + 1, inSize - 1), w1: clamped - i0 };
}

/**
 * ONNX Resize's general interpolation (cubic, antialiased filters, the coordinate modes
 * PyTorch lacks), as ONNX's reference defines it (onnx/reference/ops/op_resize.py): each
 * output coordinate reads a fixed footprint of input pixels with weights.
 */
export type OnnxCoordinateTransform = CoordinateTransform | 'half_pixel_symmetric' | 'tf_crop_and_resize';

export interface FilterOptions {
  mode: 'linear' | 'cubic';
  coordinate: OnnxCoordinateTransform;
  /** Cubic's A (ONNX cubic_coeff_a). */
  cubicCoeffA: number;
  /** Weights of pixels outside the input drop out and the rest renormalize. */
  excludeOutside: boolean;
  /** The filter stretches by 1/scale when downsampling. */
  antialias: boolean;
  /** tf_crop_and_resize's [start, end] of this axis, normalized. */
  roi?: readonly [number, number];
  extrapolationValue: number;
}

/** Input pixels (edge-clamped) and their weights; `outside` means the extrapolation value. */
export interface AxisTaps {
  index: number[];
  weight: number[];
  outside: boolean;
}

/** The source coordinate as ONNX's reference maps it: through `scale` (out/in when sizes were given). */
export function onnxSourceCoordinate(x: number, inSize: number, outSize: number, scale: number, options: FilterOptions): number {
  const outWidth = scale * inSize;
  switch (options.coordinate) {
    case 'align_corners':
      return outWidth === 1 ? 0 : (x * (inSize - 1)) / (outWidth - 1);
    case 'asymmetric':
      return x / scale;
    case 'pytorch_half_pixel':
      // The spec's 0 for a single output pixel (ONNX's reference uses -0.5; onnxruntime and PyTorch 0).
      return outSize === 1 ? 0 : (x + 0.5) / scale - 0.5;
    case 'half_pixel':
      return (x + 0.5) / scale - 0.5;
    case 'half_pixel_symmetric':
      return (inSize / 2) * (1 - outSize / outWidth) + (x + 0.5) / scale - 0.5;
    case 'tf_crop_and_resize': {
      const [start, end] = options.roi ?? [0, 1];
      const c = outWidth === 1 ? ((end - start) * (inSize - 1)) / 2 : (x * (end - start) * (inSize - 1)) / (outWidth - 1);
      return c + start * (inSize - 1);
    }
  }
}

function cubicWeight(t: number, a: number): number {
  const x = Math.abs(t);
  if (x <= 1) return (a + 2) * x ** 3 - (a + 3) * x * x + 1;
  if (x < 2) return a * x ** 3 - 5 * a * x * x + 8 * a * x - 4 * a;
  return 0;
}

/** Offsets from the pixel left of the coordinate and their weights, for `ratio` in (0, 1]. */
function filterWeights(ratio: number, scale: number, options: FilterOptions): { offsets: number[]; weights: number[] } {
  const support = options.mode === 'cubic' ? 2 : 1;
  const s = options.antialias ? Math.min(scale, 1) : 1;
  const start = options.antialias ? Math.floor(-support / s) + 1 : 1 - support;
  const offsets = Array.from({ length: 2 - 2 * start }, (_, i) => start + i);
  const kernel = (t: number): number => (options.mode === 'cubic' ? cubicWeight(t, options.cubicCoeffA) : Math.max(0, 1 - Math.abs(t)));
  const weights = offsets.map((i) => kernel(s * (i - ratio)));
  if (!options.antialias) return { offsets, weights };
  const sum = weights.reduce((p, w) => p + w, 0);
  return { offsets, weights: weights.map((w) => w / sum) };
}

/** The taps of output coordinate `x` along an axis resized from `inSize` to `outSize` by `scale`. */
export function filterTaps(x: number, inSize: number, outSize: number, scale: number, options: FilterOptions): AxisTaps {
  const c = onnxSourceCoordinate(x, inSize, outSize, scale, options);
  if (options.coordinate === 'tf_crop_and_resize' && (c < 0 || c > inSize - 1)) return { index: [], weight: [], outside: true };
  // The pixel left of the coordinate, with the ratio in (0, 1]: an exact pixel is ratio 1 from its left neighbour.
  const floor = Math.floor(c);
  const left = Number.isInteger(c) ? c - 1 : floor;
  const ratio = Number.isInteger(c) ? 1 : c - floor;
  const { offsets, weights } = filterWeights(ratio, scale, options);
  const raw = offsets.map((o) => left + o);
  let weight = weights;
  if (options.excludeOutside) {
    weight = weights.map((w, i) => (raw[i]! < 0 || raw[i]! >= inSize ? 0 : w));
    const sum = weight.reduce((p, w) => p + w, 0);
    weight = weight.map((w) => w / sum);
  }
  return { index: raw.map((i) => Math.min(Math.max(i, 0), inSize - 1)), weight, outside: false };
}

/** ONNX Resize's attributes as trt.resize carries them. */
export interface OnnxResizeAttrs {
  mode: 'nearest' | 'linear' | 'cubic';
  coordinate: OnnxCoordinateTransform;
  cubicCoeffA: number;
  excludeOutside: boolean;
  antialias: boolean;
  /** Starts then ends of the resized (trailing) axes, or null. */
  roi: readonly number[] | null;
  extrapolationValue: number;
  scales: readonly number[] | null;
}

/**
 * The general filter of each resized axis (by its index among the resized axes), or null
 * when plain nearest/linear resizing computes the same: nearest, or linear with a coordinate
 * mode PyTorch shares and no antialias (align_corners with scales maps through in·scale).
 */
export function generalFilter(a: OnnxResizeAttrs): ((axis: number) => FilterOptions) | null {
  if (a.mode === 'nearest') return null;
  const plainCoordinate = a.coordinate !== 'half_pixel_symmetric' && a.coordinate !== 'tf_crop_and_resize' && !(a.coordinate === 'align_corners' && a.scales !== null);
  if (a.mode === 'linear' && !a.antialias && plainCoordinate) return null;
  const mode = a.mode;
  const n = a.roi === null ? 0 : a.roi.length / 2;
  return (axis) => ({
    mode,
    coordinate: a.coordinate,
    cubicCoeffA: a.cubicCoeffA,
    excludeOutside: a.excludeOutside,
    antialias: a.antialias,
    roi: a.roi === null ? undefined : [a.roi[axis]!, a.roi[n + axis]!],
    extrapolationValue: a.extrapolationValue,
  });
}

/** trt.resize's arguments (an IR node's args, or the interpreter's) as {@link OnnxResizeAttrs}. */
export function resizeAttrs(args: Readonly<Record<string, unknown>>, scales: readonly number[] | null): OnnxResizeAttrs {
  const roi = args.roi;
  return {
    mode: args.mode as OnnxResizeAttrs['mode'],
    coordinate: args.coordinate_transformation_mode as OnnxCoordinateTransform,
    cubicCoeffA: (args.cubic_coeff_a as number | undefined) ?? -0.75,
    excludeOutside: args.exclude_outside === true,
    antialias: args.antialias === true,
    roi: Array.isArray(roi) ? (roi as number[]) : null,
    extrapolationValue: (args.extrapolation_value as number | undefined) ?? 0,
    scales,
  };
}
