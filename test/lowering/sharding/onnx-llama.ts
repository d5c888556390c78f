/**
 * A Llama-style model written the way `torch.onnx.export` writes one (for the ONNX-form tests
 * of the sharding pass): RMSNorm as Pow/ReduceMean/Sqrt/Div, projections as MatMul with
 * `[in, out]` initializers (and the output projection as MatMul(x, Transpose(W)) with `W`
 * `[out, in]`), heads by Reshape/Transpose, rotate-half RoPE by Slice/Neg/Concat, repeat-kv by
 * Unsqueeze/Expand/Reshape, attention as MatMul/Div/Add(mask)/Softmax/MatMul, SiLU as
 * x * Sigmoid(x). Built with the repo's ONNX writer (test/helpers/onnx-symbolic-model.ts).
 */
import { Tensor } from '../../../lib/ir/tensor';
import { buildSymbolicModel, i64, type SymNode } from '../../helpers/onnx-symbolic-model';

export interface OnnxLlamaOptions {
  layers?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  hidden?: number;
  seq?: number;
  /** q/k/v biases (Qwen2-style), as Add after the MatMul. */
  qkvBias?: boolean;
  /** Rewrites the attention scores: `(nodes, scores) => name` of what the softmax reads. */
  scores?: (nodes: SymNode[], scores: string, layer: number) => string;
}

/** Deterministic pseudo-random floats in [-scale/2, scale/2). */
export function pseudoRandom(shape: number[], seed: number, scale = 1): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    v[i] = (s / 2 ** 32 - 0.5) * scale;
  }
  return new Tensor('float32', shape, v);
}

const f32 = (x: number): Tensor => Tensor.scalar('float32', x);

