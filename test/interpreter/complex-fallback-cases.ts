/**
 * One or more reference cases for every op the CPU interpreter runs on complex values
 * (lib/interpreter/complex-fallback.ts): the ops the complex lowering sends to fallback
 * segments under complexFallback. Each case builds the op on its own inputs and computes the
 * expected output independently of the code under test:
 *
 * - complex functions from closed forms written here: √z in polar form, log z = ln|z| + i·atan2,
 *   sin(a + bi) = sin a·cosh b + i·cos a·sinh b, tan and tanh by their addition formulas,
 *   sigmoid as 1/(1 + e^−z), z^w = e^(w·log z) with a naive complex product and division;
 * - data movement as the same op on the real and on the imaginary parts, each run through the
 *   interpreter's real kernels (a permutation, gather or sum of complex values moves or adds
 *   each part on its own);
 * - reductions, products and fills by loops over the pairs here.
 *
 * Shared by test/interpreter/complex-fallback.test.ts (the enumeration and the interpreter)
 * and test/compile/complex-fallback.test.ts (compile() with complexFallback and run()).
 */
import '../../lib/ir/ops';
import { interpret } from '../../lib/interpreter';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Node, type Value } from '../../lib/ir/graph';
import { shapeSize, Tensor } from '../../lib/ir/tensor';
import { FP32, type Tolerance } from '../helpers/compare';

/** A complex number as [re, im]. */
export type P = [number, number];

const add = ([a, b]: P, [c, d]: P): P => [a + c, b + d];
const mul = ([a, b]: P, [c, d]: P): P => [a * c - b * d, a * d + b * c];
/** x / y as x·conj(y) / |y|² (not Smith's division, which the code under test uses). */
const div = (x: P, [c, d]: P): P => {
  const n = c * c + d * d;
  const [p, q] = mul(x, [c, -d]);
  return [p / n, q / n];
};

/** Closed forms of the complex functions (principal branches: arguments by atan2, in [−π, π]). */
export const REF = {
  sqrt: ([a, b]: P): P => {
    const r = Math.sqrt(Math.hypot(a, b));
    const t = Math.atan2(b, a) / 2;
    return [r * Math.cos(t), r * Math.sin(t)];
  },
  log: ([a, b]: P): P => [Math.log(Math.hypot(a, b)), Math.atan2(b, a)],
  exp: ([a, b]: P): P => [Math.exp(a) * Math.cos(b), Math.exp(a) * Math.sin(b)],
  sin: ([a, b]: P): P => [Math.sin(a) * Math.cosh(b), Math.cos(a) * Math.sinh(b)],
  cos: ([a, b]: P): P => [Math.cos(a) * Math.cosh(b), -Math.sin(a) * Math.sinh(b)],
  /** tan(a + bi) = (tan a + i·tanh b) / (1 − i·tan a·tanh b). */
  tan: ([a, b]: P): P => div([Math.tan(a), Math.tanh(b)], [1, -Math.tan(a) * Math.tanh(b)]),
  /** tanh(a + bi) = (tanh a + i·tan b) / (1 + i·tanh a·tan b). */
  tanh: ([a, b]: P): P => div([Math.tanh(a), Math.tan(b)], [1, Math.tanh(a) * Math.tan(b)]),
  sigmoid: ([a, b]: P): P => div([1, 0], add([1, 0], REF.exp([-a, -b]))),
  log1p: ([a, b]: P): P => REF.log([1 + a, b]),
  rsqrt: (z: P): P => div([1, 0], REF.sqrt(z)),
  reciprocal: (z: P): P => div([1, 0], z),
  pow: (z: P, w: P): P => REF.exp(mul(w, REF.log(z))),
  mul,
  div,
};

/** The pairs of a complex tensor. */
export function pairs(t: Tensor): P[] {
  const v = t.toArray();
  return Array.from({ length: t.size }, (_, k) => [v[2 * k]!, v[2 * k + 1]!]);
}

/** A complex tensor of `shape` from pairs. */
export function complexOf(dtype: DType, shape: readonly number[], ps: readonly P[]): Tensor {
  return Tensor.from(dtype, shape, ps.flat());
}

