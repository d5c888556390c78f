'use strict';
// GPU runtime benchmarks (one H200 command: scripts/gpu-run.sh). Prints one JSON object.
// Copies: 256 MiB pinned H2D/D2H and D2D through the addon (each an awaited Promise), medians of
// 20 after a warm-up, beside the C++ baseline's numbers when its JSON is given as argv[2]; and
// D2D as a plan of 20 copies in one call (one Promise) against the C++ loop doing the same.
// Launches: JS → one tiny kernel → Promise settled (median of 2,000 round trips), through the
// libuv pool and through the device's completion thread; a plan of 1,000 tiny kernels run launch
// by launch vs replayed as one CUDA graph (median of 50 each), both paths.
const path = require('node:path');
const lib = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

const MIB = 1024 * 1024;

async function medianMs(reps, fn) {
  await fn();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[times.length >> 1], min: times[0] };
}

const TINY = `
extern "C" __global__ void tiny(float* y) { if (threadIdx.x == 0) y[blockIdx.x] += 1.0f; }
`;

/** Tiny-kernel round trips through the completion thread only (run in a child per spin setting). */
async function roundTripOnly() {
  const { DeviceTensor, compileModule, GpuPlan } = lib;
  const module = await compileModule(TINY, ['tiny'], 0, { cacheDir: null });
  const y = await DeviceTensor.allocate('float32', [1024], 0);
  const one = await GpuPlan.create({ steps: [{ kind: 'launch', module: 0, kernel: 0, grid: [1], block: [32], args: [{ pointer: { buffer: 0 } }] }] }, [y], [module]);
  const thread = await medianMs(2000, () => one.run(1, { completion: 'thread' }));
  one.dispose();
  y.dispose();
  module.dispose();
  console.log(JSON.stringify({ median: thread.median * 1e3, min: thread.min * 1e3 }));
}

/** The completion thread's round trip with another TENSORRT_NODE_COMPLETION_SPIN_US (read once per process). */
function roundTripWithSpin(spinUs) {
  const child = require('node:child_process').spawnSync(process.execPath, [__filename, '--round-trip-only'], {
    encoding: 'utf8',
    env: { ...process.env, TENSORRT_NODE_COMPLETION_SPIN_US: String(spinUs) },
  });
  try {
    return JSON.parse(child.stdout.trim().split('\n').pop());
  } catch {
    return { error: `exit ${child.status}: ${child.stdout} ${child.stderr}` };
  }
}

