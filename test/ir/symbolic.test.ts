/**
 * Symbolic dims: hash-consed builders (equal structures are one object), walks over shared
 * nodes, and the limits that keep written-out expressions bounded. Values are hand-computed.
 */
import {
  dimBounds,
  dimEquals,
  dimMeasures,
  evaluateDim,
  formatDim,
  sym,
  symAdd,
  symbolsOf,
  symFloorDiv,
  symMax,
  symMin,
  symMul,
  symSub,
  SymbolicLimitError,
  SYMBOLIC_LIMITS,
  type Dim,
  type SymExpr,
} from '../../lib/ir/symbolic';
import { thrown } from '../helpers/errors';
import { BadModelError } from '../../lib/errors';

/** e, e+e, (e+e)+(e+e)...: `k` doublings share k+1 nodes but write out 2^(k+1)-1. */
function doubled(k: number): Dim {
  let e: Dim = sym('n');
  for (let i = 0; i < k; i++) e = symAdd(e, e);
  return e;
}

describe('interning', () => {
  test('equal structures built twice are the same object', () => {
    const a = symAdd(symMul(sym('b'), 2), 1);
    const b = symAdd(symMul(sym('b'), 2), 1);
    expect(a).toBe(b);
    expect(sym('b')).toBe(sym('b'));
    expect(symAdd(sym('b'), 1)).not.toBe(symAdd(sym('c'), 1));
  });

  test('plain (deserialized) objects compare equal to built ones and are normalized like them', () => {
    const plain: SymExpr = { op: 'add', a: { op: 'mul', a: { op: 'sym', name: 'b' }, b: 2 }, b: 1 };
    const built = symAdd(symMul(sym('b'), 2), 1);
    expect(dimEquals(plain, built)).toBe(true);
    expect(dimEquals(plain, symAdd(symMul(sym('b'), 2), 2))).toBe(false);
    expect(symSub(plain, built)).toBe(0);
    expect(symMax(built, plain)).toBe(built);
    expect(formatDim(plain)).toBe('b*2+1');
  });

  test('interned expressions are frozen (sharing makes mutation unsafe)', () => {
    expect(Object.isFrozen(symAdd(sym('q'), 3))).toBe(true);
  });
});

