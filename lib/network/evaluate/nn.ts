/**
 * Compute layers: IMatrixMultiplyLayer, IConvolutionLayer, IDeconvolutionLayer,
 * IPoolingLayer, INormalizationLayer, IReduceLayer, ISoftMaxLayer and ICumulativeLayer.
 */
import { isFloating } from '../../ir/dtype';
import { fromNumbers, readNumbers } from '../../kernels/access';
import { conv, convTranspose } from '../../kernels/conv';
import { add, div, mul } from '../../kernels/elementwise';
import { matmul as matmulKernel } from '../../kernels/linalg';
import { layerNorm } from '../../kernels/norm';
import { avgPool, maxPool } from '../../kernels/pool';
import { amax, amin, cumsum, mean, prod, softmax as softmaxKernel, sum } from '../../kernels/reduce';
import { permute } from '../../kernels/shape';
import { cast as castKernel, relu } from '../../kernels/unary';
import type { MatrixOp } from '..';
import { shapeSize, Tensor } from '../../ir/tensor';
import { asDType, fail, fmtShape, required, type Executor, type LayerContext, type ParamsOf } from './common';

/**
 * IMatrixMultiplyLayer: op(A) × op(B) over broadcast batch dims (equal batch ranks, a 1
 * broadcasts). transpose swaps the last two dims; vector treats the last dim as a vector
 * (A as a row [1, K], B as a column [K, 1]), whose unit dim is dropped from the result.
 */
export const matmul: Executor<'matmul'> = (p, inputs, layer) => {
  const prepare = (t: Tensor, op: MatrixOp, isA: boolean): Tensor => {
    if (op === 'transpose') {
      const perm = t.shape.map((_, i) => i);
      [perm[t.rank - 2], perm[t.rank - 1]] = [perm[t.rank - 1]!, perm[t.rank - 2]!];
      return permute(t, perm);
    }
    if (op === 'vector') {
      const k = t.shape[t.rank - 1]!;
      return t.reshape(isA ? [...t.shape.slice(0, -1), 1, k] : [...t.shape, 1]);
    }
    return t;
  };
  const a = prepare(required(inputs, 0, layer), p.opA, true);
  const b = prepare(required(inputs, 1, layer), p.opB, false);
  const product = matmulKernel(a, b);
  const shape = [...product.shape];
  if (p.opB === 'vector') shape.splice(shape.length - 1, 1);
  if (p.opA === 'vector') shape.splice(shape.length - (p.opB === 'vector' ? 1 : 2), 1);
  return [product.reshape(shape)];
};

/** The kernel (input 1 or the static weights) in the expected layout and the input's dtype, and the bias (or null). */
function convWeights(
  p: ParamsOf<'convolution'> | ParamsOf<'deconvolution'>,
  inputs: ReadonlyArray<Tensor | null>,
  x: Tensor,
  layer: LayerContext,
): { weight: Tensor; bias: Tensor | null } {
  const channels = x.shape[1]!;
  if (p.groups < 1 || channels % p.groups !== 0 || p.nbOutputMaps % p.groups !== 0) {
    fail(layer, `${channels} input channels and ${p.nbOutputMaps} output maps do not split into ${p.groups} groups`);
  }
  const layout =
    p.kind === 'convolution'
      ? [p.nbOutputMaps, channels / p.groups, ...p.kernelSize] // KCRS
      : [channels, p.nbOutputMaps / p.groups, ...p.kernelSize]; // CKRS
  const kernel = inputs[1] ?? p.kernel;
  if (kernel.size !== shapeSize(layout)) fail(layer, `the kernel has ${kernel.size} elements, layout ${fmtShape(layout)} needs ${shapeSize(layout)}`);
  const biasSource = inputs[2] ?? (p.bias !== null && p.bias.size > 0 ? p.bias : null);
  if (biasSource !== null && biasSource.size !== p.nbOutputMaps) fail(layer, `the bias has ${biasSource.size} elements for ${p.nbOutputMaps} output maps`);
  // Like TensorRT, weights are converted to the input's precision.
  return {
    weight: asDType(kernel.reshape(layout), x.dtype),
    bias: biasSource === null ? null : asDType(biasSource.reshape([p.nbOutputMaps]), x.dtype),
  };
}

