/**
 * CPU kernels for complex64/complex128 tensors: views to and from a trailing dimension of 2,
 * broadcasting arithmetic, and the parts, magnitude and phase of complex numbers.
 *
 * Data is interleaved (real, imaginary). Arithmetic reads both operands as float64 pairs and
 * rounds once into the result type, like the real kernels.
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, isComplex, isFloating, promoteTypes, type DType } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { broadcastPair, fromNumbers, readNumbers } from './access';

/** The two complex dtypes. */
export type ComplexDType = 'complex64' | 'complex128';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** The complex type a binary op on `a` and `b` gives: their promotion, lifted to complex. */
function complexResultType(a: DType, b: DType): ComplexDType {
  const p = promoteTypes(a, b);
  if (isComplex(p)) return p as ComplexDType;
  return p === 'float64' ? 'complex128' : 'complex64';
}

function checkComplexDType(op: string, dtype: DType): ComplexDType {
  if (!isComplex(dtype)) throw new InvalidArgumentError(`${op}: result dtype must be complex64 or complex128, got ${dtype}`);
  return dtype as ComplexDType;
}

function requireComplex(op: string, t: Tensor): void {
  if (!isComplex(t.dtype)) throw new InvalidArgumentError(`${op}: expected a complex tensor, got ${t.dtype}${fmt(t.shape)}`);
}

/**
 * `x` as a complex tensor of `dtype`: a real tensor or number gets a zero imaginary part, a
 * complex tensor of the other width is rounded. Returns `x` itself when it already is one.
 */
export function toComplex(x: Tensor | number, dtype: ComplexDType): Tensor {
  checkComplexDType('toComplex', dtype);
  if (typeof x === 'number') return fromNumbers(dtype, [], [x, 0]);
  if (x.dtype === dtype) return x;
  const values = readNumbers(x);
  if (isComplex(x.dtype)) return fromNumbers(dtype, x.shape, values);
  const pairs = new Float64Array(values.length * 2);
  for (let i = 0; i < values.length; i++) pairs[2 * i] = values[i]!;
  return fromNumbers(dtype, x.shape, pairs);
}

/** A complex tensor of shape [...] as a real one of shape [..., 2], sharing its data (no copy). */
export function viewAsReal(t: Tensor): Tensor {
  requireComplex('viewAsReal', t);
  return new Tensor(dtypeInfo(t.dtype).component, [...t.shape, 2], t.data);
}

/** A float32/float64 tensor of shape [..., 2] as a complex one of shape [...], sharing its data. */
export function viewAsComplex(t: Tensor): Tensor {
  if (t.dtype !== 'float32' && t.dtype !== 'float64') {
    throw new InvalidArgumentError(`viewAsComplex: expected a float32 or float64 tensor, got ${t.dtype}${fmt(t.shape)}`);
  }
  if (t.rank === 0 || t.shape[t.rank - 1] !== 2) {
    throw new InvalidArgumentError(`viewAsComplex: the last dimension must be 2, got shape ${fmt(t.shape)}`);
  }
  return new Tensor(t.dtype === 'float32' ? 'complex64' : 'complex128', t.shape.slice(0, -1), t.data);
}

type PairOp = (ar: number, ai: number, br: number, bi: number, out: Float64Array, k: number) => void;

/** Applies `f` to each broadcast pair of complex elements and rounds into `dtype`. */
function mapComplexPairs(op: string, a: Tensor, b: Tensor, dtype: DType | undefined, f: PairOp): Tensor {
  const outDtype = dtype === undefined ? complexResultType(a.dtype, b.dtype) : checkComplexDType(op, dtype);
  const { shape, ia: ix, ib: iy } = broadcastPair(op, a.shape, b.shape);
  const x = readNumbers(toComplex(a, outDtype));
  const y = readNumbers(toComplex(b, outDtype));
  const n = shapeSize(shape);
  const out = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    const i = 2 * ix[k]!;
    const j = 2 * iy[k]!;
    f(x[i]!, x[i + 1]!, y[j]!, y[j + 1]!, out, 2 * k);
  }
  return fromNumbers(outDtype, shape, out);
}

/** a + alpha·b with broadcasting; a real operand is promoted to complex. */
export function complexAdd(a: Tensor, b: Tensor, alpha = 1, dtype?: DType): Tensor {
  return mapComplexPairs('complexAdd', a, b, dtype, (ar, ai, br, bi, out, k) => {
    out[k] = ar + alpha * br;
    out[k + 1] = ai + alpha * bi;
  });
}

