/**
 * How a tensor's dtype and a reduction map onto NCCL's data types and ops (nccl.h values, checked
 * against the real header by native/nccl/check_declarations.cc through nccl_api.h). Pure.
 */
import { InvalidArgumentError } from '../errors';
import type { DType } from '../ir/dtype';

export type ReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';

export const REDUCE_OPS: readonly ReduceOp[] = Object.freeze(['sum', 'prod', 'max', 'min', 'avg']);

const OP_CODES: Record<ReduceOp, number> = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 };

/** ncclDataType_t of each dtype NCCL reduces directly. */
const TYPE_CODES: Partial<Record<DType, number>> = {
  int8: 0,
  uint8: 1,
  int32: 2,
  int64: 4,
  float16: 6,
  float32: 7,
  float64: 8,
  bfloat16: 9,
};

export interface NcclReduction {
  dtype: number;
  op: number;
  /** Elements as NCCL counts them (a complex element is two). */
  count: number;
}

/**
 * The NCCL type, op and count for all-reducing `size` elements of `dtype` with `op`.
 * bool reduces as uint8 where the result stays 0/1 (max = any, min and prod = all); complex as
 * its float components where the op works component-wise (sum, avg).
 */
export function ncclReduction(dtype: DType, op: ReduceOp, size: number): NcclReduction {
  if (!Object.hasOwn(OP_CODES, op)) {
    throw new InvalidArgumentError(`unknown all-reduce op ${JSON.stringify(op)}; expected one of ${REDUCE_OPS.join(', ')}`);
  }
  const opCode = OP_CODES[op];
  if (dtype === 'bool') {
    if (op === 'sum' || op === 'avg') {
      throw new InvalidArgumentError(`all-reduce ${op} of a bool tensor has no bool result; use max (any) or min (all)`);
    }
    return { dtype: TYPE_CODES.uint8!, op: opCode, count: size };
  }
  if (dtype === 'complex64' || dtype === 'complex128') {
    if (op !== 'sum' && op !== 'avg') {
      throw new InvalidArgumentError(`all-reduce ${op} is not defined for ${dtype}; only sum and avg are`);
    }
    return { dtype: dtype === 'complex64' ? TYPE_CODES.float32! : TYPE_CODES.float64!, op: opCode, count: size * 2 };
  }
  const code = TYPE_CODES[dtype];
  if (code === undefined) throw new InvalidArgumentError(`NCCL cannot all-reduce ${JSON.stringify(dtype)} tensors`);
  return { dtype: code, op: opCode, count: size };
}
