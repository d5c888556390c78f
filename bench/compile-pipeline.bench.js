'use strict';
// Compile-pipeline time (build the graph → lower → partition → convert to Networks) for a
// generated Llama-shaped decoder (d=4096, 32 heads, 8 kv heads, SwiGLU 14336) at 8, 16, 32
// and 64 layers. Weights are views of one shared buffer, so memory stays small while every
// constant is real. Goal: < 1.5 s for 32 layers on a 2-core machine, growth linear.
const path = require('node:path');

const root = path.join(__dirname, '..');
const lib = (p) => require(path.join(root, 'dist', p));
const { Graph, tensorType, call, Tensor } = lib('index.js');
const { specializeShapes } = lib('lowering/specialize.js');
const { foldConstants } = lib('lowering/constant-folding.js');
const { partition } = lib('partitioning/partition.js');
const { convertSegment } = lib('conversion/convert.js');
require(path.join(root, 'dist', 'conversion', 'converters', 'index.js'));

const D = 4096;
const HEADS = 32;
const KV = 8;
const HEAD_DIM = D / HEADS;
const FFN = 14336;
const SEQ = 128;
const shared = new Float32Array(D * FFN); // the largest weight; every weight views a prefix

function weight(graph, name, shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  return graph.addConstant(name, new Tensor('float32', shape, shared.subarray(0, n)), 'parameter');
}

function buildLlama(layers) {
  const g = new Graph(`llama${layers}`);
  const op = (target, args) => call(g, target, args).output;
  let h = g.addInput('hidden', tensorType('float32', [1, SEQ, D]));
  for (let l = 0; l < layers; l++) {
    const norm1 = op('aten.rms_norm.default', { input: h, normalized_shape: [D], weight: weight(g, `l${l}.attn_norm`, [D]), eps: 1e-5 });
    const proj = (name, out) => op('aten.linear.default', { input: norm1, weight: weight(g, `l${l}.${name}`, [out, D]) });
    const heads = (x, n) => op('aten.permute.default', { self: op('aten.view.default', { self: x, size: [1, SEQ, n, HEAD_DIM] }), dims: [0, 2, 1, 3] });
    const q = heads(proj('wq', D), HEADS);
    const k = heads(proj('wk', KV * HEAD_DIM), KV);
    const v = heads(proj('wv', KV * HEAD_DIM), KV);
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

function timePipeline(layers) {
  const t0 = process.hrtime.bigint();
  const graph = buildLlama(layers);
  const t1 = process.hrtime.bigint();
  specializeShapes(graph, new Map());
  foldConstants(graph);
  const { segments } = partition(graph, { minBlockSize: 5 });
  const t2 = process.hrtime.bigint();
  let layersBuilt = 0;
  for (const s of segments) {
    if (s.kind !== 'tensorrt') throw new Error(`segment ${s.index} fell back: the bench graph should convert fully`);
    layersBuilt += convertSegment({ name: `seg${s.index}`, nodes: s.nodes, inputs: s.inputs, outputs: s.outputs }).layers.length;
  }
  const t3 = process.hrtime.bigint();
  const ms = (a, b) => Number(b - a) / 1e6;
  return { layers, nodes: graph.calls().length, trtLayers: layersBuilt, build: ms(t0, t1), partition: ms(t1, t2), convert: ms(t2, t3), total: ms(t0, t3) };
}

timePipeline(2); // warm up the JIT
const rows = [8, 16, 32, 64].map(timePipeline);
for (const r of rows) {
  console.log(
    `${String(r.layers).padStart(2)} layers: ${r.nodes} nodes → ${r.trtLayers} TensorRT layers; graph ${r.build.toFixed(0)} ms, ` +
      `lower+partition ${r.partition.toFixed(0)} ms, convert ${r.convert.toFixed(0)} ms, total ${(r.total / 1000).toFixed(2)} s`,
  );
}
const per = rows.map((r) => r.total / r.layers);
console.log(`ms per decoder layer: ${per.map((x) => x.toFixed(1)).join(', ')} (linear growth keeps these flat)`);
const r32 = rows.find((r) => r.layers === 32);
console.log(`32 layers: ${(r32.total / 1000).toFixed(2)} s (goal < 1.5 s)`);
