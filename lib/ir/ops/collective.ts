/**
 * Collective ops of tensor-parallel programs (lib/lowering/sharding). `trt.all_reduce` combines
 * one tensor across every rank of a program; on its own (a single rank, the plain interpreter)
 * it is the identity. No converter is registered for it, so the partitioner always leaves it
 * in a fallback segment: a segment boundary where a tensor-parallel runtime synchronizes the
 * ranks (lib/runtime/tensor-parallel/program.ts).
 */
import { tensorType } from '../graph';
import { defineOp } from './registry';

/** The reductions `trt.all_reduce` knows (NCCL's ncclRedOp_t: sum, prod, max, min, avg). */
export const ALL_REDUCE_OPS: readonly string[] = Object.freeze(['sum', 'prod', 'max', 'min', 'avg']);

/** The op target of the all-reduce collective. */
export const ALL_REDUCE = 'trt.all_reduce';

defineOp('trt.all_reduce(Tensor self, str op="sum") -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const op = ctx.arg('op');
  if (typeof op !== 'string' || !ALL_REDUCE_OPS.includes(op)) ctx.fail(`op must be one of ${ALL_REDUCE_OPS.join(', ')}, got ${JSON.stringify(op)}`);
  return [tensorType(self.dtype, self.shape)];
});
