'use strict';
// Complex lowering time (detection of complex subgraphs + unpacking + rewrite into real
// arithmetic + verification) on a generated 32-layer Llama-shaped decoder (d=4096, 32 heads,
// 8 kv heads, SwiGLU 14336, seq 128) with complex RoPE on q and k: view_as_complex → mul by a
// view of the complex64 freqs_cis graph input → view_as_real, as torch.export writes
// apply_rotary_emb (bench/llama-graph.js). Goal: < 100 ms for 32 layers.
const path = require('node:path');

const root = path.join(__dirname, '..');
const lib = (p) => require(path.join(root, 'dist', p));
const { ComplexSubgraphDetector, lowerComplex } = lib('lowering/complex/index.js');
const { partition } = lib('partitioning/partition.js');
require(path.join(root, 'dist', 'conversion', 'converters', 'index.js'));
const { buildLlama } = require('./llama-graph');

const ms = (a, b) => Number(b - a) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeOnce(layers) {
  const graph = buildLlama(layers, { rope: true });
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
if (segments.length !== 1 || segments[0].kind !== 'engine') throw new Error(`the lowered graph should be one engine segment, got ${segments.map((s) => s.kind).join(', ')}`);
const detect = median(runs.map((r) => r.detect));
const lower = median(runs.map((r) => r.lower));
console.log(
  `32 layers: ${last.nodes} nodes, ${last.subgraphs} complex subgraphs, ${last.rewritten} ops rewritten; ` +
    `detection ${detect.toFixed(1)} ms, detection+rewrite ${lower.toFixed(1)} ms (median of ${runs.length}; goal < 100 ms); ` +
    `lowered graph: 1 engine segment`,
);
if (lower >= 100) process.exitCode = 1;