/** Appends a call to the graph under construction and returns its node. */
export type Build = (target: string, args: Record<string, Arg>, name?: string) => Node;

export interface ComplexCase {
  /** Unique; names the case's inputs and output in a combined graph. */
  name: string;
  /** The op under test. */
  target: string;
  inputs: Tensor[];
  /** Appends the op under test (after any casts it needs) on the inputs; returns the op's node. */
  build: (op: Build, inputs: Value[]) => Node;
  /** The op's output, computed independently from the input tensors. */
  expected: (inputs: Tensor[]) => Tensor;
  tol?: Tolerance;
}

const C = (shape: number[], values: number[]): Tensor => Tensor.from('complex64', shape, values);

/** Elementwise complex function cases: the op on `z`, compared with `f` per element. */
function unary(name: string, target: string, z: Tensor, f: (p: P) => P, tol?: Tolerance): ComplexCase {
  return {
    name,
    target,
    inputs: [z],
    build: (op, [x]) => op(target, { self: x! }, name),
    expected: ([t]) => complexOf(t!.dtype, t!.shape, pairs(t!).map(f)),
    ...(tol === undefined ? {} : { tol }),
  };
}

/** The same function on complex128 values (cast inside the graph, so the fallback op computes in complex128). */
function unaryWide(name: string, target: string, z: Tensor, f: (p: P) => P): ComplexCase {
  return {
    name,
    target,
    inputs: [z],
    build: (op, [x]) => op(target, { self: op('aten._to_copy.default', { self: x!, dtype: 'complex128' }, `${name}_wide`).output }, name),
    expected: ([t]) => complexOf('complex128', t!.shape, pairs(t!).map(f)),
    tol: { rtol: 1e-12, atol: 1e-12 },
  };
}

/** The real part (0) or imaginary part (1) of a complex tensor as float32; real tensors unchanged. */
function part(t: Tensor, p: 0 | 1): Tensor {
  if (t.dtype !== 'complex64') return t;
  return Tensor.from('float32', t.shape, pairs(t).map((z) => z[p]));
}

/** Runs one call of `target` on real tensors through the interpreter. */
function runReal(target: string, args: (v: Value[]) => Record<string, Arg>, inputs: Tensor[]): Tensor {
  const g = new Graph('part');
  const values = inputs.map((t, i) => g.addInput(`in${i}`, tensorType(t.dtype, t.shape)));
  g.setOutputs([call(g, target, args(values)).output]);
  return interpret(g, inputs)[0]!;
}

/**
 * A data-movement (or R-linear) case: the expected output is the same op run on the real parts
 * and on the imaginary parts of the complex inputs (`imagArgs` when a real constant, such as a
 * fill value, belongs to the real part only).
 */
function movement(name: string, target: string, inputs: Tensor[], args: (v: Value[]) => Record<string, Arg>, imagArgs = args): ComplexCase {
  return {
    name,
    target,
    inputs,
    build: (op, v) => op(target, args(v), name),
    expected: (ts) => {
      const re = runReal(target, args, ts.map((t) => part(t, 0)));
      const im = runReal(target, imagArgs, ts.map((t) => part(t, 1)));
      const a = re.toArray();
      const b = im.toArray();
      return Tensor.from(
        'complex64',
        re.shape,
        a.flatMap((x, k) => [x, b[k]!]),
      );
    },
  };
}

/** A case whose expected output is a literal tensor. */
function literal(name: string, target: string, inputs: Tensor[], args: (v: Value[]) => Record<string, Arg>, expected: (ts: Tensor[]) => Tensor): ComplexCase {
  return { name, target, inputs, build: (op, v) => op(target, args(v), name), expected };
}

/** A complex64 tensor of `shape` filled with `value` (+ 0i). */
const filled = (shape: number[], value: number): Tensor => complexOf('complex64', shape, Array.from({ length: shapeSize(shape) }, (): P => [value, 0]));

/** A bool tensor from the truth of each pair (nonzero, NaN included). */
const truth = (z: P): boolean => z[0] !== 0 || z[1] !== 0;

