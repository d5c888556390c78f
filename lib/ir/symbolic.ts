/**
 * Symbolic dimensions: a dim is an integer or a small exact expression over named symbols
 * (`s0`, `s0*2`, `s0//4`, `s0+1`). Expressions are built through the functions here, which
 * fold constants and normalize simple forms, so that equal shapes usually compare equal
 * structurally (`dimEquals`). Each symbol's range lives in the graph (`Graph.symbols`).
 */

export type SymOp = 'add' | 'sub' | 'mul' | 'floordiv' | 'mod' | 'max' | 'min';

export type SymExpr =
  | { readonly op: 'sym'; readonly name: string }
  | { readonly op: SymOp; readonly a: Dim; readonly b: Dim };

/** A tensor dimension: a known size or a symbolic expression. */
export type Dim = number | SymExpr;

/** A symbol's inclusive range; `max` may be Infinity for unbounded. */
export interface SymbolRange {
  min: number;
  max: number;
}

export function sym(name: string): SymExpr {
  return { op: 'sym', name };
}

export function isStatic(d: Dim): d is number {
  return typeof d === 'number';
}

export function isStaticShape(shape: readonly Dim[]): shape is number[] {
  return shape.every(isStatic);
}

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

function floorMod(a: number, b: number): number {
  return a - floorDiv(a, b) * b;
}

const fold: Record<SymOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  floordiv: floorDiv,
  mod: floorMod,
  max: Math.max,
  min: Math.min,
};

function make(op: SymOp, a: Dim, b: Dim): Dim {
  if (typeof a === 'number' && typeof b === 'number') {
    if ((op === 'floordiv' || op === 'mod') && b === 0) throw new RangeError(`symbolic ${op} by zero`);
    return fold[op](a, b);
  }
  switch (op) {
    case 'add':
      if (a === 0) return b;
      if (b === 0) return a;
      break;
    case 'sub':
      if (b === 0) return a;
      if (dimEquals(a, b)) return 0;
      break;
    case 'mul':
      if (a === 0 || b === 0) return 0;
      if (a === 1) return b;
      if (b === 1) return a;
      if (typeof a === 'number') return make('mul', b, a); // constant on the right: s0*2
      break;
    case 'floordiv':
      if (b === 1) return a;
      // (x*k)//k = x
      if (typeof b === 'number' && typeof a !== 'number' && a.op === 'mul' && a.b === b) return a.a;
      break;
    case 'mod':
      if (b === 1) return 0;
      if (typeof b === 'number' && typeof a !== 'number' && a.op === 'mul' && a.b === b) return 0;
      break;
    case 'max':
    case 'min':
      if (dimEquals(a, b)) return a;
      break;
  }
  return { op, a, b };
}

export const symAdd = (a: Dim, b: Dim): Dim => make('add', a, b);
export const symSub = (a: Dim, b: Dim): Dim => make('sub', a, b);
export const symMul = (a: Dim, b: Dim): Dim => make('mul', a, b);
export const symFloorDiv = (a: Dim, b: Dim): Dim => make('floordiv', a, b);
export const symMod = (a: Dim, b: Dim): Dim => make('mod', a, b);
export const symMax = (a: Dim, b: Dim): Dim => make('max', a, b);
export const symMin = (a: Dim, b: Dim): Dim => make('min', a, b);
export const symApply = (op: SymOp, a: Dim, b: Dim): Dim => make(op, a, b);

/** Product of dims (element count of a shape). */
export function symProduct(dims: readonly Dim[]): Dim {
  return dims.reduce<Dim>((acc, d) => symMul(acc, d), 1);
}

/** Structural equality (after the normalization the builders apply). */
export function dimEquals(a: Dim, b: Dim): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  if (a.op === 'sym' || b.op === 'sym') return a.op === b.op && (a as { name: string }).name === (b as { name: string }).name;
  return a.op === b.op && dimEquals(a.a, b.a) && dimEquals(a.b, b.b);
}

export function shapeEquals(a: readonly Dim[], b: readonly Dim[]): boolean {
  return a.length === b.length && a.every((d, i) => dimEquals(d, b[i]!));
}

/** Names of the symbols a dim uses. */
export function symbolsOf(d: Dim, into: Set<string> = new Set()): Set<string> {
  if (typeof d === 'number') return into;
  if (d.op === 'sym') into.add(d.name);
  else {
    symbolsOf(d.a, into);
    symbolsOf(d.b, into);
  }
  return into;
}

/** The dim's value given symbol values; throws naming a symbol without one. */
export function evaluateDim(d: Dim, values: ReadonlyMap<string, number> | Record<string, number>): number {
  if (typeof d === 'number') return d;
  if (d.op === 'sym') {
    const v = values instanceof Map ? values.get(d.name) : (values as Record<string, number>)[d.name];
    if (v === undefined) throw new RangeError(`no value for symbol ${d.name}`);
    return v;
  }
  return fold[d.op](evaluateDim(d.a, values), evaluateDim(d.b, values));
}

/** Interval bounds of a dim given symbol ranges (conservative for non-monotonic ops). */
export function dimBounds(d: Dim, ranges: ReadonlyMap<string, SymbolRange>): SymbolRange {
  if (typeof d === 'number') return { min: d, max: d };
  if (d.op === 'sym') return ranges.get(d.name) ?? { min: 0, max: Infinity };
  const a = dimBounds(d.a, ranges);
  const b = dimBounds(d.b, ranges);
  switch (d.op) {
    case 'add':
      return { min: a.min + b.min, max: a.max + b.max };
    case 'sub':
      return { min: a.min - b.max, max: a.max - b.min };
    case 'mul': {
      const c = [a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max].filter((x) => !Number.isNaN(x));
      return { min: Math.min(...c), max: Math.max(...c) };
    }
    case 'floordiv':
      return b.min > 0 ? { min: floorDiv(a.min, b.max), max: floorDiv(a.max, b.min) } : { min: -Infinity, max: Infinity };
    case 'mod':
      return b.min > 0 ? { min: 0, max: b.max - 1 } : { min: -Infinity, max: Infinity };
    case 'max':
      return { min: Math.max(a.min, b.min), max: Math.max(a.max, b.max) };
    case 'min':
      return { min: Math.min(a.min, b.min), max: Math.min(a.max, b.max) };
  }
}

const infix: Partial<Record<SymOp, [string, number]>> = {
  add: ['+', 1],
  sub: ['-', 1],
  mul: ['*', 2],
  floordiv: ['//', 2],
  mod: ['%', 2],
};

/** `s0*2`, `s0//4`, `(s0+1)*2`, `max(s0, 4)`. */
export function formatDim(d: Dim): string {
  return format(d, 0);
}

function format(d: Dim, parentPrecedence: number): string {
  if (typeof d === 'number') return String(d);
  if (d.op === 'sym') return d.name;
  const spec = infix[d.op];
  if (spec === undefined) return `${d.op}(${format(d.a, 0)}, ${format(d.b, 0)})`;
  const [symbol, precedence] = spec;
  // Right operand of a non-commutative op needs parentheses at equal precedence.
  const text = `${format(d.a, precedence)}${symbol}${format(d.b, precedence + 1)}`;
  return precedence < parentPrecedence ? `(${text})` : text;
}

export function formatShape(shape: readonly Dim[]): string {
  return `[${shape.map(formatDim).join(', ')}]`;
}