/** The serialized model (input `x` float32 [1, seq, heads·headDim], output `y`) and its sizes. */
export function onnxLlama(options: OnnxLlamaOptions = {}): { model: Uint8Array; dim: number; seq: number; names: (layer: number) => Record<string, string> } {
  const { layers = 2, heads = 4, kvHeads = 2, headDim = 4, hidden = 24, seq = 5 } = options;
  const dim = heads * headDim;
  const rep = heads / kvHeads;
  const init: Record<string, Tensor> = {
    two: f32(2),
    eps: f32(1e-5),
    scale: f32(Math.sqrt(headDim)),
    half_start: i64([0]),
    half_mid: i64([headDim / 2]),
    half_end: i64([headDim]),
    last_axis: i64([-1]),
    axis2: i64([2]),
    q_shape: i64([1, seq, heads, headDim]),
    kv_shape: i64([1, seq, kvHeads, headDim]),
    rep_shape: i64([1, kvHeads, rep, seq, headDim]),
    heads_shape: i64([1, heads, seq, headDim]),
    merged_shape: i64([1, seq, dim]),
  };
  // RoPE tables and a causal additive mask, as exporters fold them into initializers.
  const cos = new Float32Array(seq * headDim);
  const sin = new Float32Array(seq * headDim);
  for (let p = 0; p < seq; p++) {
    for (let i = 0; i < headDim; i++) {
      const theta = p / 10000 ** ((2 * (i % (headDim / 2))) / headDim);
      cos[p * headDim + i] = Math.cos(theta);
      sin[p * headDim + i] = Math.sin(theta);
    }
  }
  init.cos = new Tensor('float32', [seq, headDim], cos);
  init.sin = new Tensor('float32', [seq, headDim], sin);
  const mask = new Float32Array(seq * seq);
  for (let i = 0; i < seq; i++) for (let j = 0; j < seq; j++) mask[i * seq + j] = j > i ? -1e9 : 0;
  init.mask = new Tensor('float32', [1, 1, seq, seq], mask);

  const nodes: SymNode[] = [];
  let counter = 0;
  const node = (op: string, inputs: string[], attrs?: SymNode['attrs']): string => {
    const out = `${op.toLowerCase()}_${counter++}`;
    nodes.push({ op, inputs, outputs: [out], ...(attrs ? { attrs } : {}), name: `/${op}_${counter}` });
    return out;
  };
  const rmsNorm = (x: string, weight: string): string => {
    const ms = node('ReduceMean', [node('Pow', [x, 'two'])], { axes: [-1], keepdims: 1 });
    return node('Mul', [node('Div', [x, node('Sqrt', [node('Add', [ms, 'eps'])])]), weight]);
  };
  const rope = (x: string): string => {
    const x1 = node('Slice', [x, 'half_start', 'half_mid', 'last_axis']);
    const x2 = node('Slice', [x, 'half_mid', 'half_end', 'last_axis']);
    const rotated = node('Concat', [node('Neg', [x2]), x1], { axis: -1 });
    return node('Add', [node('Mul', [x, 'cos']), node('Mul', [rotated, 'sin'])]);
  };
  const names = (l: number): Record<string, string> => ({
    q: `model.layers.${l}.self_attn.q_proj.weight`,
    k: `model.layers.${l}.self_attn.k_proj.weight`,
    v: `model.layers.${l}.self_attn.v_proj.weight`,
    o: `model.layers.${l}.self_attn.o_proj.weight`,
    gate: `model.layers.${l}.mlp.gate_proj.weight`,
    up: `model.layers.${l}.mlp.up_proj.weight`,
    down: `model.layers.${l}.mlp.down_proj.weight`,
  });
  let h = 'x';
  for (let l = 0; l < layers; l++) {
    const n = names(l);
    const seed = 100 * (l + 1);
    // Stored [in, out], as the exporter writes a linear it turned into MatMul; o_proj [out, in] behind a Transpose.
    init[n.q] = pseudoRandom([dim, dim], seed + 1);
    init[n.k] = pseudoRandom([dim, kvHeads * headDim], seed + 2);
    init[n.v] = pseudoRandom([dim, kvHeads * headDim], seed + 3);
    init[n.o] = pseudoRandom([dim, dim], seed + 4, 0.5);
    init[n.gate] = pseudoRandom([dim, hidden], seed + 5);
    init[n.up] = pseudoRandom([dim, hidden], seed + 6);
    init[n.down] = pseudoRandom([hidden, dim], seed + 7, 0.5);
    init[`model.layers.${l}.input_layernorm.weight`] = pseudoRandom([dim], seed + 8, 0.4);
    init[`model.layers.${l}.post_attention_layernorm.weight`] = pseudoRandom([dim], seed + 9, 0.4);
    const xn = rmsNorm(h, `model.layers.${l}.input_layernorm.weight`);
    const project = (w: string, bias: string | undefined): string => {
      const y = node('MatMul', [xn, w]);
      return bias === undefined ? y : node('Add', [y, bias]);
    };
    const bias = (which: string, size: number, s: number): string | undefined => {
      if (!options.qkvBias) return undefined;
      const name = `model.layers.${l}.self_attn.${which}_proj.bias`;
      init[name] = pseudoRandom([size], s, 0.2);
      return name;
    };
    const toHeads = (x: string, shape: string): string => node('Transpose', [node('Reshape', [x, shape])], { perm: [0, 2, 1, 3] });
    const q = rope(toHeads(project(n.q, bias('q', dim, seed + 11)), 'q_shape'));
    const k = rope(toHeads(project(n.k, bias('k', kvHeads * headDim, seed + 12)), 'kv_shape'));
    const v = toHeads(project(n.v, bias('v', kvHeads * headDim, seed + 13)), 'kv_shape');
    const repeat = (x: string): string => node('Reshape', [node('Expand', [node('Unsqueeze', [x, 'axis2']), 'rep_shape']), 'heads_shape']);
    const kT = node('Transpose', [repeat(k)], { perm: [0, 1, 3, 2] });
    let scores = node('Add', [node('Div', [node('MatMul', [q, kT]), 'scale']), 'mask']);
    if (options.scores) scores = options.scores(nodes, scores, l);
    const attn = node('MatMul', [node('Softmax', [scores], { axis: -1 }), repeat(v)]);
    const merged = node('Reshape', [node('Transpose', [attn], { perm: [0, 2, 1, 3] }), 'merged_shape']);
    h = node('Add', [h, node('MatMul', [merged, node('Transpose', [n.o], { perm: [1, 0] })])]);
    const hn = rmsNorm(h, `model.layers.${l}.post_attention_layernorm.weight`);
    const g = node('MatMul', [hn, n.gate]);
    const act = node('Mul', [g, node('Sigmoid', [g])]);
    h = node('Add', [h, node('MatMul', [node('Mul', [act, node('MatMul', [hn, n.up])]), n.down])]);
  }
  nodes.push({ op: 'Identity', inputs: [h], outputs: ['y'], name: '/output' });
  return { model: buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [1, seq, dim] } }, initializers: init, nodes, outputs: ['y'] }), dim, seq, names };
}
