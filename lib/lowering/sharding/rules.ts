/**
 * How each op carries a head-sharded value inside a tensor-parallel block: which axis of its
 * output is sharded, and which of its size arguments change when every rank keeps only its
 * heads (a view to `[1, s, 4, 16]` becomes `[1, s, 4/n, 16]`). Everything not listed here
 * is refused with an E_SHARDING error naming the node, rather than split wrongly.
 *
 * The rules read the *global* (unsharded) types of the original node and the *local* types
 * of the values already rebuilt for the rank, and return the sharded axis of each output.
 */
import { ShardingError } from '../../errors';
import { Value, type Arg, type Node, type TensorType } from '../../ir/graph';
import { dimEquals, formatShape, type Dim } from '../../ir/symbolic';
import { CASTS, type MatchedBlock } from './match';

/** The share of one kind of heads (or MLP columns) a rank keeps. */
export interface GroupSlice {
  /** `q`: query heads (and everything after sdpa); `kv`: key/value heads; `ffn`: MLP hidden columns. */
  name: 'q' | 'kv' | 'ffn';
  /** Heads (or columns) in the whole model. */
  global: number;
  /** Heads (or columns) this rank keeps. */
  local: number;
  /** The first one it keeps. */
  offset: number;
}

/** One block's slices for one rank. */
export interface RankBlock {
  block: MatchedBlock;
  rank: number;
  groups: Partial<Record<GroupSlice['name'], GroupSlice>>;
}

/** A value split across ranks along `axis`, in units of `group`. */
export interface Shard {
  axis: number;
  group: GroupSlice;
  owner: RankBlock;
}

/** What a rule sees of a node being rebuilt for one rank. */
export interface RuleContext {
  readonly node: Node;
  /** The node's arguments, already remapped to the rank graph; rules may replace entries. */
  readonly args: Record<string, Arg>;
  /** The shard of an original value, if it is sharded. */
  shardOf(v: Value): Shard | undefined;
  /** The type an original value has in the rank graph. */
  localType(v: Value): TensorType;
  /** Throws E_SHARDING naming the node and its layer. */
  fail(message: string): never;
}

export type Rule = (c: RuleContext) => Array<Shard | null>;

const norm = (axis: number, rank: number): number => (axis < 0 ? axis + rank : axis);

function tensorArg(c: RuleContext, name: string): Value {
  const a = c.node.args[name];
  if (!(a instanceof Value) || a.type.kind !== 'tensor') c.fail(`argument ${name} is not a tensor`);
  return a;
}

function requireShard(c: RuleContext, name: string): Shard {
  const s = c.shardOf(tensorArg(c, name));
  if (s === undefined) c.fail(`its ${name} is not head-sharded while another input is`);
  return s;
}

/** Shapes of the original node's first output and of its `self` input. */
function globalShape(v: Value): readonly Dim[] {
  return v.tensorType.shape;
}

/** Only `self` is data; other sharded tensor arguments are refused (type_as's `other` only gives a dtype). */
const unary: Rule = (c: RuleContext) => {
  const self = c.node.args.self;
  for (const [name, a] of Object.entries(c.node.args)) {
    if (name === 'self' || !(a instanceof Value) || c.shardOf(a) === undefined) continue;
    if (!(c.node.target === 'aten.type_as.default' && name === 'other')) c.fail(`its argument ${name} is head-sharded`);
  }
  const s = self instanceof Value ? c.shardOf(self) : undefined;
  return c.node.outputs.map(() => s ?? null);
};

