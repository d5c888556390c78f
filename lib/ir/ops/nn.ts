/**
 * Neural-network ops: reductions, softmax, cumulative sums, matrix products, normalization,
 * convolution, pooling (and ONNX RoiAlign), resizing, top-k, scaled dot-product attention and
 * ONNX Dropout with a run-time training_mode.
 *
 * ATen ops carry their native_functions.yaml schemas; `trt.` ops cover ONNX forms with no
 * exact ATen equivalent (asymmetric pads, ONNX Resize modes, CumSum's exclusive/reverse,
 * ArgMax's select_last_index, MaxPool's whole-tensor indices). Inference gives exact
 * symbolic shapes: output sizes of convolutions and pools are expressions of the input dims.
 */
import { isComplex, isFloating, type DType } from '../dtype';
import { einsumShape } from '../einsum';
import { tensorType, type TensorType, type ValueType } from '../graph';
import { isStatic, symAdd, symFloorDiv, symMin, symMul, symSub, type Dim } from '../symbolic';
import type { InferContext } from './infer-context';
import {
  atenConvGeometry,
  atenPoolGeometry,
  paddedConvGeometry,
  paddedPoolGeometry,
  type ConvGeometry,
  type GeometryArgs,
  type PoolGeometry,
  pooledSize,
} from './nn-geometry';
import { defineOp } from './registry';
import { broadcastDims, normAxis } from './shape-rules';

// ---------------------------------------------------------------------------------------------
// Helpers

const fmtDim = (d: Dim): string => (typeof d === 'number' ? String(d) : JSON.stringify(d));
const fmtShape = (s: readonly Dim[]): string => `[${s.map(fmtDim).join(', ')}]`;

/** `d + c` with constants folded into a trailing `+ k` / `- k` (so `(s0-3)+1` is `s0-2`). */
export function plusConst(d: Dim, c: number): Dim {
  if (c === 0) return d;
  if (typeof d === 'number') return d + c;
  if (d.op === 'add' && typeof d.b === 'number') return plusConst(d.a, d.b + c);
  if (d.op === 'sub' && typeof d.b === 'number') return plusConst(d.a, c - d.b);
  return c > 0 ? symAdd(d, c) : symSub(d, -c);
}

/** Fails unless two dims can be equal (a static mismatch is an error; symbols are trusted). */
function expectDim(ctx: InferContext, a: Dim, b: Dim, what: string): void {
  if (typeof a === 'number' && typeof b === 'number' && a !== b) ctx.fail(`${what}: ${a} vs ${b}`);
}

/** Fails unless `shape` equals `expected` (static dims compared; symbols trusted). */
function expectShape(ctx: InferContext, shape: readonly Dim[], expected: readonly Dim[], what: string): void {
  if (shape.length !== expected.length) ctx.fail(`${what} has shape ${fmtShape(shape)}, expected ${fmtShape(expected)}`);
  shape.forEach((d, i) => {
    if (typeof d === 'number' && typeof expected[i] === 'number' && d !== expected[i]) {
      ctx.fail(`${what} has shape ${fmtShape(shape)}, expected ${fmtShape(expected)}`);
    }
  });
}

/** Fails unless every given tensor has the same dtype (PyTorch's matmul/conv/norm rule). */
function sameDtype(ctx: InferContext, ...named: Array<[string, TensorType | null]>): DType {
  const present = named.filter((n): n is [string, TensorType] => n[1] !== null);
  const first = present[0]![1].dtype;
  for (const [name, t] of present) {
    if (t.dtype !== first) ctx.fail(`${name} is ${t.dtype} but ${present[0]![0]} is ${first}; they must have the same dtype`);
  }
  return first;
}

function requireFloat(ctx: InferContext, dtype: DType, what: string): void {
  if (!isFloating(dtype)) ctx.fail(`${what} must be floating-point, got ${dtype}`);
}

/**
 * A list argument (`int[2]`, `SymInt[2]`, `int[]`) as `n` static integers: a single value
 * applies to every dim (ATen's expand_param_if_needed). `allowEmpty` returns [] for `[]`.
 */
export function staticList(ctx: InferContext, name: string, n: number, allowEmpty = false): number[] {
  const dims = ctx.dims(name);
  if (!dims.every(isStatic)) ctx.fail(`argument ${name} must be static integers, got ${fmtShape(dims)}`);
  const values = dims as number[];
  if (values.length === 0 && allowEmpty) return [];
  if (values.length === 1 && n > 1) return new Array<number>(n).fill(values[0]!);
  if (values.length !== n) ctx.fail(`argument ${name} must have ${n} element(s), got ${values.length}`);
  return values;
}

/** The normalized, distinct axes of a reduction; null/[] means every axis. */
function reducedAxes(ctx: InferContext, rank: number, dims: readonly number[] | null): Set<number> {
  if (dims === null || dims.length === 0) return new Set(Array.from({ length: rank }, (_, i) => i));
  const out = new Set<number>();
  for (const d of dims) {
    const a = normAxis(ctx, d, rank);
    if (out.has(a) && rank > 0) ctx.fail(`dim ${d} appears more than once in [${dims.join(', ')}]`);
    if (rank > 0) out.add(a);
  }
  return out;
}

function reducedShape(shape: readonly Dim[], axes: Set<number>, keepdim: boolean): Dim[] {
  return keepdim ? shape.map((d, i) => (axes.has(i) ? 1 : d)) : shape.filter((_, i) => !axes.has(i));
}

/** The optional int list `dim` of a reduction (`int[1]? dim`): null when absent. */
function optDims(ctx: InferContext, name = 'dim'): number[] | null {
  return ctx.has(name) ? ctx.ints(name) : null;
}

/** Result type of sum/prod/cumsum: an explicit dtype, else int64 for bool and integers. */
function accumulationType(ctx: InferContext, self: TensorType): DType {
  return ctx.dtype('dtype') ?? (isFloating(self.dtype) || isComplex(self.dtype) ? self.dtype : 'int64');
}

function noComplex(ctx: InferContext, t: TensorType, what = 'self'): void {
  if (isComplex(t.dtype)) ctx.fail(`${what} is ${t.dtype}; complex tensors cannot be ordered`);
}

// ---------------------------------------------------------------------------------------------
// Reductions

defineOp('aten.sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const axes = reducedAxes(ctx, self.shape.length, optDims(ctx));
  return [tensorType(accumulationType(ctx, self), reducedShape(self.shape, axes, ctx.bool('keepdim')))];
});

