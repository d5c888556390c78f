/**
 * Partitioning: which nodes are converted into engine segments (a Network that the chosen
 * backend builds into an engine) and which run in fallback (interpreter) segments. Each call
 * node asks the converter registry; consecutive convertible nodes form an engine segment; an
 * engine segment with fewer than `minBlockSize` ops is not worth an engine boundary and falls
 * back; adjacent fallback segments merge. A size that only a run tells (a data-dependent
 * symbol) never enters an engine segment from outside, and leaves one only where the backend
 * holds such sizes at its engines' outputs (`dataDependentSizes`). A string tensor, sequence or
 * optional never leaves the fallback segment it is made in: its producer moves down to its first
 * reader, and a convertible node between it and a later reader falls back. The report says, per op,
 * what happened and why. Partitioning knows of the backend only that capability: compile()
 * records the backend in the report (`backend`).
 */
import { UnsupportedOpError } from '../errors';
import { selectConverter, type DataDependentSizes, type Selection, type SelectionSettings } from '../conversion/registry';
import { formatType, type Graph, type Node, type Value } from '../ir/graph';
import { isDataDependentDim } from '../ir/ops/data-dependent';
import { formatShape } from '../ir/symbolic';

export interface PartitionSettings extends SelectionSettings {
  /** Smallest engine segment worth building (default 5 ops). */
  minBlockSize?: number;
  /** Fail, listing every unsupported op, instead of falling back. */
  requireFullCompilation?: boolean;
  /** Chooses each node's converter (default selectConverter; dynamic graphs pass one that knows the `_dyn` variants). */
  select?: (node: Node, settings: SelectionSettings) => Selection;
}

/** `engine`: converted ops, built into an engine by the program's backend; `fallback`: ops the interpreter runs. */
export type SegmentKind = 'engine' | 'fallback';

export interface Segment {
  readonly index: number;
  readonly kind: SegmentKind;
  readonly nodes: Node[];
  /** Values read from outside the segment (graph inputs or earlier segments' outputs; not constants). */
  readonly inputs: Value[];
  /** Values later segments or the graph outputs read. */
  readonly outputs: Value[];
}

export interface OpReport {
  node: string;
  target: string;
  /** Converted: runs in an engine segment. */
  converted: boolean;
  /** The chosen converter, when converted. */
  converter?: string;
  /** Why not (or why it was moved to fallback). */
  reasons: string[];
  segment: number;
  /** The shape-tensor (`_dyn`) op it runs as in its engine segment, when legalization rewrote it. */
  dynamicVariant?: string;
}

/** A node of an engine segment that runs as a `_dyn` variant (dynamic shapes). */
export interface DynamicOpReport {
  node: string;
  target: string;
  variant: string;
}

/** A model input or output: its name in the model, and the value carrying it between segments. */
export interface ReportIO {
  name: string;
  value: string;
}

export interface PartitionReport {
  /** One per call node left after shape specialization and constant folding (what partitioning sees). */
  ops: OpReport[];
  /** Segment inputs and outputs are value names; `io` maps the model's inputs and outputs to theirs. */
  segments: Array<{ index: number; kind: SegmentKind; ops: number; inputs: string[]; outputs: string[]; dynamicOps?: DynamicOpReport[] }>;
  /** The backend that built the engine segments (set by compile(); absent from dryRun(), which chooses none). */
  backend?: string;
  /** Call nodes of the model as imported, before shape specialization folded any (set by compile() and dryRun()). */
  modelOps?: number;
  /** The model's inputs and outputs (set by compile() and dryRun()). */
  io?: { inputs: ReportIO[]; outputs: ReportIO[] };
}

export interface Partition {
  segments: Segment[];
  report: PartitionReport;
}

/**
 * The segments of consecutive node groups, in order: each segment's inputs are the values it
 * reads from outside itself (graph inputs or earlier groups' outputs; not constants), in
 * first-read order; its outputs the values later groups or the graph outputs read.
 */
