/**
 * IAttention: softmax(Q·Kᵀ·scale + mask)·V in float64, the output rounded once into the
 * query's dtype. A plain layer reads its dense inputs through the strided form
 * (denseAttention, lib/network/attention.ts); the cuda backend's strided layer is read at its
 * own strides. The oracle the cuda kernel is tested against.
 */
import { fromNumbers, readNumbers } from '../../kernels/access';
import type { AttentionParams } from '..';
import type { Tensor } from '../../ir/tensor';
import { denseAttention } from '../attention';
import { fail, required, type Executor, type LayerContext } from './common';

export const attentionLayer: Executor<'attention'> = (p, inputs, layer) => {
  if (p.strided) return stridedAttention(p.strided, inputs, layer);
  const [q, k, v] = [0, 1, 2].map((i) => required(inputs, i, layer)) as [Tensor, Tensor, Tensor];
  const mask = inputs[3] ?? null;
  return stridedAttention(denseAttention({ query: q.shape, key: k.shape, value: v.shape, mask: mask?.shape ?? null }, p.scale, p.causal), inputs, layer);
};

/** The offsets of every entry of the batch box along `strides` (its first batch.length entries). */
function batchOffsets(batch: readonly number[], strides: readonly number[]): number[] {
  let offsets = [0];
  batch.forEach((n, d) => {
    const next: number[] = [];
    for (const o of offsets) for (let i = 0; i < n; i++) next.push(o + i * strides[d]!);
    offsets = next;
  });
  return offsets;
}

function stridedAttention(p: AttentionParams, inputs: ReadonlyArray<Tensor | null>, layer: LayerContext): Tensor[] {
  const [q, k, v] = [0, 1, 2].map((i) => required(inputs, i, layer)) as [Tensor, Tensor, Tensor];
  const mask = inputs[3] ?? null;
  if ((mask === null) !== (p.mask === undefined)) fail(layer, 'the attention mask and its strides must come together');
  const rank = p.batch.length;
  const [Q, K, V] = [q, k, v].map(readNumbers) as [Float64Array, Float64Array, Float64Array];
  const M = mask === null ? null : readNumbers(mask);
  const boolMask = mask?.dtype === 'bool';
  const at = (name: string, data: ArrayLike<number>, i: number): number => {
    if (!(i >= 0 && i < data.length)) fail(layer, `attention reads ${name} element ${i} of ${data.length}`);
    return data[i]!;
  };
  const ob = batchOffsets(p.batch, p.output);
  const [qb, kb, vb] = [p.query, p.key, p.value].map((s, i) => batchOffsets(p.batch, s).map((o) => o + (p.offsets?.[i] ?? 0))) as [number[], number[], number[]];
  const mb = p.mask ? batchOffsets(p.batch, p.mask) : null;
  const out = new Float64Array(ob.length * p.seqQ * p.headDim);
  const scores = new Float64Array(p.seqKV);
  for (let b = 0; b < ob.length; b++) {
    for (let i = 0; i < p.seqQ; i++) {
      let max = -Infinity;
      for (let j = 0; j < p.seqKV; j++) {
        let s = 0;
        for (let d = 0; d < p.headDim; d++) s += at('query', Q, qb[b]! + i * p.query[rank]! + d) * at('key', K, kb[b]! + j * p.key[rank]! + d);
        s *= p.scale;
        if (p.causal && j > i) s = -Infinity;
        else if (M !== null) {
          const m = at('mask', M, mb![b]! + i * p.mask![rank]! + j * p.mask![rank + 1]!);
          s = boolMask ? (m !== 0 ? s : -Infinity) : s + m;
        }
        scores[j] = s;
        max = Math.max(max, s);
      }
      let sum = 0;
      for (let j = 0; j < p.seqKV; j++) {
        scores[j] = Math.exp(scores[j]! - max);
        sum += scores[j]!;
      }
      for (let d = 0; d < p.headDim; d++) {
        let acc = 0;
        for (let j = 0; j < p.seqKV; j++) acc += scores[j]! * at('value', V, vb[b]! + j * p.value[rank]! + d);
        out[ob[b]! + i * p.output[rank]! + d] = acc / sum;
      }
    }
  }
  return [fromNumbers(q.dtype, p.outputShape, out)];
}
