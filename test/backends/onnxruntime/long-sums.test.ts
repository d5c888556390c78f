/**
 * onnxruntime sums float32 in float32, so past 2^24 terms a partial sum stops growing (a
 * 1 GiB tensor of fours summed to 2^29 instead of 2^30 on onnxruntime-node 1.30, 2-core x86,
 * 2026-12-07, where the reference backend's float64 sum gave 2^30). The lowering takes a sum
 * or mean of more than 2^24 terms per output in float64, and leaves shorter ones (and run-time
 * sized ones) to the float32 kernel. Checked on the ONNX graph the lowering emits: a run at
 * that size needs gigabytes.
 */
import { onnx } from 'onnx-proto';

import { networkToOnnx } from '../../../lib/backends/onnxruntime/layers';
import { Network } from '../../../lib/network';

/** The op types, in order, of the ONNX graph for reduce(`op`) of a float32 [rows, cols] over axis 1. */
function reduceOps(op: 'sum' | 'avg' | 'max', rows: number, cols: number): string[] {
  const network = new Network('n');
  const x = network.addInput('x', 'float32', [rows, cols]);
  network.markOutput(network.add1({ kind: 'reduce', op, axes: [1], keepDims: false }, [x], 'r'), 'y');
  const model = onnx.ModelProto.decode(networkToOnnx(network));
  return (model.graph?.node ?? []).map((n) => `${n.opType}${n.opType === 'Cast' ? `:${String(n.attribute?.[0]?.i)}` : ''}`);
}

const DOUBLE = onnx.TensorProto.DataType.DOUBLE;

test.each(['sum', 'avg'] as const)('a %s of more than 2^24 terms is taken in float64', (op) => {
  const ops = reduceOps(op, 2, 2 ** 24 + 1);
  expect(ops).toContain(`Cast:${DOUBLE}`);
  expect(ops.indexOf(`Cast:${DOUBLE}`)).toBeLessThan(ops.findIndex((o) => o.startsWith('Reduce')));
});

test('a sum of 2^24 terms, and a max of any length, stay float32', () => {
  expect(reduceOps('sum', 2, 2 ** 24)).not.toContain(`Cast:${DOUBLE}`);
  expect(reduceOps('max', 2, 2 ** 25)).not.toContain(`Cast:${DOUBLE}`);
});
