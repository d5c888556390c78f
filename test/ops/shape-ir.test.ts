/**
 * SHAPE family in the IR: ATen ops that ONNX does not produce, checked on hand-derived
 * values, and exact symbolic shape inference (printed with formatShape), including slice
 * bounds with the INT64_MAX sentinel and clamps decided by symbol ranges.
 */
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import { formatShape, sym, type Dim } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor, type Shape } from '../../lib/ir/tensor';

const INT64_MAX = 9223372036854775807; // arrives as a JS number (2^63)
const s0 = sym('s0');

/** 0, 1, 2, ... in `dtype` and `shape`. */
function iota(shape: Shape, dtype: DType = 'float32', start = 0): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return Tensor.from(
    dtype,
    shape,
    Array.from({ length: n }, (_, i) => start + i),
  );
}

/** A graph with one input `x` (and `s0` in [min, max] when its shape uses it). */
function graphOf(dtype: DType, shape: readonly Dim[], range: [number, number] = [2, 64]): { g: Graph; x: Value } {
  const g = new Graph('t');
  if (shape.some((d) => typeof d !== 'number')) g.symbols.set('s0', { min: range[0], max: range[1] });
  const x = g.addInput('x', tensorType(dtype, shape));
  return { g, x };
}

function op(g: Graph, target: string, args: Record<string, Arg>, name?: string): Value {
  return call(g, target, args, { name }).output;
}

function runOne(g: Graph, out: Value | Value[], inputs: Tensor[]): Tensor[] {
  const outs = Array.isArray(out) ? out : [out];
  g.setOutputs(outs);
  return interpret(g, inputs);
}

/** Expects dtype, shape and values exactly. */
function expectTensor(t: Tensor, dtype: DType, shape: Shape, values: readonly number[]): void {
  expect(t.dtype).toBe(dtype);
  expect([...t.shape]).toEqual([...shape]);
  expect(t.toArray()).toEqual([...values]);
}

/** Runs a single op on one constant-free input and returns its outputs. */
function single(target: string, x: Tensor, args: Record<string, Arg> = {}, selfName = 'self'): Tensor[] {
  const { g, x: xv } = graphOf(x.dtype, x.shape);
  const node = call(g, target, { [selfName]: xv, ...args });
  g.setOutputs(node.outputs);
  return interpret(g, [x]);
}

function errorOf(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error('expected an error');
}

describe('symbolic view/reshape', () => {
  test('sym_size → view([sym, 2, 4]) infers [s0, 2, 4] and runs at s0 = 3 and 7', () => {
    const { g, x } = graphOf('float32', [s0, 8]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const v = op(g, 'aten.view.default', { self: x, size: [n, 2, 4] });
    expect(formatShape(v.tensorType.shape)).toBe('[s0, 2, 4]');
    g.setOutputs([v]);
    for (const rows of [3, 7]) {
      const input = iota([rows, 8]);
      const [out] = interpret(g, [input]);
      expectTensor(
        out!,
        'float32',
        [rows, 2, 4],
        Array.from({ length: rows * 8 }, (_, i) => i),
      );
    }
  });
  test('-1 is inferred exactly: [s0, 8] → [-1, 4] is [s0*2, 4]; [2, s0, 4] → [-1, 8] is [s0, 8]', () => {
    const { g, x } = graphOf('float32', [s0, 8]);
    expect(formatShape(op(g, 'aten.reshape.default', { self: x, shape: [-1, 4] }).tensorType.shape)).toBe('[s0*2, 4]');
    expect(formatShape(op(g, 'aten.view.default', { self: x, size: [2, -1] }).tensorType.shape)).toBe('[2, s0*4]');
    const h = graphOf('float32', [2, s0, 4]);
    expect(formatShape(op(h.g, 'aten._unsafe_view.default', { self: h.x, size: [-1, 8] }).tensorType.shape)).toBe('[s0, 8]');
    const v = op(h.g, 'aten.view.default', { self: h.x, size: [-1] });
    expect(formatShape(v.tensorType.shape)).toBe('[s0*8]');
    const [out] = runOne(h.g, v, [iota([2, 5, 4])]);
    expect(out!.shape).toEqual([40]);
  });
  test('a wrong element count is E_BAD_MODEL naming the node', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    const e = errorOf(() => call(g, 'aten.view.default', { self: x, size: [4, 2] }, { name: 'my_view' }));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('my_view');
  });
});

