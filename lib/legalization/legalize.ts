/**
 * Dynamic legalization (docs/dynamic-shapes.md): after partitioning, engine segments get `_dyn`
 * shape-tensor variants wherever an int argument depends on a symbol; fallback segments keep
 * the original ops. SymInt values never cross a segment boundary afterwards:
 *
 * - in an engine segment, `aten.sym_size.int` becomes `trt.size_dyn` (a shape layer and a
 *   gather: a 0-D int64 tensor) and `sym.*` arithmetic `trt.sym_*_dyn`; every SymInt
 *   argument is rebuilt from its exact expression (`s0*4`) out of dims of tensors the
 *   segment reads, so a SymInt computed in another segment is recomputed here;
 * - a fallback segment reading a SymInt computed elsewhere recomputes it the same way with
 *   `aten.sym_size.int` and `sym.*` (the interpreter runs those).
 *
 * Partitioning uses {@link dynamicSelector}, which knows what legalization will do: a node
 * whose int arguments depend on a symbol is convertible when its `_dyn` variant is; a node
 * with no variant is refused, and {@link checkDynamicSupport} reports every such node in
 * one E_DYNAMIC_UNSUPPORTED error unless `dynamicFallback` sends them to fallback segments.
 */
import { trtType } from '../conversion/context';
import { registeredConverters, selectConverter, type ConverterCandidate, type Selection, type SelectionSettings } from '../conversion/registry';
import { DynamicUnsupportedError, InternalError } from '../errors';
import { call } from '../ir/builder';
import { dimsOfType, Graph, Value, type Arg, type Node } from '../ir/graph';
import { SYM_ARITHMETIC_DYN } from '../ir/ops/dynamic';
import { InferContext } from '../ir/ops/infer-context';
import { dimEquals, formatDim, isStatic, symbolsOf, type Dim } from '../ir/symbolic';
import { verifyGraph } from '../ir/verify';
import { segmentBoundaries, type DynamicOpReport, type Partition, type PartitionReport, type PartitionSettings, type Segment } from '../partitioning/partition';
import { Tensor } from '../ir/tensor';
import { DYNAMIC_RULES, SYMINT_OPS, dimOfArg, symIntArgs, type DynBuilder, type DynamicRule } from './variants';

export interface DynamicSettings extends PartitionSettings {
  /** Run ops with no `_dyn` variant in fallback segments instead of failing (default false). */
  dynamicFallback?: boolean;
}

/** An op whose int arguments depend on a symbol but that has no `_dyn` variant for them. */
export interface MissingVariant {
  node: string;
  target: string;
  /** The arguments that need a shape tensor, with their (symbolic) values. */
  args: Array<{ name: string; value: string }>;
  reason: string;
}

/** An argument as text: `s0*4`, `[s27, s23*4, 16]`. */
function describeArg(a: Arg | undefined): string {
  if (a instanceof Value) return a.type.kind === 'symint' ? formatDim(a.type.expr) : `%${a.name}`;
  if (Array.isArray(a)) return `[${a.map(describeArg).join(', ')}]`;
  return JSON.stringify(a);
}

/** Why TensorRT cannot hold some tensor of `node`, or null. */
function unrepresentable(node: Node, settings: SelectionSettings): string | null {
  for (const v of [...node.inputValues(), ...node.outputs]) {
    if (v.type.kind === 'tensor' && trtType(v.type.dtype, settings.truncateDouble) === null) return `%${v.name} is ${v.type.dtype}, which TensorRT cannot hold`;
  }
  return null;
}

const forced = (node: Node, settings: SelectionSettings): boolean =>
  settings.torchExecutedOps?.has(node.target) === true || settings.torchExecutedOps?.has(node.name) === true;

/** Symbols that are the exact size of a dim of a graph input TensorRT can read. */
function readableSymbols(graph: Graph, settings: SelectionSettings): Set<string> {
  const out = new Set<string>();
  for (const v of graph.inputs) {
    if (v.type.kind !== 'tensor' || trtType(v.type.dtype, settings.truncateDouble) === null) continue;
    for (const d of v.type.shape) if (!isStatic(d) && d.op === 'sym') out.add(d.name);
  }
  return out;
}

/** Symbols a rewrite of `node` reads (its SymInt arguments and its input's dims). */
function symbolsNeeded(node: Node): Set<string> {
  const out = new Set<string>();
  const visit = (a: Arg): void => {
    if (a instanceof Value) {
      if (a.type.kind === 'symint') symbolsOf(a.type.expr, out);
      else if (a === node.args.self) dimsOfType(a.type).forEach((d) => symbolsOf(d, out));
    } else if (Array.isArray(a)) a.forEach(visit);
  };
  Object.values(node.args).forEach(visit);
  for (const v of node.outputs) if (v.type.kind === 'symint') symbolsOf(v.type.expr, out);
  return out;
}

