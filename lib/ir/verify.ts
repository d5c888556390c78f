/**
 * The graph verifier: structural rules (topological order, SSA, outputs defined), every call
 * node against its op schema, constants against their data, and symbols declared.
 */
import { InternalError } from '../errors';
import { checkArg } from './check-args';
import { dimsOfType, formatType, sameKindAndRank, Value, type Graph, type Node } from './graph';
import { CONTROL_FLOW_SUBGRAPHS } from './ops/control-flow';
import { InferContext } from './ops/infer-context';
import { getOp, type InferFn } from './ops/registry';
import { hasVariadicReturn } from './schema';
import { symbolsOf } from './symbolic';

/** Every problem found (empty when the graph is valid). */
export function findProblems(graph: Graph): string[] {
  const problems: string[] = [];
  const defined = new Set<Value>();
  const names = new Set<string>();
  const checkSymbols = (v: Value): void => {
    const dims = dimsOfType(v.type);
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
        problems.push(...subgraphProblems(node, op.infer, graph));
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

/**
 * A control-flow node's subgraphs: each valid on its own, and the node's rule satisfied
 * (subgraph inputs fit the node's arguments, outputs agree): inferred again, the outputs must
 * have the node's count, dtypes and ranks. Sizes may differ, since passes specialize the
 * outer graph's symbols, not the subgraphs'.
 */
function subgraphProblems(node: Node, infer: InferFn, graph: Graph): string[] {
  const roles = CONTROL_FLOW_SUBGRAPHS[node.target];
  const where = `node ${node.name} (${node.target})`;
  if (roles === undefined) return node.subgraphs === undefined ? [] : [`${where} carries subgraphs, which only control-flow ops have`];
  const problems: string[] = [];
  for (const role of roles) {
    const sub = node.subgraphs?.[role];
    if (sub === undefined) problems.push(`${where} has no subgraph ${role}`);
    else problems.push(...findProblems(sub).map((p) => `${where} subgraph ${role}: ${p}`));
  }
  if (problems.length > 0) return problems;
  try {
    // A scratch copy of the symbols: run-time symbols the rule declares must not leak into the graph.
    const types = infer(new InferContext(node.target, node.args, where, new Map(graph.symbols), node.subgraphs));
    if (types.length !== node.outputs.length) return [`${where} has ${node.outputs.length} outputs, its subgraphs give ${types.length}`];
    node.outputs.forEach((v, i) => {
      const t = types[i]!;
      if (!sameKindAndRank(v.type, t)) problems.push(`${where} output ${i} (%${v.name}) is ${formatType(v.type)}, its subgraphs give ${formatType(t)}`);
    });
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
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
