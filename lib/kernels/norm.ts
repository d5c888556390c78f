/**
 * Normalization layers: layer, batch (inference), group, instance and RMS normalization.
 *
 * Statistics are computed in float64 with two passes (mean, then mean squared deviation:
 * the biased variance, as PyTorch and ONNX use), and each output is rounded once.
 */
import { InvalidArgumentError } from '../errors';
import { isFloating, type DType } from '../ir/dtype';
import { shapeSize, type Shape, type Tensor } from '../ir/tensor';
import { broadcastIndex, broadcastShapes, fromNumbers, normalizeAxis, readNumbers } from './access';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

function checkReal(x: Tensor, op: string): void {
  if (!isFloating(x.dtype)) throw new InvalidArgumentError(`${op}: input must be a floating-point tensor, got ${x.dtype}`);
}

/**
 * Values of an optional affine parameter laid out over `shape` (it must broadcast to it,
 * as ONNX allows), or undefined when absent.
 */
function affineOver(p: Tensor | null | undefined, shape: Shape, name: string, op: string): Float64Array | undefined {
  if (p === undefined || p === null) return undefined;
  let ok = p.rank <= shape.length;
  if (ok) {
    try {
      ok = broadcastShapes(p.shape, shape).every((d, i) => d === shape[i]);
    } catch {
      ok = false;
    }
  }
  if (!ok) throw new InvalidArgumentError(`${op}: ${name} of shape ${fmt(p.shape)} does not match the normalized shape ${fmt(shape)}`);
  const values = readNumbers(p);
  const index = broadcastIndex(p.shape, shape);
  const out = new Float64Array(index.length);
  for (let i = 0; i < index.length; i++) out[i] = values[index[i]!]!;
  return out;
}

/** Mean and 1/sqrt(biased variance + eps) of X[start, start+count). */
function moments(X: Float64Array, start: number, count: number, eps: number): [number, number] {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += X[start + i]!;
  const mean = sum / count;
  let sq = 0;
  for (let i = 0; i < count; i++) {
    const d = X[start + i]! - mean;
    sq += d * d;
  }
  return [mean, 1 / Math.sqrt(sq / count + eps)];
}

/**
 * Layer normalization over dims `axis`..end (ONNX LayerNormalization's axis; for PyTorch's
 * layer_norm pass -normalized_shape.length). weight and bias must broadcast to those dims.
 * Returns the output, the mean and 1/std, the statistics shaped as x with the normalized
 * dims set to 1 (native_layer_norm / the optional ONNX outputs).
 */
export function layerNormWithStats(
  x: Tensor,
  axis: number,
  weight?: Tensor | null,
  bias?: Tensor | null,
  eps = 1e-5,
): [Tensor, Tensor, Tensor] {
  const op = 'layerNorm';
  checkReal(x, op);
  const a = normalizeAxis(axis, x.rank, op);
  if (x.rank === 0) throw new InvalidArgumentError(`${op}: input must have at least 1 dim`);
  const normShape = x.shape.slice(a);
  const inner = shapeSize(normShape);
  const rows = shapeSize(x.shape.slice(0, a));
  const w = affineOver(weight, normShape, 'weight', op);
  const b = affineOver(bias, normShape, 'bias', op);
  const X = readNumbers(x);
  const out = new Float64Array(X.length);
  const means = new Float64Array(rows);
  const rstds = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const start = r * inner;
    const [mean, rstd] = moments(X, start, inner, eps);
    means[r] = mean;
    rstds[r] = rstd;
    for (let i = 0; i < inner; i++) {
      let y = (X[start + i]! - mean) * rstd;
      if (w) y *= w[i]!;
      if (b) y += b[i]!;
      out[start + i] = y;
    }
  }
  const statShape = [...x.shape.slice(0, a), ...normShape.map(() => 1)];
  return [fromNumbers(x.dtype, x.shape, out), fromNumbers(x.dtype, statShape, means), fromNumbers(x.dtype, statShape, rstds)];
}

/** Layer normalization over dims `axis`..end (see {@link layerNormWithStats}); the output only. */
export function layerNorm(x: Tensor, axis: number, weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  return layerNormWithStats(x, axis, weight, bias, eps)[0];
}

/** Checks a per-channel parameter of `channels` elements and returns its values (or undefined). */
function perChannel(p: Tensor | null | undefined, channels: number, name: string, op: string): Float64Array | undefined {
  if (p === undefined || p === null) return undefined;
  if (p.size !== channels || p.rank > 1) {
    throw new InvalidArgumentError(`${op}: ${name} of shape ${fmt(p.shape)} must have ${channels} elements (one per channel)`);
  }
  return readNumbers(p);
}

