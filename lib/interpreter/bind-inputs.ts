/**
 * Checks run inputs against a graph's inputs and binds the symbols their shapes carry.
 */
import { BadInputError } from '../errors';
import type { Graph } from '../ir/graph';
import { evaluateDim, formatDim, formatShape } from '../ir/symbolic';
import { Tensor } from '../tensor';

export interface BoundInputs {
  tensors: Tensor[];
  symbols: Map<string, number>;
}

/**
 * Orders inputs (an array in graph order, or an object by input name), checks count, dtype,
 * rank and every dim (static sizes equal, a symbol the same wherever it appears and inside
 * its range), and returns the symbol values. Errors are E_BAD_INPUT naming the input.
 */
export function bindInputs(graph: Graph, given: readonly Tensor[] | Readonly<Record<string, Tensor>>): BoundInputs {
  const names = graph.inputs.map((v) => v.name);
  let tensors: Tensor[];
  if (Array.isArray(given)) {
    if (given.length !== names.length) {
      throw new BadInputError(`expected ${names.length} inputs (${names.join(', ')}), got ${given.length}`);
    }
    tensors = [...given];
  } else {
    const record = given as Readonly<Record<string, Tensor>>;
    const unknown = Object.keys(record).filter((k) => !names.includes(k));
    const missing = names.filter((n) => !(n in record));
    if (unknown.length > 0 || missing.length > 0) {
      throw new BadInputError(
        `inputs do not match the model's (${names.join(', ')}):` +
          (missing.length ? ` missing ${missing.join(', ')};` : '') +
          (unknown.length ? ` unknown ${unknown.join(', ')}` : ''),
      );
    }
    tensors = names.map((n) => record[n]!);
  }
  const symbols = new Map<string, number>();
  graph.inputs.forEach((value, i) => {
    const t = tensors[i];
    const type = value.tensorType;
    const label = `input "${value.name}"`;
    if (!(t instanceof Tensor)) throw new BadInputError(`${label} must be a Tensor`);
    if (t.dtype !== type.dtype) throw new BadInputError(`${label} must be ${type.dtype}, got ${t.dtype}`);
    if (t.rank !== type.shape.length) {
      throw new BadInputError(`${label} must have rank ${type.shape.length} ${formatShape(type.shape)}, got shape [${t.shape.join(', ')}]`);
    }
    type.shape.forEach((d, axis) => {
      const actual = t.shape[axis]!;
      if (typeof d === 'number') {
        if (d !== actual) throw new BadInputError(`${label} dim ${axis} must be ${d}, got ${actual} (shape [${t.shape.join(', ')}])`);
        return;
      }
      if (d.op === 'sym') {
        const range = graph.symbols.get(d.name);
        const bound = symbols.get(d.name);
        if (bound !== undefined && bound !== actual) {
          throw new BadInputError(`${label} dim ${axis} is ${d.name} = ${bound} elsewhere in the inputs, got ${actual}`);
        }
        if (range && (actual < range.min || actual > range.max)) {
          throw new BadInputError(`${label} dim ${axis} (${d.name}) must be in [${range.min}, ${range.max}], got ${actual}`);
        }
        symbols.set(d.name, actual);
      }
    });
  });
  // Dims that are expressions (s0*2) are checked once every symbol has a value.
  graph.inputs.forEach((value, i) => {
    value.tensorType.shape.forEach((d, axis) => {
      if (typeof d === 'number' || d.op === 'sym') return;
      let expected: number;
      try {
        expected = evaluateDim(d, symbols);
      } catch {
        return; // a symbol only this expression uses: nothing to compare against
      }
      if (expected !== tensors[i]!.shape[axis]) {
        throw new BadInputError(`input "${value.name}" dim ${axis} must be ${formatDim(d)} = ${expected}, got ${tensors[i]!.shape[axis]}`);
      }
    });
  });
  return { tensors, symbols };
}
