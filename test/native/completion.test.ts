/**
 * The pool-free completion path (native/gpu/completion.cc) and the addon in worker threads,
 * against the fake CUDA driver with runtime entry points (fixtures/fake_cuda.c, FAKE_RUNTIME):
 * its memsets and events complete at once, so what is tested here is the plumbing (events handed
 * to the device's completion thread, Promises settled through each environment's thread-safe
 * function, leases released, environments torn down with work out), not GPU timing. The GPU
 * checks (test/gpu/worker-threads.check.js, completion.check.js) run the same on real hardware.
 * Each scenario runs in its own node process: the addon keeps the driver it opened.
 */
import * as path from 'node:path';

import { DIST_INDEX, runLibScenario } from '../helpers/built-package';
import { useFakeRuntimeDriver } from '../helpers/fake-libs';

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

const fake = useFakeRuntimeDriver('runtime');

/** Runs `body` (async, `lib` = the package) in a child process against the fake driver. */
const scenario = (body: string) => runLibScenario(body, { TENSORRT_NODE_CUDA_LIBRARY: fake.driver });

const MEMSET_PLAN = `
  const t = await lib.DeviceTensor.allocate('float32', [16], 0);
  const memset = (value) => lib.GpuPlan.create({ steps: [{ kind: 'memset', dst: { buffer: 0 }, bytes: 64, value }] }, [t]);
`;

