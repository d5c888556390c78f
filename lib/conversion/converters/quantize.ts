/**
 * Converters of the quantization ops (lib/ir/ops/quantize.ts) into whole quantize and
 * dequantize layers (lib/conversion/impl/quantize.ts), so that the Network keeps its Q/DQ
 * structure and a GPU backend can compute in INT8/FP8/INT4.
 *
 * - `trt.quantize_linear` / `trt.dequantize_linear` (ONNX's ops) map one to one: their
 *   arithmetic is the layers'. Refused (the node falls back): quantized types the layers lack
 *   (int16, uint4, float8e5m2...), FP8 without saturation, and blocks that do not divide the
 *   axis (ONNX's shorter last block; TensorRT's blocks divide it).
 * - PyTorch's `quantized_decomposed` ops (int8/uint8): the scale becomes a float32 constant or
 *   tensor, the zero points the quantized type. PyTorch quantizes x · (1/scale), the layer
 *   x / scale, as Torch-TensorRT's converters map it: the two differ in the last bit of the
 *   quotient, so a value that lies within a float32 ulp of a half step may round to the
 *   neighbouring integer. A quant_min/quant_max range narrower than the type's is applied by
 *   clamping x to the range's preimage first, which gives exactly the clamped result.
 */
import type { DType } from '../../ir/dtype';
import type { Node, Value } from '../../ir/graph';
import { DEQUANTIZE_LINEAR, QUANTIZE_LINEAR } from '../../ir/ops/quantize';
import { isStatic } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import { readNumbers } from '../../kernels/access';
import { cast as castKernel } from '../../kernels/unary';
import type { NetTensor, QuantizedDType } from '../../network';
import type { ConversionContext } from '../context';
import type { QuantizeDescription } from '../types';
import { defineConverter, type Check } from '../define';
import { cast, trt } from '../impl/basic';
import { constantData, isConstant, optValueArg, outDType, valueArg } from '../impl/nn-util';
import { dequantize, quantize, type QuantLayout } from '../impl/quantize';

const LAYER_TYPES: readonly DType[] = ['int8', 'uint8', 'float8e4m3fn', 'int4'];
const TYPE_RANGES: Readonly<Partial<Record<DType, readonly [number, number]>>> = { int8: [-128, 127], uint8: [0, 255] };

const tensorOf = (ctx: ConversionContext, node: Node, name: string): NetTensor => ctx.tensor(valueArg(node, name));
const optTensorOf = (ctx: ConversionContext, node: Node, name: string): NetTensor | null => {
  const v = optValueArg(node, name);
  return v === null ? null : ctx.tensor(v);
};

/** The scale's axis in [0, rank) (0 for a per-tensor scale, which ignores it) and the block size. */
function layoutOf(node: Node, x: Value, scale: Value): QuantLayout {
  const rank = x.tensorType.shape.length;
  const axis = node.args.axis as number;
  return { axis: scale.tensorType.shape.length === 0 ? 0 : axis < 0 ? axis + rank : axis, blockSize: (node.args.block_size as number | undefined) ?? 0 };
}

/** A reason unless `dtype` is one the layers hold. */
const layerType = (dtype: DType, what: string): string | null =>
  LAYER_TYPES.includes(dtype) ? null : `${what} is ${dtype}; TensorRT's quantize and dequantize layers take ${LAYER_TYPES.join(', ')}`;

/** A per-channel op's `axis` in [0, rank) of its input. */
function channelAxis(node: Node, input: Value): number {
  const axis = node.args.axis as number;
  return axis < 0 ? axis + input.tensorType.shape.length : axis;
}

