'use strict';
/**
 * The differential check of the CPU backends: one model, the same compile settings, compiled
 * and run on each backend (`reference` and `onnxruntime`), the outcomes compared with each
 * other. Shared by scripts/differential-backends.js (dist/ modules: ONNX node tests and the
 * fixtures) and test/backends/differential.test.ts (lib/ modules), so both judge alike.
 *
 * An outcome is one of
 *   { status: 'ok', sets: [{ set, outputs }] }                          every data set ran
 *   { status: 'error', stage: 'compile' | 'run', set?, code, message }  a thrown error
 *   { status: 'timeout', stage, set? }                                   past the per-case limit
 * and two outcomes compare as
 *   'same-answer'  both ran every data set, with the same output count, dtypes and shapes and
 *                  values equal under VALUE_TOLERANCE (below);
 *   'same-error'   both threw the same typed `code` at the same stage: compile on both, or run
 *                  on both at the same data set. An error at compile on one and at run on the
 *                  other is a disagreement even with the same code: the stage is part of the
 *                  contract (a program that compiles must be runnable on its inputs, and one
 *                  refused at compile should be refused on every backend before it is built),
 *                  and a lenient rule would hide a backend that defers a check to run time;
 *   'disagreement' anything else: different codes, one answer and one error, different values,
 *                  an error without a typed code on either side (an untyped error has no
 *                  stable code to agree on);
 *   'inconclusive' a backend ran past the per-case time limit (no verdict either way).
 */
const fs = require('node:fs');
const path = require('node:path');

/**
 * How close two floating-point results must be, per dtype: |a - b| <= atol + rtol · max(|a|, |b|),
 * NaN only against NaN, an infinity only against the same infinity. Integer and bool outputs
 * must be bit-exact: both backends compute them exactly (the kernels' exact int64, integer
 * division toward zero or down, the same rounding rules), so any difference is a bug.
 *
 * The two backends do not round alike: the reference computes every op in float64 and rounds
 * once to the output type; onnxruntime computes float32 ops in float32 (MLAS GEMM and
 * convolution with their own summation order and blocking, vectorized approximations of exp,
 * tanh, erf, log...). So float results differ by a few units in the last place per op, more
 * where a long reduction or a chain of ops accumulates rounding, and a result that cancels
 * to near 0 keeps an absolute error of the size of the cancelled terms.
 *  - float32: rtol 1e-4 (about 840 ulp) and atol 1e-5, the project's float32 test tolerance
 *    (test/fixtures/README.md), which the fixtures' deepest models (2-layer decoders, CNNs)
 *    meet against PyTorch on each backend. Tighter bounds were measured against (see
 *    docs/testing.md): the node tests agree to far less, and the margin is for models.
 *  - float16: rtol and atol 1e-2 (about 10 ulp: float16's epsilon is 9.8e-4), the project's
 *    float16 tolerance: onnxruntime computes some float16 ops in float16 with intermediate
 *    rounding, the reference rounds once.
 *  - bfloat16: rtol and atol 2e-2 (bfloat16's epsilon is 7.8e-3: under 3 ulp).
 *  - float64: rtol 1e-9, atol 1e-12: both compute in float64, so only the order of
 *    summation and libm's last bit differ.
 * Complex values compare their real and imaginary parts with the tolerance of the part type.
 */
const VALUE_TOLERANCE = Object.freeze({
  float32: Object.freeze({ rtol: 1e-4, atol: 1e-5 }),
  float16: Object.freeze({ rtol: 1e-2, atol: 1e-2 }),
  bfloat16: Object.freeze({ rtol: 2e-2, atol: 2e-2 }),
  float64: Object.freeze({ rtol: 1e-9, atol: 1e-12 }),
  complex64: Object.freeze({ rtol: 1e-4, atol: 1e-5 }),
  complex128: Object.freeze({ rtol: 1e-9, atol: 1e-12 }),
});

/** The time one backend may spend on one case (compile plus every run) by default. */
const DEFAULT_TIMEOUT_MS = 60_000;

const firstLine = (error) => {
  const m = String((error && error.message) || error).split('\n')[0];
  return m.length > 240 ? `${m.slice(0, 237)}...` : m;
};

/** The stable code of a thrown error, or `untyped:<name>` when it carries none. */
function codeOf(error) {
  if (error && typeof error.code === 'string' && /^E_[A-Z0-9_]+$/.test(error.code)) return error.code;
  return `untyped:${(error && error.name) || typeof error}`;
}

