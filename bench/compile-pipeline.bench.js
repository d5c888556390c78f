'use strict';
// Compile-pipeline time (build the graph → lower → partition → convert to Networks) for a
// generated Llama-shaped decoder (bench/llama-graph.js: d=4096, 32 heads, 8 kv heads, SwiGLU
// 14336) at 8, 16, 32 and 64 layers. Goal: < 1.5 s for 32 layers on a 2-core machine, growth
// linear.
const path = require('node:path');

const root = path.join(__dirname, '..');
const lib = (p) => require(path.join(root, 'dist', p));
const { specializeShapes } = lib('lowering/specialize.js');
const { foldConstants } = lib('lowering/constant-folding.js');
const { partition } = lib('partitioning/partition.js');
const { convertSegment } = lib('conversion/convert.js');
require(path.join(root, 'dist', 'conversion', 'converters', 'index.js'));
const { buildLlama } = require('./llama-graph');

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
    if (s.kind !== 'engine') throw new Error(`segment ${s.index} fell back: the bench graph should convert fully`);
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
