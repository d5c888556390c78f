/**
 * SHAPE converters, part 2: gathers (index_select, embedding, gather, index, gather_nd),
 * scatters (scatter, index_put, scatter_nd) and one-hot. Negative indices are exercised both
 * as constants (wrapped at conversion) and as run-time inputs (wrapped by layers), since
 * TensorRT does not wrap them itself.
 */
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import { readNumbers } from '../../lib/kernels/access';
import type { Layer } from '../../lib/network';
import { Tensor } from '../../lib/ir/tensor';
import { convertWhole } from '../helpers/convert-compare';
import { check, checkWith, rand, randInt, verdict } from './shape-helpers';

const DATA: DType[] = ['float32', 'float16', 'int64', 'bool'];

/** Random indices in [-n, n) (negatives included). */
const indices = (shape: number[], n: number, dtype: DType = 'int64'): Tensor => rand(dtype, shape, -n, n - 1);

/** For each of `rows` lines, `k` distinct positions of [0, n), each written negative with probability 1/2. */
function distinct(rows: number, k: number, n: number): number[][] {
  return Array.from({ length: rows }, () => {
    const pool = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = randInt(0, i);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    return pool.slice(0, k).map((p) => (randInt(0, 1) === 1 ? p - n : p));
  });
}

describe('gathers', () => {
  test.each(DATA)('index_select with run-time and constant negative indices (%s)', async (dtype) => {
    await checkWith('aten.index_select.default', [{ input: rand(dtype, [4, 5]) }, { input: indices([6], 5) }], (v) => ({ self: v[0]!, dim: -1, index: v[1]! }));
    await checkWith('aten.index_select.default', [{ input: rand(dtype, [4, 5]) }, { constant: Tensor.from('int64', [3], [-1, 0, -4]) }], (v) => ({
      self: v[0]!,
      dim: 0,
      index: v[1]!,
    }));
    await checkWith('aten.index_select.default', [{ input: rand(dtype, [4, 5]) }, { input: Tensor.from('int32', [], [-2]) }], (v) => ({
      self: v[0]!,
      dim: 1,
      index: v[1]!,
    }));
  });

  test('embedding with 2-D run-time indices (negatives) and constant ones', async () => {
    await checkWith('aten.embedding.default', [{ input: rand('float32', [10, 4]) }, { input: indices([2, 3], 10) }], (v) => ({ weight: v[0]!, indices: v[1]! }));
    await checkWith('aten.embedding.default', [{ input: rand('float16', [10, 4]) }, { input: indices([5], 10, 'int32') }], (v) => ({ weight: v[0]!, indices: v[1]! }));
    await checkWith('aten.embedding.default', [{ constant: rand('float32', [6, 3]) }, { input: indices([4], 6) }], (v) => ({ weight: v[0]!, indices: v[1]! }));
  });

  test.each(DATA)('gather.default (element) with negative indices (%s)', async (dtype) => {
    await checkWith('aten.gather.default', [{ input: rand(dtype, [3, 4, 5]) }, { input: indices([3, 6, 5], 4) }], (v) => ({ self: v[0]!, dim: 1, index: v[1]! }));
    // An index smaller than self off the gather axis.
    await checkWith('aten.gather.default', [{ input: rand(dtype, [3, 4]) }, { input: indices([2, 2], 4) }], (v) => ({ self: v[0]!, dim: -1, index: v[1]! }));
    await checkWith('aten.gather.default', [{ input: rand(dtype, [3, 4]) }, { constant: Tensor.from('int64', [1, 3], [-1, 2, -3]) }], (v) => ({
      self: v[0]!,
      dim: 0,
      index: v[1]!,
    }));
  });

  test.each(DATA)('index.Tensor with one index (%s)', async (dtype) => {
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [5, 4]) }, { input: indices([2, 3], 5) }], (v) => ({ self: v[0]!, indices: [v[1]!] }));
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [3, 5, 4]) }, { input: indices([6], 5) }], (v) => ({ self: v[0]!, indices: [null, v[1]!] }));
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [3, 5]) }, { constant: Tensor.from('int64', [], [-1]) }], (v) => ({
      self: v[0]!,
      indices: [null, v[1]!],
    }));
  });

  test.each(DATA)('index.Tensor with several indices (gather nd) (%s)', async (dtype) => {
    // Adjacent indices after a kept dim: their dims replace the indexed ones in place.
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [2, 5, 4, 3]) }, { input: indices([3, 2], 5) }, { input: indices([2], 4) }], (v) => ({
      self: v[0]!,
      indices: [null, v[1]!, v[2]!],
    }));
    // Non-adjacent indices: the broadcast dims go first.
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [5, 2, 4]) }, { input: indices([3], 5) }, { constant: Tensor.from('int64', [3], [-1, 0, 3]) }], (v) => ({
      self: v[0]!,
      indices: [v[1]!, null, v[2]!],
    }));
    await checkWith('aten.index.Tensor', [{ input: rand(dtype, [5, 4]) }, { input: indices([2, 1], 5) }, { input: indices([3], 4, 'int32') }], (v) => ({
      self: v[0]!,
      indices: [v[1]!, v[2]!],
    }));
  });

  test('trt.gather_nd with batch dims and negative indices', async () => {
    await checkWith('trt.gather_nd', [{ input: rand('float32', [4, 5, 3]) }, { input: Tensor.from('int64', [3, 2], [0, -1, -4, 2, 3, 0]) }], (v) => ({
      self: v[0]!,
      indices: v[1]!,
    }));
    await checkWith('trt.gather_nd', [{ input: rand('int64', [2, 5, 3]) }, { input: indices([2, 4, 1], 5) }], (v) => ({ self: v[0]!, indices: v[1]!, batch_dims: 1 }));
    await checkWith('trt.gather_nd', [{ input: rand('bool', [4, 5]) }, { constant: Tensor.from('int64', [2, 2], [-1, -1, 0, 4]) }], (v) => ({
      self: v[0]!,
      indices: v[1]!,
    }));
  });
});

