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
