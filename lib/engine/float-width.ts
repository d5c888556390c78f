/**
 * Float widths at segment boundaries (truncateDouble): a backend without float64 (every
 * TensorRT-kind backend) computes the graph's float64 values in float32. Each consumer
 * converts what it is given to the width it computes in: an engine to its network's input
 * dtypes, a fallback graph to its inputs' dtypes, a program output to its declared dtype.
 */
import type { DType } from '../ir/dtype';
import { Tensor } from '../ir/tensor';

/** `t` as `dtype` when they differ only in float width; any other `t` is returned as it is. */
export function floatWidthAs(t: Tensor, dtype: DType): Tensor {
  if (t.dtype === dtype) return t;
  if (t.dtype === 'float32' && dtype === 'float64') return new Tensor('float64', t.shape, Float64Array.from(t.data as Float32Array));
  if (t.dtype === 'float64' && dtype === 'float32') return new Tensor('float32', t.shape, Float32Array.from(t.data as Float64Array));
  return t;
}
