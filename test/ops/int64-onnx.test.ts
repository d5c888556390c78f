/**
 * int64 past 2^53 against onnxruntime: one ONNX graph of every int64
 * op that onnxruntime's CPU provider computes in integers, run by onnxruntime, by
 * loadOnnx + interpret, and by compile + run on the reference backend. Left out: Pow, Mod
 * with fmod=1, ReduceSum and ReduceProd, which onnxruntime (1.x CPU) computes through
 * doubles, so that its own int64 results are wrong past 2^53 (fmod(2^53 + 1, 3) gives 2,
 * not 0; ReduceSum([2^53 + 1, 2^53 + 1, 1]) gives 2^54, not 2^54 + 3), and
 * INT64_MIN / -1 and float → int64 out of range (undefined in C++). The table test
 * (int64-exact.test.ts) covers those against hand-computed values.
 */
import { compile } from '../../lib/compile';
import { loadOnnx } from '../../lib/frontends/onnx';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { buildGraphModel, runOrtGraph, type OrtGraphNode, type OrtGraphSpec } from '../helpers/ort-single-op';

const B = 2n ** 53n + 1n;
const MAX = 2n ** 63n - 1n;
const MIN = -(2n ** 63n);
const i64 = (shape: number[], values: bigint[]): Tensor => Tensor.from('int64', shape, values);
const constant = (name: string, t: Tensor): OrtGraphNode => ({ opType: 'Constant', inputs: [], outputs: [name], attributes: { value: t } });
const node = (opType: string, inputs: string[], output: string, attributes?: OrtGraphNode['attributes']): OrtGraphNode => ({
  opType,
  inputs,
  outputs: [output],
  attributes,
});

const x = i64([4], [B, MAX, MIN, -B]);
/** Divisors without -1 (INT64_MIN / -1 is undefined in C++) or 0. */
const d = i64([4], [3n, 7n, 5n, -2n]);
/** Neighbours of x that float64 cannot tell apart from it. */
const n = i64([4], [B - 1n, MAX - 1n, MIN + 1n, -B + 1n]);
const m = i64([2, 3], [B, B, 1n, MAX, 1n, MIN]);
const c = Tensor.from('bool', [4], [1, 0, 0, 1]);
const r = i64([4], [2n ** 54n + 2n ** 30n + 1n, -(2n ** 54n + 2n ** 30n + 1n), B, MAX]);

const spec: OrtGraphSpec = {
  inputs: { x, d, n, m, c, r },
  nodes: [
    constant('max', i64([], [MAX])),
    constant('zero', i64([1], [0n])),
    constant('axis0', i64([], [0n])),
    constant('k2', i64([1], [2n])),
    constant('lo', i64([], [-B + 1n])),
    constant('hi', i64([], [B - 1n])),
    constant('gidx', i64([2, 2], [2n, 0n, 1n, -1n])),
    constant('sidx', i64([3], [0n, 0n, 1n])),
    constant('supd', i64([3], [1n, 1n, 1n])),
    constant('mat', i64([3, 2], [3n, MAX, 1n, -1n, 2n, B])),
    node('Add', ['x', 'd'], 'add'),
    node('Add', ['x', 'zero'], 'add_zero'),
    node('Sub', ['x', 'd'], 'sub'),
    node('Mul', ['x', 'd'], 'mul'),
    node('Mul', ['x', 'x'], 'square'),
    node('Div', ['x', 'd'], 'div'),
    node('Mod', ['x', 'd'], 'mod'),
    node('Max', ['x', 'max'], 'max_issue'),
    node('Max', ['x', 'n'], 'maximum'),
    node('Min', ['x', 'n'], 'minimum'),
    node('Equal', ['x', 'n'], 'equal'),
    node('Less', ['x', 'n'], 'less'),
    node('Greater', ['x', 'n'], 'greater'),
    node('LessOrEqual', ['n', 'x'], 'less_equal'),
    node('GreaterOrEqual', ['n', 'x'], 'greater_equal'),
    node('Where', ['c', 'x', 'n'], 'where'),
    node('Abs', ['x'], 'abs'),
    node('Neg', ['x'], 'neg'),
    node('Sign', ['x'], 'sign'),
    node('Clip', ['x', 'lo', 'hi'], 'clip'),
    node('ReduceMax', ['n'], 'reduce_max', { keepdims: 0 }),
    node('ReduceMin', ['x'], 'reduce_min', { keepdims: 0 }),
    node('ArgMax', ['n'], 'argmax', { keepdims: 0 }),
    node('ArgMin', ['n'], 'argmin', { keepdims: 0 }),
    node('CumSum', ['x', 'axis0'], 'cumsum'),
    node('CumSum', ['x', 'axis0'], 'cumsum_exclusive_reverse', { exclusive: 1, reverse: 1 }),
    node('Cast', ['r'], 'to_double', { to: 11 }),
    node('Cast', ['r'], 'to_float', { to: 1 }),
    node('Cast', ['x'], 'to_int32', { to: 6 }),
    node('Gather', ['x', 'gidx'], 'gather'),
    node('GatherElements', ['m', 'gidx'], 'gather_elements', { axis: 1 }),
    node('ScatterElements', ['x', 'sidx', 'supd'], 'scatter_add', { reduction: 'add' }),
    { opType: 'TopK', inputs: ['n', 'k2'], outputs: ['topk_values', 'topk_indices'] },
    node('MatMul', ['m', 'mat'], 'matmul'),
  ],
  outputs: [],
};
const outputs = spec.nodes.filter((k) => k.opType !== 'Constant').flatMap((k) => k.outputs);
const graphSpec: OrtGraphSpec = { ...spec, outputs };
const feeds = Object.values(spec.inputs);

const exact = (t: Tensor): { dtype: string; shape: readonly number[]; values: string[] } => ({
  dtype: t.dtype,
  shape: t.shape,
  values: Array.from(t.data as ArrayLike<number | bigint>, String),
});

describe('int64 past 2^53 against onnxruntime', () => {
  let expected: Tensor[];
  beforeAll(async () => {
    expected = await runOrtGraph(graphSpec);
  }, 60_000);

  it('loadOnnx + interpret agrees exactly', () => {
    const actual = interpret(loadOnnx(buildGraphModel(graphSpec)), feeds);
    outputs.forEach((name, i) => expect({ name, ...exact(actual[i]!) }).toEqual({ name, ...exact(expected[i]!) }));
  });

  it('compile + run on the reference backend agrees exactly', async () => {
    const program = await compile(buildGraphModel(graphSpec), { backend: 'reference', minBlockSize: 1 });
    try {
      const actual = await program.run(feeds);
      outputs.forEach((name, i) => expect({ name, ...exact(actual[i]!) }).toEqual({ name, ...exact(expected[i]!) }));
    } finally {
      await program.dispose();
    }
  }, 60_000);
});