/** Batch dims, channels and per-channel spatial size of an [N, C, *] input. */
function channelLayout(x: Tensor, op: string): { n: number; c: number; inner: number } {
  checkReal(x, op);
  if (x.rank < 2) throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} needs at least 2 dims [N, C, ...]`);
  return { n: x.shape[0]!, c: x.shape[1]!, inner: shapeSize(x.shape.slice(2)) };
}

/**
 * Batch normalization with running statistics (PyTorch batch_norm with training=false, ONNX
 * BatchNormalization in inference mode) over channel dim 1.
 */
export function batchNormInference(
  x: Tensor,
  mean: Tensor,
  variance: Tensor,
  weight?: Tensor | null,
  bias?: Tensor | null,
  eps = 1e-5,
): Tensor {
  const op = 'batchNormInference';
  const { n, c, inner } = channelLayout(x, op);
  const m = perChannel(mean, c, 'running mean', op)!;
  const v = perChannel(variance, c, 'running variance', op)!;
  const w = perChannel(weight, c, 'weight', op);
  const b = perChannel(bias, c, 'bias', op);
  const X = readNumbers(x);
  const out = new Float64Array(X.length);
  for (let ch = 0; ch < c; ch++) {
    const scale = (w ? w[ch]! : 1) / Math.sqrt(v[ch]! + eps);
    const shift = (b ? b[ch]! : 0) - m[ch]! * scale;
    for (let s = 0; s < n; s++) {
      const start = (s * c + ch) * inner;
      for (let i = start; i < start + inner; i++) out[i] = X[i]! * scale + shift;
    }
  }
  return fromNumbers(x.dtype, x.shape, out);
}

/**
 * Group normalization (PyTorch group_norm, ONNX GroupNormalization-21): statistics over each
 * group of C/groups channels and all spatial positions; weight and bias are per channel.
 */
export function groupNorm(x: Tensor, groups: number, weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  const op = 'groupNorm';
  const { n, c, inner } = channelLayout(x, op);
  if (!Number.isInteger(groups) || groups < 1 || c % groups !== 0) {
    throw new InvalidArgumentError(`${op}: ${c} channels of input ${fmt(x.shape)} cannot be split into ${groups} groups`);
  }
  const w = perChannel(weight, c, 'weight', op);
  const b = perChannel(bias, c, 'bias', op);
  const X = readNumbers(x);
  const out = new Float64Array(X.length);
  const perGroup = c / groups;
  for (let s = 0; s < n; s++) {
    for (let g = 0; g < groups; g++) {
      const start = (s * c + g * perGroup) * inner;
      const [mean, rstd] = moments(X, start, perGroup * inner, eps);
      for (let k = 0; k < perGroup; k++) {
        const ch = g * perGroup + k;
        const scale = rstd * (w ? w[ch]! : 1);
        const shift = (b ? b[ch]! : 0) - mean * scale;
        const from = start + k * inner;
        for (let i = from; i < from + inner; i++) out[i] = X[i]! * scale + shift;
      }
    }
  }
  return fromNumbers(x.dtype, x.shape, out);
}

/** Instance normalization (ONNX InstanceNormalization, PyTorch instance_norm without running stats): per sample and channel. */
export function instanceNorm(x: Tensor, weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  const { c } = channelLayout(x, 'instanceNorm');
  return c === 0 ? fromNumbers(x.dtype, x.shape, readNumbers(x)) : groupNorm(x, c, weight, bias, eps);
}

/** Machine epsilon of a floating dtype: PyTorch rms_norm's default eps. */
export function machineEpsilon(dtype: DType): number {
  switch (dtype) {
    case 'float16':
      return 2 ** -10;
    case 'bfloat16':
      return 2 ** -7;
    case 'float64':
      return 2 ** -52;
    default:
      return 2 ** -23;
  }
}

/**
 * RMS normalization over dims `axis`..end (PyTorch rms_norm with normalized_shape of
 * length -axis, ONNX RMSNormalization): x / sqrt(mean(x^2) + eps) * weight. eps defaults to
 * the dtype's machine epsilon, as in PyTorch.
 */
export function rmsNorm(x: Tensor, axis: number, weight?: Tensor | null, eps?: number): Tensor {
  const op = 'rmsNorm';
  checkReal(x, op);
  if (x.rank === 0) throw new InvalidArgumentError(`${op}: input must have at least 1 dim`);
  const a = normalizeAxis(axis, x.rank, op);
  const normShape = x.shape.slice(a);
  const inner = shapeSize(normShape);
  const rows = shapeSize(x.shape.slice(0, a));
  const w = affineOver(weight, normShape, 'weight', op);
  const e = eps ?? machineEpsilon(x.dtype);
  const X = readNumbers(x);
  const out = new Float64Array(X.length);
  for (let r = 0; r < rows; r++) {
    const start = r * inner;
    let sq = 0;
    for (let i = 0; i < inner; i++) sq += X[start + i]! * X[start + i]!;
    const scale = 1 / Math.sqrt(sq / inner + e);
    for (let i = 0; i < inner; i++) out[start + i] = X[start + i]! * scale * (w ? w[i]! : 1);
  }
  return fromNumbers(x.dtype, x.shape, out);
}
