/**
 * The graph verifier: structural rules (topological order, SSA, outputs defined), every call
 * node against its op schema, constants against their data, and symbols declared.
 */
import { InternalError } from '../errors';
import { checkArg } from './check-args';
import { Value, type Graph } from './graph';
import { getOp } from './ops/registry';
import { hasVariadicReturn } from './schema';
import { symbolsOf } from './symbolic';

/** Every problem found (empty when the graph is valid). */
export function findProblems(graph: Graph): string[] {
  const problems: string[] = [];
  const defined = new Set<Value>();
  const names = new Set<string>();
  const checkSymbols = (v: Value): void => {
    const dims = v.type.kind === 'tensor' ? v.type.shape : [v.type.expr];
    for (const d of dims) {
      for (const s of symbolsOf(d)) {
        if (!graph.symbols.has(s)) problems.push(`value %${v.name} uses symbol ${s}, which the graph does not declare`);
      }
    }
  };
  for (const node of graph.nodes) {
    const where = `node ${node.name}`;
    for (const input of node.inputValues()) {
      if (!defined.has(input)) problems.push(`${where} reads %${input.name} before it is defined (or from another graph)`);
    }
    if (node.kind === 'call') {
      const op = getOp(node.target);
      if (op === undefined) {
        problems.push(`${where}: unknown op ${node.target}`);
      } else {
        for (const spec of op.schema.args) {
          const r = checkArg(spec.type, node.args[spec.name]);
          if (r !== null) problems.push(`${where} (${node.target}) argument ${spec.name}: ${r}`);
        }
        for (const key of Object.keys(node.args)) {
          if (!op.schema.args.some((a) => a.name === key)) problems.push(`${where} (${node.target}): unknown argument ${key}`);
        }
        if (!hasVariadicReturn(op.schema) && node.outputs.length !== op.schema.returns.length) {
          problems.push(`${where} (${node.target}) has ${node.outputs.length} outputs, its schema ${op.schema.returns.length}`);
        }
      }
    } else if (node.kind === 'constant') {
      const t = node.tensor;
      const type = node.outputs[0]?.type;
      if (t === undefined) problems.push(`${where}: constant without data`);
      else if (type?.kind !== 'tensor' || type.dtype !== t.dtype || type.shape.length !== t.shape.length || type.shape.some((d, i) => d !== t.shape[i])) {
        problems.push(`${where}: constant data ${t.dtype}[${t.shape.join(', ')}] does not match its value's type`);
      }
    }
    for (const out of node.outputs) {
      if (out.producer !== node) problems.push(`${where}: output %${out.name} names another producer`);
      if (names.has(out.name)) problems.push(`${where}: value name %${out.name} is used twice`);
      names.add(out.name);
      defined.add(out);
      checkSymbols(out);
    }
  }
  graph.outputs.forEach((v, i) => {
    if (!defined.has(v)) problems.push(`graph output ${i} (%${v.name}) is not defined by any node`);
  });
  if (graph.outputNames.length !== graph.outputs.length) {
    problems.push(`graph has ${graph.outputs.length} outputs but ${graph.outputNames.length} output names`);
  }
  for (const v of graph.inputs) {
    if (v.producer.kind !== 'placeholder') problems.push(`graph input %${v.name} is not a placeholder`);
  }
  for (const [name, range] of graph.symbols) {
    if (!(range.min <= range.max)) problems.push(`symbol ${name} has an empty range [${range.min}, ${range.max}]`);
  }
  return problems;
}

/** Throws E_INTERNAL listing every problem: a pass or frontend produced an invalid graph. */
export function verifyGraph(graph: Graph, stage = 'graph'): void {
  const problems = findProblems(graph);
  if (problems.length > 0) {
    throw new InternalError(`invalid ${stage} "${graph.name}":\n  - ${problems.join('\n  - ')}`, { details: { problems } });
  }
}