describe('scatters', () => {
  test.each(DATA)('scatter.src and scatter.value with distinct negative indices (%s)', async (dtype) => {
    // dim 1 of [3, 5]: each row writes 3 distinct positions.
    const rows = distinct(3, 3, 5);
    const index = Tensor.from('int64', [3, 3], rows.flat());
    await checkWith('aten.scatter.src', [{ input: rand(dtype, [3, 5]) }, { input: index }, { input: rand(dtype, [4, 4]) }], (v) => ({
      self: v[0]!,
      dim: -1,
      index: v[1]!,
      src: v[2]!,
    }));
    await checkWith('aten.scatter.src', [{ input: rand(dtype, [3, 5]) }, { constant: index }, { input: rand(dtype, [3, 3]) }], (v) => ({
      self: v[0]!,
      dim: 1,
      index: v[1]!,
      src: v[2]!,
    }));
    await checkWith('aten.scatter.value', [{ input: rand(dtype, [3, 5]) }, { input: index }], (v) => ({ self: v[0]!, dim: 1, index: v[1]!, value: 1 }));
  });

  test('scatter along dim 0 with a smaller index', async () => {
    const cols = distinct(2, 2, 4); // two columns, two distinct rows each
    const index = Tensor.from('int64', [2, 2], [cols[0]![0]!, cols[1]![0]!, cols[0]![1]!, cols[1]![1]!]);
    await checkWith('aten.scatter.src', [{ input: rand('float32', [4, 3]) }, { input: index }, { input: rand('float32', [2, 3]) }], (v) => ({
      self: v[0]!,
      dim: 0,
      index: v[1]!,
      src: v[2]!,
    }));
    await checkWith('aten.scatter.value', [{ input: rand('float16', [4, 3]) }, { input: index }], (v) => ({ self: v[0]!, dim: 0, index: v[1]!, value: -2.5 }));
  });

  test.each(DATA)('index_put with distinct index tuples (%s)', async (dtype) => {
    const single = distinct(1, 3, 5)[0]!;
    await checkWith('aten.index_put.default', [{ input: rand(dtype, [5, 2]) }, { input: Tensor.from('int64', [3], single) }, { input: rand(dtype, [3, 2]) }], (v) => ({
      self: v[0]!,
      indices: [v[1]!],
      values: v[2]!,
    }));
    // Adjacent indices after a kept dim; values broadcast.
    const rows = distinct(1, 3, 4)[0]!;
    await checkWith(
      'aten.index_put.default',
      [{ input: rand(dtype, [2, 4, 3]) }, { input: Tensor.from('int64', [3], rows) }, { constant: Tensor.from('int64', [3], [0, -1, 1]) }, { input: rand(dtype, [1]) }],
      (v) => ({ self: v[0]!, indices: [null, v[1]!, v[2]!], values: v[3]! }),
    );
    // Non-adjacent indices.
    await checkWith(
      'aten.index_put.default',
      [{ input: rand(dtype, [4, 2, 3]) }, { input: Tensor.from('int64', [2], [1, -1]) }, { input: Tensor.from('int32', [2], [0, 2]) }, { input: rand(dtype, [2, 2]) }],
      (v) => ({ self: v[0]!, indices: [v[1]!, null, v[2]!], values: v[3]! }),
    );
    // No index at all: values broadcast over self.
    await checkWith('aten.index_put.default', [{ input: rand(dtype, [2, 3]) }, { input: rand(dtype, [3]) }], (v) => ({ self: v[0]!, indices: [], values: v[1]! }));
  });

  test('trt.scatter_nd', async () => {
    await checkWith(
      'trt.scatter_nd',
      [{ input: rand('float32', [4, 3]) }, { input: Tensor.from('int64', [2, 1], [-1, 1]) }, { input: rand('float32', [2, 3]) }],
      (v) => ({ self: v[0]!, indices: v[1]!, updates: v[2]! }),
    );
    await checkWith(
      'trt.scatter_nd',
      [{ input: rand('int64', [4, 3]) }, { constant: Tensor.from('int64', [3, 2], [0, 0, -1, -1, 2, 1]) }, { input: rand('int64', [3]) }],
      (v) => ({ self: v[0]!, indices: v[1]!, updates: v[2]! }),
    );
  });
});

