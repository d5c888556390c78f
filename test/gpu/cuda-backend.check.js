'use strict';
// GPU check of the cuda backend (plain Node over dist/, no jest: it runs on the GPU machine
// from a bundle). For every public fixture of test/fixtures/, each frontend it was exported
// with: compile with `backend: 'cuda'` (a fixture PyTorch ran at two sizes is compiled ONCE
// with run-time dims and run at both), run, and compare with PyTorch's stored outputs (fp32:
// rtol 1e-4, atol 1e-5). Prints one JSON line per fixture, format and case: max abs/rel
// error, segments (engine/fallback) and host round trips per run. Then, on the first
// fixture that passed (mlp preferred): save → load → run is bit-identical; the program file
// edited to say compute capability 8.0 is refused with the no-compatible-device message; 64
// concurrent runs equal the sequential outputs bit for bit; 1,000 runs leave device free memory
// and live allocations where they were; the device run path (deviceRunPath) keeps runs in flight
// apart and writes into the caller's own output tensors.
// Then reduced precision: squeezenet1_1, encoder and llama_rotary_complex_input compiled with
// precisions [fp16], [bf16] and [tf32], one JSON line each with max abs/rel error against the
// fp32 run and PyTorch's fp32 outputs and the build's precision summary (reducedPrecisionRuns).
// Exit 0: passed; 1: failed; 3: no usable GPU here.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { gpuCheck, assert, rejection, lib, loadFixture } = require('./check-util');
const { zipSync, unzipSync } = require(require.resolve('fflate', { paths: [root] }));
const { backendAvailability } = require(path.join(root, 'dist', 'backends', 'index.js'));

const ORDER = ['mlp', 'encoder', 'mobilenet_v3_small', 'squeezenet1_1', 'rotary_only', 'llama_rotary_complex_input', 'llama_rotary_complex_input_dynamic', 'llama_tokens_complex_buffer'];
const RTOL = 1e-4;
const ATOL = 1e-5;

/** Compile settings: one size → that static shape; two sizes → one compile with run-time dims spanning both. */
function settingsFor(fixture, format) {
  const shapes = fixture.cases.map((c) => c.inputs.map((t) => [...t.shape]));
  if (shapes.length === 1) return { backend: 'cuda', inputs: shapes[0].map((shape) => ({ shape })) };
  if (format === 'pt2') return { backend: 'cuda' }; // torch.export's range_constraints give the ranges
  return {
    backend: 'cuda',
    inputs: shapes[0].map((first, i) => ({
      min: first.map((_, d) => Math.min(...shapes.map((s) => s[i][d]))),
      opt: first,
      max: first.map((_, d) => Math.max(...shapes.map((s) => s[i][d]))),
    })),
  };
}

/** Max |a - e|, max |a - e| / |e| (where e ≠ 0), and whether every element is within atol + rtol·|e|. */
function compare(actual, expected) {
  if (actual.dtype !== expected.dtype || actual.shape.join(',') !== expected.shape.join(',')) {
    return { ok: false, why: `got ${actual.dtype}[${actual.shape}], PyTorch ${expected.dtype}[${expected.shape}]` };
  }
  const a = actual.data;
  const e = expected.data;
  let maxAbs = 0;
  let maxRel = 0;
  let bad = 0;
  let firstBad = -1;
  for (let i = 0; i < e.length; i++) {
    const x = Number(a[i]);
    const y = Number(e[i]);
    const d = Math.abs(x - y);
    if (!(d <= ATOL + RTOL * Math.abs(y))) {
      bad++;
      if (firstBad < 0) firstBad = i;
    }
    if (!(d <= maxAbs)) maxAbs = d;
    if (y !== 0 && !(d / Math.abs(y) <= maxRel)) maxRel = d / Math.abs(y);
  }
  return { ok: bad === 0, maxAbs, maxRel, bad, ...(bad > 0 ? { firstBad, got: Number(a[firstBad]), want: Number(e[firstBad]) } : {}) };
}

