'use strict';
// The workloads of bench/gpu/models.py through tensorrt-node's cuda backend, beside PyTorch's times from the
// same command (models.py wrote the exports, inputs, fp32 and fp16 outputs, and torch.json; this runs
// every workload torch.json lists without an error). docs/gpu-benchmark.md describes the whole suite.
// For each: compile the .pt2 with backend 'cuda' (static shapes; buildS), check the output against
// PyTorch's fp32 output on this GPU (scaled error: max |ours - fp32| / max |fp32|) and its fp16 output,
// then time program.run with DeviceTensor inputs and outputs: 'device', wall clock from the JS call
// to the settled Promise (launch overhead counts, as it does for a caller):
//   latencyMs     median of OURS_REPS (50) awaited runs, one after another, after 10 warm-up runs
//                 (deviceIOMs: the same figure, under its earlier name)
//   throughputMs  OVERLAP (32) runs issued at once and awaited together, wall time / OVERLAP,
//                 median of 5 such batches after one warm-up batch
//   graphMs       the engine's plan replayed as a CUDA graph 100 times in one call, median of 5
//   hostIOMs      median of 20 runs with host tensors in and out
// PRECISION=fp16|bf16|tf32 compiles with that precision allowed (default fp32): at fp16,
// withinTorchFp16Error says whether ours-vs-fp32 error is at most 2x PyTorch fp16's own (torchFp16Error).
// Writes RESULTS_JSON (default DIR/results.json) after each workload, and the Markdown table to TABLE_MD
// when that is set; GIT_COMMIT, when set, is recorded in the JSON.
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
const positive = (name, fallback) => {
  const v = Number(process.env[name] || fallback);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`${name} must be a positive integer, got ${JSON.stringify(process.env[name])}`);
    process.exit(2);
  }
  return v;
};
const OVERLAP = positive('OVERLAP', 32);
const REPS = positive('OURS_REPS', 50);
/** Ours-vs-fp32 error may be this many times PyTorch fp16's own error and still count as within it. */
const ERROR_FACTOR = 2;

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

const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const disposeAll = (tensors) => tensors.forEach((t) => t.dispose());

async function medianMs(reps, fn) {
  for (let i = 0; i < 10; i++) await fn();
  const t = [];
  for (let i = 0; i < reps; i++) {
    const a = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  return median(t);
}

/**
 * Ms per run with OVERLAP runs in flight: all issued at once (the engine's stream orders them, so the
 * host's work for one overlaps the device's for another), awaited together; median of 5 batches.
 */
async function throughputMs(program, onDevice) {
  const batch = async () => {
    const a = process.hrtime.bigint();
    const settled = await Promise.allSettled(Array.from({ length: OVERLAP }, () => program.run(onDevice, { outputs: 'device' })));
    const ms = Number(process.hrtime.bigint() - a) / 1e6 / OVERLAP;
    for (const s of settled) if (s.status === 'fulfilled') disposeAll(s.value);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return ms;
  };
  await batch();
  const samples = [];
  for (let i = 0; i < 5; i++) samples.push(await batch());
  return median(samples);
}

async function one(dir, t) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const line = { name: meta.name };
  const t0 = Date.now();
  const logs = [];
  const program = await lib.compile(path.join(dir, 'model.pt2'), { backend: 'cuda', ...PRECISIONS, logger: (level, message) => level !== 'debug' && logs.push(message) });
  line.buildS = line.compileS = (Date.now() - t0) / 1e3;
  line.precision = PRECISION;
  line.precisionSummary = logs.filter((m) => m.includes('computes in')).map((m) => m.replace(/^cuda backend: /, ''));
  line.segments = program.data.segments.map((s) => (s.kind === 'engine' ? s.backend : 'fallback')).join(',');
  line.runsOn = program.runsOn;
  const onDevice = [];
  try {
    const inputs = meta.inputs.map((m) => readTensor(dir, m));
    const expected = readTensor(dir, meta.outputs[0]);
    const [out] = await program.run(inputs);
    line.error = errors(out, expected);
    const fp16 = (meta.outputs_fp16 ?? [])[0];
    if (fp16) line.errorVsTorchFp16 = errors(out, readTensor(dir, fp16));
    if (typeof t.torchFp16Error === 'number' && t.torchFp16Error > 0) {
      line.errorOverTorchFp16 = line.error.scaled / t.torchFp16Error;
      line.withinTorchFp16Error = line.error.scaled <= ERROR_FACTOR * t.torchFp16Error;
    }
    for (const x of inputs) onDevice.push(await lib.toDevice(x, 0));
    // The device-I/O path computes the same (complex inputs reach the engine as device views).
    const [deviceOut] = await program.run(onDevice, { outputs: 'device' });
    line.errorDeviceIO = errors(await deviceOut.toHost(), expected);
    deviceOut.dispose();
    line.latencyMs = line.deviceIOMs = await medianMs(REPS, async () => disposeAll(await program.run(onDevice, { outputs: 'device' })));
    line.throughputMs = await throughputMs(program, onDevice);
    line.overlap = OVERLAP;
    line.graphMs = await graphMs(program, inputs);
    line.hostIOMs = await medianMs(20, () => program.run(inputs));
  } finally {
    disposeAll(onDevice);
    await program.dispose();
  }
  return line;
}