// Inputs ------------------------------------------------------------------------------------------

/** General values (no zeros, no branch cuts). */
const Z = C([2, 3], [1, 0.5, -1, 2, 0.5, 0.25, 2, -1, 1.5, 1, -0.5, 3]);
const W = C([2, 3], [0.25, -1, 2, 0.5, -1.5, -0.75, 0.5, 2, -2, 1, 1, -1]);
/** The branch cut of sqrt, log and pow (the negative real axis, both sides by the sign of zero), zero, and ordinary points. */
const CUT = C([8], [-4, 0, -4, -0, -1, 0, -1, -0, 0, 0, 3, -4, -2.5, 3, 0, 2]);
/** CUT without zero (log of 0 is −∞ + 0i, compared separately; reciprocals of 0 are not finite). */
const CUT_NONZERO = C([7], [-4, 0, -4, -0, -1, 0, -1, -0, 3, -4, -2.5, 3, 0, 2]);
/** Large imaginary parts (tanh is periodic in them, with poles at π/2 + kπ), large real parts, a point near a pole, zero. */
const TANH_EDGE = C([8], [0.5, 10000, 0.25, 1000000, -0.3, 12345.678, 30, -2, -25, 1, 0, 1.5, 0, 0, 1e-3, 3]);
/** Moderate and largish imaginary parts for sin, cos and tan (cosh 40 ≈ 1.2e17 still fits float32). */
const TRIG = C([8], [0, 0, 0.5, 1, -2, 3, 1, 40, -1.5, -40, 3, -0.5, 0, 10, 1e-3, -1e-3]);
/** sigmoid: zero, both signs of large real parts (e^−80 is kept, not lost to 1 + e^80 overflowing), poles' neighbours. */
const SIGMOID = C([8], [0, 0, 1, 2, -3, 0.5, 20, 5, -20, -5, -80, 1, 0, 3, 2, -3]);

/** Bases and exponents of z^w (tensor exponent): branch cut bases, general points. */
const BASES = C([6], [1, 2, -2, 0, -2, -0, 0.5, -1.5, 3, 0, -1, 1e-3]);
const EXPONENTS = C([6], [0.5, 0.5, 2, 0, 1.5, 0, -1, 2, 0, 1, 3, -0.5]);

// Cases ------------------------------------------------------------------------------------------
/** z^e with a Scalar exponent e, compared with `f` per element. */
function powScalar(name: string, e: number, z: Tensor, f: (p: P) => P): ComplexCase {
  return { ...unary(name, 'aten.pow.Tensor_Scalar', z, f), build: (op, [x]) => op('aten.pow.Tensor_Scalar', { self: x!, exponent: e }, name) };
}

/** base^w with a Scalar base, compared with e^(w·log base). */
function powBase(name: string, base: number, w: Tensor): ComplexCase {
  return { ...unary(name, 'aten.pow.Scalar', w, (p) => REF.pow([base, 0], p)), build: (op, [x]) => op('aten.pow.Scalar', { self: base, exponent: x! }, name) };
}


