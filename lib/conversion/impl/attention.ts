/**
 * scaled_dot_product_attention, in the two forms the network knows:
 *
 * - {@link attention}: the converters' entry. It emits one `attention` layer (the big layer
 *   stays whole: a backend with a fused kernel runs it as one) when the operands meet the
 *   layer's rules (lib/network/attention.ts), and otherwise spells the attention out here.
 * - {@link spellOutAttention}: PyTorch's math reference as primitive layers,
 *   softmax(Q·Kᵀ · scale + mask)·V. A bool mask selects -inf where false, a float mask adds;
 *   is_causal adds a 0/-inf mask, top-left aligned (a constant for static L and S, a fill
 *   layer at run time otherwise). Grouped-query attention repeats each key/value head
 *   (repeat_interleave) with a stride-0 slice. lib/conversion/expand-layers.ts spells out
 *   attention layers through it for the backends that have no attention kernel, so the
 *   decomposition lives in this one place.
 */
import { attentionShapeError } from '../../network/attention';
import type { NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { cast, elementwise, toRank } from './basic';
import { axesOf, dimOf, reshapeFromDims, shapeVector } from './dynamic';
import { scaled, torchMatmul } from './linalg';
import { constantOf, scalarOf, sliceSized } from './nn-util';

export interface AttentionSpec {
  mask: NetTensor | null;
  causal: boolean;
  /** null: 1/sqrt(E). */
  scale: number | null;
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

/** The scale an attention applies when the caller gives none: 1/sqrt(E), E the query's head size (static). */
const defaultScale = (q: NetTensor): number => 1 / Math.sqrt(q.shape[q.shape.length - 1]!);

/**
 * The mask as the attention layer takes it: the scores' rank (leading 1s), a float mask in the
 * query's dtype.
 */
function layerMask(ctx: ConversionContext, mask: NetTensor, q: NetTensor): NetTensor {
  const ranked = toRank(ctx, mask, q.shape.length, 'mask_rank');
  return ranked.dtype === 'bool' || ranked.dtype === q.dtype ? ranked : cast(ctx, ranked, q.dtype, 'mask_cast');
}

/**
 * SDPA of `q`, `k`, `v` (grouped heads when k and v have fewer): one attention layer when the
 * operands meet its rules, else the spelled-out form.
 */
export function attention(ctx: ConversionContext, q: NetTensor, k: NetTensor, v: NetTensor, spec: AttentionSpec): NetTensor {
  const scale = spec.scale ?? defaultScale(q);
  const r = q.shape.length;
  // The mask's shape once ranked as the layer takes it: decided before any layer is added.
  const m = spec.mask;
  const maskShape = m === null || m.shape.length > r ? null : [...new Array<number>(r - m.shape.length).fill(1), ...m.shape];
  const fits =
    k.dtype === q.dtype &&
    v.dtype === q.dtype &&
    (m === null || maskShape !== null) &&
    attentionShapeError({ query: q.shape, key: k.shape, value: v.shape, mask: maskShape }) === null;
  if (!fits) return spellOutAttention(ctx, q, k, v, { ...spec, scale });
  const causal = spec.causal && m === null;
  return ctx.add({ kind: 'attention', scale, causal }, m === null ? [q, k, v] : [q, k, v, layerMask(ctx, m, q)], 'attention');
}

/** The causal mask added to scores [..., L, S]: 0 where j ≤ i, -inf above (a constant for static L and S, else a fill). */
function causalBias(ctx: ConversionContext, scores: NetTensor): NetTensor {
  const rank = scores.shape.length;
  const L = scores.shape[rank - 2]!;
  const S = scores.shape[rank - 1]!;
  if (L >= 0 && S >= 0) {
    const bias = Array.from({ length: L * S }, (_, i) => (i % S <= Math.floor(i / S) ? 0 : -Infinity));
    return constantOf(ctx, scores.dtype, [...new Array<number>(rank - 2).fill(1), L, S], bias, 'causal_mask');
  }
  const dims = shapeVector(ctx, [dimOf(ctx, scores, rank - 2, 'L'), dimOf(ctx, scores, rank - 1, 'S')], 'mask_dims');
  const offset = ctx.add({ kind: 'fill', dims: [0, 0], alpha: 0, beta: [-1, 1], dtype: 'float32' }, [dims], 'col_minus_row');
  const zero = ctx.constant(Tensor.from('float32', [1, 1], [0]), ctx.name('zero'));
  const above = ctx.add({ kind: 'elementwise', op: 'greater' }, [offset, zero], 'above_diagonal');
  const negInf = ctx.constant(Tensor.from(scores.dtype, [1, 1], [-Infinity]), ctx.name('neg_inf'));
  const none = ctx.constant(Tensor.from(scores.dtype, [1, 1], [0]), ctx.name('no_mask'));
  return toRank(ctx, ctx.add({ kind: 'select' }, [above, negInf, none], 'causal_bias'), rank, 'causal_rank');
}

/** SDPA as primitive layers (see the module comment); k and v with fewer heads than q are grouped heads. */
export function spellOutAttention(ctx: ConversionContext, q: NetTensor, k: NetTensor, v: NetTensor, spec: AttentionSpec): NetTensor {
  let key = k;
  let value = v;
  const r = q.shape.length;
  if (r >= 3 && k.shape[r - 3]! !== q.shape[r - 3]! && k.shape[r - 3]! > 0 && q.shape[r - 3]! > 0) {
    const heads = q.shape[r - 3]!;
    key = repeatHeads(ctx, key, heads / key.shape[r - 3]!, 'key');
    value = repeatHeads(ctx, value, heads / value.shape[r - 3]!, 'value');
  }
  let scores = torchMatmul(ctx, q, key, true, 'scores');
  scores = scaled(ctx, scores, spec.scale ?? defaultScale(q), 'scale');
  const rank = scores.shape.length;
  if (spec.mask !== null) {
    if (spec.mask.dtype === 'bool') {
      const m = toRank(ctx, spec.mask, rank, 'mask_rank');
      scores = ctx.add({ kind: 'select' }, [m, scores, scalarOf(ctx, -Infinity, scores.dtype, rank, 'neg_inf')], 'masked');
    } else {
      scores = elementwise(ctx, scores, spec.mask, 'sum', scores.dtype, 'masked');
    }
  } else if (spec.causal) {
    scores = ctx.add({ kind: 'elementwise', op: 'sum' }, [scores, causalBias(ctx, scores)], 'masked');
  }
  const probs = ctx.add({ kind: 'softmax', axis: rank - 1 }, [scores], 'softmax');
  return torchMatmul(ctx, probs, value, false, 'output');
}
