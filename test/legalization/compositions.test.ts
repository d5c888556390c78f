/**
 * Ops with no `_dyn` op of their own, rewritten by the legalization into `_dyn` ops and cat
 * (lib/legalization/variants.ts): constant_pad_nd / pad, repeat, roll, split /
 * split_with_sizes, with SymInt arguments (from aten.sym_size) or on tensors with run-time
 * dims. Each graph is compiled ONCE and run at two sizes; results are compared with plain
 * loops written here from PyTorch's definitions (SymInt forms) or with onnxruntime-node on
 * the same ONNX model (dynamic-batch Pad / Tile / Split).
 */
import '../../lib/conversion/converters';
import { loadOnnx } from '../../lib/frontends/onnx';
import type { Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { buildSingleOpModel, closeOrt, runOrtModel, type OrtOpSpec } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';
import { withDynamicBatch } from '../conversion/dynamic-batch-helpers';
import { DynGraph, compileAndRun } from './helpers';
import { narrowRef, padRef, repeatRef, rollRef } from './references';

const rng = new Random(2020);

afterAll(() => closeOrt());

// ---------------------------------------------------------------------------------------
// SymInt arguments

const SIZES = [2, 5];

/** Compiles once (zero fallback expected) and compares each run with `reference(x, s)`. */
async function expectRewritten(b: DynGraph, outs: Value[], shape: (s: number) => number[], reference: (x: Tensor, s: number) => Tensor[], variants: string[]): Promise<void> {
  const graph = b.outputs(...outs);
  const runs = SIZES.map((s) => [rng.tensor(shape(s))]);
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
  expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
  const dyn = program.report.segments[0]!.dynamicOps ?? [];
  for (const v of variants) expect(dyn.map((d) => `${d.target} -> ${d.variant}`)).toContain(v);
  SIZES.forEach((s, r) => {
    const expected = reference(runs[r]![0]!, s);
    expect(outputs[r]).toHaveLength(expected.length);
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${graph.name} s=${s} output ${i}`));
  });
}

test('constant_pad_nd and pad (constant) by a SymInt, and by static pads around a run-time dim', async () => {
  const b = new DynGraph('pad', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3, 4]);
  const s = b.size(x, 0);
  const p1 = b.call('aten.constant_pad_nd.default', { self: x, pad: [1, s, 0, 2], value: 0.5 }).output;
  const p2 = b.call('aten.pad.default', { self: x, pad: [0, 0, 0, 0, 2, 1], mode: 'constant', value: -3 }).output;
  await expectRewritten(
    b,
    [p1, p2],
    (n) => [n, 3, 4],
    (t, n) => [padRef(t, [1, n, 0, 2], 0.5), padRef(t, [0, 0, 0, 0, 2, 1], -3)],
    ['aten.constant_pad_nd.default -> trt.full_dyn', 'aten.pad.default -> trt.full_dyn'],
  );
});

test('repeat by a SymInt (and with extra leading repeats)', async () => {
  const b = new DynGraph('repeat', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 2, 3]);
  const s = b.size(x, 0);
  const r1 = b.call('aten.repeat.default', { self: x, repeats: [2, 1, s, 1] }).output;
  const r2 = b.call('aten.repeat.default', { self: x, repeats: [1, 3, 2] }).output;
  await expectRewritten(
    b,
    [r1, r2],
    (n) => [n, 2, 3],
    (t, n) => [repeatRef(t, [2, 1, n, 1]), repeatRef(t, [1, 3, 2])],
    ['aten.repeat.default -> trt.expand_dyn'],
  );
});

test('roll by a SymInt and by a negative shift along the run-time dim', async () => {
  const b = new DynGraph('roll', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3, 5]);
  const s = b.size(x, 0);
  const r = b.call('aten.roll.default', { self: x, shifts: [s, -1], dims: [2, 0] }).output;
  const r2 = b.call('aten.roll.default', { self: x, shifts: [7], dims: [-1] }).output;
  await expectRewritten(
    b,
    [r, r2],
    (n) => [n, 3, 5],
    (t, n) => [rollRef(t, [n, -1], [2, 0]), rollRef(t, [7], [2])],
    ['aten.roll.default -> trt.slice_dyn'],
  );
});

test('split by a SymInt size, and split_with_sizes along the run-time dim', async () => {
  const b = new DynGraph('split', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 8]);
  const y = b.input('y', 'float32', [4, 's']);
  const s = b.size(x, 0);
  // split_size s over a static dim of 8 would give a run-time piece count; a dim of s gives one piece.
  const [whole] = b.call('aten.split.Tensor', { self: y, split_size: s, dim: 1 }).outputs;
  const halves = b.call('aten.split_with_sizes.default', { self: x, split_sizes: [s, 0], dim: 0 }).outputs;
  const cols = b.call('aten.split_with_sizes.default', { self: x, split_sizes: [3, 5], dim: 1 }).outputs;
  const graph = b.outputs(whole!, halves[0]!, cols[0]!, cols[1]!);
  const runs = SIZES.map((n) => [rng.tensor([n, 8]), rng.tensor([4, n])]);
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
  expect((program.report.segments[0]!.dynamicOps ?? []).map((d) => d.variant)).toContain('trt.slice_dyn');
  SIZES.forEach((n, r) => {
    const [xv, yv] = runs[r]!;
    const expected = [yv!, xv!, narrowRef(xv!, 1, 0, 3), narrowRef(xv!, 1, 3, 5)];
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `split n=${n} output ${i}`));
  });
});

test('a SymInt pad that may be negative at run time is refused with the reason (the op falls back)', async () => {
  const b = new DynGraph('negative_pad', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 4]);
  const s = b.size(x, 0);
  const three = b.call('sym.sub', { a: s, b: 3 }).output;
  const p = b.call('aten.constant_pad_nd.default', { self: x, pad: [three, 0], value: 0 }).output;
  const graph = b.outputs(p);
  const runs = [[rng.tensor([5, 4])]];
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  const op = program.report.ops.find((o) => o.target === 'aten.constant_pad_nd.default')!;
  expect(op.converted).toBe(false);
  expect(op.reasons.join('; ')).toContain('pad 0 = s-3 may be negative at run time');
  expectClose(outputs[0]![0]!, padRef(runs[0]![0]!, [2, 0], 0), FP32, 'fallback pad');
});

test('static shapes keep the static converters (no rewrite)', async () => {
  const b = new DynGraph('static', {});
  const x = b.input('x', 'float32', [2, 3, 4]);
  const p = b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 2], value: 0 }).output;
  const r = b.call('aten.repeat.default', { self: x, repeats: [2, 1, 1] }).output;
  const o = b.call('aten.roll.default', { self: x, shifts: [1], dims: [2] }).output;
  const graph = b.outputs(p, r, o);
  const x0 = rng.tensor([2, 3, 4]);
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, [[x0]]);
  expect(program.report.ops.map((op) => `${op.target} -> ${op.converter}`)).toEqual([
    'aten.constant_pad_nd.default -> aten.constant_pad_nd.default',
    'aten.repeat.default -> aten.repeat.default',
    'aten.roll.default -> aten.roll.default',
  ]);
  expect(program.report.segments[0]!.dynamicOps ?? []).toEqual([]);
  const expected = [padRef(x0, [1, 2], 0), repeatRef(x0, [2, 1, 1]), rollRef(x0, [1], [2])];
  outputs[0]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `static output ${i}`));
});

// ---------------------------------------------------------------------------------------
// ONNX with a dynamic batch vs onnxruntime

const int64 = (values: number[]): { constant: Tensor } => ({ constant: Tensor.from('int64', [values.length], values) });

const ONNX: Array<[string, number[], (x: Tensor) => OrtOpSpec, string]> = [
  ['Pad (constant)', [3, 4], (x) => ({ opType: 'Pad', inputs: [x, int64([0, 1, 0, 0, 2, 3]), { constant: Tensor.from('float32', [], [1.5]) }] }), 'aten.constant_pad_nd.default'],
  ['Tile', [2, 3], (x) => ({ opType: 'Tile', inputs: [x, int64([2, 3, 1])] }), 'aten.repeat.default'],
  ['Split along the batch', [3], (x) => ({ opType: 'Split', inputs: [x], attributes: { axis: 0, num_outputs: 1 }, opset: 18 }), 'aten.split_with_sizes.default'],
];

test.each(ONNX)('ONNX %s with a dynamic batch: one compile, two batches, matches onnxruntime', async (_label, shape, spec, target) => {
  const model = withDynamicBatch(buildSingleOpModel(spec(rng.tensor([1, ...shape]))));
  const runs = [3, 6].map((n) => [rng.tensor([n, ...shape])]);
  const { program, outputs } = await compileAndRun(loadOnnx(model), { minBlockSize: 1, inputs: { in0: { min: [1, ...shape], max: [8, ...shape] } } }, runs);
  expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
  expect(program.report.ops.map((o) => o.target)).toContain(target);
  for (const [r, inputs] of runs.entries()) {
    const expected = await runOrtModel(model, inputs);
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${_label} batch ${inputs[0]!.shape[0]} output ${i}`));
  }
}, 60_000);
