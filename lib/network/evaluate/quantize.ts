/**
 * IQuantizeLayer and IDequantizeLayer, with ONNX's arithmetic (lib/kernels/quantize.ts):
 * quantize rounds x / scale once to x's type, then half to even, adds the zero point and
 * saturates (float8e4m3fn to ±448); dequantize computes (q − zero point) · scale in float32 and
 * rounds once to its output type. Scales per tensor, per axis or per block.
 */
import type { Tensor } from '../../ir/tensor';
import { dequantizeLinear, quantizeLinear, type RoundingDType } from '../../kernels/quantize';
import { badData, fmtShape, required, type Executor, type LayerContext } from './common';

/** The shapes inferLayer could not compare before the run (dims known only now). */
function checkRunTimeShapes(layer: LayerContext, x: Tensor, scale: Tensor, axis: number, blockSize: number): void {
  if (scale.rank === 0) return;
  const d = x.shape[axis]!;
  const fits =
    blockSize === 0
      ? scale.rank === 1 && scale.shape[0] === d
      : d % blockSize === 0 && scale.rank === x.rank && scale.shape.every((s, i) => (i === axis ? s === d / blockSize : s === x.shape[i]));
  if (!fits) badData(layer, `scale ${fmtShape(scale.shape)} does not fit input ${fmtShape(x.shape)} along axis ${axis}${blockSize > 0 ? ` in blocks of ${blockSize}` : ''}`);
}

export const quantize: Executor<'quantize'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const scale = required(inputs, 1, layer);
  const blockSize = p.blockSize ?? 0;
  checkRunTimeShapes(layer, x, scale, p.axis, blockSize);
  return [quantizeLinear(x, scale, inputs[2] ?? null, p.to, { axis: p.axis, blockSize, saturate: true, precision: x.dtype as RoundingDType })];
};

export const dequantize: Executor<'dequantize'> = (p, inputs, layer) => {
  const q = required(inputs, 0, layer);
  const scale = required(inputs, 1, layer);
  const blockSize = p.blockSize ?? 0;
  checkRunTimeShapes(layer, q, scale, p.axis, blockSize);
  return [dequantizeLinear(q, scale, inputs[2] ?? null, p.to, { axis: p.axis, blockSize })];
};
