/**
 * Ops current exporters leave in .pt2 graphs that models use: torch.einsum, swapaxes, an
 * in-place zero_ (as `aten.zero`), `&` `|` `^` of bool masks (transformers' mask code),
 * torch.diff. Each through the interpreter and through compile() on the reference backend
 * (loadPt2's decompositions, then converters), against onnxruntime running the ONNX op of the same meaning
 * on the same inputs, or against values written by hand where the op is that simple.
 */
import { compile } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import '../../lib/ir/ops';
import { interpret } from '../../lib/interpreter';
import { decompose } from '../../lib/lowering/decompositions';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { runOrtOp1 } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const random = new Random(23);

/** A graph of one op over `inputs` (their dtypes and shapes), `build` making the output. */
function oneOp(inputs: readonly Tensor[], build: (g: Graph, xs: Value[]) => Value): Graph {
  const g = new Graph('op');
  const xs = inputs.map((t, i) => g.addInput(`x${i}`, tensorType(t.dtype, [...t.shape])));
  g.setOutputs([build(g, xs)], ['y']);
  return g;
}

/**
 * The op's output through the interpreter, and through a compiled reference program after the
 * decompositions loadPt2 applies to what torch.export gives.
 */
async function bothWays(inputs: readonly Tensor[], build: (g: Graph, xs: Value[]) => Value): Promise<[Tensor, Tensor]> {
  const interpreted = interpret(oneOp(inputs, build), [...inputs])[0]!;
  const graph = oneOp(inputs, build);
  decompose(graph);
  const program = await compile(graph, { backend: 'reference', minBlockSize: 1 });
  try {
    expect(program.report.segments.filter((s) => s.kind !== 'engine')).toEqual([]);
    return [interpreted, (await program.run([...inputs]))[0]!];
  } finally {
    await program.dispose();
  }
}

const bools = (shape: number[]): Tensor => Tensor.from('bool', shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => (random.next() < 0.5 ? 1 : 0)));

describe('torch.einsum (aten.einsum), against onnxruntime\'s Einsum', () => {
  const cases: Array<[string, number[][]]> = [
    ['bihd,bjhd->bhij', [[2, 5, 3, 4], [2, 6, 3, 4]]],
    ['bhij,bjhd->bihd', [[2, 3, 5, 6], [2, 6, 3, 4]]],
    ['ii->i', [[4, 4]]],
    ['ij->', [[3, 5]]],
    ['...ij,...jk->...ik', [[2, 3, 4], [2, 4, 5]]],
    ['ij,jk', [[3, 4], [4, 2]]],
    ['i,j->ij', [[3], [4]]],
    // As one batched product: a label summed in one operand alone first; two contracted labels.
    ['bij,bjk->bk', [[2, 3, 4], [2, 4, 5]]],
    ['abc,bcd->da', [[2, 3, 4], [3, 4, 5]]],
    // A size-1 batch dim broadcast against 2: the general composition.
    ['...ij,...jk->...ik ', [[1, 3, 4], [2, 4, 5]]],
  ];
  test.each(cases)('%s', async (equation, shapes) => {
    const inputs = shapes.map((s) => random.tensor(s, 'float32'));
    const want = await runOrtOp1({ opType: 'Einsum', inputs, attributes: { equation } });
    const [interpreted, compiled] = await bothWays(inputs, (g, xs) => call(g, 'aten.einsum.default', { equation, tensors: xs }).output);
    expectClose(interpreted, want, FP32, 'interpreter');
    expectClose(compiled, want, FP32, 'compiled');
  });

  test('a malformed equation is refused when the graph is built, saying what is wrong', () => {
    const g = new Graph('bad');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    expect(() => call(g, 'aten.einsum.default', { equation: 'ijk->i', tensors: [x] })).toThrow(/term 0 has 3 labels for an operand of rank 2/);
    expect(() => call(g, 'aten.einsum.default', { equation: 'ij->k', tensors: [x] })).toThrow(/output label k is not in any operand/);
  });
});