export function segmentBoundaries(graph: Graph, groups: ReadonlyArray<{ kind: SegmentKind; nodes: Node[] }>): Segment[] {
  const owner = new Map<Node, number>();
  groups.forEach((g, i) => g.nodes.forEach((n) => owner.set(n, i)));
  const readers = new Map<Value, Set<number>>();
  groups.forEach((g, i) =>
    g.nodes.forEach((n) =>
      n.inputValues().forEach((v) => {
        const set = readers.get(v) ?? new Set<number>();
        set.add(i);
        readers.set(v, set);
      }),
    ),
  );
  const graphOutputs = new Set(graph.outputs);
  return groups.map((g, i) => {
    const inputs: Value[] = [];
    const seen = new Set<Value>();
    for (const n of g.nodes) {
      for (const v of n.inputValues()) {
        if (seen.has(v) || v.producer.kind === 'constant' || owner.get(v.producer) === i) continue;
        seen.add(v);
        inputs.push(v);
      }
    }
    const outputs = g.nodes.flatMap((n) => n.outputs).filter((v) => graphOutputs.has(v) || [...(readers.get(v) ?? [])].some((j) => j !== i));
    return { index: i, kind: g.kind, nodes: g.nodes, inputs, outputs };
  });
}

const dataDependent = (v: Value): boolean => v.type.kind === 'tensor' && v.type.shape.some(isDataDependentDim);
const showValue = (v: Value): string => `%${v.name} ${formatShape(v.tensorType.shape)}`;

/**
 * The engine nodes that must move to fallback for a size only a run tells (a data-dependent
 * symbol, lib/ir/ops/data-dependent.ts), each with why: a node reading such a value from
 * outside its engine segment (an engine's run-time inputs are planned from the program's
 * inputs, which such a size is not), and, where the backend holds such sizes `inside` its
 * engines only, the producer of such a value that leaves its engine segment.
 */
function dataDependentCrossings(segments: readonly Segment[], sizes: DataDependentSizes): Map<Node, string> {
  const out = new Map<Node, string>();
  if (sizes === 'none') return out;
  for (const s of segments) {
    if (s.kind !== 'engine') continue;
    const inside = new Set<Node>(s.nodes);
    for (const n of s.nodes) {
      const read = n.inputValues().find((v) => dataDependent(v) && !inside.has(v.producer));
      if (read !== undefined) out.set(n, `it reads ${showValue(read)} from outside its engine segment, and a size that depends on tensor data cannot enter an engine`);
    }
    if (sizes !== 'inside') continue;
    for (const v of s.outputs) {
      if (dataDependent(v) && !out.has(v.producer)) out.set(v.producer, `${showValue(v)} leaves its engine segment, and this backend holds a size that depends on tensor data only inside an engine`);
    }
  }
  return out;
}

/**
 * `calls` (a topological order) with each node that makes a string tensor, sequence or optional
 * moved down to just before the first node that reads what it makes (its chain with it): such a
 * value is the interpreter's alone, so its producer and readers, all fallback nodes, must share
 * one fallback segment, and no engine segment may run between them. Still a topological order.
 */
export function sinkNonTensorProducers(calls: readonly Node[]): Node[] {
  const makesOther = (n: Node): boolean => n.outputs.some((v) => v.type.kind !== 'tensor' && v.type.kind !== 'symint');
  const deferred = new Set<Node>();
  const order: Node[] = [];
  const emit = (n: Node): void => {
    for (const v of n.inputValues()) {
      if (deferred.has(v.producer)) {
        deferred.delete(v.producer);
        emit(v.producer);
      }
    }
    order.push(n);
  };
  for (const n of calls) {
    if (makesOther(n)) deferred.add(n);
    else emit(n);
  }
  // What is left feeds only graph outputs: at the end, in its original order.
  for (const n of calls) {
    if (!deferred.has(n)) continue;
    deferred.delete(n);
    emit(n);
  }
  return order;
}

/**
 * The engine nodes that must move to fallback because they run between the producer of a string
 * tensor, sequence or optional and a later reader of it ({@link sinkNonTensorProducers} leaves
 * such a case where the value has readers on both sides of a converted node), each with why:
 * such a value never leaves the fallback segment it is made in.
 */