/** What legalization will do with a node. */
export type Classification =
  | { kind: 'plain' }
  | { kind: 'symint'; variant: string }
  | { kind: 'rule'; rule: DynamicRule; needs: string[] }
  | { kind: 'missing'; args: string[]; reason: string };

/** Classifies `node` for dynamic legalization (plain: no int argument depends on a symbol). */
export function classify(node: Node): Classification {
  const symVariant = SYMINT_OPS.get(node.target);
  if (symVariant !== undefined) return { kind: 'symint', variant: symVariant };
  const rule = DYNAMIC_RULES.get(node.target);
  const needs = rule ? rule.needs(node) : [];
  if (rule && needs.length > 0) {
    const why = rule.refuse?.(node) ?? null;
    if (why === null) return { kind: 'rule', rule, needs };
    return { kind: 'missing', args: needs, reason: why };
  }
  const sym = symIntArgs(node);
  if (sym.length === 0) return { kind: 'plain' };
  return { kind: 'missing', args: sym, reason: `${node.target} has no _dyn variant taking a shape tensor there` };
}

function missingReason(node: Node, c: { args: string[]; reason: string }): string {
  const args = c.args.map((a) => `argument ${a} = ${describeArg(node.args[a])}`).join(', ');
  return `${args} depends on a dynamic dim and needs a shape tensor: ${c.reason}`;
}

/**
 * Every node that partitioning would otherwise put in an engine segment but whose int arguments
 * depend on a symbol with no `_dyn` variant for them.
 */
export function findMissingVariants(graph: Graph, settings: SelectionSettings = {}): MissingVariant[] {
  const out: MissingVariant[] = [];
  for (const node of graph.calls()) {
    if (forced(node, settings)) continue;
    const c = classify(node);
    if (c.kind !== 'missing') continue;
    if (registeredConverters(node.target).length === 0 || unrepresentable(node, settings) !== null) continue;
    out.push({ node: node.name, target: node.target, args: c.args.map((name) => ({ name, value: describeArg(node.args[name]) })), reason: c.reason });
  }
  return out;
}

/**
 * Throws one E_DYNAMIC_UNSUPPORTED listing every op with no `_dyn` variant (and the argument
 * that needs a shape tensor), unless `settings.dynamicFallback`; returns them either way.
 */
export function checkDynamicSupport(graph: Graph, settings: DynamicSettings = {}): MissingVariant[] {
  const missing = findMissingVariants(graph, settings);
  if (missing.length === 0 || settings.dynamicFallback) return missing;
  const lines = missing.map((m) => `  - node ${m.node} (${m.target}): ${m.args.map((a) => `argument ${a.name} = ${a.value}`).join(', ')} (${m.reason})`);
  throw new DynamicUnsupportedError(
    `${missing.length} op(s) take an int argument that depends on a dynamic dim, and have no shape-tensor (_dyn) variant for it ` +
      `(set dynamicFallback to run them in fallback segments, or give static shapes):\n${lines.join('\n')}`,
    { details: { ops: missing } },
  );
}

/**
 * Selects converters for what legalization will turn `node` into, without touching `graph`:
 * the rewrite is built in a scratch graph (nodes only reference values, so the original
 * graph does not see it), and every node it makes must pass `selectConverter`, which runs
 * each candidate's `checkArgs`. The selection names the converter of the node that takes
 * `node`'s place (its `variant`), so the report says what will convert it.
 */
