/**
 * Cutting a graph at its collectives: the pieces between `trt.all_reduce` nodes become
 * graphs of their own, and each all-reduce a step of its own, so that a runtime can run every
 * rank up to a collective, combine the ranks' tensors, and go on. Values between steps are
 * named (the names fallback segments use), so the steps map one to one onto program segments.
 */
import { InternalError } from '../../errors';
import { ALL_REDUCE } from '../../ir/ops/collective';
import '../../ir/ops';
import type { Graph, Node, TensorType, Value } from '../../ir/graph';
import { extractSubgraph } from '../../ir/subgraph';

/** A piece of computation between collectives: run `graph` on `inputs` (by name), store `outputs` (by name). */
export interface GraphStep {
  kind: 'graph';
  graph: Graph;
  inputs: string[];
  outputs: string[];
}

/** An all-reduce across ranks: `output` = the reduction of every rank's `input`. */
export interface AllReduceStep {
  kind: 'all_reduce';
  op: string;
  input: string;
  output: string;
  /** The all_reduce node's name. */
  node: string;
  /** The type of the reduced tensor. */
  type: TensorType;
  /**
   * The all-reduce as a graph of its own (what a collective program segment holds): the node
   * extracted as every graph step is, so the graph declares the symbols its dims use, with
   * their ranges (a dynamic dim of the reduced tensor makes it fail verification otherwise).
   */
  graph: Graph;
}

export type CollectiveStep = GraphStep | AllReduceStep;

/** True when `graph` holds a `trt.all_reduce` node. */
export function hasCollectives(graph: Graph): boolean {
  return graph.nodes.some((n) => n.kind === 'call' && n.target === ALL_REDUCE);
}

/**
 * The steps of `graph`, in order. `names` gives the names of its inputs and outputs outside
 * (a fallback segment's `inputs`/`outputs`; by default the graph's own input and output
 * names); values inside are named by their value names. Graph outputs that are inputs,
 * constants or values named otherwise are published by a last step without nodes.
 */
export function splitAtCollectives(graph: Graph, names: { inputs: readonly string[]; outputs: readonly string[] } = { inputs: graph.inputs.map((v) => v.name), outputs: graph.outputNames }): CollectiveStep[] {
  const inputIndex = new Map(graph.inputs.map((v, i) => [v, i]));
  const key = (v: Value): string => {
    const i = inputIndex.get(v);
    return i === undefined ? v.name : names.inputs[i]!;
  };
  const published = new Map<Value, string>();
  graph.outputs.forEach((v, i) => {
    if (!published.has(v)) published.set(v, names.outputs[i]!);
  });

  // The pieces: runs of calls between collectives, and the collectives.
  type Piece = { kind: 'graph'; nodes: Node[]; inputs: Value[] } | { kind: 'all_reduce'; node: Node };
  const pieces: Piece[] = [];
  for (const node of graph.calls()) {
    const last = pieces[pieces.length - 1];
    if (node.target === ALL_REDUCE) pieces.push({ kind: 'all_reduce', node });
    else if (last?.kind === 'graph') last.nodes.push(node);
    else pieces.push({ kind: 'graph', nodes: [node], inputs: [] });
  }
  // SymInt values (sizes) do not cross pieces: a piece recomputes the ones it reads from the
  // tensors that carry them. Then its inputs are the tensors it reads from outside.
  for (const piece of pieces) {
    if (piece.kind !== 'graph') continue;
    const inside = new Set(piece.nodes);
    const extra: Node[] = [];
    const pull = (v: Value): void => {
      const p = v.producer;
      if (v.type.kind !== 'symint' || p.kind !== 'call' || inside.has(p)) return;
      inside.add(p);
      p.inputValues().forEach(pull);
      extra.push(p);
    };
    piece.nodes.forEach((n) => n.inputValues().forEach(pull));
    const order = new Map(graph.nodes.map((n, i) => [n, i]));
    piece.nodes = [...piece.nodes, ...extra].sort((a, b) => order.get(a)! - order.get(b)!);
    for (const n of piece.nodes) {
      for (const v of n.inputValues()) {
        if (inside.has(v.producer) || v.producer.kind === 'constant' || piece.inputs.includes(v)) continue;
        piece.inputs.push(v);
      }
    }
  }
  // The last piece that reads each value.
  const lastRead = new Map<Value, number>();
  pieces.forEach((piece, i) => {
    const reads = piece.kind === 'graph' ? piece.inputs : [piece.node.args.self as Value];
    for (const v of reads) lastRead.set(v, i);
  });

  const steps: CollectiveStep[] = [];
  pieces.forEach((piece, index) => {
    if (piece.kind === 'all_reduce') {
      const { node } = piece;
      const self = node.args.self as Value;
      const collective = extractSubgraph(graph, node.name, [node], [self], [node.output]);
      steps.push({ kind: 'all_reduce', op: String(node.args.op ?? 'sum'), input: key(self), output: node.output.name, node: node.name, type: node.output.tensorType, graph: collective });
      const name = published.get(node.output);
      if (name !== undefined && name !== node.output.name) steps.push(aliasStep(graph, [node.output], [node.output.name], [name], steps.length));
      return;
    }
    const outputs: Value[] = [];
    const outNames: string[] = [];
    for (const n of piece.nodes) {
      for (const v of n.outputs) {
        const needed = v.type.kind === 'tensor' && (lastRead.get(v) ?? -1) > index;
        const name = published.get(v);
        if (needed) {
          outputs.push(v);
          outNames.push(key(v));
        }
        if (name !== undefined && !(needed && name === key(v))) {
          outputs.push(v);
          outNames.push(name);
        }
      }
    }
    const sub = extractSubgraph(graph, `${graph.name}_part${steps.length}`, piece.nodes, piece.inputs, outputs);
    steps.push({ kind: 'graph', graph: sub, inputs: piece.inputs.map(key), outputs: outNames });
  });
  // Outputs no call produced: graph inputs and constants.
  const rest = graph.outputs.filter((v, i) => v.producer.kind !== 'call' && graph.outputs.indexOf(v) === i);
  if (rest.length > 0) {
    const inputs = rest.filter((v) => v.producer.kind === 'placeholder');
    steps.push(aliasStep(graph, rest, inputs.map(key), rest.map((v) => published.get(v)!), steps.length, inputs));
  }
  return steps;
}

/** A step without nodes: publishes `values` under `outNames`. */
function aliasStep(graph: Graph, values: Value[], inNames: string[], outNames: string[], index: number, inputs: Value[] = values): GraphStep {
  const sub = extractSubgraph(graph, `${graph.name}_part${index}`, [], inputs, values);
  if (sub.outputs.length !== outNames.length) throw new InternalError(`splitAtCollectives: alias step of ${graph.name} lost an output`);
  return { kind: 'graph', graph: sub, inputs: inNames, outputs: outNames };
}