/**
 * Null when `a` and `b` (the same output of two backends) agree under VALUE_TOLERANCE; else
 * why not. `stats` (optional) collects the largest relative difference seen per dtype.
 */
function compareOutputs(a, b, label, stats) {
  if (a.dtype !== b.dtype) return `${label}: dtype ${a.dtype} vs ${b.dtype}`;
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return `${label}: shape [${a.shape.join(', ')}] vs [${b.shape.join(', ')}]`;
  const tol = VALUE_TOLERANCE[a.dtype];
  if (tol === undefined) {
    // Integers and bool: the raw storage, slot by slot (int64 as bigints).
    for (let i = 0; i < a.data.length; i++) {
      if (a.data[i] !== b.data[i]) return `${label}: element ${i} is ${String(a.data[i])} vs ${String(b.data[i])} (${a.dtype}, exact)`;
    }
    return null;
  }
  const x = a.toArray();
  const y = b.toArray();
  let worst = 0;
  for (let i = 0; i < x.length; i++) {
    const u = x[i];
    const v = y[i];
    if (u === v || (Number.isNaN(u) && Number.isNaN(v))) continue;
    const diff = Math.abs(u - v);
    const scale = Math.max(Math.abs(u), Math.abs(v));
    // An infinity or a NaN met above or not at all: |u - ∞| <= rtol · ∞ would pass anything.
    if (!Number.isFinite(u) || !Number.isFinite(v) || !(diff <= tol.atol + tol.rtol * scale)) {
      return `${label}: element ${i} is ${u} vs ${v} (${a.dtype}, |diff| ${diff.toExponential(2)} > atol ${tol.atol} + rtol ${tol.rtol} · ${scale.toExponential(2)})`;
    }
    // The tolerance a pair uses as a share of what it is allowed: 1 at the bound.
    worst = Math.max(worst, diff / (tol.atol + tol.rtol * scale));
  }
  if (stats !== undefined) stats[a.dtype] = Math.max(stats[a.dtype] ?? 0, worst);
  return null;
}

/** One line describing an outcome, for the report. */
function describeOutcome(o) {
  if (o.status === 'ok') return `ok (${o.sets.length} data set${o.sets.length === 1 ? '' : 's'}${o.fallbackOps > 0 ? `, ${o.fallbackOps} op(s) in fallback segments` : ''})`;
  if (o.status === 'timeout') return `timeout at ${o.stage}${o.set ? ` (${o.set})` : ''}`;
  return `${o.code} at ${o.stage}${o.set ? ` (${o.set})` : ''}: ${o.message}`;
}

/**
 * The verdict on two outcomes: { verdict, reason }. Outputs are compared set by set and
 * output by output; `stats` collects the closeness per dtype.
 */
function judge(ref, ort, stats) {
  if (ref.status === 'timeout' || ort.status === 'timeout') return { verdict: 'inconclusive', reason: 'a backend ran past the time limit' };
  if (ref.status === 'error' && ort.status === 'error') {
    if (ref.code.startsWith('untyped:') || ort.code.startsWith('untyped:')) return { verdict: 'disagreement', reason: 'an error without a typed code' };
    if (ref.code !== ort.code) return { verdict: 'disagreement', reason: `different codes: ${ref.code} vs ${ort.code}` };
    if (ref.stage !== ort.stage || ref.set !== ort.set) return { verdict: 'disagreement', reason: `${ref.code} at different stages: ${ref.stage}${ref.set ? ` (${ref.set})` : ''} vs ${ort.stage}${ort.set ? ` (${ort.set})` : ''}` };
    return { verdict: 'same-error', reason: ref.code };
  }
  if (ref.status === 'error' || ort.status === 'error') return { verdict: 'disagreement', reason: 'one gives an answer, the other an error' };
  for (let s = 0; s < ref.sets.length; s++) {
    const a = ref.sets[s];
    const b = ort.sets[s];
    if (a.outputs.length !== b.outputs.length) return { verdict: 'disagreement', reason: `${a.set}: ${a.outputs.length} outputs vs ${b.outputs.length}` };
    for (let i = 0; i < a.outputs.length; i++) {
      const why = compareOutputs(a.outputs[i], b.outputs[i], `${a.set} output ${i}`, stats);
      if (why !== null) return { verdict: 'disagreement', reason: `different values: ${why}` };
    }
  }
  return { verdict: 'same-answer', reason: '' };
}