function segmentCounts(program) {
  const kinds = program.report.segments.map((s) => s.kind);
  return { engine: kinds.filter((k) => k === 'engine').length, fallback: kinds.filter((k) => k === 'fallback').length, hostRoundTrips: program.hostRoundTrips.total };
}

const bitsOf = (t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
const identical = (xs, ys) => xs.length === ys.length && xs.every((x, i) => x.dtype === ys[i].dtype && bitsOf(x).equals(bitsOf(ys[i])));

/**
 * Compiles `file` with `settings` (collecting the non-debug log), lets `measure(program, line,
 * logs)` fill `line` (with `ok`), and prints it; an error becomes ok: false with its code.
 */
async function measured(line, file, settings, measure) {
  const logs = [];
  let program;
  try {
    const t0 = Date.now();
    program = await lib.compile(file, { ...settings, logger: (level, message) => level !== 'debug' && logs.push(`${level}: ${message}`) });
    line.compileMs = Date.now() - t0;
    await measure(program, line, logs);
    if (!line.ok) line.logs = logs.slice(-20);
  } catch (error) {
    Object.assign(line, { ok: false, code: error.code, message: error.message, details: error.details });
  } finally {
    await program?.dispose();
  }
  console.log(JSON.stringify(line));
  return line;
}

async function fixtureRuns() {
  const results = [];
  for (const name of ORDER) {
    const fixture = loadFixture(name);
    for (const format of ['pt2', 'onnx']) {
      if (!fixture.files[format]) continue;
      const file = path.join(fixture.dir, fixture.files[format]);
      const line = await measured({ fixture: name, format }, file, settingsFor(fixture, format), async (program, line) => {
        line.segments = segmentCounts(program);
        line.cases = [];
        for (const [k, c] of fixture.cases.entries()) {
          const outputs = await program.run(c.inputs);
          const per = outputs.map((t, i) => ({ output: i, ...compare(t, c.outputs[i]) }));
          line.cases.push({ case: k, inputShapes: c.inputs.map((t) => t.shape), outputs: per });
        }
        line.ok = line.cases.every((c) => c.outputs.every((o) => o.ok));
      });
      results.push({ ...line, fixtureData: fixture, file });
    }
  }
  return results;
}

/** Save → load → bit-identical; the file edited to compute capability 8.0 is refused under rebuild "never", and rebuilt here by default. */
async function saveAndReload(chosen, dir) {
  const c = chosen.fixtureData.cases[0];
  const program = await lib.compile(chosen.file, settingsFor(chosen.fixtureData, chosen.format));
  try {
    const before = await program.run(c.inputs);
    const file = path.join(dir, 'cuda.trtp');
    await program.save(file);
    const loaded = await lib.loadProgram(file);
    let after;
    try {
      after = await loaded.run(c.inputs);
    } finally {
      await loaded.dispose();
    }
    assert(identical(before, after), 'outputs after save → load are bit-identical to those before');
    const files = unzipSync(fs.readFileSync(file));
    const manifest = JSON.parse(Buffer.from(files['manifest.json']).toString('utf8'));
    const engines = manifest.segments.filter((s) => s.kind === 'engine');
    assert(engines.length > 0 && engines.every((s) => s.backend === 'cuda' && s.device.type === 'gpu'), 'the program records cuda engines with GPU device records');
    const recorded = { deviceName: engines[0].device.deviceName, computeCapability: { ...engines[0].device.computeCapability } };
    for (const s of engines) s.device.computeCapability = { major: 8, minor: 0 };
    files['manifest.json'] = new TextEncoder().encode(JSON.stringify(manifest));
    const edited = path.join(dir, 'cuda-cc80.trtp');
    fs.writeFileSync(edited, zipSync(files));
    // With rebuild "never" the load refuses, typed, naming the capability it cannot find.
    const e = await rejection(lib.loadProgram(edited, { rebuild: 'never' }), 'loading (rebuild "never") a program whose engines say compute capability 8.0');
    assert(
      e.code === 'E_NO_COMPATIBLE_DEVICE' && e.message.includes('compute capability 8.0') && e.message.includes('rebuild is "never"'),
      `the 8.0 program is refused with the no-compatible-device message under rebuild "never" (got ${e.code}: ${e.message})`,
    );
    // By default (rebuild "auto") the engine is rebuilt here from the network the file keeps,
    // with one warning saying so, and runs to the same answer within the fixture's tolerance.
    const warnings = [];
    const rebuiltProgram = await lib.loadProgram(edited, { logger: (level, message) => level === 'warn' && warnings.push(message) });
    let rebuiltOutputs;
    try {
      rebuiltOutputs = await rebuiltProgram.run(c.inputs);
    } finally {
      await rebuiltProgram.dispose();
    }
    assert(warnings.some((w) => w.includes('rebuilt its cuda engine')), `the rebuild is announced at warn (got ${JSON.stringify(warnings)})`);
    assert(rebuiltOutputs.length === before.length, 'the rebuilt program gives as many outputs');
    before.forEach((t, i) => {
      const r = compare(rebuiltOutputs[i], t);
      assert(r.ok, `output ${i} of the rebuilt program matches the original (${JSON.stringify(r)})`);
    });
    return { recordedDevice: { name: recorded.deviceName, computeCapability: recorded.computeCapability }, refusal: e.message, rebuildWarning: warnings[0], bytes: fs.statSync(file).size };
  } finally {
    await program.dispose();
  }
}

/** 64 concurrent runs equal 64 sequential ones; 1,000 runs leave device memory where it was. */
async function concurrencyAndMemory(chosen) {
  const c = chosen.fixtureData.cases[0];
  const program = await lib.compile(chosen.file, settingsFor(chosen.fixtureData, chosen.format));
  try {
    const sequential = [];
    for (let i = 0; i < 64; i++) sequential.push(await program.run(c.inputs));
    const t0 = Date.now();
    const concurrent = await Promise.all(Array.from({ length: 64 }, () => program.run(c.inputs)));
    const concurrentMs = Date.now() - t0;
    const mismatched = concurrent.map((out, i) => (identical(out, sequential[i]) ? -1 : i)).filter((i) => i >= 0);
    assert(mismatched.length === 0, `64 concurrent runs equal the sequential outputs (runs ${mismatched.join(', ')} differ)`);
    assert(sequential.every((out) => identical(out, sequential[0])), 'sequential runs agree with each other');

    for (let i = 0; i < 10; i++) await program.run(c.inputs);
    await lib.synchronizeDevice(0);
    const before = await lib.deviceMemoryInfo(0);
    const statsBefore = lib.gpuAllocationStats();
    const t1 = Date.now();
    for (let i = 0; i < 1000; i++) await program.run(c.inputs);
    const thousandMs = Date.now() - t1;
    await lib.synchronizeDevice(0);
    const after = await lib.deviceMemoryInfo(0);
    const statsAfter = lib.gpuAllocationStats();
    const memory = { freeBefore: before.freeBytes, freeAfter: after.freeBytes, statsBefore, statsAfter };
    console.log(JSON.stringify({ memory }));
    assert(after.freeBytes === before.freeBytes, `1,000 runs leave device free memory unchanged (${before.freeBytes} → ${after.freeBytes})`);
    assert(statsAfter.liveBuffers === statsBefore.liveBuffers, `1,000 runs leave live allocations unchanged (${statsBefore.liveBuffers} → ${statsAfter.liveBuffers})`);
    return { concurrentMs, thousandRunsMs: thousandMs, freeBytes: after.freeBytes };
  } finally {
    await program.dispose();
  }
}

/**
 * DeviceTensors through Program.run: a program of GPU engines only runs on the calling thread;
 * DeviceTensor inputs give the same bits as host inputs; outputs: 'device' hands out
 * DeviceTensors on device 0 holding those bits, and leaves the caller's inputs alive; the event
 * loop keeps turning during runs; CUDA's current device is read from the driver.
 */
async function deviceIO(chosen) {
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const c = chosen.fixtureData.cases[0];
  const program = await lib.compile(chosen.file, settingsFor(chosen.fixtureData, chosen.format));
  const deviceInputs = [];
  try {
    const zeroFallback = program.data.segments.every((s) => s.kind === 'engine');
    assert(!zeroFallback || program.runsOn === 'calling thread', `a program of cuda engines only runs on the calling thread (runsOn: ${program.runsOn})`);
    const host = await program.run(c.inputs);
    for (const t of c.inputs) deviceInputs.push(await lib.toDevice(t, 0));
    const fromDevice = await program.run(deviceInputs);
    assert(identical(host, fromDevice), 'DeviceTensor inputs give the same outputs as host inputs, bit for bit');
    const onDevice = await program.run(deviceInputs, { outputs: 'device' });
    assert(onDevice.every((t) => t instanceof lib.DeviceTensor && t.device === 0), "outputs: 'device' gives DeviceTensors on device 0");
    const back = [];
    for (const t of onDevice) back.push(await t.toHost());
    assert(identical(host, back), "outputs: 'device' hold the same bits as the host outputs");
    assert(deviceInputs.every((t) => !t.disposed), "the caller's DeviceTensor inputs are left alive");
    for (const t of onDevice) t.dispose();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) await program.run(deviceInputs, { outputs: 'device' }).then((out) => out.forEach((t) => t.dispose()));
    const perRunUs = Number(process.hrtime.bigint() - t0) / 200 / 1e3;
    delay.disable();
    const p99Ms = delay.percentile(99) / 1e6;
    assert(p99Ms < 20, `the event loop keeps turning during device runs (p99 delay ${p99Ms.toFixed(2)} ms)`);
    const current = lib.currentDevice();
    await lib.setCurrentDevice(0);
    assert(current === 0 && lib.currentDevice() === 0, `CUDA's current device is 0 here (${current}, then ${lib.currentDevice()})`);
    return { runsOn: program.runsOn, zeroFallback, perRunDeviceIOUs: perRunUs, eventLoopDelayP99Ms: p99Ms, currentDevice: current };
  } finally {
    for (const t of deviceInputs) t.dispose();
    await program.dispose();
  }
}

