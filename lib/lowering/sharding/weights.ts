/**
 * Slicing weights for tensor parallelism without copying the model where the layout allows.
 *
 * A linear weight is `[out, in]`, row-major. A column-parallel layer keeps a block of output
 * rows: rows are contiguous, so its shard is a `subarray` **view** of the original data (no
 * copy; the same ArrayBuffer). A row-parallel layer keeps a block of input columns: those are
 * strided in memory, so its shard is a **copy** (each rank copies only its 1/n of the columns,
 * so all ranks together hold one extra copy of the row-parallel weights, not n).
 */
import { InternalError } from '../../errors';
import { dtypeInfo } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';

/** How a sharded weight relates to the original. */
export type WeightLayout = 'view' | 'copy';

/**
 * Rows `[start, end)` of the leading axis: a view sharing the original's memory (works for
 * any rank: a 1-D bias or a 2-D `[out, in]` weight).
 */
export function leadingSliceView(t: Tensor, start: number, end: number): Tensor {
  if (t.rank < 1 || start < 0 || end > t.shape[0]! || start >= end) {
    throw new InternalError(`weight slice [${start}, ${end}) does not fit leading dim ${t.shape[0]} of ${t.toString()}`);
  }
  const inner = (t.size / t.shape[0]!) * dtypeInfo(t.dtype).lanes;
  return new Tensor(t.dtype, [end - start, ...t.shape.slice(1)], t.data.subarray(start * inner, end * inner) as Tensor['data']);
}

/** Columns `[start, end)` of a 2-D `[out, in]` weight: a new tensor (columns are strided). */
export function columnSliceCopy(t: Tensor, start: number, end: number): Tensor {
  if (t.rank !== 2 || start < 0 || end > t.shape[1]! || start >= end) {
    throw new InternalError(`weight column slice [${start}, ${end}) does not fit ${t.toString()}`);
  }
  const lanes = dtypeInfo(t.dtype).lanes;
  const [rows, cols] = t.shape as [number, number];
  const width = (end - start) * lanes;
  const out = new Tensor(t.dtype, [rows, end - start]);
  const src = t.data as Float32Array;
  const dst = out.data as Float32Array;
  for (let r = 0; r < rows; r++) dst.set(src.subarray((r * cols + start) * lanes, (r * cols + start) * lanes + width), r * width);
  return out;
}
