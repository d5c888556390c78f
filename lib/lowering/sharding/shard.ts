/**
 * The tensor-parallel sharding pass: one Graph per rank from one model graph.
 *
 * For every block lib/lowering/sharding/match.ts finds, rank r of n keeps:
 * - its share of the query heads (H/n, a contiguous block), and of the key/value heads:
 *   KV/n when n divides them, else (n a multiple of KV, as vLLM and TensorRT-LLM do) the one
 *   key/value head its query heads use, replicated on n/KV ranks;
 * - for a SwiGLU MLP, I/n of the hidden columns.
 * Column-parallel projections (q, k, v, gate, up) keep their output rows (views of the
 * original weights); row-parallel ones (o, down) their input columns (copies), followed by
 * `trt.all_reduce(sum)` (and their bias, if any, added once after it). Views, reshapes and
 * expands between them get their head counts divided (lib/lowering/sharding/rules.ts).
 * Everything outside the blocks (embeddings, norms, residual adds, the LM head) and every
 * graph input (`freqs_cis` included) is the same on every rank: replicated, weights shared.
 */
import { BadModelError, InternalError, InvalidArgumentError, ShardingError, TensorRTNodeError } from '../../errors';
import { call } from '../../ir/builder';
import '../../ir/ops';
import { ALL_REDUCE } from '../../ir/ops/collective';
import { Graph, Value, type Arg, type Node, type TensorType } from '../../ir/graph';
import { verifyGraph } from '../../ir/verify';
import type { Tensor } from '../../ir/tensor';
import { canonicalizeOnnxForms } from '../exported-forms';
import { findBlocks, weightOf, type ColumnRole, type MatchedBlock } from './match';
import { RULES, ruleError, type GroupSlice, type RankBlock, type RuleContext, type Shard } from './rules';
import { columnSliceCopy, leadingSliceView, type WeightLayout } from './weights';

/** How a block's heads (or columns) are divided. */
export interface BlockSharding {
  kind: 'attention' | 'mlp';
  /** The layer's name (the common prefix of its weights' names). */
  layer: string;
  /** The sdpa node or the SwiGLU gating mul. */
  anchor: string;
  /** Column-parallel projections: node, role and weight. */
  columns: Array<{ node: string; role: ColumnRole; weight: string }>;
  /** The row-parallel projection, followed by an all-reduce. */
  row: { node: string; weight: string };
  /** Attention: query heads, key/value heads, and whether key/value heads are divided or replicated. */
  heads?: number;
  kvHeads?: number;
  kvMode?: 'divide' | 'replicate';
  /** MLP: hidden columns. */
  hidden?: number;
}

/** One sharded weight of one rank, and how it relates to the original. */
export interface ShardedWeight {
  rank: number;
  /** The constant's name (the same in the rank graph as in the model). */
  name: string;
  /** The projection that reads it. */
  node: string;
  /** `view`: shares the original's memory; `copy`: new memory holding only this rank's part. */
  layout: WeightLayout;
  /** 0: output rows (column-parallel); 1: input columns (row-parallel). */
  axis: 0 | 1;
  start: number;
  end: number;
  original: Tensor;
  shard: Tensor;
}

/** The result of {@link shardGraph}. */
export interface ShardedGraph {
  /** The number of ranks. */
  n: number;
  /** One graph per rank: same inputs and outputs as the model, each rank's weights. */
  ranks: Graph[];
  blocks: BlockSharding[];
  /** Every sharded weight of every rank (other constants are the original tensors, shared). */
  weights: ShardedWeight[];
}

interface BlockPlan {
  block: MatchedBlock;
  info: BlockSharding;
  slices(rank: number): RankBlock['groups'];
}

const GROUP_OF: Record<ColumnRole, GroupSlice['name']> = { q: 'q', k: 'kv', v: 'kv', gate: 'ffn', up: 'ffn' };

function lastDim(v: Value, what: string, block: MatchedBlock): number {
  const d = v.tensorType.shape[v.tensorType.shape.length - 1];
  if (typeof d !== 'number') throw new ShardingError(`${block.kind} layer "${block.layer}": the ${what} head size is symbolic`, { details: { layer: block.layer } });
  return d;
}

function even(name: GroupSlice['name'], global: number, n: number, r: number): GroupSlice {
  return { name, global, local: global / n, offset: (r * global) / n };
}