/** `t` with every float element times `factor` (other dtypes as they are): distinct inputs for distinct runs. */
function scaledInput(t, factor) {
  if (t.dtype !== 'float32' && t.dtype !== 'float64') return t;
  return new lib.Tensor(t.dtype, t.shape, t.data.map((v) => v * factor));
}

/**
 * The device run path (GpuPlan.execute: input copies, replay and output copies as one call on
 * the plan's stream): 32 runs on distinct inputs issued at once equal the same runs awaited one
 * by one, bit for bit (stream order, not a queue, keeps them apart); an input disposed right
 * after run() is called still gives its answer; outputs written into the caller's DeviceTensors
 * are those tensors, allocate nothing across 100 runs, and hold the same bits; a target that
 * does not fit is E_INVALID_ARGUMENT. Times: awaited runs one by one, and 32 in flight at once.
 */
async function deviceRunPath(chosen) {
  const c = chosen.fixtureData.cases[0];
  const program = await lib.compile(chosen.file, settingsFor(chosen.fixtureData, chosen.format));
  const inputs = [];
  try {
    for (let i = 0; i < 32; i++) inputs.push(await Promise.all(c.inputs.map((t) => lib.toDevice(scaledInput(t, 1 + i / 32), 0))));
    const sequential = [];
    for (const set of inputs) {
      const out = await program.run(set, { outputs: 'device' });
      sequential.push(await Promise.all(out.map((t) => t.toHost())));
      out.forEach((t) => t.dispose());
    }
    const overlapped = await Promise.all(inputs.map((set) => program.run(set, { outputs: 'device' })));
    const mismatched = [];
    for (const [i, out] of overlapped.entries()) {
      if (!identical(await Promise.all(out.map((t) => t.toHost())), sequential[i])) mismatched.push(i);
      out.forEach((t) => t.dispose());
    }
    assert(mismatched.length === 0, `32 runs in flight at once equal the same runs awaited one by one (runs ${mismatched.join(', ')} differ)`);
    assert(!identical(sequential[0], sequential[31]), 'the 32 inputs give different outputs (the comparison can fail)');

    const early = await Promise.all(c.inputs.map((t) => lib.toDevice(scaledInput(t, 1 + 5 / 32), 0)));
    const pending = program.run(early, { outputs: 'device' });
    early.forEach((t) => t.dispose());
    const fromEarly = await pending;
    assert(identical(await Promise.all(fromEarly.map((t) => t.toHost())), sequential[5]), 'an input disposed right after run() was called still gives its answer');
    fromEarly.forEach((t) => t.dispose());

    const first = await program.run(inputs[3], { outputs: 'device' });
    const targets = await Promise.all(first.map((t) => lib.DeviceTensor.allocate(t.dtype, t.shape, 0)));
    first.forEach((t) => t.dispose());
    const statsBefore = lib.gpuAllocationStats();
    for (let i = 0; i < 100; i++) {
      const out = await program.run(inputs[i % 32], { outputs: targets });
      assert(out.every((t, k) => t === targets[k]), 'outputs: [DeviceTensor...] resolves with the same tensors');
    }
    const statsAfter = lib.gpuAllocationStats();
    assert(statsAfter.liveBuffers === statsBefore.liveBuffers, `100 runs into the caller's tensors allocate nothing (live ${statsBefore.liveBuffers} → ${statsAfter.liveBuffers})`);
    await program.run(inputs[7], { outputs: targets });
    assert(identical(await Promise.all(targets.map((t) => t.toHost())), sequential[7]), "outputs written into the caller's tensors hold the same bits");
    const wrong = await lib.DeviceTensor.allocate(targets[0].dtype === 'float32' ? 'int32' : 'float32', targets[0].shape, 0);
    const refused = await rejection(program.run(inputs[0], { outputs: [wrong, ...targets.slice(1)] }));
    assert(refused.code === 'E_INVALID_ARGUMENT' && /the DeviceTensor given for it is/.test(refused.message), `a target of another dtype is E_INVALID_ARGUMENT (${refused.code}: ${refused.message})`);
    wrong.dispose();

    const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const awaited = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      (await program.run(inputs[i % 32], { outputs: 'device' })).forEach((t) => t.dispose());
      awaited.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    const batches = [];
    for (let b = 0; b < 10; b++) {
      const t0 = process.hrtime.bigint();
      const outs = await Promise.all(inputs.map((set) => program.run(set, { outputs: 'device' })));
      batches.push(Number(process.hrtime.bigint() - t0) / 1e3 / inputs.length);
      outs.forEach((out) => out.forEach((t) => t.dispose()));
    }
    const intoUs = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      await program.run(inputs[i % 32], { outputs: targets });
      intoUs.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    targets.forEach((t) => t.dispose());
    return { awaitedRunUs: median(awaited), overlappedRunUs: median(batches), intoTargetsRunUs: median(intoUs) };
  } finally {
    for (const set of inputs) set.forEach((t) => t.dispose());
    await program.dispose();
  }
}