defineOp('aten.sum.default(Tensor self, *, ScalarType? dtype=None) -> Tensor', (ctx) => [tensorType(accumulationType(ctx, ctx.tensor('self')), [])]);

function meanType(ctx: InferContext, self: TensorType): DType {
  const dtype = ctx.dtype('dtype') ?? self.dtype;
  if (!isFloating(dtype) && !isComplex(dtype)) ctx.fail(`mean needs a floating-point or complex input (or a float dtype), got ${self.dtype}`);
  return dtype;
}

defineOp('aten.mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const axes = reducedAxes(ctx, self.shape.length, optDims(ctx));
  return [tensorType(meanType(ctx, self), reducedShape(self.shape, axes, ctx.bool('keepdim')))];
});

defineOp('aten.mean.default(Tensor self, *, ScalarType? dtype=None) -> Tensor', (ctx) => [tensorType(meanType(ctx, ctx.tensor('self')), [])]);

defineOp('aten.prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const axes = reducedAxes(ctx, self.shape.length, [ctx.int('dim')]);
  return [tensorType(accumulationType(ctx, self), reducedShape(self.shape, axes, ctx.bool('keepdim')))];
});

defineOp('aten.prod.default(Tensor self, *, ScalarType? dtype=None) -> Tensor', (ctx) => [tensorType(accumulationType(ctx, ctx.tensor('self')), [])]);

