/**
 * ONNX DFT and STFT as matrix products with constant cosine and sine tables (the signal length
 * is static): for e^(∓iθ), Re = xr·cos ± xi·sin and Im = ∓xr·sin + xi·cos, the inverse
 * scaled by 1/N. Complex tensors are ONNX's [..., 2] (a real input may be [..., 1]).
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { dtypeFromOnnx } from '../tensor-proto';

interface DftOptions {
  /** The signal dim of `x` (not its last, complex, dim). */
  axis: number;
  /** The transform length: the signal is zero-padded or truncated to it. */
  length: number;
  inverse: boolean;
  onesided: boolean;
}

function dft(ctx: OnnxContext, x: Value, options: DftOptions): Value {
  const shape = x.tensorType.shape;
  const rank = shape.length;
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.unsupported(`only floating-point signals are supported, got ${dtype}`);
  const parts = shape[rank - 1];
  if (parts !== 1 && parts !== 2) ctx.bad(`the last dim must be 1 (real) or 2 (complex), got ${String(parts)}`);
  const { axis, length: n, inverse, onesided } = options;
  if (axis < 0 || axis >= rank - 1) ctx.bad(`axis ${axis} is out of range for a signal of rank ${rank}`);
  const size = shape[axis]!;
  if (!isStatic(size)) ctx.unsupported(`the signal dim ${axis} must have a static size`);
  // The signal dim last, fitted to the transform's input length: n samples, or for a onesided
  // inverse the n / 2 + 1 bins of a onesided spectrum.
  const fitted = onesided && inverse ? Math.floor(n / 2) + 1 : n;
  // Whether a onesided spectrum of other than n / 2 + 1 bins is padded or cut as bins or as a
  // signal, ONNX leaves open, and implementations differ (onnxruntime 1.30 does neither): refused.
  if (onesided && inverse && size !== fitted) ctx.unsupported(`a onesided inverse DFT of length ${n} takes ${fitted} bins; the spectrum has ${String(size)} (dft_length with a spectrum of another size is not supported)`);
  const part = (i: number): Value => {
    let v = ctx.emit('aten.transpose.int', { self: ctx.emit('aten.select.int', { self: x, dim: -1, index: i }), dim0: axis, dim1: -1 });
    if ((size as number) > fitted) v = ctx.emit('aten.slice.Tensor', { self: v, dim: -1, start: 0, end: fitted, step: 1 });
    if ((size as number) < fitted) v = ctx.emit('aten.constant_pad_nd.default', { self: v, pad: [0, fitted - (size as number)], value: 0 });
    return v;
  };
  if (onesided && inverse) return inverseOnesided(ctx, x, part, parts === 2, axis, n);
  const k = onesided ? Math.floor(n / 2) + 1 : n;
  const scale = inverse ? 1 / n : 1;
  const table = (f: (t: number) => number, name: string): Value =>
    ctx.constantValue(Tensor.from(dtype, [n, k], Array.from({ length: n * k }, (_, i) => f((2 * Math.PI * Math.floor(i / k) * (i % k)) / n) * scale)), name);
  const cos = table(Math.cos, 'cos');
  // e^(-iθ) forward: the sine enters negated.
  const sin = table(inverse ? Math.sin : (t) => -Math.sin(t), 'sin');
  const mm = (a: Value, b: Value): Value => ctx.emit('aten.matmul.default', { self: a, other: b });
  const xr = part(0);
  let re = mm(xr, cos);
  let im = mm(xr, sin);
  if (parts === 2) {
    const xi = part(1);
    re = ctx.emit('aten.sub.Tensor', { self: re, other: mm(xi, sin) });
    im = ctx.emit('aten.add.Tensor', { self: im, other: mm(xi, cos) });
  }
  const back = (v: Value): Value => ctx.emit('aten.transpose.int', { self: v, dim0: axis, dim1: -1 });
  return ctx.emit('aten.stack.default', { tensors: [back(re), back(im)], dim: -1 });
}

