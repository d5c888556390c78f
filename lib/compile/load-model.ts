/**
 * The model argument of compile(): a path or bytes of an ONNX or .pt2 file, or a Graph
 * (copied, so compiling never changes the caller's graph).
 */
import * as fs from 'node:fs';

import { BadModelError, InvalidArgumentError } from '../errors';
import { loadOnnx } from '../frontends/onnx';
import { loadPt2 } from '../frontends/pt2';
import { Graph } from '../ir/graph';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../ir/serialize';

export type ModelSource = string | Uint8Array | Graph;

const isZip = (b: Uint8Array): boolean => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

export function loadModel(model: ModelSource): Graph {
  if (model instanceof Graph) return deserializeGraphFromBuffer(serializeGraphToBuffer(model));
  if (typeof model === 'string') {
    if (/\.pt2$/i.test(model)) return loadPt2(model);
    if (/\.onnx$/i.test(model)) return loadOnnx(model);
    let head: Uint8Array;
    try {
      const fd = fs.openSync(model, 'r');
      head = new Uint8Array(4);
      fs.readSync(fd, head, 0, 4, 0);
      fs.closeSync(fd);
    } catch (cause) {
      throw new BadModelError(`cannot read model ${model}: ${(cause as Error).message}`, { cause, details: { file: model } });
    }
    return isZip(head) ? loadPt2(model) : loadOnnx(model);
  }
  if (model instanceof Uint8Array) return isZip(model) ? loadPt2(model) : loadOnnx(model);
  throw new InvalidArgumentError('compile() takes a model path, the model file bytes, or a Graph');
}
