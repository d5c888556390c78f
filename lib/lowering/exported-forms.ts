/**
 * The forms exporters write for what PyTorch calls one op, rewritten into that op: attention
 * for every compile (`recognizeAttention`: converters then emit one attention layer, as for a
 * model that called SDPA), and, for tensor parallelism, the forms of Llama blocks the sharding
 * matcher (sharding/match.ts) recognizes, before it runs (`canonicalizeOnnxForms`). ONNX before
 * opset 23 has no attention op and no linear op, so an exported block is:
 *
 * - **projections**: `MatMul(x, W)` with `W` an initializer of shape `[in, out]` (the
 *   transposed `nn.Linear` weight), or `MatMul(x, Transpose(W))` with `W` `[out, in]`,
 *   optionally followed by `Add(·, b)` with a 1-D initializer `b` (q/k/v biases). Each becomes
 *   `aten.linear(x, W', b)`, `W'` being `[out, in]` (a transposed copy when the file stores
 *   `[in, out]`; `W` itself otherwise);
 * - **attention**: `MatMul(Softmax(MatMul(q, kᵀ) [* c | / c] [+ mask], axis=-1), v)`, where
 *   `kᵀ` swaps k's last two axes (one `Transpose(perm=[0,2,3,1])` from `[b, s, h, d]`, or
 *   two). It becomes `scaled_dot_product_attention(q, transpose(kᵀ, -2, -1), v, mask,
 *   scale=c | 1/c | 1)`, which is the same arithmetic;
 * - **SiLU**: `Mul(g, Sigmoid(g))` (the TorchScript exporter's silu) becomes `aten.silu(g)`.
 *
 * The graph is copied with these rewrites (the model is not changed); with none to make, it is
 * returned as it is. For tensor parallelism, a softmax that reads attention scores (a matmul of
 * two computed values) but is not in the form above is refused by name, with what stopped the
 * rewrite: splitting the projections around an attention the pass does not understand would
 * be wrong. `recognizeAttention` leaves such a softmax as it is.
 */
import { ShardingError, TensorRTNodeError } from '../errors';
import { call } from '../ir/builder';
import { Graph, Value, type Arg, type Node } from '../ir/graph';
import { formatShape } from '../ir/symbolic';
import { readNumbers } from '../kernels/access';
import { Tensor } from '../ir/tensor';
import { stripCasts } from './sharding/match';

const MATMUL = 'aten.matmul.default';
const SOFTMAX = new Set(['aten._softmax.default', 'aten.softmax.int']);

/** How one MatMul becomes a linear. */
interface LinearPlan {
  /** The constant as stored: `[in, out]` (transpose it) or `[out, in]` (use it). */
  weight: Value;
  transposed: boolean;
  bias: Value | null;
  /** The Add that the bias folds into, whose output the linear's becomes. */
  biasAdd?: Node;
}

/** How one MatMul(probabilities, v) becomes sdpa. */
interface AttentionPlan {
  q: Value;
  kT: Value;
  v: Value;
  mask: Value | null;
  scale: number;
}

/** `v` when it is a constant's value. */
const constantValue = (v: Arg | undefined): Value | undefined => (v instanceof Value && v.producer.kind === 'constant' ? v : undefined);
const isConstant = (v: Arg | undefined): boolean => constantValue(v) !== undefined;

/** The value of a constant holding one number, or undefined. */
function scalarConstant(v: Arg | undefined): number | undefined {
  if (typeof v === 'number') return v;
  const c = constantValue(v);
  if (c === undefined) return undefined;
  const t = c.producer.tensor!;
  return t.shape.reduce((a, b) => a * b, 1) === 1 ? readNumbers(t)[0] : undefined;
}

/** `[out, in]` from `[in, out]`. */
function transpose2d(t: Tensor): Tensor {
  const [rows, cols] = t.shape as [number, number];
  const src = t.data;
  const dst = new (src.constructor as new (n: number) => typeof src)(src.length);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) dst[j * rows + i] = src[i * cols + j]!;
  return new Tensor(t.dtype, [cols, rows], dst);
}

class Analysis {
  readonly linears = new Map<Node, LinearPlan>();
  readonly attention = new Map<Node, AttentionPlan>();
  readonly silu = new Map<Node, Value>();
  /** Softmax nodes over attention scores that are not in a form the pass rewrites, and why. */
  readonly refused: Array<{ node: Node; why: string }> = [];
  private readonly users = new Map<Value, Node[]>();
  private readonly accepted = new Set<Node>();

