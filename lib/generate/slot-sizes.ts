/**
 * The sizes a generation's runs use when they are bucketed: the prompt left-padded to a
 * length from a short list, and the KV cache holding a number of slots from another, so that
 * a program whose engines are prepared per input shape (the cuda backend builds and captures a
 * plan for each shape it meets, and keeps a few) sees a handful of shapes across a whole
 * generation instead of a new one at every token.
 *
 * Padding changes no value: the padded prompt positions and the unused cache slots are zeros
 * with attention_mask 0, which the model's attention masks out (an additive -inf or large
 * negative bias: their weights are exactly 0), and position_ids count real tokens only. That
 * holds for models that take position_ids and see past slots only through attention_mask and
 * a causal test on slot order; a model that reads distances between slots (a sliding window
 * shorter than the cache, ALiBi computed from slot indices) would see different ones, so
 * bucketing is a choice (GeneratorOptions.sizes) and a model without position_ids is refused.
 */
import type { GenerationLimits } from './limits';

/** The capacities a cache grows through, and the length a prompt is padded to. */
export interface SlotSizes {
  /** Cache slots for `needed` used ones: a power of two, at least 16, within the program's limits. */
  capacity(needed: number): number;
  /** The padded length of a prompt of `length` tokens (the longest of the batch). */
  promptLength(length: number): number;
}

/** The fewest slots, and the shortest padded prompt, a bucketed generation uses. */
export const MIN_SLOTS = 16;

/** The smallest power of two >= n, and at least {@link MIN_SLOTS}. */
export function powerOfTwoBucket(n: number): number {
  let b = MIN_SLOTS;
  while (b < n) b *= 2;
  return b;
}

/**
 * The smallest of 2^k, 1.25·2^k, 1.5·2^k, 1.75·2^k (integers, at least {@link MIN_SLOTS}) >= n:
 * a prompt is computed in full at its padded length, so its buckets are finer than the
 * cache's (at most a quarter more positions than the prompt has).
 */
export function quarterOctaveBucket(n: number): number {
  if (n <= MIN_SLOTS) return MIN_SLOTS;
  let base = MIN_SLOTS;
  while (base * 2 < n) base *= 2;
  for (const step of [1.25, 1.5, 1.75, 2]) {
    const b = Math.ceil(base * step);
    if (b >= n) return b;
  }
  return base * 2;
}

/**
 * Bucketed sizes for a generation of `maxNewTokens` tokens with `limits`: buckets clamped so
 * that every run still fits (the run after the cache's last growth feeds one token at
 * past = capacity; a padded prompt leaves room for the new tokens' slots), never below what
 * the generation needs.
 */
export function slotSizes(limits: GenerationLimits, maxNewTokens: number): SlotSizes {
  // The most slots a run may read: past and attention_mask (past + the token fed) both bound it.
  const mostSlots = Math.min(limits.past.max, limits.total.max - 1);
  return {
    capacity: (needed) => Math.max(needed, Math.min(powerOfTwoBucket(needed), mostSlots)),
    promptLength: (length) => {
      // After the prompt, maxNewTokens - 1 runs add a slot each; the last reads
      // padded + maxNewTokens - 2 used slots.
      const room = maxNewTokens <= 1 ? Infinity : mostSlots - maxNewTokens + 2;
      const most = Math.min(limits.seq.max, limits.total.max, room);
      return Math.max(length, Math.min(quarterOctaveBucket(length), most));
    },
  };
}