export const CASES: ComplexCase[] = [
  // Complex math: principal branches.
  unary('sqrt_cut', 'aten.sqrt.default', CUT, REF.sqrt),
  unary('sqrt_general', 'aten.sqrt.default', Z, REF.sqrt),
  unary('rsqrt_cut', 'aten.rsqrt.default', CUT_NONZERO, REF.rsqrt),
  unary('log_cut', 'aten.log.default', CUT_NONZERO, REF.log),
  literal('log_zero', 'aten.log.default', [C([2], [0, 0, -0, 0])], (v) => ({ self: v[0]! }), () => C([2], [-Infinity, 0, -Infinity, Math.PI])),
  unary('log_general', 'aten.log.default', Z, REF.log),
  unary('log1p_general', 'aten.log1p.default', C([6], [1, 0.5, -0.5, 2, 1e-3, 1e-3, -2, 0, -2, -0, 0, 0]), REF.log1p),
  unary('sin_trig', 'aten.sin.default', TRIG, REF.sin),
  unary('cos_trig', 'aten.cos.default', TRIG, REF.cos),
  unary('tan_trig', 'aten.tan.default', TRIG, REF.tan),
  unary('tanh_edge', 'aten.tanh.default', TANH_EDGE, REF.tanh),
  unary('tanh_general', 'aten.tanh.default', Z, REF.tanh),
  unary('sigmoid_edge', 'aten.sigmoid.default', SIGMOID, REF.sigmoid),
  unaryWide('sqrt_wide', 'aten.sqrt.default', CUT, REF.sqrt),
  unaryWide('log_wide', 'aten.log.default', CUT_NONZERO, REF.log),
  unaryWide('sin_wide', 'aten.sin.default', TRIG, REF.sin),
  unaryWide('tanh_wide', 'aten.tanh.default', TANH_EDGE, REF.tanh),
  unaryWide('sigmoid_wide', 'aten.sigmoid.default', SIGMOID, REF.sigmoid),
  {
    name: 'pow_wide',
    target: 'aten.pow.Tensor_Tensor',
    inputs: [BASES, EXPONENTS],
    build: (op, [z, w]) => {
      const wide = (v: Value, role: string): Value => op('aten._to_copy.default', { self: v, dtype: 'complex128' }, `pow_wide_${role}`).output;
      return op('aten.pow.Tensor_Tensor', { self: wide(z!, 'base'), exponent: wide(w!, 'exponent') }, 'pow_wide');
    },
    expected: ([z, w]) => {
      const ws = pairs(w!);
      return complexOf('complex128', z!.shape, pairs(z!).map((p, k) => REF.pow(p, ws[k]!)));
    },
    tol: { rtol: 1e-12, atol: 1e-12 },
  },

  // pow with a complex tensor exponent: e^(w·log z).
  {
    name: 'pow_tensor',
    target: 'aten.pow.Tensor_Tensor',
    inputs: [BASES, EXPONENTS],
    build: (op, [z, w]) => op('aten.pow.Tensor_Tensor', { self: z!, exponent: w! }, 'pow_tensor'),
    expected: ([z, w]) => {
      const ws = pairs(w!);
      return complexOf('complex64', z!.shape, pairs(z!).map((p, k) => REF.pow(p, ws[k]!)));
    },
  },
  // A zero base: 0^w = 0 for Re w > 0; w = 0 gives NaN + NaN·i and w = −1 gives ∞ + NaN·i, as
  // torch.pow with a tensor exponent does (std::pow is e^(w·log 0) with log 0 = −∞).
  literal(
    'pow_zero_base',
    'aten.pow.Tensor_Tensor',
    [C([4], [0, 0, 0, 0, 0, 0, 0, 0]), C([4], [2, 0, 1, -1, 0, 0, -1, 0])],
    (v) => ({ self: v[0]!, exponent: v[1]! }),
    () => C([4], [0, 0, 0, 0, NaN, NaN, Infinity, NaN]),
  ),
  // A real tensor exponent is promoted to complex.
  {
    name: 'pow_real_exponent',
    target: 'aten.pow.Tensor_Tensor',
    inputs: [Z, Tensor.from('float32', [3], [0.5, 2, -1.5])],
    build: (op, [z, e]) => op('aten.pow.Tensor_Tensor', { self: z!, exponent: e! }, 'pow_real_exponent'),
    expected: ([z, e]) => {
      const es = e!.toArray();
      return complexOf('complex64', z!.shape, pairs(z!).map((p, k) => REF.pow(p, [es[k % 3]!, 0])));
    },
  },
  // pow with a Scalar exponent: torch's special cases, then e^(e·log z).
  literal('pow_scalar_0', 'aten.pow.Tensor_Scalar', [C([3], [0, 0, NaN, 1, -2, 3])], (v) => ({ self: v[0]!, exponent: 0 }), () => filled([3], 1)),
  literal('pow_scalar_1', 'aten.pow.Tensor_Scalar', [CUT], (v) => ({ self: v[0]!, exponent: 1 }), ([t]) => t!),
  powScalar('pow_scalar_2', 2, CUT, (z) => mul(z, z)),
  powScalar('pow_scalar_3', 3, CUT, (z) => mul(mul(z, z), z)),
  powScalar('pow_scalar_minus_2', -2, CUT_NONZERO, (z) => div([1, 0], mul(z, z))),
  powScalar('pow_scalar_half', 0.5, CUT, REF.sqrt),
  powScalar('pow_scalar_minus_half', -0.5, CUT_NONZERO, REF.rsqrt),
  powScalar('pow_scalar_minus_1', -1, CUT_NONZERO, REF.reciprocal),
  powScalar('pow_scalar_2_5', 2.5, CUT_NONZERO, (z) => REF.pow(z, [2.5, 0])),
  powScalar('pow_scalar_third', 1 / 3, Z, (z) => REF.pow(z, [1 / 3, 0])),
  powScalar('pow_scalar_minus_1_5', -1.5, CUT_NONZERO, (z) => REF.pow(z, [-1.5, 0])),
  // pow with a Scalar base: 1^w = 1 always; otherwise e^(w·log base), log of a negative base on the upper side of the cut.
  literal('pow_base_1', 'aten.pow.Scalar', [C([3], [NaN, NaN, 100, -100, 0, 0])], (v) => ({ self: 1, exponent: v[0]! }), () => filled([3], 1)),
  powBase('pow_base_2_5', 2.5, W),
  powBase('pow_base_minus_2', -2, W),
  literal('pow_base_0', 'aten.pow.Scalar', [C([3], [1, -1, 0.5, 0, 2, 3])], (v) => ({ self: 0, exponent: v[0]! }), () => filled([3], 0)),
];