/**
 * The device's time per run, timed as PyTorch's graph rows are: the program's one cuda engine
 * replayed as a CUDA graph 100 times in one call (CudaRunner.timeGraph), the median of 5 such
 * samples. A program.run() adds the host's round trips (input copy, launch, output allocation
 * and copy) on top: the latency column.
 */
async function graphMs(program, inputs) {
  const segments = program.data.segments.filter((s) => s.kind === 'engine');
  if (segments.length !== 1) return undefined;
  const runner = await CudaRunner.load(deserializeCudaEngine(segments[0].engine), 0);
  try {
    const feeds = exportIO.engineFeeds(lib, runner, inputs);
    const samples = [];
    for (let i = 0; i < 5; i++) samples.push(await runner.timeGraph(feeds, { repeats: 100 }));
    return median(samples);
  } finally {
    runner.dispose();
  }
}

/** PyTorch's best fp16 latency and throughput (a torch.json from before those keys: its best CUDA-event time). */
const torchBest = (t) => ({ latency: t.bestLatencyMs ?? t.best, throughput: t.bestThroughputMs ?? t.best });

/** The ratios of one row: ours / PyTorch's best, latency against latency and throughput against throughput. */
function ratios(t, o) {
  const best = torchBest(t);
  const r = (ours, theirs) => (typeof ours === 'number' && typeof theirs === 'number' && theirs > 0 ? ours / theirs : undefined);
  return { latency: r(o.latencyMs, best.latency), throughput: r(o.throughputMs, best.throughput) };
}

/** Geometric mean, the count above 1 (ours slower) and the count, of the numbers in `xs`. */
function summarize(xs) {
  const v = xs.filter((x) => typeof x === 'number' && x > 0);
  if (v.length === 0) return { geomean: null, above1: 0, n: 0 };
  return { geomean: Math.exp(v.reduce((a, x) => a + Math.log(x), 0) / v.length), above1: v.filter((x) => x > 1).length, n: v.length };
}

const ms = (x) => (typeof x !== 'number' ? '—' : x < 1 ? x.toFixed(3) : x.toFixed(2));
const pair = (a, b) => (typeof a === 'number' || typeof b === 'number' ? `${ms(a)} / ${ms(b)}` : '—');
/** A message fit for one table cell. */
const cell = (s) => String(s).replace(/[|\r\n]+/g, ' ').slice(0, 90);

