/**
 * The bucket sizes of a bucketed generation (lib/generate/slot-sizes.ts): the lists, and the
 * clamps that keep every run within the program's limits.
 */
import type { GenerationLimits } from '../../lib/generate';
import { MIN_SLOTS, powerOfTwoBucket, quarterOctaveBucket, slotSizes } from '../../lib/generate/slot-sizes';

const limits = (maxLength: number): GenerationLimits => ({
  batch: { min: 1, max: 4 },
  seq: { min: 1, max: maxLength },
  past: { min: 0, max: maxLength - 1 },
  total: { min: 1, max: maxLength },
});

test('cache capacities are powers of two from 16; prompt lengths step by quarters of an octave', () => {
  expect(MIN_SLOTS).toBe(16);
  expect([0, 1, 16, 17, 32, 33, 1000, 1024, 1025].map(powerOfTwoBucket)).toEqual([16, 16, 16, 32, 32, 64, 1024, 1024, 2048]);
  expect([1, 16, 17, 20, 21, 24, 25, 28, 29, 32, 33, 40, 100, 513].map(quarterOctaveBucket)).toEqual([16, 16, 20, 20, 24, 24, 28, 28, 32, 32, 40, 40, 112, 640]);
  // Never more than a quarter more than asked for, past the smallest bucket.
  for (let n = MIN_SLOTS; n < 5000; n++) {
    const b = quarterOctaveBucket(n);
    expect(b).toBeGreaterThanOrEqual(n);
    expect(b).toBeLessThanOrEqual(Math.ceil(n * 1.25));
  }
});

test('within the program\'s limits: capacities stop at the most slots a run may read, prompts leave room for the new tokens', () => {
  const sizes = slotSizes(limits(32), 16);
  expect([1, 16, 17, 31].map(sizes.capacity)).toEqual([16, 16, 31, 31]);
  // 31 slots at most, and 16 new tokens take 14 more after the prompt's: a padded prompt is at most 17.
  expect([5, 16, 17].map(sizes.promptLength)).toEqual([16, 16, 17]);
  expect(slotSizes(limits(32), 28).promptLength(5)).toBe(5);
  // One new token: only the prompt runs, so it may be padded up to the longest input_ids.
  expect(slotSizes(limits(32), 1).promptLength(30)).toBe(32);
  // Never below what is needed, whatever the limits say.
  expect(slotSizes(limits(8), 4).capacity(12)).toBe(12);
  const unbounded = slotSizes({ ...limits(8), seq: { min: 1, max: Infinity }, past: { min: 0, max: Infinity }, total: { min: 1, max: Infinity } }, 64);
  expect(unbounded.capacity(100)).toBe(128);
  expect(unbounded.promptLength(100)).toBe(112);
});
