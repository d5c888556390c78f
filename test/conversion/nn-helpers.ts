/**
 * Shared pieces of the NN converter tests: one-op graphs whose inputs are graph inputs or
 * constants (weights), seeded random data, conversion compared with the interpreter, and
 * the reasons a node is refused.
 */
import { selectConverter, type SelectionSettings } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { call } from '../../lib/ir/builder';
import { isFloating, type DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Node, type Value } from '../../lib/ir/graph';
import type { Tensor } from '../../lib/ir/tensor';
import { FP32, type Tolerance } from '../helpers/compare';
import { convertWhole, expectConvertedMatches } from '../helpers/convert-compare';
import { Random } from '../helpers/random';

export const rng = new Random(20240611);

/** Looser tolerances for 16-bit floats. */
export const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };
export const BF16: Tolerance = { rtol: 4e-2, atol: 4e-2 };

export const tolFor = (dtype: DType): Tolerance => (dtype === 'float16' ? FP16 : dtype === 'bfloat16' ? BF16 : FP32);

/** An input: a graph input with random data, or (`constant`) a constant node (weights). */
export interface In {
  dtype: DType;
  shape: number[];
  constant?: boolean;
  /** Explicit data instead of random values. */
  data?: Tensor;
  /** Value range [lo, hi) (floats) or [lo, hi] (integers); default [-2, 2) / [-9, 9]. */
  range?: [number, number];
}

/** Random data for an input (bool: 0/1, integers, floats). */
export function randomFor(x: In): Tensor {
  if (x.data) return x.data;
  if (x.dtype === 'bool') return rng.intTensor(x.shape, 0, 1, 'bool');
  if (isFloating(x.dtype)) {
    const [lo, hi] = x.range ?? [-2, 2];
    return rng.tensor(x.shape, x.dtype, lo, hi);
  }
  const [lo, hi] = x.range ?? (x.dtype === 'uint8' ? [0, 9] : [-9, 9]);
  return rng.intTensor(x.shape, lo, hi, x.dtype);
}

export interface Built {
  graph: Graph;
  node: Node;
  /** Data of the graph inputs, in order. */
  feeds: Tensor[];
}

/**
 * A graph of one `target` node: each input becomes a graph input (or a constant), and
 * `args(values)` builds the node's arguments; every output of the node is a graph output.
 */
export function build(target: string, inputs: readonly In[], args: (values: Value[]) => Record<string, Arg>): Built {
  const graph = new Graph(target);
  const feeds: Tensor[] = [];
  const values = inputs.map((x, i) => {
    const data = randomFor(x);
    if (x.constant) return graph.addConstant(`w${i}`, data, 'parameter');
    feeds.push(data);
    return graph.addInput(`in${i}`, tensorType(x.dtype, x.shape));
  });
  const node = call(graph, target, args(values));
  graph.setOutputs(node.outputs);
  return { graph, node, feeds };
}

/** Builds the one-op graph, converts it, runs it on the reference backend and compares with the interpreter. */
export async function check(target: string, inputs: readonly In[], args: (values: Value[]) => Record<string, Arg>, tol?: Tolerance): Promise<Built> {
  const b = build(target, inputs, args);
  const dtype = inputs[0]?.dtype ?? 'float32';
  await expectConvertedMatches(b.graph, b.feeds, tol ?? tolFor(dtype));
  return b;
}

/** The reasons `node` is refused (fails when it is accepted). */
export function refusal(node: Node, settings: SelectionSettings = {}): string {
  const s = selectConverter(node, settings);
  if (s.ok) throw new Error(`node ${node.name} (${node.target}) was accepted by ${s.converter.name}`);
  return s.reasons.join('; ');
}

/** The refusal reasons of a one-op graph. */
export function refused(target: string, inputs: readonly In[], args: (values: Value[]) => Record<string, Arg>): string {
  return refusal(build(target, inputs, args).node);
}

/** The layer kinds a converted one-op graph uses (to check which path a converter took). */
export function layerKinds(target: string, inputs: readonly In[], args: (values: Value[]) => Record<string, Arg>): string[] {
  return convertWhole(build(target, inputs, args).graph).layers.map((l) => l.params.kind);
}

export const f32 = (...shape: number[]): In => ({ dtype: 'float32', shape });
export const f16 = (...shape: number[]): In => ({ dtype: 'float16', shape });
export const typed = (dtype: DType, ...shape: number[]): In => ({ dtype, shape });
export const weight = (...shape: number[]): In => ({ dtype: 'float32', shape, constant: true });
