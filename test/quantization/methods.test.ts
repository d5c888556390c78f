/**
 * The calibration methods give what each defines, on distributions made by hand:
 * - minmax: amax is the largest |x| over every batch (the model's input, and a hidden ReLU
 *   computed here in float64 from the weights);
 * - percentile: the nearest-rank order statistic of |x| (the ceil(p/100 · n)-th smallest),
 *   to within one bin of the collected histogram (range / 16384, range < 2 · max), never below;
 * - entropy: on known histograms, the clip an independent NumPy implementation of the same
 *   search (NVIDIA's GTC 2017 pseudocode, with our grouping of bins into 128 levels) found,
 *   below the max for a heavy tail and at it for a uniform distribution; end to end, a
 *   Laplace-distributed input is clipped below its max.
 * And the histogram's range doubling keeps every count.
 */
import { Tensor } from '../../lib/ir/tensor';
import { calibrate } from '../../lib/quantization';
import { amaxOf, entropyClipBins, percentileFromHistogram, rebin } from '../../lib/quantization/methods';
import { FINE_BINS, TensorStatistics } from '../../lib/quantization/statistics';
import { Random } from '../helpers/random';
import { mlp } from './models';

// Calibrations with the entropy search, and onnxruntime sessions, take seconds in jest's sandbox (its loops run far slower than in plain Node).
jest.setTimeout(60_000);

/** x batches of the MLP ([rows, 16]) holding `values` in order, `rows` rows a batch. */
function batchesOf(values: number[], rows: number): Record<string, Tensor>[] {
  const out: Record<string, Tensor>[] = [];
  for (let i = 0; i < values.length; i += rows * 16) out.push({ x: Tensor.from('float32', [rows, 16], values.slice(i, i + rows * 16)) });
  return out;
}

