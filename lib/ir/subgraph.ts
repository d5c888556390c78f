/**
 * Extracts part of a graph as a graph of its own: the given call nodes, placeholders for the
 * values they read from outside, copies of the constants they use, and the chosen outputs.
 * Fallback segments run as such sub-graphs.
 */
import { InternalError } from '../errors';
import { Graph, Value, type Arg, type Node } from './graph';

export function extractSubgraph(graph: Graph, name: string, nodes: readonly Node[], inputs: readonly Value[], outputs: readonly Value[]): Graph {
  const sub = new Graph(name);
  for (const [s, r] of graph.symbols) sub.symbols.set(s, { ...r });
  const map = new Map<Value, Value>();
  for (const v of inputs) map.set(v, sub.addInput(v.name, v.type));
  const remap = (a: Arg): Arg => {
    if (a instanceof Value) {
      const hit = map.get(a);
      if (hit !== undefined) return hit;
      if (a.producer.kind === 'constant') {
        const c = sub.addConstant(a.name, a.producer.tensor!, a.producer.origin);
        map.set(a, c);
        return c;
      }
      throw new InternalError(`subgraph ${name}: %${a.name} comes from outside and is not an input`);
    }
    return Array.isArray(a) ? a.map(remap) : a;
  };
  for (const node of nodes) {
    const args: Record<string, Arg> = {};
    for (const [k, a] of Object.entries(node.args)) args[k] = remap(a);
    const copy = sub.addCall(node.target, args, node.outputs.map((v) => v.type), node.name);
    Object.assign(copy.meta, node.meta);
    if (node.subgraphs !== undefined) copy.subgraphs = node.subgraphs;
    node.outputs.forEach((v, i) => {
      copy.outputs[i]!.name = v.name;
      map.set(v, copy.outputs[i]!);
    });
  }
  sub.setOutputs(
    outputs.map((v) => map.get(v) ?? remap(v) as Value),
    outputs.map((v) => v.name),
  );
  return sub;
}