  /** `attentionOnly`: find the attentions alone (no linears, no SiLU, no refusals), as every compile does. */
  constructor(
    private readonly graph: Graph,
    attentionOnly = false,
  ) {
    for (const node of graph.nodes) for (const v of node.inputValues()) this.users.set(v, [...(this.users.get(v) ?? []), node]);
    for (const node of graph.nodes) {
      if (node.kind !== 'call') continue;
      if (node.target === MATMUL) {
        if (attentionOnly) this.attentionAt(node);
        else this.matmul(node);
      } else if (node.target === 'aten.mul.Tensor' && !attentionOnly) this.mulSigmoid(node);
    }
    if (attentionOnly) return;
    for (const node of graph.nodes) if (node.kind === 'call' && SOFTMAX.has(node.target)) this.checkSoftmax(node);
  }

  private usersOf(v: Value): Node[] {
    return this.users.get(v) ?? [];
  }

  /** Read by exactly one node and not a graph output. */
  private onlyReader(v: Value): Node | undefined {
    const u = this.usersOf(v);
    return u.length === 1 && !this.graph.outputs.includes(v) ? u[0] : undefined;
  }

  private matmul(node: Node): void {
    const x = node.args.self;
    const w = node.args.other;
    if (!(x instanceof Value) || !(w instanceof Value)) return;
    if (w.tensorType.shape.length === 2 && x.tensorType.shape.length >= 2) {
      let plan: LinearPlan | undefined;
      if (isConstant(w)) plan = { weight: w, transposed: true, bias: null };
      else {
        const p = w.producer;
        const swaps = p.kind === 'call' && ((p.target === 'aten.permute.default' && String(p.args.dims) === '1,0') || p.target === 'aten.t.default' || p.target === 'aten.transpose.int');
        const stored = constantValue(p.args.self);
        if (swaps && stored !== undefined && stored.tensorType.shape.length === 2) plan = { weight: stored, transposed: false, bias: null };
      }
      if (plan === undefined) return;
      const add = this.onlyReader(node.output);
      const out = w.tensorType.shape[1];
      if (add?.kind === 'call' && add.target === 'aten.add.Tensor' && (add.args.alpha ?? 1) === 1) {
        const b = add.args.self === node.output ? add.args.other : add.args.self;
        const bias = constantValue(b);
        if (bias !== undefined && bias.tensorType.shape.length === 1 && bias.tensorType.shape[0] === out && bias.tensorType.dtype === node.output.tensorType.dtype) {
          plan.bias = bias;
          plan.biasAdd = add;
        }
      }
      this.linears.set(node, plan);
      return;
    }
    this.attentionAt(node);
  }

  /** `MatMul(Softmax(scores), v)`: records the plan, or why the softmax's scores are not in the form. */
  private attentionAt(node: Node): void {
    const probs = stripCasts(node.args.self as Value);
    const softmax = probs.producer;
    if (softmax.kind !== 'call' || !SOFTMAX.has(softmax.target)) return;
    const refuse = (why: string): void => void this.refused.push({ node: softmax, why });
    const rank = probs.tensorType.shape.length;
    const dim = softmax.args.dim as number;
    if (dim !== -1 && dim !== rank - 1) return refuse(`it normalizes over axis ${dim}, not the last (keys) axis`);
    if (this.onlyReader(softmax.output) === undefined) return refuse('its probabilities are read by more than the matmul with the values');
    let scores = stripCasts(softmax.args.self as Value);
    let mask: Value | null = null;
    let scale = 1;
    const step = (v: Value): Node | undefined => (v.producer.kind === 'call' && this.onlyReader(v) !== undefined ? v.producer : undefined);
    let p = step(scores);
    if (p?.target === 'aten.add.Tensor' && (p.args.alpha ?? 1) === 1) {
      const [a, b] = [p.args.self, p.args.other];
      if (!(a instanceof Value) || !(b instanceof Value)) return refuse(`its mask add ${p.name} adds a number`);
      const aIsScores = stripCasts(a).producer.kind === 'call' && [MATMUL, 'aten.mul.Tensor', 'aten.div.Tensor'].includes((stripCasts(a).producer as Node).target);
      scores = stripCasts(aIsScores ? a : b);
      mask = aIsScores ? b : a;
      p = step(scores);
    }
    if (p?.target === 'aten.mul.Tensor' || p?.target === 'aten.div.Tensor' || p?.target === 'aten.mul.Scalar' || p?.target === 'aten.div.Scalar') {
      const c = scalarConstant(p.args.other);
      if (c === undefined || !(p.args.self instanceof Value)) return refuse(`its scores are scaled by node ${p.name} (${p.target}), whose factor is not one constant number`);
      scale = p.target.startsWith('aten.div') ? 1 / c : c;
      scores = stripCasts(p.args.self);
      p = step(scores);
    }
    if (p?.target !== MATMUL) {
      const at = scores.producer;
      return refuse(`its scores come from node ${at.name} (${at.kind === 'call' ? at.target : at.kind}), not from a matmul of queries and transposed keys [times a constant] [plus a mask]`);
    }
    const q = p.args.self as Value;
    const kT = p.args.other as Value;
    const qs = q.tensorType.shape;
    const ks = kT.tensorType.shape;
    if (qs.length < 3 || ks.length !== qs.length) return refuse(`its queries ${q.name} and keys ${kT.name} are not batched [..., heads, seq, dim] tensors of one rank`);
    this.attention.set(node, { q, kT, v: node.args.other as Value, mask, scale });
    this.accepted.add(softmax);
  }

