/**
 * ONNX mappers of the neural-network ops: reductions, softmax, CumSum, MatMul/Gemm,
 * normalization, convolution, pooling, Resize and TopK (opsets 7–28).
 *
 * They map onto the ATen ops of lib/ir/ops/nn.ts where the semantics agree exactly and onto
 * the `trt.` ops declared there where ONNX goes further (begin/end pads that differ, Resize
 * coordinate modes PyTorch lacks, CumSum exclusive/reverse, ArgMax select_last_index).
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { exactScaledDim } from '../../../ir/ops/nn';
import { dimEquals, isStatic, type Dim } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext, OnnxResult } from '../context';
import { defineOnnxOp } from '../registry';

// ---------------------------------------------------------------------------------------------
// Helpers

const fmtDims = (dims: readonly Dim[]): string => `[${dims.map((d) => (typeof d === 'number' ? d : JSON.stringify(d))).join(', ')}]`;

/** True when output `i` of the node is requested (present with a non-empty name). */
export function wantsOutput(ctx: OnnxContext, i: number): boolean {
  return i < ctx.node.outputs.length && ctx.node.outputs[i] !== '';
}

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/** A per-spatial-dim attribute list of length `n` (default `fill`), checked. */
function spatialAttr(ctx: OnnxContext, name: string, n: number, fill: number, min: number): number[] {
  const v = ctx.attrInts(name, new Array<number>(n).fill(fill));
  if (v.length !== n) ctx.bad(`attribute ${name} [${v.join(', ')}] must have ${n} elements (one per spatial dim)`);
  if (v.some((x) => x < min)) ctx.bad(`attribute ${name} [${v.join(', ')}] must be >= ${min}`);
  return v;
}

interface Pads {
  begin: number[];
  end: number[];
}

/**
 * Begin/end pads from auto_pad and pads, for Conv and the pools. SAME_* keeps
 * ceil(in / stride) outputs; with stride 1 that needs no static input size.
 */
function resolvePads(ctx: OnnxContext, inSpatial: readonly Dim[], kernel: readonly number[], stride: readonly number[], dilation: readonly number[]): Pads {
  const n = kernel.length;
  const auto = ctx.attrString('auto_pad', 'NOTSET');
  switch (auto) {
    case 'NOTSET': {
      const pads = ctx.attrInts('pads', new Array<number>(2 * n).fill(0));
      if (pads.length !== 2 * n) ctx.bad(`attribute pads [${pads.join(', ')}] must have ${2 * n} elements`);
      if (pads.some((p) => p < 0)) ctx.bad(`attribute pads [${pads.join(', ')}] must be non-negative`);
      return { begin: pads.slice(0, n), end: pads.slice(n) };
    }
    case 'VALID':
      return { begin: new Array<number>(n).fill(0), end: new Array<number>(n).fill(0) };
    case 'SAME_UPPER':
    case 'SAME_LOWER': {
      const begin: number[] = [];
      const end: number[] = [];
      inSpatial.forEach((d, i) => {
        const span = dilation[i]! * (kernel[i]! - 1) + 1;
        let total: number;
        if (stride[i] === 1) total = span - 1;
        else if (typeof d === 'number') total = Math.max(0, (Math.ceil(d / stride[i]!) - 1) * stride[i]! + span - d);
        else return ctx.unsupported(`auto_pad ${auto} with stride ${stride[i]} needs a static input size (spatial dim ${i} is symbolic)`);
        const [b, e] = splitPad(total, auto);
        begin.push(b);
        end.push(e);
      });
      return { begin, end };
    }
    default:
      return ctx.bad(`unknown auto_pad ${JSON.stringify(auto)}`);
  }
}

/** Splits a total padding into [begin, end]: the odd pixel goes to the end for SAME_UPPER, to the start otherwise. */
function splitPad(total: number, auto: string): [number, number] {
  const small = Math.floor(total / 2);
  return auto === 'SAME_UPPER' ? [small, total - small] : [total - small, small];
}

const symmetric = (p: Pads): boolean => p.begin.every((b, i) => b === p.end[i]);

/** The static kernel size of a convolution weight [O, I, *k], checked against kernel_shape. */
function convKernel(ctx: OnnxContext, weight: Value): number[] {
  const k = weight.tensorType.shape.slice(2);
  if (!k.every(isStatic)) ctx.unsupported(`the weight's kernel size ${fmtDims(k)} must be static`);
  if (ctx.has('kernel_shape')) {
    const attr = ctx.attrInts('kernel_shape');
    if (attr.length !== k.length || attr.some((v, i) => v !== k[i])) ctx.bad(`kernel_shape [${attr.join(', ')}] does not match the weight's ${fmtDims(k)}`);
  }
  return k as number[];
}

// ---------------------------------------------------------------------------------------------
// Reductions

/**
 * The axes of a Reduce* node: an input from `inputSince` on (an attribute before), with
 * noop_with_empty_axes. Returns null for the identity (no axes and noop), [] for all axes.
 */
function reduceAxes(ctx: OnnxContext, inputSince: number): number[] | null {
  const fromInput = ctx.opset >= inputSince;
  const axes = fromInput ? (ctx.hasInput(1) ? ctx.staticInts(1, 'axes') : []) : ctx.attrInts('axes', []);
  const noop = fromInput ? ctx.attrInt('noop_with_empty_axes', 0) : 0;
  return axes.length === 0 && noop === 1 ? null : axes;
}

const keepdims = (ctx: OnnxContext): boolean => ctx.attrInt('keepdims', 1) === 1;

/** A reduction whose ATen op takes `self`, `dim` (a list) and `keepdim`. */
function defineReduce(
  opType: string,
  inputSince: number,
  emit: (ctx: OnnxContext, x: Value, axes: number[], keepdim: boolean) => Value,
  /** With noop_with_empty_axes and no axes, ONNX still applies the op's elementwise part (|x|, x²). */
  noop: (ctx: OnnxContext, x: Value) => Value = (_ctx, x) => x,
): void {
  defineOnnxOp(opType, (ctx) => {
    const x = ctx.input(0);
    const axes = reduceAxes(ctx, inputSince);
    if (axes === null) {
      // No axes with noop_with_empty_axes: nothing is reduced, so keepdims has nothing to keep.
      ctx.ignoreAttributes('keepdims');
      return [noop(ctx, x)];
    }
    return [emptyReduction(ctx, x, axes) ?? emit(ctx, x, axes, keepdims(ctx))];
  });
}

/** What ONNX's min/max-like reductions give over an empty set (floating point): their identity. */
const EMPTY_SET: Record<string, number> = { ReduceMin: Infinity, ReduceMax: -Infinity, ReduceLogSumExp: -Infinity };

/** The identity-filled result of a reduction over a static size-0 axis, where ATen's would fail; else null. */
function emptyReduction(ctx: OnnxContext, x: Value, axes: number[]): Value | null {
  const fill = EMPTY_SET[ctx.node.opType];
  const shape = x.tensorType.shape;
  const rank = shape.length;
  const list = (axes.length === 0 ? range(0, rank) : axes).map((a) => (a < 0 ? a + rank : a));
  if (fill === undefined || !isFloating(x.tensorType.dtype) || !list.some((a) => shape[a] === 0)) return null;
  const keep = keepdims(ctx);
  const out = shape.flatMap((d, i) => (!list.includes(i) ? [d] : keep ? [1] : []));
  return ctx.emit('aten.full.default', { size: out.map((d) => ctx.dimArg(d)), fill_value: fill, dtype: x.tensorType.dtype });
}