describe('slice.Tensor', () => {
  test('slice(x[s0, 64], 0, 0, s0) is [s0, 64]; INT64_MAX end and negative start', () => {
    const { g, x } = graphOf('float32', [s0, 64]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const a = op(g, 'aten.slice.Tensor', { self: x, dim: 0, start: 0, end: n });
    const b = op(g, 'aten.slice.Tensor', { self: x, dim: 1, start: 2, end: INT64_MAX });
    const c = op(g, 'aten.slice.Tensor', { self: x, dim: -1, start: -3, end: INT64_MAX });
    const d = op(g, 'aten.slice.Tensor', { self: x, dim: 1, start: null, end: null, step: 5 });
    const e = op(g, 'aten.slice.Tensor', { self: x, dim: 1, start: 60, end: 1000, step: 3 });
    expect([a, b, c, d, e].map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 64]', '[s0, 62]', '[s0, 3]', '[s0, 13]', '[s0, 2]']);
    const input = iota([3, 64]);
    const [ra, rb, rc, rd, re] = runOne(g, [a, b, c, d, e], [input]);
    expect(ra!.toArray()).toEqual(input.toArray());
    expect(rb!.toArray().slice(0, 3)).toEqual([2, 3, 4]);
    expect(rc!.toArray()).toEqual([61, 62, 63, 125, 126, 127, 189, 190, 191]);
    expect(rd!.toArray().slice(0, 13)).toEqual([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60]);
    expect(re!.toArray()).toEqual([60, 63, 124, 127, 188, 191]);
  });
  test('a [2048, 32] buffer sliced to end = s0 is [s0, 32] when s0 ∈ [2, 64]', () => {
    const { g, x } = graphOf('float32', [s0, 32]);
    const buffer = g.addConstant('buffer', iota([2048, 32]), 'buffer');
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const out = op(g, 'aten.slice.Tensor', { self: buffer, dim: 0, start: 0, end: n });
    expect(formatShape(out.tensorType.shape)).toBe('[s0, 32]');
    const [r] = runOne(g, out, [iota([5, 32])]);
    expect(r!.shape).toEqual([5, 32]);
    expect(r!.toArray()[159]).toBe(159);
  });
  test('without a range that fits, the clamp stays as min()', () => {
    const { g, x } = graphOf('float32', [s0, 32], [0, Infinity]);
    const buffer = g.addConstant('buffer', iota([16, 2]), 'buffer');
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const out = op(g, 'aten.slice.Tensor', { self: buffer, dim: 0, start: 0, end: n });
    expect(formatShape(out.tensorType.shape)).toBe('[min(s0, 16), 2]');
    for (const rows of [3, 40]) {
      const [r] = runOne(g, out, [iota([rows, 32])]);
      expect(r!.shape).toEqual([Math.min(rows, 16), 2]);
    }
    const tail = op(g, 'aten.slice.Tensor', { self: x, dim: 0, start: -1, end: null });
    expect(formatShape(tail.tensorType.shape)).toBe('[s0-max(s0-1, 0), 32]');
    for (const rows of [0, 1, 4]) {
      const [r] = runOne(g, tail, [iota([rows, 32])]);
      expect(r!.shape).toEqual([Math.min(rows, 1), 32]);
    }
  });
  test('trt.slice_onnx with a negative step on a symbolic dim', () => {
    const { g, x } = graphOf('float32', [s0, 2]);
    const rev = op(g, 'trt.slice_onnx', { self: x, dim: 0, start: -1, end: -INT64_MAX, step: -1 });
    expect(formatShape(rev.tensorType.shape)).toBe('[s0, 2]');
    const odd = op(g, 'trt.slice_onnx', { self: x, dim: 0, start: INT64_MAX, end: -INT64_MAX, step: -2 });
    expect(formatShape(odd.tensorType.shape)).toBe('[(s0+1)//2, 2]');
    const [r, o] = runOne(g, [rev, odd], [iota([5, 2])]);
    expectTensor(r!, 'float32', [5, 2], [8, 9, 6, 7, 4, 5, 2, 3, 0, 1]);
    expectTensor(o!, 'float32', [3, 2], [8, 9, 4, 5, 0, 1]);
  });
  test('a non-positive step is E_BAD_MODEL', () => {
    const { g, x } = graphOf('float32', [4]);
    expect(errorOf(() => call(g, 'aten.slice.Tensor', { self: x, dim: 0, start: 0, end: 4, step: 0 })).code).toBe('E_BAD_MODEL');
  });
});

describe('split, chunk, unbind', () => {
  test('split.Tensor with an uneven last chunk', () => {
    const outs = single('aten.split.Tensor', iota([7, 2]), { split_size: 3 });
    expect(outs.map((t) => t.shape)).toEqual([
      [3, 2],
      [3, 2],
      [1, 2],
    ]);
    expect(outs[2]!.toArray()).toEqual([12, 13]);
    const cols = single('aten.split.Tensor', iota([2, 5]), { split_size: 2, dim: -1 });
    expect(cols.map((t) => t.toArray())).toEqual([
      [0, 1, 5, 6],
      [2, 3, 7, 8],
      [4, 9],
    ]);
  });
  test('split.Tensor on symbolic dims: exact divisor, or a count fixed by the range', () => {
    const { g, x } = graphOf('float32', [s0, 12]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const parts = call(g, 'aten.split.Tensor', { self: x, split_size: 5, dim: 1 }).outputs;
    expect(parts.map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 5]', '[s0, 5]', '[s0, 2]']);
    const whole = call(g, 'aten.split.Tensor', { self: x, split_size: 64 }).outputs;
    expect(whole.map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 12]']);
    const byN = call(g, 'aten.split.Tensor', { self: op(g, 'aten.cat.default', { tensors: [x, x, x] }), split_size: n }).outputs;
    expect(byN.map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 12]', '[s0, 12]', '[s0, 12]']);
    const results = runOne(g, [...parts, ...whole, ...byN], [iota([3, 12])]);
    expect(results[2]!.toArray()).toEqual([10, 11, 22, 23, 34, 35]);
    expect(results[5]!.toArray()).toEqual(iota([3, 12]).toArray());
    const h = graphOf('float32', [s0], [0, Infinity]);
    const e = errorOf(() => call(h.g, 'aten.split.Tensor', { self: h.x, split_size: 4 }));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
  });
  test('split_with_sizes, chunk and unbind', () => {
    const parts = single('aten.split_with_sizes.default', iota([6]), { split_sizes: [1, 0, 5] });
    expect(parts.map((t) => t.toArray())).toEqual([[0], [], [1, 2, 3, 4, 5]]);
    const chunks = single('aten.chunk.default', iota([5, 2]), { chunks: 3 });
    expect(chunks.map((t) => t.shape)).toEqual([
      [2, 2],
      [2, 2],
      [1, 2],
    ]);
    expect(single('aten.chunk.default', iota([6]), { chunks: 4 }).map((t) => t.toArray())).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    const rows = single('aten.unbind.int', iota([2, 3]), { dim: 1 });
    expect(rows.map((t) => t.toArray())).toEqual([
      [0, 3],
      [1, 4],
      [2, 5],
    ]);
    const { g, x } = graphOf('float32', [s0, 8]);
    const halves = call(g, 'aten.chunk.default', { self: op(g, 'aten.cat.default', { tensors: [x, x] }), chunks: 2 }).outputs;
    expect(halves.map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 8]', '[s0, 8]']);
  });
  test('split sizes that do not add up are E_BAD_MODEL', () => {
    const { g, x } = graphOf('float32', [6]);
    expect(errorOf(() => call(g, 'aten.split_with_sizes.default', { self: x, split_sizes: [2, 2] })).code).toBe('E_BAD_MODEL');
  });
});

describe('views and joins', () => {
  test('permute, transpose, t, flatten, unflatten, squeeze, unsqueeze', () => {
    const x = iota([2, 3]);
    expectTensor(single('aten.permute.default', x, { dims: [1, 0] })[0]!, 'float32', [3, 2], [0, 3, 1, 4, 2, 5]);
    expectTensor(single('aten.transpose.int', x, { dim0: -1, dim1: 0 })[0]!, 'float32', [3, 2], [0, 3, 1, 4, 2, 5]);
    expectTensor(single('aten.t.default', x)[0]!, 'float32', [3, 2], [0, 3, 1, 4, 2, 5]);
    expectTensor(single('aten.t.default', iota([3]))[0]!, 'float32', [3], [0, 1, 2]);
    expect(single('aten.flatten.using_ints', iota([2, 3, 4]), { start_dim: 1 })[0]!.shape).toEqual([2, 12]);
    expect(single('aten.flatten.using_ints', iota([]))[0]!.shape).toEqual([1]);
    expect(single('aten.unflatten.int', iota([2, 12]), { dim: -1, sizes: [3, -1] })[0]!.shape).toEqual([2, 3, 4]);
    expect(single('aten.squeeze.default', iota([1, 2, 1]))[0]!.shape).toEqual([2]);
    expect(single('aten.squeeze.dim', iota([1, 2, 1]), { dim: -1 })[0]!.shape).toEqual([1, 2]);
    expect(single('aten.squeeze.dim', iota([3, 2]), { dim: 0 })[0]!.shape).toEqual([3, 2]);
    expect(single('aten.squeeze.dims', iota([1, 2, 1]), { dim: [0, 1, 2] })[0]!.shape).toEqual([2]);
    expect(single('aten.unsqueeze.default', iota([2, 3]), { dim: -1 })[0]!.shape).toEqual([2, 3, 1]);
  });
  test('symbolic shapes of views', () => {
    const { g, x } = graphOf('float32', [2, s0, 4]);
    const shapes = [
      op(g, 'aten.permute.default', { self: x, dims: [2, 0, 1] }),
      op(g, 'aten.flatten.using_ints', { self: x }),
      op(g, 'aten.flatten.using_ints', { self: x, start_dim: 0, end_dim: 1 }),
      op(g, 'aten.unflatten.int', { self: x, dim: 2, sizes: [2, -1] }),
      op(g, 'aten.unsqueeze.default', { self: x, dim: 1 }),
      op(g, 'aten.squeeze.default', { self: op(g, 'aten.unsqueeze.default', { self: x, dim: 0 }) }),
    ].map((v) => formatShape(v.tensorType.shape));
    expect(shapes).toEqual(['[4, 2, s0]', '[s0*8]', '[s0*2, 4]', '[2, s0, 2, 2]', '[2, 1, s0, 4]', '[2, s0, 4]']);
  });
  test('cat promotes dtypes, sums symbolic dims and skips legacy empty tensors', () => {
    const { g, x } = graphOf('float32', [s0, 4]);
    const y = g.addInput('y', tensorType('int64', [1, 4]));
    const empty = g.addConstant('empty', new Tensor('float32', [0]));
    const c = op(g, 'aten.cat.default', { tensors: [x, y, empty, x] });
    expect(c.tensorType.dtype).toBe('float32');
    expect(formatShape(c.tensorType.shape)).toBe('[s0*2+1, 4]');
    const [r] = runOne(g, c, [iota([2, 4]), iota([1, 4], 'int64', 100)]);
    expectTensor(r!, 'float32', [5, 4], [0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 0, 1, 2, 3, 4, 5, 6, 7]);
  });
  test('stack along a new last dim', () => {
    const { g, x } = graphOf('int64', [s0]);
    const st = op(g, 'aten.stack.default', { tensors: [x, x], dim: -1 });
    expect(formatShape(st.tensorType.shape)).toBe('[s0, 2]');
    const [r] = runOne(g, st, [iota([3], 'int64')]);
    expectTensor(r!, 'int64', [3, 2], [0, 0, 1, 1, 2, 2]);
  });
});

describe('select, narrow, expand, repeat', () => {
  test('select and narrow with negative index/start', () => {
    const x = iota([3, 4]);
    expectTensor(single('aten.select.int', x, { dim: 1, index: -1 })[0]!, 'float32', [3], [3, 7, 11]);
    expectTensor(single('aten.select.int', x, { dim: 0, index: 1 })[0]!, 'float32', [4], [4, 5, 6, 7]);
    expectTensor(single('aten.narrow.default', x, { dim: 1, start: -3, length: 2 })[0]!, 'float32', [3, 2], [1, 2, 5, 6, 9, 10]);
    const { g, x: xv } = graphOf('float32', [s0, 4]);
    expect(formatShape(op(g, 'aten.select.int', { self: xv, dim: 1, index: 2 }).tensorType.shape)).toBe('[s0]');
    const n = call(g, 'aten.sym_size.int', { self: xv, dim: 0 }).output;
    expect(formatShape(op(g, 'aten.narrow.default', { self: xv, dim: 1, start: 0, length: 3 }).tensorType.shape)).toBe('[s0, 3]');
    const nw = op(g, 'aten.narrow.default', { self: op(g, 'aten.cat.default', { tensors: [xv, xv] }), dim: 0, start: n, length: n });
    expect(formatShape(nw.tensorType.shape)).toBe('[s0, 4]');
  });
  test('expand (-1 keeps, new leading dims), expand_as, repeat', () => {
    const { g, x } = graphOf('float32', [s0, 1]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const e = op(g, 'aten.expand.default', { self: x, size: [2, -1, 3] });
    const e2 = op(g, 'aten.expand.default', { self: x, size: [n, 2] });
    const other = g.addInput('o', tensorType('float32', [s0, 2]));
    const ea = op(g, 'aten.expand_as.default', { self: x, other });
    const rep = op(g, 'aten.repeat.default', { self: x, repeats: [1, 2, n] });
    expect([e, e2, ea, rep].map((v) => formatShape(v.tensorType.shape))).toEqual(['[2, s0, 3]', '[s0, 2]', '[s0, 2]', '[1, s0*2, s0]']);
    const [re, , , rr] = runOne(g, [e, e2, ea, rep], [iota([2, 1]), iota([2, 2])]);
    expectTensor(re!, 'float32', [2, 2, 3], [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]);
    expectTensor(rr!, 'float32', [1, 4, 2], [0, 0, 1, 1, 0, 0, 1, 1]);
  });
  test('repeat_interleave with and without dim', () => {
    expectTensor(single('aten.repeat_interleave.self_int', iota([2, 2]), { repeats: 2 })[0]!, 'float32', [8], [0, 0, 1, 1, 2, 2, 3, 3]);
    expectTensor(single('aten.repeat_interleave.self_int', iota([2, 2]), { repeats: 3, dim: 0 })[0]!, 'float32', [6, 2], [0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3]);
    const { g, x } = graphOf('float32', [s0, 3]);
    expect(formatShape(op(g, 'aten.repeat_interleave.self_int', { self: x, repeats: 2, dim: 1 }).tensorType.shape)).toBe('[s0, 6]');
  });
  test('expanding a static non-1 dim to another size is E_BAD_MODEL', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    expect(errorOf(() => call(g, 'aten.expand.default', { self: x, size: [4, 3] })).code).toBe('E_BAD_MODEL');
  });
});

describe('gathers and scatters', () => {
  test('index_select, embedding, gather', () => {
    const { g, x } = graphOf('float32', [3, 4]);
    const idx = g.addConstant('idx', Tensor.from('int64', [3], [2, 0, 2]));
    const ids = g.addConstant('ids', Tensor.from('int32', [2, 2], [1, 0, 2, 1]));
    const gi = g.addConstant('gi', Tensor.from('int64', [2, 2], [3, 0, 1, 1]));
    const a = op(g, 'aten.index_select.default', { self: x, dim: 0, index: idx });
    const b = op(g, 'aten.embedding.default', { weight: x, indices: ids });
    const c = op(g, 'aten.gather.default', { self: x, dim: 1, index: gi });
    const [ra, rb, rc] = runOne(g, [a, b, c], [iota([3, 4])]);
    expectTensor(ra!, 'float32', [3, 4], [8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11]);
    expectTensor(rb!, 'float32', [2, 2, 4], [4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7]);
    expectTensor(rc!, 'float32', [2, 2], [3, 0, 5, 5]);
  });
  test('scatter.src, scatter.value, scatter_add, scatter.reduce, scatter_reduce.two', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    const index = g.addConstant('index', Tensor.from('int64', [1, 3], [1, 0, 1]));
    const src = g.addConstant('src', Tensor.from('float32', [2, 3], [10, 20, 30, 40, 50, 60]));
    const a = op(g, 'aten.scatter.src', { self: x, dim: 0, index, src });
    const b = op(g, 'aten.scatter.value', { self: x, dim: 0, index, value: -1 });
    const idx2 = g.addConstant('idx2', Tensor.from('int64', [1, 2], [2, 2]));
    const c = op(g, 'aten.scatter_add.default', { self: x, dim: 1, index: idx2, src });
    const d = op(g, 'aten.scatter.reduce', { self: x, dim: 1, index: idx2, src, reduce: 'multiply' });
    const e = op(g, 'aten.scatter_reduce.two', { self: x, dim: 1, index: idx2, src, reduce: 'amax' });
    const [ra, rb, rc, rd, re] = runOne(g, [a, b, c, d, e], [iota([2, 3])]);
    expectTensor(ra!, 'float32', [2, 3], [0, 20, 2, 10, 4, 30]);
    expectTensor(rb!, 'float32', [2, 3], [0, -1, 2, -1, 4, -1]);
    expectTensor(rc!, 'float32', [2, 3], [0, 1, 32, 3, 4, 5]);
    expectTensor(rd!, 'float32', [2, 3], [0, 1, 400, 3, 4, 5]);
    expectTensor(re!, 'float32', [2, 3], [0, 1, 20, 3, 4, 5]);
  });
  test('index.Tensor: adjacent and separated indices, broadcasting, leading None', () => {
    const { g, x } = graphOf('float32', [2, 3, 4]);
    const i = g.addConstant('i', Tensor.from('int64', [2], [1, 0]));
    const j = g.addConstant('j', Tensor.from('int64', [2, 1], [-1, 0]));
    const adj = op(g, 'aten.index.Tensor', { self: x, indices: [null, i, j] });
    const sep = op(g, 'aten.index.Tensor', { self: x, indices: [i, null, j] });
    const one = op(g, 'aten.index.Tensor', { self: x, indices: [null, null, j] });
    expect([adj, sep, one].map((v) => formatShape(v.tensorType.shape))).toEqual(['[2, 2, 2]', '[2, 2, 3]', '[2, 3, 2, 1]']);
    const [ra, rs, ro] = runOne(g, [adj, sep, one], [iota([2, 3, 4])]);
    // adj[b, p, q] = x[b, i[q], j[p]]
    expectTensor(ra!, 'float32', [2, 2, 2], [7, 3, 4, 0, 19, 15, 16, 12]);
    // sep[p, q, k] = x[i[q], k, j[p]]
    expectTensor(rs!, 'float32', [2, 2, 3], [15, 19, 23, 3, 7, 11, 12, 16, 20, 0, 4, 8]);
    expect(ro!.toArray().slice(0, 4)).toEqual([3, 0, 7, 4]);
  });
  test('index.Tensor with a bool mask and another index tensor is E_UNSUPPORTED_OP (data-dependent size)', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    const m = g.addConstant('m', Tensor.from('bool', [2], [1, 0]));
    const i = g.addConstant('i', Tensor.from('int64', [1], [2]));
    expect(errorOf(() => call(g, 'aten.index.Tensor', { self: x, indices: [m, i] })).code).toBe('E_UNSUPPORTED_OP');
  });
  test('index_put: replace and accumulate, leading None, broadcast values, bool mask', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    const i = g.addConstant('i', Tensor.from('int64', [2], [2, 0]));
    const v = g.addConstant('v', Tensor.from('float32', [2], [10, 20]));
    const a = op(g, 'aten.index_put.default', { self: x, indices: [null, i], values: v });
    const row = g.addConstant('row', Tensor.from('int64', [3], [1, 1, 0]));
    const one = g.addConstant('one', Tensor.scalar('float32', 1));
    const b = op(g, 'aten.index_put.default', { self: x, indices: [row], values: one, accumulate: true });
    const m = g.addConstant('m', Tensor.from('bool', [2, 3], [1, 0, 0, 0, 1, 1]));
    const c = op(g, 'aten.index_put.default', { self: x, indices: [m], values: one });
    const [ra, rb, rc] = runOne(g, [a, b, c], [iota([2, 3])]);
    expectTensor(ra!, 'float32', [2, 3], [20, 1, 10, 20, 4, 10]);
    expectTensor(rb!, 'float32', [2, 3], [1, 2, 3, 5, 6, 7]);
    expectTensor(rc!, 'float32', [2, 3], [1, 1, 2, 3, 1, 1]);
  });
  test('one_hot', () => {
    expectTensor(single('aten.one_hot.default', Tensor.from('int64', [3], [2, 0, 1]), { num_classes: 3 })[0]!, 'int64', [3, 3], [0, 0, 1, 1, 0, 0, 0, 1, 0]);
    const { g, x } = graphOf('int64', [4]);
    expect(errorOf(() => call(g, 'aten.one_hot.default', { self: x })).code).toBe('E_UNSUPPORTED_OP');
  });
  test('slice_scatter and select_scatter', () => {
    const { g, x } = graphOf('float32', [3, 4]);
    const src = g.addConstant('src', Tensor.from('float32', [3, 2], [-1, -2, -3, -4, -5, -6]));
    const a = op(g, 'aten.slice_scatter.default', { self: x, src, dim: 1, start: 1, end: INT64_MAX, step: 2 });
    const row = g.addConstant('row', Tensor.from('float32', [4], [9, 9, 9, 9]));
    const b = op(g, 'aten.select_scatter.default', { self: x, src: row, dim: 0, index: -1 });
    const [ra, rb] = runOne(g, [a, b], [iota([3, 4])]);
    expectTensor(ra!, 'float32', [3, 4], [0, -1, 2, -2, 4, -3, 6, -4, 8, -5, 10, -6]);
    expectTensor(rb!, 'float32', [3, 4], [0, 1, 2, 3, 4, 5, 6, 7, 9, 9, 9, 9]);
  });
});

