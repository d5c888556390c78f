/**
 * The token choice on its own (lib/generate/sampling.ts), against references computed here:
 * top-k by a full sort, draw frequencies against the softmax probabilities of what top-k and
 * top-p keep, and the seeded generator's reproducibility and spread.
 */
import { argmax, chooseToken, SeededRandom, topKIds } from '../../lib/generate/sampling';
import { Random } from '../helpers/random';

/** The k highest ids by a full sort: value descending, then id ascending. */
const sortedTopK = (row: number[], k: number): number[] =>
  row
    .map((v, i) => [v, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, k)
    .map(([, i]) => i);

test('topKIds is the first k of a full sort, ties to the lower id, at any offset', () => {
  const rnd = new Random(4);
  for (let trial = 0; trial < 50; trial++) {
    const vocab = rnd.int(1, 40);
    // Few distinct values: many ties.
    const row = Array.from({ length: vocab }, () => rnd.int(-3, 3) / 2);
    const padded = [9, 9, ...row];
    for (const k of [1, 2, 5, vocab, vocab + 3]) expect(topKIds(padded, 2, vocab, k)).toEqual(sortedTopK(row, k));
  }
  expect(argmax([1, 5, 5, NaN, 2], 0, 5)).toBe(1);
});

test('sampling draws tokens in proportion to softmax(logits / temperature) over what top-k and top-p keep', () => {
  const logits = [2, 1.5, 0.2, -1, 1.9, 0.7];
  const t = 0.8;
  const probs = (keep: number[]): Map<number, number> => {
    const w = keep.map((i) => Math.exp(logits[i]! / t));
    const sum = w.reduce((a, b) => a + b, 0);
    return new Map(keep.map((i, j) => [i, w[j]! / sum]));
  };
  // By hand: the probabilities at t = 0.8, highest first: ids 0, 4, 1, 5, 2, 3 (0.364, 0.322,
  // 0.195, 0.072, 0.038, 0.009 to 3 places); top-p 0.8 keeps the first three (0.881).
  const cases: Array<[Parameters<typeof chooseToken>[3], Map<number, number>]> = [
    [{ temperature: t }, probs([0, 1, 2, 3, 4, 5])],
    [{ temperature: t, topK: 3 }, probs([0, 4, 1])],
    [{ temperature: t, topP: 0.8 }, probs([0, 4, 1])],
    [{ temperature: t, topK: 2, topP: 0.99 }, probs([0, 4])],
  ];
  for (const [sampling, expected] of cases) {
    const random = new SeededRandom(17);
    const counts = new Map<number, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const id = chooseToken(logits, 0, logits.length, sampling, random, 'test');
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([...expected.keys()].sort());
    // Within 4 standard deviations of a binomial count.
    for (const [id, p] of expected) expect(Math.abs(counts.get(id)! / n - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n) + 1e-9);
  }
});

test('greedy ignores the generator; a sampled row of no finite logit is E_BAD_MODEL', () => {
  const random = new SeededRandom(1);
  expect(chooseToken([0, 3, 1], 0, 3, { temperature: 0 }, random, 'x')).toBe(1);
  expect(() => chooseToken([NaN, -Infinity], 0, 2, { temperature: 1 }, random, 'the logits of prompt 0 at step 3')).toThrow(
    expect.objectContaining({ code: 'E_BAD_MODEL', message: 'the logits of prompt 0 at step 3: no finite logit to sample from (every one is NaN, +Infinity or -Infinity)' }),
  );
});

test('SeededRandom: a seed gives the same stream, other seeds (also past 2^32) others, uniform in [0, 1)', () => {
  const draw = (seed: number, n = 1000): number[] => {
    const r = new SeededRandom(seed);
    return Array.from({ length: n }, () => r.next());
  };
  expect(draw(42)).toEqual(draw(42));
  expect(draw(43)).not.toEqual(draw(42));
  expect(draw(2 ** 32 + 42)).not.toEqual(draw(42));
  const values = draw(7, 100_000);
  expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  expect(Math.abs(mean - 0.5)).toBeLessThan(0.005);
  const buckets = new Array<number>(10).fill(0);
  for (const v of values) buckets[Math.floor(v * 10)]!++;
  for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
});