function nonTensorCrossings(segments: readonly Segment[]): Map<Node, string> {
  const out = new Map<Node, string>();
  for (const s of segments) {
    for (const v of s.outputs) {
      if (v.type.kind === 'tensor' || v.type.kind === 'symint') continue;
      const last = Math.max(...segments.filter((t) => t.nodes.some((n) => n.inputValues().includes(v))).map((t) => t.index));
      for (const t of segments.slice(s.index + 1, last)) {
        if (t.kind !== 'engine') continue;
        for (const n of t.nodes) out.set(n, `it runs between the node making %${v.name} (${formatType(v.type)}) and a node reading it, and such a value stays in the fallback segment it is made in`);
      }
    }
  }
  return out;
}

export function partition(graph: Graph, settings: PartitionSettings = {}): Partition {
  const minBlockSize = settings.requireFullCompilation ? 1 : (settings.minBlockSize ?? 5);
  const calls = sinkNonTensorProducers(graph.calls());
  const verdicts = new Map<Node, OpReport>();
  for (const node of calls) {
    const s = (settings.select ?? selectConverter)(node, settings);
    verdicts.set(node, {
      node: node.name,
      target: node.target,
      converted: s.ok,
      converter: s.ok ? s.converter.name : undefined,
      reasons: s.ok ? [] : s.reasons,
      segment: -1,
    });
  }
  const refuse = (refused: readonly Node[]): void => {
    if (refused.length === 0) return;
    const lines = refused.map((n) => `  - node ${n.name} (${n.target}): ${verdicts.get(n)!.reasons.join('; ')}`);
    throw new UnsupportedOpError(
      `requireFullCompilation is set, but ${refused.length} op(s) cannot be converted:\n${lines.join('\n')}`,
      { details: { ops: refused.map((n) => ({ node: n.name, target: n.target, reasons: verdicts.get(n)!.reasons })) } },
    );
  };
  if (settings.requireFullCompilation) refuse(calls.filter((n) => !verdicts.get(n)!.converted));
  let groups: Array<{ kind: SegmentKind; nodes: Node[] }>;
  let segments: Segment[];
  // Until nothing moves: a node moved to fallback for a data-dependent size can leave an
  // engine run shorter than minBlockSize, and a run moved to fallback can make a later node
  // read such a size from outside its engine.
  for (;;) {
    // Consecutive runs of one kind, in graph order.
    groups = [];
    for (const node of calls) {
      const kind: SegmentKind = verdicts.get(node)!.converted ? 'engine' : 'fallback';
      const last = groups[groups.length - 1];
      if (last && last.kind === kind) last.nodes.push(node);
      else groups.push({ kind, nodes: [node] });
    }
    // Small engine runs fall back; then neighbours of one kind merge.
    for (const g of groups) {
      if (g.kind === 'engine' && g.nodes.length < minBlockSize) {
        g.kind = 'fallback';
        for (const n of g.nodes) {
          const r = verdicts.get(n)!;
          r.converted = false;
          r.reasons = [`convertible (${r.converter}), but its engine block has ${g.nodes.length} op(s), fewer than minBlockSize ${minBlockSize}`];
          r.converter = undefined;
        }
      }
    }
    groups = groups.reduce<typeof groups>((acc, g) => {
      const last = acc[acc.length - 1];
      if (last && last.kind === g.kind) last.nodes.push(...g.nodes);
      else acc.push({ kind: g.kind, nodes: [...g.nodes] });
      return acc;
    }, []);
    segments = segmentBoundaries(graph, groups);
    const crossing = new Map([...dataDependentCrossings(segments, settings.dataDependentSizes ?? 'none'), ...nonTensorCrossings(segments)]);
    if (crossing.size === 0) break;
    for (const [n, why] of crossing) {
      const r = verdicts.get(n)!;
      r.converted = false;
      r.reasons = [`convertible (${r.converter}), but ${why}`];
      r.converter = undefined;
    }
    if (settings.requireFullCompilation) refuse([...crossing.keys()]);
  }
  for (const s of segments) for (const n of s.nodes) verdicts.get(n)!.segment = s.index;
  return {
    segments,
    report: {
      ops: calls.map((n) => verdicts.get(n)!),
      segments: segments.map((s) => ({
        index: s.index,
        kind: s.kind,
        ops: s.nodes.length,
        inputs: s.inputs.map((v) => v.name),
        outputs: s.outputs.map((v) => v.name),
      })),
    },
  };
}

