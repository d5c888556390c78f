/**
 * Validating accessors over untrusted JSON, shared by the readers of serialized graphs
 * (lib/ir/serialize.ts) and of program-file manifests (lib/runtime/program-file/): each
 * accessor checks one value's kind and returns it typed, or fails with a message that names
 * what was read (`what`) and what was found. Subclasses choose the error (`fail`).
 */
import type { Dim, SymOp } from './symbolic';

/** The ops of symbolic dim expressions (SymOp), as serialized. */
export const SYM_OPS: readonly SymOp[] = ['add', 'sub', 'mul', 'floordiv', 'mod', 'max', 'min'];

/** How a JsonReader reads. */
export interface JsonReaderOptions {
  /** How deep a symbolic dim expression may nest (deeper input is rejected, not overflowed). */
  maxDepth: number;
  /** How many characters of a string value an error message quotes. */
  quoteLength: number;
  /**
   * Program files: dims must be safe integers, and a dim expression may hold no key its op
   * does not define. Otherwise any integer dim is read and unknown keys are ignored.
   */
  strict: boolean;
}

/** A found value for an error message: `nothing`, `a list`, `an object`, a quoted (shortened) string, or the value. */
export function describeJson(x: unknown, quoteLength: number): string {
  if (x === undefined) return 'nothing';
  if (Array.isArray(x)) return 'a list';
  if (typeof x === 'object' && x !== null) return 'an object';
  if (typeof x === 'string') return JSON.stringify(x.length > quoteLength ? `${x.slice(0, quoteLength)}…` : x);
  return String(x);
}

/** Validating accessors over untrusted JSON; see the top of this file. */
export abstract class JsonReader {
  constructor(
    /** Prefixes every failure message (e.g. `serialized graph "g"`, `program file "m.trtp"`). */
    public label: string,
    private readonly options: JsonReaderOptions,
  ) {}

  /** Throws the reader's error for `message`. */
  abstract fail(message: string, details?: Record<string, unknown>): never;

  /** `x` as error messages show it. */
  describe(x: unknown): string {
    return describeJson(x, this.options.quoteLength);
  }

  /** A JSON object; with `keys`, one holding every required key and no key outside required and optional. */
  object(x: unknown, what: string, keys?: { required: readonly string[]; optional?: readonly string[] }): Record<string, unknown> {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) this.fail(`${what} is not an object (got ${this.describe(x)})`);
    const o = x as Record<string, unknown>;
    if (keys !== undefined) {
      for (const k of keys.required) if (!Object.hasOwn(o, k)) this.fail(`${what} has no "${k}"`);
      for (const k of Object.keys(o)) {
        if (!keys.required.includes(k) && !(keys.optional ?? []).includes(k)) this.fail(`${what} has the unknown key "${k}"`);
      }
    }
    return o;
  }

  /** A JSON list. */
  array(x: unknown, what: string): unknown[] {
    if (!Array.isArray(x)) this.fail(`${what} is not a list (got ${this.describe(x)})`);
    return x;
  }

  /** A string. */
  string(x: unknown, what: string): string {
    if (typeof x !== 'string') this.fail(`${what} is not a string (got ${this.describe(x)})`);
    return x;
  }

  /** A non-negative safe integer. */
  index(x: unknown, what: string): number {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) this.fail(`${what} is not a non-negative integer (got ${this.describe(x)})`);
    return x;
  }

  /** A dim: an integer, or a symbolic expression `{op: 'sym', name}` / `{op, a, b}`. */
  dim(x: unknown, what: string, depth = 0): Dim {
    const { maxDepth, strict } = this.options;
    if (depth > maxDepth) this.fail(`${what} nests too deeply`);
    if (typeof x === 'number') {
      if (!(strict ? Number.isSafeInteger(x) : Number.isInteger(x))) this.fail(`${what} has the dim ${this.describe(x)}, not an integer`);
      return x;
    }
    const o = this.object(x, what);
    if (o.op === 'sym') {
      if (strict) this.object(x, what, { required: ['op', 'name'] });
      return { op: 'sym', name: this.string(o.name, `${what}: a symbol's name`) };
    }
    if (!SYM_OPS.includes(o.op as SymOp)) this.fail(`${what} has a dim with the unknown op ${this.describe(o.op)}`);
    if (strict) this.object(x, what, { required: ['op', 'a', 'b'] });
    return { op: o.op as SymOp, a: this.dim(o.a, what, depth + 1), b: this.dim(o.b, what, depth + 1) };
  }

  /** A finite number, or `"Infinity"` / `"-Infinity"` (a symbol range's bound). */
  bound(x: unknown, what: string): number {
    if (typeof x === 'number' && Number.isFinite(x)) return x;
    if (x === 'Infinity') return Infinity;
    if (x === '-Infinity') return -Infinity;
    return this.fail(`${what} is not a number or "Infinity"/"-Infinity" (got ${this.describe(x)})`);
  }
}