function selectRewrite(graph: Graph, node: Node, variant: string, settings: SelectionSettings, build: (b: ShapeTensorBuilder) => Value): Selection {
  const scratch = new Graph(`${graph.name} (probe of ${node.name})`);
  for (const [name, range] of graph.symbols) scratch.symbols.set(name, range);
  const representable = (v: Value): boolean => v.type.kind === 'tensor' && trtType(v.type.dtype, settings.truncateDouble) !== null;
  const b = new ShapeTensorBuilder(scratch, [...node.inputValues(), ...graph.inputs].filter(representable), `node ${node.name}`);
  let value: Value;
  try {
    value = build(b);
  } catch (error) {
    if (error instanceof DynamicUnsupportedError) return { ok: false, reasons: [error.message] };
    throw error;
  }
  const made = b.flush();
  const reasons: string[] = [];
  let replacement: ConverterCandidate | undefined;
  let producer: ConverterCandidate | undefined;
  for (const n of made) {
    const s = selectConverter(n, settings);
    if (!s.ok) reasons.push(...s.reasons.map((r) => `its ${n.target} rewrite: ${r}`));
    else {
      if (n.target === variant) replacement = s.converter;
      if (n === value.producer) producer = s.converter;
    }
  }
  if (reasons.length > 0) return { ok: false, reasons };
  const converter = replacement ?? producer;
  // A rewrite that made no call node (a static value, frozen into a constant) needs no converter of its own.
  if (converter === undefined) {
    const fallback = registeredConverters(variant).find((c) => c.dynamic);
    return fallback === undefined ? { ok: false, reasons: [`no converter for ${variant}`] } : { ok: true, converter: fallback };
  }
  return { ok: true, converter };
}

/**
 * The converter selection partitioning uses for a dynamic graph: nodes legalization rewrites
 * are judged by their rewrite (every node it makes must have a converter whose `checkArgs`
 * accepts it); nodes with no variant are refused (with the reason); everything else as usual.
 */
export function dynamicSelector(graph: Graph, settings: DynamicSettings): (node: Node, s: SelectionSettings) => Selection {
  const readable = readableSymbols(graph, settings);
  const unreadable = (node: Node): string | null => {
    const s = [...symbolsNeeded(node)].find((x) => !readable.has(x));
    return s === undefined ? null : `symbol ${s} is not the size of a dim of any input TensorRT can read`;
  };
  return (node, s) => {
    if (forced(node, s)) return selectConverter(node, s);
    const c = classify(node);
    switch (c.kind) {
      case 'plain':
        return selectConverter(node, s);
      case 'missing':
        return {
          ok: false,
          reasons: [`${missingReason(node, c)}${settings.dynamicFallback ? ' (dynamicFallback: it runs in a fallback segment)' : ''}`],
        };
      case 'symint': {
        const why = unreadable(node);
        if (why !== null) return { ok: false, reasons: [why] };
        return selectRewrite(graph, node, c.variant, s, (b) => b.scalar(node.output.type.kind === 'symint' ? node.output.type.expr : 0));
      }
      case 'rule': {
        const why = unrepresentable(node, s) ?? unreadable(node);
        if (why !== null) return { ok: false, reasons: [why] };
        return selectRewrite(graph, node, c.rule.variant, s, (b) => c.rule.build(node, b)[0]!);
      }
    }
  };
}

// ---------------------------------------------------------------------------------------
// Building shape tensors (engine segments) and SymInts (fallback segments)
// ---------------------------------------------------------------------------------------

/** Where a symbolic dim can be read at run time: the first tensor with an equal dim. */
function findSource(sources: readonly Value[], d: Dim): { value: Value; axis: number } | null {
  for (const value of sources) {
    const axis = value.tensorType.shape.findIndex((e) => dimEquals(e, d));
    if (axis >= 0) return { value, axis };
  }
  return null;
}

/** Shape tensors for one engine segment: each distinct dim built once, in order. */
class ShapeTensorBuilder implements DynBuilder {
  private readonly cache = new Map<string, Value>();
  private readonly constants = new Map<string, Value>();
  private created: Node[] = [];

  constructor(
    readonly graph: Graph,
    private readonly sources: readonly Value[],
    private readonly where: string,
  ) {}

  /** The nodes made since the last flush, in order. */
  flush(): Node[] {
    const c = this.created;
    this.created = [];
    return c;
  }

  call(target: string, args: Record<string, Arg>): Node {
    const node = call(this.graph, target, args, { name: target.split('.')[1] });
    this.created.push(node);
    return node;
  }

  /** The freeze helper: static ints as an int64 shape tensor (a 0-D or 1-D constant, made once). */
  freeze(values: readonly number[], scalar: boolean): Value {
    const key = `${scalar ? 's' : 'v'}${values.join(',')}`;
    const hit = this.constants.get(key);
    if (hit !== undefined) return hit;
    const v = this.graph.addConstant(scalar ? `size_${values[0]}`.replace('-', 'm') : 'dims', Tensor.from('int64', scalar ? [] : [values.length], values));
    this.constants.set(key, v);
    return v;
  }