describe('one-hot', () => {
  test('aten.one_hot with negative and run-time indices', async () => {
    await checkWith('aten.one_hot.default', [{ input: Tensor.from('int64', [2, 3], [0, 4, -1, 2, -5, 3]) }], (v) => ({ self: v[0]!, num_classes: 5 }));
    await checkWith('aten.one_hot.default', [{ constant: Tensor.from('int64', [4], [1, -2, 0, 3]) }], (v) => ({ self: v[0]!, num_classes: 4 }));
    await check('aten.one_hot.default', [{ dtype: 'int32', shape: [5] }], (v) => ({ self: v[0]!, num_classes: 6 }), [Tensor.from('int32', [5], [0, 5, 2, -1, 7])]);
  });

  test('trt.one_hot on any axis, with float, int and out-of-range indices', async () => {
    const values = Tensor.from('float32', [2], [-1, 3.5]);
    await checkWith('trt.one_hot', [{ input: Tensor.from('int64', [2, 3], [0, 4, -1, 2, -6, 9]) }, { input: values }], (v) => ({
      indices: v[0]!,
      depth: 5,
      values: v[1]!,
      axis: 0,
    }));
    await checkWith('trt.one_hot', [{ input: Tensor.from('float32', [4], [1.7, -1.2, 0, -3.9]) }, { constant: Tensor.from('int64', [2], [0, 7]) }], (v) => ({
      indices: v[0]!,
      depth: 4,
      values: v[1]!,
    }));
    await checkWith('trt.one_hot', [{ input: Tensor.from('int32', [3], [2, 0, -1]) }, { input: Tensor.from('bool', [2], [0, 1]) }], (v) => ({
      indices: v[0]!,
      depth: 3,
      values: v[1]!,
      axis: -1,
    }));
  });
});

describe('refusals', () => {
  test('index_put with accumulate and scatter_nd with a reduction', () => {
    expect(
      verdict('aten.index_put.default', [{ dtype: 'float32', shape: [4] }, { dtype: 'int64', shape: [2] }, { dtype: 'float32', shape: [2] }], (v) => ({
        self: v[0]!,
        indices: [v[1]!],
        values: v[2]!,
        accumulate: true,
      })),
    ).toMatch(/accumulate=True/);
    expect(
      verdict('trt.scatter_nd', [{ dtype: 'float32', shape: [4] }, { dtype: 'int64', shape: [2, 1] }, { dtype: 'float32', shape: [2] }], (v) => ({
        self: v[0]!,
        indices: v[1]!,
        updates: v[2]!,
        reduction: 'add',
      })),
    ).toMatch(/no reductions/);
  });

  test('empty scatters, 0-length index tuples and 0-D one-hot values', () => {
    expect(
      verdict('aten.scatter.src', [{ dtype: 'float32', shape: [4, 2] }, { dtype: 'int64', shape: [0, 2] }, { dtype: 'float32', shape: [0, 2] }], (v) => ({
        self: v[0]!,
        dim: 0,
        index: v[1]!,
        src: v[2]!,
      })),
    ).toMatch(/empty index/);
    expect(verdict('trt.gather_nd', [{ dtype: 'float32', shape: [4, 2] }, { dtype: 'int64', shape: [3, 0] }], (v) => ({ self: v[0]!, indices: v[1]! }))).toMatch(
      /length 0/,
    );
    expect(verdict('trt.one_hot', [{ dtype: 'int64', shape: [3] }, { dtype: 'float32', shape: [] }], (v) => ({ indices: v[0]!, depth: 3, values: v[1]! }))).toMatch(
      /1-D \[off, on\]/,
    );
  });

  test('no converter for the reducing scatters', () => {
    expect(
      verdict('aten.scatter_add.default', [{ dtype: 'float32', shape: [4] }, { dtype: 'int64', shape: [2] }, { dtype: 'float32', shape: [2] }], (v) => ({
        self: v[0]!,
        dim: 0,
        index: v[1]!,
        src: v[2]!,
      })),
    ).toMatch(/no converter/);
  });
});

