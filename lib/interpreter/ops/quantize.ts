/** Interpreter implementations of lib/ir/ops/quantize.ts. */
import type { DType } from '../../ir/dtype';
import type { Tensor } from '../../ir/tensor';
import { fromNumbers, readNumbers } from '../../kernels/access';
import { dequantizeLinear, quantizeLinear, roundTo, scaleIndex, torchQuantize, type RoundingDType } from '../../kernels/quantize';
import { defineImpl, type RuntimeArg } from '../registry';

/** The axis argument in [0, rank) (a per-tensor scale ignores it). */
const axisOf = (a: Readonly<Record<string, RuntimeArg>>, x: Tensor): number => {
  const axis = a.axis as number;
  return axis < 0 ? axis + x.rank : axis;
};

defineImpl('trt.quantize_linear', (a) => {
  const x = a.self as Tensor;
  return [
    quantizeLinear(x, a.scale as Tensor, (a.zero_point as Tensor | null) ?? null, a.dtype as DType, {
      axis: axisOf(a, x),
      blockSize: a.block_size as number,
      saturate: a.saturate as boolean,
      precision: x.dtype as RoundingDType,
    }),
  ];
});

defineImpl('trt.dequantize_linear', (a) => {
  const q = a.self as Tensor;
  return [dequantizeLinear(q, a.scale as Tensor, (a.zero_point as Tensor | null) ?? null, a.dtype as DType, { axis: axisOf(a, q), blockSize: a.block_size as number })];
});

// PyTorch computes float32, float16 and bfloat16 arithmetic in float32 ("opmath") and rounds
// the result to the tensor's type; float64 in float64.
const opmath = (dtype: DType): RoundingDType => (dtype === 'float64' ? 'float64' : 'float32');

const bounds = (a: Readonly<Record<string, RuntimeArg>>): readonly [number, number] => [a.quant_min as number, a.quant_max as number];

// clamp(round(input * (1.0 / scale)) + zero_point): the Python-float 1 / scale is rounded to
// float32 where it multiplies the float32 input.
function quantizePerTensor(a: Readonly<Record<string, RuntimeArg>>): Tensor[] {
  const x = a.input as Tensor;
  const inv = [Math.fround(1 / (a.scale as number))];
  return [torchQuantize(x, inv, [a.zero_point as number], () => 0, bounds(a), a.dtype as DType, 'float32')];
}
defineImpl('quantized_decomposed.quantize_per_tensor.default', quantizePerTensor);

/** A `.tensor` overload's arguments with the scale and zero point as the numbers they hold (PyTorch's item()). */
const withItems = (a: Readonly<Record<string, RuntimeArg>>): Readonly<Record<string, RuntimeArg>> => ({
  ...a,
  scale: readNumbers(a.scale as Tensor)[0]!,
  zero_point: readNumbers(a.zero_point as Tensor)[0]!,
});
defineImpl('quantized_decomposed.quantize_per_tensor.tensor', (a) => quantizePerTensor(withItems(a)));

// clamp(round(input * (1.0 / scales)) + zero_points) along axis: 1 / scales is a tensor of the
// scales' type, and the product is computed in the type float32 and that type promote to.
defineImpl('quantized_decomposed.quantize_per_channel.default', (a) => {
  const x = a.input as Tensor;
  const scales = a.scales as Tensor;
  const sd = scales.dtype as RoundingDType;
  const inv = Array.from(readNumbers(scales), (s) => roundTo(sd, roundTo(opmath(sd), 1 / s)));
  const index = scaleIndex(x.shape, scales.shape, axisOf(a, x), 0);
  return [torchQuantize(x, inv, readNumbers(a.zero_points as Tensor), index, bounds(a), a.dtype as DType, sd === 'float64' ? 'float64' : 'float32')];
});

// (input.to(out_dtype) - zero_point) * scale, each step in out_dtype's opmath, rounded to out_dtype.
function dequantizePerTensor(a: Readonly<Record<string, RuntimeArg>>): Tensor[] {
  const q = a.input as Tensor;
  const out = ((a.out_dtype as DType | null) ?? 'float32') as RoundingDType;
  const m = opmath(out);
  const [zp, scale] = [a.zero_point as number, roundTo(m, a.scale as number)];
  const values = Array.from(readNumbers(q), (v) => {
    const d = roundTo(out, roundTo(m, roundTo(out, v) - zp));
    return roundTo(out, roundTo(m, d * scale));
  });
  return [fromNumbers(out, q.shape, values)];
}
defineImpl('quantized_decomposed.dequantize_per_tensor.default', dequantizePerTensor);
defineImpl('quantized_decomposed.dequantize_per_tensor.tensor', (a) => dequantizePerTensor(withItems(a)));

// (input - zero_points) * scales along axis: the difference is exact (an integer tensor), the
// product is rounded to the scales' type, then cast to out_dtype.
defineImpl('quantized_decomposed.dequantize_per_channel.default', (a) => {
  const q = a.input as Tensor;
  const scales = a.scales as Tensor;
  const sd = scales.dtype as RoundingDType;
  const out = ((a.out_dtype as DType | null) ?? 'float32') as RoundingDType;
  const sv = readNumbers(scales);
  const zv = a.zero_points === null || a.zero_points === undefined ? null : readNumbers(a.zero_points as Tensor);
  const index = scaleIndex(q.shape, scales.shape, axisOf(a, q), 0);
  const values = Array.from(readNumbers(q), (v, i) => {
    const k = index(i);
    const d = zv === null ? v : v - zv[k]!;
    return roundTo(out, roundTo(sd, roundTo(opmath(sd), d * sv[k]!)));
  });
  return [fromNumbers(out, q.shape, values)];
});