/** Channels-first ↔ channels-last permutations of a rank-`rank` tensor. */
const toChannelsLast = (rank: number): number[] => [0, ...Array.from({ length: rank - 2 }, (_, i) => i + 2), 1];
const toChannelsFirst = (rank: number): number[] => [0, rank - 1, ...Array.from({ length: rank - 2 }, (_, i) => i + 1)];

/**
 * IConvolutionLayer: N-d convolution with pre/post padding, stride, dilation and groups. The
 * cuda backend's passes add a channels-last layout (computed here as the channels-first
 * convolution of permuted tensors), a residual (input 3) and a ReLU after the bias.
 */
export const convolution: Executor<'convolution'> = (p, inputs, layer) => {
  const last = p.channelsLast === true;
  const given = required(inputs, 0, layer);
  const rank = given.rank;
  const x = last ? permute(given, toChannelsFirst(rank)) : given;
  let kernelInputs = inputs;
  if (last) {
    // [K, spatial..., C/g] → [K, C/g, spatial...].
    const kernel = inputs[1] ?? p.kernel;
    const stored = [p.nbOutputMaps, ...p.kernelSize, x.shape[1]! / p.groups];
    if (kernel.size !== shapeSize(stored)) fail(layer, `the kernel has ${kernel.size} elements, layout ${fmtShape(stored)} needs ${shapeSize(stored)}`);
    kernelInputs = [inputs[0] ?? null, permute(kernel.reshape(stored), toChannelsFirst(rank)), inputs[2] ?? null];
  }
  const { weight, bias } = convWeights(p, kernelInputs, x, layer);
  let y = conv(x, weight, bias, { stride: p.stride, pads: [...p.prePadding, ...p.postPadding], dilation: p.dilation, groups: p.groups });
  if (last) y = permute(y, toChannelsLast(rank));
  const residual = inputs[3];
  if (residual) {
    if (fmtShape(residual.shape) !== fmtShape(y.shape)) fail(layer, `the residual ${fmtShape(residual.shape)} does not have the output's shape ${fmtShape(y.shape)}`);
    y = asDType(add(y, residual), y.dtype);
  }
  if (p.activation === 'relu') y = relu(y);
  return [y];
};

/** IDeconvolutionLayer: out = (in − 1)·stride − pre − post + dilation·(k − 1) + 1. */
export const deconvolution: Executor<'deconvolution'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const { weight, bias } = convWeights(p, inputs, x, layer);
  return [convTranspose(x, weight, bias, { stride: p.stride, pads: [...p.prePadding, ...p.postPadding], dilation: p.dilation, groups: p.groups })];
};

/**
 * IPoolingLayer with explicit padding. Output size per dim: (I + pre + post − K)/S + 1,
 * rounded down (explicit_round_down) or up (explicit_round_up) — TensorRT's formula, which
 * unlike PyTorch's ceil_mode keeps a last window that starts in the post padding. Windows
 * start at o·S − pre; padding never wins a max; an average divides by the window's real
 * elements (averageCountExcludesPadding) or by its size within the padded input.
 */