/** a − alpha·b with broadcasting; a real operand is promoted to complex. */
export function complexSub(a: Tensor, b: Tensor, alpha = 1, dtype?: DType): Tensor {
  return mapComplexPairs('complexSub', a, b, dtype, (ar, ai, br, bi, out, k) => {
    out[k] = ar - alpha * br;
    out[k + 1] = ai - alpha * bi;
  });
}

/** a · b with broadcasting; a real operand is promoted to complex. */
export function complexMul(a: Tensor, b: Tensor, dtype?: DType): Tensor {
  return mapComplexPairs('complexMul', a, b, dtype, (ar, ai, br, bi, out, k) => {
    out[k] = ar * br - ai * bi;
    out[k + 1] = ar * bi + ai * br;
  });
}

/** (ar + i·ai) / (br + i·bi) into out[k], out[k + 1]: Smith's scaled division, as c10::complex. */
function smithDivide(ar: number, ai: number, br: number, bi: number, out: Float64Array, k: number): void {
  const absR = Math.abs(br);
  const absI = Math.abs(bi);
  if (absR >= absI) {
    if (absR === 0 && absI === 0) {
      // Division by complex zero gives infinities or NaN per part, as c10::complex does.
      out[k] = ar / absR;
      out[k + 1] = ai / absI;
      return;
    }
    const rat = bi / br;
    const scl = 1 / (br + bi * rat);
    out[k] = (ar + ai * rat) * scl;
    out[k + 1] = (ai - ar * rat) * scl;
  } else {
    const rat = br / bi;
    const scl = 1 / (bi + br * rat);
    out[k] = (ar * rat + ai) * scl;
    out[k + 1] = (ai * rat - ar) * scl;
  }
}

/** a / b with broadcasting (Smith's scaled division, as c10::complex); real operands promoted. */
export function complexDiv(a: Tensor, b: Tensor, dtype?: DType): Tensor {
  return mapComplexPairs('complexDiv', a, b, dtype, smithDivide);
}

/** Maps each complex element to one real number; the result has the complex type's part type. */
function mapComplexToReal(op: string, t: Tensor, f: (re: number, im: number) => number): Tensor {
  requireComplex(op, t);
  const v = readNumbers(t);
  const out = new Float64Array(t.size);
  for (let k = 0; k < out.length; k++) out[k] = f(v[2 * k]!, v[2 * k + 1]!);
  return fromNumbers(dtypeInfo(t.dtype).component, t.shape, out);
}

/** Complex conjugate; a real tensor is returned as a new tensor sharing its data (PyTorch: a no-op). */
export function conj(t: Tensor): Tensor {
  if (!isComplex(t.dtype)) return new Tensor(t.dtype, t.shape, t.data);
  const v = readNumbers(t);
  const out = Float64Array.from(v);
  for (let k = 1; k < out.length; k += 2) out[k] = -out[k]!;
  return fromNumbers(t.dtype, t.shape, out);
}

/** The real parts (a copy); a real tensor is returned as a new tensor sharing its data, as PyTorch. */
export function real(t: Tensor): Tensor {
  if (!isComplex(t.dtype)) return new Tensor(t.dtype, t.shape, t.data);
  return mapComplexToReal('real', t, (re) => re);
}

/** The imaginary parts (a copy); PyTorch has no imag of a real tensor, so that is an error. */
export function imag(t: Tensor): Tensor {
  if (!isComplex(t.dtype)) throw new InvalidArgumentError(`imag: expected a complex tensor, got ${t.dtype}${fmt(t.shape)}`);
  return mapComplexToReal('imag', t, (_re, im) => im);
}

/** The magnitude |z| (overflow-safe hypot), as a float32/float64 tensor. */
export function complexAbs(t: Tensor): Tensor {
  return mapComplexToReal('complexAbs', t, (re, im) => Math.hypot(re, im));
}

/**
 * The phase atan2(imag, real). A real input gives 0 or π (NaN stays NaN) in its float type,
 * integers giving float32, as torch.angle.
 */
export function angle(t: Tensor): Tensor {
  if (isComplex(t.dtype)) return mapComplexToReal('angle', t, (re, im) => Math.atan2(im, re));
  const v = readNumbers(t);
  const out = new Float64Array(v.length);
  for (let k = 0; k < v.length; k++) out[k] = Number.isNaN(v[k]) ? NaN : v[k]! < 0 ? Math.PI : 0;
  return fromNumbers(isFloating(t.dtype) ? t.dtype : 'float32', t.shape, out);
}

