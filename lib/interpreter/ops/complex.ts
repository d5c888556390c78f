/**
 * Interpreter implementations of the complex-lowering ops (lib/ir/ops/complex.ts):
 * `trt.complex_mul` on real carriers ([..., 2] pairs) and `aten.atan2.default`.
 */
import type { DType } from '../../ir/dtype';
import { broadcastPair, fromNumbers, readNumbers } from '../../kernels/access';
import { complexMul, viewAsComplex, viewAsReal } from '../../kernels/complex';
import { resultType } from '../../kernels/elementwise';
import { shapeSize, type Tensor } from '../../ir/tensor';
import { defineImpl, type RuntimeArg } from '../registry';

const T = (a: RuntimeArg): Tensor => a as Tensor;

/**
 * The complex product of two carriers (float32/float64 tensors with a last dim of 2),
 * broadcasting over the leading dims; the result is a carrier of the promoted float type.
 */
export function carrierMul(a: Tensor, b: Tensor): Tensor {
  return viewAsReal(complexMul(viewAsComplex(a), viewAsComplex(b)));
}

/** atan2(y, x) elementwise with broadcasting, in the float result type (integers give float32). */
export function atan2(y: Tensor, x: Tensor): Tensor {
  const promoted: DType = resultType(y, x);
  const dtype: DType = promoted === 'float16' || promoted === 'bfloat16' || promoted === 'float32' || promoted === 'float64' ? promoted : 'float32';
  const { shape, ia: iy, ib: ix } = broadcastPair('atan2', y.shape, x.shape);
  const ys = readNumbers(y);
  const xs = readNumbers(x);
  const out = new Float64Array(shapeSize(shape));
  for (let k = 0; k < out.length; k++) out[k] = Math.atan2(ys[iy[k]!]!, xs[ix[k]!]!);
  return fromNumbers(dtype, shape, out);
}

defineImpl('trt.complex_mul', (a) => [carrierMul(T(a.self), T(a.other))]);
defineImpl('aten.atan2.default', (a) => [atan2(T(a.self), T(a.other))]);
