/**
 * Symbolic dimensions: a dim is an integer or a small exact expression over named symbols
 * (`s0`, `s0*2`, `s0//4`, `s0+1`). Expressions are built through the functions here, which
 * fold constants and normalize simple forms, so that equal shapes usually compare equal
 * structurally (`dimEquals`). Each symbol's range lives in the graph (`Graph.symbols`).
 *
 * Expressions are hash-consed: the builders return one shared, frozen object per structure,
 * so a model can describe a huge expression with a few shared nodes (`Mul(s, s)` repeated).
 * Every walk here is therefore memoised per node, linear in the shared graph, never in the
 * written-out tree. What cannot be linear is the written-out form itself (formatDim, program
 * files), so the builders refuse expressions beyond {@link SYMBOLIC_LIMITS} with a
 * {@link SymbolicLimitError} (E_BAD_MODEL), which importers report against the node.
 * Objects built elsewhere (deserialized) are accepted too: they are interned on first use.
 */
import { BadModelError } from '../errors';

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

/**
 * What a size expression may be, written out (the builders refuse more):
 * - `nodes`: operators, symbols and constants in its written-out tree;
 * - `depth`: nesting (program files read at most 200 levels);
 * - `degree`: polynomial degree in its symbols (`s*s` is 2); a shape that grows like `s**65`
 *   overflows exact integers for any s > 1, so it is a broken model, not a big one.
 */
export const SYMBOLIC_LIMITS = Object.freeze({ nodes: 10_000, depth: 128, degree: 64 });

/** A size expression beyond {@link SYMBOLIC_LIMITS}; importers re-throw it naming the node. */
export class SymbolicLimitError extends BadModelError {}

/** Per shared node: its identity for interning and the measures of its written-out tree. */
interface Facts {
  readonly id: number;
  readonly nodes: number;
  readonly depth: number;
  readonly degree: number;
}

const LEAF: Omit<Facts, 'id'> = { nodes: 1, depth: 0, degree: 0 };
const SYMBOL: Omit<Facts, 'id'> = { nodes: 1, depth: 0, degree: 1 };

/** Interned expressions by structure key; entries go when their expression is collected. */
const interned = new Map<string, WeakRef<SymExpr>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (interned.get(key)?.deref() === undefined) interned.delete(key);
});
const facts = new WeakMap<SymExpr, Facts>();
/** Expressions not built here (deserialized) → their interned equivalent. */
const internedOf = new WeakMap<SymExpr, SymExpr>();
let nextId = 0;

function intern(key: string, create: () => SymExpr, measures: Omit<Facts, 'id'>): SymExpr {
  const hit = interned.get(key)?.deref();
  if (hit !== undefined) return hit;
  const e = Object.freeze(create());
  facts.set(e, { id: nextId++, ...measures });
  interned.set(key, new WeakRef(e));
  forget.register(e, key);
  return e;
}

function factsOf(d: Dim): Omit<Facts, 'id'> {
  return typeof d === 'number' ? LEAF : facts.get(d)!;
}

/** The written-out measures of `op(a, b)`; `a` and `b` are interned. */
function measure(op: SymOp, a: Dim, b: Dim): Omit<Facts, 'id'> {
  const fa = factsOf(a);
  const fb = factsOf(b);
  const degree = op === 'mul' ? fa.degree + fb.degree : op === 'floordiv' ? fa.degree : Math.max(fa.degree, fb.degree);
  return { nodes: 1 + fa.nodes + fb.nodes, depth: 1 + Math.max(fa.depth, fb.depth), degree };
}

const keyOf = (d: Dim): string => (typeof d === 'number' ? String(d) : `#${facts.get(d)!.id}`);

/** The shared `op(a, b)` node, without normalization or limits; `a` and `b` are interned. */
function node(op: SymOp, a: Dim, b: Dim, measures = measure(op, a, b)): SymExpr {
  return intern(`${op}(${keyOf(a)},${keyOf(b)})`, () => ({ op, a, b }), measures);
}

/** The interned equivalent of any expression (built here or deserialized). */
function canonical(e: SymExpr): SymExpr {
  if (facts.has(e)) return e;
  let c = internedOf.get(e);
  if (c === undefined) {
    c = e.op === 'sym' ? sym(e.name) : node(e.op, canonicalDim(e.a), canonicalDim(e.b));
    internedOf.set(e, c);
  }
  return c;
}

function canonicalDim(d: Dim): Dim {
  return typeof d === 'number' ? d : canonical(d);
}

/** The measures of a dim's written-out tree (nodes, depth, degree), computed once per shared node. */
export function dimMeasures(d: Dim): { nodes: number; depth: number; degree: number } {
  const { nodes, depth, degree } = factsOf(canonicalDim(d));
  return { nodes, depth, degree };
}

