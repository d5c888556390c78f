/**
 * The GPU check's sample layers (test/gpu/cuda-lowering.check.js) for the lowering tests, and
 * the comparison both run: each sample lowered and run on the emulator against the reference
 * backend, exact for integers and bool, the check's per-dtype tolerances for floats.
 */
import type { LoweredStep } from '../../../lib/backends/cuda/layers';
import type { LayerKind, LayerParams } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, expectExact } from '../compare';
import { runLayer } from './run-layer';

export interface Sample {
  kind: LayerKind;
  name: string;
  params: LayerParams;
  inputs: Array<Tensor | null>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const check = require('../../gpu/cuda-lowering.check.js') as {
  buildCases(tensor: typeof Tensor): Sample[];
  TOLERANCE: Record<string, { rtol: number; atol: number }>;
};

/** Every sample of the check (fresh tensors each call). */
export const checkSamples = (): Sample[] => check.buildCases(Tensor);

/** Runs `sample` (its steps passed through `edit` first) and fails unless it matches the reference; returns the steps. */
export function expectSampleMatches(sample: Sample, edit?: (steps: LoweredStep[]) => LoweredStep[]): LoweredStep[] {
  const { expected, actual, steps } = runLayer(sample.params, sample.inputs, sample.name, edit);
  expected.forEach((e, i) => {
    const tol = check.TOLERANCE[e.dtype];
    if (tol) expectClose(actual[i]!, e, tol, `${sample.name} output ${i}`);
    else expectExact(actual[i]!, e, `${sample.name} output ${i}`);
  });
  return steps;
}
