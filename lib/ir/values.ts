/**
 * The values a graph can hold besides numeric tensors, as ONNX has them: tensors of strings,
 * sequences of tensors and optionals. The CPU interpreter computes with them (the string,
 * sequence and optional ops); no backend takes them, so compile() keeps them inside fallback
 * segments and refuses them at a program's inputs and outputs.
 */
import { inspect } from 'node:util';
import { InvalidArgumentError } from '../errors';
import { isDType, type DType } from './dtype';
import { Tensor } from './tensor';

function checkShape(shape: readonly number[], what: string): void {
  if (!Array.isArray(shape) || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new InvalidArgumentError(`${what}: shape must be a list of non-negative integers, got ${JSON.stringify(shape)}`);
  }
}

/** A tensor of strings (ONNX's STRING element type), row-major like {@link Tensor}. */
export class StringTensor {
  readonly shape: readonly number[];
  readonly data: readonly string[];

  /** `data` holds one string per element; its length must match the shape. */
  constructor(shape: readonly number[], data: readonly string[]) {
    checkShape(shape, 'StringTensor');
    const size = shape.reduce((a, b) => a * b, 1);
    if (!Array.isArray(data) || data.length !== size || data.some((s) => typeof s !== 'string')) {
      throw new InvalidArgumentError(`a string tensor of shape [${shape.join(', ')}] needs ${size} strings, got ${Array.isArray(data) ? `${data.length} values` : typeof data}`);
    }
    this.shape = Object.freeze([...shape]);
    this.data = Object.freeze([...data]);
  }

  get size(): number {
    return this.data.length;
  }

  get rank(): number {
    return this.shape.length;
  }

  toString(): string {
    return `StringTensor[${this.shape.join(', ')}]`;
  }

  [inspect.custom](): string {
    const shown = this.data.slice(0, 8).map((s) => JSON.stringify(s));
    return `${this.toString()} [${shown.join(', ')}${this.size > 8 ? `, … ${this.size - 8} more` : ''}]`;
  }
}

/** What a sequence or an optional holds: a numeric element type, or 'string'. */
export type ElementKind = DType | 'string';

/** The element kind of a tensor or string tensor. */
export function elementKindOf(t: Tensor | StringTensor): ElementKind {
  return t instanceof StringTensor ? 'string' : t.dtype;
}

/**
 * An ONNX sequence: any number of tensors of one element type (sizes may differ between
 * elements). `elem` is kept for the empty sequence, whose type no element tells.
 */
export class TensorSequence {
  readonly items: ReadonlyArray<Tensor | StringTensor>;

  constructor(
    readonly elem: ElementKind,
    items: ReadonlyArray<Tensor | StringTensor>,
  ) {
    if (elem !== 'string' && !isDType(elem)) throw new InvalidArgumentError(`TensorSequence: ${JSON.stringify(elem)} is not an element type`);
    items.forEach((t, i) => {
      if (!(t instanceof Tensor) && !(t instanceof StringTensor)) throw new InvalidArgumentError(`TensorSequence: item ${i} is not a tensor`);
      if (elementKindOf(t) !== elem) throw new InvalidArgumentError(`TensorSequence of ${elem}: item ${i} is ${elementKindOf(t)}`);
    });
    this.items = Object.freeze([...items]);
  }

  get length(): number {
    return this.items.length;
  }

  toString(): string {
    return `TensorSequence<${this.elem}>(${this.items.length})`;
  }

  [inspect.custom](): string {
    const shown = this.items.slice(0, 4).map((t) => `[${t.shape.join(', ')}]`);
    return `${this.toString()} ${shown.join(' ')}${this.items.length > 4 ? ` … ${this.items.length - 4} more` : ''}`;
  }
}

/** An ONNX optional: a tensor, string tensor or sequence, or none (`value` null). */
export class OptionalValue {
  constructor(readonly value: Tensor | StringTensor | TensorSequence | null) {
    if (value !== null && !(value instanceof Tensor) && !(value instanceof StringTensor) && !(value instanceof TensorSequence)) {
      throw new InvalidArgumentError('OptionalValue holds a tensor, a string tensor, a sequence or null');
    }
  }

  toString(): string {
    return this.value === null ? 'Optional(none)' : `Optional(${String(this.value)})`;
  }
}

/** Any value a graph input or output can take: what {@link interpretValues} reads and returns. */
export type GraphValue = Tensor | StringTensor | TensorSequence | OptionalValue;

/** The bytes a value holds (a string's as UTF-16, as JavaScript keeps it): what a run's maxTensorBytes bounds. */
export function graphValueBytes(v: GraphValue): number {
  if (v instanceof Tensor) return v.data.byteLength;
  if (v instanceof StringTensor) return v.data.reduce((b, s) => b + 2 * s.length, 0);
  if (v instanceof TensorSequence) return v.items.reduce((b, t) => b + graphValueBytes(t), 0);
  return v.value === null ? 0 : graphValueBytes(v.value);
}

/** How a value is described in messages: `float32 [2, 3]`, `string tensor [4]`, `sequence of 3 int64`, `optional (none)`. */
export function describeGraphValue(v: unknown): string {
  if (v instanceof Tensor) return `${v.dtype} tensor [${v.shape.join(', ')}]`;
  if (v instanceof StringTensor) return `string tensor [${v.shape.join(', ')}]`;
  if (v instanceof TensorSequence) return `sequence of ${v.length} ${v.elem}`;
  if (v instanceof OptionalValue) return v.value === null ? 'optional (none)' : `optional (${describeGraphValue(v.value)})`;
  return v === null ? 'null' : typeof v;
}
