'use strict';
// The onnxruntime backend side by side with onnxruntime-node running the original .onnx
// directly, in one process, with the same thread count (ORT_BENCH_THREADS, default 1):
// the median of warm runs after a warm-up, the first run after compile() against a warm
// run, a .pt2 model (which onnxruntime cannot read at all), and the event loop's delay
// (p99) while a loop of runs goes on. Goals (issue 21): ≤ 1.3× onnxruntime-node on each
// model, first run ≤ 2× a warm run, p99 delay < 5 ms. A third column runs the ONNX model
// the backend generated directly with onnxruntime-node (same options), which separates the
// lowering's cost from the thread hop of a program run; the event loop's delay is also
// measured idle, as the machine's own baseline. The "thread" column says where the program's
// runs went: `caller` (runs on this thread, lib/runtime/in-thread.ts) or `worker`. Uses
// dist/: build first.
const fs = require('node:fs');
const path = require('node:path');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');

const THREADS = Number(process.env.ORT_BENCH_THREADS ?? 1);
const WARMUP = Number(process.env.ORT_BENCH_WARMUP ?? 10);
const RUNS = Number(process.env.ORT_BENCH_RUNS ?? 50);
process.env.TENSORRT_NODE_ORT_INTRA_OP_THREADS = String(THREADS);
process.env.TENSORRT_NODE_ORT_INTER_OP_THREADS = '1';

const ort = require('onnxruntime-node');
const trt = require(path.join(__dirname, '..', 'dist', 'index.js'));
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const MODELS = ['mlp', 'encoder', 'mobilenet_v3_small', 'squeezenet1_1'];

function fixture(name) {
  const dir = path.join(FIXTURES, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const inputs = meta.inputs.map((i) => {
    const b = fs.readFileSync(path.join(dir, i.file));
    const bytes = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    return { name: i.name, dtype: i.dtype, shape: i.shape, data: i.dtype === 'int64' ? new BigInt64Array(bytes) : new Float32Array(bytes) };
  });
  return { dir, meta, inputs };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeRuns(run) {
  for (let i = 0; i < WARMUP; i++) await run();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function direct(f, model = path.join(f.dir, f.meta.files.onnx)) {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => (feeds[name] = new ort.Tensor(f.inputs[i].dtype, f.inputs[i].data, f.inputs[i].shape)));
  const ms = await timeRuns(() => session.run(feeds));
  await session.release();
  return ms;
}

async function viaProgram(file, f) {
  const program = await trt.compile(file, { backend: 'onnxruntime', inputs: f.inputs.map((i) => ({ shape: i.shape })) });
  const tensors = f.inputs.map((i) => new trt.Tensor(i.dtype, i.shape, i.data));
  const t0 = performance.now();
  await program.run(tensors);
  const first = performance.now() - t0;
  const segment = program.data.segments.find((s) => s.kind === 'tensorrt');
  const { unpackOrtEngine } = require(path.join(__dirname, '..', 'dist', 'backends', 'onnxruntime'));
  const lowered = unpackOrtEngine(segment.engine).model;
  const warm = await timeRuns(() => program.run(tensors));
  return { program, tensors, first, warm, lowered: lowered.slice(), thread: program.runsInThread ? 'caller' : 'worker' };
}

async function eventLoopDelay(program, tensors) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) await program.run(tensors);
  const seconds = (performance.now() - t0) / 1000;
  h.disable();
  // The same time with nothing running: what the machine alone does to the loop.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  idle.disable();
  return { busy: h.percentile(99) / 1e6, idle: idle.percentile(99) / 1e6 };
}

(async () => {
  const rows = [];
  let delay;
  for (const name of MODELS) {
    const f = fixture(name);
    const ortMs = await direct(f);
    const p = await viaProgram(path.join(f.dir, f.meta.files.onnx), f);
    const sessionOnly = await direct(f, p.lowered);
    rows.push({ model: name, ort: ortMs, ours: p.warm, session: sessionOnly, first: p.first, thread: p.thread });
    if (name === 'mobilenet_v3_small') delay = await eventLoopDelay(p.program, p.tensors);
    await p.program.dispose();
  }
  const f = fixture('mobilenet_v3_small');
  const pt2 = await viaProgram(path.join(f.dir, f.meta.files.pt2), f);
  await pt2.program.dispose();

  const fmt = (x) => x.toFixed(3);
  console.log(`onnxruntime-node ${ort.env.versions.node ?? ort.env.versions.common}, ${THREADS} intra-op thread(s), median of ${RUNS} runs after ${WARMUP} warm-up runs`);
  console.log('| model | onnxruntime-node, original .onnx (ms) | tensorrt-node program.run() (ms) | ratio (goal ≤ 1.3) | generated ONNX, same session options (ms) | ratio | first run after compile (ms) | first / warm (goal ≤ 2) | thread |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  let ok = true;
  for (const r of rows) {
    const ratio = r.ours / r.ort;
    const firstRatio = r.first / r.ours;
    ok &&= ratio <= 1.3 && firstRatio <= 2;
    console.log(`| ${r.model} | ${fmt(r.ort)} | ${fmt(r.ours)} | ${ratio.toFixed(2)} | ${fmt(r.session)} | ${(r.session / r.ort).toFixed(2)} | ${fmt(r.first)} | ${firstRatio.toFixed(2)} | ${r.thread} |`);
  }
  console.log(`| mobilenet_v3_small (.pt2; onnxruntime cannot read it) | — | ${fmt(pt2.warm)} | — | — | — | ${fmt(pt2.first)} | ${(pt2.first / pt2.warm).toFixed(2)} | ${pt2.thread} |`);
  console.log(`event-loop delay p99 during 200 runs of mobilenet_v3_small: ${delay.busy.toFixed(2)} ms (goal < 5 ms); idle for as long: ${delay.idle.toFixed(2)} ms`);
  console.log(`load average ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(', ')} on ${require('node:os').cpus().length} CPUs`);
  ok &&= delay.busy < 5;
  console.log(ok ? 'all goals met' : 'some goals not met (see the table)');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
