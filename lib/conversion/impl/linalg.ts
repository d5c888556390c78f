/**
 * Matrix products with torch.matmul semantics on TensorRT's matrix-multiply layer: a 1-D
 * operand becomes a vector operand (its dim disappears from the result, as in PyTorch),
 * batch dims are rank-aligned with leading 1s (TensorRT broadcasts 1s but needs equal
 * batch ranks), linear multiplies by the transposed weight.
 */
import type { MatrixOp, NetTensor } from '../../network';
import type { ConversionContext } from '../context';
import { elementwise, reshape, toRank } from './basic';
import { scalarOf } from './nn-util';

function matmulLayer(ctx: ConversionContext, a: NetTensor, b: NetTensor, opA: MatrixOp, opB: MatrixOp, role?: string): NetTensor {
  return ctx.add({ kind: 'matmul', opA, opB }, [a, b], role);
}

/** A vector [K] as [1, ..., 1, K] with `batchRank` leading 1s. */
function vectorWithBatch(ctx: ConversionContext, v: NetTensor, batchRank: number, role: string): NetTensor {
  return reshape(ctx, v, [...new Array<number>(batchRank).fill(1), v.shape[0]!], role);
}

/**
 * torch.matmul(a, b) (with `transposeB`, a @ b^T over the last two dims of b, as linear's
 * weight). Both operands must already share a floating dtype.
 */
export function torchMatmul(ctx: ConversionContext, a: NetTensor, b: NetTensor, transposeB = false, role?: string): NetTensor {
  const ra = a.shape.length;
  const rb = b.shape.length;
  const opB: MatrixOp = transposeB ? 'transpose' : 'none';
  if (ra === 1 && rb === 1) return matmulLayer(ctx, a, b, 'vector', 'vector', role);
  if (ra === 1) return matmulLayer(ctx, vectorWithBatch(ctx, a, rb - 2, 'vector_a'), b, 'vector', opB, role);
  if (rb === 1) return matmulLayer(ctx, a, vectorWithBatch(ctx, b, ra - 2, 'vector_b'), 'none', 'vector', role);
  const rank = Math.max(ra, rb);
  return matmulLayer(ctx, toRank(ctx, a, rank, 'batch_a'), toRank(ctx, b, rank, 'batch_b'), 'none', opB, role);
}

/** x * scale as one elementwise layer (none when scale is 1). */
export function scaled(ctx: ConversionContext, x: NetTensor, scale: number, role: string): NetTensor {
  if (scale === 1) return x;
  return ctx.add({ kind: 'elementwise', op: 'prod' }, [x, scalarOf(ctx, scale, x.dtype, x.shape.length, `${role}_factor`)], role);
}

/** torch.nn.functional.linear: x @ weight^T (+ bias), weight [N, K] or [K]. */
export function linear(ctx: ConversionContext, x: NetTensor, weight: NetTensor, bias: NetTensor | null): NetTensor {
  const y = weight.shape.length === 2 ? torchMatmul(ctx, x, weight, true) : torchMatmul(ctx, x, weight);
  return bias === null ? y : elementwise(ctx, y, bias, 'sum', y.dtype, 'bias');
}