/** A seeded shuffle. */
function shuffled<T>(values: T[], seed: number): T[] {
  const rng = new Random(seed);
  const a = [...values];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe('minmax', () => {
  test('amax is the largest |x| seen over all batches, for the input and for a hidden activation', async () => {
    const m = mlp();
    const rng = new Random(3);
    const batches = [0.5, 0.7, 3.25, 1.5].map((size) => ({ x: rng.tensor([4, 16], 'float32', -size, size) }));
    // A large negative value in the third batch: |x| counts.
    const third = batches[2]!.x.data as Float32Array;
    third[17] = -3.25;
    const { report } = await calibrate(m.model, batches, { method: 'minmax' });
    const x = report.activations.find((a) => a.tensor === 'x')!;
    expect(x.amax).toBe(Math.fround(3.25));
    expect(x.scale).toBe(Math.fround(3.25 / 127));

    // a1 = relu(x · W1ᵀ + b1), in float64 here.
    const w = m.weights.fc1_w!.data as Float32Array;
    const b = m.weights.fc1_b!.data as Float32Array;
    let max = 0;
    for (const batch of batches) {
      const xs = batch.x.data as Float32Array;
      for (let r = 0; r < 4; r++) {
        for (let o = 0; o < 32; o++) {
          let s = b[o]!;
          for (let k = 0; k < 16; k++) s += xs[r * 16 + k]! * w[o * 16 + k]!;
          max = Math.max(max, s);
        }
      }
    }
    const a1 = report.activations.find((a) => a.tensor === 'a1')!;
    expect(a1.amax).toBeCloseTo(max, 5);
    expect(a1.max).toBe(a1.amax);
  });
});

describe('percentile', () => {
  // 10,000 distinct magnitudes 0.01..100, signs alternating, shuffled over 5 batches.
  const magnitudes = Array.from({ length: 10_000 }, (_, i) => (i + 1) / 100);
  const values = shuffled(
    magnitudes.map((v, i) => (i % 2 === 0 ? v : -v)),
    5,
  );
  const sorted = [...magnitudes].sort((a, b) => a - b);
  const orderStatistic = (p: number): number => sorted[Math.ceil((p / 100) * sorted.length) - 1]!;

  test.each([99, 99.9, 99.99, 90, 50])('p = %d: the ceil(p/100 · n)-th smallest |x|, to within one histogram bin above it', async (p) => {
    const { report } = await calibrate(mlp().model, batchesOf(values, 125), { method: 'percentile', percentile: p });
    const x = report.activations.find((a) => a.tensor === 'x')!;
    const exact = Math.fround(orderStatistic(p));
    // The histogram's range is below twice the max: a bin is under 2 · 100 / FINE_BINS wide.
    const bin = (2 * 100) / FINE_BINS;
    expect(x.amax).toBeGreaterThanOrEqual(exact - 1e-9);
    expect(x.amax - exact).toBeLessThanOrEqual(bin);
    expect(x.max).toBe(100);
  });

  test('p = 100 is the max', async () => {
    const { report } = await calibrate(mlp().model, batchesOf(values, 125), { method: 'percentile', percentile: 100 });
    expect(report.activations.find((a) => a.tensor === 'x')!.amax).toBe(100);
  });

  test('percentileFromHistogram walks the counts to the nearest rank', () => {
    // 10 values in bin 0, 80 in bin 1, 10 in bin 3 (width 0.5): the 90th value is in bin 1, the 91st in bin 3.
    const counts = [10, 80, 0, 10];
    expect(percentileFromHistogram(counts, 0.5, 90)).toBe(1);
    expect(percentileFromHistogram(counts, 0.5, 90.5)).toBe(2);
    expect(percentileFromHistogram(counts, 0.5, 10)).toBe(0.5);
    expect(percentileFromHistogram([0, 0], 1, 99)).toBe(0);
  });
});

describe('entropy', () => {
  test('a heavy tail (exponential decay and a few outliers at the max): the clip of the NumPy reference, well below the max', () => {
    const counts = Array.from({ length: 2048 }, (_, i) => Math.floor(1e6 * Math.exp(-i / 64)));
    counts[2047]! += 5;
    // kl_search(h, 'even') of the NumPy implementation on the same histogram.
    expect(entropyClipBins(counts)).toBe(703);
  });

  test('a uniform histogram keeps its whole range', () => {
    expect(entropyClipBins(new Array(2048).fill(1))).toBe(2048);
  });

  test('a Cauchy-like tail, where every clip loses more than it gains: the reference keeps 2047 bins', () => {
    const counts = Array.from({ length: 2048 }, (_, i) => Math.floor(1e5 / (1 + (i / 32) ** 2)));
    expect(entropyClipBins(counts)).toBe(2047);
  });

  test('end to end, a Laplace-distributed input is clipped below its max; minmax on the same data keeps the max', async () => {
    const rng = new Random(8);
    const laplace = Array.from({ length: 16 * 2000 }, () => {
      const u = rng.next() || Number.MIN_VALUE;
      return (rng.next() < 0.5 ? -1 : 1) * -Math.log(u);
    });
    const batches = batchesOf(laplace, 250);
    const entropy = (await calibrate(mlp().model, batches, { method: 'entropy' })).report.activations.find((a) => a.tensor === 'x')!;
    const minmax = (await calibrate(mlp().model, batches, { method: 'minmax' })).report.activations.find((a) => a.tensor === 'x')!;
    const max = Math.max(...laplace.map((v) => Math.abs(Math.fround(v))));
    expect(minmax.amax).toBe(max);
    expect(entropy.max).toBe(max);
    // The NumPy reference clips 200,000 Laplace samples' 2048-bin histogram at 1838 bins (0.9 of the max).
    expect(entropy.amax).toBeLessThan(max);
    // Not absurdly low either: Laplace(0, 1) has 99% of its mass below 4.6.
    expect(entropy.amax).toBeGreaterThan(4.6);
  });
});

describe('the collected histogram', () => {
  test('doubling its range as larger batches come keeps every count, in bins of the final width', () => {
    const st = new TensorStatistics(true);
    const rng = new Random(4);
    const all: number[] = [];
    for (const size of [0.001, 1, 5, 37]) {
      const batch = Array.from({ length: 1000 }, () => rng.uniform(-size, size));
      batch.push(0, 0);
      all.push(...batch);
      st.add(Float32Array.from(batch));
    }
    const hist = st.histogram!;
    expect(hist.reduce((a, b) => a + b, 0)).toBe(all.length);
    expect(st.count).toBe(all.length);
    expect(st.range).toBeGreaterThanOrEqual(st.max);
    expect(st.range).toBeLessThan(2 * st.max);
    // Every value falls in the bin its magnitude says, at the final width.
    const width = st.range / FINE_BINS;
    const expected = new Float64Array(FINE_BINS);
    for (const v of Float32Array.from(all)) expected[Math.min(FINE_BINS - 1, Math.floor(Math.abs(v) / width))]!++;
    let moved = 0;
    hist.forEach((c, i) => (moved += Math.abs(c - expected[i]!)));
    // Values that sat on a bin edge before a doubling may be one bin off after it (float rounding).
    expect(moved).toBeLessThanOrEqual(4);
  });

  test('NaN and ±Infinity are counted apart and left out of the range', () => {
    const st = new TensorStatistics(true);
    st.add(Float32Array.from([1, -2, NaN, Infinity, -Infinity, 0.5]));
    expect(st.nonFinite).toBe(3);
    expect(st.count).toBe(3);
    expect(st.max).toBe(2);
    expect(amaxOf(st, 'minmax')).toBe(2);
    expect(rebin(st, 2048).reduce((a, b) => a + b, 0)).toBeCloseTo(3, 9);
  });

  test('a tensor that is 0 throughout has amax 0 under every method', () => {
    for (const method of ['minmax', 'percentile', 'entropy'] as const) {
      const st = new TensorStatistics(method !== 'minmax');
      st.add(new Float32Array(10));
      expect(amaxOf(st, method)).toBe(0);
    }
  });
});
