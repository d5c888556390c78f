'use strict';
// The addon from worker threads: two workers and the main thread at once each compile and load
// a kernel module, allocate, run a kernel plan, a cuBLASLt GEMM and a cuDNN convolution, read back
// and compare with the host (20 rounds each, alternating the pool and the completion-thread
// paths, so their GPU work overlaps); V8's external memory of each thread counts its own
// DeviceTensors. Then a worker is terminated in the middle of a long
// plan run with undisposed tensors, and one exits on its own with undisposed tensors: neither
// crashes the process, the main thread's GPU keeps working, and live allocations and device free
// memory return to where they were (finalizers at environment teardown free what was left).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { gpuCheck, assert, randomFloats, lib, AXPB_SPIN_SOURCE: SOURCE } = require('./check-util');

const { matmul } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'linalg.js'));
const { conv } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'conv.js'));

const N = 1 << 20;
const ROUNDS = 20;

function maxScaledError(got, want, bound) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / (bound[i] || 1));
  return worst;
}
const abs = (t) => new t.constructor(t.dtype, t.shape, t.data.map(Math.abs));

/** One thread's work: kernel, GEMM and convolution rounds, each checked against the host. */
async function workload(tag, seed, cacheDir) {
  const { Tensor, toDevice, DeviceTensor, compileModule, GpuPlan } = lib;
  const module = await compileModule(SOURCE, ['axpb', 'spin'], 0, { cacheDir, name: 'worker.cu' });
  const x = randomFloats(N, seed);
  const a = 1.5 + seed, b = -0.25 * seed;
  const dx = await toDevice(new Tensor('float32', [N], x), 0);
  const dy = await DeviceTensor.allocate('float32', [N], 0);

  // External memory of this thread's isolate grows by the tensors' bytes and shrinks on dispose.
  const externalBefore = lib.gpuAllocationStats().isolateExternalBytes;
  const probe = await DeviceTensor.allocate('float32', [16 << 20], 0); // 64 MiB
  const externalWith = lib.gpuAllocationStats().isolateExternalBytes;
  probe.dispose();
  const externalAfter = lib.gpuAllocationStats().isolateExternalBytes;
  const external = { grewBy: externalWith - externalBefore, shrankBy: externalWith - externalAfter };
  // The isolate's external total also moves when V8 collects unrelated ArrayBuffers between the
  // readings (on the H200, 2026-12-01, it grew by 13 KB less than the tensor), so allow 1 MiB
  // either way: without the accounting it would not move at all.
  const near64MiB = (bytes) => Math.abs(bytes - (64 << 20)) <= 1 << 20;
  assert(near64MiB(external.grewBy) && near64MiB(external.shrankBy), `${tag}: external memory follows a 64 MiB DeviceTensor (${JSON.stringify(external)})`);

  const axpb = await GpuPlan.create(
    { steps: [{ kind: 'launch', module: 0, kernel: module.kernelIndex('axpb'), grid: [Math.ceil(N / 256)], block: [256],
      args: [{ pointer: { buffer: 0 } }, { pointer: { buffer: 1 } }, { scalar: 'f32', value: a }, { scalar: 'f32', value: b }, { scalar: 'u32', value: N }] }] },
    [dx, dy], [module],
  );
  const [m, k, n] = [64, 48, 32];
  const A = new Tensor('float32', [m, k], randomFloats(m * k, seed + 10));
  const B = new Tensor('float32', [k, n], randomFloats(k * n, seed + 11));
  const wantD = matmul(A, B).data;
  const boundD = matmul(abs(A), abs(B)).data;
  const [dA, dB, dD] = [await toDevice(A, 0), await toDevice(B, 0), await DeviceTensor.allocate('float32', [m, n], 0)];
  const gemm = await GpuPlan.create({ steps: [{ kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, m, n, k }] }, [dA, dB, dD]);
  const X = new Tensor('float32', [1, 4, 12, 12], randomFloats(4 * 144, seed + 12));
  const W = new Tensor('float32', [6, 4, 3, 3], randomFloats(6 * 36, seed + 13));
  const wantY = conv(X, W, undefined, { padding: [1, 1], stride: [1, 1], dilation: [1, 1], groups: 1 });
  const boundY = conv(abs(X), abs(W), undefined, { padding: [1, 1], stride: [1, 1], dilation: [1, 1], groups: 1 }).data;
  const [dX, dW, dY] = [await toDevice(X, 0), await toDevice(W, 0), await DeviceTensor.allocate('float32', wantY.shape, 0)];
  const convPlan = await GpuPlan.create(
    { steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: X.shape, weight: W.shape, pads: [1, 1] }] },
    [dX, dW, dY],
  );

  let worstKernelUlps = 0, worstGemm = 0, worstConv = 0, mismatches = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Both completion paths: a pool thread, and the device's completion thread through this
    // thread's thread-safe function.
    const completion = round % 2 ? 'thread' : 'pool';
    await Promise.all([axpb.run(1, { completion }), gemm.run(1, { completion }), convPlan.run(1, { completion })]);
    const [y, d, yc] = await Promise.all([dy.toHost(), dD.toHost(), dY.toHost()]);
    for (let i = 0; i < N; i += 97) {
      const want = Math.fround(a * x[i] + b);
      if (y.data[i] !== want) {
        mismatches++;
        worstKernelUlps = Math.max(worstKernelUlps, Math.abs(y.data[i] - want) / (Math.abs(want) * 2 ** -23 || 2 ** -149));
      }
    }
    worstGemm = Math.max(worstGemm, maxScaledError(d.data, wantD, boundD));
    worstConv = Math.max(worstConv, maxScaledError(yc.data, wantY.data, boundY));
  }
  const result = { tag, rounds: ROUNDS, kernelMismatches: mismatches, worstKernelUlps, worstGemm, worstConv, external };
  assert(worstKernelUlps <= 1, `${tag}: axpb matches the host (${JSON.stringify(result)})`);
  assert(worstGemm < 1e-5 && worstConv < 1e-5, `${tag}: GEMM and convolution match the CPU kernels (${JSON.stringify(result)})`);
  for (const p of [axpb, gemm, convPlan]) p.dispose();
  for (const t of [dx, dy, dA, dB, dD, dX, dW, dY]) t.dispose();
  module.dispose();
  return result;
}

