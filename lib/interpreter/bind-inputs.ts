/**
 * Checks run inputs against a graph's inputs and binds the symbols their shapes carry.
 */
import { BadInputError, ShapeOutOfRangeError } from '../errors';
import type { DType } from '../ir/dtype';
import type { Graph, TensorType, ValueType } from '../ir/graph';
import { evaluateDim, formatDim, formatShape, type Dim, type SymbolRange } from '../ir/symbolic';
import { Tensor } from '../ir/tensor';
import { describeGraphValue, elementKindOf, OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../ir/values';

export interface BoundInputs {
  values: GraphValue[];
  symbols: Map<string, number>;
}

/** An element type and shape: a tensor's, or a string tensor's (dtype 'string'). */
export interface InputShape {
  dtype: DType | 'string';
  shape: readonly number[];
}

/** The type {@link bindShapes} checks an input against: a tensor type, or a string tensor's (dtype 'string'). */
export interface ShapedType {
  readonly dtype: DType | 'string';
  readonly shape: readonly Dim[];
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

export function bindShapes(
  graph: { readonly inputs: ReadonlyArray<{ readonly name: string; readonly tensorType: ShapedType }>; readonly symbols: ReadonlyMap<string, SymbolRange> },
  given: readonly InputShape[],
): Map<string, number> {
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

/** What a value of `type` is called in messages. */
function typeName(type: ValueType): string {
  switch (type.kind) {
    case 'tensor':
      return `a ${type.dtype} Tensor`;
    case 'strings':
      return 'a StringTensor';
    case 'sequence':
      return `a TensorSequence of ${type.elem}${type.rank === null ? '' : ` (rank ${type.rank})`}`;
    case 'optional':
      return `an OptionalValue of ${typeName(type.element).replace(/^an? /, '')}`;
    case 'symint':
      return 'an integer';
  }
}

/** Null when `v` is a value of `type` (sizes aside: bindShapes checks a tensor's and a string tensor's); else what is wrong. */
function kindMismatch(type: ValueType, v: unknown): string | null {
  const wrong = `must be ${typeName(type)}, got ${describeGraphValue(v)}`;
  switch (type.kind) {
    case 'tensor':
      return v instanceof Tensor ? null : wrong;
    case 'strings':
      return v instanceof StringTensor ? null : wrong;
    case 'sequence':
      if (!(v instanceof TensorSequence) || v.elem !== type.elem) return wrong;
      if (type.rank !== null) {
        const at = v.items.findIndex((t) => t.rank !== type.rank);
        if (at >= 0) return `${wrong}: element ${at} has rank ${v.items[at]!.rank}`;
      }
      return null;
    case 'optional': {
      if (!(v instanceof OptionalValue)) return wrong;
      if (v.value === null) return null;
      const inner = kindMismatch(type.element, v.value);
      if (inner !== null) return `${wrong}: its value ${inner}`;
      // An optional's value binds no symbol, so its element type and rank are checked here.
      const el = type.element;
      if (el.kind === 'tensor' && (v.value as Tensor).dtype !== el.dtype) return `${wrong}: its value is ${(v.value as Tensor).dtype}`;
      if (el.kind !== 'sequence' && (v.value as Tensor | StringTensor).rank !== el.shape.length) return `${wrong}: its value has rank ${(v.value as Tensor | StringTensor).rank}, not ${el.shape.length}`;
      return null;
    }
    case 'symint':
      return wrong;
  }
}

/**
 * Orders and checks run inputs and returns them with the symbol values. Tensors and string
 * tensors bind the symbols of their shapes; a sequence's or an optional's sizes are its own.
 */
export function bindInputs(graph: Graph, given: readonly GraphValue[] | Readonly<Record<string, GraphValue>>): BoundInputs {
  const values = orderInputs(
    graph.inputs.map((v) => v.name),
    given,
  );
  values.forEach((t, i) => {
    const input = graph.inputs[i]!;
    const wrong = kindMismatch(input.type, t);
    if (wrong !== null) throw new BadInputError(`input "${input.name}" ${wrong}`, { details: { input: input.name } });
  });
  const shaped: Array<{ name: string; tensorType: ShapedType }> = [];
  const shapes: InputShape[] = [];
  graph.inputs.forEach((v, i) => {
    const t = values[i]!;
    if (v.type.kind === 'tensor' || v.type.kind === 'strings') {
      shaped.push({ name: v.name, tensorType: v.type.kind === 'tensor' ? v.type : { dtype: 'string', shape: v.type.shape } });
      shapes.push({ dtype: elementKindOf(t as Tensor | StringTensor), shape: (t as Tensor | StringTensor).shape });
    }
  });
  return { values, symbols: bindShapes({ inputs: shaped, symbols: graph.symbols }, shapes) };
}