  /** A softmax over computed scores must have become part of an attention. */
  private checkSoftmax(softmax: Node): void {
    if (this.accepted.has(softmax) || this.refused.some((r) => r.node === softmax)) return;
    // Only attention-like softmaxes are the pass's business: scores from a matmul of two computed values.
    let v = stripCasts(softmax.args.self as Value);
    for (let i = 0; i < 3 && v.producer.kind === 'call' && v.producer.target !== MATMUL; i++) {
      const next = v.producer.args.self;
      if (!(next instanceof Value)) return;
      v = stripCasts(next);
    }
    const mm = v.producer;
    if (mm.kind !== 'call' || mm.target !== MATMUL || isConstant(mm.args.self) || isConstant(mm.args.other)) return;
    const readers = this.usersOf(softmax.output).map((n) => `${n.name} (${n.target})`);
    this.refused.push({ node: softmax, why: `its probabilities go to ${readers.join(', ') || 'no node'}, not to one matmul with the values` });
  }

  private mulSigmoid(node: Node): void {
    const [a, b] = [node.args.self, node.args.other];
    if (!(a instanceof Value) || !(b instanceof Value)) return;
    for (const [x, s] of [
      [a, b],
      [b, a],
    ] as const) {
      const p = s.producer;
      if (p.kind === 'call' && p.target === 'aten.sigmoid.default' && p.args.self === x) {
        this.silu.set(node, x);
        return;
      }
    }
  }
}

/**
 * `graph` with its ONNX-form Llama blocks rewritten as the matcher expects (see the top of
 * this file), or `graph` itself when there is nothing to rewrite.
 *
 * @throws {ShardingError} `E_SHARDING`: a softmax over attention scores that is not in a form
 *   the pass can turn into attention, naming the node and what is in the way.
 */
export function canonicalizeOnnxForms(graph: Graph): Graph {
  const a = new Analysis(graph);
  if (a.refused.length > 0) {
    const { node, why } = a.refused[0]!;
    throw new ShardingError(
      `attention at softmax node "${node.name}" cannot be split for tensor parallelism: ${why}` +
        (a.refused.length > 1 ? ` (and ${a.refused.length - 1} more softmax node(s): ${a.refused.slice(1).map((r) => `"${r.node.name}"`).join(', ')})` : ''),
      { details: { node: node.name, nodes: a.refused.map((r) => r.node.name) } },
    );
  }
  if (a.linears.size === 0 && a.attention.size === 0 && a.silu.size === 0) return graph;
  return rewriteForms(graph, a, { linears: true, silu: true, strict: true }).graph;
}

/**
 * `graph` with every attention written out in the form above (MatMul, [× or ÷ a constant],
 * [+ a mask], softmax over the keys, MatMul) as one `aten.scaled_dot_product_attention` node,
 * so that converters emit one attention layer for it, as for a model that called SDPA. An
 * attention the SDPA op does not take as written (its type rules refuse the operands) is left
 * as it is; so is every other softmax. Returns `graph` itself when there is none.
 */
export function recognizeAttention(graph: Graph): { graph: Graph; attentions: number } {
  const a = new Analysis(graph, true);
  if (a.attention.size === 0) return { graph, attentions: 0 };
  const { graph: out, attentions } = rewriteForms(graph, a, { linears: false, silu: false, strict: false });
  return attentions === 0 ? { graph, attentions: 0 } : { graph: out, attentions };
}

/** Which of the analysed forms {@link rewriteForms} rewrites; `strict`: an SDPA the op's rules refuse is an error (else the matmul is kept). */
interface RewriteKinds {
  linears: boolean;
  silu: boolean;
  strict: boolean;
}

