/**
 * The tiled map form (lowering/map.ts): boxes whose last dim is a multiple of TILE take it,
 * from the GPU check's `tile.*` cases, on the CPU kernel emulator against the reference
 * backend; others keep the plain form; a tile whose lanes overlap fails the comparison.
 */
import type { KernelLaunch, LoweredStep } from '../../../../lib/backends/cuda/lowering';
import { TILE } from '../../../../lib/backends/cuda/lowering/map';
import { checkSamples, expectSampleMatches } from '../../../helpers/cuda-emulator/samples';

const samples = checkSamples();
const tiles = samples.filter((s) => s.name.includes('/tile.'));
const launches = (steps: readonly LoweredStep[]): KernelLaunch[] => steps.filter((s): s is KernelLaunch => s.kind === 'launch');

test('the check has tiled cases of several kinds', () => {
  expect(TILE % 32).toBe(0);
  expect(new Set(tiles.map((s) => s.kind)).size).toBeGreaterThanOrEqual(5);
});

test.each(tiles.map((s) => [s.name, s] as const))('%s: the tiled kernel, matching the reference backend', (_name, s) => {
  const steps = launches(expectSampleMatches(s));
  expect(steps.map((l) => l.kernel.key.endsWith('.tile'))).toEqual([true]);
  // A warp per tile: 32 lanes for every TILE elements.
  expect(steps[0]!.block[0]! % 32).toBe(0);
});

test('a box whose last dim is not a multiple of the tile keeps the plain form', () => {
  const s = samples.find((c) => c.name === 'elementwise/max.float32.nan')!;
  expect(launches(expectSampleMatches(s)).every((l) => !l.kernel.key.endsWith('.tile'))).toBe(true);
});

test('lanes that step 16 apart instead of 32 (half of each tile never written) fail the comparison', () => {
  const s = tiles.find((c) => c.name === 'unary/tile.exp.float32')!;
  const edit = (steps: LoweredStep[]): LoweredStep[] =>
    steps.map((st) => (st.kind === 'launch' ? { ...st, kernel: { ...st.kernel, key: `${st.kernel.key}.edited`, source: st.kernel.source.replace(/\+ (32|64|96) \*/g, (_m, k: string) => `+ ${Number(k) / 2} *`) } } : st));
  expect(() => expectSampleMatches(s, edit)).toThrow(/tile\.exp\.float32/);
});