/** Blocks must divide a dim known at build (TensorRT's blocked quantization has no shorter last block). */
const blocksDivide: Check = (node) => {
  const x = valueArg(node, 'self');
  const scale = valueArg(node, 'scale');
  const { axis, blockSize } = layoutOf(node, x, scale);
  if (blockSize === 0 || scale.tensorType.shape.length === 0) return null;
  const d = x.tensorType.shape[axis]!;
  if (!isStatic(d)) return `a blocked quantization along axis ${axis} needs that dim known at build`;
  return d % blockSize === 0 ? null : `the block size ${blockSize} does not divide dim ${d} along axis ${axis} (TensorRT's blocks have no shorter last block)`;
};

/**
 * A reason unless the backend's engines hold `dtype` over a run-time value (the cuda backend:
 * int8 and uint8 only, SelectionSettings.activationQuantizedTypes); a constant input is
 * quantized or dequantized at build, so any type does.
 */
const heldOver = (v: Value, dtype: DType, settings: { activationQuantizedTypes?: readonly string[] }): string | null => {
  const held = settings.activationQuantizedTypes;
  if (held === undefined || held.includes(dtype) || isConstant(v)) return null;
  return `this backend's engines hold ${held.join(' and ')} quantized values over run-time tensors, not ${dtype}`;
};

/** Static sizes, -1 for a run-time one. */
const sizesOf = (v: Value): number[] => v.tensorType.shape.map((d) => (isStatic(d) ? d : -1));
const valuesOf = (v: Value): number[] => Array.from(readNumbers(constantData(v)));

/** ONNX's Q/DQ `node` as a backend's build rules see it (SelectionSettings.quantizeRefusal). */
function describeQuantize(node: Node): QuantizeDescription {
  const quantize = node.target === QUANTIZE_LINEAR;
  const x = valueArg(node, 'self');
  const scale = valueArg(node, 'scale');
  const zp = optValueArg(node, 'zero_point');
  const { axis, blockSize } = layoutOf(node, x, scale);
  const source = x.producer;
  const fromConstant = !quantize && source.kind === 'call' && source.target === QUANTIZE_LINEAR && isConstant(valueArg(source, 'self'));
  return {
    kind: quantize ? 'quantize' : 'dequantize',
    qType: quantize ? (node.args.dtype as string) : x.tensorType.dtype,
    floatType: quantize ? x.tensorType.dtype : outDType(node),
    shape: sizesOf(x),
    scaleDType: scale.tensorType.dtype,
    scaleRank: scale.tensorType.shape.length,
    scaleValues: isConstant(scale) ? valuesOf(scale) : null,
    ...(zp === null ? {} : { zeroPointValues: isConstant(zp) ? valuesOf(zp) : null }),
    constantData: isConstant(x),
    ...(fromConstant ? { quantizedFrom: describeQuantize(source) } : {}),
    axis,
    ...(blockSize === 0 || scale.tensorType.shape.length === 0 ? {} : { blockSize }),
  };
}

/** The backend's refusal of the node's form (the tensorrt backend: FP8/INT4 forms it cannot build). */
const backendTakes: Check = (node, settings) => settings.quantizeRefusal?.(describeQuantize(node)) ?? null;

defineConverter(
  QUANTIZE_LINEAR,
  (node, ctx) => {
    const layout = layoutOf(node, valueArg(node, 'self'), valueArg(node, 'scale'));
    return [quantize(ctx, tensorOf(ctx, node, 'self'), tensorOf(ctx, node, 'scale'), optTensorOf(ctx, node, 'zero_point'), node.args.dtype as QuantizedDType, layout)];
  },
  {
    dynamic: true,
    quantizedTypes: true,
    checks: [
      (node) => layerType(node.args.dtype as DType, 'the quantized type'),
      (node) => (node.args.dtype === 'float8e4m3fn' && node.args.saturate === false ? "TensorRT's FP8 quantization always saturates (saturate=0 is not supported)" : null),
      blocksDivide,
      (node, settings) => heldOver(valueArg(node, 'self'), node.args.dtype as DType, settings),
      backendTakes,
    ],
  },
);