/** A copy of `graph` with the forms `a` found rewritten (those `kinds` name), and how many attentions became SDPA. */
function rewriteForms(graph: Graph, a: Analysis, kinds: RewriteKinds): { graph: Graph; attentions: number } {
  const linears = kinds.linears ? a.linears : new Map<Node, LinearPlan>();
  const out = new Graph(graph.name);
  for (const [s, range] of graph.symbols) out.symbols.set(s, { ...range });
  const map = new Map<Value, Value>();
  const get = (v: Value): Value => map.get(v)!;
  const remap = (x: Arg): Arg => (x instanceof Value ? get(x) : Array.isArray(x) ? x.map(remap) : x);
  // Weights read only as [in, out] MatMul operands are replaced by their [out, in] copies, under their own names.
  const transposedOnly = new Set<Value>();
  const readers = new Map<Value, Node[]>();
  for (const node of graph.nodes) for (const v of node.inputValues()) readers.set(v, [...(readers.get(v) ?? []), node]);
  for (const [, plan] of linears) {
    const w = plan.weight;
    if (plan.transposed && !graph.outputs.includes(w) && (readers.get(w) ?? []).every((u) => linears.get(u)?.weight === w && linears.get(u)!.transposed)) transposedOnly.add(w);
  }
  const transposed = new Map<Value, Value>();
  const weightFor = (plan: LinearPlan): Value => {
    if (!plan.transposed) return get(plan.weight);
    let t = transposed.get(plan.weight);
    if (t === undefined) {
      const name = transposedOnly.has(plan.weight) ? plan.weight.name : `${plan.weight.name}_transposed`;
      t = out.addConstant(name, transpose2d(plan.weight.producer.tensor!), plan.weight.producer.origin);
      transposed.set(plan.weight, t);
    }
    return t;
  };
  const folded = new Map<Node, Value>();
  const emit = (node: Node, target: string, args: Record<string, Arg>, name = node.name): Node => call(out, target, args, { name, meta: { ...node.meta }, ...(node.subgraphs === undefined ? {} : { subgraphs: node.subgraphs }) });
  const copy = (node: Node): void => {
    const args: Record<string, Arg> = {};
    for (const [k, x] of Object.entries(node.args)) args[k] = remap(x);
    const c = emit(node, node.target, args);
    node.outputs.forEach((v, i) => map.set(v, c.outputs[i]!));
  };
  let attentions = 0;

  for (const node of graph.nodes) {
    if (node.kind === 'placeholder') map.set(node.output, out.addInput(node.output.name, node.output.type));
    else if (node.kind === 'constant') {
      if (!transposedOnly.has(node.output)) map.set(node.output, out.addConstant(node.name, node.tensor!, node.origin));
    } else if (folded.has(node)) map.set(node.output, folded.get(node)!);
    else if (linears.has(node)) {
      const plan = linears.get(node)!;
      const linear = emit(node, 'aten.linear.default', { input: get(node.args.self as Value), weight: weightFor(plan), bias: plan.bias === null ? null : get(plan.bias) });
      map.set(node.output, linear.output);
      if (plan.biasAdd !== undefined) folded.set(plan.biasAdd, linear.output);
    } else if (a.attention.has(node)) {
      const p = a.attention.get(node)!;
      const sdpa = (): Value => {
        const key = emit(node, 'aten.transpose.int', { self: get(p.kT), dim0: -2, dim1: -1 }, `${node.name}_key`).output;
        return emit(node, 'aten.scaled_dot_product_attention.default', {
          query: get(p.q),
          key,
          value: get(p.v),
          attn_mask: p.mask === null ? null : get(p.mask),
          dropout_p: 0,
          is_causal: false,
          scale: p.scale,
        }).output;
      };
      if (kinds.strict) {
        map.set(node.output, sdpa());
        attentions++;
        continue;
      }
      // The SDPA op checks its operands when it is built (dtypes, the mask's shape): a refusal leaves the form written out.
      let value: Value | null = null;
      try {
        value = sdpa();
      } catch (error) {
        if (!(error instanceof TensorRTNodeError)) throw error;
      }
      if (value !== null && value.tensorType.dtype === node.output.tensorType.dtype && formatShape(value.tensorType.shape) === formatShape(node.output.tensorType.shape)) {
        map.set(node.output, value);
        attentions++;
      } else copy(node);
    } else if (kinds.silu && a.silu.has(node)) map.set(node.output, emit(node, 'aten.silu.default', { self: get(a.silu.get(node)!) }).output);
    else copy(node);
  }
  out.setOutputs(
    graph.outputs.map((v) => get(v)),
    graph.outputNames,
  );
  out.eliminateDeadCode();
  return { graph: out, attentions };
}
