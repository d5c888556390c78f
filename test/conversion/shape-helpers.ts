/**
 * Shared pieces of the SHAPE converter tests: seeded inputs of any dtype, one-op graphs
 * with constant arguments, and the refusal reasons of selection.
 */
import { selectConverter } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import type { Tensor } from '../../lib/ir/tensor';
import { expectConvertedMatches, opGraph, type OpInput } from '../helpers/convert-compare';
import { Random } from '../helpers/random';

export const INT64_MAX = 9223372036854775807; // arrives as a JS number (2^63)

const rng = new Random(20240611);

/** Random data of `dtype`: floats in [-3, 3), integers in [lo, hi], bools. */
export function rand(dtype: DType, shape: readonly number[], lo = -50, hi = 50): Tensor {
  if (dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16' || dtype === 'float64') return rng.tensor([...shape], dtype, -3, 3);
  if (dtype === 'bool') return rng.intTensor([...shape], 0, 1, 'bool');
  return rng.intTensor([...shape], lo, hi, dtype);
}

/** A uniform integer in [lo, hi]. */
export function randInt(lo: number, hi: number): number {
  return rng.int(lo, hi);
}

/** Converts a one-op graph on random inputs (or the given data) and compares it with the interpreter. */
export async function check(target: string, inputs: readonly OpInput[], args: (v: Value[]) => Record<string, Arg>, data?: readonly Tensor[]): Promise<void> {
  const graph = opGraph(target, inputs, args);
  await expectConvertedMatches(graph, data ?? inputs.map((x) => rand(x.dtype, x.shape)));
}

/**
 * A one-op graph whose inputs are either graph inputs (`{dtype, shape}` with data) or
 * constants (`{constant: tensor}`), converted and compared.
 */
export type Operand = { input: Tensor } | { constant: Tensor };

export async function checkWith(target: string, operands: readonly Operand[], args: (v: Value[]) => Record<string, Arg>): Promise<void> {
  const graph = new Graph(target);
  const feeds: Tensor[] = [];
  const vals = operands.map((o, i) => {
    if ('input' in o) {
      feeds.push(o.input);
      return graph.addInput(`in${i}`, tensorType(o.input.dtype, o.input.shape));
    }
    return graph.addConstant(`c${i}`, o.constant);
  });
  const node = call(graph, target, args(vals));
  graph.setOutputs(node.outputs);
  await expectConvertedMatches(graph, feeds);
}

/** The selection verdict for a one-op graph: true, or the reasons joined. */
export function verdict(target: string, inputs: readonly OpInput[], args: (v: Value[]) => Record<string, Arg>): true | string {
  const graph = opGraph(target, inputs, args);
  const node = graph.calls()[0]!;
  const s = selectConverter(node);
  return s.ok ? true : s.reasons.join('; ');
}
