'use strict';
/**
 * ONNX backend node tests (ONNX 1.16.2) run through loadOnnx + interpret: finding and
 * unpacking the suite, running one case, classifying why a case does not pass. Shared by the
 * CI test (test/conformance/onnx-node-tests.test.ts, which passes lib/ modules) and the docs
 * generator (scripts/onnx-conformance.js, which passes dist/ modules), so both judge alike.
 */
const childProcess = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const SUITE_DIR = path.join('..', 'shared', 'third_party', 'onnx-1.16.2');
const TARBALL = 'node-tests.tar.xz';
const CASES_SUBDIR = path.join('onnx', 'backend', 'test', 'data', 'node');

// ONNX's backend test runner (onnx/backend/test/runner) compares with these.
const RTOL = 1e-3;
const ATOL = 1e-7;

// Element types the project has (lib/frontends/onnx/tensor-proto.ts ONNX_DTYPES).
const SUPPORTED_ELEM_TYPES = new Set([1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26]);

// Ops that only make sense for training: allowed to stay refused.
const TRAINING_OPS = new Set(['Adagrad', 'Adam', 'Momentum', 'Gradient']);

/**
 * Cases whose expected outputs contradict the op's specification, and why. They still run;
 * a mismatch is reported as 'disputed' (with the first differing element), never as a pass.
 */
const WRAPS = 'the expected int8 outputs wrap around on overflow (ONNX reference: astype, 276 -> 20); the spec and onnxruntime saturate';
const POOL_OVERHANG =
  "the expected output predates ONNX's corrected pooling reference (ONNX 1.17): count_include_pad with ceil_mode divided by the whole window also where it passes the pads; the corrected reference, this set's 1.23 version and onnxruntime count only what lies inside the padded input";
const FLOAT32_NOISE =
  "ONNX 1.23's expected values, computed in float32, hold 1.9e-7 where the exact inverse DFT is 0 (the 1.16.2 data: 1.4e-15), beyond ONNX's atol of 1e-7 on outputs of magnitude 5; ours is exact to 6e-15";
const TRUNCATED_BFLOAT16 =
  "the expected bfloat16 values truncate the float32 bits (ONNX 1.16.2's reference did); the same case in ONNX 1.23.0 expects them rounded to nearest even, as ours are";
const SATURATED_INT4 =
  "the expected 4-bit values saturate (ONNX 1.16.2's reference clipped); ONNX's int4 notes cast by rounding and keeping the low 4 bits, and the same case in ONNX 1.23.0 expects them wrapped, as ours are";
const DISPUTED = {
  test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True: POOL_OVERHANG,
  test_cast_FLOAT16_to_INT4: SATURATED_INT4,
  test_cast_FLOAT16_to_UINT4: SATURATED_INT4,
  test_cast_FLOAT_to_BFLOAT16: TRUNCATED_BFLOAT16,
  test_cast_FLOAT_to_INT4: SATURATED_INT4,
  test_cast_FLOAT_to_UINT4: SATURATED_INT4,
  test_castlike_FLOAT_to_BFLOAT16: TRUNCATED_BFLOAT16,
  test_castlike_FLOAT_to_BFLOAT16_expanded: TRUNCATED_BFLOAT16,
  test_dft_inverse: FLOAT32_NOISE,
  test_dft_inverse_opset19: FLOAT32_NOISE,
  test_qlinearmatmul_2D_int8_float16: WRAPS,
  test_qlinearmatmul_2D_int8_float32: WRAPS,
  test_qlinearmatmul_3D_int8_float16: WRAPS,
  test_qlinearmatmul_3D_int8_float32: WRAPS,
};

/**
 * The packed suite of ONNX `version` (default 1.16.2): $ONNX_NODE_TESTS_DIR (a folder holding
 * node-tests.tar.xz, for a checkout elsewhere, e.g. a git worktree), else
 * ../shared/third_party/onnx-VERSION or shared/third_party/onnx-VERSION relative to the
 * repository root; null when none is there.
 */
