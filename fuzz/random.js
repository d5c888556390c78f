'use strict';
/** A seeded PRNG (mulberry32): the same seed and input index always give the same input. */
class Random {
  constructor(seed) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next() {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick(list) {
    return list[this.int(0, list.length - 1)];
  }

  chance(p) {
    return this.next() < p;
  }
}

/** The seed of input `index` of a run seeded with `seed`, for reader `reader` (FNV-1a mix). */
function inputSeed(seed, reader, index) {
  let h = 0x811c9dc5 ^ seed;
  for (const c of `${reader}:${index}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193);
  return (h ^ Math.imul(index, 0x9e3779b1)) >>> 0;
}

/** Numbers that break size arithmetic: boundaries of int32, 2^53, negatives, huge floats. */
const INTERESTING_NUMBERS = [0, 1, -1, 2, 3, 7, 64, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32, -(2 ** 31), 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e20, 1e21, 1e300, 0.5, -0.5, 1.5];

module.exports = { Random, inputSeed, INTERESTING_NUMBERS };
