'use strict';
// Complex lowering time (detection of complex subgraphs + unpacking + rewrite into real
// arithmetic + verification) on a generated 32-layer Llama-shaped decoder (d=4096, 32 heads,
// 8 kv heads, SwiGLU 14336, seq 128) with complex RoPE on q and k: view_as_complex → mul by a
// view of the complex64 freqs_cis graph input → view_as_real, as torch.export writes
// apply_rotary_emb. Weights are views of one shared buffer. Goal: < 100 ms for 32 layers.
const path = require('node:path');

const root = path.join(__dirname, '..');
const lib = (p) => require(path.join(root, 'dist', p));
const { Graph, tensorType, call, Tensor } = lib('index.js');
const { ComplexSubgraphDetector, lowerComplex } = lib('lowering/complex/index.js');
const { partition } = lib('partitioning/partition.js');
require(path.join(root, 'dist', 'conversion', 'converters', 'index.js'));

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

function buildLlama(layers) {
  const g = new Graph(`llama${layers}_rope`);
  const op = (target, args) => call(g, target, args).output;
  let h = g.addInput('hidden', tensorType('float32', [1, SEQ, D]));
  const freqs = g.addInput('freqs_cis', tensorType('complex64', [SEQ, HEAD_DIM / 2]));
  for (let l = 0; l < layers; l++) {
    const norm1 = op('aten.rms_norm.default', { input: h, normalized_shape: [D], weight: weight(g, `l${l}.attn_norm`, [D]), eps: 1e-5 });
    const proj = (name, out) => op('aten.linear.default', { input: norm1, weight: weight(g, `l${l}.${name}`, [out, D]) });
    const freqsView = op('aten.view.default', { self: freqs, size: [1, SEQ, 1, HEAD_DIM / 2] });
    const rope = (x, n) => {
      const pairs = op('aten.view.default', { self: x, size: [1, SEQ, n, HEAD_DIM / 2, 2] });
      const rotated = op('aten.mul.Tensor', { self: op('aten.view_as_complex.default', { self: pairs }), other: freqsView });
      return op('aten.view.default', { self: op('aten.view_as_real.default', { self: rotated }), size: [1, SEQ, n, HEAD_DIM] });
    };
    const heads = (x) => op('aten.permute.default', { self: x, dims: [0, 2, 1, 3] });
    const q = heads(rope(op('aten.view.default', { self: proj('wq', D), size: [1, SEQ, HEADS, HEAD_DIM] }), HEADS));
    const k = heads(rope(op('aten.view.default', { self: proj('wk', KV * HEAD_DIM), size: [1, SEQ, KV, HEAD_DIM] }), KV));
    const v = heads(op('aten.view.default', { self: proj('wv', KV * HEAD_DIM), size: [1, SEQ, KV, HEAD_DIM] }));
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

const ms = (a, b) => Number(b - a) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeOnce(layers) {
  const graph = buildLlama(layers);
  const nodes = graph.calls().length;
  const t0 = process.hrtime.bigint();
  const subgraphs = new ComplexSubgraphDetector().findAllComplexSubgraphs(graph);
  const t1 = process.hrtime.bigint();
  const lowering = lowerComplex(graph); // detection again, unpacking, rewrite, dead-code removal, verification
  const t2 = process.hrtime.bigint();
  return { layers, nodes, subgraphs: subgraphs.length, rewritten: lowering.report.rewritten, detect: ms(t0, t1), lower: ms(t1, t2), graph };
}

timeOnce(2); // warm up the JIT
const runs = [];
for (let i = 0; i < 7; i++) runs.push(timeOnce(32));
const last = runs[runs.length - 1];
const { segments } = partition(last.graph, { minBlockSize: 5 });
if (segments.length !== 1 || segments[0].kind !== 'tensorrt') throw new Error(`the lowered graph should be one TensorRT segment, got ${segments.map((s) => s.kind).join(', ')}`);
const detect = median(runs.map((r) => r.detect));
const lower = median(runs.map((r) => r.lower));
console.log(
  `32 layers: ${last.nodes} nodes, ${last.subgraphs} complex subgraphs, ${last.rewritten} ops rewritten; ` +
    `detection ${detect.toFixed(1)} ms, detection+rewrite ${lower.toFixed(1)} ms (median of ${runs.length}; goal < 100 ms); ` +
    `lowered graph: 1 TensorRT segment`,
);
if (lower >= 100) process.exitCode = 1;