function findSuite(repoRoot, version = '1.16.2') {
  const dir = path.join('third_party', `onnx-${version}`);
  const dirs = [path.resolve(repoRoot, '..', 'shared', dir), path.resolve(repoRoot, 'shared', dir)];
  if (process.env.ONNX_NODE_TESTS_DIR) dirs.unshift(path.resolve(process.env.ONNX_NODE_TESTS_DIR));
  const found = dirs.map((d) => path.join(d, TARBALL)).find((t) => fs.existsSync(t));
  return found ?? null;
}

/** The value after flag `name` in `args`, or `fallback` (the scripts' one flag form: --name value). */
function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
}

/**
 * Unpacks the tarball once under os.tmpdir() (keyed by its size and mtime) and returns the
 * folder of node cases. A finished unpack is marked, so an interrupted one is redone.
 */
function unpackSuite(tarball) {
  const st = fs.statSync(tarball);
  const root = path.join(os.tmpdir(), `tensorrt-node-onnx-node-tests-${st.size}-${Math.floor(st.mtimeMs)}`);
  const done = path.join(root, '.unpacked');
  if (!fs.existsSync(done)) {
    const staging = `${root}.tmp-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true });
    childProcess.execFileSync('tar', ['xJf', tarball, '-C', staging], { stdio: 'pipe' });
    fs.writeFileSync(path.join(staging, '.unpacked'), '');
    try {
      fs.renameSync(staging, root);
    } catch {
      // Another process unpacked it first.
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  return path.join(root, CASES_SUBDIR);
}

function listCases(casesDir) {
  return fs
    .readdirSync(casesDir)
    .filter((n) => n.startsWith('test_'))
    .sort();
}

const ONNX_STRING = 8;

/** Whether a TypeProto is a tensor of an element type the project has (STRING included). */
function tensorTypeSupported(tt) {
  return Boolean(tt) && (SUPPORTED_ELEM_TYPES.has(tt.elemType) || tt.elemType === ONNX_STRING);
}

/**
 * Whether every graph input and output is a value the project has: a tensor of a supported
 * element type or of strings, a sequence of such tensors, or an optional of either.
 */
function valueTypesSupported(model) {
  const g = model.graph;
  const supported = (type) => {
    if (!type) return false;
    if (type.tensorType) return tensorTypeSupported(type.tensorType);
    if (type.sequenceType) return tensorTypeSupported(type.sequenceType.elemType && type.sequenceType.elemType.tensorType);
    if (type.optionalType) {
      const el = type.optionalType.elemType;
      return Boolean(el) && !el.optionalType && supported(el);
    }
    return false;
  };
  return [...(g.input ?? []), ...(g.output ?? [])].every((vi) => supported(vi.type));
}

function opsetOf(model) {
  const entry = (model.opsetImport ?? []).find((o) => !o.domain || o.domain === 'ai.onnx');
  if (!entry) return 0;
  return typeof entry.version === 'object' && entry.version !== null ? entry.version.toNumber() : Number(entry.version);
}

const ONNX_BFLOAT16 = 16;

/**
 * The TypeProtos the case's model declares for its inputs (`input_`) or outputs, in order;
 * [] when the data set is not in a case directory.
 */
function declaredTypes(dir, prefix, api) {
  const file = path.join(dir, '..', 'model.onnx');
  if (!fs.existsSync(file)) return [];
  const g = api.onnx.ModelProto.decode(fs.readFileSync(file)).graph;
  return ((prefix === 'input_' ? g.input : g.output) ?? []).map((v) => v.type ?? null);
}

/** How a declared type's data file is stored, and the element type a sequence in it holds. */
function storageOf(type) {
  const tensorElem = (tt) => (tt && tt.elemType === ONNX_STRING ? 'string' : undefined);
  if (type && type.sequenceType) return { kind: 'sequence', elem: sequenceElem(type.sequenceType) };
  if (type && type.optionalType) {
    const el = type.optionalType.elemType;
    return { kind: 'optional', elem: el && el.sequenceType ? sequenceElem(el.sequenceType) : tensorElem(el && el.tensorType) };
  }
  return { kind: 'tensor' };
}

// ONNX element type codes → the project's dtype names, for an empty sequence's element type.
const ELEM_NAMES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string', 9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64' };

function sequenceElem(st) {
  const tt = st.elemType && st.elemType.tensorType;
  return tt ? ELEM_NAMES[tt.elemType] : undefined;
}

/**
 * A data set's values, in file order: TensorProto, SequenceProto or OptionalProto files as the
 * model declares each position. ONNX's older test data stores bfloat16 tensors as UINT16 bit
 * patterns (NumPy has no bfloat16): where the model declares BFLOAT16 at that position, the
 * bits are read as the bfloat16 they are.
 */
function readTensors(dir, prefix, api) {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.pb'))
    .sort((a, b) => Number(a.slice(prefix.length, -3)) - Number(b.slice(prefix.length, -3)));
  const declared = declaredTypes(dir, prefix, api);
  return files.map((f, i) => {
    const bytes = fs.readFileSync(path.join(dir, f));
    const { kind, elem } = storageOf(declared[i]);
    if (api.valueFromProtoBytes !== undefined) {
      const v = api.valueFromProtoBytes(bytes, kind, f, elem);
      const bf16 = v.dtype === 'uint16' && declared[i] && declared[i].tensorType && declared[i].tensorType.elemType === ONNX_BFLOAT16;
      return bf16 ? new v.constructor('bfloat16', v.shape, v.data) : v;
    }
    if (kind !== 'tensor') throw new Error(`${f} is a ${kind}, which this runner's api does not read`);
    const t = api.tensorFromProto(api.onnx.TensorProto.decode(bytes), f);
    const bf16 = t.dtype === 'uint16' && declared[i] && declared[i].tensorType && declared[i].tensorType.elemType === ONNX_BFLOAT16;
    return bf16 ? new t.constructor('bfloat16', t.shape, t.data) : t;
  });
}