/**
 * The real signal of n samples whose spectrum's first n / 2 + 1 bins `part` gives (NumPy's
 * irfft): the other bins are their conjugates (X[n - k] = X[k]*), so
 * y[t] = (1/n) Σ_k w_k (Re X[k] cos 2πkt/n - Im X[k] sin 2πkt/n), with w_k = 2 for the bins
 * whose mirror is not among them, else 1 (k = 0, and k = n / 2 for even n), and the imaginary
 * parts of those two ignored. The output's last dim is 1 (real).
 */
function inverseOnesided(ctx: OnnxContext, x: Value, part: (i: number) => Value, complex: boolean, axis: number, n: number): Value {
  const dtype = x.tensorType.dtype;
  const k = Math.floor(n / 2) + 1;
  const weight = (j: number): number => (j === 0 || 2 * j === n ? 1 : 2) / n;
  const table = (f: (j: number, t: number) => number, name: string): Value =>
    ctx.constantValue(Tensor.from(dtype, [k, n], Array.from({ length: k * n }, (_, i) => f(Math.floor(i / n), i % n))), name);
  const mm = (a: Value, b: Value): Value => ctx.emit('aten.matmul.default', { self: a, other: b });
  let y = mm(part(0), table((j, t) => weight(j) * Math.cos((2 * Math.PI * j * t) / n), 'icos'));
  if (complex) {
    // The imaginary parts of bins 0 and n / 2 meet sin(0) and sin(πt), zero: their rows drop out.
    y = ctx.emit('aten.add.Tensor', { self: y, other: mm(part(1), table((j, t) => -weight(j) * Math.sin((2 * Math.PI * j * t) / n), 'isin')) });
  }
  const back = ctx.emit('aten.transpose.int', { self: y, dim0: axis, dim1: -1 });
  return ctx.emit('aten.unsqueeze.default', { self: back, dim: -1 });
}

/** A scalar (or one-element) integer input known at import. */
function knownScalar(ctx: OnnxContext, i: number, what: string): number {
  const values = ctx.staticInts(i, what);
  if (values.length !== 1) ctx.bad(`${what} must hold one value, got ${values.length}`);
  return values[0]!;
}

defineOnnxOp('DFT', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  let axis = ctx.opset >= 20 ? (ctx.hasInput(2) ? knownScalar(ctx, 2, 'axis') : -2) : ctx.attrInt('axis', 1);
  if (axis < 0) axis += rank;
  const size = x.tensorType.shape[axis];
  const inverse = ctx.attrInt('inverse', 0) !== 0;
  const onesided = ctx.attrInt('onesided', 0) !== 0;
  if (typeof size !== 'number' && !ctx.hasInput(1)) ctx.unsupported(`the signal dim ${axis} must have a static size`);
  // A onesided spectrum of s bins is, by default, that of a signal of 2(s - 1) samples (NumPy's irfft).
  const length = ctx.hasInput(1) ? knownScalar(ctx, 1, 'dft_length') : onesided && inverse ? 2 * ((size as number) - 1) : (size as number);
  if (length < 1) ctx.bad(`dft_length must be positive, got ${length}`);
  return [dft(ctx, x, { axis, length, inverse, onesided })];
});

// Frames of frame_length every frame_step samples, windowed, each transformed.
defineOnnxOp('STFT', (ctx) => {
  const signal = ctx.input(0);
  const shape = signal.tensorType.shape;
  if (shape.length !== 3 || !isStatic(shape[1]!)) ctx.unsupported('the signal must be [batch, length, 1 or 2] with a static length');
  const total = shape[1] as number;
  const step = knownScalar(ctx, 1, 'frame_step');
  const window = ctx.optInput(2);
  const given = ctx.hasInput(3) ? knownScalar(ctx, 3, 'frame_length') : null;
  const w = window?.tensorType.shape;
  if (w !== undefined && (w.length !== 1 || !isStatic(w[0]!) || (given !== null && w[0] !== given))) ctx.bad(`the window must be 1-D of frame_length ${String(given)}`);
  const frame = (w !== undefined ? (w[0] as number) : given) ?? ctx.bad('frame_length or a window is required');
  if (step < 1 || frame < 1 || frame > total) ctx.bad(`frame_step ${step} and frame_length ${frame} do not fit a signal of ${total}`);
  const frames = Math.floor((total - frame) / step) + 1;
  const index = Array.from({ length: frames * frame }, (_, i) => Math.floor(i / frame) * step + (i % frame));
  const picked = ctx.emit('aten.index_select.default', { self: signal, dim: 1, index: ctx.constantValue(Tensor.from('int64', [index.length], index), 'frames') });
  let framed = ctx.emit('aten.reshape.default', { self: picked, shape: [ctx.dimArg(shape[0]!), frames, frame, ctx.dimArg(shape[2]!)] });
  if (window !== null) {
    const w = ctx.emit('aten.reshape.default', { self: ctx.cast(window, signal.tensorType.dtype), shape: [1, 1, frame, 1] });
    framed = ctx.emit('aten.mul.Tensor', { self: framed, other: w });
  }
  return [dft(ctx, framed, { axis: 2, length: frame, inverse: false, onesided: ctx.attrInt('onesided', 1) !== 0 })];
});