// Predicates and truth values.
const NAN_INF = C([6], [NaN, 0, 0, Infinity, 1, 1, 0, 0, -Infinity, NaN, 2, -0]);
const bools = (shape: readonly number[], values: boolean[]): Tensor => Tensor.from('bool', shape, values.map(Number));
CASES.push(
  literal('isnan', 'aten.isnan.default', [NAN_INF], (v) => ({ self: v[0]! }), ([t]) => bools(t!.shape, pairs(t!).map(([a, b]) => Number.isNaN(a) || Number.isNaN(b)))),
  literal('isinf', 'aten.isinf.default', [NAN_INF], (v) => ({ self: v[0]! }), ([t]) => bools(t!.shape, pairs(t!).map(([a, b]) => Math.abs(a) === Infinity || Math.abs(b) === Infinity))),
  literal('logical_not', 'aten.logical_not.default', [NAN_INF], (v) => ({ self: v[0]! }), ([t]) => bools(t!.shape, pairs(t!).map((z) => !truth(z)))),
  ...(['and', 'or', 'xor'] as const).map((kind) =>
    literal(
      `logical_${kind}`,
      `aten.logical_${kind}.default`,
      [NAN_INF, C([6], [0, 0, 1, 0, 0, 0, 0, -0, 0, 2, 0, 0])],
      (v) => ({ self: v[0]!, other: v[1]! }),
      ([x, y]) => {
        const ys = pairs(y!);
        const f = { and: (p: boolean, q: boolean) => p && q, or: (p: boolean, q: boolean) => p || q, xor: (p: boolean, q: boolean) => p !== q }[kind];
        return bools(x!.shape, pairs(x!).map((z, k) => f(truth(z), truth(ys[k]!))));
      },
    ),
  ),
);

