/**
 * Negative indices: one rule in interpret() and in compiled programs.
 * An index into a dim of size d must lie in [-d, d), negatives counting from the end; the
 * conversion wraps a negative index once (TensorRT gathers do not), and the reference
 * engine's gather and scatter layers take [0, d) only, so an index in [-2d, -d) is refused
 * rather than wrapped twice into the data. Both paths refuse with E_BAD_INPUT naming the
 * node and the index. Expected values are hand-computed.
 */
import { compile } from '../../lib/compile';
import { TensorRTNodeError } from '../../lib/errors';
import { interpret } from '../../lib/interpreter';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';

const i64 = (shape: number[], values: number[]): Tensor => Tensor.from('int64', shape, values);
/** data[i] = 10·i + 1: any element read names the position it came from. */
const data = (shape: number[]): Tensor =>
  Tensor.from(
    'float32',
    shape,
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => 10 * i + 1),
  );

interface IndexCase {
  readonly target: string;
  /** Graph inputs: the data first, the index tensor second, then any others. */
  readonly inputs: (index: Tensor) => Tensor[];
  readonly args: (v: Value[]) => Record<string, Arg>;
  /** Indices in [-d, d), some negative, and the hand-computed result. */
  readonly valid: { readonly index: Tensor; readonly expected: number[] };
  /** Indices in [-2d, -d) (the old double wrap read data for these), and the one named in the error. */
  readonly bad: { readonly index: Tensor; readonly named: number };
}

// Row data [4, 2] (d = 4 along axis 0): row r holds 20r + 1, 20r + 11.
const rows = data([4, 2]);
const CASES: readonly IndexCase[] = [
  {
    target: 'aten.index_select.default',
    inputs: (index) => [rows, index],
    args: (v) => ({ self: v[0]!, dim: 0, index: v[1]! }),
    valid: { index: i64([2], [-1, 1]), expected: [61, 71, 21, 31] },
    bad: { index: i64([2], [0, -5]), named: -5 },
  },
  {
    target: 'aten.embedding.default',
    inputs: (index) => [rows, index],
    args: (v) => ({ weight: v[0]!, indices: v[1]! }),
    valid: { index: i64([2], [-4, 2]), expected: [1, 11, 41, 51] },
    bad: { index: i64([1], [-8]), named: -8 },
  },
  {
    target: 'aten.gather.default',
    inputs: (index) => [rows, index],
    args: (v) => ({ self: v[0]!, dim: 0, index: v[1]! }),
    valid: { index: i64([1, 2], [-1, -3]), expected: [61, 31] },
    bad: { index: i64([1, 2], [0, -6]), named: -6 },
  },
  {
    target: 'aten.index.Tensor',
    inputs: (index) => [rows, index],
    args: (v) => ({ self: v[0]!, indices: [v[1]!] }),
    valid: { index: i64([2], [-2, 0]), expected: [41, 51, 1, 11] },
    bad: { index: i64([2], [-7, 0]), named: -7 },
  },
  {
    target: 'aten.scatter.src',
    inputs: (index) => [rows, index, Tensor.from('float32', [1, 2], [-1, -2])],
    args: (v) => ({ self: v[0]!, dim: 0, index: v[1]!, src: v[2]! }),
    valid: { index: i64([1, 2], [-1, 0]), expected: [1, -2, 21, 31, 41, 51, -1, 71] },
    bad: { index: i64([1, 2], [-5, 0]), named: -5 },
  },
  {
    target: 'aten.index_put.default',
    inputs: (index) => [rows, index, Tensor.from('float32', [1, 2], [-1, -2])],
    args: (v) => ({ self: v[0]!, indices: [v[1]!], values: v[2]! }),
    valid: { index: i64([1], [-3]), expected: [1, 11, -1, -2, 41, 51, 61, 71] },
    bad: { index: i64([1], [-8]), named: -8 },
  },
  {
    target: 'trt.gather_nd',
    inputs: (index) => [rows, index],
    args: (v) => ({ self: v[0]!, indices: v[1]! }),
    valid: { index: i64([2, 2], [-1, -1, 1, -2]), expected: [71, 21] },
    bad: { index: i64([1, 2], [-6, 0]), named: -6 },
  },
  {
    target: 'trt.scatter_nd',
    inputs: (index) => [rows, index, Tensor.from('float32', [1], [-1])],
    args: (v) => ({ self: v[0]!, indices: v[1]!, updates: v[2]! }),
    valid: { index: i64([1, 2], [-4, -1]), expected: [1, -1, 21, 31, 41, 51, 61, 71] },
    bad: { index: i64([1, 2], [0, -3]), named: -3 },
  },
];

function graphOf(k: IndexCase, index: Tensor): Graph {
  const graph = new Graph('negative_indices');
  const values = k.inputs(index).map((t, j) => graph.addInput(`in${j}`, tensorType(t.dtype, [...t.shape])));
  graph.setOutputs(call(graph, k.target, k.args(values), { name: 'pick' }).outputs);
  return graph;
}

async function rejection(run: () => unknown): Promise<TensorRTNodeError> {
  try {
    await run();
  } catch (e) {
    return e as TensorRTNodeError;
  }
  throw new Error('expected a rejection');
}

describe.each(CASES.map((k) => [k.target, k] as const))('%s', (_target, k) => {
  it('reads the same elements for indices in [-d, d) in interpret and compiled', async () => {
    const inputs = k.inputs(k.valid.index);
    expect(interpret(graphOf(k, k.valid.index), inputs)[0]!.toArray()).toEqual(k.valid.expected);
    const program = await compile(graphOf(k, k.valid.index), { backend: 'reference', minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      expect((await program.run(inputs))[0]!.toArray()).toEqual(k.valid.expected);
    } finally {
      await program.dispose();
    }
  });

  it('refuses an index in [-2d, -d) with E_BAD_INPUT naming the node and the index, in both paths', async () => {
    const inputs = k.inputs(k.bad.index);
    const interpreted = await rejection(() => interpret(graphOf(k, k.bad.index), inputs));
    expect(interpreted).toBeInstanceOf(TensorRTNodeError);
    expect(interpreted.code).toBe('E_BAD_INPUT');
    expect(interpreted.message).toContain('node pick');
    expect(interpreted.message).toContain(`index ${k.bad.named} is out of range`);
    const program = await compile(graphOf(k, k.bad.index), { backend: 'reference', minBlockSize: 1 });
    try {
      const compiled = await rejection(() => program.run(inputs));
      expect(compiled).toBeInstanceOf(TensorRTNodeError);
      expect(compiled.code).toBe('E_BAD_INPUT');
      expect(compiled.message).toContain('"pick');
      expect(compiled.message).toContain(`the model's index ${k.bad.named} is outside`);
    } finally {
      await program.dispose();
    }
  });
});