/**
 * Reduced precision (lib/network/precision.ts, cuDNN/cuBLASLt TF32): a CNN and two
 * transformers compiled with precisions [fp16], [bf16] and [tf32], each run against the fp32
 * run of the same model (and PyTorch's fp32 outputs). Bound per element: |got - want| <=
 * tol · max|want| + tol · |want|, tol 1e-2 for fp16 and tf32 (10 stored mantissa bits), 5e-2
 * for bf16 (7). An fp16/bf16 run bit-identical to fp32 fails too: the precision did nothing.
 */
const REDUCED = { fp16: 1e-2, bf16: 5e-2, tf32: 1e-2 };
const REDUCED_FIXTURES = ['squeezenet1_1', 'encoder', 'llama_rotary_complex_input'];

function scaledErrors(actual, expected) {
  const a = actual.data;
  const e = expected.data;
  let scale = 0;
  for (let i = 0; i < e.length; i++) scale = Math.max(scale, Math.abs(Number(e[i])));
  let maxAbs = 0;
  let maxRel = 0;
  let worst = 0;
  for (let i = 0; i < e.length; i++) {
    const y = Number(e[i]);
    const d = Math.abs(Number(a[i]) - y);
    maxAbs = Number.isNaN(d) ? Infinity : Math.max(maxAbs, d);
    if (y !== 0) maxRel = Math.max(maxRel, Number.isNaN(d) ? Infinity : d / Math.abs(y));
    worst = Math.max(worst, Number.isNaN(d) ? Infinity : d / (scale + Math.abs(y)));
  }
  return { maxAbs, maxRel, scale, worst };
}