/** Broadcasting elementwise ops: sharded inputs must agree on the axis; replicated ones must broadcast along it. */
const pointwise: Rule = (c: RuleContext) => {
  const outRank = c.node.outputs[0]!.tensorType.shape.length;
  const operands: Array<[string, Value]> = [];
  for (const [name, a] of Object.entries(c.node.args)) if (a instanceof Value && a.type.kind === 'tensor') operands.push([name, a]);
  let found: Shard | undefined;
  let axis = -1;
  for (const [name, v] of operands) {
    const s = c.shardOf(v);
    if (s === undefined) continue;
    const aligned = outRank - v.tensorType.shape.length + s.axis;
    if (found === undefined) {
      found = s;
      axis = aligned;
    } else if (aligned !== axis || s.group !== found.group) {
      c.fail(`its inputs are split along different axes or head groups (${name})`);
    }
  }
  for (const [name, v] of operands) {
    if (c.shardOf(v) !== undefined) continue;
    const shape = globalShape(v);
    const idx = axis - (outRank - shape.length);
    if (idx >= 0 && shape[idx] !== 1) {
      c.fail(`its replicated input ${name} (%${v.name}, ${formatShape(shape)}) spans the head-sharded axis ${axis} instead of broadcasting along it`);
    }
  }
  return [{ ...found!, axis }];
};

/** Which input axes become which output axes in a reshape (by products; symbolic dims must match one to one). */
export function reshapeGroups(inShape: readonly Dim[], outShape: readonly Dim[]): Array<{ ins: number[]; outs: number[] }> | null {
  const groups: Array<{ ins: number[]; outs: number[] }> = [];
  let i = 0;
  let j = 0;
  while (i < inShape.length || j < outShape.length) {
    if (i < inShape.length && j < outShape.length && dimEquals(inShape[i]!, outShape[j]!)) {
      groups.push({ ins: [i++], outs: [j++] });
      continue;
    }
    if (j < outShape.length && outShape[j] === 1) {
      groups.push({ ins: [], outs: [j++] });
      continue;
    }
    if (i < inShape.length && inShape[i] === 1) {
      groups.push({ ins: [i++], outs: [] });
      continue;
    }
    if (i >= inShape.length || j >= outShape.length) return null;
    let pi = inShape[i];
    let pj = outShape[j];
    if (typeof pi !== 'number' || typeof pj !== 'number') return null;
    const ins = [i++];
    const outs = [j++];
    while (pi !== pj) {
      if (pi < pj) {
        const d = inShape[i];
        if (typeof d !== 'number') return null;
        pi *= d;
        ins.push(i++);
      } else {
        const d = outShape[j];
        if (typeof d !== 'number') return null;
        pj *= d;
        outs.push(j++);
      }
    }
    groups.push({ ins, outs });
  }
  return groups;
}

/**
 * The sharded output axis of a reshape and its local extent. The sharded input axis must be
 * the outermost (non-1) axis of the dims merged with it, so that each rank's part stays one
 * contiguous block, and it lands on the outermost non-1 axis of its output group.
 */
function reshapeShard(c: RuleContext, s: Shard, inGlobal: readonly Dim[], inLocal: readonly Dim[], outGlobal: readonly Dim[]): { axis: number; extent: number } {
  const groups = reshapeGroups(inGlobal, outGlobal);
  const group = groups?.find((g) => g.ins.includes(s.axis));
  if (group === undefined) c.fail(`cannot follow the head-sharded axis ${s.axis} of ${formatShape(inGlobal)} into ${formatShape(outGlobal)}`);
  for (const k of group.ins) {
    if (k === s.axis) break;
    if (inGlobal[k] !== 1) c.fail(`it merges axis ${k} (${formatShape([inGlobal[k]!])}) outside the head-sharded axis ${s.axis}, which would interleave the ranks' heads`);
  }
  const axis = group.outs.find((k) => outGlobal[k] !== 1) ?? group.outs[0];
  if (axis === undefined) c.fail(`the head-sharded axis ${s.axis} of ${formatShape(inGlobal)} disappears in ${formatShape(outGlobal)}`);
  let localProd = 1;
  let globalProd = 1;
  for (const k of group.ins) {
    const l = inLocal[k];
    const g = inGlobal[k];
    if (typeof l !== 'number' || typeof g !== 'number') c.fail(`the head-sharded axis is merged with a symbolic dim`);
    localProd *= l;
    globalProd *= g;
  }
  const out = outGlobal[axis];
  if (typeof out !== 'number') c.fail(`the head-sharded axis ${axis} of ${formatShape(outGlobal)} is symbolic`);
  const extent = (out * localProd) / globalProd;
  if (!Number.isInteger(extent)) c.fail(`axis ${axis} (${out}) of ${formatShape(outGlobal)} does not split into this rank's ${localProd} of ${globalProd}`);
  return { axis, extent };
}