describe('padding', () => {
  test('constant_pad_nd (torch order, negative crops) and pad modes', () => {
    const x = iota([2, 3]);
    expectTensor(single('aten.constant_pad_nd.default', x, { pad: [1, 0], value: 7 })[0]!, 'float32', [2, 4], [7, 0, 1, 2, 7, 3, 4, 5]);
    expectTensor(single('aten.constant_pad_nd.default', x, { pad: [0, -1, 1, 0] })[0]!, 'float32', [3, 2], [0, 0, 0, 1, 3, 4]);
    expectTensor(single('aten.pad.default', x, { pad: [2, 1], mode: 'reflect' })[0]!, 'float32', [2, 6], [2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4]);
    expectTensor(single('aten.pad.default', x, { pad: [1, 1], mode: 'replicate' })[0]!, 'float32', [2, 5], [0, 0, 1, 2, 2, 3, 3, 4, 5, 5]);
    expectTensor(single('aten.pad.default', x, { pad: [1, 2], mode: 'circular' })[0]!, 'float32', [2, 6], [2, 0, 1, 2, 0, 1, 5, 3, 4, 5, 3, 4]);
    expectTensor(single('aten.pad.default', x, { pad: [0, 0, 1, 0], mode: 'constant', value: 0.5 })[0]!, 'float32', [3, 3], [0.5, 0.5, 0.5, 0, 1, 2, 3, 4, 5]);
    const { g, x: xv } = graphOf('float32', [s0, 4]);
    expect(formatShape(op(g, 'aten.constant_pad_nd.default', { self: xv, pad: [1, 1, 0, 3] }).tensorType.shape)).toBe('[s0+3, 6]');
  });
  test('an unknown mode is E_BAD_MODEL', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    expect(errorOf(() => call(g, 'aten.pad.default', { self: x, pad: [1, 1], mode: 'edge' })).code).toBe('E_BAD_MODEL');
  });
});

