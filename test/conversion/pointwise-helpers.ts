/**
 * Shared pieces of the POINTWISE converter tests: seeded inputs of a chosen value range per
 * dtype, one-op graphs converted and compared with the interpreter, and refusal reasons.
 */
import { convertSegment } from '../../lib/conversion/convert';
import { selectConverter, type SelectionSettings } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import type { DType } from '../../lib/ir/dtype';
import { isFloating } from '../../lib/ir/dtype';
import type { Arg, Graph, Value } from '../../lib/ir/graph';
import { fromNumbers } from '../../lib/kernels/access';
import type { Network } from '../../lib/network';
import type { Tensor } from '../../lib/ir/tensor';
import { FP32, type Tolerance } from '../helpers/compare';
import { expectConvertedMatches, opGraph } from '../helpers/convert-compare';
import { Random } from '../helpers/random';

/**
 * Value ranges: `any` (floats in [-3, 3), integers in [-20, 20]), `pos` (positive), `nonzero`
 * (|x| ≥ 0.5 for floats, ≥ 1 for integers, either sign), `small` (integers in [-3, 3], also for
 * floats, so that equal values and zeros occur), `unit` (floats in [-1, 1)), `special`
 * (floats mixed with NaN and ±inf).
 */
export type Kind = 'any' | 'pos' | 'nonzero' | 'small' | 'unit' | 'special' | 'half';

export interface In {
  dtype: DType;
  shape: number[];
  kind?: Kind;
}

const rng = new Random(4242);

const size = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

function value(dtype: DType, kind: Kind): number {
  const float = isFloating(dtype);
  const sign = rng.next() < 0.5 ? -1 : 1;
  if (dtype === 'bool') return rng.int(0, 1);
  switch (kind) {
    case 'any':
      return float ? rng.uniform(-3, 3) : dtype === 'uint8' ? rng.int(0, 200) : rng.int(-20, 20);
    case 'pos':
      return float ? rng.uniform(0.1, 3) : rng.int(1, 9);
    case 'nonzero':
      return float ? sign * rng.uniform(0.5, 3) : dtype === 'uint8' ? rng.int(1, 9) : sign * rng.int(1, 9);
    case 'small':
      return dtype === 'uint8' ? rng.int(0, 3) : rng.int(-3, 3);
    case 'unit':
      return rng.uniform(-1, 1);
    case 'half':
      // Multiples of 0.5 in [-4, 4]: exercises round-half-to-even and trunc/floor at integers.
      return rng.int(-8, 8) / 2 + (rng.next() < 0.5 ? 0 : rng.uniform(-0.2, 0.2));
    case 'special': {
      const r = rng.next();
      return r < 0.15 ? NaN : r < 0.3 ? Infinity : r < 0.45 ? -Infinity : rng.uniform(-3, 3);
    }
  }
}

/** Seeded data for an input. */
export function data(x: In): Tensor {
  const n = size(x.shape);
  return fromNumbers(x.dtype, x.shape, Array.from({ length: n }, () => value(x.dtype, x.kind ?? 'any')));
}

/** float16 outputs: two rounding steps in a composition may differ by an ulp or so. */
export const F16: Tolerance = Object.freeze({ rtol: 4e-3, atol: 4e-3 });

function tolerance(graph: Graph): Tolerance {
  return graph.outputs.some((v) => v.tensorType.dtype === 'float16' || v.tensorType.dtype === 'bfloat16') ? F16 : FP32;
}

/** Converts a one-op graph on seeded inputs and compares it with the interpreter. */
export async function check(target: string, inputs: readonly In[], args: (v: Value[]) => Record<string, Arg>, tol?: Tolerance): Promise<Graph> {
  const graph = opGraph(target, inputs, args);
  await expectConvertedMatches(graph, inputs.map(data), tol ?? tolerance(graph));
  return graph;
}

/** The reasons selection gives for the one node of a one-op graph (null when it is accepted). */
export function reasons(target: string, inputs: readonly In[], args: (v: Value[]) => Record<string, Arg>, settings: SelectionSettings = {}): string[] | null {
  const graph = opGraph(target, inputs, args);
  const s = selectConverter(graph.calls()[0]!, settings);
  return s.ok ? null : s.reasons;
}

/** Converts a one-op graph with `settings` (for checks of the network alone, without running it). */
export function convertOne(target: string, inputs: readonly In[], args: (v: Value[]) => Record<string, Arg>, settings: SelectionSettings = {}): Network {
  const graph = opGraph(target, inputs, args);
  return convertSegment({ name: graph.name, nodes: graph.calls(), inputs: graph.inputs, outputs: graph.outputs }, settings);
}