/** abs·(cos angle + i sin angle) with broadcasting; float32 parts give complex64, float64 complex128. */
export function polar(abs: Tensor, angleT: Tensor): Tensor {
  if (abs.dtype !== angleT.dtype || (abs.dtype !== 'float32' && abs.dtype !== 'float64')) {
    throw new InvalidArgumentError(
      `polar: abs and angle must both be float32 or both float64, got ${abs.dtype}${fmt(abs.shape)} and ${angleT.dtype}${fmt(angleT.shape)}`,
    );
  }
  const { shape, ia: ir, ib: it } = broadcastPair('polar', abs.shape, angleT.shape);
  const r = readNumbers(abs);
  const th = readNumbers(angleT);
  const n = shapeSize(shape);
  const out = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    const m = r[ir[k]!]!;
    const a = th[it[k]!]!;
    out[2 * k] = m * Math.cos(a);
    out[2 * k + 1] = m * Math.sin(a);
  }
  return fromNumbers(abs.dtype === 'float32' ? 'complex64' : 'complex128', shape, out);
}

// ---------------------------------------------------------------------------------------
// Elementary functions of complex tensors.
//
// PyTorch's CPU kernels compute these with std::sqrt, std::log, std::exp, std::sin,
// std::cos, std::tan, std::tanh and std::pow of std::complex, which glibc implements with
// C99's principal branches and special values (Annex G): the branch cut of sqrt, log and pow
// is the negative real axis, with the sign of a zero imaginary part choosing the side
// (log(−1 + 0i) = iπ, log(−1 − 0i) = −iπ). Here each element is computed in float64 and
// rounded once into the tensor's type, so complex64 results are at least as accurate as
// PyTorch's float computation and complex128 keeps full precision.

/** A complex number as its real and imaginary parts. */
type Pair = [number, number];

/** Whether the sign bit of `x` is set (−0 included; NaN counts as positive). */
const negative = (x: number): boolean => x < 0 || Object.is(x, -0);

/** |m| with the sign of `s`, as C's copysign. */
const copySign = (m: number, s: number): number => (negative(s) ? -Math.abs(m) : Math.abs(m));

const isInfinite = (x: number): boolean => x === Infinity || x === -Infinity;

/** e^709 is the largest power of e below float64's maximum. */
const EXP_LIMIT = 709;
const E_LIMIT = Math.exp(EXP_LIMIT);

/** e^x · m without overflowing early when e^x alone would (|m| ≤ 1 keeps the product finite longer). */
function expTimes(x: number, m: number): number {
  if (x <= EXP_LIMIT) return Math.exp(x) * m;
  return E_LIMIT * m * Math.exp(x - EXP_LIMIT);
}

/** √z, principal branch (Re ≥ 0), overflow- and underflow-safe; C99 special values. */
export function sqrtPair(a: number, b: number): Pair {
  if (a === 0 && b === 0) return [0, b];
  if (isInfinite(b)) return [Infinity, b];
  if (Number.isNaN(a)) return [NaN, NaN];
  if (a === Infinity) return [a, Number.isNaN(b) ? b : copySign(0, b)];
  if (a === -Infinity) return [Number.isNaN(b) ? NaN : 0, copySign(Infinity, b)];
  if (Number.isNaN(b)) return [NaN, NaN];
  // (|a| + |z|)/2 overflows near float64's maximum and loses bits among subnormals: scale by
  // an even power of two, whose square root rescales the result exactly.
  let scale = 1;
  if (Math.abs(a) > 1e300 || Math.abs(b) > 1e300) {
    a *= 0.25;
    b *= 0.25;
    scale = 2;
  } else if (Math.abs(a) < 1e-300 && Math.abs(b) < 1e-300) {
    a *= 2 ** 200;
    b *= 2 ** 200;
    scale = 2 ** -100;
  }
  const t = Math.sqrt((Math.abs(a) + Math.hypot(a, b)) * 0.5);
  // Re √z = t and Im √z = b/(2t) for a ≥ 0; for a < 0 the parts swap roles and the imaginary
  // part takes b's sign (so −4 + 0i gives 2i and −4 − 0i gives −2i).
  return a >= 0 ? [scale * t, (scale * b) / (2 * t)] : [(scale * Math.abs(b)) / (2 * t), scale * copySign(t, b)];
}