describe('filled tensors', () => {
  test('full/zeros/ones with symbolic sizes and PyTorch dtype inference', () => {
    const { g, x } = graphOf('float32', [s0, 2]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const a = op(g, 'aten.full.default', { size: [n, 2], fill_value: 3 });
    const b = op(g, 'aten.full.default', { size: [2], fill_value: 0.5 });
    const c = op(g, 'aten.full.default', { size: [1], fill_value: true });
    const d = op(g, 'aten.zeros.default', { size: [n] });
    const e = op(g, 'aten.ones.default', { size: [2], dtype: 'int32' });
    const f = op(g, 'aten.full_like.default', { self: x, fill_value: 2 });
    const h = op(g, 'aten.ones_like.default', { self: x, dtype: 'bool' });
    const i = op(g, 'aten.zeros_like.default', { self: x });
    const j = op(g, 'aten.new_zeros.default', { self: x, size: [3] });
    const k = op(g, 'aten.new_full.default', { self: x, size: [1, n], fill_value: 4 });
    const l = op(g, 'aten.new_ones.default', { self: x, size: [2] });
    const all = [a, b, c, d, e, f, h, i, j, k, l];
    expect(all.map((v) => `${v.tensorType.dtype}${formatShape(v.tensorType.shape)}`)).toEqual([
      'int64[s0, 2]',
      'float32[2]',
      'bool[1]',
      'float32[s0]',
      'int32[2]',
      'float32[s0, 2]',
      'bool[s0, 2]',
      'float32[s0, 2]',
      'float32[3]',
      'float32[1, s0]',
      'float32[2]',
    ]);
    const r = runOne(g, all, [iota([2, 2])]);
    expectTensor(r[0]!, 'int64', [2, 2], [3, 3, 3, 3]);
    expectTensor(r[1]!, 'float32', [2], [0.5, 0.5]);
    expectTensor(r[2]!, 'bool', [1], [1]);
    expectTensor(r[4]!, 'int32', [2], [1, 1]);
    expectTensor(r[6]!, 'bool', [2, 2], [1, 1, 1, 1]);
    expectTensor(r[9]!, 'float32', [1, 2], [4, 4]);
  });
  test('arange overloads: int → int64, float → float32, symbolic end', () => {
    const { g, x } = graphOf('float32', [s0, 2]);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const a = op(g, 'aten.arange.default', { end: 5 });
    const b = op(g, 'aten.arange.start', { start: 1, end: 2.5 });
    const c = op(g, 'aten.arange.start_step', { start: 10, end: 1, step: -3 });
    const d = op(g, 'aten.arange.start_step', { start: 0, end: n, step: 2 });
    const e = op(g, 'aten.arange.start', { start: 1, end: n, dtype: 'float32' });
    const all = [a, b, c, d, e];
    expect(all.map((v) => `${v.tensorType.dtype}${formatShape(v.tensorType.shape)}`)).toEqual([
      'int64[5]',
      'float32[2]',
      'int64[3]',
      'int64[(s0+1)//2]',
      'float32[s0-1]',
    ]);
    const r = runOne(g, all, [iota([5, 2])]);
    expectTensor(r[0]!, 'int64', [5], [0, 1, 2, 3, 4]);
    expectTensor(r[1]!, 'float32', [2], [1, 2]);
    expectTensor(r[2]!, 'int64', [3], [10, 7, 4]);
    expectTensor(r[3]!, 'int64', [3], [0, 2, 4]);
    expectTensor(r[4]!, 'float32', [4], [1, 2, 3, 4]);
  });
});

describe('triangles, flip, roll', () => {
  test('triu/tril with diagonals', () => {
    const x = iota([3, 3], 'int64', 1);
    expectTensor(single('aten.triu.default', x)[0]!, 'int64', [3, 3], [1, 2, 3, 0, 5, 6, 0, 0, 9]);
    expectTensor(single('aten.triu.default', x, { diagonal: 1 })[0]!, 'int64', [3, 3], [0, 2, 3, 0, 0, 6, 0, 0, 0]);
    expectTensor(single('aten.tril.default', x, { diagonal: -1 })[0]!, 'int64', [3, 3], [0, 0, 0, 4, 0, 0, 7, 8, 0]);
  });
  test('flip and roll', () => {
    const x = iota([2, 3]);
    expectTensor(single('aten.flip.default', x, { dims: [0, -1] })[0]!, 'float32', [2, 3], [5, 4, 3, 2, 1, 0]);
    expectTensor(single('aten.roll.default', x, { shifts: 1, dims: 1 })[0]!, 'float32', [2, 3], [2, 0, 1, 5, 3, 4]);
    expectTensor(single('aten.roll.default', x, { shifts: [-1, 1], dims: [0, 1] })[0]!, 'float32', [2, 3], [5, 3, 4, 2, 0, 1]);
    expectTensor(single('aten.roll.default', x, { shifts: [2] })[0]!, 'float32', [2, 3], [4, 5, 0, 1, 2, 3]);
  });
});

describe('bad arguments name the node', () => {
  test('permute with a repeated dim, stack of mismatched shapes, squeeze.dims out of range', () => {
    const { g, x } = graphOf('float32', [2, 3]);
    const y = g.addInput('y', tensorType('float32', [3, 2]));
    for (const [target, args] of [
      ['aten.permute.default', { self: x, dims: [0, 0] }],
      ['aten.stack.default', { tensors: [x, y] }],
      ['aten.squeeze.dims', { self: x, dim: [2] }],
      ['aten.gather.default', { self: x, dim: 0, index: y }],
    ] as const) {
      const e = errorOf(() => call(g, target, args as Record<string, Arg>, { name: 'bad_node' }));
      expect(e.code).toBe('E_BAD_MODEL');
      expect(e.message).toContain('bad_node');
    }
  });
});
