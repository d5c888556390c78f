/**
 * Converters of the neural-network ops (lib/ir/ops/nn.ts): reductions, arg-extrema, softmax,
 * cumulative sums, matrix products, convolution, pooling, normalization, attention,
 * resizing and top-k. Layer building lives in lib/conversion/impl/*; these stay thin:
 * read the node's arguments, refuse in checkArgs what TensorRT cannot do (the partitioner
 * then sends the node to a fallback segment, naming the reason), build.
 *
 * Registered for static shapes; convolution, batch norm, pooling, resize, top-k and max/min
 * along a dim also for run-time dims (`<target> (dynamic)`, see `registerDynamic`) where
 * the dims their geometry reads are static: a dynamic batch (docs/dynamic-shapes.md).
 */
import { isFloating, type DType } from '../../ir/dtype';
import { Value, type Arg, type Node } from '../../ir/graph';
import { formatDim, formatShape, isStatic, type Dim } from '../../ir/symbolic';
import { InternalError } from '../../errors';
import { atenConvGeometry, atenPoolGeometry, paddedConvGeometry, paddedPoolGeometry } from '../../ir/ops/nn-geometry';
import { machineEpsilon } from '../../kernels/norm';
import type { NetTensor } from '../../network';
import type { ConversionContext } from '../context';
import { defineConverter, staticIntArgs } from '../define';
import type { ConverterImpl } from '../registry';
import { attention } from '../impl/attention';
import { axisOf, cast, elementwise } from '../impl/basic';
import { convolution, type ConvSpec } from '../impl/conv';
import { axesOf, reshapeFromDims } from '../impl/dynamic';
import { linear, scaled, torchMatmul } from '../impl/linalg';
import { batchNorm, groupNorm, layerNorm, moments, rmsNorm } from '../impl/norm';
import {
  constantData,
  constantOf,
  filledOf,
  floatReason,
  geometryArgs,
  intList,
  isConstant,
  numArg,
  boolArg,
  optIntList,
  optNumArg,
  optValueArg,
  outDType,
  reduce,
  scalarOf,
  squeeze,
  staticShape,
  symbolicReason,
  unary,
  valueArg,
} from '../impl/nn-util';
import {
  ADAPTIVE_WINDOW_LIMIT,
  TAP_LIMIT,
  adaptivePool,
  adaptiveTapCount,
  adaptiveWindowCount,
  avgPool,
  maxPool,
  windowVolume,
  type SlidingSpec,
} from '../impl/pool';
import { argExtremum, cumsum, logsumexp, reductionAxes, reduceTo, softmax, SOFTMAX_TARGETS, topk } from '../impl/reduce';
import { resize, type CoordinateMode, type NearestMode, type ResizeSpec } from '../impl/resize';
import { generalFilter, resizeAttrs } from '../../kernels/resize-coords';

// ---------------------------------------------------------------------------------------------
// Registration helpers

type Reason = (node: Node) => string | null;

/** Registers `impl` for static shapes, with the shared static-value check before the converter's own checks. */
function register(target: string, impl: ConverterImpl, ...more: Reason[]): void {
  defineConverter(target, impl, { checks: [symbolicReason, ...more] });
}

/**
 * Registers `impl` for static shapes (as `register`) and for nodes with run-time dims
 * (`<target> (dynamic)`): int arguments must be static (ops whose ints hold SymInts are the
 * legalization's), then `dims` says which dims the converter reads must be static, then the
 * converter's own checks. The layer builders copy every other dim at run time.
 */
function registerDynamic(target: string, impl: ConverterImpl, dims: Reason, ...more: Reason[]): void {
  register(target, impl, ...more);
  defineConverter(target, impl, { shapes: 'dynamic', checks: [staticIntArgs, dims, ...more] });
}

/** The last `n` dims of `v` as numbers (the converters read them only after `staticTrailing` passed). */
function trailing(v: Value, n: number): number[] {
  const shape = v.tensorType.shape;
  return staticShapeOf(shape.slice(shape.length - n), v.name);
}