/** Rejects with a marker after `ms` unless `promise` settles first. */
function withTimeout(promise, ms) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
const TIMED_OUT = Symbol('timed out');

/**
 * Compiles `model` (a path, bytes or a Graph) with `settings` on `backend` and runs it on each
 * data set `sets` ([{ set, feed }], feed: by input name or in input order). Returns the
 * outcome; `deadline` is the Date.now() past which it gives up ('timeout').
 * `api.compile` is compile() of the same build as the tensors in `feed`.
 */
async function runOnBackend(api, model, settings, backend, sets, timeoutMs) {
  const started = Date.now();
  const left = () => Math.max(1, timeoutMs - (Date.now() - started));
  let program;
  try {
    // The signal lets compile() stop its own work when the limit passes.
    program = await withTimeout(api.compile(model, { ...settings, backend, signal: AbortSignal.timeout(timeoutMs) }), left());
  } catch (error) {
    if (error === TIMED_OUT || codeOf(error) === 'E_ABORTED') return { status: 'timeout', stage: 'compile', ms: Date.now() - started };
    return { status: 'error', stage: 'compile', code: codeOf(error), message: firstLine(error), ms: Date.now() - started };
  }
  const fallbackOps = program.report.segments.filter((seg) => seg.kind !== 'engine').reduce((n, seg) => n + seg.ops, 0);
  const results = [];
  try {
    for (const { set, feed } of sets) {
      let outputs;
      try {
        outputs = await withTimeout(program.run(feed), left());
      } catch (error) {
        if (error === TIMED_OUT) return { status: 'timeout', stage: 'run', set, ms: Date.now() - started };
        return { status: 'error', stage: 'run', set, code: codeOf(error), message: firstLine(error), ms: Date.now() - started };
      }
      results.push({ set, outputs });
    }
  } finally {
    // A run still going after a timeout would keep dispose() waiting: give it a bounded wait.
    await withTimeout(program.dispose(), 10_000).catch(() => undefined);
  }
  return { status: 'ok', sets: results, fallbackOps, ms: Date.now() - started };
}

/**
 * One differential case: `model` compiled with `settings` on each of `backends` (two: the
 * first is compared with the second), run on `sets`. Returns
 * { name, verdict, reason, outcomes: { [backend]: outcome } }; `expected` (optional,
 * [{ set, outputs }]) adds how each backend's answer compares with it (`vsExpected`), as
 * information only: the verdict is about the backends agreeing. `compareExpected(actual,
 * expected, label)` (null when they match, else why) defaults to `api.compareExpected`; the
 * fixtures use compareOutputs (the float32 tolerance of test/fixtures/README.md).
 */
async function differentialCase(api, { name, model, settings, sets, expected, compareExpected = api.compareExpected, stats, timeoutMs = DEFAULT_TIMEOUT_MS, backends = ['reference', 'onnxruntime'] }) {
  const outcomes = {};
  for (const backend of backends) outcomes[backend] = await runOnBackend(api, model, settings, backend, sets, timeoutMs);
  const [first, second] = backends;
  const result = { name, ...judge(outcomes[first], outcomes[second], stats), outcomes };
  if (expected !== undefined && compareExpected !== undefined) {
    result.vsExpected = {};
    for (const backend of backends) {
      const o = outcomes[backend];
      if (o.status !== 'ok') continue;
      let why = null;
      for (let s = 0; s < o.sets.length && why === null; s++) {
        const e = expected[s];
        for (let i = 0; i < e.outputs.length && why === null; i++) {
          why = o.sets[s].outputs[i] === undefined ? `${e.set} output ${i} missing` : compareExpected(o.sets[s].outputs[i], e.outputs[i], `${e.set} output ${i}`);
        }
      }
      result.vsExpected[backend] = why ?? 'match';
    }
  }
  return result;
}

/** A result without tensors (for JSON and the report). */
function plain(result) {
  const outcomes = {};
  for (const [backend, o] of Object.entries(result.outcomes)) {
    const { sets, ...rest } = o;
    outcomes[backend] = { ...rest, describe: describeOutcome(o) };
    if (sets !== undefined) outcomes[backend].sets = sets.length;
  }
  return { ...result, outcomes };
}

// ---------------------------------------------------------------------------------------------
// Fixtures (test/fixtures/*/meta.json; see its README.md)

