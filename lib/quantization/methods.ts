/**
 * The calibration methods: each turns a tensor's statistics (./statistics.ts) into amax, the
 * largest |x| the quantized tensor represents (larger values saturate).
 *
 * - minmax: the largest |x| seen.
 * - percentile: the nearest-rank percentile of |x|: the ceil(p/100 · n)-th smallest of the n
 *   values seen, read from the histogram as the upper edge of the bin that holds it (so at
 *   most one bin, range / FINE_BINS, above the exact value, and never above the max).
 * - entropy: the method of TensorRT's entropy calibrators, as NVIDIA presented it ("8-bit
 *   Inference with TensorRT", GTC 2017): a 2048-bin histogram of |x| over [0, max]; for each
 *   candidate clip of i bins (128 ≤ i ≤ 2048), P is the first i bins with the count of every
 *   bin beyond added to the last one (what clipping does to those values), and Q is the same
 *   i bins quantized into 128 levels and expanded back (each level's count spread evenly over
 *   its bins that P does not have empty); the clip whose Q is nearest P in KL divergence wins,
 *   and amax is the middle of the bin after it, (i + 0.5) · bin width, capped at the max.
 */
import { InternalError } from '../errors';
import { FINE_BINS, type TensorStatistics } from './statistics';
import type { CalibrationMethod } from './types';

/** Bins of the entropy search's histogram, and the levels of its candidate quantizations (int8's 2^7 magnitudes). */
export const ENTROPY_BINS = 2048;
export const ENTROPY_LEVELS = 128;

/** The percentile method's default. */
export const DEFAULT_PERCENTILE = 99.99;

/**
 * The nearest-rank percentile `p` (in (0, 100]) of the values a histogram counts: the upper
 * edge of the bin holding the ceil(p/100 · total)-th smallest value. `counts` are per bin of
 * width `binWidth` from 0.
 */
export function percentileFromHistogram(counts: ArrayLike<number>, binWidth: number, p: number): number {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return (i + 1) * binWidth;
  }
  return counts.length * binWidth;
}

/**
 * The fine histogram of `stats` re-binned into `bins` bins of equal width over [0, stats.max]:
 * a fine bin that straddles a boundary gives each side the share of its width that lies there
 * (values are taken as spread evenly within a fine bin, which is at most 1/8 of a coarse bin).
 */
export function rebin(stats: TensorStatistics, bins: number): Float64Array {
  const out = new Float64Array(bins);
  const fine = stats.histogram;
  if (fine === undefined || stats.max === 0 || stats.range === 0) {
    if (fine !== undefined) out[0] = stats.count;
    return out;
  }
  const fineWidth = stats.range / FINE_BINS;
  const width = stats.max / bins;
  for (let j = 0; j < FINE_BINS; j++) {
    const c = fine[j]!;
    if (c === 0) continue;
    const lo = j * fineWidth;
    // Values lie at or below the max: the fine bin's part above it holds none of them.
    const hi = Math.min((j + 1) * fineWidth, stats.max);
    if (hi <= lo) {
      out[bins - 1]! += c;
      continue;
    }
    let k = Math.min(bins - 1, Math.floor(lo / width));
    let at = lo;
    while (at < hi) {
      const edge = k === bins - 1 ? hi : Math.min(hi, (k + 1) * width);
      out[k]! += (c * (edge - at)) / (hi - lo);
      at = edge;
      k++;
    }
  }
  return out;
}

/**
 * The entropy method's clip, in bins: the i in [ENTROPY_LEVELS, counts.length] minimizing
 * KL(P_i ‖ Q_i) (see the top of this file). Candidates whose Q is 0 where P is not (infinite
 * divergence) are passed over; when every one is, the whole histogram (counts.length).
 */
export function entropyClipBins(counts: ArrayLike<number>, levels = ENTROPY_LEVELS): number {
  const n = counts.length;
  if (n <= levels) return n;
  // Suffix sums: the counts beyond a clip, which P adds to its last bin.
  const beyond = new Float64Array(n + 1);
  for (let i = n - 1; i >= 0; i--) beyond[i] = beyond[i + 1]! + counts[i]!;
  let best = n;
  let bestDivergence = Infinity;
  const p = new Float64Array(n);
  for (let i = levels; i <= n; i++) {
    for (let j = 0; j < i; j++) p[j] = counts[j]!;
    p[i - 1]! += beyond[i]!;
    let pSum = 0;
    for (let j = 0; j < i; j++) pSum += p[j]!;
    if (pSum === 0) continue;
    // Q: level g takes the bins [start(g), start(g+1)), its count spread over the bins P has non-empty.
    const qValues = new Float64Array(i);
    let qSum = 0;
    for (let g = 0; g < levels; g++) {
      const start = Math.floor((g * i) / levels);
      const end = Math.floor(((g + 1) * i) / levels);
      let total = 0;
      let used = 0;
      for (let j = start; j < end; j++) {
        total += counts[j]!;
        if (p[j] !== 0) used++;
      }
      if (used === 0) continue;
      const each = total / used;
      for (let j = start; j < end; j++) if (p[j] !== 0) qValues[j] = each;
      qSum += total;
    }
    if (qSum === 0) continue;
    let divergence = 0;
    for (let j = 0; j < i; j++) {
      const pj = p[j]!;
      if (pj === 0) continue;
      const qj = qValues[j]!;
      if (qj === 0) {
        divergence = Infinity;
        break;
      }
      divergence += (pj / pSum) * Math.log(pj / pSum / (qj / qSum));
    }
    if (divergence < bestDivergence) {
      bestDivergence = divergence;
      best = i;
    }
  }
  return best;
}

/** amax of `stats` by `method` (`percentile` in (0, 100] for that method). */
export function amaxOf(stats: TensorStatistics, method: CalibrationMethod, percentile = DEFAULT_PERCENTILE): number {
  if (method === 'minmax' || stats.max === 0) return stats.max;
  if (stats.histogram === undefined) throw new InternalError(`calibrate: the ${method} method was given statistics without a histogram`);
  if (method === 'percentile') {
    const value = percentileFromHistogram(stats.histogram, stats.range / FINE_BINS, percentile);
    return Math.min(value, stats.max);
  }
  const counts = rebin(stats, ENTROPY_BINS);
  const clip = entropyClipBins(counts);
  return Math.min(stats.max, ((clip + 0.5) * stats.max) / ENTROPY_BINS);
}