export function sym(name: string): SymExpr {
  return intern(`sym:${name}`, () => ({ op: 'sym', name }), SYMBOL);
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

/** Interns `op(a, b)` after checking the limits; the message names the op and the measure. */
function limited(op: SymOp, a: Dim, b: Dim): SymExpr {
  const m = measure(op, a, b);
  const over = (['degree', 'nodes', 'depth'] as const).find((k) => m[k] > SYMBOLIC_LIMITS[k]);
  if (over !== undefined) {
    const what = { degree: `has degree ${m.degree}`, nodes: `has ${m.nodes} nodes written out`, depth: `nests ${m.depth} levels deep` }[over];
    const symbols = [...symbolsOf(b, symbolsOf(a))];
    throw new SymbolicLimitError(
      `a symbolic size (${op} over ${symbols.join(', ')}) ${what}, more than the limit of ${SYMBOLIC_LIMITS[over]}`,
      { details: { limit: over, value: m[over], max: SYMBOLIC_LIMITS[over] } },
    );
  }
  return node(op, a, b, m);
}

function make(op: SymOp, a: Dim, b: Dim): Dim {
  if (typeof a === 'number' && typeof b === 'number') {
    if ((op === 'floordiv' || op === 'mod') && b === 0) throw new RangeError(`symbolic ${op} by zero`);
    return fold[op](a, b);
  }
  a = canonicalDim(a);
  b = canonicalDim(b);
  switch (op) {
    case 'add':
      if (a === 0) return b;
      if (b === 0) return a;
      break;
    case 'sub':
      if (b === 0) return a;
      if (a === b) return 0;
      break;
    case 'mul':
      if (a === 0 || b === 0) return 0;
      if (a === 1) return b;
      if (b === 1) return a;
      if (typeof a === 'number') return make('mul', b, a); // constant on the right: s0*2
      break;
    case 'floordiv': {
      if (b === 1) return a;
      // (x*k)//k = x
      if (typeof b === 'number' && typeof a !== 'number' && a.op === 'mul' && a.b === b) return a.a;
      const reduced = cancelFactors(a, b);
      if (reduced !== null) return make('floordiv', reduced[0], reduced[1]);
      break;
    }
    case 'mod':
      if (b === 1) return 0;
      if (typeof b === 'number' && typeof a !== 'number' && a.op === 'mul' && a.b === b) return 0;
      break;
    case 'max':
    case 'min': {
      if (a === b) return a;
      // Absorption: max(a, min(a, x)) = a and max(max(a, x), a) = max(a, x) (min alike).
      const other = op === 'max' ? 'min' : 'max';
      const holds = (e: Dim, x: Dim, kind: SymOp): boolean => typeof e !== 'number' && e.op === kind && (e.a === x || e.b === x);
      if (holds(b, a, other) || holds(a, b, op)) return a;
      if (holds(a, b, other) || holds(b, a, op)) return b;
      break;
    }
  }
  return limited(op, a, b);
}

/** `d` as a number times its other factors (a tree of products flattened). */
function productFactors(d: Dim): { coef: number; factors: SymExpr[] } {
  if (typeof d === 'number') return { coef: d, factors: [] };
  if (d.op !== 'mul') return { coef: 1, factors: [d] };
  const x = productFactors(d.a);
  const y = productFactors(d.b);
  return { coef: x.coef * y.coef, factors: [...x.factors, ...y.factors] };
}

const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));

/**
 * `a // b` with the factors both products share removed and their integer coefficients divided
 * by their gcd, or null when there is nothing to remove. Exact: (f·A)/(f·B) = A/B as real numbers
 * for any f ≠ 0, and the denominator is never 0 where the size is computed, so the floors agree
 * (the dynamo exporter's `b*s*(…)*4//(s*16)` is `b*(…)//4`).
 */
function cancelFactors(a: Dim, b: Dim): [Dim, Dim] | null {
  const n = productFactors(a);
  const d = productFactors(b);
  if (!Number.isInteger(n.coef) || !Number.isInteger(d.coef) || d.coef === 0) return null;
  const rest = [...d.factors];
  const kept: SymExpr[] = [];
  for (const f of n.factors) {
    const at = rest.indexOf(f);
    if (at >= 0) rest.splice(at, 1);
    else kept.push(f);
  }
  const g = n.coef === 0 ? 1 : gcd(Math.abs(n.coef), Math.abs(d.coef));
  if (kept.length === n.factors.length && g === 1) return null;
  const product = (factors: readonly SymExpr[], coef: number): Dim => make('mul', factors.reduce<Dim>((acc, f) => make('mul', acc, f), 1), coef);
  return [product(kept, n.coef / g), product(rest, d.coef / g)];
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

/** Structural equality (after the normalization the builders apply): identity of the interned forms. */
export function dimEquals(a: Dim, b: Dim): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  return a === b || canonical(a) === canonical(b);
}