function floatOnly(ctx: OnnxContext, x: Value): void {
  if (!isFloating(x.tensorType.dtype)) ctx.unsupported(`${ctx.node.opType} of ${x.tensorType.dtype} tensors is not supported (floating-point only)`);
}

/**
 * A floating-point-only reduction: emits `target` with self, the `extra` arguments, dim and
 * keepdim.
 */
function floatReduction(target: string, extra: Parameters<OnnxContext['emit']>[1] = {}): (ctx: OnnxContext, x: Value, axes: number[], keepdim: boolean) => Value {
  return (ctx, x, axes, keepdim) => {
    floatOnly(ctx, x);
    return ctx.emit(target, { self: x, ...extra, dim: axes, keepdim });
  };
}

/** ONNX keeps the input type of sums and products; ATen would widen integers to int64. */
const keepType = (x: Value): string | null => (isFloating(x.tensorType.dtype) ? null : x.tensorType.dtype);

defineReduce('ReduceSum', 13, (ctx, x, axes, keepdim) => ctx.emit('aten.sum.dim_IntList', { self: x, dim: axes, keepdim, dtype: keepType(x) }));
defineReduce('ReduceMean', 18, floatReduction('aten.mean.dim'));
defineReduce('ReduceMax', 18, (ctx, x, axes, keepdim) => ctx.emit('aten.amax.default', { self: x, dim: axes, keepdim }));
defineReduce('ReduceMin', 18, (ctx, x, axes, keepdim) => ctx.emit('aten.amin.default', { self: x, dim: axes, keepdim }));
defineReduce('ReduceProd', 18, (ctx, x, axes, keepdim) => {
  // prod has a single-dim overload only: one node per axis, highest axis first.
  const rank = x.tensorType.shape.length;
  const list = axes.length === 0 ? range(0, rank) : axes.map((a) => (a < 0 ? a + rank : a));
  if (list.some((a) => a < 0 || a >= Math.max(rank, 1))) ctx.bad(`axes [${axes.join(', ')}] are out of range for rank ${rank}`);
  if (new Set(list).size !== list.length) ctx.bad(`axes [${axes.join(', ')}] repeat an axis`);
  if (list.length === 0) list.push(0); // a 0-d input: prod over "dim 0" keeps it
  let v = x;
  for (const a of [...list].sort((p, q) => q - p)) v = ctx.emit('aten.prod.dim_int', { self: v, dim: a, keepdim, dtype: keepType(x) });
  return v;
});
const absolute = (ctx: OnnxContext, x: Value): Value => ctx.emit('aten.abs.default', { self: x });
const square = (ctx: OnnxContext, x: Value): Value => ctx.emit('aten.mul.Tensor', { self: x, other: x });
defineReduce('ReduceL1', 18, floatReduction('aten.linalg_vector_norm.default', { ord: 1 }), absolute);
defineReduce('ReduceL2', 18, floatReduction('aten.linalg_vector_norm.default', { ord: 2 }), absolute);
defineReduce('ReduceLogSumExp', 18, floatReduction('aten.logsumexp.default'));
const logOf = (ctx: OnnxContext, x: Value): Value => ctx.emit('aten.log.default', { self: x });
defineReduce('ReduceLogSum', 18, (ctx, x, axes, keepdim) => logOf(ctx, floatReduction('aten.sum.dim_IntList')(ctx, x, axes, keepdim)), logOf);
defineReduce(
  'ReduceSumSquare',
  18,
  (ctx, x, axes, keepdim) => ctx.emit('aten.sum.dim_IntList', { self: square(ctx, x), dim: axes, keepdim, dtype: keepType(x) }),
  square,
);

for (const [opType, name] of [
  ['ArgMax', 'argmax'],
  ['ArgMin', 'argmin'],
] as const) {
  defineOnnxOp(opType, (ctx) => {
    const x = ctx.input(0);
    const dim = ctx.attrInt('axis', 0);
    const keepdim = keepdims(ctx);
    if (ctx.attrInt('select_last_index', 0) === 1) return [ctx.emit(`trt.${name}_last`, { self: x, dim, keepdim })];
    return [ctx.emit(`aten.${name}.default`, { self: x, dim, keepdim })];
  });
}

// ---------------------------------------------------------------------------------------------
// Softmax, CumSum

/**
 * Softmax-like ops along `axis`. Before opset 13 they default to axis 1 and treat the input as
 * 2-D [prod(dims before axis), prod(dims from axis)]: the op then runs over the flattened tail.
 */
export function coercedAxisOp(ctx: OnnxContext, apply: (x: Value, dim: number) => Value): Value {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  if (ctx.opset >= 13) return apply(x, ctx.attrInt('axis', -1));
  const axis = ctx.attrInt('axis', 1);
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank || (rank > 0 && a === rank)) ctx.bad(`axis ${axis} is out of range for rank ${rank}`);
  if (rank === 0 || a === rank - 1) return apply(x, rank === 0 ? 0 : -1);
  const flat = ctx.emit('aten.flatten.using_ints', { self: x, start_dim: a, end_dim: rank - 1 });
  const y = apply(flat, a);
  return ctx.emit('aten.reshape.default', { self: y, shape: x.tensorType.shape.map((d) => ctx.dimArg(d)) });
}

defineOnnxOp('Softmax', (ctx) => [coercedAxisOp(ctx, (self, dim) => ctx.emit('aten._softmax.default', { self, dim, half_to_float: false }))]);
defineOnnxOp('LogSoftmax', (ctx) => [coercedAxisOp(ctx, (self, dim) => ctx.emit('aten._log_softmax.default', { self, dim, half_to_float: false }))]);

defineOnnxOp('CumSum', (ctx) => {
  const x = ctx.input(0);
  const axis = ctx.staticInts(1, 'axis');
  if (axis.length !== 1) ctx.bad(`axis must be a single integer, got [${axis.join(', ')}]`);
  const exclusive = ctx.attrInt('exclusive', 0) === 1;
  const reverse = ctx.attrInt('reverse', 0) === 1;
  if (!exclusive && !reverse) return [ctx.emit('aten.cumsum.default', { self: x, dim: axis[0]!, dtype: x.tensorType.dtype })];
  return [ctx.emit('trt.cumsum_onnx', { self: x, dim: axis[0]!, exclusive, reverse })];
});

// ---------------------------------------------------------------------------------------------
// Matrix products

defineOnnxOp('MatMul', (ctx) => [ctx.emit('aten.matmul.default', { self: ctx.input(0), other: ctx.input(1) })]);

