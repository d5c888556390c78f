/**
 * The complex rewrite (docs/complex-numbers.md, "Rewrite"): complex graph inputs, buffers and
 * constants become real carriers with a trailing dim of 2, and every node of every complex
 * subgraph (lib/lowering/complex/detect.ts) is rewritten into real arithmetic on carriers by
 * its rule (lib/lowering/complex/rules.ts). Afterwards no value of the graph is complex,
 * except around ops without a rule when `fallback` is set: those keep their complex
 * operands, rebuilt from carriers by `view_as_complex` and turned back by `view_as_real`, so
 * that the partitioner sends exactly them (and the adapters) to fallback segments. An op
 * without a rule that the CPU interpreter cannot run on complex values either
 * (lib/interpreter/complex-fallback.ts) is refused, with or without `fallback`.
 *
 * complex64 is carried as float32 (a complex64 tensor's data already is that layout);
 * complex128 as float32 with `truncateDouble`. Without it, a complex128 graph input, buffer
 * or constant is an `E_COMPLEX128` error naming it, and complex128 values computed inside
 * the graph are carried as float64 (which the partitioner keeps out of TensorRT).
 *
 * Symbolic dims stay symbolic: carriers' shapes are the complex shapes plus a literal 2, and
 * SymInt arguments (view sizes, slice bounds) pass through unchanged.
 */
import { ComplexDoubleError, InternalError, UnsupportedOpError } from '../../errors';
import { interpreterComplexRefusal } from '../../interpreter/complex-fallback';
import { call } from '../../ir/builder';
import { dtypeInfo, type DType } from '../../ir/dtype';
import { tensorType, Value, type Arg, type Graph, type Node } from '../../ir/graph';
import { formatShape } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import { ComplexSubgraphDetector, findComplexIndices, isComplexValue, type ComplexIndices, type ComplexSubgraph } from './detect';
import { COMPLEX_RULES, RuleContext, ruleRefusal, type RewriteEnvironment } from './rules';

export interface ComplexRewriteOptions {
  /** Carry complex128 as float32 (else a complex128 input, buffer or constant is E_COMPLEX128). */
  truncateDouble?: boolean;
  /**
   * Complex ops without a rewrite rule: false (default) fails with one E_UNSUPPORTED_OP
   * listing them all; true keeps them as complex ops for fallback segments, with
   * view_as_complex / view_as_real adapters at their boundary, provided the CPU interpreter
   * runs each of them on complex values (else one E_UNSUPPORTED_OP lists those it does not).
   */
  fallback?: boolean;
}

/** A complex graph input or output and the real carrier that replaced it. */
export interface ComplexBoundary {
  /** Position among the graph inputs (or outputs). */
  index: number;
  name: string;
  dtype: 'complex64' | 'complex128';
  /** The carrier's dtype: float32, or float64 for a complex128 output computed without truncateDouble. */
  carrier: 'float32' | 'float64';
}

/** What the rewrite did. */
export interface ComplexRewriteReport {
  /** The complex subgraphs found, as detected before the rewrite (their nodes are gone afterwards). */
  subgraphs: ComplexSubgraph[];
  /** Which graph inputs and outputs were complex. */
  indices: ComplexIndices;
  inputs: ComplexBoundary[];
  outputs: ComplexBoundary[];
  /** Complex buffers and constants unpacked into real carriers, by name. */
  constants: string[];
  /** Nodes rewritten into real arithmetic. */
  rewritten: number;
  /** Nodes left complex for fallback segments (only with `fallback`), with the reason. */
  fallback: Array<{ node: string; target: string; reason: string }>;
}

const where = (node: Node): string => (typeof node.meta.where === 'string' ? `${node.meta.where}` : `node ${node.name} (${node.target})`);

/** Runs one rewrite over a graph; see {@link rewriteComplexGraph}. */
class ComplexRewriter implements RewriteEnvironment {
  private readonly carriers = new Map<Value, Value>();
  /** A carrier made by a fallback node's view_as_real adapter → the complex value it views. */
  private readonly complexBehind = new Map<Value, Value>();
  private readonly subst = new Map<Value, Value>();
  private readonly out: Node[] = [];

  constructor(
    readonly graph: Graph,
    private readonly options: ComplexRewriteOptions,
  ) {}