  scalar(d: Dim): Value {
    if (isStatic(d)) return this.freeze([d], true);
    const key = formatDim(d);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let v: Value;
    const source = findSource(this.sources, d);
    if (source !== null) v = this.call('trt.size_dyn', { self: source.value, dim: source.axis }).output;
    else if (d.op === 'sym') {
      throw new DynamicUnsupportedError(`${this.where}: symbol ${d.name} is not the size of a dim of any tensor it can read, so its value is unknown at run time`, {
        details: { symbol: d.name },
      });
    } else v = this.call(SYM_ARITHMETIC_DYN[d.op], { a: this.scalar(d.a), b: this.scalar(d.b) }).output;
    this.cache.set(key, v);
    return v;
  }

  list(dims: readonly Dim[]): Value {
    const items: Value[] = [];
    let run: number[] = [];
    const flush = (): void => {
      if (run.length > 0) items.push(this.freeze(run, false));
      run = [];
    };
    for (const d of dims) {
      if (isStatic(d)) run.push(d);
      else {
        flush();
        items.push(this.scalar(d));
      }
    }
    flush();
    if (items.length === 1 && items[0]!.tensorType.shape.length === 1) return items[0]!;
    if (items.length === 0) return this.freeze([], false);
    return this.call('trt.sym_list_dyn', { items }).output;
  }

  inferContext(node: Node): InferContext {
    return new InferContext(node.target, node.args, `node "${node.name}"`, this.graph.symbols);
  }
}

/** SymInt values for one fallback segment, rebuilt from dims of tensors it can read. */
class SymIntBuilder {
  private readonly cache = new Map<string, Arg>();
  readonly created: Node[] = [];

  constructor(
    private readonly graph: Graph,
    private readonly sources: readonly Value[],
    private readonly where: string,
  ) {}

  arg(d: Dim): Arg {
    if (isStatic(d)) return d;
    const key = formatDim(d);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let v: Value;
    const source = findSource(this.sources, d);
    const make = (target: string, args: Record<string, Arg>): Value => {
      const node = call(this.graph, target, args, { name: target === 'aten.sym_size.int' ? 'sym_size' : target.replace('.', '_') });
      this.created.push(node);
      return node.output;
    };
    if (source !== null) v = make('aten.sym_size.int', { self: source.value, dim: source.axis });
    else if (d.op === 'sym') throw new InternalError(`${this.where}: no tensor it reads carries symbol ${d.name}`);
    else v = make(`sym.${d.op}`, { a: this.arg(d.a), b: this.arg(d.b) });
    this.cache.set(key, v);
    return v;
  }
}

/** Tensor values `nodes` read from outside themselves (not constants), in first-read order. */
function readFromOutside(nodes: readonly Node[]): Value[] {
  const inside = new Set(nodes);
  const seen = new Set<Value>();
  const out: Value[] = [];
  for (const n of nodes) {
    for (const v of n.inputValues()) {
      if (seen.has(v) || v.type.kind !== 'tensor' || v.producer.kind === 'constant' || inside.has(v.producer)) continue;
      seen.add(v);
      out.push(v);
    }
  }
  return out;
}

/** Rewrites one engine segment; returns its new node list and the `_dyn` rewrites made (with a value to test liveness by). */
function legalizeEngineSegment(graph: Graph, seg: Segment, settings: SelectionSettings): { nodes: Node[]; rewrites: Array<{ report: DynamicOpReport; value: Value }> } {
  const representable = (v: Value): boolean => v.type.kind === 'tensor' && trtType(v.type.dtype, settings.truncateDouble) !== null;
  const sources = [...readFromOutside(seg.nodes), ...graph.inputs].filter(representable);
  const b = new ShapeTensorBuilder(graph, sources, `engine segment ${seg.index}`);
  const nodes: Node[] = [];
  const rewrites: Array<{ report: DynamicOpReport; value: Value }> = [];
  for (const node of seg.nodes) {
    const c = classify(node);
    if (c.kind === 'symint') {
      const value = b.scalar(node.output.type.kind === 'symint' ? node.output.type.expr : 0);
      nodes.push(...b.flush());
      rewrites.push({ report: { node: node.name, target: node.target, variant: c.variant }, value });
      continue;
    }
    if (c.kind === 'rule') {
      const outs = c.rule.build(node, b);
      Object.assign(outs[0]!.producer.meta, node.meta);
      node.outputs.forEach((old, i) => {
        const v = outs[i]!;
        v.type = old.type; // the original types are exact; the _dyn ones equal them up to canonical form
        v.name = old.name; // other segments and the program name values
        graph.replaceAllUses(old, v);
      });
      nodes.push(...b.flush());
      rewrites.push({ report: { node: node.name, target: node.target, variant: c.rule.variant }, value: outs[0]! });
      continue;
    }
    if (c.kind === 'missing') throw new InternalError(`node ${node.name} (${node.target}) reached an engine segment without a _dyn variant`);
    // A plain node: its SymInt-free arguments stay; SymInt arguments cannot be here (classify).
    nodes.push(node);
  }
  // SymInt arguments of plain nodes are impossible, but SymInt values of this segment read
  // by later nodes of the segment are all rebuilt as shape tensors: the sym nodes are gone.
  return { nodes, rewrites };
}

