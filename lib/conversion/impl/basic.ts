/**
 * Layer-building helpers shared by many converters: where TensorRT's rules live once
 * (equal-rank broadcasting, explicit casts, reshape with literal zeros, permutations).
 */
import { InternalError } from '../../errors';
import type { DType } from '../../ir/dtype';
import type { ElementWiseOp, NetTensor, TrtDType } from '../../network';
import type { ConversionContext } from '../context';
import { trtType } from '../context';
import { prependOnes } from './dynamic';

/** `t` cast to `dtype` (no layer when it already has that type). */
export function cast(ctx: ConversionContext, t: NetTensor, dtype: DType, role = 'cast'): NetTensor {
  const to = trtType(dtype, ctx.settings.truncateDouble);
  if (to === null) throw new InternalError(`${ctx.name()}: TensorRT cannot hold ${dtype}`);
  return t.dtype === to ? t : ctx.add({ kind: 'cast', to }, [t], role);
}

/** Reshape with static dims (0 is literal, as in PyTorch; -1 infers). */
export function reshape(ctx: ConversionContext, t: NetTensor, dims: readonly number[], role = 'reshape'): NetTensor {
  if (dims.length === t.shape.length && dims.every((d, i) => d === t.shape[i])) return t;
  return ctx.add({ kind: 'shuffle', reshape: [...dims], zeroIsPlaceholder: false }, [t], role);
}

/** Permutes dims (numpy.transpose order). */
export function permute(ctx: ConversionContext, t: NetTensor, perm: readonly number[], role = 'permute'): NetTensor {
  if (perm.every((p, i) => p === i)) return t;
  return ctx.add({ kind: 'shuffle', firstTranspose: [...perm], zeroIsPlaceholder: false }, [t], role);
}

/** Prepends 1s so that `t` has `rank` dims (NumPy's right-aligned broadcasting). */
export function toRank(ctx: ConversionContext, t: NetTensor, rank: number, role = 'broadcast'): NetTensor {
  if (t.shape.length === rank) return t;
  if (t.shape.length > rank) throw new InternalError(`${ctx.name()}: cannot lower rank ${t.shape.length} to ${rank}`);
  // Run-time dims: the new shape is [1, ..., 1, shape(t)...], a shape tensor (impl/dynamic.ts).
  if (t.shape.some((d) => d < 0)) return prependOnes(ctx, t, rank - t.shape.length, role);
  return reshape(ctx, t, [...new Array<number>(rank - t.shape.length).fill(1), ...t.shape], role);
}

/** Brings several tensors to one rank. */
export function alignRanks(ctx: ConversionContext, ts: readonly NetTensor[]): NetTensor[] {
  const rank = Math.max(...ts.map((t) => t.shape.length));
  return ts.map((t, i) => toRank(ctx, t, rank, `broadcast${i}`));
}

/**
 * An elementwise layer in `dtype` (inputs cast to it first), with ranks aligned. The output
 * is bool for comparisons, `dtype` otherwise.
 */
export function elementwise(ctx: ConversionContext, a: NetTensor, b: NetTensor, op: ElementWiseOp, dtype: DType, role?: string): NetTensor {
  const [x, y] = alignRanks(ctx, [cast(ctx, a, dtype, 'cast_a'), cast(ctx, b, dtype, 'cast_b')]);
  return ctx.add({ kind: 'elementwise', op }, [x!, y!], role);
}

/** The TensorRT type of an IR dtype (throws for types TensorRT lacks). */
export function trt(ctx: ConversionContext, dtype: DType): TrtDType {
  const t = trtType(dtype, ctx.settings.truncateDouble);
  if (t === null) throw new InternalError(`${ctx.name()}: TensorRT cannot hold ${dtype}`);
  return t;
}

/** A possibly negative axis against `rank`. */
export function axisOf(ctx: ConversionContext, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= Math.max(rank, 1)) throw new InternalError(`${ctx.name()}: axis ${axis} is out of range for rank ${rank}`);
  return a;
}