defineOnnxOp('Gemm', (ctx) => {
  const a = ctx.input(0);
  const b = ctx.input(1);
  const c = ctx.optInput(2);
  if (a.tensorType.shape.length !== 2 || b.tensorType.shape.length !== 2) {
    ctx.bad(`A and B must be 2-D, got ${fmtDims(a.tensorType.shape)} and ${fmtDims(b.tensorType.shape)}`);
  }
  const transA = ctx.attrInt('transA', 0) === 1;
  const transB = ctx.attrInt('transB', 0) === 1;
  const alpha = ctx.attrFloat('alpha', 1);
  const beta = ctx.attrFloat('beta', 1);
  // The nn.Linear pattern: A @ B^T + C.
  if (!transA && transB && alpha === 1 && (c === null || (beta === 1 && c.tensorType.shape.length <= 1))) {
    return [ctx.emit('aten.linear.default', { input: a, weight: b, bias: c })];
  }
  const t = (v: Value): Value => ctx.emit('aten.permute.default', { self: v, dims: [1, 0] });
  const mat1 = transA ? t(a) : a;
  const mat2 = transB ? t(b) : b;
  if (c !== null && beta !== 0) return [ctx.emit('aten.addmm.default', { self: c, mat1, mat2, beta, alpha })];
  if (alpha === 1) return [ctx.emit('aten.mm.default', { self: mat1, mat2 })];
  // No bias but a scale: addmm with beta 0 ignores its (zero) input entirely.
  const zero = ctx.constantValue(new Tensor(a.tensorType.dtype, []), 'zero');
  return [ctx.emit('aten.addmm.default', { self: zero, mat1, mat2, beta: 0, alpha })];
});

// ---------------------------------------------------------------------------------------------
// Normalization

defineOnnxOp('BatchNormalization', (ctx) => {
  // spatial=0 (opsets 7–8: statistics per element of C×H×W) has no ATen form.
  if (ctx.opset < 9 && ctx.attrInt('spatial', 1) !== 1) ctx.unsupported('spatial=0 (per-element statistics) is not supported');
  if (ctx.opset >= 14 && ctx.attrInt('training_mode', 0) === 1) return batchStatistics(ctx);
  if (ctx.node.outputs.slice(1).some((o) => o !== '')) ctx.unsupported('the running-statistics outputs exist only in training mode, which is not supported');
  const node = ctx.call('aten._native_batch_norm_legit_no_training.default', {
    input: ctx.input(0),
    weight: ctx.input(1),
    bias: ctx.input(2),
    running_mean: ctx.input(3),
    running_var: ctx.input(4),
    momentum: ctx.attrFloat('momentum', 0.9),
    eps: ctx.attrFloat('epsilon', 1e-5),
  });
  return [node.outputs[0]!];
});

/**
 * training_mode=1: normalized with the batch's mean and (population) variance over every dim
 * but C; the running statistics move toward them by 1 − momentum.
 */
function batchStatistics(ctx: OnnxContext): OnnxResult[] {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  if (rank < 2) ctx.bad(`input must be at least 2-D [N, C, ...], got rank ${rank}`);
  const axes = [0, ...range(2, rank)];
  const perChannel = (v: Value): Value => ctx.emit('aten.reshape.default', { self: v, shape: [-1, ...new Array<number>(rank - 2).fill(1)] });
  const mean = ctx.emit('aten.mean.dim', { self: x, dim: axes, keepdim: true });
  const centered = ctx.emit('aten.sub.Tensor', { self: x, other: mean });
  const variance = ctx.emit('aten.mean.dim', { self: ctx.emit('aten.mul.Tensor', { self: centered, other: centered }), dim: axes, keepdim: true });
  const eps = ctx.attrFloat('epsilon', 1e-5);
  const normalized = ctx.emit('aten.mul.Tensor', { self: centered, other: ctx.emit('aten.rsqrt.default', { self: ctx.emit('aten.add.Scalar', { self: variance, other: eps }) }) });
  const y = ctx.emit('aten.add.Tensor', { self: ctx.emit('aten.mul.Tensor', { self: normalized, other: perChannel(ctx.input(1)) }), other: perChannel(ctx.input(2)) });
  const momentum = ctx.attrFloat('momentum', 0.9);
  const running = (i: number, batch: Value): Value =>
    ctx.emit('aten.add.Tensor', {
      self: ctx.emit('aten.mul.Scalar', { self: ctx.input(i), other: momentum }),
      other: ctx.emit('aten.mul.Scalar', { self: ctx.emit('aten.reshape.default', { self: batch, shape: [-1] }), other: 1 - momentum }),
    });
  return [y, running(3, mean), running(4, variance)].slice(0, Math.max(1, ctx.node.outputs.length));
}

defineOnnxOp('LayerNormalization', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  const rank = shape.length;
  const axisAttr = ctx.attrInt('axis', -1);
  const axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
  if (axis < 0 || axis >= rank) ctx.bad(`axis ${axisAttr} is out of range for rank ${rank}`);
  const normalized = shape.slice(axis);
  const scale = ctx.input(1);
  const bias = ctx.optInput(2);
  for (const [name, p] of [
    ['Scale', scale],
    ['B', bias],
  ] as const) {
    if (p === null) continue;
    const ps = p.tensorType.shape;
    if (ps.length !== normalized.length || ps.some((d, i) => !dimEquals(d, normalized[i]!))) {
      ctx.unsupported(`${name} of shape ${fmtDims(ps)} must have the normalized shape ${fmtDims(normalized)} (broadcasting it is not supported)`);
    }
  }
  const node = ctx.call('aten.native_layer_norm.default', {
    input: x,
    normalized_shape: normalized.map((d) => ctx.dimArg(d)),
    weight: scale,
    bias,
    eps: ctx.attrFloat('epsilon', 1e-5),
  });
  const [y, mean, rstd] = node.outputs as [Value, Value, Value];
  // Mean and InvStdDev have the stash type (float32 by default).
  const stash = ctx.attrInt('stash_type', 1);
  const stat = (v: Value, i: number): Value => (wantsOutput(ctx, i) && stash === 1 ? ctx.cast(v, 'float32') : v);
  return [y, stat(mean, 1), stat(rstd, 2)];
});

/** A per-group parameter [G] (GroupNormalization-18) as a per-channel constant [C]. */
function perChannelFromGroups(ctx: OnnxContext, i: number, channels: number, groups: number, name: string): Value {
  const v = ctx.input(i);
  const shape = v.tensorType.shape;
  if (shape.length !== 1 || shape[0] !== groups) ctx.bad(`${name} must have shape [${groups}] (num_groups) at opset ${ctx.opset}, got ${fmtDims(shape)}`);
  if (groups === channels) return v;
  const t = ctx.constant(i);
  if (t === null) ctx.unsupported(`${name} must be a constant at opset < 21 (it is per group there and is expanded per channel)`);
  const values = t.toArray();
  const per = channels / groups;
  return ctx.constantValue(Tensor.from(t.dtype, [channels], Array.from({ length: channels }, (_, c) => values[Math.floor(c / per)]!)), `${name}_per_channel`);
}

defineOnnxOp('GroupNormalization', (ctx: OnnxContext) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  if (shape.length < 2) ctx.bad(`input ${fmtDims(shape)} needs at least 2 dims [N, C, ...]`);
  const groups = ctx.attrInt('num_groups');
  const c = shape[1]!;
  let weight: Value;
  let bias: Value;
  if (ctx.opset >= 21) {
    weight = ctx.input(1);
    bias = ctx.input(2);
  } else {
    if (typeof c !== 'number') ctx.unsupported('the channel dim must be static at opset < 21');
    if (groups < 1 || c % groups !== 0) ctx.bad(`${c} channels cannot be split into ${groups} groups`);
    weight = perChannelFromGroups(ctx, 1, c, groups, 'scale');
    bias = perChannelFromGroups(ctx, 2, c, groups, 'bias');
  }
  return [ctx.emit('aten.group_norm.default', { input: x, num_groups: groups, weight, bias, eps: ctx.attrFloat('epsilon', 1e-5) })];
});