function staticShapeOf(dims: readonly Dim[], name: string): number[] {
  return dims.map((d) => {
    if (typeof d !== 'number') throw new InternalError(`%${name}: dim ${formatDim(d)} is not static`);
    return d;
  });
}

/** A reason unless dims `axes(rank)` of `v` are static. */
function staticAxes(v: Value, axes: readonly number[], what: string): string | null {
  const shape = v.tensorType.shape;
  const bad = axes.filter((a) => !isStatic(shape[a]!));
  return bad.length === 0 ? null : `the ${what} of %${v.name} (dim ${bad.join(', ')}) must be static: ${formatShape(shape)}`;
}

/** The last `n` dims (spatial) of input `name` and of output 0 must be static. */
const staticSpatial =
  (name: string, n: (node: Node) => number) =>
  (node: Node): string | null => {
    const count = n(node);
    const x = valueArg(node, name);
    const out = node.outputs[0]!;
    const axesIn = Array.from({ length: count }, (_, i) => x.tensorType.shape.length - count + i);
    const axesOut = Array.from({ length: count }, (_, i) => out.tensorType.shape.length - count + i);
    return staticAxes(x, axesIn, 'spatial dims') ?? staticAxes(out, axesOut, 'spatial dims');
  };

const input = (ctx: ConversionContext, node: Node, name: string): NetTensor => ctx.tensor(valueArg(node, name));
const optInput = (ctx: ConversionContext, node: Node, name: string): NetTensor | null => {
  const v = optValueArg(node, name);
  return v === null ? null : ctx.tensor(v);
};
const rankOf = (node: Node, name: string): number => valueArg(node, name).tensorType.shape.length;

/** Refuses non-float operands (TensorRT's matrix multiply takes only floats). */
const floatOperands =
  (...names: string[]) =>
  (node: Node): string | null => {
    for (const name of names) {
      const v = optValueArg(node, name);
      const r = v && floatReason(v, name);
      if (r) return r;
    }
    return null;
  };

/** Types the cumulative layer takes. */
const CUMULATIVE_TYPES = new Set<DType>(['int32', 'int64', 'float16', 'float32', 'bfloat16', 'float64']);

// ---------------------------------------------------------------------------------------------
// Reductions

function reduction(op: 'sum' | 'avg' | 'prod' | 'max' | 'min', dims: (node: Node) => number[] | null, keepdim: (node: Node) => boolean): ConverterImpl {
  return (node, ctx) => {
    const x = input(ctx, node, 'self');
    const axes = reductionAxes(ctx, x.shape.length, dims(node));
    return [reduceTo(ctx, x, op, axes, keepdim(node), outDType(node))];
  };
}

const all = (): null => null;
const noKeep = (): boolean => false;
const keep = (node: Node): boolean => boolArg(node, 'keepdim');

register('aten.sum.dim_IntList', reduction('sum', (n) => optIntList(n, 'dim'), keep));
register('aten.sum.default', reduction('sum', all, noKeep));
register('aten.mean.dim', reduction('avg', (n) => optIntList(n, 'dim'), keep));
register('aten.mean.default', reduction('avg', all, noKeep));
register('aten.prod.dim_int', reduction('prod', (n) => [numArg(n, 'dim')], keep));
register('aten.prod.default', reduction('prod', all, noKeep));
register('aten.amax.default', reduction('max', (n) => intList(n, 'dim'), keep));
register('aten.amin.default', reduction('min', (n) => intList(n, 'dim'), keep));
register('aten.max.default', reduction('max', all, noKeep));
register('aten.min.default', reduction('min', all, noKeep));

/** Top-k (and max/min along a dim) reads the size of the axis it selects along. */
function staticReducedAxis(node: Node): string | null {
  const x = valueArg(node, 'self');
  const rank = x.tensorType.shape.length;
  if (rank === 0) return null;
  const d = numArg(node, 'dim');
  return staticAxes(x, [d < 0 ? d + rank : d], 'dim selected along');
}

