/**
 * Linear quantization ops. `trt.quantize_linear` and `trt.dequantize_linear` are ONNX's
 * QuantizeLinear and DequantizeLinear (opset 21-25 semantics, per tensor, per axis or per
 * block: lib/ir/quantization.ts) with the division's precision made explicit: x and the scale
 * share one float type, which the ONNX importer chooses (the scale's type, or the `precision`
 * attribute). The `quantized_decomposed.*` ops are PyTorch's (torch/ao/quantization/fx/
 * _decomposed.py), with their real schemas, as `.pt2` files name them.
 */
import { isInteger, type DType } from '../dtype';
import { tensorType, type TensorType } from '../graph';
import { QUANT_FLOAT_TYPES, QUANT_INTEGER_RANGES, isQuantType, scaleShapeError } from '../quantization';
import { formatShape, shapeEquals } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';

const FLOATS: ReadonlySet<DType> = new Set<DType>(['float32', 'float16', 'bfloat16']);

export const QUANTIZE_LINEAR = 'trt.quantize_linear';
export const DEQUANTIZE_LINEAR = 'trt.dequantize_linear';

/** The axis of a per-axis or blocked scale, in [0, rank); 0 for a per-tensor scale (unused). */
export function quantAxis(ctx: InferContext, x: TensorType, scale: TensorType): number {
  return scale.shape.length === 0 ? 0 : normAxis(ctx, ctx.int('axis'), x.shape.length, 'axis');
}

/** Checks the scale and zero point of a trt.quantize_linear/dequantize_linear node against x. */
function checkParams(ctx: InferContext, x: TensorType, quantized: DType): void {
  const scale = ctx.tensor('scale');
  if (!FLOATS.has(scale.dtype)) ctx.fail(`scale must be float32, float16 or bfloat16, got ${scale.dtype}`);
  const blockSize = ctx.int('block_size');
  const why = scaleShapeError(x.shape, scale.shape, quantAxis(ctx, x, scale), blockSize);
  if (why !== null) ctx.fail(`scale ${formatShape(scale.shape)}: ${why}`);
  const zp = ctx.optTensor('zero_point');
  if (zp === null) return;
  if (QUANT_FLOAT_TYPES.has(quantized)) ctx.fail(`a ${quantized} quantization takes no zero point (ONNX's must be 0)`);
  if (zp.dtype !== quantized) ctx.fail(`zero_point must be ${quantized} (the quantized type), got ${zp.dtype}`);
  if (!shapeEquals(zp.shape, scale.shape)) ctx.fail(`zero_point ${formatShape(zp.shape)} must have the scale's shape ${formatShape(scale.shape)}`);
}

// y = saturate(round_half_even(self / scale) + zero_point) in `dtype`; self / scale is
// computed in self's type, which the scale shares. saturate: float8 only (integers always
// clamp; float4e2m1 always saturates).
defineOp(
  `${QUANTIZE_LINEAR}(Tensor self, Tensor scale, Tensor? zero_point, ScalarType dtype, int axis=1, int block_size=0, bool saturate=True) -> Tensor`,
  (ctx) => {
    const x = ctx.tensor('self');
    const dtype = ctx.dtype('dtype');
    if (dtype === null || !isQuantType(dtype)) return ctx.fail(`dtype must be a quantized type (${[...Object.keys(QUANT_INTEGER_RANGES), ...QUANT_FLOAT_TYPES].join(', ')}), got ${dtype}`);
    if (!FLOATS.has(x.dtype)) ctx.fail(`self must be float32, float16 or bfloat16, got ${x.dtype}`);
    if (ctx.tensor('scale').dtype !== x.dtype) ctx.fail(`scale (${ctx.tensor('scale').dtype}) must have self's type ${x.dtype}, the precision of the division`);
    ctx.bool('saturate');
    checkParams(ctx, x, dtype);
    return [tensorType(dtype, x.shape)];
  },
);

// y = (self - zero_point) * scale computed in float32 and rounded once to `dtype`.
defineOp(`${DEQUANTIZE_LINEAR}(Tensor self, Tensor scale, Tensor? zero_point, ScalarType dtype, int axis=1, int block_size=0) -> Tensor`, (ctx) => {
  const x = ctx.tensor('self');
  if (!isQuantType(x.dtype)) ctx.fail(`self must have a quantized type, got ${x.dtype}`);
  const dtype = ctx.dtype('dtype');
  if (dtype === null || !FLOATS.has(dtype)) return ctx.fail(`dtype must be float32, float16 or bfloat16, got ${dtype}`);
  checkParams(ctx, x, x.dtype);
  return [tensorType(dtype, x.shape)];
});

// ---------------------------------------------------------------------------------------------
// PyTorch's quantized_decomposed ops

/** The float types PyTorch computes quantization parameters and dequantized values in. */
const TORCH_FLOATS: ReadonlySet<DType> = new Set<DType>(['float32', 'float64', 'float16', 'bfloat16']);

/** What PyTorch's _quant_min_max_bounds_check allows per dtype (iinfo, or int(finfo) for float8). */
export const TORCH_QUANT_BOUNDS: Readonly<Partial<Record<DType, readonly [number, number]>>> = {
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  float8e5m2: [-57344, 57344],
  float8e4m3fn: [-448, 448],
};