  carrierDType(dtype: DType): DType {
    if (dtype === 'complex64') return 'float32';
    if (dtype === 'complex128') return this.options.truncateDouble ? 'float32' : 'float64';
    throw new InternalError(`complex lowering: ${dtype} is not a complex dtype`);
  }

  carrierOf(value: Value): Value {
    const c = this.carriers.get(value);
    if (c === undefined) throw new InternalError(`complex lowering: %${value.name} has no real carrier (read before it was rewritten)`);
    return c;
  }

  /** Runs `build`, moving the nodes it appends to the output list; returns what it returned. */
  private appending<T>(build: () => T): T {
    const start = this.graph.nodes.length;
    const result = build();
    this.out.push(...this.graph.nodes.splice(start));
    return result;
  }

  private carrierType(v: Value): ReturnType<typeof tensorType> {
    const t = v.tensorType;
    return tensorType(this.carrierDType(t.dtype), [...t.shape, 2]);
  }

  /** A complex placeholder → a carrier placeholder at the same input position, with the same name. */
  private unpackInput(node: Node): void {
    const old = node.output;
    const v = this.appending(() => this.graph.addInput(`${old.name}_carrier`, this.carrierType(old)));
    this.graph.inputs.pop();
    this.graph.inputs[this.graph.inputs.indexOf(old)] = v;
    swapNames(node, old, v);
    this.carriers.set(old, v);
  }

  /** A complex constant → a float carrier constant (zero-copy for complex64). */
  private unpackConstant(node: Node): void {
    const old = node.output;
    const t = node.tensor!;
    const dtype = this.carrierDType(t.dtype);
    // complex64 data is float32 pairs already; complex128 (float64 pairs) is copied, rounded when carried as float32.
    const src = t.data as Float32Array | Float64Array;
    const data = t.dtype === 'complex64' && dtype === 'float32' ? src : dtype === 'float32' ? Float32Array.from(src) : Float64Array.from(src);
    const v = this.appending(() => this.graph.addConstant(`${old.name}_carrier`, new Tensor(dtype, [...t.shape, 2], data), node.origin));
    swapNames(node, old, v);
    this.carriers.set(old, v);
  }

  private remapArgs(node: Node): void {
    if (this.subst.size === 0) return;
    const swap = (a: Arg): Arg => (a instanceof Value ? (this.subst.get(a) ?? a) : Array.isArray(a) ? a.map(swap) : a);
    for (const key of Object.keys(node.args)) node.args[key] = swap(node.args[key]!);
  }

  /** The complex value a fallback node reads in place of `v`: rebuilt from its carrier by view_as_complex. */
  private complexView(v: Value): Value {
    const carrier = this.carrierOf(v);
    const behind = this.complexBehind.get(carrier);
    if (behind !== undefined) return behind;
    const component = dtypeInfo(v.tensorType.dtype).component;
    return this.appending(() => {
      let x = carrier;
      if (x.tensorType.dtype !== component) x = call(this.graph, 'aten._to_copy.default', { self: x, dtype: component }, { name: `${carrier.name}_uncarried` }).output;
      const c = call(this.graph, 'aten.view_as_complex.default', { self: x }, { name: `${carrier.name}_complex` }).output;
      this.complexBehind.set(carrier, c);
      return c;
    });
  }

  /** Keeps a node without a rule as a complex op, adapting its complex inputs and outputs. */
  private keepForFallback(node: Node): void {
    const swap = (a: Arg): Arg => (a instanceof Value && isComplexValue(a) ? this.complexView(a) : Array.isArray(a) ? a.map(swap) : a);
    for (const key of Object.keys(node.args)) node.args[key] = swap(node.args[key]!);
    node.meta.complexFallback = true;
    this.out.push(node);
    for (const v of node.outputs) {
      if (!isComplexValue(v)) continue;
      const carrier = this.appending(() => {
        let r = call(this.graph, 'aten.view_as_real.default', { self: v }, { name: `${v.name}_carrier` }).output;
        const dtype = this.carrierDType(v.tensorType.dtype);
        if (r.tensorType.dtype !== dtype) r = call(this.graph, 'aten._to_copy.default', { self: r, dtype }, { name: `${v.name}_carrier_cast` }).output;
        return r;
      });
      this.carriers.set(v, carrier);
      this.complexBehind.set(carrier, v);
    }
  }

