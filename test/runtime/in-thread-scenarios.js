'use strict';
/**
 * Scenarios of runs on the caller's thread (lib/runtime/in-thread.ts) against the built
 * package, in a plain Node process: onnxruntime-node rejects the typed arrays of jest's vm
 * context, so inside jest a program always keeps its worker. Usage:
 * node test/runtime/in-thread-scenarios.js <scenario>; prints one JSON object. The program's
 * internals are read where the scenario is about them (which thread ran a run).
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const { compile, Tensor } = require(path.join(ROOT, 'dist', 'index.js'));
const FIXTURES = path.join(ROOT, 'test', 'fixtures');

const STORAGE = { float32: Float32Array, complex64: Float32Array, int64: BigInt64Array };

function fixtureInputs(name) {
  const meta = JSON.parse(fs.readFileSync(path.join(FIXTURES, name, 'meta.json'), 'utf8'));
  const inputs = meta.inputs.map((m) => {
    const b = fs.readFileSync(path.join(FIXTURES, name, m.file));
    const bytes = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    return new Tensor(m.dtype, m.shape, new STORAGE[m.dtype](bytes));
  });
  return { meta, inputs };
}

/**
 * The program's in-thread runner; a scenario about runs here cannot go on without one. Loading
 * here falls back to the worker on any error (correctly, for users), so say so instead of
 * failing later on an undefined runner: the test runs this script under DEBUG=tensorrt-node,
 * and the reason the load fell back is in the stderr it prints on failure.
 */
function inThreadOf(program) {
  const here = program.inThread;
  if (here === undefined) throw new Error('the program did not load on the calling thread (the reason is logged at debug above)');
  return here;
}

const wire = (t) => ({ dtype: t.dtype, shape: [...t.shape], data: Array.from(t.data, Number) });
const codeOf = (promise) => promise.then(() => 'resolved', (e) => e.code ?? String(e));
const workerStarted = (program) => program.client.channel !== null;

/**
 * Counts the runs made here: through the engine's prepared run (the fast path of
 * program.run()) or the in-thread executor (the general one). `after(k)`, where given, runs
 * after the k-th run's outputs are ready, within the time the runner measures for the run
 * (the stall scenario holds the loop there, as a preempted run would): for the prepared
 * run, that is inside its continuation, before the runner's `settled.done` times it.
 */
function countInThread(program, after) {
  const here = inThreadOf(program);
  const counter = { runs: 0, prepared: 0 };
  const executorRun = here.executor.run.bind(here.executor);
  here.executor.run = async (...args) => {
    counter.runs++;
    const outputs = await executorRun(...args);
    after?.(counter.runs);
    return outputs;
  };
  const prepared = here.prepared;
  if (prepared !== undefined) {
    const start = prepared.start.bind(prepared);
    prepared.start = (staged, settled) => {
      const k = ++counter.runs;
      counter.prepared++;
      if (settled === undefined) return start(staged).then((outputs) => (after?.(k), outputs));
      return start(staged, { done: (outputs) => (after?.(k), settled.done(outputs)), failed: settled.failed });
    };
  }
  return counter;
}

async function compiled(name, format = 'onnx', settings) {
  const { meta, inputs } = fixtureInputs(name);
  const program = await compile(path.join(FIXTURES, name, meta.files[format]), settings ?? { backend: 'onnxruntime', inputs: meta.inputs.map((m) => ({ shape: m.shape })) });
  return { program, inputs };
}