function planBlock(block: MatchedBlock, n: number): BlockPlan {
  const rows = (role: ColumnRole): number => weightOf(block.columns.find((c) => c.role === role)!.node).tensorType.shape[0] as number;
  const base = {
    kind: block.kind,
    layer: block.layer,
    anchor: block.anchor.name,
    columns: block.columns.map((c) => ({ node: c.node.name, role: c.role, weight: weightOf(c.node).name })),
    row: { node: block.row.name, weight: weightOf(block.row).name },
  };
  const fail = (message: string, details: Record<string, unknown>): never => {
    throw new ShardingError(`cannot split ${block.kind === 'attention' ? 'attention' : 'MLP'} layer "${block.layer}" (node "${block.anchor.name}") ${n} ways: ${message}`, {
      details: { layer: block.layer, node: block.anchor.name, n, ...details },
    });
  };
  if (block.kind === 'mlp') {
    const hidden = rows('gate');
    if (rows('up') !== hidden) fail(`its gate and up projections have ${hidden} and ${rows('up')} outputs`, {});
    if (hidden % n !== 0) fail(`its ${hidden} hidden columns do not divide by ${n}`, { hidden });
    return { block, info: { ...base, hidden }, slices: (r) => ({ ffn: even('ffn', hidden, n, r) }) };
  }
  const sdpa = block.anchor;
  const dq = lastDim(sdpa.args.query as Value, 'query', block);
  const dk = lastDim(sdpa.args.key as Value, 'key', block);
  const dv = lastDim(sdpa.args.value as Value, 'value', block);
  const heads = rows('q') / dq;
  const kvHeads = rows('k') / dk;
  if (!Number.isInteger(heads) || !Number.isInteger(kvHeads) || rows('v') / dv !== kvHeads) {
    fail(`its projections (${rows('q')}, ${rows('k')}, ${rows('v')} outputs) are not whole heads of ${dq}, ${dk}, ${dv}`, {});
  }
  if (heads % kvHeads !== 0) fail(`its ${heads} query heads are not a multiple of its ${kvHeads} key/value heads`, { heads, kvHeads });
  if (heads % n !== 0) fail(`its ${heads} query heads do not divide by ${n}`, { heads, kvHeads });
  let kvMode: 'divide' | 'replicate';
  if (kvHeads % n === 0) kvMode = 'divide';
  else if (n % kvHeads === 0) kvMode = 'replicate';
  else {
    return fail(`its ${kvHeads} key/value heads do not divide by ${n}, and ${n} is not a multiple of ${kvHeads} (as replicating each key/value head on n/${kvHeads} ranks needs)`, {
      heads,
      kvHeads,
    });
  }
  return {
    block,
    info: { ...base, heads, kvHeads, kvMode },
    slices: (r) => ({
      q: even('q', heads, n, r),
      kv: kvMode === 'divide' ? even('kv', kvHeads, n, r) : { name: 'kv', global: kvHeads, local: 1, offset: Math.floor((r * kvHeads) / n) },
    }),
  };
}

/** Builds one rank's graph. */
class RankBuilder {
  readonly graph: Graph;
  private readonly map = new Map<Value, Value>();
  private readonly shards = new Map<Value, Shard>();
  readonly weights: ShardedWeight[] = [];

  constructor(
    private readonly model: Graph,
    private readonly rank: number,
    private readonly n: number,
    private readonly columns: Map<Node, { owner: RankBlock; group: GroupSlice }>,
    private readonly rows: Map<Node, RankBlock>,
    private readonly shardedOnly: Set<Value>,
  ) {
    this.graph = new Graph(`${model.name}_rank${rank}`);
    for (const [s, range] of model.symbols) this.graph.symbols.set(s, { ...range });
  }

  private get(v: Value): Value {
    const m = this.map.get(v);
    if (m === undefined) throw new InternalError(`sharding, rank ${this.rank}: %${v.name} is read before it is defined`);
    return m;
  }

  private remap(a: Arg): Arg {
    if (a instanceof Value) return this.get(a);
    return Array.isArray(a) ? a.map((x) => this.remap(x)) : a;
  }

  private constant(name: string, tensor: Tensor, origin: Node['origin']): Value {
    return this.graph.addConstant(name, tensor, origin);
  }