/** A worker that leaves tensors, a plan and a module undisposed and is killed mid-run (or exits). */
async function abandon(mode, cacheDir) {
  const { toDevice, Tensor, DeviceTensor, compileModule, GpuPlan } = lib;
  const module = await compileModule(SOURCE, ['axpb', 'spin'], 0, { cacheDir, name: 'worker.cu' });
  const keep = [];
  for (let i = 0; i < 4; i++) keep.push(await DeviceTensor.allocate('float32', [8 << 20], 0)); // 4 × 32 MiB
  const y = await toDevice(new Tensor('float32', [256], new Float32Array(256)), 0);
  const plan = await GpuPlan.create(
    { steps: [{ kind: 'launch', module: 0, kernel: module.kernelIndex('spin'), grid: [1], block: [256], args: [{ pointer: { buffer: 0 } }, { scalar: 'u32', value: 1 << 20 }] }] },
    [y], [module],
  );
  globalThis.keepAlive = { keep, y, plan, module };
  if (mode === 'terminate') {
    // A long run in flight (plus a pending read-back) when the main thread terminates us.
    const running = Promise.all([plan.run(100), plan.run(100, { completion: 'thread' })]);
    const reading = keep[0].toHost();
    parentPort.postMessage({ started: true });
    await Promise.all([running, reading]);
    parentPort.postMessage({ finished: true });
  } else {
    parentPort.postMessage({ started: true, exiting: true });
  }
}

