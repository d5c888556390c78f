/**
 * Normalizations: layer norm and RMS norm on TensorRT's normalization layer (scale and bias
 * shaped [1, ..., 1, *normalized_shape]; RMS with `rms`, which backends without it spell out
 * here); statistics and group norm as reduce compositions computed in float32 for 16-bit
 * inputs (as PyTorch accumulates); batch norm
 * in inference folded into one scale and shift per channel when its parameters are
 * constants.
 */
import { cast as castKernel } from '../../kernels/unary';
import { readNumbers } from '../../kernels/access';
import type { NetTensor, TrtDType } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { cast, elementwise, reshape } from './basic';
import { alongAxis, constantOf, filledOf, reduce, scalarOf, unary } from './nn-util';

/** The type statistics are computed in: float32 for 16-bit floats. */
const statsType = (d: TrtDType): TrtDType => (d === 'float16' || d === 'bfloat16' ? 'float32' : d);

function binary(ctx: ConversionContext, a: NetTensor, b: NetTensor, op: 'sum' | 'sub' | 'prod' | 'div', role: string): NetTensor {
  return ctx.add({ kind: 'elementwise', op }, [a, b], role);
}

/** Mean and 1/sqrt(biased variance + eps) over `axes` (kept as 1s), in the stats type. */
export function moments(ctx: ConversionContext, x: NetTensor, axes: readonly number[], eps: number): { mean: NetTensor; centered: NetTensor; rstd: NetTensor } {
  const t = cast(ctx, x, statsType(x.dtype), 'stats_cast');
  const mean = reduce(ctx, t, 'avg', axes, true, 'mean');
  const centered = binary(ctx, t, mean, 'sub', 'centered');
  const variance = reduce(ctx, binary(ctx, centered, centered, 'prod', 'squared'), 'avg', axes, true, 'variance');
  const std = unary(ctx, binary(ctx, variance, scalarOf(ctx, eps, t.dtype, t.shape.length, 'eps'), 'sum', 'variance_eps'), 'sqrt', 'std');
  return { mean, centered, rstd: unary(ctx, std, 'recip', 'rstd') };
}

/** layer_norm over the last `n` dims; weight/bias are [*normalized_shape] or null. */
export function layerNorm(ctx: ConversionContext, x: NetTensor, n: number, weight: NetTensor | null, bias: NetTensor | null, eps: number): NetTensor {
  const rank = x.shape.length;
  const normShape = x.shape.slice(rank - n);
  const paramShape = [...new Array<number>(rank - n).fill(1), ...normShape];
  const scale = weight ? reshape(ctx, cast(ctx, weight, x.dtype, 'weight_cast'), paramShape, 'weight') : filledOf(ctx, 1, x.dtype, paramShape, 'ones');
  const shift = bias ? reshape(ctx, cast(ctx, bias, x.dtype, 'bias_cast'), paramShape, 'bias') : filledOf(ctx, 0, x.dtype, paramShape, 'zeros');
  const axes = Array.from({ length: n }, (_, i) => rank - n + i);
  return ctx.add({ kind: 'normalization', axes, epsilon: eps, nbGroups: 1 }, [x, scale, shift]);
}

/**
 * rms_norm over the last `n` dims (weight [*normalized_shape] or null): one RMS normalization
 * layer, x / sqrt(mean(x²) + eps)·weight. Backends without it spell it out with
 * {@link spellOutRmsNorm} (lib/conversion/expand-layers.ts).
 */
export function rmsNorm(ctx: ConversionContext, x: NetTensor, n: number, weight: NetTensor | null, eps: number): NetTensor {
  const rank = x.shape.length;
  const paramShape = [...new Array<number>(rank - n).fill(1), ...x.shape.slice(rank - n)];
  const ones = new Array<number>(rank).fill(1);
  const scale = weight ? reshape(ctx, cast(ctx, weight, x.dtype, 'weight_cast'), paramShape, 'weight') : filledOf(ctx, 1, x.dtype, ones, 'ones');
  const axes = Array.from({ length: n }, (_, i) => rank - n + i);
  return ctx.add({ kind: 'normalization', axes, epsilon: eps, nbGroups: 1, rms: true }, [x, scale, filledOf(ctx, 0, x.dtype, ones, 'zeros')]);
}

/**
 * RMS normalization as primitive layers, in float32 for 16-bit inputs (as PyTorch
 * accumulates): x / sqrt(mean(x²) over `axes` + eps) · scale + bias (a bias that is a
 * constant of zeros is left out).
 */