export function shapeEquals(a: readonly Dim[], b: readonly Dim[]): boolean {
  return a.length === b.length && a.every((d, i) => dimEquals(d, b[i]!));
}

/** Per interned node: the names of the symbols it uses. */
const symbolNames = new WeakMap<SymExpr, readonly string[]>();

function namesOf(e: SymExpr): readonly string[] {
  let names = symbolNames.get(e);
  if (names === undefined) {
    if (e.op === 'sym') names = [e.name];
    else {
      const a = typeof e.a === 'number' ? [] : namesOf(e.a);
      const b = typeof e.b === 'number' ? [] : namesOf(e.b);
      names = b.every((n) => a.includes(n)) ? a : [...new Set([...a, ...b])];
    }
    symbolNames.set(e, names);
  }
  return names;
}

/** Names of the symbols a dim uses. */
export function symbolsOf(d: Dim, into: Set<string> = new Set()): Set<string> {
  if (typeof d !== 'number') for (const n of namesOf(canonical(d))) into.add(n);
  return into;
}

/**
 * Folds `d` bottom-up over its shared nodes, each node once (`leaf` for constants and symbols,
 * `combine` for operators); the memo lives for one call.
 */
function reduceDim<T>(d: Dim, leaf: (d: number | string) => T, combine: (op: SymOp, a: T, b: T) => T): T {
  const memo = new Map<SymExpr, T>();
  const walk = (x: Dim): T => {
    if (typeof x === 'number') return leaf(x);
    let r = memo.get(x);
    if (r === undefined) {
      r = x.op === 'sym' ? leaf(x.name) : combine(x.op, walk(x.a), walk(x.b));
      memo.set(x, r);
    }
    return r;
  };
  return walk(typeof d === 'number' ? d : canonical(d));
}

/** The dim's value given symbol values; throws naming a symbol without one. */
export function evaluateDim(d: Dim, values: ReadonlyMap<string, number> | Record<string, number>): number {
  return reduceDim(
    d,
    (x) => {
      if (typeof x === 'number') return x;
      const v = values instanceof Map ? values.get(x) : (values as Record<string, number>)[x];
      if (v === undefined) throw new RangeError(`no value for symbol ${x}`);
      return v;
    },
    (op, a, b) => fold[op](a, b),
  );
}

/** Interval bounds of a dim given symbol ranges (conservative for non-monotonic ops). */
export function dimBounds(d: Dim, ranges: ReadonlyMap<string, SymbolRange>): SymbolRange {
  return reduceDim<SymbolRange>(
    d,
    (x) => (typeof x === 'number' ? { min: x, max: x } : (ranges.get(x) ?? { min: 0, max: Infinity })),
    (op, a, b) => {
      switch (op) {
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
    },
  );
}

const infix: Partial<Record<SymOp, [string, number]>> = {
  add: ['+', 1],
  sub: ['-', 1],
  mul: ['*', 2],
  floordiv: ['//', 2],
  mod: ['%', 2],
};

/** An expression's text without outer parentheses, and the precedence of its top operator. */
interface Formatted {
  text: string;
  precedence: number;
}

const formatted = new WeakMap<SymExpr, Formatted>();

function formattedOf(d: Dim): Formatted {
  if (typeof d === 'number') return { text: String(d), precedence: Infinity };
  const e = canonical(d);
  let f = formatted.get(e);
  if (f === undefined) {
    f = formatNode(e);
    formatted.set(e, f);
  }
  return f;
}

function operand(d: Dim, parentPrecedence: number): string {
  const { text, precedence } = formattedOf(d);
  return precedence < parentPrecedence ? `(${text})` : text;
}

function formatNode(e: SymExpr): Formatted {
  if (e.op === 'sym') return { text: e.name, precedence: Infinity };
  const spec = infix[e.op];
  if (spec === undefined) return { text: `${e.op}(${operand(e.a, 0)}, ${operand(e.b, 0)})`, precedence: Infinity };
  const [symbol, precedence] = spec;
  // Right operand of a non-commutative op needs parentheses at equal precedence.
  return { text: `${operand(e.a, precedence)}${symbol}${operand(e.b, precedence + 1)}`, precedence };
}

/** `s0*2`, `s0//4`, `(s0+1)*2`, `max(s0, 4)`. */
export function formatDim(d: Dim): string {
  return formattedOf(d).text;
}

export function formatShape(shape: readonly Dim[]): string {
  return `[${shape.map(formatDim).join(', ')}]`;
}