defineOnnxOp('InstanceNormalization', (ctx: OnnxContext) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  if (shape.length < 3) ctx.bad(`input ${fmtDims(shape)} needs at least 3 dims [N, C, D1, ...]`);
  const c = shape[1]!;
  if (typeof c !== 'number') ctx.unsupported('the channel dim must be static');
  // Instance normalization is group normalization with one channel per group.
  return [ctx.emit('aten.group_norm.default', { input: x, num_groups: c, weight: ctx.input(1), bias: ctx.input(2), eps: ctx.attrFloat('epsilon', 1e-5) })];
});

// ---------------------------------------------------------------------------------------------
// Convolution

/** The inputs of Conv and ConvTranspose, their spatial rank and the attributes both read first. */
interface ConvInputs {
  x: Value;
  w: Value;
  bias: Value | null;
  n: number;
  kernel: number[];
  stride: number[];
  dilation: number[];
}

/** Reads and checks the ConvInputs (`what` names the op's kind in the error for an unsupported rank). */
function convInputs(ctx: OnnxContext, what: string): ConvInputs {
  const x = ctx.input(0);
  const w = ctx.input(1);
  const bias = ctx.optInput(2);
  const n = w.tensorType.shape.length - 2;
  if (n < 1 || n > 3) ctx.unsupported(`only 1-D, 2-D and 3-D ${what} are supported (weight ${fmtDims(w.tensorType.shape)})`);
  if (x.tensorType.shape.length !== n + 2) ctx.bad(`input ${fmtDims(x.tensorType.shape)} does not fit weight ${fmtDims(w.tensorType.shape)}`);
  return { x, w, bias, n, kernel: convKernel(ctx, w), stride: spatialAttr(ctx, 'strides', n, 1, 1), dilation: spatialAttr(ctx, 'dilations', n, 1, 1) };
}

/** aten.convolution.default, for symmetric padding. */
function emitConvolution(ctx: OnnxContext, c: ConvInputs, padding: number[], transposed: boolean, outputPadding: number[], groups: number): Value {
  return ctx.emit('aten.convolution.default', {
    input: c.x,
    weight: c.w,
    bias: c.bias,
    stride: c.stride,
    padding,
    dilation: c.dilation,
    transposed,
    output_padding: outputPadding,
    groups,
  });
}

defineOnnxOp('Conv', (ctx) => [convolve(ctx, convInputs(ctx, 'convolutions'))]);

// (x - x_zero_point) ⊛ (w - w_zero_point) in int32: 8-bit products summed exactly in float32
// while the sum stays under 2^24, in float64 past that.
defineOnnxOp('ConvInteger', (ctx) => {
  const c = convInputs(ctx, 'convolutions');
  const types = [c.x.tensorType.dtype, c.w.tensorType.dtype];
  if (!types.every((t) => t === 'uint8' || t === 'int8')) ctx.unsupported(`only uint8 and int8 inputs are supported, got ${types.join(', ')}`);
  const terms = (c.w.tensorType.shape.slice(1) as number[]).reduce((p, d) => p * d, 1);
  const wide = terms * 255 * 255 < 2 ** 24 ? 'float32' : 'float64';
  const shifted = (v: Value, zp: Value | null, perChannel: boolean): Value => {
    const f = ctx.cast(v, wide);
    if (zp === null) return f;
    let z = ctx.cast(zp, wide);
    if (perChannel && zp.tensorType.shape.length === 1) z = ctx.emit('aten.reshape.default', { self: z, shape: [-1, ...new Array<number>(c.n + 1).fill(1)] });
    return ctx.emit('aten.sub.Tensor', { self: f, other: z });
  };
  const y = convolve(ctx, { ...c, x: shifted(c.x, ctx.optInput(2), false), w: constantWeights(ctx, wide) ?? shifted(c.w, ctx.optInput(3), true), bias: null });
  return [ctx.cast(y, 'int32')];
});

// QLinearConv as ONNX's reference computes it: (x - x_zero_point) ⊛ (w - w_zero_point) + B exactly
// (8-bit products summed in float32 below 2^24, in float64 past that), times x_scale * w_scale / y_scale
// (a float32 product and quotient, per output channel for a 1-D w_scale) applied in float64, then
// y_zero_point added, saturated to the output type and rounded half to even.
defineOnnxOp('QLinearConv', (ctx) => {
  const x = ctx.input(0);
  const w = ctx.input(3);
  const n = w.tensorType.shape.length - 2;
  if (n < 1 || n > 3) ctx.unsupported(`only 1-D, 2-D and 3-D convolutions are supported (weight ${fmtDims(w.tensorType.shape)})`);
  if (x.tensorType.shape.length !== n + 2) ctx.bad(`input ${fmtDims(x.tensorType.shape)} does not fit weight ${fmtDims(w.tensorType.shape)}`);
  const types = [x.tensorType.dtype, w.tensorType.dtype];
  if (!types.every((t) => t === 'uint8' || t === 'int8')) ctx.unsupported(`only uint8 and int8 x and w are supported, got ${types.join(', ')}`);
  const outType = ctx.hasInput(7) ? ctx.inputType(7).dtype : x.tensorType.dtype;
  if (outType !== 'uint8' && outType !== 'int8') ctx.unsupported(`only a uint8 or int8 y_zero_point is supported, got ${outType}`);
  const terms = (w.tensorType.shape.slice(1) as number[]).reduce((p, d) => p * d, 1);
  const wide = terms * 255 * 255 < 2 ** 24 ? 'float32' : 'float64';
  // A per-output-channel parameter ([M], M > 1) broadcast along axis 1 of the output (or 0 of w).
  const perChannel = (v: Value, lead: number): Value => {
    const s = v.tensorType.shape;
    if (s.length === 0 || (s.length === 1 && s[0] === 1)) return ctx.emit('aten.reshape.default', { self: v, shape: [] });
    if (s.length !== 1) ctx.bad(`a per-channel parameter must be 1-D, got ${fmtDims(s)}`);
    return ctx.emit('aten.reshape.default', { self: v, shape: [...new Array<number>(lead).fill(1), -1, ...new Array<number>(n + 1 - lead).fill(1)] });
  };
  const shifted = (v: Value, zpIndex: number, lead: number, alongChannels: boolean): Value => {
    const f = ctx.cast(v, wide);
    if (!ctx.hasInput(zpIndex)) return f;
    const zp = ctx.input(zpIndex);
    const z = alongChannels ? perChannel(zp, lead) : perChannel(zp, 0);
    if (!alongChannels && z.tensorType.shape.length > 0) ctx.unsupported('x_zero_point must be per tensor');
    return ctx.emit('aten.sub.Tensor', { self: f, other: ctx.cast(z, wide) });
  };
  const c: ConvInputs = {
    x: shifted(x, 2, 0, false),
    w: shifted(w, 5, 0, true),
    bias: ctx.hasInput(8) ? ctx.cast(ctx.input(8), wide) : null,
    n,
    kernel: convKernel(ctx, w),
    stride: spatialAttr(ctx, 'strides', n, 1, 1),
    dilation: spatialAttr(ctx, 'dilations', n, 1, 1),
  };
  const acc = ctx.cast(convolve(ctx, c), 'float64');
  const scale = (i: number): Value => ctx.cast(ctx.input(i), 'float32');
  const factor = ctx.emit('aten.div.Tensor', { self: ctx.emit('aten.mul.Tensor', { self: scale(1), other: perChannel(scale(4), 1) }), other: scale(6) });
  let y = ctx.emit('aten.mul.Tensor', { self: acc, other: ctx.cast(factor, 'float64') });
  if (ctx.hasInput(7)) y = ctx.emit('aten.add.Tensor', { self: y, other: ctx.cast(perChannel(ctx.input(7), 1), 'float64') });
  const [lo, hi] = outType === 'int8' ? [-128, 127] : [0, 255];
  const clipped = ctx.emit('aten.clamp.default', { self: y, min: lo, max: hi });
  return [ctx.cast(ctx.emit('aten.round.default', { self: clipped }), outType)];
});