export const pooling: Executor<'pooling'> = (p, inputs, layer) => {
  if (p.channelsLast === true) {
    const given = required(inputs, 0, layer);
    const [y] = pooling({ ...p, channelsLast: false }, [permute(given, toChannelsFirst(given.rank))], layer);
    return [permute(y!, toChannelsLast(given.rank))];
  }
  const x = required(inputs, 0, layer);
  const spatial = x.shape.slice(2);
  const roundUp = p.paddingMode === 'explicit_round_up';
  const outSizes = spatial.map((size, i) => {
    const span = size + p.prePadding[i]! + p.postPadding[i]! - p.window[i]!;
    return (roundUp ? Math.ceil(span / p.stride[i]!) : Math.floor(span / p.stride[i]!)) + 1;
  });
  if (outSizes.some((o) => o < 1)) fail(layer, `input ${fmtShape(x.shape)} is smaller than the window ${fmtShape(p.window)} with its padding`);
  // The kernels round down; extending the post padding to the last window's end makes them
  // produce TensorRT's count of windows (the windows themselves do not change).
  const postReach = spatial.map((size, i) => Math.max(p.postPadding[i]!, (outSizes[i]! - 1) * p.stride[i]! + p.window[i]! - size - p.prePadding[i]!));
  const options = { kernel: p.window, stride: p.stride, pads: [...p.prePadding, ...postReach] };
  if (p.type === 'max') return [maxPool(x, options)];
  // Window sums (exact in float64), divided by each window's count as TensorRT counts it.
  const sums = avgPool(castKernel(x, 'float64'), { ...options, divisorOverride: 1 });
  const divisors = spatial.map((size, i) =>
    Array.from({ length: outSizes[i]! }, (_, o) => {
      const start = o * p.stride[i]! - p.prePadding[i]!;
      const end = start + p.window[i]!;
      if (p.averageCountExcludesPadding) return Math.max(0, Math.min(end, size) - Math.max(start, 0));
      return Math.min(end, size + p.postPadding[i]!) - start;
    }),
  );
  const values = Float64Array.from(readNumbers(sums));
  const plane = shapeSize(outSizes);
  const counter = new Array<number>(outSizes.length).fill(0);
  for (let k = 0; k < plane; k++) {
    let divisor = 1;
    counter.forEach((c, i) => (divisor *= divisors[i]![c]!));
    for (let at = k; at < values.length; at += plane) values[at]! /= divisor;
    for (let i = outSizes.length - 1; i >= 0; i--) {
      if (++counter[i]! < outSizes[i]!) break;
      counter[i] = 0;
    }
  }
  return [fromNumbers(x.dtype, sums.shape, values)];
};

/** (t − mean)/sqrt(var + eps) over `axes` (biased variance), via a permutation that makes them trailing. */
function standardize(t: Tensor, axes: readonly number[], eps: number, rms = false): Tensor {
  const sorted = [...new Set(axes)].sort((a, b) => a - b);
  const kept = t.shape.map((_, i) => i).filter((i) => !sorted.includes(i));
  const perm = [...kept, ...sorted];
  const identity = perm.every((a, i) => a === i);
  const moved = identity ? t : permute(t, perm);
  const normalized = rms ? rmsScale(moved, kept.length, eps) : layerNorm(moved, kept.length, null, null, eps);
  if (identity) return normalized;
  const inverse = new Array<number>(perm.length);
  perm.forEach((a, i) => (inverse[a] = i));
  return permute(normalized, inverse);
}

/** x / sqrt(mean(x²) + eps) over the dims from `axis` on (float64 in and out). */
function rmsScale(t: Tensor, axis: number, eps: number): Tensor {
  const inner = shapeSize(t.shape.slice(axis));
  const x = readNumbers(t);
  const out = new Float64Array(x.length);
  for (let start = 0; start < x.length; start += inner) {
    let squares = 0;
    for (let i = 0; i < inner; i++) squares += x[start + i]! * x[start + i]!;
    const inv = 1 / Math.sqrt(squares / inner + eps);
    for (let i = 0; i < inner; i++) out[start + i] = x[start + i]! * inv;
  }
  return fromNumbers('float64', t.shape, out);
}

/**
 * INormalizationLayer: (x − mean)/sqrt(var + eps)·scale + bias, statistics over `axes`; with
 * `rms` (the cuda backend's RMSNorm pass) x/sqrt(mean(x²) + eps)·scale + bias.
 * With nbGroups G > 1 (group normalization), channels (dim 1) are split into G groups and
 * each group's statistics also cover its channels; scale and bias are then per group
 * ([1, G, 1, ...], TensorRT's documented shape) or per channel ([1, C, 1, ...]). Otherwise
 * scale and bias broadcast against the input (NumPy rules). Computed in float64, rounded once.
 */