  /** Rewrites one node by its rule, checking what the rule returns against the node's types. */
  private rewrite(node: Node): void {
    const rule = COMPLEX_RULES[node.target]!;
    const start = this.graph.nodes.length;
    const results = rule.build(new RuleContext(this, node));
    const added = this.graph.nodes.splice(start);
    this.out.push(...added);
    if (results.length !== node.outputs.length) {
      throw new InternalError(`complex rule for ${node.target} gave ${results.length} values for the ${node.outputs.length} outputs of node ${node.name}`);
    }
    const fresh = new Set(added);
    node.outputs.forEach((v, i) => {
      const r = results[i]!;
      // The value that stands for the node takes its name (`mul` stays `mul` as trt.complex_mul).
      const rename = (): void => {
        if (node.outputs.length === 1 && fresh.has(r.producer) && r.producer.outputs.length === 1) swapNames(node, v, r);
      };
      if (v.type.kind === 'symint') {
        if (r.type.kind !== 'symint') throw new InternalError(`complex rule for ${node.target}: output ${i} of node ${node.name} must be a SymInt`);
        this.subst.set(v, r);
        rename();
        return;
      }
      const t = v.tensorType;
      const expected = isComplexValue(v) ? this.carrierType(v) : t;
      const got = r.tensorType;
      if (got.dtype !== expected.dtype || got.shape.length !== expected.shape.length) {
        throw new InternalError(
          `complex rule for ${node.target} made ${got.dtype}${formatShape(got.shape)} for %${v.name} of node ${node.name}, expected ${expected.dtype}${formatShape(expected.shape)}`,
        );
      }
      if (isComplexValue(v)) this.carriers.set(v, r);
      else this.subst.set(v, r);
      rename();
    });
  }