  private emit(node: Node, args: Record<string, Arg>, layer: string | undefined, name = node.name, target = node.target): Node {
    try {
      return call(this.graph, target, args, { name, meta: { ...node.meta } });
    } catch (error) {
      if (layer !== undefined && error instanceof BadModelError) throw ruleError(node, layer, this.n, error.message);
      throw error;
    }
  }

  build(): Graph {
    for (const node of this.model.nodes) {
      if (node.kind === 'placeholder') this.map.set(node.output, this.graph.addInput(node.output.name, node.output.type));
      else if (node.kind === 'constant') {
        if (!this.shardedOnly.has(node.output)) this.map.set(node.output, this.constant(node.name, node.tensor!, node.origin));
      } else if (this.columns.has(node)) this.column(node);
      else if (this.rows.has(node)) this.row(node);
      else this.other(node);
    }
    this.model.outputs.forEach((v, i) => {
      const s = this.shards.get(v);
      if (s !== undefined) {
        throw new ShardingError(`graph output ${this.model.outputNames[i]} (%${v.name}) is split across ranks (it comes from inside layer "${s.owner.block.layer}")`, {
          details: { output: this.model.outputNames[i], layer: s.owner.block.layer },
        });
      }
    });
    this.graph.setOutputs(
      this.model.outputs.map((v) => this.get(v)),
      this.model.outputNames,
    );
    this.graph.eliminateDeadCode();
    verifyGraph(this.graph, `rank ${this.rank} graph`);
    return this.graph;
  }

  private shardWeight(linear: Node, key: 'weight' | 'bias', axis: 0 | 1, group: GroupSlice): Value | null {
    const v = linear.args[key];
    if (!(v instanceof Value)) return null;
    const original = v.producer.tensor!;
    const extent = original.shape[axis]!;
    const unit = extent / group.global;
    if (!Number.isInteger(unit)) {
      throw ruleError(linear, this.columns.get(linear)?.owner.block.layer ?? this.rows.get(linear)!.block.layer, this.n, `its ${key} ${v.name} has ${extent} ${axis === 0 ? 'rows' : 'columns'}, which do not split evenly over its ${group.global} ${group.name === 'ffn' ? 'columns' : 'heads'}`);
    }
    const start = group.offset * unit;
    const end = (group.offset + group.local) * unit;
    const shard = axis === 0 ? leadingSliceView(original, start, end) : columnSliceCopy(original, start, end);
    this.weights.push({ rank: this.rank, name: v.name, node: linear.name, layout: axis === 0 ? 'view' : 'copy', axis, start, end, original, shard });
    return this.constant(v.name, shard, v.producer.origin);
  }

  private column(node: Node): void {
    const { owner, group } = this.columns.get(node)!;
    const input = node.args.input as Value;
    if (this.shards.has(input)) throw ruleError(node, owner.block.layer, this.n, 'its input is already split across ranks');
    const weight = this.shardWeight(node, 'weight', 0, group)!;
    const bias = this.shardWeight(node, 'bias', 0, group);
    const out = this.emit(node, { input: this.get(input), weight, bias }, owner.block.layer);
    out.meta.tensorParallel = { rank: this.rank, of: this.n, split: 'column', layer: owner.block.layer };
    this.map.set(node.output, out.output);
    this.shards.set(node.output, { axis: node.output.tensorType.shape.length - 1, group, owner });
  }

  private row(node: Node): void {
    const owner = this.rows.get(node)!;
    const input = node.args.input as Value;
    const s = this.shards.get(input);
    const rank = input.tensorType.shape.length;
    if (s === undefined || s.owner !== owner || s.axis !== rank - 1) {
      throw ruleError(node, owner.block.layer, this.n, `its input is not split along its features by the layer's ${owner.block.kind === 'attention' ? 'heads' : 'columns'}`);
    }
    const weight = this.shardWeight(node, 'weight', 1, s.group)!;
    const partial = this.emit(node, { input: this.get(input), weight, bias: null }, owner.block.layer);
    partial.meta.tensorParallel = { rank: this.rank, of: this.n, split: 'row', layer: owner.block.layer };
    const reduced = this.emit(node, { self: partial.output, op: 'sum' }, owner.block.layer, `${node.name}_all_reduce`, ALL_REDUCE);
    reduced.meta.tensorParallel = { rank: this.rank, of: this.n, layer: owner.block.layer };
    let out = reduced.output;
    const bias = node.args.bias;
    if (bias instanceof Value) out = this.emit(node, { self: out, other: this.get(bias), alpha: 1 }, owner.block.layer, `${node.name}_bias`, 'aten.add.Tensor').output;
    this.map.set(node.output, out);
  }

