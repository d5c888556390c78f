'use strict';
// The generated Llama-shaped decoder the benchmarks time (d=4096, 32 heads, 8 kv heads,
// SwiGLU 14336, seq 128), built from dist/. Weights are views of one shared buffer (the
// largest weight; every weight views a prefix), so memory stays small while every constant
// is real. With `rope`, q and k get complex RoPE as torch.export writes apply_rotary_emb:
// view_as_complex → mul by a view of the complex64 `freqs_cis` graph input → view_as_real.
const path = require('node:path');

const { Tensor } = require(path.join(__dirname, '..', 'dist', 'index.js'));
const { Graph, tensorType, call } = require(path.join(__dirname, '..', 'dist', 'ir-entry.js'));

const D = 4096;
const HEADS = 32;
const KV = 8;
const HEAD_DIM = D / HEADS;
const FFN = 14336;
const SEQ = 128;
const shared = new Float32Array(D * FFN);

function weight(graph, name, shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  return graph.addConstant(name, new Tensor('float32', shape, shared.subarray(0, n)), 'parameter');
}

/** A decoder of `layers` blocks: input `hidden` [1, SEQ, D] (and `freqs_cis` with `rope`), output `out`. */
function buildLlama(layers, { rope = false } = {}) {
  const g = new Graph(rope ? `llama${layers}_rope` : `llama${layers}`);
  const op = (target, args) => call(g, target, args).output;
  let h = g.addInput('hidden', tensorType('float32', [1, SEQ, D]));
  const freqs = rope ? g.addInput('freqs_cis', tensorType('complex64', [SEQ, HEAD_DIM / 2])) : null;
  for (let l = 0; l < layers; l++) {
    const norm1 = op('aten.rms_norm.default', { input: h, normalized_shape: [D], weight: weight(g, `l${l}.attn_norm`, [D]), eps: 1e-5 });
    const proj = (name, out) => op('aten.linear.default', { input: norm1, weight: weight(g, `l${l}.${name}`, [out, D]) });
    const freqsView = rope ? op('aten.view.default', { self: freqs, size: [1, SEQ, 1, HEAD_DIM / 2] }) : null;
    const rotary = (x, n) => {
      if (!rope) return x;
      const pairs = op('aten.view.default', { self: x, size: [1, SEQ, n, HEAD_DIM / 2, 2] });
      const rotated = op('aten.mul.Tensor', { self: op('aten.view_as_complex.default', { self: pairs }), other: freqsView });
      return op('aten.view.default', { self: op('aten.view_as_real.default', { self: rotated }), size: [1, SEQ, n, HEAD_DIM] });
    };
    const split = (x, n) => op('aten.view.default', { self: x, size: [1, SEQ, n, HEAD_DIM] });
    const heads = (x) => op('aten.permute.default', { self: x, dims: [0, 2, 1, 3] });
    const q = heads(rotary(split(proj('wq', D), HEADS), HEADS));
    const k = heads(rotary(split(proj('wk', KV * HEAD_DIM), KV), KV));
    const v = heads(split(proj('wv', KV * HEAD_DIM), KV));
    const attn = op('aten.scaled_dot_product_attention.default', { query: q, key: k, value: v, is_causal: true, enable_gqa: true });
    const merged = op('aten.view.default', { self: op('aten.permute.default', { self: attn, dims: [0, 2, 1, 3] }), size: [1, SEQ, D] });
    h = op('aten.add.Tensor', { self: h, other: op('aten.linear.default', { input: merged, weight: weight(g, `l${l}.wo`, [D, D]) }) });
    const norm2 = op('aten.rms_norm.default', { input: h, normalized_shape: [D], weight: weight(g, `l${l}.ffn_norm`, [D]), eps: 1e-5 });
    const gate = op('aten.silu.default', { self: op('aten.linear.default', { input: norm2, weight: weight(g, `l${l}.w1`, [FFN, D]) }) });
    const up = op('aten.linear.default', { input: norm2, weight: weight(g, `l${l}.w3`, [FFN, D]) });
    const down = op('aten.linear.default', { input: op('aten.mul.Tensor', { self: gate, other: up }), weight: weight(g, `l${l}.w2`, [D, FFN]) });
    h = op('aten.add.Tensor', { self: h, other: down });
  }
  g.setOutputs([h], ['out']);
  return g;
}

module.exports = { buildLlama };