for (const [name, op] of [
  ['max', 'max'],
  ['min', 'min'],
] as const) {
  // Values and indices from one top-k with k = 1.
  registerDynamic(`aten.${name}.dim`, (node, ctx) => {
    const x = input(ctx, node, 'self');
    const rank = x.shape.length;
    if (rank === 0) return [ctx.add({ kind: 'identity' }, [x]), constantOf(ctx, 'int64', [], [0], 'index')];
    const axis = axisOf(ctx, numArg(node, 'dim'), rank);
    const [values, indices] = topk(ctx, x, op, 1, axis);
    return boolArg(node, 'keepdim') ? [values, indices] : [squeeze(ctx, values, [axis], 'values'), squeeze(ctx, indices, [axis], 'indices')];
  }, staticReducedAxis);
  register(`aten.arg${name}.default`, (node, ctx) => [argExtremum(ctx, input(ctx, node, 'self'), op, optNumArg(node, 'dim'), boolArg(node, 'keepdim'))]);
  register(`trt.arg${name}_last`, (node, ctx) => [argExtremum(ctx, input(ctx, node, 'self'), op, numArg(node, 'dim'), boolArg(node, 'keepdim'), true)]);
}

register('aten.logsumexp.default', (node, ctx) => {
  const x = input(ctx, node, 'self');
  const axes = reductionAxes(ctx, x.shape.length, intList(node, 'dim'));
  return [logsumexp(ctx, x, axes, boolArg(node, 'keepdim'), outDType(node))];
});

register(
  'aten.linalg_vector_norm.default',
  (node, ctx) => {
    const dtype = outDType(node);
    const x = cast(ctx, input(ctx, node, 'self'), dtype, 'cast_in');
    const axes = reductionAxes(ctx, x.shape.length, optIntList(node, 'dim'));
    const keepdim = boolArg(node, 'keepdim');
    const ord = numArg(node, 'ord');
    const magnitude = unary(ctx, x, 'abs');
    if (ord === Infinity) return [reduce(ctx, magnitude, 'max', axes, keepdim)];
    if (ord === -Infinity) return [reduce(ctx, magnitude, 'min', axes, keepdim)];
    if (ord === 0) {
      const nonzero = unary(ctx, ctx.add({ kind: 'elementwise', op: 'equal' }, [x, scalarOf(ctx, 0, x.dtype, x.shape.length, 'zero')], 'is_zero'), 'not', 'nonzero');
      return [reduce(ctx, cast(ctx, nonzero, dtype, 'count'), 'sum', axes, keepdim)];
    }
    if (ord === 1) return [reduce(ctx, magnitude, 'sum', axes, keepdim)];
    if (ord === 2) return [unary(ctx, reduce(ctx, ctx.add({ kind: 'elementwise', op: 'prod' }, [x, x], 'square'), 'sum', axes, keepdim), 'sqrt', 'norm')];
    const power = (t: NetTensor, p: number, role: string): NetTensor =>
      ctx.add({ kind: 'elementwise', op: 'pow' }, [t, scalarOf(ctx, p, t.dtype, t.shape.length, `${role}_exponent`)], role);
    return [power(reduce(ctx, power(magnitude, ord, 'pow'), 'sum', axes, keepdim), 1 / ord, 'root')];
  },
  (node) => (typeof node.args.ord === 'number' ? null : 'ord must be a number'),
);

// ---------------------------------------------------------------------------------------------
// Softmax and cumulative sums

for (const [target, log] of SOFTMAX_TARGETS) {
  register(target, (node, ctx) => [softmax(ctx, input(ctx, node, 'self'), numArg(node, 'dim'), outDType(node), log)]);
}

const cumulativeType: Reason = (node) => (CUMULATIVE_TYPES.has(outDType(node)) ? null : `TensorRT's cumulative layer does not compute ${outDType(node)}`);
// The cumulative layer reads the rank only: run-time dims (the scanned one too) are fine.
const anyDims: Reason = () => null;

registerDynamic('aten.cumsum.default', (node, ctx) => [cumsum(ctx, input(ctx, node, 'self'), numArg(node, 'dim'), outDType(node))], anyDims, cumulativeType);