describe('& | ^ of bool masks, against onnxruntime\'s And, Or, Xor', () => {
  for (const [op, onnx] of [['and', 'And'], ['or', 'Or'], ['xor', 'Xor']] as const) {
    test.each([`aten.__${op}__.Tensor`, `aten.bitwise_${op}.Tensor`])('%s, broadcasting', async (target) => {
      const inputs = [bools([2, 1, 5]), bools([3, 5])];
      const want = await runOrtOp1({ opType: onnx, inputs });
      const [interpreted, compiled] = await bothWays(inputs, (g, xs) => call(g, target, { self: xs[0]!, other: xs[1]! }).output);
      expect(interpreted.toArray()).toEqual(want.toArray());
      expect(compiled.toArray()).toEqual(want.toArray());
    });
  }

  test('integer operands are refused by name: bitwise integer arithmetic has no layer', () => {
    const g = new Graph('ints');
    const a = g.addInput('a', tensorType('int64', [3]));
    expect(() => call(g, 'aten.__and__.Tensor', { self: a, other: a })).toThrow('& of int64 tensors (bitwise integer arithmetic) is not supported; & of bool tensors is');
  });
});

describe('torch.diff (aten.diff)', () => {
  const diff = (x: Tensor, args: Record<string, unknown> = {}, extra: Tensor[] = []) =>
    bothWays([x, ...extra], (g, xs) => call(g, 'aten.diff.default', { self: xs[0]!, n: 1, dim: -1, prepend: null, append: null, ...args, ...(extra.length > 0 ? { prepend: xs[1]! } : {}) }).output);

  test('first and second differences of squares; integer dtype kept', async () => {
    const x = Tensor.from('int64', [5], [1, 4, 9, 16, 25]);
    for (const t of await diff(x)) expect([t.dtype, t.toArray().map(Number)]).toEqual(['int64', [3, 5, 7, 9]]);
    for (const t of await diff(x, { n: 2 })) expect(t.toArray().map(Number)).toEqual([2, 2, 2]);
    for (const t of await diff(x, { n: 0 })) expect(t.toArray().map(Number)).toEqual([1, 4, 9, 16, 25]);
  });

  test('along dim 0 of a matrix, with a prepended row', async () => {
    const x = Tensor.from('float32', [2, 3], [1, 2, 3, 10, 20, 30]);
    const before = Tensor.from('float32', [1, 3], [0, 0, 1]);
    for (const t of await diff(x, { dim: 0 }, [before])) expect([t.shape, t.toArray()]).toEqual([[2, 3], [1, 2, 2, 9, 18, 27]]);
  });

  test('bool: neighbours that differ (xor)', async () => {
    const x = Tensor.from('bool', [5], [1, 1, 0, 1, 1]);
    for (const t of await diff(x)) expect([t.dtype, t.toArray().map(Number)]).toEqual(['bool', [0, 1, 1, 0]]);
  });

  test('more differences than elements is refused when the graph is built', () => {
    const g = new Graph('short');
    const x = g.addInput('x', tensorType('float32', [2]));
    expect(() => call(g, 'aten.diff.default', { self: x, n: 3 })).toThrow('3-th differences of 2 elements along dim 0');
  });
});

describe('swapaxes, swapdims and zero', () => {
  test.each([
    ['aten.swapaxes.default', { axis0: 1, axis1: -1 }],
    ['aten.swapdims.default', { dim0: 1, dim1: -1 }],
  ] as const)('%s(1, -1) against onnxruntime\'s Transpose', async (target, axes) => {
    const x = random.tensor([2, 3, 4], 'float32');
    const want = await runOrtOp1({ opType: 'Transpose', inputs: [x], attributes: { perm: [0, 2, 1] } });
    for (const t of await bothWays([x], (g, xs) => call(g, target, { self: xs[0]!, ...axes }).output)) expectClose(t, want, FP32, target);
  });

  test.each(['float32', 'int64'] as DType[])('zero (an in-place zero_): zeros of %s, the input\'s shape', async (dtype) => {
    const x = Tensor.from(dtype, [2, 2], [3, -1, 7, 2]);
    for (const t of await bothWays([x], (g, xs) => call(g, 'aten.add.Tensor', { self: call(g, 'aten.zero.default', { self: xs[0]! }).output, other: xs[0]!, alpha: 1 }).output)) {
      expect([t.dtype, t.toArray().map(Number)]).toEqual([dtype, [3, -1, 7, 2]]);
    }
  });
});