export function spellOutRmsNorm(ctx: ConversionContext, x: NetTensor, axes: readonly number[], scale: NetTensor, bias: NetTensor, eps: number, biasIsZero: boolean): NetTensor {
  const rank = x.shape.length;
  const t = cast(ctx, x, statsType(x.dtype), 'upcast');
  const meanSquare = reduce(ctx, binary(ctx, t, t, 'prod', 'squared'), 'avg', axes, true, 'mean_square');
  const rms = unary(ctx, binary(ctx, meanSquare, scalarOf(ctx, eps, t.dtype, rank, 'eps'), 'sum', 'plus_eps'), 'sqrt', 'rms');
  let y = elementwise(ctx, binary(ctx, t, rms, 'div', 'normalized'), scale, 'prod', t.dtype, 'weight');
  if (!biasIsZero) y = elementwise(ctx, y, bias, 'sum', t.dtype, 'bias');
  return cast(ctx, y, x.dtype, 'downcast');
}

/** A [C] tensor as [1, C, 1, ...] for an input of `rank`. */
function perChannel(ctx: ConversionContext, p: NetTensor, rank: number, dtype: TrtDType, role: string): NetTensor {
  return reshape(ctx, cast(ctx, p, dtype, `${role}_cast`), alongAxis(rank, 1, p.shape[0]!), role);
}

export interface BatchNormParams {
  mean: NetTensor | Tensor;
  variance: NetTensor | Tensor;
  weight: NetTensor | Tensor | null;
  bias: NetTensor | Tensor | null;
}

const isData = (p: NetTensor | Tensor | null): p is Tensor | null => p === null || p instanceof Tensor;

/**
 * Inference batch norm over channel dim 1: constant statistics and affine parameters fold
 * into x * scale + shift; otherwise (x - mean) * (weight / sqrt(var + eps)) + bias.
 */
export function batchNorm(ctx: ConversionContext, x: NetTensor, p: BatchNormParams, eps: number): NetTensor {
  const rank = x.shape.length;
  const c = x.shape[1]!;
  const shape = alongAxis(rank, 1, c);
  if (isData(p.mean) && isData(p.variance) && isData(p.weight) && isData(p.bias)) {
    const m = readNumbers(p.mean!);
    const v = readNumbers(p.variance!);
    const w = p.weight ? readNumbers(p.weight) : null;
    const b = p.bias ? readNumbers(p.bias) : null;
    const scale = Array.from({ length: c }, (_, i) => (w ? w[i]! : 1) / Math.sqrt(v[i]! + eps));
    const shift = scale.map((s, i) => (b ? b[i]! : 0) - m[i]! * s);
    const scaled = binary(ctx, x, constantOf(ctx, x.dtype, shape, scale, 'scale'), 'prod', 'scaled');
    return binary(ctx, scaled, constantOf(ctx, x.dtype, shape, shift, 'shift'), 'sum', 'batch_norm');
  }
  const tensor = (q: NetTensor | Tensor, role: string): NetTensor =>
    q instanceof Tensor ? ctx.constant(castKernel(q, x.dtype).reshape(shape), ctx.name(role)) : perChannel(ctx, q, rank, x.dtype, role);
  const mean = tensor(p.mean, 'mean');
  const variance = tensor(p.variance, 'variance');
  const std = unary(ctx, binary(ctx, variance, scalarOf(ctx, eps, x.dtype, rank, 'eps'), 'sum', 'variance_eps'), 'sqrt', 'std');
  let y = binary(ctx, binary(ctx, x, mean, 'sub', 'centered'), std, 'div', 'normalized');
  if (p.weight) y = binary(ctx, y, tensor(p.weight, 'weight'), 'prod', 'scaled');
  if (p.bias) y = binary(ctx, y, tensor(p.bias, 'bias'), 'sum', 'shifted');
  return y;
}

/**
 * group_norm: statistics over [N, G, C/G * spatial], normalized, reshaped back and scaled
 * per channel. Returns the output and the [N, G] mean and rstd (native_group_norm's).
 */
export function groupNorm(
  ctx: ConversionContext,
  x: NetTensor,
  groups: number,
  weight: NetTensor | null,
  bias: NetTensor | null,
  eps: number,
): { out: NetTensor; mean: NetTensor; rstd: NetTensor } {
  const n = x.shape[0]!;
  const rank = x.shape.length;
  const grouped = reshape(ctx, x, [n, groups, x.shape.slice(1).reduce((a, d) => a * d, 1) / groups], 'grouped');
  const { mean, centered, rstd } = moments(ctx, grouped, [2], eps);
  const normalized = cast(ctx, binary(ctx, centered, rstd, 'prod', 'normalized'), x.dtype, 'downcast');
  let y = reshape(ctx, normalized, x.shape, 'ungrouped');
  if (weight) y = binary(ctx, y, perChannel(ctx, weight, rank, x.dtype, 'weight'), 'prod', 'scaled');
  if (bias) y = binary(ctx, y, perChannel(ctx, bias, rank, x.dtype, 'bias'), 'sum', 'shifted');
  const stat = (t: NetTensor, role: string): NetTensor => cast(ctx, reshape(ctx, t, [n, groups], role), x.dtype, `${role}_cast`);
  return { out: y, mean: stat(mean, 'mean_out'), rstd: stat(rstd, 'rstd_out') };
}