// Filled tensors of a complex dtype.
CASES.push(
  literal('zeros', 'aten.zeros.default', [], () => ({ size: [2, 3], dtype: 'complex64' }), () => filled([2, 3], 0)),
  literal('ones', 'aten.ones.default', [], () => ({ size: [2, 2], dtype: 'complex64' }), () => filled([2, 2], 1)),
  literal('full', 'aten.full.default', [], () => ({ size: [3], fill_value: 2.5, dtype: 'complex64' }), () => filled([3], 2.5)),
  literal('scalar_tensor', 'aten.scalar_tensor.default', [], () => ({ s: -3, dtype: 'complex64' }), () => filled([], -3)),
  literal('zeros_like', 'aten.zeros_like.default', [Z], (v) => ({ self: v[0]! }), () => filled([2, 3], 0)),
  literal('ones_like', 'aten.ones_like.default', [Z], (v) => ({ self: v[0]! }), () => filled([2, 3], 1)),
  literal('full_like', 'aten.full_like.default', [Z], (v) => ({ self: v[0]!, fill_value: -1.5 }), () => filled([2, 3], -1.5)),
  literal('new_zeros', 'aten.new_zeros.default', [Z], (v) => ({ self: v[0]!, size: [4] }), () => filled([4], 0)),
  literal('new_ones', 'aten.new_ones.default', [Z], (v) => ({ self: v[0]!, size: [1, 2] }), () => filled([1, 2], 1)),
  literal('new_full', 'aten.new_full.default', [Z], (v) => ({ self: v[0]!, size: [2], fill_value: 4 }), () => filled([2], 4)),
  literal('zero', 'aten.zero.default', [Z], (v) => ({ self: v[0]! }), () => filled([2, 3], 0)),
  literal('fill_scalar', 'aten.fill.Scalar', [Z], (v) => ({ self: v[0]!, value: 2.5 }), () => filled([2, 3], 2.5)),
  literal('fill_tensor', 'aten.fill.Tensor', [Z, C([], [1.5, -2])], (v) => ({ self: v[0]!, value: v[1]! }), () =>
    complexOf('complex64', [2, 3], Array.from({ length: 6 }, (): P => [1.5, -2])),
  ),
);

// Data movement.
const IDX = Tensor.from('int64', [2, 3], [1, 0, 1, 0, 0, 1]);
CASES.push(
  movement('expand_as', 'aten.expand_as.default', [C([1, 3], [1, 2, 3, 4, 5, 6]), Tensor.from('float32', [2, 3], [0, 0, 0, 0, 0, 0])], (v) => ({ self: v[0]!, other: v[1]! })),
  movement('swapaxes', 'aten.swapaxes.default', [Z], (v) => ({ self: v[0]!, axis0: 0, axis1: 1 })),
  movement('swapdims', 'aten.swapdims.default', [Z], (v) => ({ self: v[0]!, dim0: -1, dim1: 0 })),
  movement('repeat_interleave', 'aten.repeat_interleave.self_int', [Z], (v) => ({ self: v[0]!, repeats: 2, dim: 1 })),
  movement('gather', 'aten.gather.default', [Z, IDX], (v) => ({ self: v[0]!, dim: 0, index: v[1]! })),
  movement('scatter_src', 'aten.scatter.src', [Z, IDX, W], (v) => ({ self: v[0]!, dim: 0, index: v[1]!, src: v[2]! })),
  movement(
    'scatter_value',
    'aten.scatter.value',
    [Z, Tensor.from('int64', [1, 2], [1, 0])],
    (v) => ({ self: v[0]!, dim: 1, index: v[1]!, value: 2.5 }),
    (v) => ({ self: v[0]!, dim: 1, index: v[1]!, value: 0 }),
  ),
  movement('scatter_add', 'aten.scatter_add.default', [Z, IDX, W], (v) => ({ self: v[0]!, dim: 0, index: v[1]!, src: v[2]! })),
  movement('scatter_reduce_add', 'aten.scatter.reduce', [Z, IDX, W], (v) => ({ self: v[0]!, dim: 0, index: v[1]!, src: v[2]!, reduce: 'add' })),
  movement('slice_scatter', 'aten.slice_scatter.default', [Z, C([2, 2], [9, 8, 7, 6, 5, 4, 3, 2])], (v) => ({ self: v[0]!, src: v[1]!, dim: 1, start: 1, end: 3, step: 1 })),
  movement('select_scatter', 'aten.select_scatter.default', [Z, C([3], [9, 8, 7, 6, 5, 4])], (v) => ({ self: v[0]!, src: v[1]!, dim: 0, index: 1 })),
  movement('index_put', 'aten.index_put.default', [Z, Tensor.from('int64', [2], [1, 0]), C([3], [9, 8, 7, 6, 5, 4])], (v) => ({ self: v[0]!, indices: [v[1]!], values: v[2]!, accumulate: false })),
  movement('index_put_accumulate', 'aten.index_put.default', [Z, Tensor.from('int64', [2], [1, 1]), C([3], [9, 8, 7, 6, 5, 4])], (v) => ({
    self: v[0]!,
    indices: [v[1]!],
    values: v[2]!,
    accumulate: true,
  })),
  movement(
    'constant_pad_value',
    'aten.constant_pad_nd.default',
    [Z],
    (v) => ({ self: v[0]!, pad: [1, 2, 0, 1], value: 2 }),
    (v) => ({ self: v[0]!, pad: [1, 2, 0, 1], value: 0 }),
  ),
  movement(
    'pad_constant',
    'aten.pad.default',
    [Z],
    (v) => ({ self: v[0]!, pad: [2, 1], mode: 'constant', value: -1 }),
    (v) => ({ self: v[0]!, pad: [2, 1], mode: 'constant', value: 0 }),
  ),
  movement('pad_reflect', 'aten.pad.default', [Z], (v) => ({ self: v[0]!, pad: [2, 1], mode: 'reflect', value: null })),
  movement('embedding', 'aten.embedding.default', [Z, Tensor.from('int64', [4], [1, 0, 0, 1])], (v) => ({ weight: v[0]!, indices: v[1]! })),
  movement('roll_flat', 'aten.roll.default', [Z], (v) => ({ self: v[0]!, shifts: [2] })),
  movement('diff', 'aten.diff.default', [Z, W], (v) => ({ self: v[0]!, n: 2, dim: 1, prepend: v[1]! })),
  movement('dropout_eval', 'aten.dropout.default', [Z], (v) => ({ input: v[0]!, p: 0.5, train: false })),
);