for (const name of ['amax', 'amin']) {
  defineOp(`aten.${name}.default(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const axes = reducedAxes(ctx, self.shape.length, ctx.ints('dim'));
    return [tensorType(self.dtype, reducedShape(self.shape, axes, ctx.bool('keepdim')))];
  });
}

for (const name of ['max', 'min']) {
  defineOp(`aten.${name}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const shape = reducedShape(self.shape, reducedAxes(ctx, self.shape.length, [ctx.int('dim')]), ctx.bool('keepdim'));
    return [tensorType(self.dtype, shape), tensorType('int64', shape)];
  });
  defineOp(`aten.${name}.default(Tensor self) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    return [tensorType(self.dtype, [])];
  });
}

for (const name of ['argmax', 'argmin']) {
  defineOp(`aten.${name}.default(Tensor self, int? dim=None, bool keepdim=False) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const dim = ctx.optInt('dim');
    const axes = reducedAxes(ctx, self.shape.length, dim === null ? null : [dim]);
    return [tensorType('int64', reducedShape(self.shape, axes, ctx.bool('keepdim')))];
  });
  // ONNX ArgMax/ArgMin with select_last_index=1: ties go to the last index.
  defineOp(`trt.${name}_last(Tensor self, int dim, bool keepdim=False) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const axes = reducedAxes(ctx, self.shape.length, [ctx.int('dim')]);
    return [tensorType('int64', reducedShape(self.shape, axes, ctx.bool('keepdim')))];
  });
}

defineOp('aten.logsumexp.default(Tensor self, int[1] dim, bool keepdim=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const axes = reducedAxes(ctx, self.shape.length, ctx.ints('dim'));
  // Integer inputs give the default float type, as in PyTorch.
  const dtype = isFloating(self.dtype) ? self.dtype : isComplex(self.dtype) ? ctx.fail('complex logsumexp is not supported') : 'float32';
  return [tensorType(dtype, reducedShape(self.shape, axes, ctx.bool('keepdim')))];
});

defineOp(
  'aten.linalg_vector_norm.default(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    if (!isFloating(self.dtype)) ctx.fail(`linalg_vector_norm needs a floating-point input, got ${self.dtype}`);
    ctx.float('ord');
    const axes = reducedAxes(ctx, self.shape.length, optDims(ctx));
    return [tensorType(ctx.dtype('dtype') ?? self.dtype, reducedShape(self.shape, axes, ctx.bool('keepdim')))];
  },
);

// ---------------------------------------------------------------------------------------------
// Softmax and cumulative sums

function softmaxLike(ctx: InferContext, dtype: DType | null): ValueType[] {
  const self = ctx.tensor('self');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  const out = dtype ?? self.dtype;
  requireFloat(ctx, out, 'the softmax input (or dtype)');
  return [tensorType(out, self.shape)];
}

function halfToFloat(ctx: InferContext): DType | null {
  if (!ctx.bool('half_to_float')) return null;
  if (ctx.tensor('self').dtype !== 'float16') ctx.fail('half_to_float needs a float16 input');
  return 'float32';
}

defineOp('aten.softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor', (ctx) => softmaxLike(ctx, ctx.dtype('dtype')));
defineOp('aten._softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor', (ctx) => softmaxLike(ctx, halfToFloat(ctx)));
defineOp('aten.log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor', (ctx) => softmaxLike(ctx, ctx.dtype('dtype')));
defineOp('aten._log_softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor', (ctx) => softmaxLike(ctx, halfToFloat(ctx)));

defineOp('aten.cumsum.default(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  return [tensorType(accumulationType(ctx, self), self.shape)];
});

// ONNX CumSum: the input type is kept; exclusive and reverse as its attributes.
defineOp('trt.cumsum_onnx(Tensor self, int dim, bool exclusive=False, bool reverse=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  if (self.dtype === 'bool') ctx.fail('CumSum is not defined for bool');
  return [tensorType(self.dtype, self.shape)];
});

// ---------------------------------------------------------------------------------------------
// Matrix products

/** torch.matmul's output shape (1-D operands promoted and their dim removed; batch dims broadcast). */
export function matmulShape(ctx: InferContext, a: readonly Dim[], b: readonly Dim[]): Dim[] {
  if (a.length === 0 || b.length === 0) ctx.fail(`both operands need at least 1 dim, got ${fmtShape(a)} and ${fmtShape(b)}`);
  const as = a.length === 1 ? [1, a[0]!] : a;
  const bs = b.length === 1 ? [b[0]!, 1] : b;
  const k1 = as[as.length - 1]!;
  const k2 = bs[bs.length - 2]!;
  if (typeof k1 === 'number' && typeof k2 === 'number' && k1 !== k2) {
    ctx.fail(`shapes ${fmtShape(a)} and ${fmtShape(b)} cannot be multiplied (${k1} vs ${k2})`);
  }
  const batch = broadcastDims(ctx, as.slice(0, -2), bs.slice(0, -2));
  return [...batch, ...(a.length === 1 ? [] : [as[as.length - 2]!]), ...(b.length === 1 ? [] : [bs[bs.length - 1]!])];
}

defineOp('aten.matmul.default(Tensor self, Tensor other) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const other = ctx.tensor('other');
  const dtype = sameDtype(ctx, ['self', self], ['other', other]);
  return [tensorType(dtype, matmulShape(ctx, self.shape, other.shape))];
});

defineOp('aten.mm.default(Tensor self, Tensor mat2) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mat2 = ctx.tensor('mat2');
  if (self.shape.length !== 2 || mat2.shape.length !== 2) ctx.fail(`mm needs 2-D operands, got ${fmtShape(self.shape)} and ${fmtShape(mat2.shape)}`);
  const dtype = sameDtype(ctx, ['self', self], ['mat2', mat2]);
  return [tensorType(dtype, matmulShape(ctx, self.shape, mat2.shape))];
});

// torch.einsum (MaxViT's relative attention, models that write attention as einsum); the
// lowering composes it from other ops (lib/ir/einsum.ts). `path` (opt_einsum's contraction
// order) does not change the result.
defineOp('aten.einsum.default(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor', (ctx) => {
  const operands = ctx.tensors('tensors');
  if (operands.length === 0) ctx.fail('einsum needs at least one operand');
  const dtype = operands[0]!.dtype;
  if (operands.some((t) => t.dtype !== dtype)) ctx.fail(`the operands must have one element type, got ${operands.map((t) => t.dtype).join(', ')}`);
  return [tensorType(dtype, einsumShape(ctx.str('equation'), operands.map((t) => t.shape), (message) => ctx.fail(message)))];
});

defineOp('aten.bmm.default(Tensor self, Tensor mat2) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mat2 = ctx.tensor('mat2');
  if (self.shape.length !== 3 || mat2.shape.length !== 3) ctx.fail(`bmm needs 3-D operands, got ${fmtShape(self.shape)} and ${fmtShape(mat2.shape)}`);
  expectDim(ctx, self.shape[0]!, mat2.shape[0]!, 'bmm batch sizes differ');
  const dtype = sameDtype(ctx, ['self', self], ['mat2', mat2]);
  const out = matmulShape(ctx, self.shape, mat2.shape);
  // Equal batch dims: keep self's (no max() for two symbols that must be equal).
  return [tensorType(dtype, [self.shape[0]!, out[1]!, out[2]!])];
});

/** Fails unless `bias` broadcasts to `shape` (without growing it). */
function biasBroadcasts(ctx: InferContext, bias: readonly Dim[], shape: readonly Dim[], what: string): void {
  const b = broadcastDims(ctx, bias, shape);
  if (b.length !== shape.length || b.some((d, i) => typeof d === 'number' && typeof shape[i] === 'number' && d !== shape[i])) {
    ctx.fail(`${what} of shape ${fmtShape(bias)} does not broadcast to ${fmtShape(shape)}`);
  }
}

defineOp('aten.addmm.default(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mat1 = ctx.tensor('mat1');
  const mat2 = ctx.tensor('mat2');
  if (mat1.shape.length !== 2 || mat2.shape.length !== 2) ctx.fail(`addmm needs 2-D mat1 and mat2, got ${fmtShape(mat1.shape)} and ${fmtShape(mat2.shape)}`);
  ctx.float('beta');
  ctx.float('alpha');
  const dtype = sameDtype(ctx, ['self', self], ['mat1', mat1], ['mat2', mat2]);
  const out = matmulShape(ctx, mat1.shape, mat2.shape);
  biasBroadcasts(ctx, self.shape, out, 'self (the bias)');
  return [tensorType(dtype, out)];
});

// BLOOM's ALiBi scores: beta * self + alpha * bmm(batch1, batch2).
defineOp('aten.baddbmm.default(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const batch1 = ctx.tensor('batch1');
  const batch2 = ctx.tensor('batch2');
  if (batch1.shape.length !== 3 || batch2.shape.length !== 3) ctx.fail(`baddbmm needs 3-D batch1 and batch2, got ${fmtShape(batch1.shape)} and ${fmtShape(batch2.shape)}`);
  expectDim(ctx, batch1.shape[0]!, batch2.shape[0]!, 'baddbmm batch sizes differ');
  ctx.float('beta');
  ctx.float('alpha');
  const dtype = sameDtype(ctx, ['self', self], ['batch1', batch1], ['batch2', batch2]);
  const out = matmulShape(ctx, batch1.shape, batch2.shape);
  const shape = [batch1.shape[0]!, out[1]!, out[2]!];
  biasBroadcasts(ctx, self.shape, shape, 'self (the bias)');
  return [tensorType(dtype, shape)];
});

defineOp('aten.linear.default(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor', (ctx) => {
  const input = ctx.tensor('input');
  const weight = ctx.tensor('weight');
  const bias = ctx.optTensor('bias');
  if (weight.shape.length !== 1 && weight.shape.length !== 2) ctx.fail(`weight must be 1-D or 2-D, got ${fmtShape(weight.shape)}`);
  if (input.shape.length === 0) ctx.fail('input must have at least 1 dim');
  const dtype = sameDtype(ctx, ['input', input], ['weight', weight], ['bias', bias]);
  expectDim(ctx, input.shape[input.shape.length - 1]!, weight.shape[weight.shape.length - 1]!, 'input features differ from the weight');
  const out = [...input.shape.slice(0, -1), ...(weight.shape.length === 2 ? [weight.shape[0]!] : [])];
  if (bias) biasBroadcasts(ctx, bias.shape, out, 'bias');
  return [tensorType(dtype, out)];
});

// ---------------------------------------------------------------------------------------------
// Normalization

/** Checks normalized_shape against the input's trailing dims; returns its length. */
function normalizedDims(ctx: InferContext, input: TensorType): number {
  const normalized = ctx.dims('normalized_shape');
  const n = normalized.length;
  if (n === 0 || n > input.shape.length) {
    ctx.fail(`normalized_shape ${fmtShape(normalized)} must be 1 to ${input.shape.length} trailing dims of input ${fmtShape(input.shape)}`);
  }
  const trailing = input.shape.slice(input.shape.length - n);
  expectShape(ctx, trailing, normalized, 'the input\'s trailing dims (normalized_shape)');
  for (const name of ['weight', 'bias']) {
    if (name in ctx.args) {
      const p = ctx.optTensor(name);
      if (p) expectShape(ctx, p.shape, trailing, name);
    }
  }
  return n;
}

defineOp(
  'aten.layer_norm.default(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor',
  (ctx) => {
    const input = ctx.tensor('input');
    requireFloat(ctx, input.dtype, 'input');
    normalizedDims(ctx, input);
    return [tensorType(input.dtype, input.shape)];
  },
);

defineOp(
  'aten.native_layer_norm.default(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)',
  (ctx) => {
    const input = ctx.tensor('input');
    requireFloat(ctx, input.dtype, 'input');
    const n = normalizedDims(ctx, input);
    const stats = input.shape.map((d, i) => (i >= input.shape.length - n ? 1 : d));
    return [tensorType(input.dtype, input.shape), tensorType(input.dtype, stats), tensorType(input.dtype, stats)];
  },
);

defineOp('aten.rms_norm.default(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor', (ctx) => {
  const input = ctx.tensor('input');
  requireFloat(ctx, input.dtype, 'input');
  normalizedDims(ctx, input);
  return [tensorType(input.dtype, input.shape)];
});

/** Checks per-channel parameters against dim 1 of an [N, C, ...] input. */
function perChannel(ctx: InferContext, input: TensorType, names: readonly string[]): void {
  if (input.shape.length < 2) ctx.fail(`input ${fmtShape(input.shape)} needs at least 2 dims [N, C, ...]`);
  requireFloat(ctx, input.dtype, 'input');
  const c = input.shape[1]!;
  for (const name of names) {
    const p = ctx.optTensor(name);
    if (p) expectShape(ctx, p.shape, [c], name);
  }
}

defineOp(
  'aten.batch_norm.default(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor',
  (ctx) => {
    const input = ctx.tensor('input');
    perChannel(ctx, input, ['weight', 'bias', 'running_mean', 'running_var']);
    if (ctx.bool('training') || !ctx.has('running_mean') || !ctx.has('running_var')) {
      ctx.fail('only inference-mode batch_norm (training=False with running statistics) is supported; export the model in eval() mode');
    }
    return [tensorType(input.dtype, input.shape)];
  },
);

defineOp(
  'aten._native_batch_norm_legit_no_training.default(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)',
  (ctx) => {
    const input = ctx.tensor('input');
    perChannel(ctx, input, ['weight', 'bias', 'running_mean', 'running_var']);
    // save_mean and save_invstd are empty in inference, as PyTorch's CPU kernel returns them.
    return [tensorType(input.dtype, input.shape), tensorType(input.dtype, [0]), tensorType(input.dtype, [0])];
  },
);

function groupCount(ctx: InferContext, input: TensorType, groups: number): void {
  const c = input.shape[1]!;
  if (groups < 1 || (typeof c === 'number' && c % groups !== 0)) ctx.fail(`${fmtDim(c)} channels cannot be split into ${groups} groups`);
}

defineOp(
  'aten.group_norm.default(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor',
  (ctx) => {
    const input = ctx.tensor('input');
    perChannel(ctx, input, ['weight', 'bias']);
    groupCount(ctx, input, ctx.int('num_groups'));
    return [tensorType(input.dtype, input.shape)];
  },
);

defineOp(
  'aten.native_group_norm.default(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)',
  (ctx) => {
    const input = ctx.tensor('input');
    perChannel(ctx, input, ['weight', 'bias']);
    const group = ctx.int('group');
    groupCount(ctx, input, group);
    expectDim(ctx, ctx.dim('N'), input.shape[0]!, 'N differs from the input batch');
    expectDim(ctx, ctx.dim('C'), input.shape[1]!, 'C differs from the input channels');
    const n = input.shape[0]!;
    return [tensorType(input.dtype, input.shape), tensorType(input.dtype, [n, group]), tensorType(input.dtype, [n, group])];
  },
);

// ---------------------------------------------------------------------------------------------
// Convolution

/** floor((in + padBegin + padEnd - dilation*(k-1) - 1) / stride) + 1, exact for symbolic `in`. */
export function convOutDim(input: Dim, kernel: number, stride: number, padBegin: number, padEnd: number, dilation: number): Dim {
  const span = dilation * (kernel - 1) + 1;
  return plusConst(symFloorDiv(plusConst(input, padBegin + padEnd - span), stride), 1);
}

/** (in-1)*stride - padBegin - padEnd + dilation*(k-1) + outputPadding + 1. */
export function convTransposeOutDim(input: Dim, kernel: number, stride: number, padBegin: number, padEnd: number, dilation: number, outputPadding: number): Dim {
  return plusConst(symMul(input, stride), -stride - padBegin - padEnd + dilation * (kernel - 1) + outputPadding + 1);
}

/** The static arguments of the op being inferred, for the geometry readers of ./nn-geometry. */
function geometryArgs(ctx: InferContext): GeometryArgs {
  return {
    list: (name, n, allowEmpty) => staticList(ctx, name, n, allowEmpty),
    int: (name) => ctx.int(name),
    bool: (name) => ctx.bool(name),
    fail: (message) => ctx.fail(message),
  };
}

/** Output type of a (transposed) convolution; `batchedOnly` rejects unbatched inputs. */
function convType(ctx: InferContext, g: ConvGeometry, batchedOnly: boolean): ValueType[] {
  const input = ctx.tensor('input');
  const weight = ctx.tensor('weight');
  const bias = ctx.optTensor('bias');
  const n = weight.shape.length - 2;
  if (n < 1 || n > 3) ctx.fail(`weight ${fmtShape(weight.shape)} must have 3 to 5 dims`);
  const batched = input.shape.length === n + 2;
  if (!batched && (batchedOnly || input.shape.length !== n + 1)) {
    ctx.fail(`input ${fmtShape(input.shape)} does not fit weight ${fmtShape(weight.shape)} (${n} spatial dims)`);
  }
  const dtype = sameDtype(ctx, ['input', input], ['weight', weight], ['bias', bias]);
  requireFloat(ctx, dtype, 'input');
  const lists: Array<[string, number[]]> = [
    ['stride', g.stride],
    ['padding', g.padBegin],
    ['dilation', g.dilation],
    ['output_padding', g.outputPadding],
  ];
  for (const [name, list] of lists) {
    if (list.length !== n) ctx.fail(`${name} [${list.join(', ')}] must have ${n} elements`);
  }
  if (g.stride.some((s) => s < 1) || g.dilation.some((d) => d < 1)) ctx.fail('stride and dilation must be positive');
  if (g.padBegin.some((p) => p < 0) || g.padEnd.some((p) => p < 0) || g.outputPadding.some((p) => p < 0)) ctx.fail('padding must be non-negative');
  const x = batched ? input.shape : [1, ...input.shape];
  const cin = x[1]!;
  const groups = g.groups;
  if (groups < 1) ctx.fail(`groups ${groups} must be positive`);
  const kernel = weight.shape.slice(2);
  if (!kernel.every(isStatic)) ctx.fail(`the kernel size ${fmtShape(kernel)} must be static`);
  const k = kernel as number[];
  let cout: Dim;
  if (g.transposed) {
    expectDim(ctx, weight.shape[0]!, cin, 'transposed-convolution weight dim 0 must equal the input channels');
    cout = symMul(weight.shape[1]!, groups);
    g.outputPadding.forEach((p, i) => {
      if (p >= Math.max(g.stride[i]!, g.dilation[i]!)) ctx.fail(`output_padding ${p} must be smaller than stride or dilation`);
    });
  } else {
    expectDim(ctx, symMul(weight.shape[1]!, groups), cin, `input channels must be weight.shape[1] * groups (${groups})`);
    cout = weight.shape[0]!;
    if (typeof cout === 'number' && cout % groups !== 0) ctx.fail(`${cout} output channels cannot be split into ${groups} groups`);
  }
  if (bias) expectShape(ctx, bias.shape, [cout], 'bias');
  const spatial = x.slice(2).map((d, i) =>
    g.transposed
      ? convTransposeOutDim(d, k[i]!, g.stride[i]!, g.padBegin[i]!, g.padEnd[i]!, g.dilation[i]!, g.outputPadding[i]!)
      : convOutDim(d, k[i]!, g.stride[i]!, g.padBegin[i]!, g.padEnd[i]!, g.dilation[i]!),
  );
  spatial.forEach((d, i) => {
    if (typeof d === 'number' && d < 1) ctx.fail(`input ${fmtShape(input.shape)} is too small for kernel ${fmtShape(k)} (spatial dim ${i} would be ${d})`);
  });
  return [tensorType(dtype, [...(batched ? [x[0]!] : []), cout, ...spatial])];
}

function spatialCount(ctx: InferContext): number {
  return ctx.tensor('weight').shape.length - 2;
}

/** Fails unless the weight has `n` spatial dims (the fixed rank of `op`, e.g. conv2d). */
function requireSpatial(ctx: InferContext, n: number, op: string): void {
  if (spatialCount(ctx) !== n) ctx.fail(`${op} needs a ${n + 2}-D weight, got ${fmtShape(ctx.tensor('weight').shape)}`);
}

defineOp(
  'aten.convolution.default(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor',
  (ctx) => convType(ctx, { ...atenConvGeometry(geometryArgs(ctx), spatialCount(ctx), true), transposed: ctx.bool('transposed') }, true),
);

for (const n of [1, 2, 3]) {
  defineOp(
    `aten.conv${n}d.default(Tensor input, Tensor weight, Tensor? bias=None, SymInt[${n}] stride=1, SymInt[${n}] padding=0, SymInt[${n}] dilation=1, SymInt groups=1) -> Tensor`,
    (ctx) => {
      requireSpatial(ctx, n, `conv${n}d`);
      return convType(ctx, { ...atenConvGeometry(geometryArgs(ctx), n, false), transposed: false }, false);
    },
  );
  defineOp(
    `aten.conv${n}d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[${n}] stride=1, str padding="valid", SymInt[${n}] dilation=1, SymInt groups=1) -> Tensor`,
    (ctx) => {
      requireSpatial(ctx, n, `conv${n}d`);
      const mode = ctx.str('padding');
      const stride = staticList(ctx, 'stride', n);
      const dilation = staticList(ctx, 'dilation', n);
      const kernel = ctx.tensor('weight').shape.slice(2);
      let padBegin = new Array<number>(n).fill(0);
      let padEnd = new Array<number>(n).fill(0);
      if (mode === 'same') {
        if (stride.some((s) => s !== 1)) ctx.fail(`padding='same' needs stride 1, got [${stride.join(', ')}]`);
        if (!kernel.every(isStatic)) ctx.fail('the kernel size must be static');
        const total = (kernel as number[]).map((k, i) => dilation[i]! * (k - 1));
        padBegin = total.map((t) => Math.floor(t / 2));
        padEnd = total.map((t, i) => t - padBegin[i]!);
      } else if (mode !== 'valid') {
        ctx.fail(`padding must be "valid" or "same", got ${JSON.stringify(mode)}`);
      }
      return convType(
        ctx,
        { stride, padBegin, padEnd, dilation, outputPadding: new Array<number>(n).fill(0), groups: staticList(ctx, 'groups', 1)[0]!, transposed: false },
        false,
      );
    },
  );
  const overload = n === 1 ? 'default' : 'input';
  defineOp(
    `aten.conv_transpose${n}d.${overload}(Tensor input, Tensor weight, Tensor? bias=None, SymInt[${n}] stride=1, SymInt[${n}] padding=0, SymInt[${n}] output_padding=0, SymInt groups=1, SymInt[${n}] dilation=1) -> Tensor`,
    (ctx) => {
      requireSpatial(ctx, n, `conv_transpose${n}d`);
      return convType(ctx, { ...atenConvGeometry(geometryArgs(ctx), n, true), transposed: true }, false);
    },
  );
}

// ONNX Conv / ConvTranspose with begin and end pads that differ (auto_pad SAME_*, explicit pads).
defineOp(
  'trt.conv_padded(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] pads_begin, int[] pads_end, int[] dilation, int groups) -> Tensor',
  (ctx) => convType(ctx, paddedConvGeometry(geometryArgs(ctx), spatialCount(ctx), false), true),
);

defineOp(
  'trt.conv_transpose_padded(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] pads_begin, int[] pads_end, int[] output_padding, int[] dilation, int groups) -> Tensor',
  (ctx) => {
    const n = spatialCount(ctx);
    // ONNX does not bound output_padding by the stride: convType sees none, it is added below.
    const g = paddedConvGeometry(geometryArgs(ctx), n, true);
    const outputPadding = staticList(ctx, 'output_padding', n);
    if (outputPadding.some((p) => p < 0)) ctx.fail('output_padding must be non-negative');
    const [t] = convType(ctx, g, true) as [TensorType];
    const shape = t.shape.map((d, i) => (i >= 2 ? plusConst(d, outputPadding[i - 2]!) : d));
    return [tensorType(t.dtype, shape)];
  },
);

// ---------------------------------------------------------------------------------------------
// Pooling

/**
 * Output size of a sliding window (PyTorch's pooling_output_shape with separate pads): with
 * ceil mode, a last window starting beyond the input and the begin padding is dropped,
 * written exactly as min(ceil form, (in + padBegin - 1)//stride + 1) when it can happen.
 */
export function poolOutDim(input: Dim, kernel: number, stride: number, padBegin: number, padEnd: number, dilation: number, ceilMode: boolean): Dim {
  if (typeof input === 'number') return pooledSize(input, kernel, stride, padBegin, padEnd, dilation, ceilMode);
  const span = dilation * (kernel - 1);
  const room = plusConst(input, padBegin + padEnd - span - 1);
  if (!ceilMode) return plusConst(symFloorDiv(room, stride), 1);
  const ceil = plusConst(symFloorDiv(plusConst(room, stride - 1), stride), 1);
  if (stride < span + 2 - padEnd) return ceil; // the last window always starts inside
  return symMin(ceil, plusConst(symFloorDiv(plusConst(input, padBegin - 1), stride), 1));
}

/** The pooled shape of an input with `n` spatial dims (rank n+1 or n+2). */
function pooledShape(ctx: InferContext, self: TensorType, n: number, g: PoolGeometry): Dim[] {
  if (self.shape.length !== n + 1 && self.shape.length !== n + 2) ctx.fail(`input ${fmtShape(self.shape)} must have ${n + 1} or ${n + 2} dims`);
  noComplex(ctx, self);
  if (g.kernel.some((k) => k < 1) || g.stride.some((s) => s < 1) || g.dilation.some((d) => d < 1)) ctx.fail('kernel, stride and dilation must be positive');
  if (g.padBegin.some((p) => p < 0) || g.padEnd.some((p) => p < 0)) ctx.fail('padding must be non-negative');
  const lead = self.shape.slice(0, self.shape.length - n);
  const spatial = self.shape.slice(self.shape.length - n).map((d, i) => {
    const out = poolOutDim(d, g.kernel[i]!, g.stride[i]!, g.padBegin[i]!, g.padEnd[i]!, g.dilation[i]!, g.ceilMode);
    if (typeof out === 'number' && out < 1 && d !== 0) ctx.fail(`input ${fmtShape(self.shape)} is too small for kernel [${g.kernel.join(', ')}]`);
    return out;
  });
  return [...lead, ...spatial];
}

for (const n of [1, 2, 3]) {
  const maxArgs = `Tensor self, int[${n}] kernel_size, int[${n}] stride=[], int[${n}] padding=0, int[${n}] dilation=1, bool ceil_mode=False`;
  defineOp(`aten.max_pool${n}d.default(${maxArgs}) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    return [tensorType(self.dtype, pooledShape(ctx, self, n, atenPoolGeometry(geometryArgs(ctx), n, true)))];
  });
  defineOp(`aten.max_pool${n}d_with_indices.default(${maxArgs}) -> (Tensor, Tensor)`, (ctx) => {
    const self = ctx.tensor('self');
    const shape = pooledShape(ctx, self, n, atenPoolGeometry(geometryArgs(ctx), n, true));
    return [tensorType(self.dtype, shape), tensorType('int64', shape)];
  });
  const avgArgs =
    `Tensor self, int[${n}] kernel_size, int[${n}] stride=[], int[${n}] padding=0, bool ceil_mode=False, bool count_include_pad=True` +
    (n === 1 ? '' : ', int? divisor_override=None');
  defineOp(`aten.avg_pool${n}d.default(${avgArgs}) -> Tensor`, (ctx) => {
    const self = ctx.tensor('self');
    requireFloat(ctx, self.dtype, 'input');
    if (n > 1 && ctx.optInt('divisor_override') === 0) ctx.fail('divisor_override must not be zero');
    return [tensorType(self.dtype, pooledShape(ctx, self, n, atenPoolGeometry(geometryArgs(ctx), n, false)))];
  });

  const sizeType = n === 1 ? 'int[1]' : `SymInt[${n}]`;
  const adaptiveAvg = (ctx: InferContext): ValueType[] => {
    const self = ctx.tensor('self');
    requireFloat(ctx, self.dtype, 'input');
    return [tensorType(self.dtype, adaptiveShape(ctx, self, n))];
  };
  defineOp(`aten.adaptive_avg_pool${n}d.default(Tensor self, ${sizeType} output_size) -> Tensor`, adaptiveAvg);
  if (n > 1) defineOp(`aten._adaptive_avg_pool${n}d.default(Tensor self, SymInt[${n}] output_size) -> Tensor`, adaptiveAvg);
  defineOp(`aten.adaptive_max_pool${n}d.default(Tensor self, int[${n}] output_size) -> (Tensor, Tensor)`, (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const shape = adaptiveShape(ctx, self, n);
    return [tensorType(self.dtype, shape), tensorType('int64', shape)];
  });
}

