/**
 * Converter tests: a graph converted into one engine segment and run on the reference
 * backend must match the interpreter running the same graph (the interpreter's ops are in
 * turn checked against onnxruntime and PyTorch).
 */
import { convertSegment } from '../../lib/conversion/convert';
import { selectConverter, type SelectionSettings } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { referenceBackend } from '../../lib/backends/reference';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import type { DType } from '../../lib/ir/dtype';
import { interpret } from '../../lib/interpreter';
import { printNetwork, type Network } from '../../lib/network';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32, type Tolerance } from './compare';

/** Converts every call node of `graph` into one network (all must be convertible under `settings`). */
export function convertWhole(graph: Graph, settings: SelectionSettings = {}): Network {
  for (const node of graph.calls()) {
    const s = selectConverter(node, settings);
    if (!s.ok) throw new Error(`node ${node.name} (${node.target}) is not convertible: ${s.reasons.join('; ')}`);
  }
  const constants = new Set(graph.nodes.filter((n) => n.kind === 'constant').flatMap((n) => n.outputs));
  const outputs = graph.outputs.filter((v) => !constants.has(v));
  return convertSegment({ name: graph.name, nodes: graph.calls(), inputs: graph.inputs, outputs }, settings);
}

/** Runs `graph` converted on the reference backend. */
export async function runConverted(graph: Graph, inputs: readonly Tensor[]): Promise<Tensor[]> {
  const network = convertWhole(graph);
  const runner = referenceBackend.createRunner(await referenceBackend.build(network, {}));
  const feeds: Record<string, Tensor> = {};
  graph.inputs.forEach((v, i) => (feeds[v.name] = inputs[i]!));
  const out = runner.run(feeds);
  runner.dispose();
  return graph.outputs.map((v) => {
    const t = out[v.name];
    if (t === undefined) throw new Error(`network has no output ${v.name}:\n${printNetwork(network)}`);
    return t;
  });
}

/** Expects the converted graph on the reference backend to match the interpreter. */
export async function expectConvertedMatches(graph: Graph, inputs: readonly Tensor[], tol: Tolerance = FP32): Promise<void> {
  const expected = interpret(graph, inputs);
  const actual = await runConverted(graph, inputs);
  actual.forEach((t, i) => expectClose(t, expected[i]!, tol, `${graph.name} output ${i}`));
}

export interface OpInput {
  dtype: DType;
  shape: number[];
}

/**
 * A graph of one op: `inputs` become graph inputs named in0, in1...; `args(values)` builds
 * the node's arguments from them.
 */
export function opGraph(target: string, inputs: readonly OpInput[], args: (values: Value[]) => Record<string, Arg>): Graph {
  const graph = new Graph(target);
  const values = inputs.map((x, i) => graph.addInput(`in${i}`, tensorType(x.dtype, x.shape)));
  const node = call(graph, target, args(values));
  graph.setOutputs(node.outputs);
  return graph;
}
