/**
 * ONNX models with a dynamic batch for the dynamic-shape converter tests: a one-op model
 * (test/helpers/ort-single-op.ts) whose fed inputs' dim 0 becomes the dim_param `batch`, so
 * onnxruntime and our compile() read the same dynamic graph.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** The model with dim 0 of every fed input renamed to the dim_param `batch`. */
export function withDynamicBatch(model: Uint8Array): Uint8Array {
  const m = onnx.ModelProto.decode(model);
  for (const input of m.graph.input) input.type.tensorType.shape.dim[0] = { dimParam: 'batch' };
  return onnx.ModelProto.encode(m).finish();
}