/** A tensor from a raw little-endian .bin file of a fixture (copied into an aligned buffer). */
function readBin(api, file, dtype, shape) {
  const bytes = fs.readFileSync(file);
  const info = api.dtypeInfo(dtype);
  const count = shape.reduce((a, b) => a * b, 1);
  if (bytes.length !== count * info.itemBytes) throw new Error(`${file}: ${bytes.length} bytes, ${dtype}[${shape.join(', ')}] needs ${count * info.itemBytes}`);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new api.Tensor(dtype, shape, new info.storage(copy.buffer, 0, count * info.lanes));
}

/**
 * The differential cases of the fixtures under `fixturesDir`: for each fixture folder with a
 * meta.json and each model file it has (.pt2, .onnx), one case per stored input size, compiled
 * for that size (`inputs` shapes, minBlockSize 1); and for a .pt2 with a second size (its
 * exported dims are dynamic), one more case compiled once with run-time dims and run at every
 * stored size. Then each saved fuzz finding (test/fixtures/fuzz-findings: malformed models
 * that must be refused the same way), compiled only. Each case: { name, model, settings, sets,
 * expected }.
 */
function fixtureCases(api, fixturesDir) {
  const cases = [];
  const folders = fs
    .readdirSync(fixturesDir)
    .filter((n) => fs.existsSync(path.join(fixturesDir, n, 'meta.json')))
    .sort();
  for (const folder of folders) {
    const dir = path.join(fixturesDir, folder);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    const read = (m) => readBin(api, path.join(dir, m.file), m.dtype, m.shape);
    const stored = [{ inputs: meta.inputs, outputs: meta.outputs }];
    if (meta.second_case) stored.push(meta.second_case);
    const sizes = stored.map((c, k) => ({ set: `case ${k}`, feed: c.inputs.map(read), outputs: c.outputs.map(read) }));
    for (const format of ['pt2', 'onnx']) {
      const file = meta.files?.[format];
      if (file === undefined) continue;
      const model = path.join(dir, file);
      sizes.forEach((c, k) => {
        cases.push({
          name: `${folder}.${format} case ${k}`,
          model,
          settings: { minBlockSize: 1, inputs: c.feed.map((t) => ({ shape: [...t.shape] })) },
          sets: [{ set: c.set, feed: c.feed }],
          expected: [{ set: c.set, outputs: c.outputs }],
          compareExpected: compareOutputs,
        });
      });
      if (format === 'pt2' && sizes.length > 1) {
        cases.push({
          name: `${folder}.${format} run-time dims`,
          model,
          settings: { minBlockSize: 1 },
          sets: sizes.map((c) => ({ set: c.set, feed: c.feed })),
          expected: sizes.map((c) => ({ set: c.set, outputs: c.outputs })),
          compareExpected: compareOutputs,
        });
      }
    }
  }
  const findings = path.join(fixturesDir, 'fuzz-findings');
  if (fs.existsSync(findings)) {
    for (const f of fs.readdirSync(findings).sort()) {
      cases.push({ name: `fuzz-findings/${f}`, model: path.join(findings, f), settings: { minBlockSize: 1 }, sets: [] });
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// ONNX node tests (found and unpacked by onnx-conformance-lib.js)

const UNSUPPORTED_OP_AT_IMPORT = /op type \S+ (from domain "[^"]*" )?is not supported/;
const NEEDS_KNOWN_INPUT = /constant|known at import|depends on tensor data|run-time|runtime/i;

/**
 * A value fixed at import, as onnx-conformance-lib.js's runCase fixes them: a scalar, a short
 * integer list (shapes, axes, pads, K...) or a short float list (Resize scales).
 */
function shapeLike(t) {
  return t.rank === 0 || (t.rank === 1 && ((t.size <= 64 && (t.dtype === 'int64' || t.dtype === 'int32')) || t.size <= 8));
}

/** The graph input an import error names as needed known ("ONNX node "N" ... (input i)"), if any. */
function refusedInput(error, model) {
  const m = /ONNX node "([^"]*)".*\(input (\d+)\)/.exec(String(error && error.message));
  if (m === null) return undefined;
  const node = (model.graph.node ?? []).find((n, i) => (n.name || `${n.opType}_${i}`) === m[1]);
  return node === undefined ? undefined : node.input[Number(m[2])];
}

/**
 * The differential work of one node-test case: { runs, importError, skip }. A case the
 * importer takes is one run (one Graph, every data set). A case whose import needs an input
 * known (a shape, axes, pads given as a graph input) is imported again per data set with its
 * shape-like inputs fixed, as the interpreter conformance run does: one run per data set.
 * An import refusal happens before any backend is involved (`importError`, the same for
 * every backend by construction); test data of an element type the project lacks is `skip`.
 * `api` = { onnx, loadOnnx, tensorFromProto, readTensors }.
 */
function nodeCaseRuns(api, casesDir, name) {
  const dir = path.join(casesDir, name);
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'model.onnx')));
  const model = api.onnx.ModelProto.decode(bytes);
  const inputNames = (model.graph.input ?? []).map((i) => i.name);
  const sets = [];
  for (const set of fs.readdirSync(dir).filter((d) => d.startsWith('test_data_set_')).sort()) {
    let inputs;
    let outputs;
    try {
      inputs = api.readTensors(path.join(dir, set), 'input_', api);
      outputs = api.readTensors(path.join(dir, set), 'output_', api);
    } catch (error) {
      return { runs: [], skip: `test data: ${firstLine(error)}` };
    }
    // Inputs are matched by name: an omitted optional input is absent from the data set.
    const byName = {};
    inputs.forEach((t, i) => (byName[inputNames[i]] = t));
    sets.push({ set, byName, outputs });
  }
  let graph;
  try {
    graph = api.loadOnnx(bytes);
  } catch (error) {
    const bind = error && error.code === 'E_UNSUPPORTED_OP' && !UNSUPPORTED_OP_AT_IMPORT.test(String(error.message)) && NEEDS_KNOWN_INPUT.test(String(error.message));
    if (!bind) return { runs: [], importError: { status: 'error', stage: 'import', code: codeOf(error), message: firstLine(error) } };
    const runs = [];
    for (const s of sets) {
      const constantInputs = {};
      const refused = refusedInput(error, model);
      for (const [n, t] of Object.entries(s.byName)) if (shapeLike(t) || n === refused) constantInputs[n] = t;
      let bound;
      try {
        bound = api.loadOnnx(bytes, { constantInputs });
      } catch (again) {
        return { runs: [], importError: { status: 'error', stage: 'import', code: codeOf(again), message: `with ${Object.keys(constantInputs).join(', ') || 'no'} inputs fixed: ${firstLine(again)}` } };
      }
      runs.push({ graph: bound, sets: [s] });
    }
    return { runs, bound: true };
  }
  return { runs: [{ graph, sets }] };
}

