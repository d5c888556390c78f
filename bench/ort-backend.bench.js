'use strict';
// The onnxruntime backend side by side with onnxruntime-node running the original .onnx
// directly, in one process, with the same thread count (ORT_BENCH_THREADS, default 1):
// the median of warm runs after a warm-up, the first run after compile() against a warm
// run, a .pt2 model (which onnxruntime cannot read at all), and the event loop's delay
// (p99) while a loop of runs goes on. Goals: ≤ 1.3× onnxruntime-node on each
// model, first run ≤ 2× a warm run (the median first run of ORT_BENCH_FIRST_COMPILES fresh
// compiles, default 5, with the slowest beside it), p99 delay < 5 ms. A third column runs the ONNX model
// the backend generated directly with onnxruntime-node (same options), which separates the
// lowering's cost from the thread hop of a program run; the event loop's delay is also
// measured idle, as the machine's own baseline. The three runs of a model are timed in turns
// (one of each per round), so that a load that comes and goes hits them alike. The "thread"
// column says where the program runs (`caller`: this thread, lib/runtime/in-thread.ts, or
// `worker`), and the last how many of its timed runs went to its worker anyway (a run
// predicted over the budget, or the stall guard of a busy machine). ORT_BENCH_WARMUP and
// ORT_BENCH_RUNS set the rounds (default 10 and 50), ORT_BENCH_MODELS a comma-separated
// subset of the models (the .pt2 and event-loop rows need mobilenet_v3_small). Uses dist/:
// build first.
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
const { unpackOrtEngine } = require(path.join(__dirname, '..', 'dist', 'backends', 'onnxruntime'));
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const MODELS = process.env.ORT_BENCH_MODELS?.split(',') ?? ['mlp', 'encoder', 'mobilenet_v3_small', 'squeezenet1_1'];

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

/**
 * The median time of each of `runs` (name → () => Promise), timed in turns (one run of each
 * per round, after WARMUP rounds), so that a machine whose load changes slows them alike.
 */
async function timeInterleaved(runs) {
  const names = Object.keys(runs);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < WARMUP + RUNS; r++) {
    for (const n of names) {
      const t0 = performance.now();
      await runs[n]();
      if (r >= WARMUP) times[n].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n])]));
}

/** An onnxruntime-node session of `model` (a path or bytes) with the bench's thread count, and a run of it on the fixture's inputs. */
async function directSession(f, model) {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => (feeds[name] = new ort.Tensor(f.inputs[i].dtype, f.inputs[i].data, f.inputs[i].shape)));
  return { run: () => session.run(feeds), release: () => session.release() };
}

/** How many times each model is compiled to time its first run (one sample is mostly the machine's noise at tens of microseconds). */
const FIRST_RUN_COMPILES = Number(process.env.ORT_BENCH_FIRST_COMPILES ?? 5);

/**
 * A program of `file` compiled for the onnxruntime backend, with the first run after compile()
 * timed on FIRST_RUN_COMPILES fresh compiles (`first`: their median, `firstMax`: the slowest);
 * the last program is kept. `workerRuns` counts its runs that went to its worker.
 */
async function compiledProgram(file, f) {
  const tensors = f.inputs.map((i) => new trt.Tensor(i.dtype, i.shape, i.data));
  const firsts = [];
  let program;
  for (let k = 0; k < FIRST_RUN_COMPILES; k++) {
    await program?.dispose();
    program = await trt.compile(file, { backend: 'onnxruntime', inputs: f.inputs.map((i) => ({ shape: i.shape })) });
    const t0 = performance.now();
    await program.run(tensors);
    firsts.push(performance.now() - t0);
  }
  const first = median(firsts);
  const firstMax = Math.max(...firsts);
  const counter = { workerRuns: 0 };
  const runChecked = program.client.runChecked.bind(program.client);
  program.client.runChecked = (inputs) => {
    counter.workerRuns++;
    return runChecked(inputs);
  };
  return { program, tensors, first, firstMax, counter, run: () => program.run(tensors), thread: () => (program.runsInThread ? 'caller' : 'worker') };
}

async function viaProgram(file, f) {
  const p = await compiledProgram(file, f);
  const { warm } = await timeInterleaved({ warm: p.run });
  return { ...p, warm, thread: p.thread() };
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
    const original = await directSession(f, path.join(f.dir, f.meta.files.onnx));
    const p = await compiledProgram(path.join(f.dir, f.meta.files.onnx), f);
    const segment = p.program.data.segments.find((s) => s.kind === 'engine');
    const generated = await directSession(f, unpackOrtEngine(segment.engine).model.slice());
    const before = p.counter.workerRuns;
    const ms = await timeInterleaved({ ort: original.run, ours: p.run, session: generated.run });
    const workerRuns = p.counter.workerRuns - before;
    rows.push({ model: name, ort: ms.ort, ours: ms.ours, session: ms.session, first: p.first, firstMax: p.firstMax, thread: p.thread(), workerRuns });
    await Promise.all([original.release(), generated.release()]);
    if (name === 'mobilenet_v3_small') delay = await eventLoopDelay(p.program, p.tensors);
    await p.program.dispose();
  }
  const f = fixture('mobilenet_v3_small');
  const pt2 = MODELS.includes('mobilenet_v3_small') ? await viaProgram(path.join(f.dir, f.meta.files.pt2), f) : undefined;
  await pt2?.program.dispose();

  const fmt = (x) => x.toFixed(3);
  console.log(`onnxruntime-node ${ort.env.versions.node ?? ort.env.versions.common}, ${THREADS} intra-op thread(s), median of ${RUNS} runs after ${WARMUP} warm-up runs, interleaved`);
  console.log(`first run after compile: the median (and the slowest) of ${FIRST_RUN_COMPILES} fresh compiles`);
  console.log('| model | onnxruntime-node, original .onnx (ms) | tensorrt-node program.run() (ms) | ratio (goal ≤ 1.3) | generated ONNX, same session options (ms) | ratio | first run after compile (ms) | first / warm (goal ≤ 2) | slowest first run (ms) | thread | timed runs on the worker |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  let ok = true;
  for (const r of rows) {
    const ratio = r.ours / r.ort;
    const firstRatio = r.first / r.ours;
    ok &&= ratio <= 1.3 && firstRatio <= 2;
    console.log(`| ${r.model} | ${fmt(r.ort)} | ${fmt(r.ours)} | ${ratio.toFixed(2)} | ${fmt(r.session)} | ${(r.session / r.ort).toFixed(2)} | ${fmt(r.first)} | ${firstRatio.toFixed(2)} | ${fmt(r.firstMax)} | ${r.thread} | ${r.workerRuns}/${WARMUP + RUNS} |`);
  }
  if (pt2 !== undefined) console.log(`| mobilenet_v3_small (.pt2; onnxruntime cannot read it) | — | ${fmt(pt2.warm)} | — | — | — | ${fmt(pt2.first)} | ${(pt2.first / pt2.warm).toFixed(2)} | ${fmt(pt2.firstMax)} | ${pt2.thread} | ${pt2.counter.workerRuns}/${WARMUP + RUNS} |`);
  if (delay !== undefined) console.log(`event-loop delay p99 during 200 runs of mobilenet_v3_small: ${delay.busy.toFixed(2)} ms (goal < 5 ms); idle for as long: ${delay.idle.toFixed(2)} ms`);
  console.log(`load average ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(', ')} on ${require('node:os').cpus().length} CPUs`);
  ok &&= delay === undefined || delay.busy < 5;
  console.log(ok ? 'all goals met' : 'some goals not met (see the table)');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