describe('walks over shared nodes', () => {
  const e = doubled(12); // n * 4096, written out with 8191 nodes

  test('measures of the written-out tree', () => {
    expect(dimMeasures(e)).toEqual({ nodes: 2 ** 13 - 1, depth: 12, degree: 1 });
    expect(dimMeasures(symMul(symMul(sym('a'), sym('b')), sym('a')))).toEqual({ nodes: 5, depth: 2, degree: 3 });
    expect(dimMeasures(7)).toEqual({ nodes: 1, depth: 0, degree: 0 });
  });

  test('evaluate, bounds, symbols and text agree with the hand-computed values', () => {
    expect(evaluateDim(e, { n: 3 })).toBe(3 * 4096);
    expect(dimBounds(e, new Map([['n', { min: 1, max: 2 }]]))).toEqual({ min: 4096, max: 8192 });
    expect([...symbolsOf(symAdd(e, symMul(sym('m'), 2)))].sort()).toEqual(['m', 'n']);
    // Level k writes `x+(x)` (level 1 `n+n`): 4096 n's, 4095 '+', and P(k) = 2 P(k-1) + 1,
    // P(1) = 0, so P(12) = 2^11 - 1 = 2047 pairs of parentheses.
    const text = formatDim(e);
    expect(text.match(/n/g)).toHaveLength(4096);
    expect(text.match(/\+/g)).toHaveLength(4095);
    expect(text.match(/\(/g)).toHaveLength(2047);
    expect(formatDim(doubled(2))).toBe('n+n+(n+n)');
  });

  test('an unknown symbol still names itself', () => {
    expect(() => evaluateDim(symAdd(sym('zz'), 1), new Map())).toThrow('no value for symbol zz');
  });
});

describe('limits', () => {
  test('degree: s**65 is refused, s**64 is not', () => {
    let p: Dim = 1;
    for (let i = 0; i < SYMBOLIC_LIMITS.degree; i++) p = symMul(p, sym('s'));
    expect(dimMeasures(p).degree).toBe(64);
    const error = thrown(() => symMul(p, sym('s')), SymbolicLimitError, 'E_BAD_MODEL');
    expect(error).toBeInstanceOf(BadModelError);
    expect(error.message).toBe('a symbolic size (mul over s) has degree 65, more than the limit of 64');
    expect(error.details).toEqual({ limit: 'degree', value: 65, max: 64 });
  });

  test('written-out size: doubling past 10,000 nodes is refused', () => {
    const big = doubled(12);
    const error = thrown(() => symAdd(big, big), SymbolicLimitError, 'E_BAD_MODEL');
    expect(error.message).toContain('has 16383 nodes written out, more than the limit of 10000');
  });

  test('depth: a chain of 129 additions is refused', () => {
    let d: Dim = sym('s');
    for (let i = 0; i < SYMBOLIC_LIMITS.depth; i++) d = symAdd(d, sym(`t${i}`));
    expect(dimMeasures(d).depth).toBe(128);
    const error = thrown(() => symAdd(d, 1), SymbolicLimitError, 'E_BAD_MODEL');
    expect(error.message).toContain('nests 129 levels deep, more than the limit of 128');
  });

  test('folding to a constant is never limited', () => {
    expect(symSub(doubled(12), doubled(12))).toBe(0);
  });
});

describe('simplification', () => {
  const b = sym('b');
  const s = sym('s');
  const x = sym('x');

  test('floor division cancels the factors both products share and the gcd of their coefficients, exactly', () => {
    // b*s*x*4 // (s*16) = b*x // 4, and the dynamo exporter's reshape dim collapses to a number.
    const cancelled = symFloorDiv(symMul(symMul(symMul(b, s), x), 4), symMul(s, 16));
    expect(formatDim(cancelled)).toBe('b*x//4');
    expect(symFloorDiv(symMul(symMul(b, s), 64), symMul(b, s))).toBe(64);
    expect(symFloorDiv(symMul(s, 6), 4)).toBe(symFloorDiv(symMul(s, 3), 2));
    // Nothing shared: kept as written.
    expect(formatDim(symFloorDiv(symMul(b, 3), symMul(s, 2)))).toBe('b*3//(s*2)');
    // The same values as the expression written out, wherever the denominator is not 0.
    for (const [bv, sv, xv] of [[1, 1, 1], [3, 5, 7], [2, 9, 13], [4, 64, 5]]) {
      const env = new Map([['b', bv!], ['s', sv!], ['x', xv!]]);
      expect(evaluateDim(cancelled, env)).toBe(Math.floor((bv! * sv! * xv! * 4) / (sv! * 16)));
    }
  });

  test('max and min absorb: max(a, min(a, x)) = a, max(max(a, x), a) = max(a, x), and the same for min', () => {
    expect(symMax(s, symMin(s, 128))).toBe(s);
    expect(symMax(symMin(s, 128), s)).toBe(s);
    expect(symMax(symMax(s, b), s)).toBe(symMax(s, b));
    expect(symMax(s, symMax(b, s))).toBe(symMax(b, s));
    expect(symMin(s, symMax(s, 128))).toBe(s);
    expect(symMin(symMin(s, b), b)).toBe(symMin(s, b));
    // The exporter's nesting: max(max(s, min(s, 128)), s) = s.
    expect(symMax(symMax(s, symMin(s, 128)), s)).toBe(s);
    // Not absorbed: different operands.
    expect(formatDim(symMax(s, symMin(b, 128)))).toBe('max(s, min(b, 128))');
  });
});