/** log z = ln|z| + i·arg z with arg z ∈ [−π, π] (atan2, so signed zeros pick the side of the cut). */
export function logPair(a: number, b: number): Pair {
  const r = Math.hypot(a, b);
  // Near the unit circle ln|z| is tiny and log(hypot) would keep only its absolute accuracy:
  // ½·log1p(x² − 1 + y²) with x² − 1 = (x − 1)(x + 1) keeps the relative one.
  const ax = Math.abs(a);
  const re = r > 0.5 && r < 2 ? 0.5 * Math.log1p((ax - 1) * (ax + 1) + b * b) : Math.log(r);
  return [re, Math.atan2(b, a)];
}

/** log(1 + z), accurate for small |z|: c10's algorithm (what torch.log1p computes for complex). */
export function log1pPair(a: number, b: number): Pair {
  const theta = Math.atan2(b, a + 1);
  if (Math.hypot(a, b) < 0.5) {
    // |1 + z|² − 1 = a(2 + a) + b², without the cancellation of forming 1 + z.
    const r = a * (2 + a) + b * b;
    if (r === 0) return [a, theta];
    return [0.5 * Math.log1p(r), theta];
  }
  return [Math.log(Math.hypot(a + 1, b)), theta];
}

/** e^z = e^a·(cos b + i sin b); C99 special values; finite results do not overflow early. */
export function expPair(a: number, b: number): Pair {
  if (b === 0) return [Math.exp(a), b];
  if (!Number.isFinite(b)) {
    if (a === -Infinity) return [0, 0];
    if (a === Infinity) return [Infinity, NaN];
    return [NaN, NaN];
  }
  if (Number.isNaN(a)) return [NaN, NaN];
  if (a === -Infinity) return [0 * Math.cos(b), 0 * Math.sin(b)];
  if (a === Infinity) return [Infinity * Math.cos(b), Infinity * Math.sin(b)];
  return [expTimes(a, Math.cos(b)), expTimes(a, Math.sin(b))];
}

/** sinh z = sinh a·cos b + i cosh a·sin b; C99 special values. */
function sinhPair(a: number, b: number): Pair {
  if (Number.isNaN(a)) return [NaN, b === 0 ? b : NaN];
  if (!Number.isFinite(b)) return a === 0 ? [a, NaN] : isInfinite(a) ? [Infinity, NaN] : [NaN, NaN];
  if (b === 0) return [Math.sinh(a), b];
  if (a === 0) return [a * Math.cos(b), Math.sin(b)];
  if (isInfinite(a)) return [a * Math.cos(b), Infinity * Math.sin(b)];
  const ax = Math.abs(a);
  if (ax <= EXP_LIMIT) return [Math.sinh(a) * Math.cos(b), Math.cosh(a) * Math.sin(b)];
  // cosh a = |sinh a| = e^|a|/2 once e^−|a| is negligible.
  return [copySign(1, a) * expTimes(ax, 0.5 * Math.cos(b)), expTimes(ax, 0.5 * Math.sin(b))];
}

/** cosh z = cosh a·cos b + i sinh a·sin b; C99 special values. */
function coshPair(a: number, b: number): Pair {
  if (Number.isNaN(a)) return [NaN, b === 0 ? 0 : NaN];
  if (!Number.isFinite(b)) return a === 0 ? [NaN, 0] : isInfinite(a) ? [Infinity, NaN] : [NaN, NaN];
  if (b === 0) return [Math.cosh(a), a * b];
  if (a === 0) return [Math.cos(b), a * Math.sin(b)];
  if (isInfinite(a)) return [Infinity * Math.cos(b), a * Math.sin(b)];
  const ax = Math.abs(a);
  if (ax <= EXP_LIMIT) return [Math.cosh(a) * Math.cos(b), Math.sinh(a) * Math.sin(b)];
  return [expTimes(ax, 0.5 * Math.cos(b)), copySign(1, a) * expTimes(ax, 0.5 * Math.sin(b))];
}

/**
 * tanh z by Kahan's formula (as FreeBSD's and glibc's ctanh): with t = tan b, β = 1 + t²,
 * s = sinh a, ρ = √(1 + s²): tanh z = (β·ρ·s + i·t)/(1 + β·s²). It has no cancellation for
 * any imaginary part, however large; for |a| ≥ 22, tanh z = ±1 + i·4·sin b·cos b·e^(−2|a|).
 */