function adaptiveShape(ctx: InferContext, self: TensorType, n: number): Dim[] {
  if (self.shape.length !== n + 1 && self.shape.length !== n + 2) ctx.fail(`input ${fmtShape(self.shape)} must have ${n + 1} or ${n + 2} dims`);
  const sizes = ctx.dims('output_size');
  const list = sizes.length === 1 && n > 1 ? new Array<Dim>(n).fill(sizes[0]!) : sizes;
  if (list.length !== n) ctx.fail(`output_size must have ${n} elements, got ${list.length}`);
  if (list.some((d) => typeof d === 'number' && d < 0)) ctx.fail(`output_size ${fmtShape(list)} must be non-negative`);
  return [...self.shape.slice(0, self.shape.length - n), ...list];
}

const poolRank = (ctx: InferContext): number => ctx.ints('kernel_size').length;

defineOp(
  'trt.max_pool_padded(Tensor self, int[] kernel_size, int[] stride, int[] pads_begin, int[] pads_end, int[] dilation, bool ceil_mode=False) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    return [tensorType(self.dtype, pooledShape(ctx, self, poolRank(ctx), paddedPoolGeometry(geometryArgs(ctx), poolRank(ctx), true)))];
  },
);

// ONNX MaxPool with its Indices output: flat indices into the whole input (storage_order 0).
defineOp(
  'trt.max_pool_onnx_indices(Tensor self, int[] kernel_size, int[] stride, int[] pads_begin, int[] pads_end, int[] dilation, bool ceil_mode=False) -> (Tensor, Tensor)',
  (ctx) => {
    const self = ctx.tensor('self');
    const n = poolRank(ctx);
    if (self.shape.length !== n + 2) ctx.fail(`input ${fmtShape(self.shape)} must have ${n + 2} dims [N, C, ...]`);
    const shape = pooledShape(ctx, self, n, paddedPoolGeometry(geometryArgs(ctx), n, true));
    return [tensorType(self.dtype, shape), tensorType('int64', shape)];
  },
);

