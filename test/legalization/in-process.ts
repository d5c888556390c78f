/**
 * In-process legalization for the rule tests (compile() runs the pipeline on its worker, from
 * dist/, where mutation testing cannot see it): a graph built with symbol s in [2, 8],
 * partitioned and legalized here, run by the interpreter next to the unlegalized graph.
 */
import type { Graph, Node, Value } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { partitionDynamic } from '../../lib/legalization';
import { DYNAMIC_RULES } from '../../lib/legalization/variants';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { DynGraph } from './helpers';

/** x: float32[n, 3] holding 0, 1, 2, ... (row r is 3r, 3r + 1, 3r + 2). */
export const iota = (shape: number[]): Tensor => Tensor.from('float32', shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, (_, i) => i));
export const rows = (rs: number[], w = 3): number[] => rs.flatMap((r) => Array.from({ length: w }, (_, j) => w * r + j));
export const range = (a: number, b: number): number[] => Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);

export type Build = (b: DynGraph) => Value[];

/** The graph of `build` (symbol s in [2, 8]), legalized as one engine segment. */
export function legalized(build: Build, symbols = { s: { min: 2, max: 8 } }): { graph: Graph; targets: string[] } {
  const b = new DynGraph('g', symbols);
  const graph = b.outputs(...build(b));
  const part = partitionDynamic(graph, { minBlockSize: 1 });
  expect(part.segments.map((s) => s.kind)).toEqual(['engine']);
  return { graph, targets: part.segments[0]!.nodes.map((n) => n.target) };
}

/** Runs `build` unlegalized and legalized on `inputs`: both give the same outputs, which are returned. */
export function runBoth(build: Build, inputs: Tensor[]): { outputs: Tensor[]; targets: string[] } {
  const b = new DynGraph('plain', { s: { min: 2, max: 8 } });
  const plain = interpret(b.outputs(...build(b)), inputs);
  const { graph, targets } = legalized(build);
  const outputs = interpret(graph, inputs);
  outputs.forEach((o, i) => expectTensor(o, plain[i]!.dtype, plain[i]!.shape, plain[i]!.toArray(), `output ${i} vs the unlegalized graph`));
  return { outputs, targets };
}

/** The single node `build` makes last, in an unlegalized graph, with its rule. */
export function nodeOf(build: (b: DynGraph) => Node, symbols = { s: { min: 2, max: 8 } }): Node {
  return build(new DynGraph('n', symbols));
}
export const needs = (n: Node): string[] => DYNAMIC_RULES.get(n.target)!.needs(n);
export const refuse = (n: Node): string | null => DYNAMIC_RULES.get(n.target)!.refuse?.(n) ?? null;