// Casts (to.dtype_layout has no rule): complex → complex widens, complex → real keeps the real part.
CASES.push(
  literal('to_dtype_layout_wide', 'aten.to.dtype_layout', [Z], (v) => ({ self: v[0]!, dtype: 'complex128' }), ([t]) => complexOf('complex128', t!.shape, pairs(t!))),
  literal('to_dtype_layout_real', 'aten.to.dtype_layout', [Z], (v) => ({ self: v[0]!, dtype: 'float32' }), ([t]) => Tensor.from('float32', t!.shape, pairs(t!).map((z) => z[0]))),
);

// Reductions with a dtype argument (their rules refuse a dtype), and complex products.
const sumRows = (t: Tensor): P[] => {
  const ps = pairs(t);
  return [0, 1].map((i) => ps.slice(3 * i, 3 * i + 3).reduce(add, [0, 0]));
};
const sumCols = (t: Tensor): P[] => {
  const ps = pairs(t);
  return [0, 1, 2].map((j) => add(ps[j]!, ps[3 + j]!));
};
const total = (t: Tensor): P => pairs(t).reduce(add, [0, 0]);
const scale = ([a, b]: P, s: number): P => [a * s, b * s];
const WIDE = { rtol: 1e-12, atol: 1e-12 };
CASES.push(
  { ...literal('sum_dim_wide', 'aten.sum.dim_IntList', [Z], (v) => ({ self: v[0]!, dim: [1], keepdim: false, dtype: 'complex128' }), ([t]) => complexOf('complex128', [2], sumRows(t!))), tol: WIDE },
  { ...literal('sum_wide', 'aten.sum.default', [Z], (v) => ({ self: v[0]!, dtype: 'complex128' }), ([t]) => complexOf('complex128', [], [total(t!)])), tol: WIDE },
  {
    ...literal('mean_dim_wide', 'aten.mean.dim', [Z], (v) => ({ self: v[0]!, dim: [0], keepdim: true, dtype: 'complex128' }), ([t]) => complexOf('complex128', [1, 3], sumCols(t!).map((p) => scale(p, 1 / 2)))),
    tol: WIDE,
  },
  { ...literal('mean_wide', 'aten.mean.default', [Z], (v) => ({ self: v[0]!, dtype: 'complex128' }), ([t]) => complexOf('complex128', [], [scale(total(t!), 1 / 6)])), tol: WIDE },
  literal('sum_real_into_complex', 'aten.sum.dim_IntList', [Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6])], (v) => ({ self: v[0]!, dim: [1], keepdim: false, dtype: 'complex64' }), () =>
    complexOf('complex64', [2], [
      [6, 0],
      [15, 0],
    ]),
  ),
  literal('prod_dim', 'aten.prod.dim_int', [Z], (v) => ({ self: v[0]!, dim: 1, keepdim: false }), ([t]) => {
    const ps = pairs(t!);
    return complexOf('complex64', [2], [0, 1].map((i) => ps.slice(3 * i, 3 * i + 3).reduce(mul, [1, 0])));
  }),
  literal('prod_all', 'aten.prod.default', [Z], (v) => ({ self: v[0]! }), ([t]) => complexOf('complex64', [], [pairs(t!).reduce(mul, [1, 0])])),
  {
    ...literal('cumsum_dtype', 'aten.cumsum.default', [Z], (v) => ({ self: v[0]!, dim: 0, dtype: 'complex128' }), ([t]) => {
      const ps = pairs(t!);
      return complexOf('complex128', [2, 3], [...ps.slice(0, 3), ...ps.slice(3).map((p, j) => add(p, ps[j]!))]);
    }),
    tol: WIDE,
  },
  literal('div_scalar_mode', 'aten.div.Scalar_mode', [Z], (v) => ({ self: v[0]!, other: 2.5, rounding_mode: null }), ([t]) => complexOf('complex64', t!.shape, pairs(t!).map((p) => scale(p, 1 / 2.5)))),
);

