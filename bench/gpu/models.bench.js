'use strict';
// The workloads of bench/gpu/models.py through tensorrt-node's cuda backend, beside PyTorch's times from the
// same command (bench/gpu/models.py wrote the exports, inputs, fp32 outputs and torch.json).
// For each: compile the .pt2 with backend 'cuda' (static shapes), check the output against
// PyTorch's fp32 output on this GPU, then time program.run with DeviceTensor inputs and
// outputs: 'device' (wall clock, JS call → Promise settled, so launch overhead counts as it
// does for the caller), median of 50 after 10 warm-up runs; and once with host tensors.
// PRECISION=fp16|bf16|tf32 compiles with that precision allowed (default fp32, as before): the
// output is then also compared with PyTorch's eager fp16 output when models.py saved one
// (output0_fp16.bin), beside PyTorch's own fp16 error against fp32 (torchFp16Error).
// usage: [PRECISION=fp16] node bench/gpu/models.bench.js DIR   (prints JSON lines, then a Markdown table)
const fs = require('node:fs');
const path = require('node:path');
const lib = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
const { CudaRunner } = require(path.join(__dirname, '..', '..', 'dist', 'backends', 'cuda', 'run', 'runner.js'));
const { deserializeCudaEngine } = require(path.join(__dirname, '..', '..', 'dist', 'backends', 'cuda', 'engine-format.js'));
const exportIO = require('./export-io');

const PRECISION = process.env.PRECISION || 'fp32';
if (!['fp32', 'tf32', 'fp16', 'bf16'].includes(PRECISION)) {
  console.error(`PRECISION must be fp32, tf32, fp16 or bf16, got ${JSON.stringify(PRECISION)}`);
  process.exit(2);
}
/** Compile settings' `precisions` (fp32 is always allowed). */
const PRECISIONS = PRECISION === 'fp32' ? {} : { precisions: [PRECISION] };

const readTensor = (dir, m) => exportIO.readTensor(lib, dir, m);

function errors(actual, expected) {
  const a = actual.data, e = expected.data;
  let maxAbs = 0, maxRef = 0;
  for (let i = 0; i < e.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(Number(a[i]) - Number(e[i])));
    maxRef = Math.max(maxRef, Math.abs(Number(e[i])));
  }
  return { maxAbs, maxRef, scaled: maxAbs / Math.max(maxRef, 1e-30) };
}