const FLOAT_DTYPES = new Set(['float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128']);

/** What kind of value `v` is ('Tensor', 'StringTensor', 'TensorSequence', 'OptionalValue'), by its class's name: dist's and lib's classes differ. */
const kindOf = (v) => (v && v.constructor ? v.constructor.name : typeof v);

/**
 * Null when `actual` matches `expected` as ONNX's runner judges (tensors by compareTensor,
 * strings exactly, sequences element by element, optionals by presence then value); otherwise why not.
 */
function compareValue(actual, expected, name) {
  const kind = kindOf(expected);
  if (kindOf(actual) !== kind) return `${name}: a ${kindOf(actual)}, expected a ${kind}`;
  if (kind === 'StringTensor') {
    if (actual.shape.length !== expected.shape.length || actual.shape.some((d, i) => d !== expected.shape[i])) {
      return `${name}: shape [${actual.shape.join(', ')}], expected [${expected.shape.join(', ')}]`;
    }
    const at = expected.data.findIndex((s, i) => actual.data[i] !== s);
    return at < 0 ? null : `${name}: element ${at} is ${JSON.stringify(actual.data[at])}, expected ${JSON.stringify(expected.data[at])}`;
  }
  if (kind === 'TensorSequence') {
    if (actual.items.length !== expected.items.length) return `${name}: ${actual.items.length} elements, expected ${expected.items.length}`;
    for (let i = 0; i < expected.items.length; i++) {
      const why = compareValue(actual.items[i], expected.items[i], `${name}[${i}]`);
      if (why !== null) return why;
    }
    return null;
  }
  if (kind === 'OptionalValue') {
    if ((actual.value === null) !== (expected.value === null)) return `${name}: ${actual.value === null ? 'empty' : 'holds a value'}, expected ${expected.value === null ? 'empty' : 'a value'}`;
    return expected.value === null ? null : compareValue(actual.value, expected.value, `${name} value`);
  }
  return compareTensor(actual, expected, name);
}