defineConverter(
  DEQUANTIZE_LINEAR,
  (node, ctx) => {
    const layout = layoutOf(node, valueArg(node, 'self'), valueArg(node, 'scale'));
    const to = outDType(node) as 'float32' | 'float16' | 'bfloat16';
    return [dequantize(ctx, tensorOf(ctx, node, 'self'), tensorOf(ctx, node, 'scale'), optTensorOf(ctx, node, 'zero_point'), to, layout)];
  },
  {
    dynamic: true,
    quantizedTypes: true,
    checks: [
      (node) => layerType(valueArg(node, 'self').tensorType.dtype, 'the quantized input'),
      blocksDivide,
      (node, settings) => heldOver(valueArg(node, 'self'), valueArg(node, 'self').tensorType.dtype, settings),
      backendTakes,
    ],
  },
);

// ---------------------------------------------------------------------------------------------
// PyTorch's quantized_decomposed ops

const torchType: Check = (node) => (TYPE_RANGES[node.args.dtype as DType] === undefined ? `PyTorch's ${String(node.args.dtype)} quantization is not a TensorRT quantize layer (int8 and uint8 are)` : null);

/** Per-channel scales and zero points must be constants where a narrowed range is clamped with them. */
const channelConstants: Check = (node) => {
  const [lo, hi] = TYPE_RANGES[node.args.dtype as DType] ?? [0, 0];
  if (node.args.quant_min === lo && node.args.quant_max === hi) return null;
  return isConstant(node.args.scales) && isConstant(node.args.zero_points) ? null : 'a quant_min/quant_max range narrower than the type needs constant scales and zero points';
};

const scalarZeroPoint: Check = (node) => {
  const [lo, hi] = TYPE_RANGES[node.args.dtype as DType] ?? [0, 0];
  const zp = node.args.zero_point as number;
  return zp >= lo && zp <= hi ? null : `zero_point ${zp} lies outside ${String(node.args.dtype)}'s range, which a quantize layer's zero point cannot`;
};

/** A per-tensor op's scale (float32) and zero point (the quantized type) as 0-d constants. */
function perTensorConstants(ctx: ConversionContext, scale: number, zeroPoint: number, dtype: QuantizedDType): [NetTensor, NetTensor] {
  return [ctx.constant(Tensor.from('float32', [], [scale]), ctx.name('scale')), ctx.constant(Tensor.from(dtype, [], [zeroPoint]), ctx.name('zero_point'))];
}

/** PyTorch's input in float32 (it casts float16 and bfloat16 inputs up). */
const float32Input = (ctx: ConversionContext, node: Node): NetTensor => cast(ctx, tensorOf(ctx, node, 'input'), 'float32', 'to_float32');

/** Zero points as the quantized type: a constant converted at build, or a cast layer. */
function zeroPointsOf(ctx: ConversionContext, v: Value, dtype: QuantizedDType): NetTensor {
  if (isConstant(v)) return ctx.constant(castKernel(constantData(v), dtype), ctx.name('zero_points'));
  return cast(ctx, ctx.tensor(v), dtype, 'zero_points');
}

/**
 * x clamped to the preimage [(qmin − zp)·s, (qmax − zp)·s] of a narrowed range (per element of
 * the constant scales and zero points, laid out along `axis`), or x itself for the full range.
 */
function clampToRange(ctx: ConversionContext, node: Node, x: NetTensor, scales: readonly number[], zeroPoints: readonly number[], axis: number): NetTensor {
  const dtype = node.args.dtype as DType;
  const [lo, hi] = TYPE_RANGES[dtype]!;
  const [qmin, qmax] = [node.args.quant_min as number, node.args.quant_max as number];
  if (qmin === lo && qmax === hi) return x;
  const bound = (q: number): number[] => scales.map((s, i) => Math.fround((q - zeroPoints[i]!) * s));
  if (scales.length === 1 && node.args.scales === undefined) {
    return ctx.add({ kind: 'activation', type: 'clip', alpha: bound(qmin)[0]!, beta: bound(qmax)[0]! }, [x], 'quant_range');
  }
  const shape = x.shape.map((_, i) => (i === axis ? scales.length : 1));
  const at = (q: number, role: string): NetTensor => ctx.constant(Tensor.from('float32', shape, bound(q)), ctx.name(role));
  const above = ctx.add({ kind: 'elementwise', op: 'max' }, [x, at(qmin, 'quant_min')], 'quant_range_min');
  return ctx.add({ kind: 'elementwise', op: 'min' }, [above, at(qmax, 'quant_max')], 'quant_range');
}

