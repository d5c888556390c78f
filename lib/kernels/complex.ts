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

/** a / b with broadcasting (Smith's scaled division, as c10::complex); real operands promoted. */
export function complexDiv(a: Tensor, b: Tensor, dtype?: DType): Tensor {
  return mapComplexPairs('complexDiv', a, b, dtype, (ar, ai, br, bi, out, k) => {
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
  });
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