registerDynamic(
  'trt.cumsum_onnx',
  (node, ctx) => [cumsum(ctx, input(ctx, node, 'self'), numArg(node, 'dim'), outDType(node), boolArg(node, 'exclusive'), boolArg(node, 'reverse'))],
  anyDims,
  cumulativeType,
);

// ---------------------------------------------------------------------------------------------
// Matrix products

register('aten.matmul.default', (node, ctx) => [torchMatmul(ctx, input(ctx, node, 'self'), input(ctx, node, 'other'))], floatOperands('self', 'other'));
register('aten.mm.default', (node, ctx) => [torchMatmul(ctx, input(ctx, node, 'self'), input(ctx, node, 'mat2'))], floatOperands('self', 'mat2'));
register('aten.bmm.default', (node, ctx) => [torchMatmul(ctx, input(ctx, node, 'self'), input(ctx, node, 'mat2'))], floatOperands('self', 'mat2'));

register(
  'aten.addmm.default',
  (node, ctx) => {
    const product = scaled(ctx, torchMatmul(ctx, input(ctx, node, 'mat1'), input(ctx, node, 'mat2')), numArg(node, 'alpha'), 'alpha');
    const beta = numArg(node, 'beta');
    // beta = 0 ignores self entirely (NaN and inf included), as PyTorch does.
    if (beta === 0) return [product];
    const bias = input(ctx, node, 'self');
    return [elementwise(ctx, product, scaled(ctx, bias, beta, 'beta'), 'sum', product.dtype, 'add')];
  },
  floatOperands('self', 'mat1', 'mat2'),
  (node) => (typeof node.args.alpha === 'number' && typeof node.args.beta === 'number' ? null : 'alpha and beta must be numbers'),
);

register(
  'aten.linear.default',
  (node, ctx) => [linear(ctx, input(ctx, node, 'input'), input(ctx, node, 'weight'), optInput(ctx, node, 'bias'))],
  floatOperands('input', 'weight', 'bias'),
);

// ---------------------------------------------------------------------------------------------
// Convolution

/**
 * TensorRT's (de)convolution layers take the kernel and bias as build-time weights, or the
 * kernel as a tensor when a dequantize of constant quantized weights makes it (TensorRT's
 * explicit quantization).
 */
function constantWeights(node: Node): string | null {
  if (!isConstant(node.args.weight) && !isDequantizedConstant(node.args.weight)) {
    return 'the convolution weight is not a constant or a dequantized constant (TensorRT needs build-time kernel weights)';
  }
  const bias = node.args.bias;
  if (bias !== null && bias !== undefined && !isConstant(bias)) return 'the convolution bias is not a constant (TensorRT needs build-time bias weights)';
  return null;
}

const spatialOf = (node: Node): number => rankOf(node, 'weight') - 2;

/** The dequantize ops, with the argument that holds the quantized values. */
const DEQUANTIZE_INPUTS: Readonly<Record<string, string>> = {
  'trt.dequantize_linear': 'self',
  'quantized_decomposed.dequantize_per_tensor.default': 'input',
  'quantized_decomposed.dequantize_per_channel.default': 'input',
};

/** Whether `a` is a dequantize of constant quantized values (a quantized weight). */
function isDequantizedConstant(a: Arg | undefined): boolean {
  if (!(a instanceof Value) || a.producer.kind !== 'call') return false;
  const arg = DEQUANTIZE_INPUTS[a.producer.target];
  return arg !== undefined && isConstant(a.producer.args[arg]);
}

/**
 * The (de)convolution layer needs a static channel dim; a transposed convolution whose
 * output padding exceeds its padding adds rows by a slice sized from static spatial dims.
 */
function convDims(transposedSpec: (node: Node) => ConvSpec | Omit<ConvSpec, 'transposed'> | null): Reason {
  return (node) => {
    const x = valueArg(node, 'input');
    const channels = staticAxes(x, [1], 'channel dim');
    if (channels) return channels;
    const spec = transposedSpec(node);
    if (spec === null || spec.padEnd.every((p, i) => p >= spec.outputPadding[i]!)) return null;
    const rank = x.tensorType.shape.length;
    return staticAxes(x, Array.from({ length: rank - 2 }, (_, i) => 2 + i), 'spatial dims (output padding beyond the padding)');
  };
}

