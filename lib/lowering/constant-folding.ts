/**
 * Constant folding: a call whose inputs are all constants is computed once, now, with the
 * interpreter's implementation, and replaced by a constant. Mutates the graph in place.
 */
import { Value, type Arg, type Graph, type Node } from '../ir/graph';
import { TensorRTNodeError } from '../errors';
import { getImpl, type ImplFn } from '../interpreter/registry';
import '../interpreter/ops';
import { Tensor } from '../ir/tensor';

/** Results bigger than this stay computed at run time (folding would bloat the weights). */
const MAX_FOLDED_ELEMENTS = 1 << 16;

export interface FoldOptions {
  /**
   * Also fold nodes without inputs (full, arange, sym_tensor with static values). Off for
   * imports, which keep such nodes visible; on after shape specialization.
   */
  sources?: boolean;
}

function foldable(node: Node, options: FoldOptions): boolean {
  if (node.kind !== 'call' || node.outputs.some((v) => v.type.kind !== 'tensor')) return false;
  const inputs = node.inputValues();
  if (inputs.length === 0 && !options.sources) return false;
  return inputs.every((v) => v.producer.kind === 'constant') && getImpl(node.target) !== undefined;
}

/** Folds every foldable node; returns how many were folded. */
export function foldConstants(graph: Graph, options: FoldOptions = {}): number {
  let folded = 0;
  // Replacements are applied as each node is reached (nodes are in topological order), so the
  // pass stays linear: one replaceAllUses per folded value would rescan the graph each time.
  const replaced = new Map<Value, Value>();
  const remap = (a: Arg): Arg => (a instanceof Value ? (replaced.get(a) ?? a) : Array.isArray(a) ? a.map(remap) : a);
  for (const node of [...graph.nodes]) {
    if (replaced.size > 0) for (const key of Object.keys(node.args)) node.args[key] = remap(node.args[key]!);
    if (!foldable(node, options)) continue;
    const size = node.outputs.reduce((n, v) => n + v.tensorType.shape.reduce<number>((a, d) => a * (typeof d === 'number' ? d : Infinity), 1), 0);
    if (size > MAX_FOLDED_ELEMENTS) continue;
    const args: Record<string, unknown> = {};
    const resolve = (a: unknown): unknown => (a instanceof Value ? a.producer.tensor : Array.isArray(a) ? a.map(resolve) : a);
    for (const [k, a] of Object.entries(node.args)) args[k] = resolve(a);
    let results: ReturnType<ImplFn>;
    try {
      results = getImpl(node.target)!(args as never, { node, symbols: new Map() });
    } catch (error) {
      // Data the op refuses (an index out of range, a zero integer divisor) stays a run-time
      // node, which raises the same typed error when run, as interpret() does.
      if (error instanceof TensorRTNodeError) continue;
      throw error;
    }
    node.outputs.forEach((v, i) => {
      const t = results[i];
      if (t instanceof Tensor) replaced.set(v, graph.addConstant(`${v.name}_folded`, t));
    });
    folded++;
  }
  graph.outputs = graph.outputs.map((v) => replaced.get(v) ?? v);
  if (folded > 0) {
    // New constants were appended; restore topological order (constants first is always valid).
    const constants = graph.nodes.filter((n) => n.kind === 'constant' || n.kind === 'placeholder');
    const rest = graph.nodes.filter((n) => n.kind === 'call');
    graph.nodes.splice(0, graph.nodes.length, ...constants, ...rest);
    graph.eliminateDeadCode();
  }
  return folded;
}