/**
 * Runs the differential check of node-test case `name`: every run of nodeCaseRuns, compiled on
 * each backend with { minBlockSize: 1 }. A bound case (one run per data set) takes the first
 * run that is not the same answer as its verdict.
 */
async function differentialNodeCase(api, casesDir, name, options = {}) {
  let work;
  try {
    work = nodeCaseRuns(api, casesDir, name);
  } catch (error) {
    return { name, verdict: 'skipped', reason: `unreadable case: ${firstLine(error)}`, outcomes: {} };
  }
  if (work.skip !== undefined) return { name, verdict: 'skipped', reason: work.skip, outcomes: {} };
  if (work.importError !== undefined) {
    // Refused by the importer, before compile() reaches any backend: the same error on every backend by construction.
    const o = work.importError;
    return { name, verdict: 'same-error', reason: `${o.code} at import (before any backend)`, atImport: true, outcomes: { reference: o, onnxruntime: o } };
  }
  let last;
  for (const run of work.runs) {
    const sets = run.sets.map((s) => ({ set: s.set, feed: Object.fromEntries(run.graph.inputs.filter((v) => s.byName[v.name] !== undefined).map((v) => [v.name, s.byName[v.name]])) }));
    const expected = run.sets.map((s) => ({ set: s.set, outputs: s.outputs }));
    last = await differentialCase(api, { ...options, name, model: run.graph, settings: { minBlockSize: 1 }, sets, expected });
    if (work.bound) last.bound = true;
    if (last.verdict !== 'same-answer') break;
  }
  return last;
}

/** Counts per verdict. */
function countVerdicts(results) {
  const counts = { 'same-answer': 0, 'same-error': 0, disagreement: 0, inconclusive: 0, skipped: 0 };
  for (const r of results) counts[r.verdict] = (counts[r.verdict] ?? 0) + 1;
  return counts;
}

module.exports = {
  DEFAULT_TIMEOUT_MS,
  VALUE_TOLERANCE,
  codeOf,
  compareOutputs,
  countVerdicts,
  describeOutcome,
  differentialCase,
  differentialNodeCase,
  fixtureCases,
  judge,
  nodeCaseRuns,
  plain,
  runOnBackend,
};
