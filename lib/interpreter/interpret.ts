/**
 * Runs a Graph on the CPU. It is the test oracle for the compiler and runs fallback segments.
 */
import { BadInputError, BadModelError, InternalError, InvalidArgumentError, ResourceLimitError, TensorRTNodeError, UnsupportedOpError } from '../errors';
import { Value, type Arg, type Graph, type Node, type ValueType } from '../ir/graph';
import { isDataDependentSymbol } from '../ir/ops/data-dependent';
import { evaluateDim } from '../ir/symbolic';
import type { Dim } from '../ir/symbolic';
import { Tensor } from '../ir/tensor';
import { describeGraphValue, elementKindOf, OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../ir/values';
import { bindInputs } from './bind-inputs';
import { getImpl, type ControlFlowLimits, type RuntimeArg, type RuntimeValue } from './registry';

/** 100,000 iterations: a loop past them is taken for one that does not end. 4 GiB: Node's largest typed array. */
export const DEFAULT_CONTROL_FLOW_LIMITS: ControlFlowLimits = Object.freeze({ maxLoopIterations: 100_000, maxTensorBytes: 2 ** 32 });

function resolve(arg: Arg, env: Map<Value, RuntimeValue>): RuntimeArg {
  if (arg instanceof Value) {
    const v = env.get(arg);
    if (v === undefined) throw new InternalError(`interpreter: %${arg.name} has no value (freed too early or never computed)`);
    return v;
  }
  if (Array.isArray(arg)) return arg.map((a) => resolve(a, env));
  return arg as RuntimeArg;
}

function describeNode(node: Node): string {
  const origin = typeof node.meta.where === 'string' ? ` [${node.meta.where}]` : '';
  return `node ${node.name} (${node.target})${origin}`;
}

/** The index of the last node that reads each value, so its tensor can be dropped after. */
function lastUses(graph: Graph): Map<Value, number> {
  const last = new Map<Value, number>();
  graph.nodes.forEach((node, i) => {
    for (const v of node.inputValues()) last.set(v, i);
  });
  for (const v of graph.outputs) last.set(v, Infinity);
  return last;
}

/** Options of {@link interpret}. */
export interface InterpretOptions {
  /** Told each call node's wall-clock time in ms (its result checks included), as it finishes: what a profile attributes to it. */
  onNode?: (node: Node, ms: number) => void;
  /** Bounds on If/Loop/Scan nodes (defaults: DEFAULT_CONTROL_FLOW_LIMITS); subgraphs run under the same. */
  limits?: Partial<ControlFlowLimits>;
}

/**
 * Runs `graph` on `inputs` (an array in input order, or an object keyed by input name) and
 * returns the outputs in order. Bad inputs are E_BAD_INPUT errors naming the input; an op
 * without an implementation is E_UNSUPPORTED_OP naming the node. For graphs of tensors; a graph
 * whose inputs or outputs are string tensors, sequences or optionals runs with
 * {@link interpretValues}.
 */
export function interpret(graph: Graph, inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>, options: InterpretOptions = {}): Tensor[] {
  return interpretValues(graph, inputs, options).map((r, i) => {
    if (r instanceof Tensor) return r;
    throw new InvalidArgumentError(`interpret(): output ${JSON.stringify(graph.outputNames[i] ?? graph.outputs[i]!.name)} is a ${describeGraphValue(r)}, not a Tensor; run the graph with interpretValues()`);
  });
}

/**
 * {@link interpret} for graphs of any values: ONNX's string tensors, sequences and optionals
 * ({@link StringTensor}, {@link TensorSequence}, {@link OptionalValue}) as inputs and outputs,
 * besides tensors.
 */
export function interpretValues(graph: Graph, inputs: readonly GraphValue[] | Readonly<Record<string, GraphValue>>, options: InterpretOptions = {}): GraphValue[] {
  const onNode = options.onNode;
  const limits: ControlFlowLimits = { ...DEFAULT_CONTROL_FLOW_LIMITS, ...options.limits };
  const { values, symbols } = bindInputs(graph, inputs);
  const env = new Map<Value, RuntimeValue>();
  graph.inputs.forEach((v, i) => env.set(v, values[i]!));
  const last = lastUses(graph);
  graph.nodes.forEach((node, index) => {
    if (node.kind === 'placeholder') return;
    if (node.kind === 'constant') {
      env.set(node.output, node.tensor!);
      return;
    }
    const impl = getImpl(node.target);
    if (impl === undefined) {
      throw new UnsupportedOpError(`${describeNode(node)}: the CPU interpreter has no implementation of ${node.target}`, {
        details: { node: node.name, op: node.target },
      });
    }
    const t0 = onNode === undefined ? 0 : performance.now();
    const args: Record<string, RuntimeArg> = {};
    for (const [k, a] of Object.entries(node.args)) args[k] = resolve(a, env);
    let results: RuntimeValue[];
    try {
      results = impl(args, { node, symbols, limits });
    } catch (error) {
      // Run-time data the op cannot process (an index out of range) is the input's fault.
      if (error instanceof BadInputError) {
        throw new BadInputError(`${describeNode(node)}: ${error.message}`, { cause: error, details: { ...error.details, node: node.name, op: node.target } });
      }
      // A bound reached (a loop that does not end) stays E_RESOURCE_LIMIT, naming the node.
      if (error instanceof ResourceLimitError) {
        throw new ResourceLimitError(`${describeNode(node)}: ${error.message}`, { cause: error, details: { ...error.details, node: node.name, op: node.target } });
      }
      // An op that cannot run in this form (found only at run time: a node imported then) stays E_UNSUPPORTED_OP.
      if (error instanceof UnsupportedOpError) {
        throw new UnsupportedOpError(`${describeNode(node)}: ${error.message}`, { cause: error, details: { ...error.details, node: node.name, op: node.target } });
      }
      if (error instanceof TensorRTNodeError) {
        throw new BadModelError(`${describeNode(node)}: ${error.message}`, { cause: error, details: { node: node.name, op: node.target } });
      }
      throw new InternalError(`${describeNode(node)} failed: ${(error as Error).message}`, { cause: error });
    }
    if (results.length !== node.outputs.length) {
      throw new InternalError(`${describeNode(node)} produced ${results.length} outputs, expected ${node.outputs.length}`);
    }
    node.outputs.forEach((v, i) => {
      const r = results[i]!;
      checkResult(node, v, r, symbols);
      env.set(v, r);
    });
    if (onNode !== undefined) onNode(node, performance.now() - t0);
    for (const v of node.inputValues()) if (last.get(v) === index) env.delete(v);
  });
  return graph.outputs.map((v) => {
    const r = env.get(v);
    if (r === undefined) throw new InternalError(`interpreter: graph output %${v.name} was not computed`);
    return typeof r === 'number' ? Tensor.scalar('int64', r) : r;
  });
}

/** An implementation must agree with the inferred type: catches kernel/inference drift early. */
function checkResult(node: Node, value: Value, result: RuntimeValue, symbols: Map<string, number>): void {
  const wrong = resultMismatch(value.type, result, symbols);
  if (wrong !== null) throw new InternalError(`${describeNode(node)}: output %${value.name}: ${wrong}`);
}

/** Null when `result` is a value of `type` (sizes checked where the symbols tell them); else what differs. */
function resultMismatch(type: ValueType, result: RuntimeValue, symbols: Map<string, number>): string | null {
  switch (type.kind) {
    case 'symint':
      return typeof result === 'number' ? null : 'a SymInt output is not a number';
    case 'tensor':
      if (!(result instanceof Tensor)) return `computed ${describeGraphValue(result)}, inference said a tensor`;
      return shapeMismatch(type.dtype, type.shape, result, symbols);
    case 'strings':
      if (!(result instanceof StringTensor)) return `computed ${describeGraphValue(result)}, inference said a string tensor`;
      return shapeMismatch('string', type.shape, result, symbols);
    case 'sequence': {
      if (!(result instanceof TensorSequence) || result.elem !== type.elem) return `computed ${describeGraphValue(result)}, inference said a sequence of ${type.elem}`;
      const at = type.rank === null ? -1 : result.items.findIndex((t) => t.rank !== type.rank);
      return at < 0 ? null : `element ${at} has rank ${result.items[at]!.rank}, inference said ${type.rank}`;
    }
    case 'optional':
      if (!(result instanceof OptionalValue)) return `computed ${describeGraphValue(result)}, inference said an optional`;
      // An optional's element sizes are its own (they bind no symbol of the graph).
      if (result.value === null) return null;
      return type.element.kind === 'sequence' ? resultMismatch(type.element, result.value, symbols) : resultMismatch(type.element, result.value, new Map());
  }
}

function shapeMismatch(elem: string, shape: readonly Dim[], result: Tensor | StringTensor, symbols: Map<string, number>): string | null {
  // A size only the data decides (a data-dependent symbol, lib/ir/ops/data-dependent.ts) is
  // bound by the first output that shows it; later uses are checked against that value.
  if (result.rank === shape.length) {
    shape.forEach((d, i) => {
      if (typeof d !== 'number' && d.op === 'sym' && !symbols.has(d.name) && isDataDependentSymbol(d.name)) symbols.set(d.name, result.shape[i]!);
    });
  }
  const expectedShape = shape.map((d) => {
    try {
      return evaluateDim(d, symbols);
    } catch {
      return undefined;
    }
  });
  const shapeOk = result.rank === shape.length && expectedShape.every((d, i) => d === undefined || d === result.shape[i]);
  if (elementKindOf(result) === elem && shapeOk) return null;
  return `computed ${elementKindOf(result)}[${result.shape.join(', ')}], but inference said ${elem}[${expectedShape.map((d) => d ?? '?').join(', ')}]`;
}