async function reducedPrecisionRuns() {
  const lines = [];
  for (const name of REDUCED_FIXTURES) {
    const fixture = loadFixture(name);
    const format = fixture.files.pt2 ? 'pt2' : 'onnx';
    const file = path.join(fixture.dir, fixture.files[format]);
    const c = fixture.cases[0];
    const settings = { backend: 'cuda', inputs: c.inputs.map((t) => ({ shape: [...t.shape] })) };
    let fp32;
    try {
      const program = await lib.compile(file, settings);
      try {
        fp32 = await program.run(c.inputs);
      } finally {
        await program.dispose();
      }
    } catch (error) {
      lines.push({ fixture: name, precision: 'fp32', ok: false, code: error.code, message: error.message });
      console.log(JSON.stringify(lines[lines.length - 1]));
      continue;
    }
    for (const [precision, tol] of Object.entries(REDUCED)) {
      const line = await measured({ fixture: name, format, precision }, file, { ...settings, precisions: [precision] }, async (program, line, logs) => {
        line.summary = logs.filter((l) => l.includes('computes in')).map((l) => l.replace(/^info: cuda backend: /, ''));
        const outputs = await program.run(c.inputs);
        line.vsFp32 = outputs.map((t, i) => scaledErrors(t, fp32[i]));
        line.vsPyTorchFp32 = outputs.map((t, i) => scaledErrors(t, c.outputs[i]));
        line.fp32VsPyTorch = fp32.map((t, i) => scaledErrors(t, c.outputs[i]));
        line.identicalToFp32 = identical(outputs, fp32);
        // TF32 may leave small GEMMs on non-tensor-core kernels (bit-identical): only fp16/bf16 must differ.
        line.ok = !(line.identicalToFp32 && precision !== 'tf32') && line.vsFp32.every((e) => e.worst <= tol) && line.vsPyTorchFp32.every((e) => e.worst <= tol);
      });
      lines.push(line);
    }
  }
  return { runs: lines.length, failed: lines.filter((l) => !l.ok).map((l) => `${l.fixture}.${l.precision}`) };
}

