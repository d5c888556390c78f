/** The CLI's pure helpers: output file names, latency statistics (hand-computed), --shape parsing. */
import { latencyStats, percentile } from '../../lib/cli/bench-command';
import { outputFileNames } from '../../lib/cli/paths';
import { parseShapeOptions, UsageError } from '../../lib/cli/usage';
import { InvalidArgumentError } from '../../lib/errors';

test('output file names are unique, deterministic and safe', () => {
  expect(outputFileNames(['a/b', 'a_b', 'a?b', 'A_B', 'output0'])).toEqual(['a_b.npy', 'a_b_2.npy', 'a_b_3.npy', 'A_B_4.npy', 'output0.npy']);
  expect(outputFileNames(['..', '', 'x_2', 'x', 'x'])).toEqual(['__.npy', 'output.npy', 'x_2.npy', 'x.npy', 'x_3.npy']);
});

test('nearest-rank percentiles', () => {
  const samples = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
  expect(latencyStats(samples)).toEqual({ runs: 10, min: 1, mean: 5.5, p50: 5, p90: 9, p99: 10, max: 10 });
  expect(percentile([4], 99)).toBe(4);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  expect([percentile(hundred, 50), percentile(hundred, 90), percentile(hundred, 99)]).toEqual([50, 90, 99]);
});

test('usage errors are E_INVALID_ARGUMENT errors', () => {
  expect(() => parseShapeOptions(['x=1x2', 'x=3x4'])).toThrow(new UsageError('--shape x=3x4: input "x" was given a shape twice'));
  try {
    parseShapeOptions(['x=1e20']);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).code).toBe('E_INVALID_ARGUMENT');
  }
  expect.assertions(3);
});
