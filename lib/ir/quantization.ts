/**
 * Linear quantization's element types and the forms of its scales, shared by the IR ops
 * (lib/ir/ops/quantize.ts), the host kernels (lib/kernels/quantize.ts) and the Network's
 * quantize/dequantize layers (lib/network/shape-inference.ts).
 *
 * A scale (and a zero point, which has the scale's shape) applies to a tensor x in one of
 * three forms, told apart by its rank and the block size:
 * - per tensor: a 0-d scale;
 * - per axis: a 1-D scale of x.shape[axis] elements, element i applying to index i along axis;
 * - per block (blockSize > 0): a scale of x's rank, equal to x's shape except at `axis`, where
 *   it has ceil(x.shape[axis] / blockSize) elements; element j there applies to the indices
 *   [j·blockSize, (j+1)·blockSize) along axis (the last block may be shorter, as ONNX allows).
 */
import type { DType } from './dtype';
import { formatShape, isStatic, type Dim } from './symbolic';

/** The saturation range of each integer type quantization produces. */
export const QUANT_INTEGER_RANGES: Readonly<Partial<Record<DType, readonly [number, number]>>> = {
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  uint4: [0, 15],
  int4: [-8, 7],
  uint2: [0, 3],
  int2: [-2, 1],
};

/** The float types quantization produces (saturating to their largest finite value, or not). */
export const QUANT_FLOAT_TYPES: ReadonlySet<DType> = new Set<DType>(['float8e4m3fn', 'float8e4m3fnuz', 'float8e5m2', 'float8e5m2fnuz', 'float4e2m1']);

/** Whether `dtype` is a type linear quantization produces and dequantization reads. */
export const isQuantType = (dtype: DType): boolean => QUANT_INTEGER_RANGES[dtype] !== undefined || QUANT_FLOAT_TYPES.has(dtype);

export type ScaleForm = 'tensor' | 'axis' | 'block';

/** Which form a scale of `scaleRank` dims has (see the top of this file). */
export const scaleForm = (scaleRank: number, blockSize: number): ScaleForm => (scaleRank === 0 ? 'tensor' : blockSize > 0 ? 'block' : 'axis');

/**
 * Why a scale of `scale` does not fit x of `x` with `axis` (already in [0, rank)) and
 * `blockSize`, or null when it fits. Dims only known at run time are not compared.
 * `exactBlocks` asks that blockSize divide x.shape[axis] (TensorRT's blocked quantization).
 */
export function scaleShapeError(x: readonly Dim[], scale: readonly Dim[], axis: number, blockSize: number, exactBlocks = false): string | null {
  if (!Number.isInteger(blockSize) || blockSize < 0) return `the block size must be a positive integer (or 0 for none), got ${blockSize}`;
  if (scale.length === 0) return blockSize > 0 ? 'a blocked quantization needs a scale of the input\'s rank, got a 0-d scale' : null;
  if (axis < 0 || axis >= x.length) return `axis ${axis} is out of range for an input of rank ${x.length}`;
  const d = x[axis]!;
  if (blockSize === 0) {
    if (scale.length !== 1) return `a per-axis scale must be 1-D (a ${scale.length}-D scale needs a block size), got ${formatShape(scale)}`;
    if (isStatic(d) && isStatic(scale[0]!) && scale[0] !== d) return `a per-axis scale along axis ${axis} must have ${d} elements (the input is ${formatShape(x)}), got ${formatShape(scale)}`;
    return null;
  }
  if (scale.length !== x.length) return `a blocked scale must have the input's rank ${x.length}, got ${formatShape(scale)}`;
  for (let i = 0; i < x.length; i++) {
    const [xd, sd] = [x[i]!, scale[i]!];
    if (!isStatic(xd) || !isStatic(sd)) continue;
    if (i !== axis && sd !== xd) return `a blocked scale must have the input's dims except along axis ${axis}: ${formatShape(scale)} does not fit ${formatShape(x)}`;
    if (i === axis && sd !== Math.ceil(xd / blockSize)) {
      return `a blocked scale along axis ${axis} must have ceil(${xd} / ${blockSize}) = ${Math.ceil(xd / blockSize)} elements there, got ${formatShape(scale)}`;
    }
  }
  if (exactBlocks && isStatic(d) && d % blockSize !== 0) return `the block size ${blockSize} does not divide the input's dim ${d} along axis ${axis}`;
  return null;
}
