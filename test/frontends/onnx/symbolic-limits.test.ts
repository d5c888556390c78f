/**
 * Shape arithmetic that builds huge symbolic dims: each Mul(s, s) doubles the written-out
 * expression while its shared DAG grows by one node. Loading must stay linear in the DAG and
 * refuse the absurd ones with E_BAD_MODEL naming the node (not run for minutes).
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { thrownError } from '../../helpers/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** x[n] → Shape → `squarings` chained Mul(s, s) → output (int64[1]). */
function squaringModel(squarings: number): Uint8Array {
  const node = [onnx.NodeProto.create({ opType: 'Shape', input: ['x'], output: ['s0'], name: 'shape' })];
  for (let i = 1; i <= squarings; i++) {
    node.push(onnx.NodeProto.create({ opType: 'Mul', input: [`s${i - 1}`, `s${i - 1}`], output: [`s${i}`], name: `square_${i}` }));
  }
  const graph = onnx.GraphProto.create({
    name: 'squarings',
    node,
    input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimParam: 'n' }] } } } }],
    output: [{ name: `s${squarings}` }],
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
}

test('24 chained squarings of a shape (the 594-byte probe) are refused, naming the node', () => {
  const model = squaringModel(24);
  expect(model.byteLength).toBeLessThan(1000);
  const e = thrownError(() => loadOnnx(model));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toMatch(/ONNX node "square_\d+" \(Mul\)/);
  expect(e.message).toMatch(/degree/);
});

test('a few squarings still import and compute n^(2^k)', () => {
  const graph = loadOnnx(squaringModel(3));
  for (const n of [2, 3]) {
    const [y] = interpret(graph, [Tensor.from('float32', [n], new Array(n).fill(0))]);
    expect(y!.dtype).toBe('int64');
    expect(y!.toArray()).toEqual([n ** 8]);
  }
});