function convImpl(spec: (node: Node, n: number) => ConvSpec): ConverterImpl {
  return (node, ctx) => {
    const w = valueArg(node, 'weight');
    const weight = isConstant(w) ? constantData(w) : ctx.tensor(w);
    const bias = optValueArg(node, 'bias');
    return [convolution(ctx, input(ctx, node, 'input'), weight, bias === null ? null : constantData(bias), spec(node, spatialOf(node)))];
  };
}

registerDynamic(
  'aten.convolution.default',
  convImpl((node, n) => {
    const transposed = boolArg(node, 'transposed');
    return { ...atenConvGeometry(geometryArgs(node), n, transposed), transposed };
  }),
  convDims((node) => {
    const transposed = boolArg(node, 'transposed');
    return transposed ? atenConvGeometry(geometryArgs(node), spatialOf(node), true) : null;
  }),
  constantWeights,
);

registerDynamic(
  'trt.conv_padded',
  convImpl((node, n) => paddedConvGeometry(geometryArgs(node), n, false)),
  convDims(() => null),
  constantWeights,
);

registerDynamic(
  'trt.conv_transpose_padded',
  convImpl((node, n) => ({ ...paddedConvGeometry(geometryArgs(node), n, true), outputPadding: intList(node, 'output_padding', n) })),
  convDims((node) => ({ ...paddedConvGeometry(geometryArgs(node), spatialOf(node), true), outputPadding: intList(node, 'output_padding', spatialOf(node)) })),
  constantWeights,
);

// ---------------------------------------------------------------------------------------------
// Pooling

/** Types TensorRT's pooling layer takes; other max pools are computed in int32 taps (values cast back). */
const NARROW = new Set<string>(['bool', 'uint8', 'int8']);

/** The IR's output spatial sizes of a pool with `n` spatial dims. */
function pooledOut(node: Node, n: number): number[] {
  return trailing(node.outputs[0]!, n);
}

/** Sliding geometry of an ATen pool (stride [] means the kernel). */
function atenPool(node: Node, n: number, hasDilation: boolean): SlidingSpec {
  return { ...atenPoolGeometry(geometryArgs(node), n, hasDilation), out: pooledOut(node, n) };
}

/** Sliding geometry of an ONNX-form trt pool (begin/end pads). */
function paddedPool(node: Node, hasDilation: boolean): SlidingSpec {
  const n = intList(node, 'kernel_size').length;
  return { ...paddedPoolGeometry(geometryArgs(node), n, hasDilation), out: pooledOut(node, n) };
}

/** Max pool values (and indices), narrow types through int32. */
function maxPoolOf(ctx: ConversionContext, node: Node, spec: SlidingSpec, withIndices: boolean): [NetTensor, NetTensor | null] {
  const x = input(ctx, node, 'self');
  const via = NARROW.has(x.dtype) ? cast(ctx, x, 'int32', 'widen') : x;
  const [values, indices] = maxPool(ctx, via, spec.kernel.length, spec, withIndices);
  return [cast(ctx, values, x.dtype, 'narrow'), indices];
}

/** Taps are built per window position: refuse huge windows where they are needed. */
function tapsNeeded(withIndices: boolean, spec: (node: Node) => SlidingSpec) {
  return (node: Node): string | null => {
    const s = spec(node);
    const dtype = valueArg(node, 'self').tensorType.dtype;
    const composed = withIndices || !isFloating(dtype) || s.dilation.some((d) => d !== 1);
    const volume = windowVolume(s.kernel);
    if (composed && volume > TAP_LIMIT) {
      return `a ${s.kernel.join('x')} window has ${volume} positions; ${withIndices ? 'the indices output' : 'a dilated or integer max pool'} is composed per position, at most ${TAP_LIMIT}`;
    }
    return null;
  };
}

