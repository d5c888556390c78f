/** Interpreter implementations of the neural-network ops (lib/ir/ops/nn.ts), on lib/kernels. */
import { BadInputError, InvalidArgumentError } from '../../errors';
import { isFloating, type DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import { conv, convTranspose } from '../../kernels/conv';
import { add, mul, ne, pow, sub, where } from '../../kernels/elementwise';
import { indexSelect, resize, topk, type CoordinateTransform, type NearestMode } from '../../kernels/indexing';
import { generalFilter, resizeAttrs } from '../../kernels/resize-coords';
import { addmm, baddbmm, linear, matmul } from '../../kernels/linalg';
import { batchNormInference, groupNorm, layerNormWithStats, rmsNorm } from '../../kernels/norm';
import {
  adaptiveAvgPool,
  adaptiveMaxPoolWithIndices,
  avgPool,
  maxPool,
  maxPoolWithIndices,
} from '../../kernels/pool';
import { amax, amin, argmax, argmin, cumsum, logSoftmax, mean, prod, softmax, sum } from '../../kernels/reduce';
import { reshape, transpose } from '../../kernels/shape';
import { roiAlign } from '../../kernels/roi-align';
import { abs, cast, exp, isinf, log, rsqrt, sqrt } from '../../kernels/unary';
import { composeEinsum } from '../../ir/einsum';
import { InternalError } from '../../errors';
import { defineImpl, getImpl, type RuntimeArg } from '../registry';

type Args = Readonly<Record<string, RuntimeArg>>;

const T = (a: RuntimeArg): Tensor => a as Tensor;
const optT = (a: RuntimeArg | undefined): Tensor | null => (a === null || a === undefined ? null : (a as Tensor));
const num = (a: RuntimeArg): number => a as number;
const optNum = (a: RuntimeArg | undefined): number | undefined => (a === null || a === undefined ? undefined : (a as number));
const dtypeArg = (a: RuntimeArg | undefined): DType | undefined => (a === null || a === undefined ? undefined : (a as DType));

/** A list argument as numbers; a single number (or 1-element list) repeats to `n`. */
function list(a: RuntimeArg, n: number): number[] {
  const values = Array.isArray(a) ? (a as number[]) : [a as number];
  return values.length === 1 && n > 1 ? new Array<number>(n).fill(values[0]!) : [...values];
}

/** `int[1]? dim`: undefined (all dims) when null or []. */
function dimsArg(a: RuntimeArg | undefined): number[] | undefined {
  if (a === null || a === undefined) return undefined;
  const l = Array.isArray(a) ? (a as number[]) : [a as number];
  return l.length === 0 ? undefined : l;
}

// ---------------------------------------------------------------------------------------------
// Reductions

defineImpl('aten.sum.dim_IntList', (a) => [sum(T(a.self), dimsArg(a.dim), a.keepdim as boolean, dtypeArg(a.dtype))]);
defineImpl('aten.sum.default', (a) => [sum(T(a.self), undefined, false, dtypeArg(a.dtype))]);
defineImpl('aten.mean.dim', (a) => [mean(T(a.self), dimsArg(a.dim), a.keepdim as boolean, dtypeArg(a.dtype))]);
defineImpl('aten.mean.default', (a) => [mean(T(a.self), undefined, false, dtypeArg(a.dtype))]);
defineImpl('aten.prod.dim_int', (a) => [prod(T(a.self), [num(a.dim)], a.keepdim as boolean, dtypeArg(a.dtype))]);
defineImpl('aten.prod.default', (a) => [prod(T(a.self), undefined, false, dtypeArg(a.dtype))]);
defineImpl('aten.amax.default', (a) => [amax(T(a.self), dimsArg(a.dim), a.keepdim as boolean)]);
defineImpl('aten.amin.default', (a) => [amin(T(a.self), dimsArg(a.dim), a.keepdim as boolean)]);
defineImpl('aten.max.default', (a) => [amax(T(a.self))]);
defineImpl('aten.min.default', (a) => [amin(T(a.self))]);
defineImpl('aten.max.dim', (a) => [amax(T(a.self), [num(a.dim)], a.keepdim as boolean), argmax(T(a.self), num(a.dim), a.keepdim as boolean)]);
defineImpl('aten.min.dim', (a) => [amin(T(a.self), [num(a.dim)], a.keepdim as boolean), argmin(T(a.self), num(a.dim), a.keepdim as boolean)]);
defineImpl('aten.argmax.default', (a) => [argmax(T(a.self), optNum(a.dim), a.keepdim as boolean)]);
defineImpl('aten.argmin.default', (a) => [argmin(T(a.self), optNum(a.dim), a.keepdim as boolean)]);
defineImpl('trt.argmax_last', (a) => [argmax(T(a.self), num(a.dim), a.keepdim as boolean, true)]);
defineImpl('trt.argmin_last', (a) => [argmin(T(a.self), num(a.dim), a.keepdim as boolean, true)]);

defineImpl('aten.logsumexp.default', (a) => {
  let x = T(a.self);
  if (!isFloating(x.dtype)) x = cast(x, 'float32');
  const dims = dimsArg(a.dim);
  const keepdim = a.keepdim as boolean;
  // Shift by the maximum (infinite maxima shifted by 0, as PyTorch) for stability.
  const m = amax(x, dims, true);
  const shift = where(isinf(m), 0, m);
  const total = log(sum(exp(sub(x, shift)), dims, keepdim));
  return [add(total, keepdim ? shift : reshape(shift, total.shape as number[]))];
});

defineImpl('aten.linalg_vector_norm.default', (a) => {
  let x = T(a.self);
  const dtype = dtypeArg(a.dtype);
  if (dtype !== undefined) x = cast(x, dtype);
  const ord = num(a.ord);
  const dims = dimsArg(a.dim);
  const keepdim = a.keepdim as boolean;
  const ax = abs(x);
  if (ord === Infinity) return [amax(ax, dims, keepdim)];
  if (ord === -Infinity) return [amin(ax, dims, keepdim)];
  if (ord === 0) return [sum(cast(ne(x, 0), x.dtype), dims, keepdim)];
  if (ord === 1) return [sum(ax, dims, keepdim)];
  if (ord === 2) return [sqrt(sum(mul(ax, ax), dims, keepdim))];
  return [pow(sum(pow(ax, { value: ord, kind: 'float' }), dims, keepdim), { value: 1 / ord, kind: 'float' })];
});

// ---------------------------------------------------------------------------------------------
// Softmax and cumulative sums

function softmaxIn(x: Tensor, dtype: DType | undefined): Tensor {
  return dtype !== undefined && dtype !== x.dtype ? cast(x, dtype) : x;
}

defineImpl('aten.softmax.int', (a) => [softmax(softmaxIn(T(a.self), dtypeArg(a.dtype)), num(a.dim))]);
defineImpl('aten.log_softmax.int', (a) => [logSoftmax(softmaxIn(T(a.self), dtypeArg(a.dtype)), num(a.dim))]);
defineImpl('aten._softmax.default', (a) => [softmax(softmaxIn(T(a.self), a.half_to_float ? 'float32' : undefined), num(a.dim))]);
defineImpl('aten._log_softmax.default', (a) => [logSoftmax(softmaxIn(T(a.self), a.half_to_float ? 'float32' : undefined), num(a.dim))]);

defineImpl('aten.cumsum.default', (a) => [cumsum(T(a.self), num(a.dim), { dtype: dtypeArg(a.dtype) })]);
defineImpl('trt.cumsum_onnx', (a) => {
  const x = T(a.self);
  return [cumsum(x, num(a.dim), { exclusive: a.exclusive as boolean, reverse: a.reverse as boolean, dtype: x.dtype })];
});

// ---------------------------------------------------------------------------------------------
// Matrix products

defineImpl('aten.matmul.default', (a) => [matmul(T(a.self), T(a.other))]);
defineImpl('aten.mm.default', (a) => [matmul(T(a.self), T(a.mat2))]);
defineImpl('aten.bmm.default', (a) => [matmul(T(a.self), T(a.mat2))]);
defineImpl('aten.addmm.default', (a) => [addmm(T(a.self), T(a.mat1), T(a.mat2), num(a.beta), num(a.alpha))]);
defineImpl('aten.baddbmm.default', (a) => [baddbmm(T(a.self), T(a.batch1), T(a.batch2), num(a.beta), num(a.alpha))]);
defineImpl('aten.linear.default', (a) => [linear(T(a.input), T(a.weight), optT(a.bias))]);

// ---------------------------------------------------------------------------------------------
// Normalization

const normAxis = (a: Args): number => -(a.normalized_shape as number[]).length;

defineImpl('aten.layer_norm.default', (a) => [layerNormWithStats(T(a.input), normAxis(a), optT(a.weight), optT(a.bias), num(a.eps))[0]]);
defineImpl('aten.native_layer_norm.default', (a) => layerNormWithStats(T(a.input), normAxis(a), optT(a.weight), optT(a.bias), num(a.eps)));
defineImpl('aten.rms_norm.default', (a) => [rmsNorm(T(a.input), normAxis(a), optT(a.weight), optNum(a.eps))]);

defineImpl('aten.batch_norm.default', (a) => [
  batchNormInference(T(a.input), T(a.running_mean), T(a.running_var), optT(a.weight), optT(a.bias), num(a.eps)),
]);
defineImpl('aten._native_batch_norm_legit_no_training.default', (a) => {
  const x = T(a.input);
  return [
    batchNormInference(x, T(a.running_mean), T(a.running_var), optT(a.weight), optT(a.bias), num(a.eps)),
    new Tensor(x.dtype, [0]),
    new Tensor(x.dtype, [0]),
  ];
});

defineImpl('aten.group_norm.default', (a) => [groupNorm(T(a.input), num(a.num_groups), optT(a.weight), optT(a.bias), num(a.eps))]);

defineImpl('aten.native_group_norm.default', (a) => {
  const x = T(a.input);
  const groups = num(a.group);
  const eps = num(a.eps);
  const out = groupNorm(x, groups, optT(a.weight), optT(a.bias), eps);
  // Statistics per (sample, group): mean and 1/sqrt(biased variance + eps).
  const n = x.shape[0]!;
  const grouped = reshape(x, [n, groups, -1]);
  const m = mean(grouped, [2], true);
  const centered = sub(grouped, m);
  const variance = mean(mul(centered, centered), [2], false);
  const rstd = rsqrt(add(variance, { value: eps, kind: 'float' }));
  return [out, reshape(m, [n, groups]), rstd];
});

// ---------------------------------------------------------------------------------------------
// Convolution

defineImpl('aten.convolution.default', (a) => {
  const n = T(a.weight).rank - 2;
  const common = { stride: list(a.stride, n), padding: list(a.padding, n), dilation: list(a.dilation, n), groups: num(a.groups) };
  return a.transposed
    ? [convTranspose(T(a.input), T(a.weight), optT(a.bias), { ...common, outputPadding: list(a.output_padding, n) })]
    : [conv(T(a.input), T(a.weight), optT(a.bias), common)];
});

for (const n of [1, 2, 3]) {
  defineImpl(`aten.conv${n}d.default`, (a) => [
    conv(T(a.input), T(a.weight), optT(a.bias), { stride: list(a.stride, n), padding: list(a.padding, n), dilation: list(a.dilation, n), groups: num(a.groups) }),
  ]);
  defineImpl(`aten.conv${n}d.padding`, (a) => [
    conv(T(a.input), T(a.weight), optT(a.bias), {
      stride: list(a.stride, n),
      padding: a.padding as 'valid' | 'same',
      dilation: list(a.dilation, n),
      groups: num(a.groups),
    }),
  ]);
  defineImpl(`aten.conv_transpose${n}d.${n === 1 ? 'default' : 'input'}`, (a) => [
    convTranspose(T(a.input), T(a.weight), optT(a.bias), {
      stride: list(a.stride, n),
      padding: list(a.padding, n),
      outputPadding: list(a.output_padding, n),
      dilation: list(a.dilation, n),
      groups: num(a.groups),
    }),
  ]);
}

const pads = (a: Args, n: number): number[] => [...list(a.pads_begin, n), ...list(a.pads_end, n)];

defineImpl('trt.conv_padded', (a) => {
  const n = T(a.weight).rank - 2;
  return [conv(T(a.input), T(a.weight), optT(a.bias), { stride: list(a.stride, n), pads: pads(a, n), dilation: list(a.dilation, n), groups: num(a.groups) })];
});

defineImpl('trt.conv_transpose_padded', (a) => {
  const n = T(a.weight).rank - 2;
  return [
    convTranspose(T(a.input), T(a.weight), optT(a.bias), {
      stride: list(a.stride, n),
      pads: pads(a, n),
      outputPadding: list(a.output_padding, n),
      dilation: list(a.dilation, n),
      groups: num(a.groups),
    }),
  ];
});

// ---------------------------------------------------------------------------------------------
// Pooling

/** kernel, stride (empty: the kernel) and padding of an ATen pool. */
function atenPool(a: Args, n: number): { kernel: number[]; stride: number[]; padding: number[]; ceilMode: boolean } {
  const kernel = list(a.kernel_size, n);
  const stride = Array.isArray(a.stride) && a.stride.length === 0 ? kernel : list(a.stride, n);
  return { kernel, stride, padding: list(a.padding, n), ceilMode: a.ceil_mode as boolean };
}

for (const n of [1, 2, 3]) {
  defineImpl(`aten.max_pool${n}d.default`, (a) => [maxPool(T(a.self), { ...atenPool(a, n), dilation: list(a.dilation, n) })]);
  defineImpl(`aten.max_pool${n}d_with_indices.default`, (a) => maxPoolWithIndices(T(a.self), { ...atenPool(a, n), dilation: list(a.dilation, n) }));
  defineImpl(`aten.avg_pool${n}d.default`, (a) => [
    avgPool(T(a.self), { ...atenPool(a, n), countIncludePad: a.count_include_pad as boolean, divisorOverride: optNum(a.divisor_override) }),
  ]);
  defineImpl(`aten.adaptive_avg_pool${n}d.default`, (a) => [adaptiveAvgPool(T(a.self), list(a.output_size, n))]);
  if (n > 1) defineImpl(`aten._adaptive_avg_pool${n}d.default`, (a) => [adaptiveAvgPool(T(a.self), list(a.output_size, n))]);
  defineImpl(`aten.adaptive_max_pool${n}d.default`, (a) => adaptiveMaxPoolWithIndices(T(a.self), list(a.output_size, n)));
}

function onnxPool(a: Args): { kernel: number[]; stride: number[]; pads: number[]; ceilMode: boolean } {
  const kernel = a.kernel_size as number[];
  const n = kernel.length;
  return { kernel, stride: list(a.stride, n), pads: pads(a, n), ceilMode: a.ceil_mode as boolean };
}

defineImpl('trt.max_pool_padded', (a) => [maxPool(T(a.self), { ...onnxPool(a), dilation: list(a.dilation, (a.kernel_size as number[]).length) })]);
defineImpl('trt.max_pool_onnx_indices', (a) =>
  maxPoolWithIndices(T(a.self), { ...onnxPool(a), dilation: list(a.dilation, (a.kernel_size as number[]).length), globalIndices: true }),
);
defineImpl('trt.avg_pool_padded', (a) => [avgPool(T(a.self), { ...onnxPool(a), countIncludePad: a.count_include_pad as boolean })]);
defineImpl('trt.roi_align', (a) => [
  roiAlign({
    input: T(a.self),
    rois: T(a.rois),
    batchIndices: T(a.batch_indices),
    mode: a.mode as 'avg' | 'max',
    outputHeight: num(a.output_height),
    outputWidth: num(a.output_width),
    samplingRatio: num(a.sampling_ratio),
    spatialScale: num(a.spatial_scale),
    halfPixel: a.half_pixel as boolean,
  }),
]);

// ---------------------------------------------------------------------------------------------
// Resizing

/** output_size, or floor(in * scale) per spatial dim. */
function upsampleSize(x: Tensor, outputSize: RuntimeArg, scales: RuntimeArg): number[] {
  if (outputSize !== null && outputSize !== undefined) return [...(outputSize as number[])];
  return (scales as number[]).map((s, i) => Math.floor(x.shape[i + 2]! * s));
}

const scalesOf = (s: RuntimeArg): number[] | undefined => (s === null || s === undefined ? undefined : [...(s as number[])]);

defineImpl('aten.upsample_nearest2d.vec', (a) => {
  const x = T(a.input);
  return [
    resize(x, upsampleSize(x, a.output_size, a.scale_factors), {
      mode: 'nearest',
      coordinateTransformationMode: 'asymmetric',
      nearestMode: 'floor',
      scales: scalesOf(a.scale_factors),
    }),
  ];
});

defineImpl('aten.upsample_bilinear2d.vec', (a) => {
  const x = T(a.input);
  return [
    resize(x, upsampleSize(x, a.output_size, a.scale_factors), {
      mode: 'linear',
      coordinateTransformationMode: a.align_corners ? 'align_corners' : 'half_pixel',
      scales: scalesOf(a.scale_factors),
    }),
  ];
});

defineImpl('trt.resize', (a) => {
  const scales = scalesOf(a.scales) ?? null;
  const filter = generalFilter(resizeAttrs(a, scales));
  return [
    resize(T(a.self), [...(a.size as number[])], {
      mode: a.mode === 'nearest' ? 'nearest' : 'linear',
      coordinateTransformationMode: a.coordinate_transformation_mode as CoordinateTransform,
      nearestMode: a.nearest_mode as NearestMode,
      scales: scales ?? undefined,
      filter: filter ?? undefined,
    }),
  ];
});

// ---------------------------------------------------------------------------------------------
// Top-k

defineImpl('aten.topk.default', (a) => topk(T(a.self), num(a.k), num(a.dim), a.largest as boolean, a.sorted as boolean));

// ---------------------------------------------------------------------------------------------
// Attention

/** Repeats each head (dim -3) `times` times, as repeat_interleave for grouped-query attention. */
function repeatHeads(t: Tensor, heads: number): Tensor {
  const have = t.shape[t.rank - 3]!;
  if (have === heads) return t;
  if (have < 1 || heads % have !== 0) throw new InvalidArgumentError(`scaled_dot_product_attention: ${heads} query heads are not a multiple of ${have}`);
  const index = Tensor.from('int64', [heads], Array.from({ length: heads }, (_, i) => Math.floor(i / (heads / have))));
  return indexSelect(t, t.rank - 3, index);
}

defineImpl('aten.scaled_dot_product_attention.default', (a) => {
  const q = T(a.query);
  let k = T(a.key);
  let v = T(a.value);
  if (num(a.dropout_p) !== 0) throw new InvalidArgumentError('scaled_dot_product_attention: dropout_p must be 0');
  if (a.enable_gqa) {
    const heads = q.shape[q.rank - 3]!;
    k = repeatHeads(k, heads);
    v = repeatHeads(v, heads);
  }
  const E = q.shape[q.rank - 1]!;
  const scale = optNum(a.scale) ?? 1 / Math.sqrt(E);
  let scores = mul(matmul(q, transpose(k, -2, -1)), { value: scale, kind: 'float' });
  const mask = optT(a.attn_mask);
  if (mask !== null) {
    scores = mask.dtype === 'bool' ? where(mask, scores, -Infinity) : add(scores, mask);
  } else if (a.is_causal) {
    const L = q.shape[q.rank - 2]!;
    const S = k.shape[k.rank - 2]!;
    const causal = Tensor.from('bool', [L, S], Array.from({ length: L * S }, (_, i) => (i % S <= Math.floor(i / S) ? 1 : 0)));
    scores = where(causal, scores, -Infinity);
  }
  return [matmul(softmax(scores, -1), v)];
});

// einsum: lib/ir/einsum.ts's composition computed on tensors, each step by its op's implementation.
defineImpl('aten.einsum.default', (a, ctx) => {
  const step = (target: string, args: Record<string, unknown>): Tensor => {
    const impl = getImpl(target);
    if (impl === undefined) throw new InternalError(`einsum: no implementation of ${target}`);
    return impl(args as never, ctx)[0] as Tensor;
  };
  const fail = (message: string): never => {
    throw new InvalidArgumentError(`einsum ${JSON.stringify(a.equation)}: ${message}`);
  };
  const operands = (a.tensors as RuntimeArg[]).map(T);
  return [
    composeEinsum<Tensor>(
      {
        emit: step,
        constant: (t) => t,
        shape: (t) => t.shape,
        dtype: (t) => t.dtype,
        cast: (t, dtype) => (t.dtype === dtype ? t : cast(t, dtype)),
        bad: fail,
        unsupported: fail,
      },
      a.equation as string,
      operands,
    ),
  ];
});

// ---------------------------------------------------------------------------------------------
// Dropout

defineImpl('trt.dropout_onnx', (a) => {
  const self = T(a.self);
  const ratio = optT(a.ratio);
  const p = ratio === null ? 0.5 : ratio.toArray()[0]!;
  if (Boolean(T(a.training_mode).toArray()[0]) && p !== 0) {
    throw new BadInputError(`Dropout: this run sets training_mode with ratio ${p}, which drops elements at random; only runs that do not train, or drop nothing (ratio 0), are computed`, {
      details: { ratio: p },
    });
  }
  return [self, Tensor.from('bool', self.shape, new Array<number>(self.size).fill(1))];
});
