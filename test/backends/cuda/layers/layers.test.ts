/**
 * Every layer kind of the catalogue, lowered at the samples' concrete shapes and run on the
 * CPU kernel emulator (the generated CUDA C compiled by g++), against the reference backend's
 * executor on the same inputs: exact for integers and bool, per-dtype tolerances for floats.
 * The samples are the GPU check's (test/gpu/cuda-lowering.check.js), so both run the same ones.
 */
import { LOWERINGS } from '../../../../lib/backends/cuda/layers';
import { LAYER_KINDS } from '../../../../lib/network';
import { checkSamples, expectSampleMatches } from '../../../helpers/cuda-emulator/samples';

// The long-row samples run in rows.test.ts, which also checks which kernel form they take.
const samples = checkSamples().filter((s) => !s.name.includes('/rows.'));

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SPELLED_OUT_AT_BUILD, REFUSED_AT_BUILD } = require('../../../gpu/cuda-lowering.check.js') as { SPELLED_OUT_AT_BUILD: ReadonlySet<string>; REFUSED_AT_BUILD: ReadonlySet<string> };

describe.each([...LAYER_KINDS])('%s', (kind) => {
  const mine = samples.filter((s) => s.kind === kind);

  test('has a lowering and samples', () => {
    expect(typeof LOWERINGS[kind]).toBe('function');
    // Kinds the build spells out (quantize, dequantize) or refuses (nonzero) never reach a lowering.
    if (SPELLED_OUT_AT_BUILD.has(kind) || REFUSED_AT_BUILD.has(kind)) expect(mine).toEqual([]);
    else expect(mine.length).toBeGreaterThan(0);
  });

  if (mine.length > 0) {
    test.each(mine.map((s) => [s.name, s] as const))('%s', (_name, sample) => {
      expectSampleMatches(sample);
    });
  }
});
