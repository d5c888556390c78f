/**
 * Decoding ModelProto bytes with onnx-proto (protobufjs) and checking the parts the importer
 * relies on, so that garbage, truncated files and structurally wrong models are E_BAD_MODEL
 * errors naming the file, never crashes.
 */
import { onnx } from 'onnx-proto';

import { BadModelError } from '../../errors';

export function decodeModel(bytes: Uint8Array, source: string): onnx.ModelProto {
  let model: onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (cause) {
    throw new BadModelError(`${source} is not a valid ONNX model: protobuf decoding failed (${(cause as Error).message})`, {
      cause,
      details: { file: source },
    });
  }
  if (!model.graph) throw new BadModelError(`${source} is not an ONNX model: it has no graph`, { details: { file: source } });
  if (!model.opsetImport || model.opsetImport.length === 0) {
    throw new BadModelError(`${source}: the model imports no opset`, { details: { file: source } });
  }
  return model;
}
