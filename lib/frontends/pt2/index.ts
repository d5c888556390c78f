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
  /**
   * The most bytes the load may make up, in all, beyond those the archive holds for its
   * weights and constants: the zeros of a fake (meta) storage saved without data, the repeats
   * of zero or overlapping strides (an expanded tensor), a second copy of a storage two
   * weights share. Default 64 MiB, so that a few bytes of archive cannot ask for gigabytes;
   * one tensor alone over it is E_BAD_MODEL, the load's total over it E_RESOURCE_LIMIT.
   * A non-negative integer.
   */
  maxUnbackedWeightBytes?: number;
}

/**
 * Imports a `torch.export.save` archive (.pt2; a path or the file's bytes) into a Graph: user
 * inputs keep their names, symbolic sizes become symbols with the program's range
 * constraints (graph.symbols), parameters/buffers/constants become constants, complex64
 * tensors stay complex.
 *
 * @throws {BadModelError} `E_BAD_MODEL`: unreadable, truncated or inconsistent archive (names the entry or node),
 *   or a zip bomb (one entry, or all together, inflating more than 200 times their compressed size).
 * @throws {ResourceLimitError} `E_RESOURCE_LIMIT`: the weights make up more than `maxUnbackedWeightBytes` in all (names the weight and the file).
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: a bad option.
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
  const graph = importProgram(archive, { modelName: options.modelName, maxUnbackedWeightBytes: options.maxUnbackedWeightBytes });
  verifyGraph(graph, 'imported torch.export graph');
  if (options.decompose !== false) {
    decompose(graph);
    verifyGraph(graph, 'decomposed torch.export graph');
  }
  return graph;
}