defineOp(
  'trt.avg_pool_padded(Tensor self, int[] kernel_size, int[] stride, int[] pads_begin, int[] pads_end, bool ceil_mode=False, bool count_include_pad=False) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    requireFloat(ctx, self.dtype, 'input');
    return [tensorType(self.dtype, pooledShape(ctx, self, poolRank(ctx), paddedPoolGeometry(geometryArgs(ctx), poolRank(ctx), false)))];
  },
);

/**
 * ONNX RoiAlign (lib/kernels/roi-align.ts): self [N, C, H, W], rois [R, 4] (x1, y1, x2, y2) of
 * self's type, batch_indices [R] int64 → [R, C, output_height, output_width]. `half_pixel` is
 * the half_pixel coordinate mode (false: output_half_pixel); sampling_ratio 0 samples each
 * region adaptively, so how many samples a bin takes depends on the region's coordinates.
 */
defineOp(
  'trt.roi_align(Tensor self, Tensor rois, Tensor batch_indices, str mode="avg", int output_height=1, int output_width=1, int sampling_ratio=0, float spatial_scale=1.0, bool half_pixel=True) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    const rois = ctx.tensor('rois');
    const indices = ctx.tensor('batch_indices');
    requireFloat(ctx, self.dtype, 'input');
    if (self.shape.length !== 4) ctx.fail(`input ${fmtShape(self.shape)} must be [N, C, H, W]`);
    if (rois.dtype !== self.dtype) ctx.fail(`rois is ${rois.dtype} but the input is ${self.dtype}; they must have the same dtype`);
    if (rois.shape.length !== 2) ctx.fail(`rois ${fmtShape(rois.shape)} must be [R, 4]`);
    expectDim(ctx, rois.shape[1]!, 4, `rois ${fmtShape(rois.shape)} must be [R, 4]`);
    if (indices.dtype !== 'int64' || indices.shape.length !== 1) ctx.fail(`batch_indices must be a 1-D int64 tensor, got ${indices.dtype} ${fmtShape(indices.shape)}`);
    expectDim(ctx, indices.shape[0]!, rois.shape[0]!, 'batch_indices and rois differ in their number of regions');
    const mode = ctx.str('mode');
    if (mode !== 'avg' && mode !== 'max') ctx.fail(`mode must be "avg" or "max", got ${JSON.stringify(mode)}`);
    const height = ctx.int('output_height');
    const width = ctx.int('output_width');
    if (height < 1 || width < 1) ctx.fail(`output_height and output_width must be at least 1, got ${height} and ${width}`);
    if (ctx.int('sampling_ratio') < 0) ctx.fail(`sampling_ratio must be 0 (adaptive) or positive, got ${ctx.int('sampling_ratio')}`);
    const scale = ctx.float('spatial_scale');
    if (!Number.isFinite(scale)) ctx.fail(`spatial_scale must be finite, got ${scale}`);
    ctx.bool('half_pixel');
    return [tensorType(self.dtype, [rois.shape[0]!, self.shape[1]!, height, width])];
  },
);