async function main() {
  if (process.argv[2] === '--round-trip-only') return roundTripOnly();
  const baseline = process.argv[2] ? JSON.parse(process.argv[2]) : null;
  const { DeviceTensor, allocatePinnedBuffer, freePinnedBuffer, compileModule, GpuPlan } = lib;
  const binding = require(path.join(__dirname, '..', '..', 'dist', 'gpu', 'binding.js')).gpuBinding();
  const bytes = 256 * MIB;
  const pinned = await allocatePinnedBuffer(0, bytes);
  new Uint8Array(pinned).fill(7);
  const a = await DeviceTensor.allocate('uint8', [bytes], 0);
  const b = await DeviceTensor.allocate('uint8', [bytes], 0);
  const pageable = new Uint8Array(bytes).fill(3);
  const h2d = await medianMs(20, () => binding.gpuCopyHtoD(a.buffer, 0, pinned));
  const d2h = await medianMs(20, () => binding.gpuCopyDtoH(a.buffer, 0, pinned));
  const d2d = await medianMs(20, () => binding.gpuCopyDtoD(b.buffer, 0, a.buffer, 0, bytes));
  // 20 copies in one plan call, one synchronize: the device's copy rate without a Promise per copy.
  const copyPlan = await GpuPlan.create({ steps: [{ kind: 'copy', dst: { buffer: 1 }, src: { buffer: 0 }, bytes }] }, [a, b]);
  const d2dPlan = await medianMs(20, () => copyPlan.run(20));
  const d2dPlan100 = await medianMs(20, () => copyPlan.run(100));
  copyPlan.dispose();
  const h2dStaged = await medianMs(10, () => binding.gpuCopyHtoD(a.buffer, 0, pageable));
  const d2hStaged = await medianMs(10, () => binding.gpuCopyDtoH(a.buffer, 0, pageable));
  freePinnedBuffer(pinned);
  a.dispose();
  b.dispose();
  const gbps = (ms) => bytes / (ms * 1e6);
  const copies = {
    bytes,
    pinnedH2D: { ms: h2d.median, GBs: gbps(h2d.median), ofBaseline: baseline && baseline.h2dMs / h2d.median },
    pinnedD2H: { ms: d2h.median, GBs: gbps(d2h.median), ofBaseline: baseline && baseline.d2hMs / d2h.median },
    d2d: { ms: d2d.median, GBs: gbps(d2d.median), ofBaseline: baseline && baseline.d2dMs / d2d.median },
    d2dPlan20: {
      perCopyMs: d2dPlan.median / 20,
      GBs: gbps(d2dPlan.median / 20),
      ofBaselineBatch: baseline && baseline.d2dBatchPerCopyMs / (d2dPlan.median / 20),
    },
    // The same with 100 copies per run on both sides (copy_baseline.cc's d2dBatch100).
    d2dPlan100: {
      perCopyMs: d2dPlan100.median / 100,
      GBs: gbps(d2dPlan100.median / 100),
      ofBaselineBatch: baseline && baseline.d2dBatch100PerCopyMs / (d2dPlan100.median / 100),
    },
    stagedH2D: { ms: h2dStaged.median, GBs: gbps(h2dStaged.median) },
    stagedD2H: { ms: d2hStaged.median, GBs: gbps(d2hStaged.median) },
    baseline,
  };

  const module = await compileModule(TINY, ['tiny'], 0, { cacheDir: null });
  const y = await DeviceTensor.allocate('float32', [1024], 0);
  const launch = { kind: 'launch', module: 0, kernel: 0, grid: [1], block: [32], args: [{ pointer: { buffer: 0 } }] };
  const one = await GpuPlan.create({ steps: [launch] }, [y], [module]);
  const thread = { completion: 'thread' };
  const pool = { completion: 'pool' };
  const roundTrip = await medianMs(2000, () => one.run(1, pool));
  const roundTripThread = await medianMs(2000, () => one.run(1, thread));
  const roundTripAuto = await medianMs(2000, () => one.run());
  await one.capture();
  const roundTripGraph = await medianMs(2000, () => one.replay(1, pool));
  const roundTripGraphThread = await medianMs(2000, () => one.replay(1, thread));
  one.dispose();
  const many = await GpuPlan.create({ steps: Array.from({ length: 1000 }, () => launch) }, [y], [module]);
  const oneByOne = await medianMs(50, () => many.run(1, pool));
  const oneByOneThread = await medianMs(50, () => many.run(1, thread));
  await many.capture();
  const replay = await medianMs(50, () => many.replay(1, pool));
  const replayThread = await medianMs(50, () => many.replay(1, thread));
  many.dispose();
  y.dispose();
  module.dispose();
  const launches = {
    // 'pool': enqueue and wait on a libuv pool thread; 'thread': enqueue on the JS thread, the
    // device's completion thread waits (spinning up to TENSORRT_NODE_COMPLETION_SPIN_US first).
    completionSpinUs: process.env.TENSORRT_NODE_COMPLETION_SPIN_US ?? '50 (default)',
    tinyKernelRoundTripUs: { median: roundTrip.median * 1e3, min: roundTrip.min * 1e3 },
    tinyKernelRoundTripThreadUs: { median: roundTripThread.median * 1e3, min: roundTripThread.min * 1e3 },
    tinyKernelRoundTripDefaultUs: { median: roundTripAuto.median * 1e3, min: roundTripAuto.min * 1e3 },
    // The C++ floor: a one-thread memset and cuStreamSynchronize, no JS, no thread hop.
    cppTinyOpRoundTripUs: baseline && baseline.tinyOpRoundTripUs,
    tinyKernelRoundTripThreadBySpinUs: { 0: roundTripWithSpin(0), 20: roundTripWithSpin(20), 200: roundTripWithSpin(200) },
    tinyKernelGraphRoundTripUs: { median: roundTripGraph.median * 1e3, min: roundTripGraph.min * 1e3 },
    tinyKernelGraphRoundTripThreadUs: { median: roundTripGraphThread.median * 1e3, min: roundTripGraphThread.min * 1e3 },
    plan1000: {
      launchedOneByOneMs: oneByOne.median,
      perKernelUs: (oneByOne.median * 1e3) / 1000,
      launchedOneByOneThreadMs: oneByOneThread.median,
      graphReplayMs: replay.median,
      perKernelGraphUs: (replay.median * 1e3) / 1000,
      graphReplayThreadMs: replayThread.median,
    },
  };
  console.log(JSON.stringify({ copies, launches }, null, 1));
}

main().catch((error) => {
  console.log(JSON.stringify({ ok: false, code: error.code, message: error.message, stack: error.stack }));
  process.exitCode = 1;
});
