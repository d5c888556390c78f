'use strict';
// GPU check of the dynamic-shape gather / index / cumsum converters (the zoo's
// bert/roberta/convnext/swin fallbacks) on the cuda backend (plain Node over dist/, no jest).
// Each case is an IR graph with run-time dims, compiled ONCE with `backend: 'cuda'`, that
// must have no fallback op, run at two sizes and compared with the CPU interpreter running
// the same graph (fp32: |a-b| <= 1e-5 + 1e-4·|b|; integers exactly). Prints one JSON line per
// case and size: converters used, segments, max abs error, shapes. Then indices out of range at
// run time: refused with E_BAD_INPUT by both (RANGE_CASES).
// Exit 0: passed; 1: failed; 3: no usable GPU here.
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { gpuCheck, assert, randomFloats, lib } = require('./check-util');
const ir = { ...require(path.join(root, 'dist', 'ir-entry.js')), Tensor: lib.Tensor };

function floats(shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  return ir.Tensor.from('float32', shape, randomFloats(n, seed));
}

/** Integers in [lo, hi] (deterministic). */
function ints(shape, lo, hi, seed) {
  const f = randomFloats(shape.reduce((a, b) => a * b, 1), seed);
  return ir.Tensor.from('int64', shape, Array.from(f, (x) => lo + Math.floor(((x + 1) / 2) * (hi - lo + 1))));
}

/** A graph with named symbols; `build(g, input)` returns its output value. */
function graph(name, symbols, build) {
  const g = new ir.Graph(name);
  for (const [s, r] of Object.entries(symbols)) g.symbols.set(s, r);
  const input = (n, dtype, dims) => g.addInput(n, ir.tensorType(dtype, dims.map((d) => (typeof d === 'number' ? d : ir.sym(d)))));
  g.setOutputs([build(g, input)]);
  return g;
}

const op = (g, target, args) => ir.call(g, target, args).output;

const CASES = [
  {
    name: 'gather: static [1, 16] table by position ids [1, seq] (bert token types)',
    graph: () =>
      graph('gather_table', { seq: { min: 1, max: 16 } }, (g, input) =>
        op(g, 'aten.gather.default', { self: g.addConstant('table', ints([1, 16], 0, 1, 3)), dim: 1, index: input('pos', 'int64', [1, 'seq']) }),
      ),
    sizes: [[ints([1, 8], 0, 15, 5)], [ints([1, 13], 0, 15, 6)]],
    targets: ['aten.gather.default'],
  },
  {
    name: 'gather: self [b, 5] by index [c, 3] (self cut to c rows at run time)',
    graph: () =>
      graph('gather_crop', { b: { min: 1, max: 8 }, c: { min: 1, max: 8 } }, (g, input) =>
        op(g, 'aten.gather.default', { self: input('self', 'float32', ['b', 5]), dim: 1, index: input('index', 'int64', ['c', 3]) }),
      ),
    sizes: [
      [floats([6, 5], 7), ints([2, 3], 0, 4, 8)],
      [floats([3, 5], 9), ints([3, 3], 0, 4, 10)],
    ],
    targets: ['aten.gather.default'],
  },
  {
    name: 'cumsum along a run-time dim and along a static one',
    graph: () =>
      graph('cumsum', { b: { min: 1, max: 8 } }, (g, input) => {
        const x = input('x', 'float32', ['b', 6]);
        return op(g, 'aten.add.Tensor', { self: op(g, 'aten.cumsum.default', { self: x, dim: 0 }), other: op(g, 'aten.cumsum.default', { self: x, dim: 1 }) });
      }),
    sizes: [[floats([3, 6], 11)], [floats([7, 6], 12)]],
    targets: ['aten.cumsum.default'],
  },
  {
    name: 'index.Tensor: [b, 6, 2] by a [2, 3] table with negative indices along dim 1',
    graph: () =>
      graph('index_dim1', { b: { min: 1, max: 8 } }, (g, input) =>
        op(g, 'aten.index.Tensor', { self: input('x', 'float32', ['b', 6, 2]), indices: [null, g.addConstant('idx', ir.Tensor.from('int64', [2, 3], [0, -1, 3, -6, 5, 2]))] }),
      ),
    sizes: [[floats([3, 6, 2], 13)], [floats([7, 6, 2], 14)]],
    targets: ['aten.index.Tensor'],
  },
  {
    name: 'index.Tensor: rows [-1, 0] of a run-time batch (wrapped by the batch read at run time)',
    graph: () =>
      graph('index_batch', { b: { min: 1, max: 8 } }, (g, input) =>
        op(g, 'aten.index.Tensor', { self: input('x', 'float32', ['b', 3]), indices: [g.addConstant('idx', ir.Tensor.from('int64', [2], [-1, 0]))] }),
      ),
    sizes: [[floats([3, 3], 15)], [floats([7, 3], 16)]],
    targets: ['aten.index.Tensor'],
  },
];

/**
 * Indices that arrive at run time, out of range: the cuda backend's index kernels report them
 * through the plan's status word and the run fails with E_BAD_INPUT naming the layer, as the CPU
 * interpreter fails; the run after a refused one is right again. Host inputs (the queued path)
 * and device inputs after the plan is captured (one execute() call, the status read with it).
 */