  private other(node: Node): void {
    const args: Record<string, Arg> = {};
    for (const [k, a] of Object.entries(node.args)) args[k] = this.remap(a);
    const sharded = node.inputValues().map((v) => this.shards.get(v)).find((s) => s !== undefined);
    if (sharded === undefined) {
      const copy = this.emit(node, args, undefined);
      node.outputs.forEach((v, i) => this.map.set(v, copy.outputs[i]!));
      return;
    }
    const layer = sharded.owner.block.layer;
    const rule = RULES.get(node.target);
    if (rule === undefined) {
      throw ruleError(node, layer, this.n, `it reads a head-sharded value, and the sharding pass does not know how ${node.target} splits`);
    }
    const context: RuleContext = {
      node,
      args,
      shardOf: (v) => this.shards.get(v),
      localType: (v): TensorType => this.get(v).tensorType,
      fail: (message) => {
        throw ruleError(node, layer, this.n, message);
      },
    };
    const outShards = rule(context);
    const copy = this.emit(node, args, layer);
    node.outputs.forEach((v, i) => {
      this.map.set(v, copy.outputs[i]!);
      const s = outShards[i];
      if (s) this.shards.set(v, s);
    });
  }
}

/**
 * Splits `model` into `n` tensor-parallel rank graphs (see the top of this file). The model
 * graph is not changed; the rank graphs share its replicated constants (the same Tensor
 * objects) and view its column-parallel weights.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: n is not an integer >= 1.
 * @throws {ShardingError} `E_SHARDING`: no recognizable block, heads (or key/value heads, or
 *   MLP columns) that do not divide by n, or an op inside a block the pass cannot split;
 *   the message names the layer and the node.
 */
export function shardGraph(model: Graph, n: number): ShardedGraph {
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`tensorParallel must be an integer >= 1, got ${JSON.stringify(n)}`);
  // ONNX exports write linear layers as MatMul and attention as MatMul/Softmax: first into the forms the matcher knows.
  const graph = canonicalizeOnnxForms(model);
  const plans = findBlocks(graph).map((b) => planBlock(b, n));
  // Constants read only as weights of split projections (or biases of column-parallel ones):
  // each rank adds its own slice instead. A row-parallel bias is added whole, after the all-reduce.
  const columnNodes = new Set(plans.flatMap((p) => p.block.columns.map((c) => c.node)));
  const rowNodes = new Set(plans.map((p) => p.block.row));
  const sliced = (u: Node, v: Value): boolean => (columnNodes.has(u) && (u.args.weight === v || u.args.bias === v)) || (rowNodes.has(u) && u.args.weight === v);
  const readers = new Map<Value, Node[]>();
  for (const node of graph.nodes) for (const v of node.inputValues()) readers.set(v, [...(readers.get(v) ?? []), node]);
  const shardedOnly = new Set<Value>();
  for (const node of graph.nodes) {
    if (node.kind !== 'constant') continue;
    const users = readers.get(node.output) ?? [];
    if (users.length > 0 && !graph.outputs.includes(node.output) && users.every((u) => sliced(u, node.output))) shardedOnly.add(node.output);
  }
  const ranks: Graph[] = [];
  const weights: ShardedWeight[] = [];
  for (let r = 0; r < n; r++) {
    const columns = new Map<Node, { owner: RankBlock; group: GroupSlice }>();
    const rows = new Map<Node, RankBlock>();
    for (const plan of plans) {
      const owner: RankBlock = { block: plan.block, rank: r, groups: plan.slices(r) };
      for (const c of plan.block.columns) columns.set(c.node, { owner, group: owner.groups[GROUP_OF[c.role]]! });
      rows.set(plan.block.row, owner);
    }
    const builder = new RankBuilder(graph, r, n, columns, rows, shardedOnly);
    try {
      ranks.push(builder.build());
    } catch (error) {
      if (error instanceof TensorRTNodeError) throw error;
      throw new InternalError(`sharding, rank ${r}: ${(error as Error).message}`, { cause: error });
    }
    weights.push(...builder.weights);
  }
  return { n, ranks, blocks: plans.map((p) => p.info), weights };
}
