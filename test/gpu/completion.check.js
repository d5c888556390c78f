'use strict';
// The pool-free completion path (run/replay with {completion: 'thread'}): results match the host
// and the pool path; 2,000 runs in flight at once over 4 plans all settle; a failing launch is a
// typed E_CUDA and the next run works; a Promise left pending keeps the process alive until it
// settles; and the round trip of a tiny kernel through each path (the goal is <= 20 µs).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { gpuCheck, assert, rejection, randomFloats, AXPB_SPIN_SOURCE: SOURCE } = require('./check-util');

async function medianUs(reps, fn) {
  for (let i = 0; i < 50; i++) await fn();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  times.sort((a, b) => a - b);
  return { median: times[times.length >> 1], p10: times[Math.floor(times.length / 10)], p90: times[Math.floor((times.length * 9) / 10)] };
}

// A child that starts a ~0.5 s GPU run through the completion thread and never awaits it: it
// must print when the run settles (the pending job keeps the event loop alive) and exit 0.
const CHILD = `
  const lib = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'index.js'))});
  (async () => {
    const module = await lib.compileModule(${JSON.stringify(SOURCE)}, ['axpb', 'spin'], 0, { cacheDir: null });
    const y = await lib.DeviceTensor.allocate('float32', [256], 0);
    const plan = await lib.GpuPlan.create({ steps: [{ kind: 'launch', module: 0, kernel: 1, grid: [1], block: [256], args: [{ pointer: { buffer: 0 } }, { scalar: 'u32', value: 1 << 20 }] }] }, [y], [module]);
    const t0 = Date.now();
    plan.run(100, { completion: 'thread' }).then(() => console.log(JSON.stringify({ settledAfterMs: Date.now() - t0 })), (e) => console.log(JSON.stringify({ error: e.message })));
  })();
`;

gpuCheck('completion', async (lib) => {
  const { Tensor, toDevice, DeviceTensor, compileModule, GpuPlan } = lib;
  const summary = {};
  const module = await compileModule(SOURCE, ['axpb', 'spin'], 0, { cacheDir: null, name: 'completion.cu' });
  const n = 1 << 20;
  const x = randomFloats(n, 5);
  const dx = await toDevice(new Tensor('float32', [n], x), 0);
  const ys = [];
  const plans = [];
  for (let p = 0; p < 4; p++) {
    const y = await DeviceTensor.allocate('float32', [n], 0);
    ys.push(y);
    plans.push(await GpuPlan.create(
      { steps: [{ kind: 'launch', module: 0, kernel: 0, grid: [n / 256], block: [256],
        args: [{ pointer: { buffer: 0 } }, { pointer: { buffer: 1 } }, { scalar: 'f32', value: p + 1 }, { scalar: 'f32', value: -p }, { scalar: 'u32', value: n }] }] },
      [dx, y], [module],
    ));
  }

  // Results: the thread path gives the same bytes as the pool path, and the host's values.
  await plans[0].run(1, { completion: 'thread' });
  const viaThread = (await ys[0].toHost()).data;
  await plans[0].run(1);
  const viaPool = (await ys[0].toHost()).data;
  let mismatches = 0;
  for (let i = 0; i < n; i++) if (viaThread[i] !== Math.fround(x[i] * 1 + 0)) mismatches++;
  summary.results = { mismatchesWithHost: mismatches, sameAsPool: Buffer.compare(Buffer.from(viaThread.buffer), Buffer.from(viaPool.buffer)) === 0 };
  assert(mismatches === 0 && summary.results.sameAsPool, `thread-path results (${JSON.stringify(summary.results)})`);

  // 2,000 in flight over 4 plans (4 streams), graphs and plain runs mixed.
  for (const plan of plans) await plan.capture();
  const t0 = process.hrtime.bigint();
  const settled = await Promise.all(Array.from({ length: 2000 }, (_, i) =>
    (i % 3 ? plans[i % 4].run(1, { completion: 'thread' }) : plans[i % 4].replay(1, { completion: 'thread' })).then(() => 1)));
  summary.inFlight = { settled: settled.length, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
  assert(settled.length === 2000, 'all 2,000 settle');
  for (let p = 0; p < 4; p++) {
    const y = (await ys[p].toHost()).data;
    for (let i = 0; i < n; i += 4099) assert(y[i] === Math.fround((p + 1) * x[i] - p), `plan ${p} element ${i} after 2,000 runs`);
  }

  // A launch the driver refuses (4,096 threads per block) rejects with its error; the next run works.
  const bad = await GpuPlan.create({ steps: [{ kind: 'launch', module: 0, kernel: 0, grid: [1], block: [4096],
    args: [{ pointer: { buffer: 0 } }, { pointer: { buffer: 1 } }, { scalar: 'f32', value: 1 }, { scalar: 'f32', value: 0 }, { scalar: 'u32', value: n }] }] }, [dx, ys[0]], [module]);
  const error = await rejection(bad.run(1, { completion: 'thread' }), 'a launch of 4,096 threads per block');
  summary.badLaunch = { code: error.code, call: error.details && error.details.call, step: error.details && error.details.step, message: error.message };
  assert(error.code === 'E_CUDA' && summary.badLaunch.call === 'cuLaunchKernel' && summary.badLaunch.step === 0, `bad launch is E_CUDA from cuLaunchKernel at step 0 (${JSON.stringify(summary.badLaunch)})`);
  bad.dispose();
  await plans[1].run(1, { completion: 'thread' });

  // Round trips of a tiny kernel, each path.
  const y1 = await DeviceTensor.allocate('float32', [256], 0);
  const tiny = await GpuPlan.create({ steps: [{ kind: 'launch', module: 0, kernel: 1, grid: [1], block: [32], args: [{ pointer: { buffer: 0 } }, { scalar: 'u32', value: 1 }] }] }, [y1], [module]);
  summary.roundTripUs = {
    pool: await medianUs(1000, () => tiny.run()),
    thread: await medianUs(1000, () => tiny.run(1, { completion: 'thread' })),
  };
  tiny.dispose();
  y1.dispose();

  const child = spawnSync(process.execPath, ['-e', CHILD], { encoding: 'utf8', timeout: 120_000 });
  summary.pendingKeepsAlive = { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr.trim() };
  assert(child.status === 0 && /settledAfterMs/.test(child.stdout), `a pending thread-path run keeps the process alive until it settles (${JSON.stringify(summary.pendingKeepsAlive)})`);

  for (const plan of plans) plan.dispose();
  for (const t of [dx, ...ys]) t.dispose();
  module.dispose();
  return summary;
});
