/**
 * ONNX's linear (de)quantization ops. QuantizeLinear and DequantizeLinear (opsets 10-25) become
 * the quantization ops `trt.quantize_linear` / `trt.dequantize_linear` (lib/ir/ops/quantize.ts),
 * which convert into whole quantize/dequantize layers, for int8, uint8, float8e4m3fn and int4
 * (TensorRT's quantized types), for blocked scales (block_size, opset 21) of any type, and
 * where output_dtype or precision (opsets 21, 23) decide the type. The other forms (16-, 4- and
 * 2-bit integers, the other float8 types and float4e2m1, per tensor or per axis) stay composed
 * of casts and float arithmetic as ONNX's reference defines them, as do DynamicQuantizeLinear,
 * QLinearMatMul and MatMulInteger (int8/uint8 data).
 *
 * Attributes by opset: axis from 13, saturate from 19, block_size and output_dtype from 21,
 * precision (QuantizeLinear) from 23 and output_dtype (DequantizeLinear) from 23; an attribute
 * of a later opset is left unread, and the import refuses it by name.
 */
import type { DType } from '../../../ir/dtype';
import { isMiniFloat, miniFloatMax, type MiniFloatDType } from '../../../ir/low-precision';
import type { Value } from '../../../ir/graph';
import { DEQUANTIZE_LINEAR, QUANTIZE_LINEAR } from '../../../ir/ops/quantize';
import { isQuantType, QUANT_INTEGER_RANGES } from '../../../ir/quantization';
import { isStaticShape } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { dtypeFromOnnx } from '../tensor-proto';

// MatMulInteger and QLinearMatMul stay 8-bit, as ONNX defines them; QuantizeLinear and
// DequantizeLinear also take the 16-, 4- and 2-bit integers (float32 holds their values exactly).
const RANGES: Partial<Record<DType, readonly [number, number]>> = { uint8: [0, 255], int8: [-128, 127] };
const WIDE_RANGES = QUANT_INTEGER_RANGES;

function range(ctx: OnnxContext, dtype: DType, table: Partial<Record<DType, readonly [number, number]>> = RANGES): readonly [number, number] {
  const r = table[dtype];
  if (r === undefined) ctx.unsupported(`quantized type ${dtype} is not supported (${Object.keys(table).join(', ')} are)`);
  return r;
}

/** A per-tensor (0-d or [1]) or per-axis (1-D) parameter shaped to broadcast along `axis` of a rank-`rank` tensor. */
function alongAxis(ctx: OnnxContext, v: Value, axis: number, rank: number): Value {
  const shape = v.tensorType.shape;
  if (shape.length === 0 || (shape.length === 1 && shape[0] === 1)) return shape.length === 0 ? v : ctx.emit('aten.squeeze.dims', { self: v, dim: [0] });
  if (shape.length !== 1) ctx.unsupported(`blocked quantization (a ${shape.length}-D scale) is not supported`);
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) ctx.bad(`axis ${axis} is out of range for rank ${rank}`);
  let out = v;
  for (let i = a + 1; i < rank; i++) out = ctx.emit('aten.unsqueeze.default', { self: out, dim: -1 });
  return out;
}

const f32 = (ctx: OnnxContext, v: Value): Value => (v.tensorType.dtype === 'float32' ? v : ctx.cast(v, 'float32'));

/** saturate(round_half_even(x) + zero point) in the zero point's type. */
function saturate(ctx: OnnxContext, x: Value, zp: Value | null, dtype: DType): Value {
  const [lo, hi] = range(ctx, dtype, WIDE_RANGES);
  let q = ctx.emit('aten.round.default', { self: x });
  if (zp !== null) q = ctx.emit('aten.add.Tensor', { self: q, other: ctx.cast(zp, q.tensorType.dtype) });
  return ctx.cast(ctx.emit('aten.clamp.default', { self: q, min: lo, max: hi }), dtype);
}

/**
 * A float zero point (float8, float4e2m1) must be 0, as ONNX says; only a constant one can be
 * checked at import, so another is refused.
 */
function checkFloatZeroPoint(ctx: OnnxContext, i: number): void {
  if (!ctx.hasInput(i)) return;
  const c = ctx.constant(i);
  if (c === null) ctx.needsKnown(`a ${ctx.inputType(i).dtype} zero point (input ${i}) must be a constant, known to be 0`);
  if (c.toArray().some((v) => v !== 0)) ctx.bad(`a ${c.dtype} zero point (input ${i}) must be 0`);
}