/** Replaces entry `index` of a size list with the local extent (a -1 stays -1). */
function setSize(c: RuleContext, key: string, index: number, extent: number): void {
  const list = [...(c.args[key] as readonly Arg[])];
  const entry = list[index];
  if (entry === -1) return;
  if (typeof entry !== 'number') c.fail(`its ${key}[${index}], the head count, is symbolic (%${(entry as Value).name})`);
  list[index] = extent;
  c.args[key] = list;
}

const view: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const key = c.node.target === 'aten.reshape.default' ? 'shape' : 'size';
  const { axis, extent } = reshapeShard(c, s, globalShape(self), c.localType(self).shape, c.node.outputs[0]!.tensorType.shape);
  setSize(c, key, axis, extent);
  return [{ ...s, axis }];
};

/** flatten / unsqueeze / squeeze: no sizes to change, only the axis moves. */
const reshapeLike: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const local = c.localType(self).shape;
  if (c.node.target === 'aten.squeeze.default' && local[s.axis] === 1) c.fail('it squeezes every size-1 dim, and this rank keeps a single head');
  const { axis } = reshapeShard(c, s, globalShape(self), local, c.node.outputs[0]!.tensorType.shape);
  return [{ ...s, axis }];
};

const unflatten: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const dim = norm(c.node.args.dim as number, globalShape(self).length);
  const { axis, extent } = reshapeShard(c, s, globalShape(self), c.localType(self).shape, c.node.outputs[0]!.tensorType.shape);
  if (axis >= dim && axis < dim + (c.args.sizes as readonly Arg[]).length) setSize(c, 'sizes', axis - dim, extent);
  return [{ ...s, axis }];
};

const permute: Rule = (c: RuleContext) => {
  const s = requireShard(c, 'self');
  const rank = globalShape(tensorArg(c, 'self')).length;
  const dims = (c.node.args.dims as number[]).map((d) => norm(d, rank));
  return [{ ...s, axis: dims.indexOf(s.axis) }];
};

const transpose: Rule = (c: RuleContext) => {
  const s = requireShard(c, 'self');
  const rank = globalShape(tensorArg(c, 'self')).length;
  if (c.node.target === 'aten.t.default') return [{ ...s, axis: rank < 2 ? s.axis : 1 - s.axis }];
  const d0 = norm(c.node.args.dim0 as number, rank);
  const d1 = norm(c.node.args.dim1 as number, rank);
  return [{ ...s, axis: s.axis === d0 ? d1 : s.axis === d1 ? d0 : s.axis }];
};

/** The repeat count of GQA's repeat-kv on this rank: query heads kept per key/value head kept. */
function repeatKv(s: Shard, count: Arg): number | undefined {
  const q = s.owner.groups.q;
  if (s.group.name !== 'kv' || q === undefined || count !== q.global / s.group.global) return undefined;
  return q.local / s.group.local;
}

const expand: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const inGlobal = globalShape(self);
  const local = c.localType(self).shape;
  const outRank = c.node.outputs[0]!.tensorType.shape.length;
  const axis = s.axis + outRank - inGlobal.length;
  const extent = local[s.axis];
  if (typeof extent !== 'number') c.fail('the head-sharded axis is symbolic');
  setSize(c, 'size', axis, extent);
  // repeat-kv: [.., kv, 1, d] expanded to [.., kv, n_rep, d] and merged into the query heads.
  const sizes = c.args.size as Arg[];
  if (axis + 1 < outRank && inGlobal[s.axis + 1] === 1) {
    const rep = repeatKv(s, sizes[axis + 1]!);
    if (rep !== undefined) setSize(c, 'size', axis + 1, rep);
  }
  return [{ ...s, axis }];
};