/** w − w_zero_point computed at import when both are constants (TensorRT takes constant kernels only). */
function constantWeights(ctx: OnnxContext, dtype: 'float32' | 'float64'): Value | null {
  const w = ctx.constant(1);
  const zp = ctx.hasInput(3) ? ctx.constant(3) : null;
  if (w === null || (ctx.hasInput(3) && zp === null)) return null;
  const values = w.toArray().map(Number);
  const z = zp === null ? [0] : zp.toArray().map(Number);
  const perChannel = values.length / w.shape[0]!;
  if (z.length !== 1 && z.length !== w.shape[0]) ctx.bad(`w_zero_point has ${z.length} values for ${w.shape[0]} output channels`);
  return ctx.constantValue(Tensor.from(dtype, w.shape, values.map((v, i) => v - z[z.length === 1 ? 0 : Math.floor(i / perChannel)]!)), 'weight');
}

function convolve(ctx: OnnxContext, c: ConvInputs): Value {
  const { x, w, bias, n, kernel, stride, dilation } = c;
  const groups = ctx.attrInt('group', 1);
  const pads = resolvePads(ctx, x.tensorType.shape.slice(2), kernel, stride, dilation);
  if (symmetric(pads)) return emitConvolution(ctx, c, pads.begin, false, new Array<number>(n).fill(0), groups);
  return ctx.emit('trt.conv_padded', { input: x, weight: w, bias, stride, pads_begin: pads.begin, pads_end: pads.end, dilation, groups });
}

/**
 * A transposed convolution whose output starts `prepend[i]` positions before the full result in
 * spatial dim i (ONNX's negative leading pads): computed without its bias, zeros prepended, then
 * the bias added everywhere, so the prepended positions hold the bias alone.
 */
function prependPositions(ctx: OnnxContext, c: ConvInputs, begin: number[], end: number[], outputPadding: number[], groups: number, prepend: number[]): Value {
  const y = ctx.emit('trt.conv_transpose_padded', {
    input: c.x,
    weight: c.w,
    bias: null,
    stride: c.stride,
    pads_begin: begin,
    pads_end: end,
    output_padding: outputPadding,
    dilation: c.dilation,
    groups,
  });
  // constant_pad_nd lists (before, after) pairs from the last dim backwards.
  const pad = [...prepend].reverse().flatMap((p) => [p, 0]);
  const padded = ctx.emit('aten.constant_pad_nd.default', { self: y, pad, value: 0 });
  if (c.bias === null) return padded;
  const bias = ctx.emit('aten.reshape.default', { self: c.bias, shape: [-1, ...prepend.map(() => 1)] });
  return ctx.emit('aten.add.Tensor', { self: padded, other: bias });
}

defineOnnxOp('ConvTranspose', (ctx) => {
  const c = convInputs(ctx, 'transposed convolutions');
  const { x, w, bias, n, kernel, stride, dilation } = c;
  const outputPadding = spatialAttr(ctx, 'output_padding', n, 0, 0);
  const groups = ctx.attrInt('group', 1);
  const auto = ctx.attrString('auto_pad', 'NOTSET');
  const inSpatial = x.tensorType.shape.slice(2);
  let begin: number[];
  let end: number[];
  let target: number[] | null = null;
  const prepend: number[] = [];
  if (ctx.has('output_shape')) {
    const shape = ctx.attrInts('output_shape');
    target = shape.length === n + 2 ? shape.slice(2) : shape;
    if (target.length !== n) ctx.bad(`output_shape [${shape.join(', ')}] must list ${n} spatial dims`);
  } else if (auto === 'SAME_UPPER' || auto === 'SAME_LOWER') {
    if (!inSpatial.every(isStatic)) ctx.unsupported(`auto_pad ${auto} needs static spatial input dims, got ${fmtDims(inSpatial)}`);
    target = (inSpatial as number[]).map((d, i) => d * stride[i]!);
  }
  if (target !== null) {
    if (!inSpatial.every(isStatic)) ctx.unsupported(`output_shape needs static spatial input dims, got ${fmtDims(inSpatial)}`);
    begin = [];
    end = [];
    (inSpatial as number[]).forEach((d, i) => {
      const total = stride[i]! * (d - 1) + outputPadding[i]! + (kernel[i]! - 1) * dilation[i]! + 1 - target![i]!;
      const [b, e] = splitPad(total, auto);
      // An output_shape larger than the full transposed convolution pads it (ONNX's formula
      // makes the pads negative), with positions no input reaches: past its end they are
      // output_padding's; before its start, zeros prepended below. Both hold the bias alone.
      if (e < 0) outputPadding[i] = outputPadding[i]! - e;
      prepend.push(Math.max(-b, 0));
      begin.push(Math.max(b, 0));
      end.push(Math.max(e, 0));
    });
    if (prepend.some((p) => p > 0)) return [prependPositions(ctx, c, begin, end, outputPadding, groups, prepend)];
  } else if (auto === 'VALID') {
    begin = new Array<number>(n).fill(0);
    end = new Array<number>(n).fill(0);
  } else if (auto === 'NOTSET') {
    const pads = ctx.attrInts('pads', new Array<number>(2 * n).fill(0));
    if (pads.length !== 2 * n || pads.some((p) => p < 0)) ctx.bad(`attribute pads [${pads.join(', ')}] must be ${2 * n} non-negative integers`);
    begin = pads.slice(0, n);
    end = pads.slice(n);
  } else {
    return ctx.bad(`unknown auto_pad ${JSON.stringify(auto)}`);
  }
  const atenOk = begin.every((b, i) => b === end[i]) && outputPadding.every((p, i) => p < Math.max(stride[i]!, dilation[i]!));
  if (atenOk) return [emitConvolution(ctx, c, begin, true, outputPadding, groups)];
  return [
    ctx.emit('trt.conv_transpose_padded', {
      input: x,
      weight: w,
      bias,
      stride,
      pads_begin: begin,
      pads_end: end,
      output_padding: outputPadding,
      dilation,
      groups,
    }),
  ];
});

// ---------------------------------------------------------------------------------------------
// Pooling