/**
 * x / scale cast into a float type as ONNX's reference does: float8 with `saturate` clipped to
 * ±max first (NaN kept), float4e2m1 saturating either way.
 */
function quantizeToFloat(ctx: OnnxContext, q: Value, dtype: MiniFloatDType, saturate: boolean): Value {
  if (!saturate || dtype === 'float4e2m1') return ctx.cast(q, dtype);
  const max = miniFloatMax(dtype);
  return ctx.cast(ctx.emit('aten.clamp.default', { self: q, min: -max, max }), dtype);
}

/** The types TensorRT's quantize and dequantize layers hold: these always take the quantization ops. */
const LAYER_TYPES: ReadonlySet<DType> = new Set<DType>(['int8', 'uint8', 'float8e4m3fn', 'int4']);

const FLOATS: ReadonlySet<DType> = new Set<DType>(['float32', 'float16', 'bfloat16']);

/** The axis (opset 13+) and block size (opset 21+) attributes. */
function layoutAttrs(ctx: OnnxContext): { axis: number; blockSize: number } {
  const axis = ctx.opset >= 13 ? ctx.attrInt('axis', 1) : 1;
  const blockSize = ctx.opset >= 21 ? ctx.attrInt('block_size', 0) : 0;
  if (blockSize < 0) ctx.bad(`block_size must be 0 (none) or positive, got ${blockSize}`);
  return { axis, blockSize };
}

/** A type attribute (a TensorProto.DataType; 0 means not given), or null. */
function typeAttr(ctx: OnnxContext, name: string, fromOpset: number): DType | null {
  if (ctx.opset < fromOpset || !ctx.has(name)) return null;
  const code = ctx.attrInt(name);
  return code === 0 ? null : dtypeFromOnnx(code, `${ctx.where}: attribute ${name}`);
}

/** Whether a scale of `shape` holds one element: ONNX's reference applies it per tensor, whatever the block size. */
const oneElement = (shape: Value['tensorType']['shape']): boolean => isStaticShape(shape) && shape.length > 0 && shape.every((d) => d === 1);

/** A scale or zero point as the quantization ops take it: a one-element one as 0-d. */
function asParam(ctx: OnnxContext, v: Value): Value {
  return oneElement(v.tensorType.shape) ? ctx.emit('aten.reshape.default', { self: v, shape: [] }) : v;
}

/** The zero point input of a quantization op: null for the float types (checked to be 0 and left out). */
function zeroPointParam(ctx: OnnxContext, quantized: DType): Value | null {
  if (isMiniFloat(quantized)) {
    checkFloatZeroPoint(ctx, 2);
    return null;
  }
  return ctx.hasInput(2) ? asParam(ctx, ctx.input(2)) : null;
}

defineOnnxOp('QuantizeLinear', (ctx) => {
  const { axis, blockSize } = layoutAttrs(ctx);
  // saturate only changes a float8 result (integers always saturate).
  const saturating = ctx.opset >= 19 ? ctx.attrInt('saturate', 1) !== 0 : true;
  const outputDType = typeAttr(ctx, 'output_dtype', 21);
  const precision = typeAttr(ctx, 'precision', 23);
  const zpType = ctx.hasInput(2) ? ctx.inputType(2).dtype : null;
  if (outputDType !== null && zpType !== null && outputDType !== zpType) ctx.bad(`output_dtype ${outputDType} differs from the zero point's type ${zpType}`);
  const dtype: DType = zpType ?? outputDType ?? 'uint8';
  if (!isQuantType(dtype)) ctx.unsupported(`quantized type ${dtype} is not supported`);
  if (!LAYER_TYPES.has(dtype) && blockSize === 0 && outputDType === null && precision === null) return [composedQuantize(ctx, axis, saturating)];
  const scale = asParam(ctx, ctx.input(1));
  const scaleType = scale.tensorType.dtype;
  // The division's precision: the precision attribute, else the scale's type (ONNX's rule).
  const divideIn = precision ?? (FLOATS.has(scaleType) ? scaleType : 'float32');
  if (!FLOATS.has(divideIn)) ctx.unsupported(`precision ${divideIn} is not supported (float32, float16 and bfloat16 are)`);
  const zeroPoint = zeroPointParam(ctx, dtype);
  const x = ctx.input(0);
  return [
    ctx.emit(QUANTIZE_LINEAR, {
      self: x.tensorType.dtype === divideIn ? x : ctx.cast(x, divideIn),
      scale: scaleType === divideIn ? scale : ctx.cast(scale, divideIn),
      zero_point: zeroPoint,
      dtype,
      axis,
      block_size: scale.tensorType.shape.length === 0 ? 0 : blockSize,
      saturate: saturating,
    }),
  ];
});