export function tanhPair(a: number, b: number): Pair {
  if (Number.isNaN(a)) return [NaN, b === 0 ? b : NaN];
  if (isInfinite(a)) return [copySign(1, a), copySign(0, isInfinite(b) ? b : Math.sin(b) * Math.cos(b))];
  if (!Number.isFinite(b)) return [a === 0 ? a : NaN, NaN];
  if (Math.abs(a) >= 22) {
    const e = Math.exp(-Math.abs(a));
    return [copySign(1, a), 4 * Math.sin(b) * Math.cos(b) * e * e];
  }
  const t = Math.tan(b);
  const beta = 1 + t * t;
  const s = Math.sinh(a);
  const rho = Math.sqrt(1 + s * s);
  const denom = 1 + beta * s * s;
  return [(beta * rho * s) / denom, t / denom];
}

/** sin z = −i·sinh(iz). */
export function sinPair(a: number, b: number): Pair {
  const [p, q] = sinhPair(-b, a);
  return [q, -p];
}

/** cos z = cosh(iz). */
export function cosPair(a: number, b: number): Pair {
  return coshPair(-b, a);
}

/** tan z = −i·tanh(iz). */
export function tanPair(a: number, b: number): Pair {
  const [p, q] = tanhPair(-b, a);
  return [q, -p];
}

const divided = new Float64Array(2);

/** (ar + i·ai)/(br + i·bi) by Smith's division, as c10::complex divides. */
function dividePair(ar: number, ai: number, br: number, bi: number): Pair {
  smithDivide(ar, ai, br, bi, divided, 0);
  return [divided[0]!, divided[1]!];
}

/** 1/√z (torch.rsqrt of a complex value: 1 / std::sqrt(z)). */
export function rsqrtPair(a: number, b: number): Pair {
  const [p, q] = sqrtPair(a, b);
  return dividePair(1, 0, p, q);
}

/**
 * sigmoid z = 1/(1 + e^−z). Evaluated as 1/(1 + e^−z) for Re z ≥ 0 and as e^z/(1 + e^z) for
 * Re z < 0, so the exponential never exceeds 1 in magnitude: no overflow, and a result
 * near 0 keeps its relative accuracy. The poles z = iπ(2k + 1) give infinities or NaN.
 */
export function sigmoidPair(a: number, b: number): Pair {
  if (a >= 0) {
    const [p, q] = expPair(-a, -b);
    return dividePair(1, 0, 1 + p, q);
  }
  const [p, q] = expPair(a, b);
  return dividePair(p, q, 1 + p, q);
}

/** The product (a + ib)(c + id) as C99 Annex G computes it (libgcc's __muldc3): infinities are recovered from NaN + iNaN. */
function annexGMultiply(a: number, b: number, c: number, d: number): Pair {
  const ac = a * c;
  const bd = b * d;
  const ad = a * d;
  const bc = b * c;
  let x = ac - bd;
  let y = ad + bc;
  if (Number.isNaN(x) && Number.isNaN(y)) {
    let recalc = false;
    const box = (v: number): number => copySign(isInfinite(v) ? 1 : 0, v);
    const zeroNaN = (v: number): number => (Number.isNaN(v) ? 0 : v);
    if (isInfinite(a) || isInfinite(b)) {
      [a, b, c, d] = [box(a), box(b), zeroNaN(c), zeroNaN(d)];
      recalc = true;
    }
    if (isInfinite(c) || isInfinite(d)) {
      [c, d, a, b] = [box(c), box(d), zeroNaN(a), zeroNaN(b)];
      recalc = true;
    }
    if (!recalc && (isInfinite(ac) || isInfinite(bd) || isInfinite(ad) || isInfinite(bc))) {
      [a, b, c, d] = [zeroNaN(a), zeroNaN(b), zeroNaN(c), zeroNaN(d)];
      recalc = true;
    }
    if (recalc) {
      x = Infinity * (a * c - b * d);
      y = Infinity * (a * d + b * c);
    }
  }
  return [x, y];
}

/**
 * z^w = e^(w·log z), principal branch: what std::pow of two std::complex values computes
 * (glibc's cpow is exactly cexp(w·clog z)), so zero bases give what torch.pow gives for a
 * tensor exponent: 0^w = 0 for Re w > 0, but NaN + iNaN for w = 0 and ∞ + iNaN for real w < 0.
 */