interface PoolSpec {
  x: Value;
  n: number;
  kernel: number[];
  stride: number[];
  dilation: number[];
  pads: Pads;
  ceilMode: boolean;
}

function poolSpec(ctx: OnnxContext): PoolSpec {
  const x = ctx.input(0);
  const kernel = ctx.attrInts('kernel_shape');
  const n = kernel.length;
  if (n < 1 || n > 3) ctx.unsupported(`only 1-D, 2-D and 3-D pooling is supported (kernel_shape [${kernel.join(', ')}])`);
  if (x.tensorType.shape.length !== n + 2) ctx.bad(`input ${fmtDims(x.tensorType.shape)} does not fit kernel_shape [${kernel.join(', ')}]`);
  if (kernel.some((k) => k < 1)) ctx.bad(`kernel_shape [${kernel.join(', ')}] must be positive`);
  const stride = spatialAttr(ctx, 'strides', n, 1, 1);
  const dilation = spatialAttr(ctx, 'dilations', n, 1, 1);
  const pads = resolvePads(ctx, x.tensorType.shape.slice(2), kernel, stride, dilation);
  return { x, n, kernel, stride, dilation, pads, ceilMode: ctx.attrInt('ceil_mode', 0) === 1 };
}

defineOnnxOp('MaxPool', (ctx) => {
  const s = poolSpec(ctx);
  const common = { self: s.x, kernel_size: s.kernel, stride: s.stride, dilation: s.dilation, ceil_mode: s.ceilMode };
  // storage_order orders the Indices output only (the dynamo exporter writes it without one).
  const order = ctx.attrInt('storage_order', 0);
  if (order !== 0 && order !== 1) ctx.bad(`storage_order must be 0 or 1, got ${order}`);
  if (wantsOutput(ctx, 1)) {
    const node = ctx.call('trt.max_pool_onnx_indices', { ...common, pads_begin: s.pads.begin, pads_end: s.pads.end });
    return [node.outputs[0]!, order === 0 ? node.outputs[1]! : columnMajorIndices(ctx, node.outputs[1]!, s.x.tensorType.shape.slice(2))];
  }
  // ATen pools take symmetric padding of at most half the (dilated) kernel.
  const fits = symmetric(s.pads) && s.pads.begin.every((p, i) => p <= Math.floor(((s.kernel[i]! - 1) * s.dilation[i]! + 1) / 2));
  if (fits) return [ctx.emit(`aten.max_pool${s.n}d.default`, { ...common, padding: s.pads.begin })];
  return [ctx.emit('trt.max_pool_padded', { ...common, pads_begin: s.pads.begin, pads_end: s.pads.end })];
});

/**
 * MaxPool's Indices with storage_order=1: the spatial part of each row-major flat index
 * (its remainder by the spatial size) re-linearized with the first spatial dim varying fastest,
 * the batch and channel part (N * C + c times the spatial size) kept, as ONNX's reference counts it.
 */
function columnMajorIndices(ctx: OnnxContext, rowMajor: Value, spatial: readonly Dim[]): Value {
  if (!spatial.every(isStatic)) ctx.unsupported(`the Indices output with storage_order=1 needs static spatial input dims, got ${fmtDims(spatial)}`);
  const dims = spatial as number[];
  const size = dims.reduce((p, d) => p * d, 1);
  const within = ctx.emit('aten.remainder.Scalar', { self: rowMajor, other: size });
  let out = ctx.emit('aten.sub.Tensor', { self: rowMajor, other: within });
  let rowStride = size;
  let colStride = 1;
  for (const d of dims) {
    rowStride /= d;
    const coord = ctx.emit('aten.remainder.Scalar', { self: ctx.emit('aten.floor_divide.Scalar', { self: within, other: rowStride }), other: d });
    out = ctx.emit('aten.add.Tensor', { self: out, other: colStride === 1 ? coord : ctx.emit('aten.mul.Scalar', { self: coord, other: colStride }) });
    colStride *= d;
  }
  return out;
}

function averagePool(ctx: OnnxContext, s: PoolSpec, self: Value, countIncludePad: boolean): Value {
  if (s.dilation.some((d) => d !== 1)) return dilatedAveragePool(ctx, s, self, countIncludePad);
  const common = { self, kernel_size: s.kernel, stride: s.stride, ceil_mode: s.ceilMode, count_include_pad: countIncludePad };
  const fits = symmetric(s.pads) && s.pads.begin.every((p, i) => p <= Math.floor(s.kernel[i]! / 2));
  if (fits) return ctx.emit(`aten.avg_pool${s.n}d.default`, { ...common, padding: s.pads.begin });
  return ctx.emit('trt.avg_pool_padded', { ...common, pads_begin: s.pads.begin, pads_end: s.pads.end });
}

/**
 * Dilated average pooling: window sums by a depthwise convolution of ones over the zero-padded
 * input, divided by each window's count of elements (the same convolution over a constant
 * mask): of the input, or with count_include_pad of the padded input. ceil_mode's last window
 * may reach past the pads (it must start inside the input or the begin pad); what it covers
 * there is counted by neither, as ONNX's corrected reference (opset 19+ test data from ONNX
 * 1.17 on) and onnxruntime count it, and as PyTorch's avg_pool does without dilation.
 */
function dilatedAveragePool(ctx: OnnxContext, s: PoolSpec, self: Value, countIncludePad: boolean): Value {
  const shape = self.tensorType.shape;
  if (!shape.slice(1).every(isStatic)) ctx.unsupported('dilated pooling needs static channel and spatial dims');
  const channels = shape[1] as number;
  const spatial = shape.slice(2) as number[];
  const span = s.kernel.map((k, i) => s.dilation[i]! * (k - 1) + 1);
  const out = spatial.map((d, i) => {
    const room = d + s.pads.begin[i]! + s.pads.end[i]! - span[i]!;
    let o = (s.ceilMode ? Math.ceil(room / s.stride[i]!) : Math.floor(room / s.stride[i]!)) + 1;
    if (s.ceilMode && (o - 1) * s.stride[i]! >= d + s.pads.begin[i]!) o -= 1;
    return o;
  });
  const extra = out.map((o, i) => Math.max(0, (o - 1) * s.stride[i]! + span[i]! - (spatial[i]! + s.pads.begin[i]! + s.pads.end[i]!)));
  // constant_pad_nd lists (begin, end) from the last dim backwards.
  const pad = spatial.map((_, i) => [s.pads.begin[i]!, s.pads.end[i]! + extra[i]!]).reverse().flat();
  const dtype = self.tensorType.dtype;
  const conv = (input: Value, groups: number): Value =>
    ctx.emit('aten.convolution.default', {
      input,
      weight: ctx.constantValue(Tensor.from(dtype, [groups, 1, ...s.kernel], new Array<number>(groups * s.kernel.reduce((a, k) => a * k, 1)).fill(1)), 'ones'),
      bias: null,
      stride: s.stride,
      padding: new Array<number>(s.n).fill(0),
      dilation: s.dilation,
      transposed: false,
      output_padding: new Array<number>(s.n).fill(0),
      groups,
    });
  const sums = conv(ctx.emit('aten.constant_pad_nd.default', { self, pad, value: 0 }), channels);
  // Every window inside the padded input: count_include_pad divides by the window size.
  if (countIncludePad && extra.every((e) => e === 0)) return ctx.emit('aten.div.Scalar', { self: sums, other: s.kernel.reduce((a, k) => a * k, 1) });
  // The mask over the padded extent: 1 on what is counted (the input, or with count_include_pad
  // the padded input), 0 on the pads that are not and on ceil_mode's overhang.
  const padded = spatial.map((d, i) => d + s.pads.begin[i]! + s.pads.end[i]! + extra[i]!);
  const [from, to] = countIncludePad ? [spatial.map(() => 0), spatial.map((d, i) => d + s.pads.begin[i]! + s.pads.end[i]!)] : [s.pads.begin, spatial.map((d, i) => d + s.pads.begin[i]!)];
  const total = padded.reduce((a, d) => a * d, 1);
  const mask = Array.from({ length: total }, (_, flat) => {
    let rest = flat;
    let inside = true;
    for (let i = s.n - 1; i >= 0; i--) {
      const c = rest % padded[i]!;
      rest = Math.floor(rest / padded[i]!);
      inside &&= c >= from[i]! && c < to[i]!;
    }
    return inside ? 1 : 0;
  });
  const counts = conv(ctx.constantValue(Tensor.from(dtype, [1, 1, ...padded], mask), 'counted'), 1);
  return ctx.emit('aten.div.Tensor', { self: sums, other: counts });
}