/** QuantizeLinear of the types TensorRT lacks, per tensor or per axis, as casts and float arithmetic. */
function composedQuantize(ctx: OnnxContext, axis: number, saturating: boolean): Value {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  const zpType = ctx.hasInput(2) ? ctx.inputType(2).dtype : null;
  if (zpType !== null && isMiniFloat(zpType)) {
    checkFloatZeroPoint(ctx, 2);
    const scale = alongAxis(ctx, ctx.input(1), axis, rank);
    return quantizeToFloat(ctx, ctx.emit('aten.div.Tensor', { self: f32(ctx, x), other: f32(ctx, scale) }), zpType, saturating);
  }
  const zp = ctx.hasInput(2) ? alongAxis(ctx, ctx.input(2), axis, rank) : null;
  const dtype: DType = zp?.tensorType.dtype ?? 'uint8';
  const scale = alongAxis(ctx, ctx.input(1), axis, rank);
  return saturate(ctx, ctx.emit('aten.div.Tensor', { self: f32(ctx, x), other: f32(ctx, scale) }), zp, dtype);
}

/** (x - zero point) * scale in float32. */
function dequantize(ctx: OnnxContext, x: Value, scale: Value, zp: Value | null): Value {
  // float32 holds every float8 and float4e2m1 value exactly.
  if (!isMiniFloat(x.tensorType.dtype)) range(ctx, x.tensorType.dtype === 'int32' ? 'int8' : x.tensorType.dtype, WIDE_RANGES);
  let d = f32(ctx, x);
  if (zp !== null) d = ctx.emit('aten.sub.Tensor', { self: d, other: f32(ctx, zp) });
  return ctx.emit('aten.mul.Tensor', { self: d, other: f32(ctx, scale) });
}

defineOnnxOp('DequantizeLinear', (ctx) => {
  const { axis, blockSize } = layoutAttrs(ctx);
  const outputDType = typeAttr(ctx, 'output_dtype', 23);
  const x = ctx.input(0);
  const xType = x.tensorType.dtype;
  if (!LAYER_TYPES.has(xType) && blockSize === 0 && outputDType === null) return [composedDequantize(ctx, x, axis)];
  if (!isQuantType(xType)) ctx.unsupported(`dequantizing ${xType} ${blockSize > 0 ? 'in blocks ' : ''}is not supported`);
  let scale = asParam(ctx, ctx.input(1));
  const scaleType = scale.tensorType.dtype;
  const out = outputDType ?? (FLOATS.has(scaleType) ? scaleType : ctx.bad(`a ${scaleType} scale needs output_dtype`));
  if (!FLOATS.has(out)) ctx.unsupported(`output_dtype ${out} is not supported (float32, float16 and bfloat16 are)`);
  // float32 holds every float8e8m0 scale exactly.
  if (!FLOATS.has(scaleType)) scale = ctx.cast(scale, 'float32');
  return [
    ctx.emit(DEQUANTIZE_LINEAR, {
      self: x,
      scale,
      zero_point: zeroPointParam(ctx, xType),
      dtype: out,
      axis,
      block_size: scale.tensorType.shape.length === 0 ? 0 : blockSize,
    }),
  ];
});

/** DequantizeLinear of the types TensorRT lacks (and int32), per tensor or per axis, in float32 arithmetic. */
function composedDequantize(ctx: OnnxContext, x: Value, axis: number): Value {
  const rank = x.tensorType.shape.length;
  const scale = alongAxis(ctx, ctx.input(1), axis, rank);
  if (isMiniFloat(x.tensorType.dtype)) checkFloatZeroPoint(ctx, 2);
  const zp = ctx.hasInput(2) && !isMiniFloat(x.tensorType.dtype) ? alongAxis(ctx, ctx.input(2), axis, rank) : null;
  const y = dequantize(ctx, x, scale, zp);
  return y.tensorType.dtype === scale.tensorType.dtype ? y : ctx.cast(y, scale.tensorType.dtype);
}

