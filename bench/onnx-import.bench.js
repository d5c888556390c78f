'use strict';
// Import of a large ONNX file (>= 300 MB of weights, generated here) against its baseline:
// reading the same bytes. Reports time ratio (goal <= 1.5x) and peak RSS growth over the
// file size (goal <= 1.2x). Each measurement runs in a fresh child process so peak RSS is
// its own; the ratios compare runs of the same script on the same machine.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');

function writeModel(file) {
  const { onnx } = require('onnx-proto');
  // A chain of 20 MatMuls with 4096x1024 float32 weights (16 MiB each): 320 MiB of weights.
  const layers = 20;
  const dim = 1024;
  const rows = 4096;
  const initializer = [];
  const node = [];
  let prev = 'x';
  for (let i = 0; i < layers; i++) {
    const w = new Float32Array(rows * dim);
    for (let j = 0; j < w.length; j += 997) w[j] = (j % 13) / 13;
    initializer.push({ name: `w${i}`, dims: i % 2 === 0 ? [dim, rows] : [rows, dim], dataType: 1, rawData: new Uint8Array(w.buffer) });
    node.push({ opType: 'MatMul', input: [prev, `w${i}`], output: [`h${i}`], name: `mm${i}` });
    prev = `h${i}`;
  }
  const graph = {
    name: 'big',
    node,
    initializer,
    input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimParam: 'batch' }, { dimValue: dim }] } } } }],
    output: [{ name: prev }],
  };
  const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
  fs.writeFileSync(file, bytes);
  return bytes.length;
}

// The measured child: 'read' reads the file; 'import' loads it with loadOnnx.
const child = `
const fs = require('node:fs');
const { loadOnnx } = require(${JSON.stringify(path.join(root, 'dist', 'ir-entry.js'))});
const [mode, file] = process.argv.slice(1);
const before = process.memoryUsage().rss;
const t0 = process.hrtime.bigint();
let keep;
if (mode === 'read') keep = fs.readFileSync(file);
else keep = loadOnnx(file);
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(JSON.stringify({ ms, rssBefore: before, maxRss: process.resourceUsage().maxRSS * 1024, nodes: keep.nodes ? keep.nodes.length : 0 }));
`;

function measure(mode, file) {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(JSON.parse(execFileSync(process.execPath, ['-e', child, mode, file], { encoding: 'utf8' })));
  runs.sort((a, b) => a.ms - b.ms);
  return runs[1]; // the median of three
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-bench-'));
try {
  const file = path.join(dir, 'big.onnx');
  const size = writeModel(file);
  const read = measure('read', file);
  const imported = measure('import', file);
  const timeRatio = imported.ms / read.ms;
  const rssRatio = (imported.maxRss - imported.rssBefore) / size;
  const mb = (n) => (n / 2 ** 20).toFixed(1);
  console.log(`file: ${mb(size)} MiB, ${imported.nodes} graph nodes`);
  console.log(`read the bytes:  ${read.ms.toFixed(0)} ms, peak RSS +${mb(read.maxRss - read.rssBefore)} MiB`);
  console.log(`loadOnnx:        ${imported.ms.toFixed(0)} ms, peak RSS +${mb(imported.maxRss - imported.rssBefore)} MiB`);
  console.log(`time ratio ${timeRatio.toFixed(2)}x (goal <= 1.5x), peak RSS growth / file size ${rssRatio.toFixed(2)}x (goal <= 1.2x)`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
