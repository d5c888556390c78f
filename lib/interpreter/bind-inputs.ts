/**
 * Checks run inputs against a graph's inputs and binds the symbols their shapes carry.
 */
import { BadInputError, ShapeOutOfRangeError } from '../errors';
import type { DType } from '../ir/dtype';
import type { Graph, TensorType } from '../ir/graph';
import { evaluateDim, formatDim, formatShape, type SymbolRange } from '../ir/symbolic';
import { Tensor } from '../ir/tensor';

export interface BoundInputs {
  tensors: Tensor[];
  symbols: Map<string, number>;
}

export interface InputShape {
  dtype: DType;
  shape: readonly number[];
}

/**
 * Checks concrete input dtypes and shapes (in graph input order) against the graph's input
 * types: dtype, rank, static dims, a symbol the same wherever it appears and inside its
 * range, expressions (s0*2) consistent. Returns the symbol values. Errors are E_BAD_INPUT
 * naming the input; a dim outside its symbol's range is E_SHAPE_OUT_OF_RANGE naming the input,
 * the dim and the range.
 */
export interface ShapedInputs {
  readonly inputs: ReadonlyArray<{ readonly name: string; readonly tensorType: TensorType }>;
  readonly symbols: ReadonlyMap<string, SymbolRange>;
}

export function bindShapes(graph: ShapedInputs, given: readonly InputShape[]): Map<string, number> {
  const symbols = new Map<string, number>();
  graph.inputs.forEach((value, i) => {
    const t = given[i]!;
    const type = value.tensorType;
    const label = `input "${value.name}"`;
    if (t.dtype !== type.dtype) throw new BadInputError(`${label} must be ${type.dtype}, got ${t.dtype}`);
    if (t.shape.length !== type.shape.length) {
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
          throw new ShapeOutOfRangeError(`${label} dim ${axis} (${d.name}) must be in [${range.min}, ${range.max}], got ${actual}`, {
            details: { input: value.name, dim: axis, symbol: d.name, value: actual, min: range.min, max: range.max },
          });
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
      if (expected !== given[i]!.shape[axis]) {
        throw new BadInputError(`input "${value.name}" dim ${axis} must be ${formatDim(d)} = ${expected}, got ${given[i]!.shape[axis]}`);
      }
    });
  });
  return symbols;
}

/**
 * Orders inputs given as an array (graph order) or an object by input name (own properties
 * only: an inherited `constructor` or `toString` is not an input); checks the count and names.
 */
export function orderInputs<T>(names: readonly string[], given: readonly T[] | Readonly<Record<string, T>>): T[] {
  if (Array.isArray(given)) {
    if (given.length !== names.length) throw new BadInputError(`expected ${names.length} inputs (${names.join(', ')}), got ${given.length}`);
    return [...given];
  }
  if (given === null || typeof given !== 'object') {
    throw new BadInputError(`inputs must be a list of tensors or an object keyed by input name (${names.join(', ')}), got ${given === null ? 'null' : typeof given}`);
  }
  const record = given as Readonly<Record<string, T>>;
  const unknown = Object.keys(record).filter((k) => !names.includes(k));
  const missing = names.filter((n) => !Object.hasOwn(record, n));
  if (unknown.length > 0 || missing.length > 0) {
    throw new BadInputError(
      `inputs do not match the model's (${names.join(', ')}):` +
        (missing.length ? ` missing ${missing.join(', ')};` : '') +
        (unknown.length ? ` unknown ${unknown.join(', ')}` : ''),
    );
  }
  return names.map((n) => record[n]!);
}

/** Orders and checks run inputs (Tensors) and returns them with the symbol values. */
export function bindInputs(graph: Graph, given: readonly Tensor[] | Readonly<Record<string, Tensor>>): BoundInputs {
  const tensors = orderInputs(
    graph.inputs.map((v) => v.name),
    given,
  );
  tensors.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new BadInputError(`input "${graph.inputs[i]!.name}" must be a Tensor`);
  });
  return { tensors, symbols: bindShapes(graph, tensors) };
}