const repeatInterleave: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const dim = c.node.args.dim;
  if (typeof dim !== 'number') c.fail('it flattens the head-sharded tensor (no dim)');
  if (norm(dim, globalShape(self).length) === s.axis) {
    const rep = repeatKv(s, c.node.args.repeats!);
    if (rep !== undefined) c.args.repeats = rep;
    c.args.output_size = null;
  }
  return [s];
};

const viewAsComplex: Rule = (c: RuleContext) => {
  const s = requireShard(c, 'self');
  if (s.axis === globalShape(tensorArg(c, 'self')).length - 1) c.fail('the head-sharded axis is the (real, imaginary) axis');
  return [s];
};

/** Ops along one `dim` (softmax, slice...): fine as long as it is not the sharded axis. */
function alongDim(shift: 'keep' | 'drop'): Rule {
  return (c: RuleContext) => {
    const self = tensorArg(c, 'self');
    const s = requireShard(c, 'self');
    const rank = globalShape(self).length;
    const dim = norm(c.node.args.dim as number, rank);
    if (dim === s.axis) c.fail(`it works along the head-sharded axis ${dim}`);
    const axis = shift === 'drop' && dim < s.axis ? s.axis - 1 : s.axis;
    return c.node.outputs.map(() => ({ ...s, axis }));
  };
}

const reduce: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  const rank = globalShape(self).length;
  const raw = c.node.args.dim;
  if (raw === null || raw === undefined || (Array.isArray(raw) && raw.length === 0)) c.fail('it reduces over every axis, the head-sharded one too');
  const dims = (Array.isArray(raw) ? (raw as number[]) : [raw as number]).map((d) => norm(d, rank));
  if (dims.includes(s.axis)) c.fail(`it reduces over the head-sharded axis ${s.axis}`);
  const axis = c.node.args.keepdim === true ? s.axis : s.axis - dims.filter((d) => d < s.axis).length;
  return [{ ...s, axis }];
};

const cat: Rule = (c: RuleContext) => {
  const tensors = c.node.args.tensors as Value[];
  const shards = tensors.map((t) => c.shardOf(t));
  const first = shards[0];
  if (first === undefined || shards.some((s) => s === undefined || s.axis !== first.axis || s.group !== first.group)) {
    c.fail('it concatenates head-sharded and replicated tensors (or tensors split differently)');
  }
  const dim = norm(c.node.args.dim as number, globalShape(tensors[0]!).length);
  if (dim === first.axis) c.fail(`it concatenates along the head-sharded axis ${dim}`);
  return [first];
};

const sdpa: Rule = (c: RuleContext) => {
  const q = requireShard(c, 'query');
  const k = requireShard(c, 'key');
  const v = requireShard(c, 'value');
  for (const [name, s] of [
    ['query', q],
    ['key', k],
    ['value', v],
  ] as const) {
    const rank = globalShape(tensorArg(c, name)).length;
    if (s.axis !== rank - 3) c.fail(`its ${name} is split along axis ${s.axis}, not the heads axis ${rank - 3}`);
  }
  const mask = c.node.args.attn_mask;
  if (mask instanceof Value) {
    if (c.shardOf(mask) !== undefined) c.fail('its attn_mask is head-sharded');
    const shape = globalShape(mask);
    const idx = shape.length - 3;
    if (idx >= 0 && shape[idx] !== 1) c.fail(`its attn_mask ${formatShape(shape)} has a per-head axis; only masks that broadcast over heads are supported`);
  }
  const outRank = c.node.outputs[0]!.tensorType.shape.length;
  return [{ ...q, axis: outRank - 3 }];
};

const symSize: Rule = (c: RuleContext) => {
  const self = tensorArg(c, 'self');
  const s = requireShard(c, 'self');
  if (norm(c.node.args.dim as number, globalShape(self).length) === s.axis) c.fail('it reads the head count at run time');
  return [null];
};