defineOnnxOp('AveragePool', (ctx) => [averagePool(ctx, poolSpec(ctx), ctx.input(0), ctx.attrInt('count_include_pad', 0) === 1)]);

// (sum over the window of |x|^p)^(1/p): the padded average of |x|^p times the window size.
defineOnnxOp('LpPool', (ctx) => {
  const s = poolSpec(ctx);
  if (s.ceilMode) ctx.unsupported('ceil_mode=1 is not supported (the last windows would be averaged over fewer elements)');
  if (!isFloating(s.x.tensorType.dtype)) ctx.bad(`the input must be floating point, got ${s.x.tensorType.dtype}`);
  const p = ctx.attrInt('p', 2);
  if (p < 1) ctx.bad(`p must be a positive integer, got ${p}`);
  const powered = ctx.emit('aten.pow.Tensor_Scalar', { self: ctx.emit('aten.abs.default', { self: s.x }), exponent: p });
  const size = s.kernel.reduce((a, k) => a * k, 1);
  const sum = ctx.emit('aten.mul.Scalar', { self: averagePool(ctx, s, powered, true), other: size });
  return [p === 1 ? sum : ctx.emit('aten.pow.Tensor_Scalar', { self: sum, exponent: 1 / p })];
});

function globalPool(ctx: OnnxContext, target: string): OnnxResult[] {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  if (rank < 2) ctx.bad(`input ${fmtDims(x.tensorType.shape)} needs at least 2 dims [N, C, ...]`);
  if (rank === 2) return [x]; // no spatial dims: nothing to pool
  return [ctx.emit(target, { self: x, dim: range(2, rank), keepdim: true })];
}

defineOnnxOp('GlobalAveragePool', (ctx) => globalPool(ctx, 'aten.mean.dim'));
defineOnnxOp('GlobalMaxPool', (ctx) => globalPool(ctx, 'aten.amax.default'));

// ---------------------------------------------------------------------------------------------
// Resize