/** The quantized dtype, after PyTorch's bounds check of quant_min and quant_max against it. */
function torchQuantType(ctx: InferContext): DType {
  const dtype = ctx.dtype('dtype');
  const bounds = dtype === null ? undefined : TORCH_QUANT_BOUNDS[dtype];
  if (bounds === undefined) ctx.fail(`dtype ${dtype} is not a quantized type (${Object.keys(TORCH_QUANT_BOUNDS).join(', ')} are)`);
  const [qmin, qmax] = [ctx.int('quant_min'), ctx.int('quant_max')];
  if (qmin < bounds[0] || qmax > bounds[1]) ctx.fail(`quant_min ${qmin} and quant_max ${qmax} must lie in ${dtype}'s range [${bounds[0]}, ${bounds[1]}]`);
  if (qmin > qmax) ctx.fail(`quant_min ${qmin} is above quant_max ${qmax}`);
  return dtype!;
}

/** The float input of a quantize op: float32, or float16/bfloat16, which PyTorch casts to float32. */
function torchFloatInput(ctx: InferContext): TensorType {
  const x = ctx.tensor('input');
  if (!FLOATS.has(x.dtype)) ctx.fail(`input must be float32 (or float16/bfloat16), got ${x.dtype}`);
  return x;
}

/** The per-channel scales (and zero points) of `input` along `axis`. */
function checkChannels(ctx: InferContext, x: TensorType, zeroPointsOptional: boolean): void {
  const axis = normAxis(ctx, ctx.int('axis'), x.shape.length, 'axis');
  const scales = ctx.tensor('scales');
  if (!TORCH_FLOATS.has(scales.dtype)) ctx.fail(`scales must be float32, float64, float16 or bfloat16, got ${scales.dtype}`);
  const why = scaleShapeError(x.shape, scales.shape, axis, 0);
  if (why !== null || scales.shape.length !== 1) ctx.fail(`scales ${formatShape(scales.shape)}: ${why ?? 'must be 1-D'}`);
  const zp = zeroPointsOptional ? ctx.optTensor('zero_points') : ctx.tensor('zero_points');
  if (zp === null) return;
  if (!isInteger(zp.dtype) && zp.dtype !== 'float32' && zp.dtype !== 'float64') ctx.fail(`zero_points must be an integer (or float32/float64) tensor, got ${zp.dtype}`);
  if (!shapeEquals(zp.shape, scales.shape)) ctx.fail(`zero_points ${formatShape(zp.shape)} must have the scales' shape ${formatShape(scales.shape)}`);
}

/** The float output of a dequantize op: out_dtype, float32 when not given. */
function torchOutDType(ctx: InferContext): DType {
  const out = ctx.dtype('out_dtype') ?? 'float32';
  if (!TORCH_FLOATS.has(out)) ctx.fail(`out_dtype must be float32, float64, float16 or bfloat16, got ${out}`);
  return out;
}

/** A dequantize's input: of the quantized `dtype` it names. */
function torchQuantizedInput(ctx: InferContext): TensorType {
  const x = ctx.tensor('input');
  const dtype = torchQuantType(ctx);
  if (x.dtype !== dtype) ctx.fail(`input must have dtype ${dtype}, got ${x.dtype}`);
  return x;
}

defineOp(
  'quantized_decomposed.quantize_per_tensor.default(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor',
  (ctx) => {
    const x = torchFloatInput(ctx);
    ctx.float('scale');
    ctx.int('zero_point');
    return [tensorType(torchQuantType(ctx), x.shape)];
  },
);

defineOp(
  'quantized_decomposed.dequantize_per_tensor.default(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor',
  (ctx) => {
    const x = torchQuantizedInput(ctx);
    ctx.float('scale');
    ctx.int('zero_point');
    return [tensorType(torchOutDType(ctx), x.shape)];
  },
);

/** A `.tensor` overload's scale and zero point: one-element tensors (PyTorch asserts numel() == 1 and takes item()). */
function checkScalarTensors(ctx: InferContext): void {
  const scale = ctx.tensor('scale');
  const zp = ctx.tensor('zero_point');
  if (!TORCH_FLOATS.has(scale.dtype)) ctx.fail(`scale must be a float tensor, got ${scale.dtype}`);
  if (!isInteger(zp.dtype)) ctx.fail(`zero_point must be an integer tensor, got ${zp.dtype}`);
  for (const [name, t] of [['scale', scale], ['zero_point', zp]] as const) {
    if (!t.shape.every((d) => d === 1)) ctx.fail(`${name} ${formatShape(t.shape)} must hold one element`);
  }
}

defineOp(
  'quantized_decomposed.quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor',
  (ctx) => {
    const x = torchFloatInput(ctx);
    checkScalarTensors(ctx);
    return [tensorType(torchQuantType(ctx), x.shape)];
  },
);

defineOp(
  'quantized_decomposed.dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor',
  (ctx) => {
    const x = torchQuantizedInput(ctx);
    checkScalarTensors(ctx);
    return [tensorType(torchOutDType(ctx), x.shape)];
  },
);

defineOp(
  'quantized_decomposed.quantize_per_channel.default(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor',
  (ctx) => {
    const x = torchFloatInput(ctx);
    checkChannels(ctx, x, false);
    return [tensorType(torchQuantType(ctx), x.shape)];
  },
);

defineOp(
  'quantized_decomposed.dequantize_per_channel.default(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor',
  (ctx) => {
    const x = torchQuantizedInput(ctx);
    checkChannels(ctx, x, true);
    return [tensorType(torchOutDType(ctx), x.shape)];
  },
);
