/**
 * The attention layer's rules, shared by shape inference, the host evaluator and the cuda
 * backend's attention pass: which shapes an attention takes, and the strided form
 * (AttentionParams) of a plain attention over dense tensors, grouped-query heads included.
 */
import { stridesOf } from '../kernels/access';
import type { AttentionParams } from './layers';

/** The shapes of an attention's inputs (-1: a run-time dim). */
export interface AttentionShapes {
  query: readonly number[];
  key: readonly number[];
  value: readonly number[];
  mask: readonly number[] | null;
}

const known = (d: number): boolean => d >= 0;
const agree = (a: number, b: number): boolean => !known(a) || !known(b) || a === b;

/**
 * Why `shapes` break the attention layer's rules (lib/network/layers.ts), or null. Run-time
 * dims (-1) agree with anything; a static head count must divide.
 */
export function attentionShapeError(shapes: AttentionShapes): string | null {
  const { query: q, key: k, value: v, mask } = shapes;
  const r = q.length;
  if (r < 3 || k.length !== r || v.length !== r) return `query, key and value must have one rank of at least 3, got ${r}, ${k.length} and ${v.length}`;
  for (let d = 0; d < r - 3; d++) if (!agree(q[d]!, k[d]!) || !agree(q[d]!, v[d]!)) return `query, key and value differ in dim ${d}`;
  const [hq, hk, hv] = [q[r - 3]!, k[r - 3]!, v[r - 3]!];
  if (!agree(hk, hv)) return `key and value have ${hk} and ${hv} heads`;
  if (known(hq) && known(hk) && (hk === 0 || hq % hk !== 0)) return `${hq} query heads are not a multiple of ${hk} key/value heads`;
  if (!agree(k[r - 2]!, v[r - 2]!)) return `key and value have ${k[r - 2]} and ${v[r - 2]} positions`;
  if (!agree(q[r - 1]!, k[r - 1]!) || !agree(q[r - 1]!, v[r - 1]!)) return `query, key and value head sizes differ (${q[r - 1]}, ${k[r - 1]}, ${v[r - 1]})`;
  if (mask !== null) {
    const scores = [...q.slice(0, r - 1), k[r - 2]!];
    if (mask.length !== r) return `the mask has rank ${mask.length}, not ${r}`;
    if (mask.some((m, d) => m !== 1 && !agree(m, scores[d]!))) return `the mask [${mask.join(', ')}] does not broadcast to the scores [${scores.join(', ')}]`;
  }
  return null;
}

/**
 * The strided form of an attention over dense, static tensors of `shapes`: the batch box is
 * the leading dims, the head dim split into [Hkv, Hq/Hkv] when the heads are grouped (key and
 * value step 0 along the group); a mask dim of 1 steps 0. `shapes` must pass
 * {@link attentionShapeError} with static dims.
 */
export function denseAttention(shapes: AttentionShapes, scale: number, causal: boolean): AttentionParams {
  const { query: q, key: k, mask } = shapes;
  const r = q.length;
  const [hq, hk] = [q[r - 3]!, k[r - 3]!];
  const group = hq / hk;
  const scoresShape = [...q.slice(0, r - 1), k[r - 2]!];
  /** Strides over [...box, row(, column)]: the leading dims, the head dim split when grouped, then `rows` dims. */
  const over = (strides: readonly number[], rows: number, shared: boolean): number[] => {
    const lead = strides.slice(0, r - 3);
    const head = strides[r - 3]!;
    const heads = group === 1 ? [head] : shared ? [head, 0] : [head * group, head];
    return [...lead, ...heads, ...strides.slice(r - 2, r - 2 + rows)];
  };
  const maskStrides = mask === null ? null : stridesOf(mask).map((s, d) => (mask[d] === 1 && scoresShape[d] !== 1 ? 0 : s));
  const params: AttentionParams = {
    batch: group === 1 ? q.slice(0, r - 2) : [...q.slice(0, r - 3), hk, group],
    seqQ: q[r - 2]!,
    seqKV: k[r - 2]!,
    headDim: q[r - 1]!,
    scale,
    causal,
    query: over(stridesOf(q), 1, false),
    key: over(stridesOf(k), 1, true),
    value: over(stridesOf(shapes.value), 1, true),
    output: over(stridesOf(q), 1, false),
    outputShape: [...q],
  };
  if (maskStrides !== null) params.mask = over(maskStrides, 2, false);
  return params;
}