const UNARY = [
  ...CASTS,
  'aten.dropout.default',
  'aten.silu.default',
  'aten.gelu.default',
  'aten.relu.default',
  'aten.sigmoid.default',
  'aten.tanh.default',
  'aten.neg.default',
  'aten.exp.default',
  'aten.log.default',
  'aten.sqrt.default',
  'aten.rsqrt.default',
  'aten.abs.default',
  'aten.cos.default',
  'aten.sin.default',
  'aten.reciprocal.default',
  'aten.erf.default',
  'aten.softplus.default',
  'aten.leaky_relu.default',
  'aten.elu.default',
  'aten.hardtanh.default',
  'aten.hardswish.default',
  'aten.hardsigmoid.default',
  'aten.clamp.default',
  'aten.clamp_min.default',
  'aten.clamp_max.default',
  'aten.add.Scalar',
  'aten.sub.Scalar',
  'aten.mul.Scalar',
  'aten.div.Scalar',
  'aten.rsub.Scalar',
  'aten.pow.Tensor_Scalar',
  'aten.real.default',
  'aten.imag.default',
  'aten._conj.default',
  'aten.conj_physical.default',
];

const POINTWISE = [
  'aten.add.Tensor',
  'aten.sub.Tensor',
  'aten.mul.Tensor',
  'aten.div.Tensor',
  'aten.div.Tensor_mode',
  'aten.rsub.Tensor',
  'aten.maximum.default',
  'aten.minimum.default',
  'aten.pow.Tensor_Tensor',
  'aten.where.self',
  'aten.masked_fill.Scalar',
  'aten.masked_fill.Tensor',
];

/** The rule of every op the sharding pass carries heads through. */
export const RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ...UNARY.map((t): [string, Rule] => [t, unary]),
  ...POINTWISE.map((t): [string, Rule] => [t, pointwise]),
  ['aten.view.default', view],
  ['aten.reshape.default', view],
  ['aten._unsafe_view.default', view],
  ['aten.flatten.using_ints', reshapeLike],
  ['aten.unsqueeze.default', reshapeLike],
  ['aten.squeeze.default', reshapeLike],
  ['aten.squeeze.dim', reshapeLike],
  ['aten.squeeze.dims', reshapeLike],
  ['aten.unflatten.int', unflatten],
  ['aten.permute.default', permute],
  ['aten.transpose.int', transpose],
  ['aten.t.default', transpose],
  ['aten.expand.default', expand],
  ['aten.repeat_interleave.self_int', repeatInterleave],
  ['aten.view_as_complex.default', viewAsComplex],
  ['aten.view_as_real.default', (c: RuleContext) => [requireShard(c, 'self')]],
  ['aten.softmax.int', alongDim('keep')],
  ['aten._softmax.default', alongDim('keep')],
  ['aten.log_softmax.int', alongDim('keep')],
  ['aten._log_softmax.default', alongDim('keep')],
  ['aten.slice.Tensor', alongDim('keep')],
  ['aten.narrow.default', alongDim('keep')],
  ['aten.split.Tensor', alongDim('keep')],
  ['aten.split_with_sizes.default', alongDim('keep')],
  ['aten.chunk.default', alongDim('keep')],
  ['aten.select.int', alongDim('drop')],
  ['aten.unbind.int', alongDim('drop')],
  ['aten.mean.dim', reduce],
  ['aten.sum.dim_IntList', reduce],
  ['aten.amax.default', reduce],
  ['aten.amin.default', reduce],
  ['aten.cat.default', cat],
  ['aten.scaled_dot_product_attention.default', sdpa],
  ['aten.sym_size.int', symSize],
]);

/** For messages: `ShardingError` with the node and layer. */
export function ruleError(node: Node, layer: string, n: number, message: string): ShardingError {
  return new ShardingError(`cannot split layer "${layer}" ${n} ways at node ${node.name} (${node.target}): ${message}`, {
    details: { layer, node: node.name, op: node.target, n },
  });
}