for (const n of [1, 2, 3]) {
  const spec = (node: Node): SlidingSpec => atenPool(node, n, true);
  const spatial = staticSpatial('self', () => n);
  registerDynamic(`aten.max_pool${n}d.default`, (node, ctx) => [maxPoolOf(ctx, node, spec(node), false)[0]], spatial, tapsNeeded(false, spec));
  // The indices are composed from taps: only built when something reads them.
  registerDynamic(
    `aten.max_pool${n}d_with_indices.default`,
    (node, ctx) => maxPoolOf(ctx, node, spec(node), ctx.isUsed(node.outputs[1]!)),
    spatial,
    tapsNeeded(true, spec),
  );
  registerDynamic(
    `aten.avg_pool${n}d.default`,
    (node, ctx) => [
      avgPool(ctx, input(ctx, node, 'self'), n, {
        ...atenPool(node, n, false),
        countIncludePad: boolArg(node, 'count_include_pad'),
        divisorOverride: n === 1 ? null : optNumArg(node, 'divisor_override'),
      }),
    ],
    spatial,
  );
}

const paddedSpatial = staticSpatial('self', (node) => intList(node, 'kernel_size').length);

registerDynamic(
  'trt.max_pool_padded',
  (node, ctx) => [maxPoolOf(ctx, node, paddedPool(node, true), false)[0]],
  paddedSpatial,
  tapsNeeded(false, (node) => paddedPool(node, true)),
);

register(
  'trt.max_pool_onnx_indices',
  (node, ctx) => {
    const [values, indices] = maxPoolOf(ctx, node, paddedPool(node, true), true);
    // ONNX's indices count over the whole [N, C, ...] tensor: add each plane's offset.
    const shape = staticShape(valueArg(node, 'self'));
    const plane = shape.slice(2).reduce((a, d) => a * d, 1);
    const [N, C] = [shape[0]!, shape[1]!];
    const offsets = Array.from({ length: N * C }, (_, p) => p * plane);
    const offset = constantOf(ctx, 'int64', [N, C, ...shape.slice(2).map(() => 1)], offsets, 'plane_offset');
    return [values, ctx.add({ kind: 'elementwise', op: 'sum' }, [indices!, offset], 'global_indices')];
  },
  tapsNeeded(true, (node) => paddedPool(node, true)),
);

registerDynamic(
  'trt.avg_pool_padded',
  (node, ctx) => [
    avgPool(ctx, input(ctx, node, 'self'), intList(node, 'kernel_size').length, {
      ...paddedPool(node, false),
      countIncludePad: boolArg(node, 'count_include_pad'),
      divisorOverride: null,
    }),
  ],
  paddedSpatial,
);

/** The adaptive pool's input spatial sizes and output sizes. */
function adaptiveSizes(node: Node, n: number): { inSizes: number[]; out: number[] } {
  return { inSizes: trailing(valueArg(node, 'self'), n), out: trailing(node.outputs[0]!, n) };
}

function adaptiveChecks(n: number, withIndices: boolean) {
  return (node: Node): string | null => {
    const { inSizes, out } = adaptiveSizes(node, n);
    if (out.some((o) => o < 1)) return `output size [${out.join(', ')}] is empty`;
    const windows = inSizes.map((d, i) => adaptiveWindowCount(d, out[i]!));
    if (windows.some((w) => w > ADAPTIVE_WINDOW_LIMIT)) {
      return `pooling [${inSizes.join(', ')}] to [${out.join(', ')}] needs uneven windows, composed per window (at most ${ADAPTIVE_WINDOW_LIMIT} per dim)`;
    }
    if (withIndices && !out.every((o) => o === 1)) {
      const taps = adaptiveTapCount(inSizes, out);
      if (taps > TAP_LIMIT) return `the indices of adaptive windows over [${inSizes.join(', ')}] need ${taps} window positions, at most ${TAP_LIMIT}`;
    }
    return null;
  };
}

