/**
 * Every layer kind of the catalogue, lowered at the samples' concrete shapes and run on the
 * CPU kernel emulator (the generated CUDA C compiled by g++), against the reference backend's
 * executor on the same inputs: exact for integers and bool, per-dtype tolerances for floats.
 * The samples are the GPU check's (test/gpu/cuda-lowering.check.js), so both run the same ones.
 */
import { LOWERINGS } from '../../../../lib/backends/cuda/lowering';
import { LAYER_KINDS, type LayerKind, type LayerParams } from '../../../../lib/network';
import { Tensor } from '../../../../lib/tensor';
import { expectClose, expectExact } from '../../../helpers/compare';
import { runLayer } from '../../../helpers/cuda-emulator/run-layer';

interface Sample {
  kind: LayerKind;
  name: string;
  params: LayerParams;
  inputs: Array<Tensor | null>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const check = require('../../../gpu/cuda-lowering.check.js') as {
  buildCases(tensor: typeof Tensor): Sample[];
  TOLERANCE: Record<string, { rtol: number; atol: number }>;
};

// The long-row samples run in rows.test.ts, which also checks which kernel form they take.
const samples = check.buildCases(Tensor).filter((s) => !s.name.includes('/rows.'));

describe.each([...LAYER_KINDS])('%s', (kind) => {
  const mine = samples.filter((s) => s.kind === kind);

  test('has a lowering and samples', () => {
    expect(typeof LOWERINGS[kind]).toBe('function');
    expect(mine.length).toBeGreaterThan(0);
  });

  test.each(mine.map((s) => [s.name, s] as const))('%s', (_name, sample) => {
    const { expected, actual } = runLayer(sample.params, sample.inputs, sample.name);
    expected.forEach((e, i) => {
      const tol = check.TOLERANCE[e.dtype];
      if (tol) expectClose(actual[i]!, e, tol, `${sample.name} output ${i}`);
      else expectExact(actual[i]!, e, `${sample.name} output ${i}`);
    });
  });
});
