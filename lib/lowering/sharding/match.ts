/**
 * Finding the Llama-style blocks a tensor-parallel split applies to, by the shape of the
 * graph (never by layer names):
 *
 * - **attention**: an `aten.scaled_dot_product_attention` node whose query, key and value
 *   each come from one *projection* (an `aten.linear` with a constant 2-D weight) through
 *   head-preserving ops only (views, reshapes, permutes, casts, the repeat-kv expand, RoPE:
 *   `view_as_complex` × a replicated `freqs_cis`, or the rotate-half slice/cat/neg form), the
 *   three projections reading the same input; and whose output reaches one more projection
 *   (the output projection) through views, permutes and casts only, with no other reader.
 * - **SwiGLU MLP**: `aten.mul(act(gate(x)), up(x))` with `act` silu (or gelu), `gate` and
 *   `up` projections of the same input, whose product reaches one more projection (down)
 *   through views and casts only.
 *
 * q/k/v and gate/up become column-parallel, the output and down projections row-parallel.
 * A value is "replicated" when it does not depend on any projection's output (graph inputs
 * such as `freqs_cis`, constants, and what is computed from them only): the backward walk
 * from the attention inputs stops there.
 */
import { ShardingError } from '../../errors';
import { Value, type Graph, type Node } from '../../ir/graph';

/** Which projection of its block a column-parallel linear is. */
export type ColumnRole = 'q' | 'k' | 'v' | 'gate' | 'up';

/** A Llama-style block found in a graph. */
export interface MatchedBlock {
  kind: 'attention' | 'mlp';
  /** The layer's name for messages: the common prefix of its weights' names (`p_layers_0_attention`). */
  layer: string;
  /** The sdpa node (attention) or the gating mul (mlp). */
  anchor: Node;
  /** The column-parallel projections. */
  columns: Array<{ node: Node; role: ColumnRole }>;
  /** The row-parallel projection (o or down). */
  row: Node;
}

/** Ops that carry a head-sharded value from a projection to sdpa and on to the output projection. */
const VIEWS = new Set([
  'aten.view.default',
  'aten.reshape.default',
  'aten._unsafe_view.default',
  'aten.flatten.using_ints',
  'aten.unflatten.int',
  'aten.unsqueeze.default',
  'aten.squeeze.default',
  'aten.squeeze.dim',
  'aten.squeeze.dims',
  'aten.permute.default',
  'aten.transpose.int',
]);

/** Casts and copies: same values, same shape. */
export const CASTS: ReadonlySet<string> = new Set([
  'aten._to_copy.default',
  'aten.to.dtype',
  'aten.type_as.default',
  'aten.clone.default',
  'aten.contiguous.default',
  'aten.alias.default',
  'aten.detach.default',
]);

/** Further ops allowed between a projection and sdpa (RoPE, repeat-kv, per-head norms). */
const PREFIX_OPS = new Set([
  ...VIEWS,
  ...CASTS,
  'aten.expand.default',
  'aten.repeat_interleave.self_int',
  'aten.view_as_complex.default',
  'aten.view_as_real.default',
  'aten.mul.Tensor',
  'aten.add.Tensor',
  'aten.sub.Tensor',
  'aten.div.Tensor',
  'aten.mul.Scalar',
  'aten.div.Scalar',
  'aten.add.Scalar',
  'aten.neg.default',
  'aten.slice.Tensor',
  'aten.narrow.default',
  'aten.cat.default',
  'aten.pow.Tensor_Scalar',
  'aten.mean.dim',
  'aten.rsqrt.default',
]);

const ACTIVATIONS = new Set(['aten.silu.default', 'aten.gelu.default']);

/** A linear whose weight is a constant 2-D matrix (and bias, if any, a constant). */
export function isProjection(node: Node | undefined): boolean {
  if (node === undefined || node.kind !== 'call' || node.target !== 'aten.linear.default') return false;
  const w = node.args.weight;
  const b = node.args.bias;
  if (!(w instanceof Value) || w.producer.kind !== 'constant' || w.tensorType.shape.length !== 2) return false;
  return b === null || b === undefined || (b instanceof Value && b.producer.kind === 'constant');
}

/** The constant weight value of a projection. */
export function weightOf(linear: Node): Value {
  return linear.args.weight as Value;
}

/** The tensor values a node reads, in argument order. */
function tensorInputs(node: Node): Value[] {
  return node.inputValues().filter((v) => v.type.kind === 'tensor');
}

/** Values that depend on the output of some projection (everything else is replicated across ranks). */
function projectionDependents(graph: Graph): Set<Value> {
  const dependent = new Set<Value>();
  for (const node of graph.nodes) {
    if (node.kind !== 'call') continue;
    if (isProjection(node) || tensorInputs(node).some((v) => dependent.has(v))) for (const v of node.outputs) dependent.add(v);
  }
  return dependent;
}

