/**
 * Shared setup of the op-family tests (test/ops/nn-*): small tensor builders, a
 * close-values assertion, and a one-node IR graph runner for ATen targets.
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';

/** A float32 tensor of `shape` holding `values`. */
export const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

/** A 1-D int64 tensor holding `values`. */
export const i64 = (values: readonly number[]): Tensor => Tensor.from('int64', [values.length], values);

/** Expects `t` to hold `expected`, each value to `digits` decimal places (jest's toBeCloseTo). */
export function expectValues(t: Tensor, expected: number[], digits = 5): void {
  const got = t.toArray();
  expect(got).toHaveLength(expected.length);
  got.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, digits));
}

/**
 * Builds a one-node graph calling `target` over graph inputs typed like `inputs` (named x0,
 * x1, …; `args` maps them to the call's arguments) and interprets it on `inputs`.
 */
export function run(target: string, inputs: Tensor[], args: (vs: Value[]) => Record<string, unknown>): Tensor[] {
  const g = new Graph();
  const vs = inputs.map((t, i) => g.addInput(`x${i}`, tensorType(t.dtype, t.shape)));
  const node = call(g, target, args(vs) as never);
  g.setOutputs(node.outputs);
  return interpret(g, inputs);
}