export const normalization: Executor<'normalization'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const scale = castKernel(required(inputs, 1, layer), 'float64');
  const bias = castKernel(required(inputs, 2, layer), 'float64');
  if (!isFloating(x.dtype)) fail(layer, `normalization does not take ${x.dtype}`);
  if (p.axes.length === 0) fail(layer, 'no axes to normalize over');
  const x64 = castKernel(x, 'float64');
  const eps = Math.fround(p.epsilon);
  const affine = (t: Tensor, s: Tensor, b: Tensor): Tensor => add(mul(t, s), b);
  let y: Tensor;
  if (p.rms === true && p.nbGroups > 1) fail(layer, 'RMS normalization takes no groups');
  if (p.nbGroups > 1) {
    const [n, c] = [x.shape[0]!, x.shape[1]!];
    const g = p.nbGroups;
    if (x.rank < 2 || c % g !== 0) fail(layer, `${c} channels of input ${fmtShape(x.shape)} do not split into ${g} groups`);
    if (p.axes.some((a) => a < 2)) fail(layer, `group normalization takes spatial axes (2 and up), got [${p.axes.join(', ')}]`);
    const grouped = [n, g, c / g, ...x.shape.slice(2)];
    const normalized = standardize(x64.reshape(grouped), [2, ...p.axes.map((a) => a + 1)], eps);
    const perGroup = (t: Tensor): boolean => g !== c && t.rank === x.rank && t.shape[1] === g;
    if (perGroup(scale) || perGroup(bias)) {
      const toGroups = (t: Tensor): Tensor => (perGroup(t) ? t.reshape([t.shape[0]!, g, 1, ...t.shape.slice(2)]) : t.reshape([...t.shape.slice(0, 1), g, c / g, ...t.shape.slice(2)]));
      for (const t of [scale, bias]) {
        if (!perGroup(t) && t.shape[1] !== c) fail(layer, `scale and bias must be per group [1, ${g}, 1...] or per channel [1, ${c}, 1...], got ${fmtShape(t.shape)}`);
      }
      y = affine(normalized, toGroups(scale), toGroups(bias)).reshape(x.shape);
    } else {
      y = affine(normalized.reshape(x.shape), scale, bias);
    }
  } else {
    y = affine(standardize(x64, p.axes, eps, p.rms === true), scale, bias);
  }
  if (y.shape.length !== x.rank || y.shape.some((d, i) => d !== x.shape[i])) {
    fail(layer, `scale ${fmtShape(scale.shape)} and bias ${fmtShape(bias.shape)} do not broadcast to input ${fmtShape(x.shape)}`);
  }
  return [castKernel(y, x.dtype)];
};

/**
 * IReduceLayer over `axes` (none: the input unchanged), in the input's dtype. avg of an
 * integer tensor is the exact int64 sum divided toward zero.
 */
export const reduce: Executor<'reduce'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const axes = [...new Set(p.axes)];
  if (axes.length === 0) return [new Tensor(x.dtype, x.shape, x.data.slice())];
  switch (p.op) {
    case 'sum':
      return [sum(x, axes, p.keepDims, x.dtype)];
    case 'prod':
      return [prod(x, axes, p.keepDims, x.dtype)];
    case 'max':
      return [amax(x, axes, p.keepDims)];
    case 'min':
      return [amin(x, axes, p.keepDims)];
    case 'avg':
      return [isFloating(x.dtype) ? mean(x, axes, p.keepDims) : integerMean(x, axes, p.keepDims)];
  }
};

/** The mean of an integer tensor over `axes`, truncated toward zero, computed exactly. */
function integerMean(x: Tensor, axes: readonly number[], keepDims: boolean): Tensor {
  const count = axes.reduce((n, a) => n * x.shape[a < 0 ? a + x.rank : a]!, 1);
  if (count === 0) return castKernel(mean(x, axes, keepDims, 'float64'), x.dtype);
  return castKernel(div(sum(x, axes, keepDims, 'int64'), count, 'trunc'), x.dtype);
}

/** ISoftMaxLayer along one axis. */
export const softmax: Executor<'softmax'> = (p, inputs, layer) => [softmaxKernel(required(inputs, 0, layer), p.axis)];

/** ICumulativeLayer (sum) along `axis`, optionally exclusive and/or reversed, in the input's dtype. */
export const cumulative: Executor<'cumulative'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  return [cumsum(x, p.axis, { exclusive: p.exclusive, reverse: p.reverse, dtype: x.dtype })];
};