// Linear algebra: complex products summed per output element.
/** out[i][j] = Σ_k a[i][k]·b[k][j] for row-major complex matrices. */
function matmul(a: P[], b: P[], m: number, k: number, n: number): P[] {
  const out: P[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s: P = [0, 0];
      for (let t = 0; t < k; t++) s = add(s, mul(a[i * k + t]!, b[t * n + j]!));
      out.push(s);
    }
  }
  return out;
}
const M34 = C([3, 4], [1, 0, 0, 1, -1, 0.5, 2, 2, 0.5, -1, 1, 1, -2, 0, 0, -1, 1.5, 0.5, -0.5, 0.25, 3, -1, 0, 2]);
CASES.push(
  literal('linear', 'aten.linear.default', [Z, C([4, 3], M34.toArray()), C([4], [1, 1, -1, 0, 0, 2, 0.5, -0.5])], (v) => ({ input: v[0]!, weight: v[1]!, bias: v[2]! }), ([x, w, b]) => {
    // linear: x·wᵀ + b, with wᵀ[k][j] = w[j][k].
    const ws = pairs(w!);
    const wt = Array.from({ length: 12 }, (_, i): P => ws[(i % 4) * 3 + Math.floor(i / 4)]!);
    const bs = pairs(b!);
    return complexOf('complex64', [2, 4], matmul(pairs(x!), wt, 2, 3, 4).map((p, i) => add(p, bs[i % 4]!)));
  }),
  literal('addmm', 'aten.addmm.default', [C([2, 4], [1, 0, 0, 1, 1, 1, -1, 0, 2, 0, 0, -2, 1, -1, 0.5, 0.5]), Z, M34], (v) => ({ self: v[0]!, mat1: v[1]!, mat2: v[2]!, beta: 0.5, alpha: 2 }), ([c, a, b]) =>
    complexOf('complex64', [2, 4], matmul(pairs(a!), pairs(b!), 2, 3, 4).map((p, i) => add(scale(p, 2), scale(pairs(c!)[i]!, 0.5)))),
  ),
);

/** The targets the cases cover. */
export const CASE_TARGETS = new Set(CASES.map((c) => c.target));

/** Default tolerance of a case: float32's (complex64 outputs). */
export const toleranceOf = (c: ComplexCase): Tolerance => c.tol ?? FP32;
