/**
 * The ONNX frontend: `loadOnnx(pathOrBuffer)` → Graph.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { BadModelError, InvalidArgumentError } from '../../errors';
import type { Graph } from '../../ir/graph';
import type { Tensor } from '../../ir/tensor';
import '../../ir/ops';
import { verifyGraph } from '../../ir/verify';
import { foldConstants } from '../../lowering/constant-folding';
import { readRegularFile } from '../regular-file';
import { registerDeferredRunner } from '../../interpreter/ops/deferred';
import { runDeferred } from './deferred';
import { importModel } from './import';
import './ops';
import { decodeModel } from './proto';

// The interpreter runs the ONNX nodes imported at run time (./deferred.ts) through the importer
// and the op mappers loaded here.
registerDeferredRunner('onnx', (node, opset, inputs, limits) => runDeferred(importModel, node, opset, inputs, limits));

export { MAX_OPSET, MIN_OPSET } from './import';
export { mappedOnnxOps } from './registry';

export interface LoadOnnxOptions {
  /**
   * Directory that external-data files are relative to. Defaults to the model file's
   * directory; needed when loading from a buffer a model whose weights are external.
   */
  baseDir?: string;
  /**
   * Graph inputs whose values are fixed at import, by name: the graph is specialized to them
   * (they become constants and are no longer inputs), so inputs that the importer needs known
   * (a shape, axes, pads, K...) can be given as graph inputs. Each must match the input's
   * declared element type and shape.
   */
  constantInputs?: Readonly<Record<string, Tensor>>;
}

/**
 * Imports an ONNX model (a path or the file's bytes) into a Graph: inputs keep their names,
 * `dim_param` dims become symbols, initializers (also from external-data files) become
 * constants, and shape arithmetic is folded into exact symbolic dims.
 *
 * @throws {BadModelError} `E_BAD_MODEL`: unreadable, truncated or inconsistent file (names it and the node).
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: an op, element type or opset tensorrt-node does not handle.
 */
export function loadOnnx(source: string | Uint8Array, options: LoadOnnxOptions = {}): Graph {
  let bytes: Uint8Array;
  let name: string;
  let baseDir = options.baseDir;
  if (typeof source === 'string') {
    name = source;
    bytes = readRegularFile(source, (reason, cause) => {
      throw new BadModelError(`cannot read ONNX model ${source}: the file ${reason}`, { cause, details: { file: source } });
    });
    baseDir ??= path.dirname(path.resolve(source));
  } else if (source instanceof Uint8Array) {
    name = 'ONNX model buffer';
    bytes = source;
  } else {
    throw new InvalidArgumentError('loadOnnx expects a file path or a Uint8Array/Buffer of the model');
  }
  const externalFiles = new Map<string, number>();
  try {
    const ownsBuffer = typeof source === 'string';
    const graph = importModel(decodeModel(bytes, name), { source: name, baseDir, externalFiles, ownsBuffer, constantInputs: options.constantInputs });
    foldConstants(graph);
    verifyGraph(graph, 'imported ONNX graph');
    return graph;
  } finally {
    for (const fd of externalFiles.values()) fs.closeSync(fd);
  }
}
