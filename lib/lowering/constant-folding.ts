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

/**
 * Ops that read only the dtype and shape of their `self`, never its elements
 * (`x.new_zeros(size)`, `torch.zeros_like(x)`): with static shapes their result is a
 * constant whatever `self` holds. Swin's shifted-window mask starts as `x.new_zeros(...)` and is
 * then filled slice by slice: folded, that is no work per run instead of a few hundred copies.
 */
const READS_SELF_SHAPE_ONLY = new Set([
  'aten.new_zeros.default',
  'aten.new_ones.default',
  'aten.new_full.default',
  'aten.new_empty.default',
  'aten.zeros_like.default',
  'aten.ones_like.default',
  'aten.full_like.default',
  'aten.empty_like.default',
]);

/** Whether `v` is the `self` of a shape-only op (READS_SELF_SHAPE_ONLY) whose shape is static. */
function shapeOnlySelf(node: Node, v: Value, options: FoldOptions): boolean {
  return options.sources === true && READS_SELF_SHAPE_ONLY.has(node.target) && node.args.self === v && v.type.kind === 'tensor' && v.tensorType.shape.every((d) => typeof d === 'number');
}

/**
 * Dequantizations stay nodes even over constants: quantized weights then reach the Network as
 * quantized constants and a dequantize layer, which a GPU backend computes in INT8/FP8/INT4
 * (folded, they would be float weights and the quantization lost).
 */
const KEPT_OVER_CONSTANTS = new Set([
  'trt.dequantize_linear',
  'quantized_decomposed.dequantize_per_tensor.default',
  'quantized_decomposed.dequantize_per_channel.default',
]);

function foldable(node: Node, options: FoldOptions): boolean {
  if (node.kind !== 'call' || node.outputs.some((v) => v.type.kind !== 'tensor')) return false;
  if (KEPT_OVER_CONSTANTS.has(node.target)) return false;
  const inputs = node.inputValues();
  if (inputs.length === 0 && !options.sources) return false;
  return inputs.every((v) => v.producer.kind === 'constant' || shapeOnlySelf(node, v, options)) && getImpl(node.target) !== undefined;
}

/**
 * What a folded node's implementation reads for input `v`: a constant's tensor; for a
 * shape-only `self`, zeros of its dtype and shape (a `*_like` result has that shape, so it is no
 * bigger than the result), or of its dtype alone for `new_*` (their size is an argument).
 */
function foldedInput(node: Node, v: Value): Tensor {
  if (v.producer.kind === 'constant') return v.producer.tensor!;
  return new Tensor(v.tensorType.dtype, node.target.startsWith('aten.new_') ? [0] : (v.tensorType.shape as number[]));
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
    const elements = (v: Value): number => v.tensorType.shape.reduce<number>((a, d) => a * (typeof d === 'number' ? d : Infinity), 1);
    const size = node.outputs.reduce((n, v) => n + elements(v), 0);
    if (size > MAX_FOLDED_ELEMENTS) continue;
    const args: Record<string, unknown> = {};
    const resolve = (a: unknown): unknown => (a instanceof Value ? foldedInput(node, a) : Array.isArray(a) ? a.map(resolve) : a);
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
