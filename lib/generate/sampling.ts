/**
 * Choosing the next token from a row of logits: greedy (the highest logit, the lowest id among
 * equals, as argmax does) or sampled, in the order Hugging Face transformers applies its
 * warpers: temperature, then top-k, then top-p (nucleus), then a draw from the softmax of what
 * is left. Draws come from a small seeded PRNG, so a seed gives the same tokens on every run
 * and every backend that computes the same logits.
 */
import { BadModelError } from '../errors';

/**
 * A seeded source of uniform numbers in [0, 1): sfc32 (Chris Doty-Humphrey's Small Fast
 * Counting generator, 128 bits of state), its state filled from the seed by splitmix32 so that
 * nearby seeds give unrelated streams. Any safe integer seeds it (both 32-bit halves are used).
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = (seed % 2 ** 32) >>> 0;
    const high = Math.floor(seed / 2 ** 32) >>> 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s ^ high;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    // The first outputs of a fresh state are less mixed: drop them.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1), with 53 random bits. */
  next(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }
}

/** How the next token is chosen. `temperature` 0 is greedy; above 0, sampling. */
export interface Sampling {
  readonly temperature: number;
  /** Keep only the k highest logits (sampling only). */
  readonly topK?: number;
  /** Keep the fewest highest-probability tokens whose probabilities sum to at least p (sampling only). */
  readonly topP?: number;
}

/** Logits as numbers: a host tensor's data (float16 and bfloat16 decoded beforehand). */
export type LogitsRow = ArrayLike<number>;

/** The highest logit's id among `vocab` logits from `offset` (NaN counts as lowest; ties: the lowest id). */
export function argmax(logits: LogitsRow, offset: number, vocab: number): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < vocab; i++) {
    const v = logits[offset + i]!;
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/**
 * The ids of the `k` highest logits, highest first (equal logits: lower id first), through a
 * min-heap of k entries: O(vocab · log k), no sort of the whole vocabulary.
 */
export function topKIds(logits: LogitsRow, offset: number, vocab: number, k: number): number[] {
  const n = Math.min(k, vocab);
  // Heap order: the root is the entry that would be dropped first (lowest logit, then highest id).
  const worse = (i: number, j: number): boolean => {
    const a = logits[offset + i]!;
    const b = logits[offset + j]!;
    return a < b || (a === b && i > j) || (Number.isNaN(a) && !Number.isNaN(b));
  };
  const heap: number[] = [];
  const siftDown = (at: number): void => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let m = at;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === at) return;
      [heap[at], heap[m]] = [heap[m]!, heap[at]!];
      at = m;
    }
  };
  for (let i = 0; i < vocab; i++) {
    if (heap.length < n) {
      heap.push(i);
      for (let at = heap.length - 1; at > 0; ) {
        const parent = (at - 1) >> 1;
        if (!worse(heap[at]!, heap[parent]!)) break;
        [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
        at = parent;
      }
    } else if (worse(heap[0]!, i)) {
      heap[0] = i;
      siftDown(0);
    }
  }
  return heap.sort((i, j) => (worse(i, j) ? 1 : worse(j, i) ? -1 : 0));
}

/**
 * The token chosen from the row of `vocab` logits at `offset`. `where` names the row and step
 * for the error.
 *
 * @throws {BadModelError} `E_BAD_MODEL` when sampling finds no finite logit (the model computed
 *   NaN or -Infinity for every token).
 */
export function chooseToken(logits: LogitsRow, offset: number, vocab: number, sampling: Sampling, random: SeededRandom, where: string): number {
  if (sampling.temperature === 0) return argmax(logits, offset, vocab);
  const t = sampling.temperature;
  // Candidates, highest logit first when top-k or top-p needs an order.
  let ids: number[];
  if (sampling.topK !== undefined && sampling.topK < vocab) ids = topKIds(logits, offset, vocab, sampling.topK);
  else if (sampling.topP !== undefined) ids = topKIds(logits, offset, vocab, vocab);
  else ids = Array.from({ length: vocab }, (_, i) => i);
  let top = -Infinity;
  for (const id of ids) top = Math.max(top, logits[offset + id]! / t);
  if (!Number.isFinite(top)) {
    throw new BadModelError(`${where}: no finite logit to sample from (every one is NaN, +Infinity or -Infinity)`, { details: { where } });
  }
  const weights = ids.map((id) => {
    const w = Math.exp(logits[offset + id]! / t - top);
    return Number.isNaN(w) ? 0 : w;
  });
  let count = ids.length;
  if (sampling.topP !== undefined && sampling.topP < 1) {
    const sum = weights.reduce((a, b) => a + b, 0);
    let cumulative = 0;
    for (let i = 0; i < ids.length; i++) {
      cumulative += weights[i]! / sum;
      if (cumulative >= sampling.topP) {
        count = i + 1;
        break;
      }
    }
  }
  let total = 0;
  for (let i = 0; i < count; i++) total += weights[i]!;
  let u = random.next() * total;
  for (let i = 0; i < count; i++) {
    u -= weights[i]!;
    if (u < 0) return ids[i]!;
  }
  // Rounding left u at 0 past the last candidate: the last one with any weight.
  for (let i = count - 1; i >= 0; i--) if (weights[i]! > 0) return ids[i]!;
  return ids[0]!;
}
