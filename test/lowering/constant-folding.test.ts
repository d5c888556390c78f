/**
 * Constant folding: chains of constant-only nodes collapse into one constant, in one pass,
 * also when a folded value is a graph output; nodes reading a run-time input stay.
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import '../../lib/ir/ops';
import { foldConstants } from '../../lib/lowering/constant-folding';
import { Tensor } from '../../lib/ir/tensor';

test('a chain of constant ops folds into constants; the rest stays', () => {
  const g = new Graph('fold');
  const x = g.addInput('x', tensorType('float32', [3]));
  const c = g.addConstant('c', Tensor.from('float32', [3], [1, 2, 3]));
  const twice = call(g, 'aten.mul.Scalar', { self: c, other: 2 }).output; // [2, 4, 6]
  const plus = call(g, 'aten.add.Scalar', { self: twice, other: 1 }).output; // [3, 5, 7]
  const y = call(g, 'aten.mul.Tensor', { self: x, other: plus }).output;
  g.setOutputs([y, plus], ['y', 'k']);
  expect(foldConstants(g)).toBe(2);
  expect(g.calls().map((n) => n.target)).toEqual(['aten.mul.Tensor']);
  const k = g.outputs[1]!;
  expect(k.producer.kind).toBe('constant');
  expect(Array.from(k.producer.tensor!.data as Float32Array)).toEqual([3, 5, 7]);
  expect(g.calls()[0]!.args.other).toBe(k);
});

test("with static shapes, ops that read only their input's shape fold (x.new_zeros, zeros_like), and so does what is built from them; before specialization they stay", () => {
  const build = (): Graph => {
    const g = new Graph('shape-only');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    // Swin's mask in miniature: zeros shaped from x, a slice of it filled, added to x.
    const mask = call(g, 'aten.new_zeros.default', { self: x, size: [2, 3] }).output;
    const filled = call(g, 'aten.slice_scatter.default', { self: mask, src: call(g, 'aten.full.default', { size: [2, 1], fill_value: 5, dtype: 'float32' }).output, dim: 1, start: 2, end: 3, step: 1 }).output;
    const like = call(g, 'aten.ones_like.default', { self: x }).output;
    const y = call(g, 'aten.add.Tensor', { self: call(g, 'aten.add.Tensor', { self: x, other: filled }).output, other: like }).output;
    g.setOutputs([y], ['y']);
    return g;
  };
  const before = build();
  foldConstants(before);
  expect(before.calls().map((n) => n.target)).toContain('aten.new_zeros.default');
  const g = build();
  foldConstants(g, { sources: true });
  expect(g.calls().map((n) => n.target)).toEqual(['aten.add.Tensor', 'aten.add.Tensor']);
  const [first, second] = g.calls();
  expect(Array.from(((first!.args.other as { producer: { tensor: Tensor } }).producer.tensor.data as Float32Array))).toEqual([0, 0, 5, 0, 0, 5]);
  expect(Array.from(((second!.args.other as { producer: { tensor: Tensor } }).producer.tensor.data as Float32Array))).toEqual([1, 1, 1, 1, 1, 1]);
});