describeOnLinux('completion thread (fake driver)', () => {
  test('runs settle from the completion thread, 200 at once too; the plan and buffer are free afterwards; the process exits by itself', () => {
    const { status, result, stderr } = scenario(`${MEMSET_PLAN}
      const plan = await memset(1);
      const first = await plan.run(3, { completion: 'thread' });
      const settled = await Promise.all(Array.from({ length: 200 }, (_, i) => plan.run(1, { completion: i % 2 ? 'thread' : 'pool' }).then(() => 1)));
      plan.dispose(); // refused while a run is in flight: works only if every job released the plan
      t.dispose();
      return { first: first === undefined, settled: settled.length, disposed: t.disposed, stats: lib.gpuAllocationStats() };`);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(result).toMatchObject({ first: true, settled: 200, disposed: true, stats: { liveBuffers: 0, liveBytes: 0, finalizedBuffers: 0, pinnedBytes: 0 } });
  });

  test('a failing enqueue rejects with the typed error naming the step; the next run works; dispose waits for no one', () => {
    const { status, result } = scenario(`${MEMSET_PLAN}
      const bad = await memset(255);
      const error = await bad.run(2, { completion: 'thread' }).catch((e) => e);
      let disposeWhileRunning = null;
      const good = await memset(7);
      const running = good.run(1, { completion: 'thread' });
      try { good.dispose(); } catch (e) { disposeWhileRunning = e.code; }
      await running;
      good.dispose();
      bad.dispose();
      t.dispose();
      return { name: error.name, code: error.code, message: error.message, step: error.details.step, call: error.details.call, disposeWhileRunning };`);
    expect(status).toBe(0);
    expect(result).toMatchObject({
      name: 'CudaError',
      code: 'E_CUDA',
      call: 'cuMemsetD8Async',
      step: 0,
      disposeWhileRunning: 'E_INVALID_ARGUMENT',
    });
    expect(result.message).toMatch(/^cuMemsetD8Async failed with CUDA_ERROR_INVALID_VALUE .*\(plan step 0\)/);
  });

  test("completion must be 'auto', 'pool' or 'thread'", () => {
    const { result } = scenario(`${MEMSET_PLAN}
      const plan = await memset(1);
      return await plan.run(1, { completion: 'spin' }).then(() => ({ resolved: true }), (e) => ({ code: e.code, message: e.message }));`);
    expect(result).toEqual({ code: 'E_INVALID_ARGUMENT', message: "completion must be 'auto', 'pool' or 'thread', got spin" });
  });

  test("the default ('auto') settles short and long runs alike, through both paths", () => {
    const { status, result } = scenario(`${MEMSET_PLAN}
      const plan = await memset(3);
      await plan.run();            // 1 launch: the completion thread
      await plan.run(40);          // 40 launches: a pool thread (the fake driver has no graphs or host copies: results and replays are checked on the GPU)
      const stats = lib.gpuAllocationStats();
      plan.dispose();
      t.dispose();
      return { settled: true, liveBuffers: stats.liveBuffers };`);
    expect(result).toEqual({ settled: true, liveBuffers: 1 });
    expect(status).toBe(0);
  });


  test("'auto' settles finished short work on the calling thread (before any event-loop turn); pollMicros 0 and 'thread' leave it to the completion thread", () => {
    // Settled on the calling thread: the Promise is resolved when run() returns, so its reaction
    // runs within the microtasks that follow. Through the completion thread it needs a turn of
    // the event loop (the thread-safe function), which awaiting microtasks never gives.
    const { status, result } = scenario(`${MEMSET_PLAN}
      const plan = await memset(2);
      const settledInMicrotasks = async (p) => {
        let done = false;
        p.then(() => { done = true; });
        for (let i = 0; i < 5; ++i) await Promise.resolve();
        const now = done;
        await p;
        return now;
      };
      const auto = await settledInMicrotasks(plan.run());
      const noPoll = await settledInMicrotasks(plan.run(1, { pollMicros: 0 }));
      const thread = await settledInMicrotasks(plan.run(1, { completion: 'thread' }));
      // With a job out, a short run waits its turn on the completion thread: settle order is submission order.
      const order = [];
      await Promise.all([plan.run(1, { completion: 'thread' }).then(() => order.push('first')), plan.run().then(() => order.push('second'))]);
      const bad = await plan.run(1, { pollMicros: 5000 }).then(() => 'resolved', (e) => e.code + ': ' + e.message);
      plan.dispose();
      t.dispose();
      return { auto, noPoll, thread, order, bad };`);
    expect(result).toEqual({ auto: true, noPoll: false, thread: false, order: ['first', 'second'], bad: 'E_INVALID_ARGUMENT: pollMicros must be an integer from 0 to 1000, got 5000' });
    expect(status).toBe(0);
  });
  test('worker threads: two workers and the main thread at once, a worker terminated mid-submission and one exiting with undisposed tensors; nothing leaks, nothing crashes', () => {
    const worker = path.join(fake.dir, 'worker.js');
    require('node:fs').writeFileSync(
      worker,
      `const { parentPort, workerData } = require('node:worker_threads');
       const lib = require(${JSON.stringify(DIST_INDEX)});
       (async () => {
         ${MEMSET_PLAN}
         const plan = await memset(3);
         const externalBefore = lib.gpuAllocationStats().isolateExternalBytes;
         const big = await lib.DeviceTensor.allocate('float32', [4 << 20], 0);
         const external = lib.gpuAllocationStats().isolateExternalBytes - externalBefore;
         if (workerData.mode === 'work') {
           for (let i = 0; i < 100; i++) await plan.run(1, { completion: i % 2 ? 'thread' : 'pool' });
           plan.dispose(); t.dispose(); big.dispose();
           parentPort.postMessage({ done: 100, external });
         } else if (workerData.mode === 'terminate') {
           parentPort.postMessage({ started: true });
           for (;;) await Promise.all([plan.run(1, { completion: 'thread' }), plan.run(1, { completion: 'pool' })]);
         } else {
           parentPort.postMessage({ leaving: true });
         }
       })().catch((e) => parentPort.postMessage({ error: e.message }));`,
    );
    const { status, result, stderr } = scenario(`
      const { Worker } = require('node:worker_threads');
      const start = (mode, onMessage) => new Promise((resolve, reject) => {
        const w = new Worker(${JSON.stringify(worker)}, { workerData: { mode } });
        const messages = [];
        w.on('message', (m) => { messages.push(m); if (onMessage) onMessage(m, w); });
        w.on('error', reject);
        w.on('exit', (code) => resolve({ code, messages }));
      });
      ${MEMSET_PLAN}
      const plan = await memset(5);
      const mainRuns = (async () => { for (let i = 0; i < 100; i++) await plan.run(1, { completion: 'thread' }); return 100; })();
      const [a, b, main] = await Promise.all([start('work'), start('work'), mainRuns]);
      const killed = await start('terminate', (m, w) => { if (m.started) setTimeout(() => w.terminate(), 30); });
      const left = await start('leave');
      plan.dispose();
      t.dispose();
      return { a, b, main, killed: killed.messages, left: left.code, stats: lib.gpuAllocationStats() };`);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    // Each worker's isolate counts its own 16 MiB DeviceTensor as external memory.
    // (±64 KiB: V8 also counts, and may collect, unrelated ArrayBuffers between the readings.)
    for (const w of [result.a, result.b] as { messages: { external: number }[] }[]) expect(Math.abs(w.messages[0]!.external - (16 << 20))).toBeLessThanOrEqual(64 << 10);
    expect(result).toMatchObject({
      a: { code: 0, messages: [{ done: 100 }] },
      b: { code: 0, messages: [{ done: 100 }] },
      main: 100,
      killed: [{ started: true }],
      left: 0,
    });
    // Whatever the terminated and the leaving worker held was freed by finalizers at their teardown.
    const stats = result.stats as { liveBuffers: number; liveBytes: number; finalizedBuffers: number };
    expect({ liveBuffers: stats.liveBuffers, liveBytes: stats.liveBytes }).toEqual({ liveBuffers: 0, liveBytes: 0 });
    expect(stats.finalizedBuffers).toBe(4);
  });
});
