/**
 * What calibration keeps of each observed tensor over all batches: the largest |x|, and (for
 * the percentile and entropy methods) a histogram of |x|. Batches arrive once, in order, from
 * an iterable that may not be replayed, so the histogram's range cannot be known in advance:
 * it starts at the first batch's largest |x| and doubles whenever a batch goes past it, adding
 * neighbouring bins pairwise. That merge is exact (no value changes bin relative to the
 * others), so at the end every value lies in a bin of the same width, range / FINE_BINS, and
 * the range is less than twice the largest |x|: the histogram resolves at least FINE_BINS / 2
 * bins below the max, which ./methods.ts re-bins to the 2048 bins of the entropy search.
 */

/** Bins of the collected histogram: 8× the entropy search's 2048 bins, so re-binning to those splits few counts. */
export const FINE_BINS = 16384;

export class TensorStatistics {
  /** Finite values seen. */
  count = 0;
  /** The largest finite |x| seen. */
  max = 0;
  /** NaN and ±Infinity values seen (left out of max and the histogram). */
  nonFinite = 0;
  /** The histogram's upper edge (0 until a value other than 0 is seen); bins are range / FINE_BINS wide. */
  range = 0;
  /** Counts of |x| per bin (present when the method needs a histogram). */
  readonly histogram: Float64Array | undefined;
  /** Zeros seen before the range was known: they go into bin 0 once it is. */
  private pendingZeros = 0;

  constructor(withHistogram: boolean) {
    this.histogram = withHistogram ? new Float64Array(FINE_BINS) : undefined;
  }

  /** Adds the values of one batch. */
  add(values: ArrayLike<number>): void {
    const n = values.length;
    let batchMax = 0;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const a = Math.abs(values[i]!);
      if (a > batchMax) {
        if (a === Infinity) bad++;
        else batchMax = a;
      } else if (a !== a) bad++;
    }
    this.nonFinite += bad;
    this.count += n - bad;
    if (batchMax > this.max) this.max = batchMax;
    const hist = this.histogram;
    if (hist === undefined) return;
    if (batchMax === 0) {
      if (this.range === 0) this.pendingZeros += n - bad;
      else hist[0]! += n - bad;
      return;
    }
    if (this.range === 0) {
      this.range = batchMax;
      hist[0]! += this.pendingZeros;
      this.pendingZeros = 0;
    }
    while (batchMax > this.range) this.doubleRange();
    const range = this.range;
    const perUnit = FINE_BINS / range;
    const last = FINE_BINS - 1;
    for (let i = 0; i < n; i++) {
      const a = Math.abs(values[i]!);
      if (!(a <= range)) continue; // NaN, ±Infinity
      const bin = Math.floor(a * perUnit);
      hist[bin > last ? last : bin]!++;
    }
  }

  /** Doubles the range: bin i of the new histogram holds old bins 2i and 2i+1. */
  private doubleRange(): void {
    const hist = this.histogram!;
    const half = FINE_BINS / 2;
    for (let i = 0; i < half; i++) hist[i] = hist[2 * i]! + hist[2 * i + 1]!;
    hist.fill(0, half);
    this.range *= 2;
  }
}