/** Null when `actual` matches `expected` as ONNX's runner judges; otherwise why not. */
function compareTensor(actual, expected, name) {
  if (actual.dtype !== expected.dtype) return `${name}: dtype ${actual.dtype}, expected ${expected.dtype}`;
  if (actual.shape.length !== expected.shape.length || actual.shape.some((d, i) => d !== expected.shape[i])) {
    return `${name}: shape [${actual.shape.join(', ')}], expected [${expected.shape.join(', ')}]`;
  }
  const exact = !FLOAT_DTYPES.has(expected.dtype);
  // int64 and uint64 compare their bigints: toArray's numbers round past 2^53.
  const bigints = typeof expected.data[0] === 'bigint';
  const a = bigints ? Array.from(actual.data) : actual.toArray();
  const e = bigints ? Array.from(expected.data) : expected.toArray();
  for (let i = 0; i < e.length; i++) {
    const x = a[i];
    const y = e[i];
    if (Number.isNaN(y) && Number.isNaN(x)) continue;
    if (x === y) continue;
    if (!exact && Math.abs(x - y) <= ATOL + RTOL * Math.abs(y)) continue;
    return `${name}: element ${i} is ${x}, expected ${y}`;
  }
  return null;
}

/** The reason category of an error thrown while importing or running a case. */
function categorize(error, model) {
  const message = String(error && error.message);
  const code = error && error.code;
  if ((model.graph.node ?? []).some((n) => TRAINING_OPS.has(n.opType))) return 'training-op';
  if (/uses ONNX opset \d+; tensorrt-node imports opsets/.test(message)) return 'opset';
  if (/does not import the default ONNX domain/.test(message)) return 'other-domain';
  if (code === 'E_UNSUPPORTED_OP') {
    if (/op type \S+ (from domain "[^"]*" )?is not supported/.test(message)) return 'missing-op';
    if (/constant|known at import|depends on tensor data|run-time|runtime/i.test(message)) return 'non-constant-input';
    return 'unsupported-form';
  }
  if (code === 'E_BAD_MODEL') return 'refused-as-bad-model';
  if (typeof code === 'string') return `error-${code}`;
  return 'crash';
}

/**
 * Runs one case: `api` = { onnx (onnx-proto), loadOnnx, interpret, tensorFromProto }.
 * Returns { name, status: 'pass' | 'wrong' | 'disputed' | 'refused' | 'unsupported-type', category, reason, opset }.
 */
function runCase(casesDir, name, api) {
  const dir = path.join(casesDir, name);
  const bytes = fs.readFileSync(path.join(dir, 'model.onnx'));
  const model = api.onnx.ModelProto.decode(bytes);
  const opset = opsetOf(model);
  if (!valueTypesSupported(model)) {
    return { name, opset, status: 'unsupported-type', category: 'unsupported-type', reason: 'an input or output is not a tensor of a supported element type' };
  }
  let graph = null;
  let importError = null;
  try {
    graph = api.loadOnnx(new Uint8Array(bytes));
  } catch (error) {
    importError = error;
  }
  // An input the importer needs known (a shape, axes, pads...) given as a graph input: the case
  // is imported again per data set with its shape-like inputs fixed (loadOnnx constantInputs).
  const bind = importError !== null && categorize(importError, model) === 'non-constant-input';
  if (importError !== null && !bind) {
    return { name, opset, status: 'refused', category: categorize(importError, model), reason: `import: ${firstLine(importError)}` };
  }
  const sets = fs
    .readdirSync(dir)
    .filter((d) => d.startsWith('test_data_set_'))
    .sort();
  const inputNames = (model.graph.input ?? []).map((i) => i.name);
  const outputNames = (model.graph.output ?? []).map((o) => o.name);
  for (const set of sets) {
    const setDir = path.join(dir, set);
    let inputs;
    let expected;
    try {
      inputs = readTensors(setDir, 'input_', api);
      expected = readTensors(setDir, 'output_', api);
    } catch (error) {
      return { name, opset, status: 'unsupported-type', category: 'unsupported-type', reason: `test data: ${firstLine(error)}` };
    }
    // Inputs are matched by name: an omitted optional input is absent from the data set.
    const byName = {};
    inputs.forEach((t, i) => {
      byName[inputNames[i]] = t;
    });
    if (bind) {
      const constantInputs = {};
      const refused = refusedInput(importError, model);
      for (const [n, t] of Object.entries(byName)) if (shapeLike(t) || n === refused) constantInputs[n] = t;
      try {
        graph = api.loadOnnx(new Uint8Array(bytes), { constantInputs });
      } catch (error) {
        const why = `import with ${Object.keys(constantInputs).join(', ') || 'no'} inputs fixed: ${firstLine(error)}`;
        return { name, opset, status: 'refused', category: categorize(error, model), reason: `import: ${firstLine(importError)}; ${why}` };
      }
    }
    const feed = {};
    for (const v of graph.inputs) {
      const vname = v.name;
      if (byName[vname] !== undefined) feed[vname] = byName[vname];
    }
    let actual;
    try {
      actual = (api.interpretValues ?? api.interpret)(graph, feed);
    } catch (error) {
      return { name, opset, status: 'refused', category: categorize(error, model), reason: `run: ${firstLine(error)}` };
    }
    for (let i = 0; i < expected.length; i++) {
      const out = actual[i];
      if (out === undefined) return { name, opset, status: 'wrong', category: 'wrong', reason: `${set}: output ${outputNames[i]} missing` };
      const why = compareValue(out, expected[i], `${set} output ${outputNames[i]}`);
      if (why !== null && DISPUTED[name] !== undefined) return { name, opset, status: 'disputed', category: 'disputed', reason: `${DISPUTED[name]}: ${why}` };
      if (why !== null) return { name, opset, status: 'wrong', category: 'wrong', reason: why };
    }
  }
  if (bind) return { name, opset, status: 'pass', category: BOUND_PASS, reason: `passes with inputs fixed at import: ${firstLine(importError)}` };
  return { name, opset, status: 'pass', category: 'pass', reason: '' };
}

/** Passes only with its shape-like inputs fixed at import (constantInputs). */
const BOUND_PASS = 'pass-with-constant-inputs';

/** The graph input that an import error names as needed known ("ONNX node "N" ... (input i)"), if any. */
function refusedInput(error, model) {
  const m = /ONNX node "([^"]*)".*\(input (\d+)\)/.exec(String(error && error.message));
  if (m === null) return undefined;
  const node = (model.graph.node ?? []).find((n, i) => (n.name || `${n.opType}_${i}`) === m[1]);
  return node === undefined ? undefined : node.input[Number(m[2])];
}

/**
 * A value fixed at import: a scalar, a short integer list (shapes, axes, pads, K...) or a
 * short float list (Resize scales, per-tensor quantization scales).
 */
function shapeLike(t) {
  if (kindOf(t) !== 'Tensor') return false;
  return t.rank === 0 || (t.rank === 1 && ((t.size <= 64 && (t.dtype === 'int64' || t.dtype === 'int32')) || t.size <= 8));
}

function firstLine(error) {
  const m = String((error && error.message) || error);
  const line = m.split('\n')[0];
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** Counts per status and per category. */
function summarize(results) {
  const byStatus = {};
  const byCategory = {};
  for (const r of results) {
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    byCategory[r.category] = (byCategory[r.category] ?? 0) + 1;
  }
  const typed = results.filter((r) => r.status !== 'unsupported-type').length;
  return { total: results.length, typed, pass: byStatus.pass ?? 0, wrong: byStatus.wrong ?? 0, byStatus, byCategory };
}

module.exports = { ATOL, BOUND_PASS, RTOL, SUITE_DIR, TRAINING_OPS, compareTensor, compareValue, findSuite, listCases, option, readTensors, runCase, summarize, unpackSuite };