// y_scale = (max(0, x) - min(0, x)) / 255, zero point = saturate(round(-min / y_scale)), y = quantize(x).
defineOnnxOp('DynamicQuantizeLinear', (ctx) => {
  const x = f32(ctx, ctx.input(0));
  const zero = ctx.constantValue(Tensor.from('float32', [], [0]), 'zero');
  const hi = ctx.emit('aten.maximum.default', { self: ctx.emit('aten.amax.default', { self: x, dim: [], keepdim: false }), other: zero });
  const lo = ctx.emit('aten.minimum.default', { self: ctx.emit('aten.amin.default', { self: x, dim: [], keepdim: false }), other: zero });
  const scale = ctx.emit('aten.div.Scalar', { self: ctx.emit('aten.sub.Tensor', { self: hi, other: lo }), other: 255 });
  const zpFloat = ctx.emit('aten.div.Tensor', { self: ctx.emit('aten.neg.default', { self: lo }), other: scale });
  const zp = saturate(ctx, zpFloat, null, 'uint8');
  return [saturate(ctx, ctx.emit('aten.div.Tensor', { self: x, other: scale }), zp, 'uint8'), scale, zp];
});

/** (a - a_zero_point) @ (b - b_zero_point) in int32, as MatMulInteger. */
function integerMatmul(ctx: OnnxContext, a: Value, aZp: Value | null, b: Value, bZp: Value | null): Value {
  range(ctx, a.tensorType.dtype);
  range(ctx, b.tensorType.dtype);
  const shifted = (v: Value, zp: Value | null): Value => {
    const w = ctx.cast(v, 'float64');
    return zp === null ? w : ctx.emit('aten.sub.Tensor', { self: w, other: ctx.cast(zp, 'float64') });
  };
  // Products of 8-bit values summed in float64 are exact integers.
  return ctx.emit('aten.matmul.default', { self: shifted(a, aZp), other: shifted(b, bZp) });
}

/** A zero point along the row axis of a (axis -2) or the column axis of b (axis -1). */
function matmulZeroPoint(ctx: OnnxContext, i: number, forB: boolean, rank: number): Value | null {
  if (!ctx.hasInput(i)) return null;
  const zp = ctx.input(i);
  const shape = zp.tensorType.shape;
  if (shape.length === 0 || (shape.length === 1 && shape[0] === 1)) return alongAxis(ctx, zp, 0, 1);
  return alongAxis(ctx, zp, forB ? rank - 1 : rank - 2, rank);
}

defineOnnxOp('MatMulInteger', (ctx) => {
  const a = ctx.input(0);
  const b = ctx.input(1);
  const aZp = matmulZeroPoint(ctx, 2, false, a.tensorType.shape.length);
  const bZp = matmulZeroPoint(ctx, 3, true, b.tensorType.shape.length);
  return [ctx.cast(integerMatmul(ctx, a, aZp, b, bZp), 'int32')];
});

defineOnnxOp('QLinearMatMul', (ctx) => {
  const a = ctx.input(0);
  const b = ctx.input(3);
  const scales = [1, 4, 6].map((i) => ctx.constant(i));
  if (scales.some((s) => s !== null && s.size !== 1)) ctx.unsupported('a_scale, b_scale and y_scale must be per-tensor (one value each)');
  if (scales.some((s) => s === null)) ctx.needsKnown('a_scale, b_scale and y_scale must be per-tensor constants');
  const [as, bs, ys] = scales.map((s) => s!.toArray()[0]!);
  // As ONNX's reference: a_scale * b_scale / y_scale in the scales' precision, applied in float64.
  const dtype = scales[0]!.dtype;
  const round = (v: number): number => (dtype === 'float32' ? Math.fround(v) : Tensor.from(dtype, [], [v]).toArray()[0]!);
  const factor = round(round(as! * bs!) / ys!);
  const c = integerMatmul(ctx, a, matmulZeroPoint(ctx, 2, false, a.tensorType.shape.length), b, matmulZeroPoint(ctx, 5, true, b.tensorType.shape.length));
  const y = ctx.emit('aten.mul.Scalar', { self: c, other: factor });
  const zp = ctx.hasInput(7) ? ctx.input(7) : null;
  return [saturate(ctx, y, zp === null ? null : alongAxis(ctx, zp, 0, 1), zp?.tensorType.dtype ?? a.tensorType.dtype)];
});
