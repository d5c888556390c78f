/**
 * Linear quantization on host tensors, exactly as ONNX's reference computes QuantizeLinear
 * and DequantizeLinear (the Network's quantize and dequantize layers compute the same), and as
 * PyTorch computes its quantized_decomposed ops. Scales apply per tensor, per axis or per block
 * (lib/ir/quantization.ts); callers pass shapes that fit (the IR ops and inferLayer check).
 */
import { dtypeInfo, type DType } from '../ir/dtype';
import { fromBFloat16Bits, fromFloat16Bits, toBFloat16Bits, toFloat16Bits } from '../ir/half';
import { isMiniFloat, toMiniFloatBits } from '../ir/low-precision';
import { QUANT_INTEGER_RANGES, scaleForm } from '../ir/quantization';
import { shapeSize, Tensor } from '../ir/tensor';
import { fromNumbers, readNumbers } from './access';
import { roundHalfEven } from './unary';

/** The float types arithmetic can be rounded to here. */
export type RoundingDType = 'float64' | 'float32' | 'float16' | 'bfloat16';

/** `v` rounded (to nearest even) to a value of `dtype`. */
export function roundTo(dtype: RoundingDType, v: number): number {
  switch (dtype) {
    case 'float64':
      return v;
    case 'float32':
      return Math.fround(v);
    case 'float16':
      return fromFloat16Bits(toFloat16Bits(v));
    case 'bfloat16':
      return fromBFloat16Bits(toBFloat16Bits(v));
  }
}

/**
 * For element i of a tensor of `shape` (row-major), the index of the scale element that
 * applies to it: 0 per tensor, the index along `axis` per axis, the block's element per block.
 */
export function scaleIndex(shape: readonly number[], scaleShape: readonly number[], axis: number, blockSize: number): (i: number) => number {
  const form = scaleForm(scaleShape.length, blockSize);
  if (form === 'tensor') return () => 0;
  const d = shape[axis]!;
  const inner = shapeSize(shape.slice(axis + 1));
  if (form === 'axis') return (i) => Math.floor(i / inner) % d;
  const blocks = scaleShape[axis]!;
  return (i) => {
    const row = Math.floor(i / inner);
    const outer = Math.floor(row / d);
    return (outer * blocks + Math.floor((row % d) / blockSize)) * inner + (i % inner);
  };
}

export interface QuantizeOptions {
  axis: number;
  blockSize: number;
  /** float8 only: out-of-range values become ±max (true) or what the type has for them (false). */
  saturate: boolean;
  /** The type x / scale is computed (rounded) in. */
  precision: RoundingDType;
}

/**
 * ONNX QuantizeLinear: y = saturate(round_half_even(x / scale) + zeroPoint) for the integer
 * types, x / scale (+ zeroPoint) cast to the float types (float8 saturating to ±max with
 * `saturate`; float4e2m1 always). x / scale is rounded once to `precision` first. A NaN gives
 * the integer type's minimum, as ONNX's reference and onnxruntime's vector kernels do.
 */
export function quantizeLinear(x: Tensor, scale: Tensor, zeroPoint: Tensor | null, to: DType, options: QuantizeOptions): Tensor {
  const xv = readNumbers(x);
  const sv = readNumbers(scale);
  const zv = zeroPoint === null ? null : readNumbers(zeroPoint);
  const at = scaleIndex(x.shape, scale.shape, options.axis, options.blockSize);
  const info = dtypeInfo(to);
  const out = new info.storage(xv.length);
  const range = QUANT_INTEGER_RANGES[to];
  for (let i = 0; i < xv.length; i++) {
    const k = at(i);
    const v = roundTo(options.precision, xv[i]! / sv[k]!);
    const zp = zv === null ? 0 : zv[k]!;
    if (range !== undefined) {
      const q = Number.isNaN(v) ? range[0] : roundHalfEven(v) + zp;
      out[i] = Math.min(range[1], Math.max(range[0], q));
    } else if (isMiniFloat(to)) {
      out[i] = toMiniFloatBits(v + zp, to, options.saturate);
    } else {
      throw new TypeError(`quantizeLinear: ${to} is not a quantized type`);
    }
  }
  return new Tensor(to, [...x.shape], out);
}

/**
 * ONNX DequantizeLinear: y = (q − zeroPoint) · scale computed in float32 (as ONNX's reference
 * and onnxruntime do, whatever the scale's type) and rounded once to `to`.
 */
export function dequantizeLinear(q: Tensor, scale: Tensor, zeroPoint: Tensor | null, to: DType, options: { axis: number; blockSize: number }): Tensor {
  const qv = readNumbers(q);
  const sv = readNumbers(scale);
  const zv = zeroPoint === null ? null : readNumbers(zeroPoint);
  const at = scaleIndex(q.shape, scale.shape, options.axis, options.blockSize);
  const values = new Float64Array(qv.length);
  for (let i = 0; i < qv.length; i++) {
    const k = at(i);
    const d = zv === null ? qv[i]! : Math.fround(qv[i]! - zv[k]!);
    values[i] = Math.fround(d * sv[k]!);
  }
  return fromNumbers(to, q.shape, values);
}

/**
 * PyTorch's quantized_decomposed quantize ops: clamp(round(x · inv) + zeroPoint, qmin, qmax)
 * cast to `to`, where inv = 1 / scale. `inv` gives, per scale element, the multiplier as
 * PyTorch rounds it, and `product` the type x · inv is rounded to (float32 for a Python-float
 * scale; the promoted type of float32 and the scales' type for a scale tensor).
 */
export function torchQuantize(
  x: Tensor,
  inv: ArrayLike<number>,
  zeroPoints: ArrayLike<number>,
  index: (i: number) => number,
  bounds: readonly [number, number],
  to: DType,
  product: RoundingDType,
): Tensor {
  const xv = readNumbers(x);
  const values = new Float64Array(xv.length);
  for (let i = 0; i < xv.length; i++) {
    const k = index(i);
    const r = roundHalfEven(roundTo(product, xv[i]! * inv[k]!)) + zeroPoints[k]!;
    // torch.clamp keeps NaN; the cast to an integer type then gives 0 here (fromNumbers).
    values[i] = Number.isNaN(r) ? r : Math.min(bounds[1], Math.max(bounds[0], r));
  }
  return fromNumbers(to, x.shape, values);
}
