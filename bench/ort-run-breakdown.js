'use strict';
// Where the microseconds of one warm program.run() go on the in-thread onnxruntime path:
// each layer of the call timed from the outside in, interleaved round-robin so
// that a busy machine slows every layer alike. A layer's own cost is its time minus the time
// of the layer it calls. (A stall guard of a busy machine sends some program.run() calls to
// the worker: their count is printed; ORT_BENCH_NO_STALL_GUARD=1 turns the guard off for
// this measurement, to time the path itself on a machine that busy.) Usage: node bench/ort-run-breakdown.js [model] (default mlp);
// ORT_BENCH_RUNS rounds (default 3000). Uses dist/: build first. Reads the program's internals.
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

process.env.TENSORRT_NODE_ORT_INTRA_OP_THREADS = '1';
process.env.TENSORRT_NODE_ORT_INTER_OP_THREADS = '1';
const ort = require('onnxruntime-node');
const trt = require(path.join(__dirname, '..', 'dist', 'index.js'));

const MODEL = process.argv[2] ?? 'mlp';
const ROUNDS = Number(process.env.ORT_BENCH_RUNS ?? 3000);
const dir = path.join(__dirname, '..', 'test', 'fixtures', MODEL);
const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
const inputs = meta.inputs.map((i) => {
  const b = fs.readFileSync(path.join(dir, i.file));
  const bytes = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  return new trt.Tensor(i.dtype, i.shape, i.dtype === 'int64' ? new BigInt64Array(bytes) : new Float32Array(bytes));
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

(async () => {
  const program = await trt.compile(path.join(dir, meta.files.onnx), { backend: 'onnxruntime', inputs: meta.inputs.map((i) => ({ shape: i.shape })) });
  if (!program.runsInThread) throw new Error(`${MODEL} does not run on the caller's thread`);
  const here = program.inThread;
  const noGuard = process.env.ORT_BENCH_NO_STALL_GUARD === '1';
  if (noGuard) Object.defineProperty(here, 'stalling', { get: () => false });
  const executor = here.executor;
  const engine = executor.segments[0].engine;
  const session = engine.session;
  const feedsByValue = Object.create(null);
  executor.data.inputs.forEach((io, i) => (feedsByValue[io.value] = inputs[i]));
  const ortFeeds = Object.create(null);
  session.inputNames.forEach((name, i) => (ortFeeds[name] = new ort.Tensor(inputs[i].dtype, inputs[i].data, [...inputs[i].shape])));
  const original = await ort.InferenceSession.create(path.join(dir, meta.files.onnx), { executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 });
  const originalFeeds = Object.create(null);
  original.inputNames.forEach((name, i) => (originalFeeds[name] = new ort.Tensor(inputs[i].dtype, inputs[i].data, [...inputs[i].shape])));

  // Both paths where the build has them: the fast path (fastCheck, runPrepared, the engine's
  // prepared run) and the general one (client.check, run, executor, engine.run).
  const prepared = here.prepared;
  const elements = inputs.reduce((n, t) => n + t.size, 0);
  const layers = {
    'program.run()': () => program.run(inputs),
    ...(program.fastCheck && { 'fast check (fastCheck.check)': async () => program.fastCheck.check(inputs) }),
    ...(prepared && { 'inThread.runPrepared()': () => here.runPrepared(inputs, elements) }),
    ...(prepared && { 'prepared stage() + start()': () => prepared.start(prepared.stage(inputs)) }),
    'general check (client.check)': async () => program.client.check(inputs),
    'inThread.run() (general)': () => here.run(inputs),
    'executor.run()': () => executor.run(inputs),
    'engine.run()': () => engine.run(feedsByValue),
    'session.run() (generated model)': () => session.run(ortFeeds),
    'onnxruntime-node, original .onnx': () => original.run(originalFeeds),
    'setImmediate round trip': () => new Promise((r) => setImmediate(r)),
  };
  let workerRuns = 0;
  const runChecked = program.client.runChecked.bind(program.client);
  program.client.runChecked = (x) => {
    workerRuns++;
    return runChecked(x);
  };
  const names = Object.keys(layers);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS + 200; r++) {
    for (const n of names) {
      const t0 = performance.now();
      await layers[n]();
      if (r >= 200) times[n].push((performance.now() - t0) * 1000);
    }
  }
  console.log(`${MODEL}: median µs of ${ROUNDS} interleaved rounds (load ${require('node:os').loadavg()[0].toFixed(1)}); program.run() calls that went to the worker: ${workerRuns}${noGuard ? ' (stall guard off)' : ''}`);
  console.log('| layer | µs |');
  console.log('| --- | --- |');
  for (const n of names) console.log(`| ${n} | ${median(times[n]).toFixed(1)} |`);
  await program.dispose();
  await original.release();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