const scenarios = {
  /** A small program runs here, with no worker left, and answers as PyTorch did. */
  async mlp() {
    const { program, inputs } = await compiled('mlp');
    const inThread = program.runsInThread;
    const worker = workerStarted(program);
    const counter = countInThread(program);
    const outputs = await program.run(inputs);
    const byName = await program.run({ [program.inputs[0].name]: inputs[0] });
    // Whether the prepared run calls the session's handler (lib/backends/onnxruntime/run/session-handler.ts) rather than session.run().
    const session = inThreadOf(program).executor.segments[0].engine.session;
    const viaHandler = inThreadOf(program).prepared.host.session !== session;
    await program.dispose();
    return { inThread, workerAfterLoad: worker, inThreadRuns: counter.runs, prepared: counter.prepared, viaHandler, outputs: outputs.map(wire), byName: byName.map(wire) };
  },

  /** Inputs changed after run() was called do not change its answer; dispose fails runs in flight and later ones. */
  async lifecycle() {
    const { program, inputs } = await compiled('mlp');
    const x = new Tensor('float32', inputs[0].shape, inputs[0].data.slice());
    const pending = program.run([x]);
    x.data.fill(0);
    const outputs = await pending;
    const inFlight = codeOf(program.run(inputs));
    const queued = codeOf(program.run(inputs));
    await program.dispose();
    const after = await codeOf(program.run(inputs));
    return { inThread: true, outputs: outputs.map(wire), inFlight: await inFlight, queued: await queued, after, worker: workerStarted(program) };
  },

  /** A run predicted over the budget goes to the worker (started again), and the next short one comes back here. */
  async routing() {
    const { program, inputs } = await compiled('mlp');
    const counter = countInThread(program);
    const here = inThreadOf(program);
    for (let k = 0; k < 8; k++) here.observe(1e6, 1);
    const long = await program.run(inputs);
    const afterLong = { inThreadRuns: counter.runs, worker: workerStarted(program) };
    for (let k = 0; k < 8; k++) here.observe(1e-9, 1);
    const short = await program.run(inputs);
    const afterShort = { inThreadRuns: counter.runs };
    await program.dispose();
    return { inThread: program.runsInThread, long: long.map(wire), short: short.map(wire), afterLong, afterShort };
  },

  /**
   * Two runs here that hold the loop past STALL_MS (preempted runs, simulated) start the
   * worker in the background, and once it is loaded the next runs go there; when the stalls
   * are old, runs come back here.
   */
  async stall() {
    const { program, inputs } = await compiled('mlp');
    const here = inThreadOf(program);
    // A busy machine may have stalled a warm-up run already, or timed runs long enough to
    // predict this one over the 1 ms budget: start from a clean slate, with runs that fit
    // (this scenario is about the stall guard; the cost model has tests of its own).
    here.forgetStalls();
    const fit = () => {
      for (let k = 0; k < 8; k++) here.observe(1e-9, 1);
    };
    fit();
    const counter = countInThread(program, (k) => {
      if (k <= 2) for (const t0 = Date.now(); Date.now() - t0 < 40; );
    });
    const slow = [await program.run(inputs), await program.run(inputs)];
    const stalling = here.stalling;
    const whileStarting = await program.run(inputs);
    const afterStalls = { inThreadRuns: counter.runs, starting: program.workerStart !== undefined };
    await program.workerStart;
    const onWorker = await program.run(inputs);
    const afterReady = { inThreadRuns: counter.runs, worker: workerStarted(program) };
    here.forgetStalls();
    fit();
    const back = await program.run(inputs);
    const afterForget = { inThreadRuns: counter.runs };
    await program.dispose();
    return { outputs: [...slow, whileStarting, onWorker, back].map((o) => o.map(wire)), stalling, afterStalls, afterReady, afterForget };
  },

  /**
   * program.run()'s fast path (one-pass check, the engine's prepared run) against its general
   * path on the same program (runGeneral: the checks and executor every other program
   * uses): the same outputs, and for each bad input the same error (code, class, message,
   * details); which path each good run took is counted.
   */
  async fastPath() {
    const { program, inputs } = await compiled('mlp');
    const [x] = inputs;
    const name = program.inputs[0].name;
    const counter = countInThread(program);
    const fast = await program.run(inputs);
    const fastByName = await program.run({ [name]: x });
    const afterGood = { ...counter };
    const general = await program.runGeneral(inputs, {});
    const shape = [...x.shape];
    const reassigned = new Tensor('float32', shape, x.data.slice());
    reassigned.data = new Float32Array(3);
    const detached = new Tensor('float32', shape, x.data.slice());
    structuredClone(detached.data.buffer, { transfer: [detached.data.buffer] });
    const bad = {
      wrongDType: [new Tensor('float64', shape, Float64Array.from(x.data))],
      wrongShape: [new Tensor('float32', [shape[0] + 1, shape[1]], new Float32Array((shape[0] + 1) * shape[1]))],
      wrongRank: [new Tensor('float32', [shape[0] * shape[1]], x.data.slice())],
      missingInList: [],
      missingByName: {},
      extraInList: [x, x],
      extraByName: { [name]: x, extra: x },
      unknownName: { extra: x },
      notATensor: [{ dtype: 'float32', shape, data: x.data }],
      nullInput: [null],
      notAList: 7,
      reassignedData: [reassigned],
      detachedData: [detached],
    };
    const describe = (promise) =>
      promise.then(
        () => ({ resolved: true }),
        (e) => ({ class: e?.constructor?.name, code: e?.code, message: e?.message, details: e?.details }),
      );
    const errors = {};
    for (const [kind, given] of Object.entries(bad)) errors[kind] = { fast: await describe(program.run(given)), general: await describe(program.runGeneral(given, {})) };
    const afterBad = { ...counter };
    await program.dispose();
    errors.disposed = { fast: await describe(program.run(inputs)), general: await describe(program.runGeneral(inputs, {})) };
    return { fastAvailable: inThreadOf(program).prepared !== undefined, afterGood, afterBad, fast: fast.map(wire), fastByName: fastByName.map(wire), general: general.map(wire), errors };
  },

  /**
   * Runs issued together through the fast path: each input is read when its run() is called
   * (then overwritten), the runs queue one behind the other over several staging buffers, and
   * each answers as the same input run alone on the general path. The encoder's int64 input
   * goes the same way.
   */
  async fastQueued() {
    const { program, inputs } = await compiled('mlp');
    const counter = countInThread(program);
    const [x] = inputs;
    const scaled = [0.5, 1, 2, -1, 3].map((k) => new Tensor('float32', x.shape, x.data.map((v) => v * k)));
    const originals = scaled.map((t) => new Tensor('float32', t.shape, t.data.slice()));
    const pending = scaled.map((t) => program.run([t]));
    for (const t of scaled) t.data.fill(7);
    const together = await Promise.all(pending);
    const afterTogether = { ...counter };
    const alone = [];
    for (const t of originals) alone.push(await program.runGeneral([t], {}));
    await program.dispose();
    const encoder = await compiled('encoder');
    const encoderCounter = countInThread(encoder.program);
    const encoderOutputs = await encoder.program.run(encoder.inputs);
    await encoder.program.dispose();
    return {
      afterTogether,
      together: together.map((o) => o.map(wire)),
      alone: alone.map((o) => o.map(wire)),
      encoder: { inThread: encoder.program.runsInThread, prepared: encoderCounter.prepared, outputs: encoderOutputs.map(wire) },
    };
  },

  /** The dynamic-batch mlp: a batch outside its range fails the same way on both paths. */
  async fastDynamicErrors() {
    const { program, inputs } = await compiled('mlp', 'pt2', { backend: 'onnxruntime' });
    const width = inputs[0].shape[1];
    const describe = (promise) => promise.then(() => ({ resolved: true }), (e) => ({ code: e?.code, message: e?.message, details: e?.details }));
    const huge = [new Tensor('float32', [1_000_000, width])];
    const mismatch = [new Tensor('float32', [2, width + 1])];
    const result = {
      huge: { fast: await describe(program.run(huge)), general: await describe(program.runGeneral(huge, {})) },
      mismatch: { fast: await describe(program.run(mismatch)), general: await describe(program.runGeneral(mismatch, {})) },
    };
    await program.dispose();
    return result;
  },

  /** The .pt2 mlp has a dynamic batch: timed at its smallest, run here at every batch. */
  async dynamic() {
    const { program, inputs } = await compiled('mlp', 'pt2', { backend: 'onnxruntime' });
    const counter = countInThread(program);
    const outputs = await program.run(inputs);
    const row = new Tensor('float32', [1, inputs[0].shape[1]], inputs[0].data.slice(0, inputs[0].shape[1]));
    const first = await program.run([row]);
    await program.dispose();
    return { inThread: program.runsInThread, shape: program.inputs[0].shape.map(String), inThreadRuns: counter.runs, preparedRuns: counter.prepared, outputs: outputs.map(wire), first: first.map(wire) };
  },

  /** A complex input and a program that is not one engine's inputs and outputs: the general executor, here. */
  async complex() {
    const { program, inputs } = await compiled('llama_rotary_complex_input', 'pt2');
    const counter = countInThread(program);
    const outputs = await program.run(inputs);
    await program.dispose();
    return { inThread: program.runsInThread, inThreadRuns: counter.runs, outputs: outputs.map(wire) };
  },

  /** The reference backend always runs on the worker. */
  async reference() {
    const { program, inputs } = await compiled('mlp', 'onnx', { backend: 'reference', inputs: [{ shape: [4, 32] }] });
    const outputs = await program.run(inputs);
    const result = { inThread: program.runsInThread, worker: workerStarted(program), outputs: outputs.map(wire) };
    await program.dispose();
    return result;
  },

  /** TENSORRT_NODE_IN_THREAD_MS=0 (set by the test) keeps every run on the worker. */
  async budgetZero() {
    const { program, inputs } = await compiled('mlp');
    const outputs = await program.run(inputs);
    const result = { inThread: program.runsInThread, worker: workerStarted(program), outputs: outputs.map(wire) };
    await program.dispose();
    return result;
  },

  /** A bad TENSORRT_NODE_IN_THREAD_MS (set by the test) fails compile() naming it. */
  async badBudget() {
    try {
      await compiled('mlp');
      return { compiled: true };
    } catch (e) {
      return { code: e.code, message: e.message, details: e.details };
    }
  },

  /** An in-thread program left undisposed does not hold the process open (the test checks it exits). */
  async idle() {
    const { program, inputs } = await compiled('mlp');
    await program.run(inputs);
    return { inThread: program.runsInThread };
  },
};

scenarios[process.argv[2]]().then(
  (result) => process.stdout.write(JSON.stringify(result)),
  (error) => {
    process.stderr.write(String(error?.stack ?? error));
    process.exitCode = 1;
  },
);