  /** Checks, then rewrites; see {@link rewriteComplexGraph}. */
  run(): ComplexRewriteReport {
    const graph = this.graph;
    if (!graph.nodes.some((n) => n.outputs.some(isComplexValue))) {
      return { subgraphs: [], indices: { inputs: [], outputs: [] }, inputs: [], outputs: [], constants: [], rewritten: 0, fallback: [] };
    }
    graph.eliminateDeadCode();
    const indices = findComplexIndices(graph);
    const boundary = (values: readonly Value[], names: readonly string[], positions: readonly number[]): ComplexBoundary[] =>
      positions.map((index) => {
        const dtype = values[index]!.tensorType.dtype as ComplexBoundary['dtype'];
        return { index, name: names[index]!, dtype, carrier: this.carrierDType(dtype) as ComplexBoundary['carrier'] };
      });
    const inputs = boundary(
      graph.inputs,
      graph.inputs.map((v) => v.name),
      indices.inputs,
    );
    const outputs = boundary(graph.outputs, graph.outputNames, indices.outputs);
    const complexConstants = graph.nodes.filter((n) => n.kind === 'constant' && isComplexValue(n.output));
    const constantNames = complexConstants.map((n) => n.name);

    // complex128 data TensorRT would have to take as float64: refused up front, all named at once.
    if (!this.options.truncateDouble) {
      const wide = [
        ...graph.inputs.filter((v) => v.tensorType.dtype === 'complex128').map((v) => `input "${v.name}" ${v.tensorType.dtype}${formatShape(v.tensorType.shape)}`),
        ...complexConstants.filter((n) => n.output.tensorType.dtype === 'complex128').map((n) => `${n.origin ?? 'constant'} "${n.name}" complex128${formatShape(n.output.tensorType.shape)}`),
      ];
      if (wide.length > 0) {
        throw new ComplexDoubleError(
          `${wide.join(', ')}: complex128 would be carried as float64 pairs, which TensorRT has no type for; ` +
            'set truncateDouble: true to carry it as float32 pairs (or give the model complex64)',
          { details: { inputs: wide } },
        );
      }
    }

    const subgraphs = new ComplexSubgraphDetector().findAllComplexSubgraphs(graph);
    const members = new Set<Node>();
    for (const s of subgraphs) for (const n of [...s.anchorNodes, ...s.subgraphNodes]) members.add(n);
    const refused = new Map<Node, string>();
    for (const n of members) {
      const why = ruleRefusal(n);
      if (why !== null) refused.set(n, why);
    }
    // Of those, the ones a fallback segment could not run either: the CPU interpreter has no
    // complex implementation of them. No backend runs them, so they are refused whatever
    // `fallback` says, here, before any segment is built or run.
    const unrunnable = new Map<Node, string>();
    for (const n of refused.keys()) {
      const why = interpreterComplexRefusal(n);
      if (why !== null) unrunnable.set(n, why);
    }
    if (refused.size > 0 && !this.options.fallback) {
      const list = [...refused].map(([n, why]) => `  - ${where(n)}: ${why}${unrunnable.has(n) ? `; nor can a fallback segment run it: ${unrunnable.get(n)!}` : ''}`);
      const hint =
        unrunnable.size === 0
          ? 'Set complexFallback: true to run them in fallback segments instead.'
          : unrunnable.size < refused.size
            ? 'Set complexFallback: true to run the others in fallback segments; no backend runs the ones that no fallback segment can run.'
            : 'No backend runs them on complex values: compute them on real values (real(), imag(), abs()) in the model.';
      throw new UnsupportedOpError(`${refused.size} op(s) on complex values have no rewrite into real arithmetic, so they cannot be converted into an engine segment:\n${list.join('\n')}\n${hint}`, {
        details: { ops: [...refused].map(([n, reason]) => ({ node: n.name, target: n.target, reason, ...(unrunnable.has(n) ? { fallback: unrunnable.get(n)! } : {}) })) },
      });
    }
    if (unrunnable.size > 0) {
      const list = [...unrunnable].map(([n, why]) => `  - ${where(n)}: ${refused.get(n)!}, and ${why}`);
      throw new UnsupportedOpError(
        `${unrunnable.size} op(s) on complex values can run on no backend: they have no rewrite into real arithmetic (for an engine segment) ` +
          `and the CPU interpreter cannot run them on complex values (for a fallback segment):\n${list.join('\n')}\n` +
          'Compute them on real values (real(), imag(), abs()) in the model.',
        { details: { ops: [...unrunnable].map(([n, reason]) => ({ node: n.name, target: n.target, reason: `${refused.get(n)!}, and ${reason}` })) } },
      );
    }

    let rewritten = 0;
    for (const node of [...graph.nodes]) {
      if (node.kind === 'placeholder') {
        if (isComplexValue(node.output)) this.unpackInput(node);
        else this.out.push(node);
        continue;
      }
      if (node.kind === 'constant') {
        if (isComplexValue(node.output)) this.unpackConstant(node);
        else this.out.push(node);
        continue;
      }
      this.remapArgs(node);
      if (!members.has(node)) this.out.push(node);
      else if (refused.has(node)) this.keepForFallback(node);
      else {
        this.rewrite(node);
        rewritten++;
      }
    }
    graph.nodes.splice(0, graph.nodes.length, ...this.out);
    graph.outputs = graph.outputs.map((v) => this.carriers.get(v) ?? this.subst.get(v) ?? v);
    graph.eliminateDeadCode();
    return {
      subgraphs,
      indices,
      inputs,
      outputs: outputs.map((o) => ({ ...o, carrier: graph.outputs[o.index]!.tensorType.dtype as ComplexBoundary['carrier'] })),
      constants: constantNames,
      rewritten,
      fallback: [...refused].map(([n, reason]) => ({ node: n.name, target: n.target, reason })),
    };
  }
}

/** Swaps the names of two nodes' first outputs (and of the nodes), so the replacement keeps the model's name. */
function swapNames(oldNode: Node, oldValue: Value, value: Value): void {
  const node = value.producer;
  [oldValue.name, value.name] = [value.name, oldValue.name];
  [oldNode.name, node.name] = [node.name, oldNode.name];
}

/**
 * Unpacks complex inputs, buffers and constants into real carriers and rewrites every
 * complex subgraph into real arithmetic, in place. Checks everything before changing
 * anything: complex128 data without `truncateDouble` is one `E_COMPLEX128` error naming every
 * such input and constant; ops without a rule are one `E_UNSUPPORTED_OP` listing them all
 * (unless `fallback`, and then only those the CPU interpreter cannot run on complex values).
 */
export function rewriteComplexGraph(graph: Graph, options: ComplexRewriteOptions = {}): ComplexRewriteReport {
  return new ComplexRewriter(graph, options).run();
}