async function medianMs(reps, fn) {
  for (let i = 0; i < 10; i++) await fn();
  const t = [];
  for (let i = 0; i < reps; i++) {
    const a = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  t.sort((x, y) => x - y);
  return t[t.length >> 1];
}

async function one(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const line = { name: meta.name };
  const t0 = Date.now();
  const logs = [];
  const program = await lib.compile(path.join(dir, 'model.pt2'), { backend: 'cuda', ...PRECISIONS, logger: (level, message) => level !== 'debug' && logs.push(message) });
  line.compileS = (Date.now() - t0) / 1e3;
  line.precision = PRECISION;
  line.precisionSummary = logs.filter((m) => m.includes('computes in')).map((m) => m.replace(/^cuda backend: /, ''));
  line.segments = program.data.segments.map((s) => (s.kind === 'engine' ? s.backend : 'fallback')).join(',');
  line.runsOn = program.runsOn;
  try {
    const inputs = meta.inputs.map((m) => readTensor(dir, m));
    const expected = readTensor(dir, meta.outputs[0]);
    const [out] = await program.run(inputs);
    line.error = errors(out, expected);
    const fp16 = (meta.outputs_fp16 ?? [])[0];
    if (fp16) line.errorVsTorchFp16 = errors(out, readTensor(dir, fp16));
    const onDevice = [];
    for (const t of inputs) onDevice.push(await lib.toDevice(t, 0));
    // The device-I/O path computes the same (complex inputs reach the engine as device views).
    const [deviceOut] = await program.run(onDevice, { outputs: 'device' });
    line.errorDeviceIO = errors(await deviceOut.toHost(), expected);
    deviceOut.dispose();
    line.deviceIOMs = await medianMs(50, async () => (await program.run(onDevice, { outputs: 'device' })).forEach((t) => t.dispose()));
    line.graphMs = await graphMs(program, inputs);
    line.hostIOMs = await medianMs(20, () => program.run(inputs));
    for (const t of onDevice) t.dispose();
  } finally {
    await program.dispose();
  }
  return line;
}

/**
 * The device's time per run, timed as PyTorch's graph rows are: the program's one cuda engine
 * replayed as a CUDA graph 100 times in one call (CudaRunner.timeGraph), the median of 5 such
 * samples. A program.run() adds the host's round trips (input copy, launch, output allocation
 * and copy) on top: the device I/O column.
 */
async function graphMs(program, inputs) {
  const segments = program.data.segments.filter((s) => s.kind === 'engine');
  if (segments.length !== 1) return undefined;
  const runner = await CudaRunner.load(deserializeCudaEngine(segments[0].engine), 0);
  try {
    const feeds = exportIO.engineFeeds(lib, runner, inputs);
    const samples = [];
    for (let i = 0; i < 5; i++) samples.push(await runner.timeGraph(feeds, { repeats: 100 }));
    return samples.sort((a, b) => a - b)[2];
  } finally {
    runner.dispose();
  }
}

/** At reduced precision, the error cell also gives ours against PyTorch fp16, and PyTorch fp16's own error against fp32. */
function reducedNote(o, t) {
  if (PRECISION === 'fp32' || PRECISION === 'tf32') return '';
  const parts = [];
  if (o.errorVsTorchFp16) parts.push(`vs torch fp16 ${o.errorVsTorchFp16.scaled.toExponential(1)}`);
  if (typeof t.torchFp16Error === 'number') parts.push(`torch fp16 vs fp32 ${t.torchFp16Error.toExponential(1)}`);
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}

async function main() {
  const root = process.argv[2];
  const torch = JSON.parse(fs.readFileSync(path.join(root, 'torch.json'), 'utf8'));
  const rows = [];
  for (const t of torch) {
    if (t.error) {
      rows.push({ name: t.name, torch: t });
      continue;
    }
    let ours;
    try {
      ours = await one(path.join(root, t.name));
    } catch (error) {
      ours = { name: t.name, failed: `${error.code}: ${error.message}`.slice(0, 400) };
    }
    console.log(JSON.stringify({ ...ours, torch: t }));
    rows.push({ name: t.name, torch: t, ours });
  }
  const f = (x) => (typeof x === 'number' ? x.toFixed(2) : '—');
  console.log(`\n| workload | PyTorch eager fp32 | eager fp16 | inductor + CUDA graphs fp16 | tensorrt-node cuda ${PRECISION}: graph replay | device I/O run() | host I/O run() | ratio vs best (graph / run()) | ratio vs eager fp32 | max error (scaled) |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const t = r.torch, o = r.ours ?? {};
    const best = t.best;
    const ratio = (x) => (x && best ? (x / best).toFixed(2) : '—');
    const ratio32 = o.graphMs && t.eagerFp32Ms ? (o.graphMs / t.eagerFp32Ms).toFixed(2) : '—';
    console.log(`| ${r.name} | ${f(t.eagerFp32Ms)} | ${f(t.eagerFp16Ms)} | ${f(t.inductorGraphsFp16Ms)} | ${f(o.graphMs)} | ${f(o.deviceIOMs)} | ${f(o.hostIOMs)} | ${ratio(o.graphMs)} / ${ratio(o.deviceIOMs)} | ${ratio32} | ${o.error ? o.error.scaled.toExponential(1) + reducedNote(o, t) : o.failed ?? t.error ?? '—'} |`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
