/**
 * IQuantizeLayer and IDequantizeLayer as ONNX QuantizeLinear and DequantizeLinear (opset 13
 * for int8/uint8 per tensor or per axis; 19 for float8e4m3fn; 21 for int4 and blocked scales:
 * ./index.ts picks the model's opset from the network). The layers' arithmetic
 * (lib/network/layers.ts) is kept exactly:
 * - quantize divides in x's type. onnxruntime's float16 kernels divide in float32, so a
 *   float16/bfloat16 x is divided in float32 (correctly rounded), rounded to its type by two
 *   casts, and quantized by a scale of ones; a float32 x goes to QuantizeLinear as it is.
 * - dequantize computes in float32 and rounds once: the scale goes in as float32 (exact), the
 *   float32 result is cast to the layer's type.
 * A missing zero point becomes zeros of the quantized type: QuantizeLinear takes its output
 * type from the zero point.
 */
import { Tensor } from '../../../ir/tensor';
import type { LowerContext, Lowering } from './context';
import { onnxDType } from './onnx-graph';

/** The axis and block_size attributes of a layer reading its scale as input 1 (none for a per-tensor scale). */
function layoutAttrs(p: { axis: number; blockSize?: number }, c: LowerContext): Record<string, number | undefined> {
  if (c.inputShape(1).length === 0) return {};
  return { axis: p.axis, block_size: p.blockSize };
}

/** The scale's shape, which the lowering needs known to make constants of it. */
function staticScaleShape(c: LowerContext): number[] {
  const shape = c.inputShape(1);
  if (shape.some((d) => d < 0)) c.unsupported(`a scale of dims known only at run time ([${shape}]) is not supported here`);
  return [...shape];
}

/** The scale (float32) laid out to broadcast against x: per axis along its axis, per block repeated blockSize times along it. */
function broadcastScale(scale: string, p: { axis: number; blockSize?: number }, c: LowerContext): string {
  const shape = staticScaleShape(c);
  if (shape.length === 0) return scale;
  const rank = c.inputShape(0).length;
  const g = c.g;
  if (p.blockSize === undefined) return g.op('Reshape', [scale, g.int64([shape[0]!, ...new Array<number>(rank - 1 - p.axis).fill(1)])]);
  const split = [...shape.slice(0, p.axis + 1), 1, ...shape.slice(p.axis + 1)];
  const repeated = g.op('Expand', [g.op('Reshape', [scale, g.int64(split)]), g.int64(split.map((d, i) => (i === p.axis + 1 ? p.blockSize! : d)))]);
  return g.op('Reshape', [repeated, g.int64(shape.map((d, i) => (i === p.axis ? d * p.blockSize! : d)))]);
}

export const quantize: Lowering<'quantize'> = (p, c) => {
  const g = c.g;
  const dtype = c.inputDType(0);
  const shape = staticScaleShape(c);
  const zeroPoint = c.has(2) ? c.input(2) : g.initializer(new Tensor(p.to, shape), g.fresh('zero_point'));
  if (dtype === 'float32') return [g.op('QuantizeLinear', [c.input(0), c.input(1), zeroPoint], layoutAttrs(p, c))];
  const scale = g.cast(c.input(1), dtype, 'float32');
  const quotient = g.op('Div', [g.cast(c.input(0), dtype, 'float32'), broadcastScale(scale, p, c)]);
  const rounded = g.cast(g.cast(quotient, 'float32', dtype), dtype, 'float32');
  const ones = g.initializer(Tensor.from('float32', shape, new Array<number>(shape.reduce((n, d) => n * d, 1)).fill(1)), g.fresh('ones'));
  return [g.op('QuantizeLinear', [rounded, ones, zeroPoint], layoutAttrs(p, c))];
};

export const dequantize: Lowering<'dequantize'> = (p, c) => {
  const g = c.g;
  const scale = g.cast(c.input(1), c.inputDType(1), 'float32');
  const inputs = c.has(2) ? [c.input(0), scale, c.input(2)] : [c.input(0), scale];
  const y = g.op('DequantizeLinear', inputs, layoutAttrs(p, c));
  return [p.to === 'float32' ? y : g.op('Cast', [y], { to: onnxDType(p.to) })];
};