/** Recomputes, inside a fallback segment, the SymInt values it reads from elsewhere. */
function rematerializeFallback(graph: Graph, seg: Segment): Node[] {
  const inside = new Set(seg.nodes);
  const external = new Set<Value>();
  for (const n of seg.nodes) for (const v of n.inputValues()) if (v.type.kind === 'symint' && !inside.has(v.producer)) external.add(v);
  if (external.size === 0) return [...seg.nodes];
  const b = new SymIntBuilder(graph, [...readFromOutside(seg.nodes), ...graph.inputs], `fallback segment ${seg.index}`);
  const replacement = new Map<Value, Arg>();
  for (const v of external) replacement.set(v, b.arg((v.type as { expr: Dim }).expr));
  const swap = (a: Arg): Arg => (a instanceof Value && replacement.has(a) ? replacement.get(a)! : Array.isArray(a) ? a.map(swap) : a);
  for (const n of seg.nodes) for (const key of Object.keys(n.args)) n.args[key] = swap(n.args[key]!);
  return [...b.created, ...seg.nodes];
}

/**
 * Legalizes a partitioned dynamic graph in place: engine segments get `_dyn` variants and
 * shape tensors, fallback segments recompute the SymInts they read; the graph is reordered
 * (segments in order), dead SymInt plumbing removed, and verified. Returns the segments and
 * the report updated (per segment, the ops that run as `_dyn` variants).
 */
export function legalizeSegments(graph: Graph, part: Partition, settings: SelectionSettings = {}): Partition {
  const owner = new Map<Node, number>();
  const lists: Node[][] = [];
  const rewrites: Array<Array<{ report: DynamicOpReport; value: Value }>> = [];
  for (const seg of part.segments) {
    if (seg.kind === 'engine') {
      const r = legalizeEngineSegment(graph, seg, settings);
      lists.push(r.nodes);
      rewrites.push(r.rewrites);
    } else {
      lists.push(rematerializeFallback(graph, seg));
      rewrites.push([]);
    }
    lists[lists.length - 1]!.forEach((n) => owner.set(n, seg.index));
  }
  const placeholders = graph.nodes.filter((n) => n.kind === 'placeholder');
  const constants = graph.nodes.filter((n) => n.kind === 'constant');
  graph.nodes.splice(0, graph.nodes.length, ...placeholders, ...constants, ...lists.flat());
  graph.eliminateDeadCode();
  verifyGraph(graph, 'legalized graph');

  const alive = new Set(graph.nodes);
  const kept = part.segments.filter((s) => graph.nodes.some((n) => owner.get(n) === s.index));
  const renumber = new Map(kept.map((s, i) => [s.index, i]));
  const segments = segmentBoundaries(
    graph,
    kept.map((s) => ({ kind: s.kind, nodes: graph.nodes.filter((n) => owner.get(n) === s.index) })),
  );
  const variantOf = new Map<string, string>();
  const dynamicOps = kept.map((s) =>
    rewrites[s.index]!.filter((r) => alive.has(r.value.producer)).map((r) => {
      variantOf.set(r.report.node, r.report.variant);
      return r.report;
    }),
  );
  const report: PartitionReport = {
    ops: part.report.ops.map((o) => {
      const segment = renumber.get(o.segment) ?? -1;
      const variant = variantOf.get(o.node);
      const out = { ...o, segment };
      if (variant !== undefined) out.dynamicVariant = variant;
      if (segment < 0 && o.converted) out.reasons = [...o.reasons, 'its value is recomputed where it is used (shape-tensor legalization)'];
      return out;
    }),
    segments: segments.map((s, i) => ({
      index: s.index,
      kind: s.kind,
      ops: part.report.ops.filter((o) => renumber.get(o.segment) === i).length,
      inputs: s.inputs.map((v) => v.name),
      outputs: s.outputs.map((v) => v.name),
      ...(s.kind === 'engine' ? { dynamicOps: dynamicOps[i]! } : {}),
    })),
  };
  return { segments, report };
}