function table(rows) {
  const autotune = rows.some((r) => r.torch.times?.maxAutotuneFp16);
  const head = [
    'model',
    'PyTorch eager fp16 latency',
    'reduce-overhead latency / throughput',
    ...(autotune ? ['max-autotune latency / throughput'] : []),
    `ours (cuda ${PRECISION}) latency / throughput`,
    'ours graph replay',
    'ratio latency',
    'ratio throughput',
    "fp16 error, ours / PyTorch's (×)",
    'build s (ours; torch.compile)',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const t = r.torch, o = r.ours ?? {}, times = t.times ?? {};
    const config = (c) => (c === undefined ? '—' : c.error ? `failed: ${cell(c.error)}` : pair(c.latencyMs, c.throughputMs));
    const ratio = ratios(t, o);
    let error = '—';
    if (t.error) error = `PyTorch failed: ${cell(t.error)}`;
    else if (o.failed) error = `failed: ${cell(o.failed)}`;
    else if (typeof o.errorOverTorchFp16 === 'number') error = `${o.errorOverTorchFp16.toFixed(2)}×${o.withinTorchFp16Error ? '' : ` (over ${ERROR_FACTOR}×)`}`;
    else if (o.error) error = `${o.error.scaled.toExponential(1)} (scaled)`;
    const build = `${typeof o.buildS === 'number' ? o.buildS.toFixed(1) : '—'}; ${typeof times.reduceOverheadFp16?.compileS === 'number' ? times.reduceOverheadFp16.compileS.toFixed(1) : '—'}`;
    const cells = [
      r.name,
      ms(times.eagerFp16?.latencyMs),
      config(times.reduceOverheadFp16),
      ...(autotune ? [config(times.maxAutotuneFp16)] : []),
      pair(o.latencyMs, o.throughputMs),
      ms(o.graphMs),
      ratio.latency === undefined ? '—' : ratio.latency.toFixed(2),
      ratio.throughput === undefined ? '—' : ratio.throughput.toFixed(2),
      error,
      build,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const s = summary(rows);
  const g = (x) => (x.geomean === null ? '—' : x.geomean.toFixed(2));
  lines.push('');
  lines.push(
    `geometric mean of the ratios (ours / PyTorch's best; below 1: ours faster): latency ${g(s.latency)} over ${s.latency.n} models, ` +
      `${s.latency.above1} above 1.0; throughput ${g(s.throughput)} over ${s.throughput.n} models, ${s.throughput.above1} above 1.0`,
  );
  return lines.join('\n');
}

function summary(rows) {
  const rs = rows.map((r) => ratios(r.torch, r.ours ?? {}));
  return { latency: summarize(rs.map((r) => r.latency)), throughput: summarize(rs.map((r) => r.throughput)) };
}

/** The first CUDA device as lib reports it (null where the query fails: the runs say why). */
async function deviceInfo() {
  try {
    const report = await lib.devices();
    const d = report.devices[0];
    return {
      name: d.name,
      computeCapability: `${d.computeCapability.major}.${d.computeCapability.minor}`,
      totalMemoryBytes: d.totalMemoryBytes,
      multiprocessorCount: d.multiprocessorCount,
      driver: report.driver.version,
    };
  } catch (error) {
    return { error: `${error.code}: ${error.message}` };
  }
}

async function main() {
  const root = process.argv[2];
  if (!root) {
    console.error('usage: node bench/gpu/models.bench.js DIR   (DIR: bench/gpu/models.py\'s output, with torch.json)');
    process.exit(2);
  }
  const torch = JSON.parse(fs.readFileSync(path.join(root, 'torch.json'), 'utf8'));
  const resultsFile = process.env.RESULTS_JSON || path.join(root, 'results.json');
  const results = {
    date: new Date().toISOString(),
    commit: process.env.GIT_COMMIT || null,
    device: await deviceInfo(),
    torch: torch.find((t) => t.torch)?.torch ?? null,
    torchDevice: torch.find((t) => t.device)?.device ?? null,
    node: process.version,
    tensorrtNode: lib.VERSION,
    precision: PRECISION,
    overlap: OVERLAP,
    reps: REPS,
    models: [],
    summary: null,
  };
  const rows = [];
  const save = () => {
    results.summary = summary(rows);
    fs.writeFileSync(resultsFile, JSON.stringify(results, null, 1));
  };
  for (const t of torch) {
    if (t.error) {
      rows.push({ name: t.name, torch: t });
    } else {
      let ours;
      try {
        ours = await one(path.join(root, t.name), t);
      } catch (error) {
        ours = { name: t.name, failed: `${error.code}: ${error.message}`.slice(0, 400) };
      }
      console.log(JSON.stringify({ ...ours, torch: t }));
      rows.push({ name: t.name, torch: t, ours });
    }
    const r = rows[rows.length - 1];
    const ratio = r.ours ? ratios(t, r.ours) : {};
    results.models.push({ name: t.name, torch: t, ours: r.ours ?? null, ratioLatency: ratio.latency ?? null, ratioThroughput: ratio.throughput ?? null });
    save();
  }
  const md = table(rows);
  const dev = results.device.name ?? results.torchDevice ?? 'unknown device';
  console.log(`\n${dev}, PyTorch ${results.torch}, ${results.date}${results.commit ? `, commit ${results.commit}` : ''}, ours at ${PRECISION}, ms\n`);
  console.log(md);
  if (process.env.TABLE_MD) fs.writeFileSync(process.env.TABLE_MD, `${dev}, PyTorch ${results.torch}, ${results.date}${results.commit ? `, commit ${results.commit}` : ''}, ours at ${PRECISION}, ms\n\n${md}\n`);
  console.log(`\nresults: ${resultsFile}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
