/**
 * The independent oracle of the generation tests: onnxruntime-node running the tiny KV-cache
 * LM (test/helpers/tiny-kv-lm.ts) one step at a time, fed by a loop written here, for one
 * unpadded prompt: positions 0, 1, ... with no padding, an all-ones attention mask, the
 * present outputs fed back as the past. Batched, left-padded generation must agree with it
 * prompt by prompt.
 */
import { Tensor } from '../../lib/ir/tensor';
import { runOrtModel } from '../helpers/ort-single-op';
import type { TinyKvLm } from '../helpers/tiny-kv-lm';

/** The logits of the last position at each step of feeding `prompt`, then each of `forced` in turn (teacher forcing). */
export async function oracleLogits(lm: TinyKvLm, prompt: readonly number[], forced: readonly number[], steps: number): Promise<number[][]> {
  let past: Tensor[] = [];
  for (let l = 0; l < lm.layers; l++) past.push(new Tensor('float32', [1, lm.heads, 0, lm.headDim]), new Tensor('float32', [1, lm.heads, 0, lm.headDim]));
  const out: number[][] = [];
  let feed = [...prompt];
  let seen = 0;
  for (let step = 0; step < steps; step++) {
    const total = seen + feed.length;
    const ids = Tensor.from('int64', [1, feed.length], feed);
    const mask = Tensor.from('int64', [1, total], new Array<number>(total).fill(1));
    const positions = lm.positionIds ? [Tensor.from('int64', [1, feed.length], feed.map((_, i) => seen + i))] : [];
    const [logits, ...present] = await runOrtModel(lm.model, [ids, mask, ...positions, ...past]);
    const values = Array.from(logits!.data as Float32Array);
    out.push(values.slice((feed.length - 1) * lm.vocab, feed.length * lm.vocab));
    past = present;
    seen = total;
    feed = [forced[step]!];
  }
  return out;
}

/** The greedy continuation of `prompt` by the oracle, with each step's logits. */
export async function oracleGreedy(lm: TinyKvLm, prompt: readonly number[], steps: number): Promise<{ tokens: number[]; logits: number[][] }> {
  const tokens: number[] = [];
  const logits: number[][] = [];
  let past: Tensor[] = [];
  for (let l = 0; l < lm.layers; l++) past.push(new Tensor('float32', [1, lm.heads, 0, lm.headDim]), new Tensor('float32', [1, lm.heads, 0, lm.headDim]));
  let feed = [...prompt];
  let seen = 0;
  for (let step = 0; step < steps; step++) {
    const total = seen + feed.length;
    const [out, ...present] = await runOrtModel(lm.model, [
      Tensor.from('int64', [1, feed.length], feed),
      Tensor.from('int64', [1, total], new Array<number>(total).fill(1)),
      ...(lm.positionIds ? [Tensor.from('int64', [1, feed.length], feed.map((_, i) => seen + i))] : []),
      ...past,
    ]);
    const row = Array.from(out!.data as Float32Array).slice((feed.length - 1) * lm.vocab, feed.length * lm.vocab);
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
    tokens.push(best);
    logits.push(row);
    past = present;
    seen = total;
    feed = [best];
  }
  return { tokens, logits };
}

/** The gap between the highest and the second-highest logit: how far a greedy choice is from a tie. */
export function topGap(row: readonly number[]): number {
  const sorted = [...row].sort((a, b) => b - a);
  return sorted[0]! - sorted[1]!;
}

/** The ids of the k highest logits (ties broken towards lower ids). */
export function topK(row: readonly number[], k: number): number[] {
  return row
    .map((v, i) => [v, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, k)
    .map(([, i]) => i);
}

/** The ids in the nucleus of `row` for top-p `p` at `temperature`: the fewest most probable whose probabilities reach p. */
export function nucleus(row: readonly number[], p: number, temperature: number): number[] {
  const scaled = row.map((v) => v / temperature);
  const top = Math.max(...scaled);
  const weights = scaled.map((v) => Math.exp(v - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  const order = weights.map((w, i) => [w / sum, i] as const).sort((a, b) => b[0] - a[0]);
  const kept: number[] = [];
  let cumulative = 0;
  for (const [prob, i] of order) {
    kept.push(i);
    cumulative += prob;
    if (cumulative >= p) break;
  }
  return kept;
}