// ---------------------------------------------------------------------------------------------
// Resizing

/**
 * floor(in * scale) as an exact dim, or null: integer scales multiply; a scale that is a
 * ratio p/q of small integers becomes (in*p)//q; otherwise only a static dim works.
 */
export function exactScaledDim(input: Dim, scale: number): Dim | null {
  if (typeof input === 'number') return Math.floor(input * scale);
  if (!(scale > 0) || !Number.isFinite(scale)) return null;
  for (let q = 1; q <= 64; q++) {
    const p = Math.round(scale * q);
    if (p / q === scale) return symFloorDiv(symMul(input, p), q);
  }
  return null;
}

function scaledDim(ctx: InferContext, input: Dim, scale: number): Dim {
  const d = exactScaledDim(input, scale);
  if (d === null) ctx.fail(`scale factor ${scale} on the symbolic dim ${fmtDim(input)} cannot be expressed exactly; give output sizes instead`);
  return d;
}

function upsampleType(ctx: InferContext, floatOnly: boolean): ValueType[] {
  const input = ctx.tensor('input');
  if (input.shape.length !== 4) ctx.fail(`input ${fmtShape(input.shape)} must be 4-D [N, C, H, W]`);
  if (floatOnly) requireFloat(ctx, input.dtype, 'input');
  const hasSize = ctx.has('output_size');
  const hasScales = ctx.has('scale_factors');
  if (hasSize === hasScales) ctx.fail('exactly one of output_size and scale_factors must be given');
  let spatial: Dim[];
  if (hasSize) {
    spatial = ctx.dims('output_size');
    if (spatial.length !== 2) ctx.fail(`output_size must have 2 elements, got ${spatial.length}`);
  } else {
    const arg = ctx.arg('scale_factors');
    const scales = Array.isArray(arg) ? (arg as unknown[]) : [];
    if (scales.length !== 2 || !scales.every((s) => typeof s === 'number' && s > 0)) ctx.fail('scale_factors must be 2 positive numbers');
    spatial = input.shape.slice(2).map((d, i) => scaledDim(ctx, d, scales[i] as number));
  }
  return [tensorType(input.dtype, [...input.shape.slice(0, 2), ...spatial])];
}

