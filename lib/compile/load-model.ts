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

export interface LoadModelOptions {
  /** Folder an ONNX model's external data files are read from (see CompileSettings.baseDir). */
  baseDir?: string;
}

/** A .pt2 archive or a Graph has no external data: a baseDir given with one is a mistake worth saying. */
function noBaseDir(options: LoadModelOptions, what: string): void {
  if (options.baseDir !== undefined) {
    throw new InvalidArgumentError(`baseDir locates an ONNX model's external data; ${what} has none (remove baseDir)`, { details: { baseDir: options.baseDir } });
  }
}

function loadPt2Without(model: string | Uint8Array, options: LoadModelOptions): Graph {
  noBaseDir(options, typeof model === 'string' ? `the .pt2 archive ${model}` : 'a .pt2 archive');
  return loadPt2(model);
}

export function loadModel(model: ModelSource, options: LoadModelOptions = {}): Graph {
  if (model instanceof Graph) {
    noBaseDir(options, 'a Graph');
    return deserializeGraphFromBuffer(serializeGraphToBuffer(model));
  }
  const onnx = { baseDir: options.baseDir };
  if (typeof model === 'string') {
    if (/\.pt2$/i.test(model)) return loadPt2Without(model, options);
    if (/\.onnx$/i.test(model)) return loadOnnx(model, onnx);
    let head: Uint8Array;
    try {
      const fd = fs.openSync(model, 'r');
      head = new Uint8Array(4);
      fs.readSync(fd, head, 0, 4, 0);
      fs.closeSync(fd);
    } catch (cause) {
      throw new BadModelError(`cannot read model ${model}: ${(cause as Error).message}`, { cause, details: { file: model } });
    }
    return isZip(head) ? loadPt2Without(model, options) : loadOnnx(model, onnx);
  }
  if (model instanceof Uint8Array) return isZip(model) ? loadPt2Without(model, options) : loadOnnx(model, onnx);
  throw new InvalidArgumentError('compile() takes a model path, the model file bytes, or a Graph');
}
