/**
 * The size of a tensor a model file declares, checked before anything is allocated for it:
 * dims must be exact (safe, non-negative) integers and the element count within what one
 * tensor may hold. Importers then compare the byte size with the bytes actually present, so
 * a few bytes of model can never ask for gigabytes of memory.
 */
import { dtypeInfo, type DType } from '../ir/dtype';

/** Most elements one imported tensor may have (TensorRT volumes and typed arrays stay below it). */
export const MAX_TENSOR_ELEMENTS = 2 ** 31;

export interface TensorSize {
  /** Number of elements. */
  readonly count: number;
  /** Bytes of the data (count × element size). */
  readonly bytes: number;
}

/**
 * The element count and byte size of a `dtype` tensor of `shape`; `fail` reports a dim that is
 * not a safe non-negative integer or a count over {@link MAX_TENSOR_ELEMENTS} (it must throw).
 */
export function checkedTensorSize(shape: readonly number[], dtype: DType, fail: (reason: string) => never): TensorSize {
  const bad = shape.findIndex((d) => !Number.isSafeInteger(d) || d < 0);
  if (bad >= 0) fail(`has dim ${bad} = ${shape[bad]}, not a non-negative integer below 2^53 (shape [${shape.join(', ')}])`);
  if (shape.includes(0)) return { count: 0, bytes: 0 };
  let count = 1;
  for (const d of shape) {
    count *= d; // stays finite (≤ 2^31 × 2^53), so the comparison is sound
    if (count > MAX_TENSOR_ELEMENTS) {
      fail(`has shape [${shape.join(', ')}]: more than ${MAX_TENSOR_ELEMENTS} elements, which tensorrt-node does not hold in one tensor`);
    }
  }
  return { count, bytes: count * dtypeInfo(dtype).itemBytes };
}