// MelWeightMatrix (opset 17): its five inputs are scalars, so the matrix is computed at import
// when they are constants, as ONNX's reference computes it: the mel edges in the hertz inputs'
// precision, the band edges in float64 floored to spectrogram bins, then triangles of peak 1.
defineOnnxOp('MelWeightMatrix', (ctx) => {
  const names = ['num_mel_bins', 'dft_length', 'sample_rate', 'lower_edge_hertz', 'upper_edge_hertz'];
  const values = names.map((name, i) => {
    const t = ctx.constant(i);
    if (t === null) return ctx.needsKnown(`${name} (input ${i}) must be a constant`);
    if (t.size !== 1) ctx.bad(`${name} (input ${i}) must be a scalar, got ${t.size} elements`);
    return Number(t.toArray()[0]);
  });
  const [bins, dftLength, sampleRate, lower, upper] = values as [number, number, number, number, number];
  if (!Number.isInteger(bins) || bins < 1 || !Number.isInteger(dftLength) || dftLength < 1 || !(sampleRate > 0)) {
    ctx.bad(`num_mel_bins ${bins}, dft_length ${dftLength} and sample_rate ${sampleRate} must be positive`);
  }
  const hertzType = ctx.inputType(3).dtype;
  const inHertzType = (v: number): number => (hertzType === 'float64' ? v : Number(Tensor.from(hertzType, [], [v]).toArray()[0]));
  const mel = (f: number): number => inHertzType(2595 * inHertzType(Math.log10(inHertzType(1 + inHertzType(f / 700)))));
  const lowMel = mel(lower);
  const step = inHertzType((mel(upper) - lowMel) / (bins + 2));
  const edges = Array.from({ length: bins + 2 }, (_, i) => {
    const hz = 700 * (10 ** ((i * step + lowMel) / 2595) - 1);
    return Math.trunc(Math.floor(((dftLength + 1) * hz) / sampleRate));
  });
  const rows = Math.floor(dftLength / 2) + 1;
  if (edges.some((e) => e < 0 || e > rows)) ctx.bad(`the mel bands [${lower}, ${upper}] Hz reach past the ${rows} spectrogram bins`);
  const out = new Float64Array(rows * bins);
  const set = (j: number, i: number, v: number): void => {
    if (j >= rows) ctx.bad(`the mel bands [${lower}, ${upper}] Hz reach past the ${rows} spectrogram bins`);
    out[j * bins + i] = v;
  };
  for (let i = 0; i < bins; i++) {
    const [left, center, right] = [edges[i]!, edges[i + 1]!, edges[i + 2]!];
    if (center === left) set(center, i, 1);
    else for (let j = left; j <= center; j++) set(j, i, (j - left) / (center - left));
    for (let j = center; j < right; j++) set(j, i, (right - j) / (right - center));
  }
  const code = ctx.attrInt('output_datatype', 1);
  const dtype = dtypeFromOnnx(code, `${ctx.where}: attribute output_datatype`);
  return [ctx.constantValue(Tensor.from(dtype, [rows, bins], Array.from(out)), 'mel_weights')];
});