const RESIZE_COORDINATES = new Set(['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'half_pixel_symmetric', 'tf_crop_and_resize']);

/** floor(in * scale) as ONNX Runtime computes it (float32 product), exact for symbolic dims when possible. */
function onnxScaledDim(ctx: OnnxContext, d: Dim, scale: number): Dim {
  if (typeof d === 'number') return Math.floor(Math.fround(Math.fround(scale) * d));
  const out = exactScaledDim(d, scale);
  if (out === null) ctx.unsupported(`scale ${scale} on the symbolic dim ${fmtDims([d])} cannot be expressed exactly; give sizes instead`);
  return out;
}

/**
 * The shortest decimal that rounds to the float32 `v` (0.6000000238 → 0.6): ONNX scales are
 * float32, and ONNX Runtime maps coordinates in float32, where (x + 0.5) / 0.6f lands on the
 * same integers as the decimal 0.6 does in float64.
 */
function float32Decimal(v: number): number {
  for (let p = 1; p <= 9; p++) {
    const d = Number(v.toPrecision(p));
    if (Math.fround(d) === v) return d;
  }
  return v;
}

defineOnnxOp('Resize', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  const rank = shape.length;
  if (rank !== 4) ctx.unsupported(`only 4-D [N, C, H, W] inputs are supported, got ${fmtDims(shape)}`);
  const mode = ctx.attrString('mode', 'nearest');
  if (mode !== 'nearest' && mode !== 'linear' && mode !== 'cubic') ctx.bad(`unknown mode ${JSON.stringify(mode)}`);
  const coord = ctx.attrString('coordinate_transformation_mode', 'half_pixel');
  if (!RESIZE_COORDINATES.has(coord)) ctx.bad(`unknown coordinate_transformation_mode ${JSON.stringify(coord)}`);
  const nearestMode = ctx.attrString('nearest_mode', 'round_prefer_floor');
  if (!['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'].includes(nearestMode)) ctx.bad(`unknown nearest_mode ${JSON.stringify(nearestMode)}`);
  const excludeOutside = ctx.attrInt('exclude_outside', 0) !== 0;
  const antialias = ctx.attrInt('antialias', 0) !== 0;
  if (mode === 'nearest' && (antialias || coord === 'half_pixel_symmetric' || coord === 'tf_crop_and_resize')) {
    ctx.unsupported(`nearest resizing with ${antialias ? 'antialias=1' : coord} is not supported`);
  }
  const policy = ctx.attrString('keep_aspect_ratio_policy', 'stretch');
  if (!['stretch', 'not_larger', 'not_smaller'].includes(policy)) ctx.bad(`unknown keep_aspect_ratio_policy ${JSON.stringify(policy)}`);
  if (mode !== 'nearest' && !isFloating(x.tensorType.dtype)) ctx.unsupported(`${mode} resizing of ${x.tensorType.dtype} is not supported`);
  const axes = ctx.opset >= 18 && ctx.has('axes') ? ctx.attrInts('axes').map((a) => (a < 0 ? a + rank : a)) : range(0, rank);
  if (axes.some((a) => a < 0 || a >= rank) || new Set(axes).size !== axes.length) ctx.bad(`axes [${ctx.attrInts('axes').join(', ')}] are invalid for rank ${rank}`);

  const scalesT = ctx.hasInput(2) ? ctx.constant(2) : null;
  if (ctx.hasInput(2) && scalesT === null) ctx.needsKnown('scales (input 2) must be a constant');
  const hasScales = scalesT !== null && scalesT.size > 0;
  const sizesK = ctx.hasInput(3) ? ctx.known(3) : null;
  if (ctx.hasInput(3) && sizesK === null) ctx.needsKnown('sizes (input 3) depends on tensor data, not only on shapes; it cannot be compiled');
  const hasSizes = sizesK !== null && sizesK.dims.length > 0;
  if (hasScales === hasSizes) ctx.bad('exactly one of scales and sizes must be given');

  // Per-dim scale (when given) and output size over the whole rank.
  const fullScales: number[] = new Array<number>(rank).fill(1);
  const outShape: Dim[] = [...shape];
  if (hasScales) {
    const values = scalesT.toArray().map((v) => (scalesT.dtype === 'float32' ? float32Decimal(v) : v));
    if (values.length !== axes.length) ctx.bad(`scales has ${values.length} elements for ${axes.length} axes`);
    axes.forEach((a, i) => {
      fullScales[a] = values[i]!;
      if (!(values[i]! > 0)) ctx.bad(`scales must be positive, got [${values.join(', ')}]`);
      outShape[a] = onnxScaledDim(ctx, shape[a]!, values[i]!);
    });
  } else {
    const dims = sizesK!.dims;
    if (dims.length !== axes.length) ctx.bad(`sizes has ${dims.length} elements for ${axes.length} axes`);
    axes.forEach((a, i) => {
      outShape[a] = dims[i]!;
    });
    if (policy !== 'stretch') {
      // One scale for every axis (the smallest or largest out/in), sizes rounded half up from it.
      if (!axes.every((a) => isStatic(shape[a]!) && isStatic(outShape[a]!))) ctx.unsupported(`keep_aspect_ratio_policy ${policy} needs static sizes`);
      const ratios = axes.map((a) => (outShape[a] as number) / (shape[a] as number));
      const scale = policy === 'not_larger' ? Math.min(...ratios) : Math.max(...ratios);
      axes.forEach((a) => {
        fullScales[a] = scale;
        outShape[a] = Math.floor(scale * (shape[a] as number) + 0.5);
      });
    }
  }
  const scaled = hasScales || policy !== 'stretch';
  if (!dimEquals(outShape[0]!, shape[0]!) || !dimEquals(outShape[1]!, shape[1]!) || fullScales[0] !== 1 || fullScales[1] !== 1) {
    ctx.unsupported('resizing the batch or channel dims is not supported (only H and W)');
  }
  // align_corners maps through in * scale itself (not the floored output size) when scales are given.
  const wholeProducts = axes.every((a) => typeof shape[a] === 'number' && Number.isInteger((shape[a] as number) * fullScales[a]!));
  if (mode === 'nearest' && coord === 'align_corners' && hasScales && !wholeProducts) {
    ctx.unsupported('align_corners with scales whose products with the input size are not whole numbers is not supported; give sizes instead');
  }
  const spatial = outShape.slice(2);
  const size = spatial.map((d) => ctx.dimArg(d));
  const scaleFactors = scaled ? fullScales.slice(2) : null;
  // roi (input 1) means something to tf_crop_and_resize only; other modes ignore it, as the spec says.
  if (coord !== 'tf_crop_and_resize') ctx.ignoreInputs(1);
  const roi = coord === 'tf_crop_and_resize' ? resizeRoi(ctx, rank, axes) : null;
  const general = mode === 'cubic' || antialias || roi !== null || coord === 'half_pixel_symmetric';
  // cubic_coeff_a means something to cubic only, extrapolation_value to tf_crop_and_resize only
  // (exporters write both with every Resize); read here so the ATen forms below account for them.
  const cubicCoeffA = ctx.attrFloat('cubic_coeff_a', -0.75);
  const extrapolationValue = ctx.attrFloat('extrapolation_value', 0);
  // ATen sizes from scale_factors are floor(in * scale) in double precision: usable when they
  // agree with ONNX Runtime's float32 product.
  const atenScalesAgree =
    scaleFactors !== null && spatial.every((d, i) => typeof d !== 'number' || d === Math.floor((shape[i + 2] as number) * scaleFactors[i]!));
  const byScales = { output_size: null, scale_factors: scaleFactors };
  const bySize = { output_size: size, scale_factors: null };
  if (mode === 'nearest' && coord === 'asymmetric' && nearestMode === 'floor' && !scaled) {
    return [ctx.emit('aten.upsample_nearest2d.vec', { input: x, ...bySize })];
  }
  if (mode === 'nearest' && coord === 'asymmetric' && nearestMode === 'floor' && hasScales && atenScalesAgree) {
    return [ctx.emit('aten.upsample_nearest2d.vec', { input: x, ...byScales })];
  }
  if (mode === 'linear' && !general && coord === 'align_corners' && (!scaled || (hasScales && wholeProducts))) {
    return [ctx.emit('aten.upsample_bilinear2d.vec', { input: x, align_corners: true, ...bySize })];
  }
  // PyTorch's bilinear is half_pixel (pytorch_half_pixel differs only for an output size of 1).
  const bilinearHalf = coord === 'half_pixel' || (coord === 'pytorch_half_pixel' && spatial.every((d) => typeof d === 'number' && d > 1));
  if (mode === 'linear' && !general && bilinearHalf && !scaled) {
    return [ctx.emit('aten.upsample_bilinear2d.vec', { input: x, align_corners: false, ...bySize })];
  }
  if (mode === 'linear' && !general && bilinearHalf && hasScales && atenScalesAgree) {
    return [ctx.emit('aten.upsample_bilinear2d.vec', { input: x, align_corners: false, ...byScales })];
  }
  return [
    ctx.emit('trt.resize', {
      self: x,
      size,
      scales: scaleFactors,
      mode,
      coordinate_transformation_mode: coord,
      nearest_mode: nearestMode,
      cubic_coeff_a: cubicCoeffA,
      exclude_outside: excludeOutside,
      antialias,
      roi,
      extrapolation_value: extrapolationValue,
    }),
  ];
});

/** tf_crop_and_resize's roi (input 1) as starts then ends of the spatial dims; N and C must not be cropped. */
function resizeRoi(ctx: OnnxContext, rank: number, axes: readonly number[]): number[] {
  const t = ctx.hasInput(1) ? ctx.constant(1) : null;
  if (t === null) ctx.unsupported('roi (input 1) must be a constant for tf_crop_and_resize');
  const values = t.toArray().map(Number);
  if (values.length !== 2 * axes.length) ctx.bad(`roi has ${values.length} values for ${axes.length} axes`);
  const starts = new Array<number>(rank).fill(0);
  const ends = new Array<number>(rank).fill(1);
  axes.forEach((a, i) => {
    starts[a] = values[i]!;
    ends[a] = values[axes.length + i]!;
  });
  if (starts[0] !== 0 || starts[1] !== 0 || ends[0] !== 1 || ends[1] !== 1) ctx.unsupported('cropping the batch or channel dims is not supported');
  return [...starts.slice(2), ...ends.slice(2)];
}

// ---------------------------------------------------------------------------------------------
// TopK

defineOnnxOp('TopK', (ctx: OnnxContext) => {
  const x = ctx.input(0);
  const k = ctx.known(1);
  if (k === null) ctx.needsKnown('K (input 1) depends on tensor data, not only on shapes; it cannot be compiled');
  if (k.dims.length !== 1) ctx.bad(`K must hold a single value, got ${k.dims.length}`);
  const node = ctx.call('aten.topk.default', {
    self: x,
    k: ctx.dimArg(k.dims[0]!),
    dim: ctx.attrInt('axis', -1),
    largest: ctx.attrInt('largest', 1) === 1,
    sorted: ctx.attrInt('sorted', 1) === 1,
  });
  return [node.outputs[0]!, node.outputs[1]!];
});