defineOp('aten.upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor', (ctx) => upsampleType(ctx, false));
defineOp('aten.upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor', (ctx) =>
  upsampleType(ctx, true),
);

const COORDINATE_MODES = new Set(['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'half_pixel_symmetric', 'tf_crop_and_resize']);
const NEAREST_MODES = new Set(['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil']);

// ONNX Resize with its coordinate transforms and filters: `size` lists the spatial dims of an
// [N, C, ...] input; `scales` (when ONNX gave scales) drive the coordinate mapping; `roi`
// (starts, then ends, per spatial dim) is tf_crop_and_resize's crop.
defineOp(
  'trt.resize(Tensor self, SymInt[] size, float[]? scales=None, str mode="nearest", str coordinate_transformation_mode="half_pixel", str nearest_mode="round_prefer_floor", float cubic_coeff_a=-0.75, bool exclude_outside=False, bool antialias=False, float[]? roi=None, float extrapolation_value=0.0) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    const size = ctx.dims('size');
    if (self.shape.length < 3 || size.length !== self.shape.length - 2) {
      ctx.fail(`size ${fmtShape(size)} must list the ${self.shape.length - 2} spatial dims of input ${fmtShape(self.shape)}`);
    }
    const mode = ctx.str('mode');
    if (mode !== 'nearest' && mode !== 'linear' && mode !== 'cubic') ctx.fail(`mode must be nearest, linear or cubic, got ${JSON.stringify(mode)}`);
    if (mode !== 'nearest') requireFloat(ctx, self.dtype, 'input');
    const coordinate = ctx.str('coordinate_transformation_mode');
    if (!COORDINATE_MODES.has(coordinate)) ctx.fail(`unknown coordinate_transformation_mode ${coordinate}`);
    if (mode === 'nearest' && (coordinate === 'half_pixel_symmetric' || coordinate === 'tf_crop_and_resize' || ctx.bool('antialias'))) {
      ctx.fail(`nearest resizing with ${coordinate} or antialias is not supported`);
    }
    if (!NEAREST_MODES.has(ctx.str('nearest_mode'))) ctx.fail(`unknown nearest_mode ${ctx.str('nearest_mode')}`);
    if (ctx.has('scales')) {
      const scales = ctx.arg('scales') as unknown[];
      if (scales.length !== size.length) ctx.fail(`scales must have ${size.length} elements`);
    }
    const roi = ctx.has('roi') ? (ctx.arg('roi') as unknown[]) : null;
    if (coordinate === 'tf_crop_and_resize' && roi?.length !== 2 * size.length) ctx.fail(`tf_crop_and_resize needs a roi of ${2 * size.length} values`);
    return [tensorType(self.dtype, [...self.shape.slice(0, 2), ...size])];
  },
);

// ---------------------------------------------------------------------------------------------
// Top-k

defineOp(
  'aten.topk.default(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)',
  (ctx) => {
    const self = ctx.tensor('self');
    noComplex(ctx, self);
    const k = ctx.dim('k');
    const axis = normAxis(ctx, ctx.int('dim'), self.shape.length);
    const size = self.shape.length === 0 ? 1 : self.shape[axis]!;
    if (typeof k === 'number' && (k < 0 || (typeof size === 'number' && k > size))) ctx.fail(`k = ${k} is out of range for a dim of size ${fmtDim(size)}`);
    const shape = self.shape.map((d, i) => (i === axis ? k : d));
    return [tensorType(self.dtype, shape), tensorType('int64', shape)];
  },
);

// ---------------------------------------------------------------------------------------------
// Attention

defineOp(
  'aten.scaled_dot_product_attention.default(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor',
  (ctx) => {
    const q = ctx.tensor('query');
    const k = ctx.tensor('key');
    const v = ctx.tensor('value');
    const mask = ctx.optTensor('attn_mask');
    const dtype = sameDtype(ctx, ['query', q], ['key', k], ['value', v]);
    requireFloat(ctx, dtype, 'query');
    if (ctx.float('dropout_p') !== 0) ctx.fail('dropout_p must be 0 (inference); export the model in eval() mode');
    if (q.shape.length < 2 || k.shape.length < 2 || v.shape.length < 2) ctx.fail('query, key and value need at least 2 dims [..., L, E]');
    const L = q.shape[q.shape.length - 2]!;
    const S = k.shape[k.shape.length - 2]!;
    expectDim(ctx, q.shape[q.shape.length - 1]!, k.shape[k.shape.length - 1]!, 'query and key embedding sizes differ');
    expectDim(ctx, S, v.shape[v.shape.length - 2]!, 'key and value sequence lengths differ');
    let kBatch = k.shape.slice(0, -2);
    let vBatch = v.shape.slice(0, -2);
    const qBatch = q.shape.slice(0, -2);
    if (ctx.bool('enable_gqa')) {
      if (q.shape.length < 3 || k.shape.length < 3 || v.shape.length < 3) ctx.fail('enable_gqa needs [..., heads, L, E] inputs');
      const hq = q.shape[q.shape.length - 3]!;
      const hk = k.shape[k.shape.length - 3]!;
      const hv = v.shape[v.shape.length - 3]!;
      for (const [name, h] of [['key', hk], ['value', hv]] as const) {
        if (typeof hq === 'number' && typeof h === 'number' && (h < 1 || hq % h !== 0)) ctx.fail(`query heads ${hq} are not a multiple of ${name} heads ${h}`);
      }
      // Key and value heads are repeated to the query's.
      kBatch = [...kBatch.slice(0, -1), hq];
      vBatch = [...vBatch.slice(0, -1), hq];
    }
    const batch = broadcastDims(ctx, qBatch, kBatch, vBatch);
    if (mask) {
      if (mask.dtype !== 'bool' && mask.dtype !== dtype) ctx.fail(`attn_mask must be bool or ${dtype}, got ${mask.dtype}`);
      if (ctx.bool('is_causal')) ctx.fail('attn_mask and is_causal cannot both be given');
      biasBroadcasts(ctx, mask.shape, [...batch, L, S], 'attn_mask');
    }
    if (ctx.has('scale')) ctx.float('scale');
    return [tensorType(dtype, [...batch, L, v.shape[v.shape.length - 1]!])];
  },
);

// ---------------------------------------------------------------------------------------------
// Dropout

/**
 * ONNX Dropout whose training_mode (and ratio) are only known at run time: the input and an
 * all-true mask where the run does not train or drops nothing (ratio 0); a run that trains
 * with a nonzero ratio is refused (its output is random). A known training_mode needs no node.
 */
defineOp('trt.dropout_onnx(Tensor self, Tensor? ratio, Tensor training_mode) -> (Tensor output, Tensor mask)', (ctx) => {
  const self = ctx.tensor('self');
  requireFloat(ctx, self.dtype, 'input');
  const ratio = ctx.optTensor('ratio');
  if (ratio !== null && (!isFloating(ratio.dtype) || ratio.shape.length !== 0)) ctx.fail(`ratio must be a floating-point scalar, got ${ratio.dtype} ${fmtShape(ratio.shape)}`);
  const mode = ctx.tensor('training_mode');
  if (mode.dtype !== 'bool' || mode.shape.length !== 0) ctx.fail(`training_mode must be a bool scalar, got ${mode.dtype} ${fmtShape(mode.shape)}`);
  return [tensorType(self.dtype, self.shape), tensorType('bool', self.shape)];
});