/** Skips casts backwards. */
export function stripCasts(v: Value): Value {
  let cur = v;
  while (cur.producer.kind === 'call' && CASTS.has(cur.producer.target)) {
    const src = cur.producer.args.self;
    if (!(src instanceof Value)) break;
    cur = src;
  }
  return cur;
}

/**
 * The layer name of a block: the longest common prefix of its weights' names, cut back to a
 * separator (`p_layers_0_attention_wq_weight`, `..._wk_weight` → `p_layers_0_attention`).
 * When the row-parallel weight shares none (an ONNX importer's folded `transpose_46_folded`),
 * the column-parallel weights' prefix.
 */
function layerName(nodes: readonly Node[], fallback: string): string {
  const prefixOf = (names: readonly string[]): string => {
    let prefix = names[0] ?? '';
    for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
    if (names.some((n) => n.length > prefix.length)) {
      const cut = Math.max(prefix.lastIndexOf('_'), prefix.lastIndexOf('.'));
      prefix = cut > 0 ? prefix.slice(0, cut) : '';
    }
    return prefix.replace(/[._]+$/, '');
  };
  const names = nodes.map((n) => weightOf(n).name);
  return prefixOf(names) || (names.length > 2 ? prefixOf(names.slice(0, -1)) : '') || fallback;
}

class Matcher {
  private readonly dependent: Set<Value>;
  private readonly users = new Map<Value, Node[]>();

  constructor(private readonly graph: Graph) {
    this.dependent = projectionDependents(graph);
    for (const node of graph.nodes) {
      for (const v of node.inputValues()) {
        const list = this.users.get(v) ?? [];
        if (!list.includes(node)) list.push(node);
        this.users.set(v, list);
      }
    }
  }

  private usersOf(v: Value): Node[] {
    return this.users.get(v) ?? [];
  }

  /**
   * The projections a sdpa input comes from, walking back through PREFIX_OPS and stopping at
   * projections and at replicated values. Returns the node that stopped the walk otherwise.
   */
  private projectionsBehind(start: Value): { projections: Node[]; blocker?: Node } {
    const projections: Node[] = [];
    const seen = new Set<Value>();
    const stack = [start];
    while (stack.length > 0) {
      const v = stack.pop()!;
      if (seen.has(v)) continue;
      seen.add(v);
      const p = v.producer;
      if (isProjection(p)) {
        if (!projections.includes(p)) projections.push(p);
        continue;
      }
      if (!this.dependent.has(v)) continue;
      if (p.kind !== 'call' || !PREFIX_OPS.has(p.target)) return { projections, blocker: p };
      stack.push(...tensorInputs(p));
    }
    return { projections };
  }

  /** The projection a block output reaches through views and casts, each value read once. */
  private projectionAfter(start: Value): { row?: Node; blocker: string } {
    let v = start;
    for (;;) {
      const users = this.usersOf(v);
      const outputs = this.graph.outputs.includes(v);
      if (users.length !== 1 || outputs) {
        return { blocker: `%${v.name} is read by ${users.length} node(s)${outputs ? ' and is a graph output' : ''}, not by one projection` };
      }
      const user = users[0]!;
      if (isProjection(user) && user.args.input === v) return { row: user, blocker: '' };
      if (user.kind !== 'call' || !(VIEWS.has(user.target) || CASTS.has(user.target)) || user.args.self !== v) {
        return { blocker: `%${v.name} goes to node ${user.name} (${user.target}), which is not a view, cast or projection` };
      }
      v = user.outputs[0]!;
    }
  }

