/**
 * The torch.export frontend: `loadPt2(pathOrBuffer)` → Graph.
 */
import { BadModelError, InvalidArgumentError } from '../../errors';
import type { Graph } from '../../ir/graph';
import '../../ir/ops';
import { verifyGraph } from '../../ir/verify';
import { decompose } from '../../lowering/decompositions';
import { readRegularFile } from '../regular-file';
import { Pt2Archive } from './archive';
import { importProgram } from './import';

export { parseSymExpr } from './sym-expr';

export interface LoadPt2Options {
  /** Which program of the archive to import (`models/<name>.json`); default "model" or the only one. */
  modelName?: string;
  /**
   * Run the torch.export default-IR decompositions (lib/lowering/decompositions.ts) after
   * import: casts, aliases and identities become the core ops. Default true.
   */
  decompose?: boolean;
}

/**
 * Imports a `torch.export.save` archive (.pt2; a path or the file's bytes) into a Graph: user
 * inputs keep their names, symbolic sizes become symbols with the program's range
 * constraints (graph.symbols), parameters/buffers/constants become constants, complex64
 * tensors stay complex.
 *
 * @throws {BadModelError} `E_BAD_MODEL`: unreadable, truncated or inconsistent archive (names the entry or node).
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: an op, dtype or program feature tensorrt-node does not handle.
 */
export function loadPt2(source: string | Uint8Array, options: LoadPt2Options = {}): Graph {
  let bytes: Uint8Array;
  let name: string;
  if (typeof source === 'string') {
    name = source;
    bytes = readRegularFile(source, (reason, cause) => {
      throw new BadModelError(`cannot read .pt2 archive ${source}: the file ${reason}`, { cause, details: { file: source } });
    });
  } else if (source instanceof Uint8Array) {
    name = 'pt2 buffer';
    bytes = source;
  } else {
    throw new InvalidArgumentError('loadPt2 expects a file path or a Uint8Array/Buffer of the .pt2 archive');
  }
  const archive = Pt2Archive.open(bytes, name);
  const graph = importProgram(archive, { modelName: options.modelName });
  verifyGraph(graph, 'imported torch.export graph');
  if (options.decompose !== false) {
    decompose(graph);
    verifyGraph(graph, 'decomposed torch.export graph');
  }
  return graph;
}