for (const n of [1, 2, 3]) {
  const avg: ConverterImpl = (node, ctx) => [adaptivePool(ctx, input(ctx, node, 'self'), n, adaptiveSizes(node, n).out, 'avg', false)[0]];
  const spatial = staticSpatial('self', () => n);
  registerDynamic(`aten.adaptive_avg_pool${n}d.default`, avg, spatial, adaptiveChecks(n, false));
  if (n > 1) registerDynamic(`aten._adaptive_avg_pool${n}d.default`, avg, spatial, adaptiveChecks(n, false));
  registerDynamic(
    `aten.adaptive_max_pool${n}d.default`,
    (node, ctx) => {
      const x = input(ctx, node, 'self');
      const via = NARROW.has(x.dtype) ? cast(ctx, x, 'int32', 'widen') : x;
      const { out } = adaptiveSizes(node, n);
      if (out.every((o) => o === 1)) {
        // Global: values and indices from one top-k over the flattened spatial dims.
        const lead = axesOf(via, 0, via.shape.length - n);
        const flat = reshapeFromDims(ctx, via, [...lead, via.shape.slice(lead.length).reduce((a, d) => a * d, 1)], 'flatten');
        const [values, indices] = topk(ctx, flat, 'max', 1, lead.length);
        const shape = [...lead, ...out];
        return [cast(ctx, reshapeFromDims(ctx, values, shape, 'values'), x.dtype, 'narrow'), reshapeFromDims(ctx, indices, shape, 'indices')];
      }
      const [values, indices] = adaptivePool(ctx, via, n, out, 'max', true);
      return [cast(ctx, values, x.dtype, 'narrow'), indices!];
    },
    spatial,
    adaptiveChecks(n, true),
  );
}

// ---------------------------------------------------------------------------------------------
// Normalization

const normalizedCount = (node: Node): number => intList(node, 'normalized_shape').length;

register('aten.layer_norm.default', (node, ctx) => [
  layerNorm(ctx, input(ctx, node, 'input'), normalizedCount(node), optInput(ctx, node, 'weight'), optInput(ctx, node, 'bias'), numArg(node, 'eps')),
]);

register('aten.native_layer_norm.default', (node, ctx) => {
  const x = input(ctx, node, 'input');
  const n = normalizedCount(node);
  const eps = numArg(node, 'eps');
  const out = layerNorm(ctx, x, n, optInput(ctx, node, 'weight'), optInput(ctx, node, 'bias'), eps);
  // The statistics (TensorRT drops them when nothing reads them).
  const rank = x.shape.length;
  const { mean, rstd } = moments(ctx, x, Array.from({ length: n }, (_, i) => rank - n + i), eps);
  return [out, cast(ctx, mean, outDType(node, 1), 'mean_out'), cast(ctx, rstd, outDType(node, 2), 'rstd_out')];
});

register('aten.rms_norm.default', (node, ctx) => {
  const x = valueArg(node, 'input');
  const eps = optNumArg(node, 'eps') ?? machineEpsilon(x.tensorType.dtype);
  return [rmsNorm(ctx, ctx.tensor(x), normalizedCount(node), optInput(ctx, node, 'weight'), eps)];
});

/** A batch-norm parameter: its data when constant (folded), else its network tensor. */
function bnParam(ctx: ConversionContext, node: Node, name: string) {
  const v = optValueArg(node, name);
  if (v === null) return null;
  return isConstant(v) ? constantData(v) : ctx.tensor(v);
}

function batchNormOf(ctx: ConversionContext, node: Node): NetTensor {
  return batchNorm(
    ctx,
    input(ctx, node, 'input'),
    { mean: bnParam(ctx, node, 'running_mean')!, variance: bnParam(ctx, node, 'running_var')!, weight: bnParam(ctx, node, 'weight'), bias: bnParam(ctx, node, 'bias') },
    numArg(node, 'eps'),
  );
}

/** Batch norm reads the channel count (dim 1). */
const staticChannels = (node: Node): string | null => staticAxes(valueArg(node, 'input'), [1], 'channel dim');

registerDynamic('aten.batch_norm.default', (node, ctx) => [batchNormOf(ctx, node)], staticChannels, (node) =>
  boolArg(node, 'training') ? 'training-mode batch_norm updates running statistics; export the model in eval() mode' : null,
);

registerDynamic('aten._native_batch_norm_legit_no_training.default', (node, ctx) => {
  const out = batchNormOf(ctx, node);
  // save_mean and save_invstd are empty in inference.
  return [out, filledOf(ctx, 0, out.dtype, [0], 'save_mean'), filledOf(ctx, 0, out.dtype, [0], 'save_invstd')];
}, staticChannels);