describe('negative indices never reach a TensorRT gather or scatter', () => {
  /** For every gather/scatter layer: its indices come from a wrapping select, or are non-negative constants. */
  function expectWrapped(target: string, inputs: Array<{ dtype: DType; shape: number[] } | { constant: Tensor }>, args: (v: Value[]) => Record<string, Arg>): void {
    const g = new Graph(target);
    const vals = inputs.map((x, i) => ('constant' in x ? g.addConstant(`c${i}`, x.constant) : g.addInput(`in${i}`, tensorType(x.dtype, x.shape))));
    g.setOutputs(call(g, target, args(vals)).outputs);
    const net = convertWhole(g);
    const users = net.layers.filter((l) => l.params.kind === 'gather' || l.params.kind === 'scatter');
    expect(users.length).toBeGreaterThan(0);
    for (const layer of users) {
      const producer = net.layers[net.tensors[layer.inputs[1]!]!.producer];
      // Through the layers that only move elements (cast, shuffle, stride-0 slice, concat of tuples).
      const trace = (l: Layer | undefined): void => {
        expect(l).toBeDefined();
        const kind = l!.params.kind;
        if (kind === 'select') return;
        if (kind === 'constant') {
          const w = (l!.params as { weights: Tensor }).weights;
          expect(Array.from(readNumbers(w)).every((x) => x >= 0)).toBe(true);
          return;
        }
        expect(['cast', 'shuffle', 'slice', 'concat']).toContain(kind);
        for (const id of l!.inputs) if (id !== null) trace(net.layers[net.tensors[id]!.producer]);
      };
      trace(producer);
    }
  }

  test('run-time and constant indices of every gather and scatter converter', () => {
    const idx = { dtype: 'int64' as DType, shape: [3] };
    expectWrapped('aten.index_select.default', [{ dtype: 'float32', shape: [4, 5] }, idx], (v) => ({ self: v[0]!, dim: 1, index: v[1]! }));
    expectWrapped('aten.index_select.default', [{ dtype: 'float32', shape: [4, 5] }, { constant: Tensor.from('int64', [2], [-1, 2]) }], (v) => ({
      self: v[0]!,
      dim: 1,
      index: v[1]!,
    }));
    expectWrapped('aten.embedding.default', [{ dtype: 'float32', shape: [4, 5] }, { dtype: 'int32', shape: [2, 2] }], (v) => ({ weight: v[0]!, indices: v[1]! }));
    expectWrapped('aten.gather.default', [{ dtype: 'float32', shape: [4, 5] }, { dtype: 'int64', shape: [4, 2] }], (v) => ({ self: v[0]!, dim: 1, index: v[1]! }));
    expectWrapped('aten.index.Tensor', [{ dtype: 'float32', shape: [4, 5] }, idx, idx], (v) => ({ self: v[0]!, indices: [v[1]!, v[2]!] }));
    expectWrapped('aten.index.Tensor', [{ dtype: 'float32', shape: [4, 5] }, { constant: Tensor.from('int64', [2], [-4, 3]) }], (v) => ({ self: v[0]!, indices: [v[1]!] }));
    expectWrapped('trt.gather_nd', [{ dtype: 'float32', shape: [4, 5] }, { dtype: 'int64', shape: [3, 2] }], (v) => ({ self: v[0]!, indices: v[1]! }));
    expectWrapped('aten.scatter.src', [{ dtype: 'float32', shape: [4, 5] }, { dtype: 'int64', shape: [4, 2] }, { dtype: 'float32', shape: [4, 2] }], (v) => ({
      self: v[0]!,
      dim: 1,
      index: v[1]!,
      src: v[2]!,
    }));
    expectWrapped('aten.index_put.default', [{ dtype: 'float32', shape: [4, 5] }, idx, { dtype: 'float32', shape: [3, 5] }], (v) => ({
      self: v[0]!,
      indices: [v[1]!],
      values: v[2]!,
    }));
    expectWrapped('trt.scatter_nd', [{ dtype: 'float32', shape: [4, 5] }, { constant: Tensor.from('int64', [2, 1], [-1, 0]) }, { dtype: 'float32', shape: [2, 5] }], (v) => ({
      self: v[0]!,
      indices: v[1]!,
      updates: v[2]!,
    }));
  });
});
