/**
 * Checks our ONNX importer + interpreter against onnxruntime on the same one-node model.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32, type Tolerance } from './compare';
import { buildSingleOpModel, runOrtOp, type OrtOpSpec } from './ort-single-op';

/**
 * Runs `spec` in onnxruntime and through loadOnnx + interpret, and expects every output to
 * match within `tol` (fp32 rtol 1e-4 / atol 1e-5 by default). Returns our outputs.
 */
export async function expectOnnxMatchesOrt(spec: OrtOpSpec, tol: Tolerance = FP32): Promise<Tensor[]> {
  const expected = await runOrtOp(spec);
  const graph = loadOnnx(buildSingleOpModel(spec));
  const feeds = spec.inputs.filter((x): x is Tensor => x instanceof Tensor);
  const actual = interpret(graph, feeds);
  expect(actual).toHaveLength(expected.length);
  actual.forEach((t, i) => expectClose(t, expected[i]!, tol, `${spec.opType} output ${i}`));
  return actual;
}