  attention(sdpa: Node): MatchedBlock {
    const roles = [
      ['q', 'query'],
      ['k', 'key'],
      ['v', 'value'],
    ] as const;
    const columns: MatchedBlock['columns'] = [];
    for (const [role, arg] of roles) {
      const { projections, blocker } = this.projectionsBehind(sdpa.args[arg] as Value);
      if (blocker !== undefined || projections.length !== 1) {
        const why =
          blocker !== undefined
            ? `it passes through node ${blocker.name} (${blocker.target}), which the sharding pass does not carry heads through`
            : projections.length === 0
              ? 'it does not come from a linear layer with a constant weight'
              : `it comes from ${projections.length} linear layers (${projections.map((p) => p.name).join(', ')}), not one`;
        throw new ShardingError(`attention at sdpa node "${sdpa.name}": cannot find its ${arg} projection: ${why}`, {
          details: { node: sdpa.name, argument: arg },
        });
      }
      columns.push({ node: projections[0]!, role });
    }
    const distinct = new Set(columns.map((c) => c.node));
    if (distinct.size !== 3) {
      throw new ShardingError(
        `attention at sdpa node "${sdpa.name}": query, key and value come from one fused projection (${columns[0]!.node.name}); fused QKV projections are not supported`,
        { details: { node: sdpa.name } },
      );
    }
    const input = columns[0]!.node.args.input;
    if (columns.some((c) => c.node.args.input !== input)) {
      throw new ShardingError(
        `attention at sdpa node "${sdpa.name}": its q/k/v projections (${columns.map((c) => c.node.name).join(', ')}) read different inputs`,
        { details: { node: sdpa.name } },
      );
    }
    const { row, blocker } = this.projectionAfter(sdpa.output);
    if (row === undefined) {
      throw new ShardingError(`attention at sdpa node "${sdpa.name}": cannot find its output projection: ${blocker}`, { details: { node: sdpa.name } });
    }
    const layer = layerName([...columns.map((c) => c.node), row], sdpa.name);
    return { kind: 'attention', layer, anchor: sdpa, columns, row };
  }

  /** A SwiGLU block gated by `mul`, or undefined when `mul` is not one. */
  mlp(mul: Node): MatchedBlock | undefined {
    const a = mul.args.self;
    const b = mul.args.other;
    if (!(a instanceof Value) || !(b instanceof Value)) return undefined;
    for (const [actSide, upSide] of [
      [a, b],
      [b, a],
    ] as const) {
      const act = stripCasts(actSide).producer;
      if (act.kind !== 'call' || !ACTIVATIONS.has(act.target)) continue;
      const gate = stripCasts(act.args.self as Value).producer;
      const up = stripCasts(upSide).producer;
      if (!isProjection(gate) || !isProjection(up) || gate === up || gate.args.input !== up.args.input) continue;
      const { row, blocker } = this.projectionAfter(mul.output);
      const layer = layerName(row ? [gate, up, row] : [gate, up], mul.name);
      if (row === undefined) {
        throw new ShardingError(`SwiGLU MLP "${layer}" (gating node "${mul.name}"): cannot find its down projection: ${blocker}`, {
          details: { layer, node: mul.name },
        });
      }
      return {
        kind: 'mlp',
        layer,
        anchor: mul,
        columns: [
          { node: gate, role: 'gate' },
          { node: up, role: 'up' },
        ],
        row,
      };
    }
    return undefined;
  }
}

/**
 * Every attention and SwiGLU block of `graph`, in graph order.
 *
 * @throws {ShardingError} `E_SHARDING`: an sdpa node or SwiGLU gate whose projections cannot
 *   be found (the message names the node and what stopped the search), a linear layer
 *   claimed by two blocks, or a graph with no block at all (naming its linear layers).
 */
export function findBlocks(graph: Graph): MatchedBlock[] {
  const m = new Matcher(graph);
  const blocks: MatchedBlock[] = [];
  for (const node of graph.nodes) {
    if (node.kind !== 'call') continue;
    if (node.target === 'aten.scaled_dot_product_attention.default') blocks.push(m.attention(node));
    else if (node.target === 'aten.mul.Tensor') {
      const block = m.mlp(node);
      if (block) blocks.push(block);
    }
  }
  const owner = new Map<Node, MatchedBlock>();
  for (const block of blocks) {
    for (const linear of [...block.columns.map((c) => c.node), block.row]) {
      const other = owner.get(linear);
      if (other !== undefined && other !== block) {
        throw new ShardingError(`linear layer "${linear.name}" belongs to two blocks ("${other.layer}" and "${block.layer}"); it cannot be split both ways`, {
          details: { node: linear.name },
        });
      }
      owner.set(linear, block);
    }
  }
  if (blocks.length === 0) {
    const linears = graph.calls().filter((n) => n.target === 'aten.linear.default' || n.target === 'aten.matmul.default' || n.target === 'aten.addmm.default');
    const named = linears.slice(0, 6).map((n) => `"${n.name}"${isProjection(n) ? ` (weight ${weightOf(n).name})` : ''}`);
    const which = linears.length === 0 ? 'it has no linear layer at all' : `its linear layers ${named.join(', ')}${linears.length > 6 ? ` and ${linears.length - 6} more` : ''} are in no such block`;
    throw new ShardingError(
      `graph "${graph.name}" has no Llama-style block to split for tensor parallelism (looked for scaled_dot_product_attention fed by q/k/v linear projections, ` +
        `and SwiGLU MLPs silu(gate(x)) * up(x) → down): ${which}`,
      { details: { graph: graph.name, linears: linears.map((n) => n.name) } },
    );
  }
  return blocks;
}
