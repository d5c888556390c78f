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
