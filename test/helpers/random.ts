/**
 * A small seeded PRNG (mulberry32) so that tests draw the same "random" inputs on every run.
 */
import type { DType } from '../../lib/ir/dtype';
import { fromNumbers } from '../../lib/kernels/access';
import { shapeSize, Tensor, type Shape } from '../../lib/ir/tensor';

/** A deterministic source of uniform floats, integers and random tensors. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform in [lo, hi). */
  uniform(lo = -1, hi = 1): number {
    return lo + (hi - lo) * this.next();
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** `n` uniform floats in [lo, hi). */
  floats(n: number, lo = -1, hi = 1): number[] {
    return Array.from({ length: n }, () => this.uniform(lo, hi));
  }

  /** A tensor of uniform values in [lo, hi), rounded to `dtype` (complex: both parts). */
  tensor(shape: Shape, dtype: DType = 'float32', lo = -1, hi = 1): Tensor {
    const lanes = dtype === 'complex64' || dtype === 'complex128' ? 2 : 1;
    return fromNumbers(dtype, shape, this.floats(shapeSize(shape) * lanes, lo, hi));
  }

  /** A tensor of uniform integers in [lo, hi] (int64 stored as bigint). */
  intTensor(shape: Shape, lo: number, hi: number, dtype: DType = 'int64'): Tensor {
    const values = Array.from({ length: shapeSize(shape) }, () => this.int(lo, hi));
    return fromNumbers(dtype, shape, values);
  }
}