register('aten.group_norm.default', (node, ctx) => [
  groupNorm(ctx, input(ctx, node, 'input'), numArg(node, 'num_groups'), optInput(ctx, node, 'weight'), optInput(ctx, node, 'bias'), numArg(node, 'eps')).out,
]);

register('aten.native_group_norm.default', (node, ctx) => {
  const { out, mean, rstd } = groupNorm(ctx, input(ctx, node, 'input'), numArg(node, 'group'), optInput(ctx, node, 'weight'), optInput(ctx, node, 'bias'), numArg(node, 'eps'));
  return [out, mean, rstd];
});

// ---------------------------------------------------------------------------------------------
// Attention

register(
  'aten.scaled_dot_product_attention.default',
  (node, ctx) => [
    attention(ctx, input(ctx, node, 'query'), input(ctx, node, 'key'), input(ctx, node, 'value'), {
      mask: optInput(ctx, node, 'attn_mask'),
      causal: boolArg(node, 'is_causal'),
      scale: optNumArg(node, 'scale'),
    }),
  ],
  (node) => (numArg(node, 'dropout_p') !== 0 ? 'dropout_p must be 0 in inference' : null),
);

// ---------------------------------------------------------------------------------------------
// Resizing

function scalesArg(node: Node, name: string): number[] | null {
  const a = node.args[name];
  return Array.isArray(a) ? (a as number[]) : null;
}

/** The resized dims (all but N and C) must be static in the input and the output. */
const resizeSpatial = (name: string): Reason => staticSpatial(name, (node) => valueArg(node, name).tensorType.shape.length - 2);

function resizeImpl(spec: (node: Node) => ResizeSpec, inputName: string): ConverterImpl {
  return (node, ctx) => {
    const x = input(ctx, node, inputName);
    return [resize(ctx, x, trailing(node.outputs[0]!, node.outputs[0]!.tensorType.shape.length - 2), spec(node))];
  };
}

registerDynamic(
  'aten.upsample_nearest2d.vec',
  resizeImpl((node) => ({ mode: 'nearest', coordinate: 'asymmetric', nearest: 'floor', scales: node.args.output_size === null ? scalesArg(node, 'scale_factors') : null }), 'input'),
  resizeSpatial('input'),
);

registerDynamic(
  'aten.upsample_bilinear2d.vec',
  resizeImpl(
    (node) => ({
      mode: 'linear',
      coordinate: boolArg(node, 'align_corners') ? 'align_corners' : 'half_pixel',
      nearest: 'floor',
      scales: node.args.output_size === null ? scalesArg(node, 'scale_factors') : null,
    }),
    'input',
  ),
  resizeSpatial('input'),
);

registerDynamic(
  'trt.resize',
  resizeImpl(
    (node) => ({
      mode: node.args.mode === 'nearest' ? 'nearest' : 'linear',
      coordinate: node.args.coordinate_transformation_mode as CoordinateMode,
      nearest: node.args.nearest_mode as NearestMode,
      scales: scalesArg(node, 'scales'),
      filter: generalFilter(resizeAttrs(node.args, scalesArg(node, 'scales'))),
    }),
    'self',
  ),
  resizeSpatial('self'),
);

// ---------------------------------------------------------------------------------------------
// Top-k

registerDynamic(
  'aten.topk.default',
  (node, ctx) => {
    const x = input(ctx, node, 'self');
    const axis = x.shape.length === 0 ? 0 : axisOf(ctx, numArg(node, 'dim'), x.shape.length);
    return topk(ctx, x, boolArg(node, 'largest') ? 'max' : 'min', numArg(node, 'k'), axis);
  },
  staticReducedAxis,
  (node) => {
    const k = numArg(node, 'k');
    if (k < 1) return `k = ${k}: TensorRT's top-k needs k >= 1`;
    if (k > 3840) return `k = ${k} exceeds TensorRT's top-k limit of 3840`;
    return null;
  },
);