describe('numpy_T (Falcon\'s `.T`), baddbmm (BLOOM\'s ALiBi scores) and copy (a functional copy_)', () => {
  test('numpy_T reverses every dim, against onnxruntime\'s Transpose', async () => {
    const x = random.tensor([2, 3, 4], 'float32');
    const want = await runOrtOp1({ opType: 'Transpose', inputs: [x] });
    for (const t of await bothWays([x], (g, xs) => call(g, 'aten.numpy_T.default', { self: xs[0]! }).output)) expectClose(t, want, FP32, 'numpy_T');
  });

  test.each([
    [1, 1],
    [0.5, -2],
    [0, 3],
  ])('baddbmm with beta %d and alpha %d, against onnxruntime\'s MatMul then the sum done here', async (beta, alpha) => {
    const self = random.tensor([2, 1, 5], 'float32');
    const b1 = random.tensor([2, 3, 4], 'float32');
    const b2 = random.tensor([2, 4, 5], 'float32');
    // beta 0 ignores self: a NaN there must not reach the result.
    if (beta === 0) (self.data as Float32Array)[0] = NaN;
    const product = (await runOrtOp1({ opType: 'MatMul', inputs: [b1, b2] })).toArray().flat(Infinity) as number[];
    const s = self.toArray().flat(Infinity) as number[];
    const want = Tensor.from('float32', [2, 3, 5], product.map((p, i) => alpha * p + (beta === 0 ? 0 : beta * s[Math.floor(i / 15) * 5 + (i % 5)]!)));
    for (const t of await bothWays([self, b1, b2], (g, xs) => call(g, 'aten.baddbmm.default', { self: xs[0]!, batch1: xs[1]!, batch2: xs[2]!, beta, alpha }).output)) {
      expectClose(t, want, FP32, 'baddbmm');
    }
  });

  test('copy gives src broadcast to self\'s shape in self\'s dtype', async () => {
    const self = Tensor.from('int64', [2, 3], [9, 9, 9, 9, 9, 9]);
    const src = Tensor.from('float32', [3], [1.75, -2.5, 3]);
    for (const t of await bothWays([self, src], (g, xs) => call(g, 'aten.copy.default', { self: xs[0]!, src: xs[1]! }).output)) {
      expect([t.dtype, t.shape, t.toArray().flat().map(Number)]).toEqual(['int64', [2, 3], [1, -2, 3, 1, -2, 3]]);
    }
  });
});

describe('meshgrid (BEiT\'s relative position table)', () => {
  const a = Tensor.from('int64', [2], [10, 20]);
  const b = Tensor.from('int64', [3], [1, 2, 3]);
  test.each([
    // torch.meshgrid(a, b, indexing=...): [ij] grids [2, 3]; [xy] grids [3, 2].
    ['ij', 0, [2, 3], [10, 10, 10, 20, 20, 20]],
    ['ij', 1, [2, 3], [1, 2, 3, 1, 2, 3]],
    ['xy', 0, [3, 2], [10, 20, 10, 20, 10, 20]],
    ['xy', 1, [3, 2], [1, 1, 2, 2, 3, 3]],
  ] as const)('indexing %s, output %d', async (indexing, k, shape, values) => {
    for (const t of await bothWays([a, b], (g, xs) => call(g, 'aten.meshgrid.indexing', { tensors: [xs[0]!, xs[1]!], indexing }).outputs[k]!)) {
      expect([t.shape, t.toArray().flat().map(Number)]).toEqual([shape, values]);
    }
  });

  test('a 0-D tensor counts as size 1; three tensors; the default form is "ij"', async () => {
    const c = Tensor.from('int64', [], [7]);
    for (const t of await bothWays([a, c, b], (g, xs) => call(g, 'aten.meshgrid.default', { tensors: [xs[0]!, xs[1]!, xs[2]!] }).outputs[2]!)) {
      expect([t.shape, t.toArray().flat(Infinity).map(Number)]).toEqual([[2, 1, 3], [1, 2, 3, 1, 2, 3]]);
    }
  });
});
