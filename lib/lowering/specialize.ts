/**
 * Shape specialization: binds symbols to concrete sizes everywhere (types, SymInt
 * arguments), so that the graph is static. SymInt-producing nodes become dead and are
 * removed; shape-derived tensors (`trt.sym_tensor`) and whatever else is computed from
 * constants and static shapes alone fold into constants. Mutates `graph`.
 */
import { mapTypeDims, Value, tensorType, symIntType, type Arg, type Graph } from '../ir/graph';
import { symApply, type Dim } from '../ir/symbolic';
import { foldConstants } from './constant-folding';

export function specializeShapes(graph: Graph, values: ReadonlyMap<string, number>): void {
  if (values.size > 0) bindSymbols(graph, values);
  // Also with nothing to bind (an export with static shapes): what is computed from constants
  // and shapes alone (full, arange, x.new_zeros(...) filled slice by slice) is a constant.
  foldConstants(graph, { sources: true });
}

function bindSymbols(graph: Graph, values: ReadonlyMap<string, number>): void {
  // Symbols without a value stay symbolic; expressions mixing both (batch*seq with only seq
  // bound) are rebuilt with the bound ones substituted (batch*16).
  const dim = (d: Dim): Dim => substituteDim(d, values);
  for (const node of graph.nodes) {
    for (const v of node.outputs) {
      v.type = mapTypeDims(v.type, dim);
    }
  }
  const replace = (a: Arg): Arg => {
    if (a instanceof Value && a.type.kind === 'symint' && typeof a.type.expr === 'number') return a.type.expr;
    return Array.isArray(a) ? a.map(replace) : a;
  };
  for (const node of graph.nodes) {
    for (const key of Object.keys(node.args)) node.args[key] = replace(node.args[key]!);
  }
  for (const name of values.keys()) graph.symbols.delete(name);
  graph.eliminateDeadCode();
}

/** `d` with the symbols in `values` replaced by their values, folded through the canonical builders. */
export function substituteDim(d: Dim, values: ReadonlyMap<string, number>, memo = new Map<Dim, Dim>()): Dim {
  if (typeof d === 'number') return d;
  if (d.op === 'sym') return values.get(d.name) ?? d;
  // Shared subexpressions are substituted once (linear in the shared nodes, not the written-out tree).
  let r = memo.get(d);
  if (r === undefined) {
    r = symApply(d.op, substituteDim(d.a, values, memo), substituteDim(d.b, values, memo));
    memo.set(d, r);
  }
  return r;
}
