/**
 * Dynamic-capable converters (lib/conversion/converters/dynamic.ts): graphs whose tensors
 * have run-time dims but whose int arguments are static convert into engine segments
 * (zero fallback) and, compiled once, match the interpreter at the profile bounds and
 * between them.
 */
import '../../lib/conversion/converters';
import { listConverters } from '../../lib/conversion/registry';
import { interpret } from '../../lib/interpreter';
import type { Graph, Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { Random } from '../helpers/random';
import { DynGraph, compileAndRun } from './helpers';

const rng = new Random(7002);

/** Compiles once with minBlockSize 1 and expects every op in an engine segment and the interpreter's results. */
async function expectAllConverted(graph: Graph, runs: ReadonlyArray<readonly Tensor[]>): Promise<void> {
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
  runs.forEach((inputs, r) => {
    const expected = interpret(graph, inputs);
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${graph.name} run ${r} output ${i}`));
  });
}

const sizes = [1, 3, 8];

test('views: flatten, unflatten, squeeze, unsqueeze, and view with a -1', async () => {
  const b = new DynGraph('views', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 2, 1, 6]);
  const flat = b.call('aten.flatten.using_ints', { self: x, start_dim: 1, end_dim: 3 }).output;
  const unflat = b.call('aten.unflatten.int', { self: flat, dim: 1, sizes: [3, 4] }).output;
  const sq = b.call('aten.squeeze.dim', { self: x, dim: 2 }).output;
  const unsq = b.call('aten.unsqueeze.default', { self: sq, dim: 1 }).output;
  const v = b.call('aten.view.default', { self: x, size: [-1, 6] }).output;
  await expectAllConverted(b.outputs(unflat, unsq, v), sizes.map((n) => [rng.tensor([n, 2, 1, 6])]));
});

test('select, slice, narrow, split, chunk and unbind along static axes; cat and stack', async () => {
  const b = new DynGraph('slices', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 6, 4]);
  const sel = b.call('aten.select.int', { self: x, dim: 1, index: -2 }).output;
  const sl = b.call('aten.slice.Tensor', { self: x, dim: 2, start: 1, end: 9223372036854775807, step: 2 }).output;
  const nar = b.call('aten.narrow.default', { self: x, dim: 1, start: -4, length: 3 }).output;
  const parts = b.call('aten.split.Tensor', { self: x, split_size: 4, dim: 1 }).outputs;
  const chunks = b.call('aten.chunk.default', { self: x, chunks: 2, dim: 2 }).outputs;
  const rows = b.call('aten.unbind.int', { self: x, dim: 2 }).outputs;
  const joined = b.call('aten.cat.default', { tensors: [parts[1]!, parts[0]!], dim: 1 }).output;
  const stacked = b.call('aten.stack.default', { tensors: [rows[0]!, rows[3]!], dim: 1 }).output;
  const outs: Value[] = [sel, sl, nar, chunks[1]!, joined, stacked];
  await expectAllConverted(b.outputs(...outs), sizes.map((n) => [rng.tensor([n, 6, 4])]));
});

test('cat with legacy empty tensors (1-D, size 0: GPT-2 style empty past key/values) under a run-time dim skips them, as PyTorch does', async () => {
  const b = new DynGraph('legacy_empty', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 4, 3]);
  const past = b.graph.addConstant('past', Tensor.from('float32', [0], []));
  const first = b.call('aten.cat.default', { tensors: [past, x], dim: -2 }).output;
  const middle = b.call('aten.cat.default', { tensors: [x, past, x], dim: 1 }).output;
  const runs = sizes.map((n) => [rng.tensor([n, 4, 3])]);
  await expectAllConverted(b.outputs(first, middle), runs);
  // By hand: the empties add nothing, so the first is x and the second x and x along dim 1.
  const { outputs } = await compileAndRun(b.graph, { minBlockSize: 1 }, runs);
  runs.forEach(([t], r) => {
    const xs = Array.from(t!.data as Float32Array);
    const rows = (n: number) => xs.slice(n * 12, n * 12 + 12);
    expect(Array.from(outputs[r]![0]!.data as Float32Array)).toEqual(xs);
    expect(Array.from(outputs[r]![1]!.data as Float32Array)).toEqual(Array.from({ length: t!.shape[0]! }, (_, n) => [...rows(n), ...rows(n)]).flat());
  });
});

test('expand (static sizes, -1 keeps a run-time dim), expand_as and *_like fills', async () => {
  const b = new DynGraph('expand', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 1, 3]);
  const y = b.input('y', 'float32', ['s', 4, 3]);
  const e = b.call('aten.expand.default', { self: x, size: [2, -1, 4, 3] }).output;
  const ea = b.call('aten.expand_as.default', { self: x, other: y }).output;
  const full = b.call('aten.full_like.default', { self: y, fill_value: 2.5 }).output;
  const ones = b.call('aten.ones_like.default', { self: x }).output;
  await expectAllConverted(b.outputs(e, ea, full, ones), sizes.map((n) => [rng.tensor([n, 1, 3]), rng.tensor([n, 4, 3])]));
});

test('embedding and a single-index aten.index into a static table; integer indices with run-time shape', async () => {
  const b = new DynGraph('gather', { b: { min: 1, max: 4 }, t: { min: 2, max: 9 } });
  const ids = b.input('ids', 'int64', ['b', 't']);
  const table = b.graph.addConstant('table', rng.tensor([10, 5]), 'parameter');
  const emb = b.call('aten.embedding.default', { weight: table, indices: ids }).output;
  const idx = b.call('aten.index.Tensor', { self: table, indices: [ids] }).output;
  await expectAllConverted(
    b.outputs(emb, idx),
    [
      [1, 2],
      [3, 5],
      [4, 9],
    ].map(([m, n]) => [rng.intTensor([m!, n!], -10, 9)]),
  );
});

test('linear, matmul, bmm, softmax, log_softmax and reductions', async () => {
  const b = new DynGraph('dense', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3, 8]);
  const w = b.graph.addConstant('w', rng.tensor([5, 8]), 'parameter');
  const bias = b.graph.addConstant('bias', rng.tensor([5]), 'parameter');
  const lin = b.call('aten.linear.default', { input: x, weight: w, bias }).output;
  const mm = b.call('aten.matmul.default', { self: x, other: b.graph.addConstant('m', rng.tensor([8, 2]), 'parameter') }).output;
  const bmm = b.call('aten.bmm.default', { self: x, mat2: b.call('aten.permute.default', { self: x, dims: [0, 2, 1] }).output }).output;
  const soft = b.call('aten._softmax.default', { self: lin, dim: -1, half_to_float: false }).output;
  const logsoft = b.call('aten._log_softmax.default', { self: lin, dim: 1, half_to_float: false }).output;
  const mean = b.call('aten.mean.dim', { self: x, dim: [0, 2], keepdim: true }).output;
  const sum = b.call('aten.sum.dim_IntList', { self: x, dim: [-1] }).output;
  const amax = b.call('aten.amax.default', { self: x, dim: [1] }).output;
  await expectAllConverted(b.outputs(mm, bmm, soft, logsoft, mean, sum, amax), sizes.map((n) => [rng.tensor([n, 3, 8])]));
});

test('layer_norm, native_layer_norm (with statistics) and rms_norm over static normalized dims', async () => {
  const b = new DynGraph('norms', { s: { min: 1, max: 8 }, t: { min: 1, max: 5 } });
  const x = b.input('x', 'float32', ['s', 't', 16]);
  const w = b.graph.addConstant('w', rng.tensor([16]), 'parameter');
  const bias = b.graph.addConstant('bias', rng.tensor([16]), 'parameter');
  const ln = b.call('aten.layer_norm.default', { input: x, normalized_shape: [16], weight: w, bias, eps: 1e-5 }).output;
  const native = b.call('aten.native_layer_norm.default', { input: x, normalized_shape: [16], weight: w, bias, eps: 1e-5 }).outputs;
  const rms = b.call('aten.rms_norm.default', { input: x, normalized_shape: [16], weight: w, eps: 1e-6 }).output;
  await expectAllConverted(
    b.outputs(ln, native[0]!, native[1]!, native[2]!, rms),
    [
      [1, 1],
      [4, 3],
      [8, 5],
    ].map(([m, n]) => [rng.tensor([m!, n!, 16])]),
  );
});

test('scaled_dot_product_attention: causal (run-time mask), float and bool masks', async () => {
  const b = new DynGraph('attention', { s: { min: 1, max: 12 } });
  const q = b.input('q', 'float32', [2, 3, 's', 8]);
  const k = b.input('k', 'float32', [2, 3, 's', 8]);
  const v = b.input('v', 'float32', [2, 3, 's', 8]);
  const fm = b.input('float_mask', 'float32', ['s', 's']);
  const bm = b.input('bool_mask', 'bool', [1, 's', 's']);
  const sdpa = (mask: Value | null, causal: boolean): Value =>
    b.call('aten.scaled_dot_product_attention.default', { query: q, key: k, value: v, attn_mask: mask, dropout_p: 0, is_causal: causal }).output;
  const g = b.outputs(sdpa(null, true), sdpa(fm, false), sdpa(bm, false));
  await expectAllConverted(
    g,
    [1, 5, 12].map((n) => {
      const bools = rng.intTensor([1, n, n], 0, 1, 'bool');
      // Every row keeps at least one key (an all-masked row is NaN in both).
      for (let i = 0; i < n; i++) bools.data[i * n] = 1;
      return [rng.tensor([2, 3, n, 8]), rng.tensor([2, 3, n, 8]), rng.tensor([2, 3, n, 8]), rng.tensor([n, n]), bools];
    }),
  );
});

test('the dynamic registrations are listed beside the static ones, dynamic-only', () => {
  const dynamicOnly = listConverters().filter((c) => c.dynamic && !c.static);
  const names = new Set(dynamicOnly.map((c) => c.target));
  for (const t of ['aten.add.Tensor', 'aten.view.default', 'aten.linear.default', 'aten.native_layer_norm.default', 'aten.scaled_dot_product_attention.default', 'trt.complex_mul']) {
    expect(names.has(t)).toBe(true);
  }
  // The _dyn ops take shape tensors, for static and dynamic data alike.
  const dyn = listConverters().filter((c) => c.target.endsWith('_dyn'));
  expect(dyn.length).toBeGreaterThanOrEqual(16);
  expect(dyn.every((c) => c.static && c.dynamic)).toBe(true);
});