const RANGE_CASES = [
  {
    name: 'gather.default: [4, 3] by a run-time index along dim 0',
    graph: () =>
      graph('gather_range', { k: { min: 1, max: 8 } }, (g, input) =>
        op(g, 'aten.gather.default', { self: input('x', 'float32', [4, 3]), dim: 0, index: input('index', 'int64', ['k', 3]) }),
      ),
    good: () => [floats([4, 3], 21), ints([2, 3], 0, 3, 22)],
    bad: [
      () => [floats([4, 3], 21), ir.Tensor.from('int64', [2, 3], [0, 1, 2, 3, -6, 1])],
      () => [floats([4, 3], 21), ir.Tensor.from('int64', [2, 3], [0, 1, 2, 3, 4, 1])],
    ],
  },
  {
    name: 'embedding: a [16, 8] table by run-time token ids [1, seq]',
    graph: () =>
      graph('embedding_range', { seq: { min: 1, max: 32 } }, (g, input) =>
        op(g, 'aten.embedding.default', { weight: g.addConstant('table', floats([16, 8], 23)), indices: input('ids', 'int64', [1, 'seq']) }),
      ),
    good: () => [ints([1, 9], 0, 15, 24)],
    bad: [() => [ir.Tensor.from('int64', [1, 4], [1, 16, 2, 3])], () => [ir.Tensor.from('int64', [1, 4], [1, -17, 2, 3])]],
  },
];

async function rangeCase(c) {
  const g = c.graph();
  const program = await lib.compile(g, { backend: 'cuda', minBlockSize: 1 });
  try {
    const refusals = [];
    const runGood = async (how) => {
      const inputs = c.good();
      const [expected] = ir.interpret(g, inputs);
      const [actual] = await program.run(how === 'device' ? await Promise.all(inputs.map((t) => lib.toDevice(t))) : inputs);
      maxAbsError(actual instanceof lib.Tensor ? actual : await actual.toHost(), expected);
    };
    await runGood('host');
    for (const how of ['host', 'device']) {
      await runGood(how);
      for (const bad of c.bad) {
        const inputs = bad();
        let cpu;
        try {
          ir.interpret(g, inputs);
        } catch (error) {
          cpu = error;
        }
        assert(cpu && cpu.code === 'E_BAD_INPUT', `the interpreter accepted ${JSON.stringify(inputs.map((t) => t.toArray()))}`);
        let gpu;
        try {
          await program.run(how === 'device' ? await Promise.all(inputs.map((t) => lib.toDevice(t))) : inputs);
        } catch (error) {
          gpu = error;
        }
        assert(gpu && gpu.code === 'E_BAD_INPUT', `${how} inputs: the cuda run gave ${gpu ? `${gpu.code}: ${gpu.message}` : 'an answer'}`);
        refusals.push({ how, message: gpu.message });
      }
      await runGood(how);
    }
    return refusals;
  } finally {
    await program.dispose();
  }
}

function maxAbsError(actual, expected) {
  assert(JSON.stringify(actual.shape) === JSON.stringify(expected.shape), `shape [${actual.shape}] vs expected [${expected.shape}]`);
  const a = actual.toArray();
  const b = expected.toArray();
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const err = Math.abs(Number(a[i]) - Number(b[i]));
    assert(err <= 1e-5 + 1e-4 * Math.abs(Number(b[i])), `element ${i}: ${a[i]} vs ${b[i]}`);
    worst = Math.max(worst, err);
  }
  return worst;
}

gpuCheck('dynamic-indexing', async () => {
  const failures = [];
  for (const c of CASES) {
    const g = c.graph();
    let program;
    try {
      program = await lib.compile(g, { backend: 'cuda', minBlockSize: 1 });
      const refused = program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`);
      const converters = program.report.ops.filter((o) => c.targets.includes(o.target)).map((o) => o.converter);
      const segments = program.report.segments.map((s) => s.kind);
      assert(refused.length === 0, `ops in fallback: ${refused.join(' | ')}`);
      assert(converters.length > 0 && converters.every((n) => n.endsWith('(dynamic)')), `converters ${converters.join(', ')}`);
      for (const inputs of c.sizes) {
        const [expected] = ir.interpret(g, inputs);
        const [actual] = await program.run(inputs);
        const maxAbs = maxAbsError(actual, expected);
        console.log(JSON.stringify({ case: c.name, ok: true, input: inputs[0].shape, output: actual.shape, maxAbs, converters, segments }));
      }
    } catch (error) {
      console.log(JSON.stringify({ case: c.name, ok: false, code: error.code, message: error.message }));
      failures.push(c.name);
    } finally {
      if (program) await program.dispose();
    }
  }
  for (const c of RANGE_CASES) {
    try {
      const refusals = await rangeCase(c);
      console.log(JSON.stringify({ case: c.name, ok: true, refusals }));
    } catch (error) {
      console.log(JSON.stringify({ case: c.name, ok: false, code: error.code, message: error.message }));
      failures.push(c.name);
    }
  }
  assert(failures.length === 0, `${failures.length} case(s) failed: ${failures.join('; ')}`);
  return { cases: CASES.length + RANGE_CASES.length };
});