defineConverter(
  'quantized_decomposed.quantize_per_tensor.default',
  (node, ctx) => {
    const dtype = node.args.dtype as QuantizedDType;
    const scale = Math.fround(node.args.scale as number);
    const zp = node.args.zero_point as number;
    const x = clampToRange(ctx, node, float32Input(ctx, node), [scale], [zp], 0);
    const [scaleT, zpT] = perTensorConstants(ctx, scale, zp, dtype);
    return [quantize(ctx, x, scaleT, zpT, dtype, { axis: 0, blockSize: 0 })];
  },
  { dynamic: true, checks: [torchType, scalarZeroPoint, (node) => ((node.args.scale as number) > 0 ? null : `scale ${String(node.args.scale)} is not positive`)] },
);

defineConverter(
  'quantized_decomposed.quantize_per_channel.default',
  (node, ctx) => {
    const dtype = node.args.dtype as QuantizedDType;
    const input = valueArg(node, 'input');
    const axis = channelAxis(node, input);
    const scalesV = valueArg(node, 'scales');
    const zpV = valueArg(node, 'zero_points');
    const constants = isConstant(scalesV) && isConstant(zpV);
    const x = constants
      ? clampToRange(ctx, node, float32Input(ctx, node), Array.from(readNumbers(constantData(scalesV)), Math.fround), Array.from(readNumbers(constantData(zpV))), axis)
      : float32Input(ctx, node);
    const scales = cast(ctx, ctx.tensor(scalesV), 'float32', 'scales');
    return [quantize(ctx, x, scales, zeroPointsOf(ctx, zpV, dtype), dtype, { axis, blockSize: 0 })];
  },
  { dynamic: true, checks: [torchType, channelConstants] },
);

defineConverter(
  'quantized_decomposed.dequantize_per_tensor.default',
  (node, ctx) => {
    const dtype = node.args.dtype as QuantizedDType;
    const [scale, zp] = perTensorConstants(ctx, Math.fround(node.args.scale as number), node.args.zero_point as number, dtype);
    const to = trt(ctx, outDType(node)) as 'float32' | 'float16' | 'bfloat16';
    return [dequantize(ctx, tensorOf(ctx, node, 'input'), scale, zp, to, { axis: 0, blockSize: 0 })];
  },
  { dynamic: true, checks: [torchType, scalarZeroPoint] },
);

// (input − zero_points) · scales is rounded to the scales' type, then cast to out_dtype: the
// layer computes in float32 and rounds to its type, so it outputs the scales' type and a cast
// follows (exact products of int8 values and float16/bfloat16 scales are rounded once either way).
defineConverter(
  'quantized_decomposed.dequantize_per_channel.default',
  (node, ctx) => {
    const dtype = node.args.dtype as QuantizedDType;
    const input = valueArg(node, 'input');
    const axis = channelAxis(node, input);
    const scalesV = valueArg(node, 'scales');
    const scales = ctx.tensor(scalesV);
    const zpV = optValueArg(node, 'zero_points');
    const zp = zpV === null ? null : zeroPointsOf(ctx, zpV, dtype);
    const computed = trt(ctx, scalesV.tensorType.dtype) as 'float32' | 'float16' | 'bfloat16';
    const y = dequantize(ctx, ctx.tensor(input), scales, zp, computed, { axis, blockSize: 0 });
    return [cast(ctx, y, outDType(node), 'out_dtype')];
  },
  { dynamic: true, checks: [torchType] },
);
