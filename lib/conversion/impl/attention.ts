/**
 * scaled_dot_product_attention as PyTorch's math reference: softmax(Q·Kᵀ · scale + mask)·V.
 * A bool mask selects -inf where false, a float mask adds; is_causal adds a constant
 * lower-triangular 0/-inf mask (top-left aligned, static L and S). Grouped-query attention
 * repeats each key/value head (repeat_interleave) with a stride-0 slice.
 */
import type { NetTensor } from '../../network';
import type { ConversionContext } from '../context';
import { elementwise, toRank } from './basic';
import { axesOf, reshapeFromDims } from './dynamic';
import { scaled, torchMatmul } from './linalg';
import { constantOf, scalarOf, sliceSized } from './nn-util';

export interface AttentionSpec {
  mask: NetTensor | null;
  causal: boolean;
  /** null: 1/sqrt(E). */
  scale: number | null;
  gqa: boolean;
}

/**
 * Repeats each head (dim -3) of [..., H, S, E] `times` times in place: [..., H*times, S, E].
 * H must be static; other dims may be run-time dims (copied from the input).
 */
export function repeatHeads(ctx: ConversionContext, t: NetTensor, times: number, role: string): NetTensor {
  if (times === 1) return t;
  const r = t.shape.length;
  const one = reshapeFromDims(ctx, t, [...axesOf(t, 0, r - 2), 1, ...axesOf(t, r - 2)], `${role}_split`);
  const size = [...axesOf(one, 0, r - 2), times, ...axesOf(one, r - 1)];
  const stride = one.shape.map((_, i) => (i === r - 2 ? 0 : 1));
  const repeated = sliceSized(ctx, one, one.shape.map(() => 0), size, stride, `${role}_repeat`);
  return reshapeFromDims(ctx, repeated, [...axesOf(repeated, 0, r - 3), t.shape[r - 3]! * times, ...axesOf(repeated, r - 1)], `${role}_merge`);
}

export function attention(ctx: ConversionContext, q: NetTensor, k: NetTensor, v: NetTensor, spec: AttentionSpec): NetTensor {
  let key = k;
  let value = v;
  if (spec.gqa) {
    const heads = q.shape[q.shape.length - 3]!;
    key = repeatHeads(ctx, key, heads / key.shape[key.shape.length - 3]!, 'key');
    value = repeatHeads(ctx, value, heads / value.shape[value.shape.length - 3]!, 'value');
  }
  const E = q.shape[q.shape.length - 1]!;
  let scores = torchMatmul(ctx, q, key, true, 'scores');
  scores = scaled(ctx, scores, spec.scale ?? 1 / Math.sqrt(E), 'scale');
  const rank = scores.shape.length;
  const L = scores.shape[rank - 2]!;
  const S = scores.shape[rank - 1]!;
  if (spec.mask !== null) {
    if (spec.mask.dtype === 'bool') {
      const m = toRank(ctx, spec.mask, rank, 'mask_rank');
      scores = ctx.add({ kind: 'select' }, [m, scores, scalarOf(ctx, -Infinity, scores.dtype, rank, 'neg_inf')], 'masked');
    } else {
      scores = elementwise(ctx, scores, spec.mask, 'sum', scores.dtype, 'masked');
    }
  } else if (spec.causal) {
    const bias = Array.from({ length: L * S }, (_, i) => (i % S <= Math.floor(i / S) ? 0 : -Infinity));
    const causal = constantOf(ctx, scores.dtype, [...new Array<number>(rank - 2).fill(1), L, S], bias, 'causal_mask');
    scores = ctx.add({ kind: 'elementwise', op: 'sum' }, [scores, causal], 'masked');
  }
  const probs = ctx.add({ kind: 'softmax', axis: rank - 1 }, [scores], 'softmax');
  return torchMatmul(ctx, probs, value, false, 'output');
}