if (!isMainThread) {
  const { role, seed, cacheDir } = workerData;
  const job = role === 'work' ? workload(`worker ${seed}`, seed, cacheDir) : abandon(role, cacheDir);
  job.then(
    (result) => parentPort.postMessage({ result }),
    (error) => parentPort.postMessage({ error: { code: error.code, message: error.message, stack: error.stack } }),
  );
} else {
  const runWorker = (data, onMessage) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(__filename, { workerData: data });
      const messages = [];
      worker.on('message', (message) => {
        messages.push(message);
        if (onMessage) onMessage(message, worker);
      });
      worker.on('error', reject);
      worker.on('exit', (code) => resolve({ code, messages }));
    });

  gpuCheck('worker-threads', async () => {
    const { trimDevicePool, deviceMemoryInfo, synchronizeDevice, gpuAllocationStats } = lib;
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-worker-cache-'));
    const summary = {};
    try {
      // Warm up here first: library handles and staging buffers are per process and stay.
      summary.warmUp = await workload('main (warm-up)', 1, cacheDir);
      const settle = async () => {
        if (global.gc) global.gc();
        await synchronizeDevice(0);
        await trimDevicePool(0, 0);
        return { stats: gpuAllocationStats(), memory: await deviceMemoryInfo(0) };
      };
      const before = await settle();
      summary.before = { liveBuffers: before.stats.liveBuffers, liveBytes: before.stats.liveBytes, freeBytes: before.memory.freeBytes };

      const t0 = process.hrtime.bigint();
      const [w1, w2, main] = await Promise.all([
        runWorker({ role: 'work', seed: 2, cacheDir }),
        runWorker({ role: 'work', seed: 3, cacheDir }),
        workload('main', 4, cacheDir),
      ]);
      summary.concurrentMs = Number(process.hrtime.bigint() - t0) / 1e6;
      summary.concurrent = { main, workers: [w1, w2] };
      for (const w of [w1, w2]) {
        const failure = w.messages.find((m) => m.error);
        assert(!failure, `a worker's GPU work succeeds (${JSON.stringify(failure)})`);
        assert(w.code === 0 && w.messages.some((m) => m.result), `a worker finishes with a result (exit ${w.code}, ${JSON.stringify(w.messages)})`);
      }

      const killed = await runWorker({ role: 'terminate', cacheDir }, (message, worker) => {
        if (message.started) setTimeout(() => worker.terminate(), 20);
      });
      summary.terminated = { exitCode: killed.code, messages: killed.messages };
      assert(killed.messages.some((m) => m.started), `the terminated worker got as far as its run (${JSON.stringify(killed.messages)})`);
      assert(!killed.messages.some((m) => m.error), `the terminated worker had no GPU error before termination (${JSON.stringify(killed.messages)})`);
      const exited = await runWorker({ role: 'exit', cacheDir });
      summary.exited = { exitCode: exited.code, messages: exited.messages };
      assert(exited.code === 0, `a worker leaving undisposed tensors exits cleanly (exit ${exited.code})`);

      // The main thread's GPU still works after both.
      summary.after = await workload('main (after termination)', 5, cacheDir);
      const after = await settle();
      summary.leak = {
        liveBuffers: after.stats.liveBuffers - before.stats.liveBuffers,
        liveBytes: after.stats.liveBytes - before.stats.liveBytes,
        finalizedBuffers: after.stats.finalizedBuffers,
        freeBytesDifference: after.memory.freeBytes - before.memory.freeBytes,
      };
      assert(summary.leak.liveBuffers === 0 && summary.leak.liveBytes === 0, `no DeviceBuffer outlives its worker (${JSON.stringify(summary.leak)})`);
      // Module code and plan streams take device memory outside the pool; 8 MiB is far below the
      // 128 MiB each abandoning worker left, so a leaked tensor cannot hide under it.
      assert(summary.leak.freeBytesDifference > -(8 << 20), `device free memory returns to where it was (${JSON.stringify(summary.leak)})`);
      return summary;
    } finally {
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });
}
