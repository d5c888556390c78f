/** A chain of relu (`r*`) and gelu (`g*`) nodes on one float32 [2, 3] input, for compile-stage tests. */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';

/** Default: relu ×3, gelu, relu ×3 (with gelu forced out and minBlockSize 2: two engines and one fallback segment). */
export function reluChain(names: readonly string[] = ['r1', 'r2', 'r3', 'g1', 'r4', 'r5', 'r6']): Graph {
  const g = new Graph('chain');
  let v: Value = g.addInput('x', tensorType('float32', [2, 3]));
  for (const name of names) {
    v = call(g, name.startsWith('r') ? 'aten.relu.default' : 'aten.gelu.default', { self: v }, { name }).output;
  }
  g.setOutputs([v], ['y']);
  return g;
}
