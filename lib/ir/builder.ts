/**
 * Building call nodes: bind the arguments to the op's schema, infer the output types and
 * append the node. Frontends and passes build nodes only through here, so a graph is valid
 * by construction; the verifier re-checks after rewrites.
 */
import { InternalError } from '../errors';
import { bindArgs } from './check-args';
import type { Arg, Graph, Node } from './graph';
import { InferContext } from './ops/infer-context';
import { getOp } from './ops/registry';

export interface CallOptions {
  /** Base name of the node (made unique). */
  name?: string;
  /** How to name the node's origin in errors, e.g. `ONNX node "Conv_3" (Conv)`. */
  where?: string;
  /** Provenance stored on the node. */
  meta?: Record<string, unknown>;
  /** The graphs a control-flow op runs (Node.subgraphs); its inference reads them. */
  subgraphs?: Readonly<Record<string, Graph>>;
}

/**
 * Appends a call of `target` to `graph`. Argument mistakes are internal errors (the caller
 * built a wrong node); type-inference failures (shapes that do not fit) are E_BAD_MODEL
 * errors naming `options.where`.
 */
export function call(graph: Graph, target: string, args: Readonly<Record<string, Arg>> | readonly Arg[], options: CallOptions = {}): Node {
  const op = getOp(target);
  const where = options.where ?? `node "${options.name ?? target}"`;
  if (op === undefined) throw new InternalError(`${where}: no op ${target} is declared`);
  const bound = bindArgs(op.schema, args);
  if (bound.problems.length > 0) {
    throw new InternalError(`${where}: bad arguments for ${target}: ${bound.problems.join('; ')}`);
  }
  const types = op.infer(new InferContext(target, bound.args, where, graph.symbols, options.subgraphs));
  const node = graph.addCall(target, bound.args, types, options.name);
  if (options.subgraphs !== undefined) node.subgraphs = options.subgraphs;
  if (options.where !== undefined) node.meta.where = options.where;
  Object.assign(node.meta, options.meta);
  return node;
}