export function powPair(a: number, b: number, c: number, d: number): Pair {
  const [lr, li] = logPair(a, b);
  const [x, y] = annexGMultiply(c, d, lr, li);
  return expPair(x, y);
}

/** The naive complex product (c10::complex's operator*). */
const multiplyPair = (a: number, b: number, c: number, d: number): Pair => [a * c - b * d, a * d + b * c];

/**
 * z^e for a real Scalar exponent e, as torch.pow(Tensor, Scalar) computes it on complex
 * tensors: e = 0 gives 1 and e = 1 gives z for every z; 0.5, −0.5 and −1 are sqrt, rsqrt and
 * reciprocal; 2, 3 and −2 are products (exact on the real axis); other exponents e^(e·log z).
 */
export function powScalarPair(a: number, b: number, e: number): Pair {
  if (e === 0) return [1, 0];
  if (e === 1) return [a, b];
  if (e === 0.5) return sqrtPair(a, b);
  if (e === -0.5) return rsqrtPair(a, b);
  if (e === -1) return dividePair(1, 0, a, b);
  if (e === 2) return multiplyPair(a, b, a, b);
  if (e === 3) {
    const [p, q] = multiplyPair(a, b, a, b);
    return multiplyPair(p, q, a, b);
  }
  if (e === -2) {
    const [p, q] = multiplyPair(a, b, a, b);
    return dividePair(1, 0, p, q);
  }
  return powPair(a, b, e, 0);
}

/** Maps each complex element through `f`; the result keeps the complex type. */
function mapComplex(op: string, t: Tensor, f: (re: number, im: number) => Pair): Tensor {
  requireComplex(op, t);
  const v = readNumbers(t);
  const out = new Float64Array(v.length);
  for (let k = 0; k < v.length; k += 2) {
    const [re, im] = f(v[k]!, v[k + 1]!);
    out[k] = re;
    out[k + 1] = im;
  }
  return fromNumbers(t.dtype, t.shape, out);
}

/** √z elementwise, principal branch (see {@link sqrtPair}). */
export const complexSqrt = (t: Tensor): Tensor => mapComplex('sqrt', t, sqrtPair);
/** 1/√z elementwise. */
export const complexRsqrt = (t: Tensor): Tensor => mapComplex('rsqrt', t, rsqrtPair);
/** log z elementwise, principal branch (see {@link logPair}). */
export const complexLog = (t: Tensor): Tensor => mapComplex('log', t, logPair);
/** log(1 + z) elementwise. */
export const complexLog1p = (t: Tensor): Tensor => mapComplex('log1p', t, log1pPair);
/** e^z elementwise. */
export const complexExp = (t: Tensor): Tensor => mapComplex('exp', t, expPair);
/** sin z elementwise. */
export const complexSin = (t: Tensor): Tensor => mapComplex('sin', t, sinPair);
/** cos z elementwise. */
export const complexCos = (t: Tensor): Tensor => mapComplex('cos', t, cosPair);
/** tan z elementwise. */
export const complexTan = (t: Tensor): Tensor => mapComplex('tan', t, tanPair);
/** tanh z elementwise (see {@link tanhPair}). */
export const complexTanh = (t: Tensor): Tensor => mapComplex('tanh', t, tanhPair);
/** 1/(1 + e^−z) elementwise (see {@link sigmoidPair}). */
export const complexSigmoid = (t: Tensor): Tensor => mapComplex('sigmoid', t, sigmoidPair);
/** 1/z elementwise (Smith's division, as c10::complex). */
export const complexReciprocal = (t: Tensor): Tensor => mapComplex('reciprocal', t, (a, b) => dividePair(1, 0, a, b));

/** z^e for a complex tensor and a real Scalar exponent, as torch.pow(Tensor, Scalar) (see {@link powScalarPair}). */
export function complexPowScalar(t: Tensor, exponent: number): Tensor {
  return mapComplex('pow', t, (a, b) => powScalarPair(a, b, exponent));
}

/** a^b with broadcasting, as torch.pow(Tensor, Tensor) on complex values (see {@link powPair}); real operands promoted. */
export function complexPow(a: Tensor, b: Tensor, dtype?: DType): Tensor {
  return mapComplexPairs('complexPow', a, b, dtype, (ar, ai, br, bi, out, k) => {
    const [re, im] = powPair(ar, ai, br, bi);
    out[k] = re;
    out[k + 1] = im;
  });
}