gpuCheck('cuda-backend', async () => {
  const availability = await backendAvailability();
  console.log(JSON.stringify({ backends: availability }));
  const results = await fixtureRuns();
  const failed = results.filter((r) => !r.ok).map((r) => `${r.fixture}.${r.format}`);
  const reduced = await reducedPrecisionRuns();
  const chosen = results.find((r) => r.ok && r.fixture === 'mlp') ?? results.find((r) => r.ok);
  const summary = { fixtures: results.length, passed: results.length - failed.length, failed, reducedPrecision: reduced };
  if (chosen === undefined) throw Object.assign(new Error(`no fixture runs on the cuda backend yet (failed: ${failed.join(', ')})`), { code: 'E_CHECK' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-backend-check-'));
  try {
    summary.saveReload = await saveAndReload(chosen, dir);
    summary.concurrency = await concurrencyAndMemory(chosen);
    summary.deviceIO = await deviceIO(chosen);
    summary.deviceRunPath = await deviceRunPath(chosen);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert(failed.length === 0, `every fixture matches PyTorch on the cuda backend (failed: ${failed.join(', ')})`);
  assert(reduced.failed.length === 0, `fp16, bf16 and tf32 runs stay within their tolerance of fp32 and differ from it (failed: ${reduced.failed.join(', ')})`);
  return summary;
});
