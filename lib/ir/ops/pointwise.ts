/**
 * Pointwise ops: elementwise arithmetic, comparisons, logical ops, where/masked_fill, unary
 * math and activations, clamps, casts and identity-like copies, and complex views.
 *
 * Result dtypes follow PyTorch: binary ops use torch.result_type through
 * `resultTypeOfOperands` (lib/ir/dtype.ts), the same rule the CPU kernels apply, so a
 * Scalar argument (a wrapped number) does not promote a tensor of the same category. A
 * Scalar given as a JS number counts as an int when it is integer-valued (as the kernels
 * read it), a float otherwise; a SymInt value is an int. Shapes broadcast symbolically.
 */
import {
  dtypeInfo,
  isComplex,
  isFloating,
  isInteger,
  resultTypeOfOperands,
  scalarDType,
  type DType,
  type PromotionOperand,
} from '../dtype';
import { tensorType, Value, type Arg, type TensorType, type ValueType } from '../graph';
import { formatShape, type Dim } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { broadcastDims } from './shape-rules';

// ---------------------------------------------------------------------------------------
// Shared helpers (exported for other families and the frontends).

/** The category of a Scalar argument: booleans, integer-valued numbers and SymInts are bool/int. */
export function scalarArgKind(a: Arg): 'bool' | 'int' | 'float' | null {
  if (typeof a === 'boolean') return 'bool';
  if (typeof a === 'number') return Number.isInteger(a) ? 'int' : 'float';
  if (a instanceof Value && a.type.kind === 'symint') return 'int';
  return null;
}

/** A tensor type as type promotion sees it. */
export function tensorOperand(t: TensorType): PromotionOperand {
  return { dtype: t.dtype, role: t.shape.length > 0 ? 'tensor' : 'zerodim' };
}

/** The PyTorch result dtype of tensors and wrapped scalars (torch.result_type). */
export function promoteOperands(ctx: InferContext, operands: readonly PromotionOperand[]): DType {
  const d = resultTypeOfOperands(operands);
  if (d === undefined) return ctx.fail('no operands to promote');
  return d;
}

/** The dtype a float function of `d` returns: floats and complex keep theirs; integers and bool give float32. */
export function floatResultType(d: DType): DType {
  return isFloating(d) || isComplex(d) ? d : 'float32';
}

const isIntegral = (d: DType): boolean => isInteger(d) || d === 'bool';

/** 'T': a Tensor argument; 'S': a Scalar argument. */
type Kind = 'T' | 'S';

interface Operand {
  readonly promo: PromotionOperand;
  readonly shape: readonly Dim[];
  readonly type?: TensorType;
}

function operand(ctx: InferContext, name: string, kind: Kind): Operand {
  if (kind === 'T') {
    const t = ctx.tensor(name);
    return { promo: tensorOperand(t), shape: t.shape, type: t };
  }
  const k = scalarArgKind(ctx.arg(name));
  if (k === null) return ctx.fail(`argument ${name} must be a number or a boolean`);
  return { promo: { dtype: scalarDType(k), role: 'scalar' }, shape: [] };
}

function binary(ctx: InferContext, a: Kind, b: Kind, names: [string, string] = ['self', 'other']): { dtype: DType; shape: Dim[]; x: Operand; y: Operand } {
  const x = operand(ctx, names[0], a);
  const y = operand(ctx, names[1], b);
  return { dtype: promoteOperands(ctx, [x.promo, y.promo]), shape: broadcastDims(ctx, x.shape, y.shape), x, y };
}

function noComplex(ctx: InferContext, dtype: DType, what: string): void {
  if (isComplex(dtype)) ctx.fail(`${what} is not defined for complex tensors (${dtype})`);
}

function noBoolOperand(ctx: InferContext, ops: readonly Operand[], what: string): void {
  if (ops.some((o) => o.promo.dtype === 'bool')) {
    ctx.fail(`${what} with a bool operand is not supported (PyTorch: use logical_xor / logical_not instead)`);
  }
}

function checkAlpha(ctx: InferContext, dtype: DType): void {
  const kind = scalarArgKind(ctx.arg('alpha'));
  if (kind === null) ctx.fail('argument alpha must be a number');
  if (isIntegral(dtype) && kind === 'float') ctx.fail(`alpha must be an integer for ${dtype} operands, got ${String(ctx.arg('alpha'))}`);
}

const out = (dtype: DType, shape: readonly Dim[]): ValueType[] => [tensorType(dtype, shape)];

// ---------------------------------------------------------------------------------------
// Arithmetic.

for (const [name, a, b] of [
  ['aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'T', 'T'],
  ['aten.add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor', 'T', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b);
    checkAlpha(ctx, r.dtype);
    return out(r.dtype, r.shape);
  });
}

for (const [name, a, b] of [
  ['aten.sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'T', 'T'],
  ['aten.sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor', 'T', 'S'],
  ['aten.rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'T', 'T'],
  ['aten.rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor', 'T', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b);
    noBoolOperand(ctx, [r.x, r.y], 'subtraction');
    checkAlpha(ctx, r.dtype);
    return out(r.dtype, r.shape);
  });
}

for (const [name, a, b] of [
  ['aten.mul.Tensor(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.mul.Scalar(Tensor self, Scalar other) -> Tensor', 'T', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b);
    return out(r.dtype, r.shape);
  });
}

/** True division: integer and bool operands give float32 (the default dtype). */
const trueDivType = (d: DType): DType => (isIntegral(d) ? 'float32' : d);

for (const [name, a, b] of [
  ['aten.div.Tensor(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.div.Scalar(Tensor self, Scalar other) -> Tensor', 'T', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b);
    return out(trueDivType(r.dtype), r.shape);
  });
}

for (const [name, a, b] of [
  ['aten.div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor', 'T', 'T'],
  ['aten.div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor', 'T', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b);
    const mode = ctx.optStr('rounding_mode');
    if (mode === null) return out(trueDivType(r.dtype), r.shape);
    if (mode !== 'trunc' && mode !== 'floor') ctx.fail(`rounding_mode must be None, 'trunc' or 'floor', got ${JSON.stringify(mode)}`);
    noComplex(ctx, r.dtype, `div with rounding_mode '${mode}'`);
    return out(r.dtype, r.shape);
  });
}

/** Ops whose result is the promoted type and that PyTorch does not define for complex. */
function realBinary(what: string, entries: ReadonlyArray<readonly [string, Kind, Kind, [string, string]?]>): void {
  for (const [name, a, b, names] of entries) {
    defineOp(name, (ctx) => {
      const r = binary(ctx, a, b, names);
      noComplex(ctx, r.dtype, what);
      return out(r.dtype, r.shape);
    });
  }
}

realBinary('floor_divide', [
  ['aten.floor_divide.default(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.floor_divide.Scalar(Tensor self, Scalar other) -> Tensor', 'T', 'S'],
]);
realBinary('maximum', [
  ['aten.maximum.default(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.max.other(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
]);
realBinary('minimum', [
  ['aten.minimum.default(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.min.other(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
]);
realBinary('remainder', [
  ['aten.remainder.Tensor(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.remainder.Scalar(Tensor self, Scalar other) -> Tensor', 'T', 'S'],
  ['aten.remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor', 'S', 'T'],
]);
realBinary('fmod', [
  ['aten.fmod.Tensor(Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.fmod.Scalar(Tensor self, Scalar other) -> Tensor', 'T', 'S'],
]);

// pow: PyTorch's type rule (complex operands give a complex power, lib/kernels/complex.ts).
for (const [name, a, b] of [
  ['aten.pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor', 'T', 'T'],
  ['aten.pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor', 'T', 'S'],
  ['aten.pow.Scalar(Scalar self, Tensor exponent) -> Tensor', 'S', 'T'],
] as const) {
  defineOp(name, (ctx) => {
    const r = binary(ctx, a, b, ['self', 'exponent']);
    return out(r.dtype, r.shape);
  });
}

// ---------------------------------------------------------------------------------------
// Comparisons and logical ops (bool results).

for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge']) {
  for (const [overload, b] of [
    ['Tensor', 'T'],
    ['Scalar', 'S'],
  ] as const) {
    defineOp(`aten.${op}.${overload}(Tensor self, ${overload} other) -> Tensor`, (ctx) => {
      const r = binary(ctx, 'T', b);
      if (op !== 'eq' && op !== 'ne') noComplex(ctx, r.dtype, `ordering (${op})`);
      return out('bool', r.shape);
    });
  }
}

for (const op of ['logical_and', 'logical_or', 'logical_xor']) {
  defineOp(`aten.${op}.default(Tensor self, Tensor other) -> Tensor`, (ctx) => out('bool', binary(ctx, 'T', 'T').shape));
}

defineOp('aten.logical_not.default(Tensor self) -> Tensor', (ctx) => out('bool', ctx.tensor('self').shape));

// `a & b`, `a | b`, `a ^ b` (torch.export leaves `aten.__and__.Tensor` from Python's operators,
// `aten.bitwise_and.Tensor` from torch.bitwise_and): on bool tensors, what transformers' mask code
// combines masks with; they decompose to logical_and/or/xor. Integer bitwise arithmetic has no
// layer here, so integer operands are refused by name.
for (const [op, python] of [['and', '&'], ['or', '|'], ['xor', '^']] as const) {
  for (const target of [`aten.__${op}__.Tensor`, `aten.bitwise_${op}.Tensor`]) {
    defineOp(`${target}(Tensor self, Tensor other) -> Tensor`, (ctx) => {
      const r = binary(ctx, 'T', 'T');
      for (const name of ['self', 'other']) {
        const t = ctx.tensor(name);
        if (t.dtype !== 'bool') ctx.fail(`${python} of ${t.dtype} tensors (bitwise integer arithmetic) is not supported; ${python} of bool tensors is`);
      }
      return out('bool', r.shape);
    });
  }
}

defineOp('aten.bitwise_not.default(Tensor self) -> Tensor', (ctx) => {
  const t = ctx.tensor('self');
  if (!isIntegral(t.dtype)) ctx.fail(`bitwise_not needs a bool or integer tensor, got ${t.dtype}`);
  return out(t.dtype, t.shape);
});

// ---------------------------------------------------------------------------------------
// where and masked_fill.

function boolCondition(ctx: InferContext, name: string, what: string): TensorType {
  const c = ctx.tensor(name);
  if (c.dtype !== 'bool') ctx.fail(`${what} must be a bool tensor, got ${c.dtype}`);
  return c;
}

for (const [name, a, b] of [
  ['aten.where.self(Tensor condition, Tensor self, Tensor other) -> Tensor', 'T', 'T'],
  ['aten.where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor', 'S', 'T'],
  ['aten.where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor', 'T', 'S'],
  ['aten.where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor', 'S', 'S'],
] as const) {
  defineOp(name, (ctx) => {
    const c = boolCondition(ctx, 'condition', 'the condition');
    const r = binary(ctx, a, b);
    return out(r.dtype, broadcastDims(ctx, c.shape, r.x.shape, r.y.shape));
  });
}

defineOp('aten.masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mask = boolCondition(ctx, 'mask', 'the mask');
  operand(ctx, 'value', 'S');
  return out(self.dtype, broadcastDims(ctx, self.shape, mask.shape));
});

defineOp('aten.masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mask = boolCondition(ctx, 'mask', 'the mask');
  const value = ctx.tensor('value');
  if (value.shape.length !== 0) ctx.fail(`the value must be a 0-dimensional tensor, got shape ${formatShape(value.shape)}`);
  return out(self.dtype, broadcastDims(ctx, self.shape, mask.shape));
});

// fill: every element the value, in self's dtype (what `fill_`, the in-place form torch.export
// leaves in slice-assignment code such as `mask[a:b, c:d] = k`, becomes in the importer).
defineOp('aten.fill.Scalar(Tensor self, Scalar value) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  operand(ctx, 'value', 'S');
  return out(self.dtype, self.shape);
});

defineOp('aten.fill.Tensor(Tensor self, Tensor value) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const value = ctx.tensor('value');
  if (value.shape.length !== 0) ctx.fail(`the value must be a 0-dimensional tensor, got shape ${formatShape(value.shape)}`);
  return out(self.dtype, self.shape);
});

// ---------------------------------------------------------------------------------------
// Unary math.

for (const op of ['exp', 'log', 'log1p', 'sqrt', 'rsqrt', 'reciprocal', 'sin', 'cos', 'tan', 'tanh', 'sigmoid', 'erf']) {
  defineOp(`aten.${op}.default(Tensor self) -> Tensor`, (ctx) => {
    const t = ctx.tensor('self');
    return out(floatResultType(t.dtype), t.shape);
  });
}

defineOp('aten.neg.default(Tensor self) -> Tensor', (ctx) => {
  const t = ctx.tensor('self');
  if (t.dtype === 'bool') ctx.fail('negation of a bool tensor is not supported (PyTorch: use logical_not)');
  return out(t.dtype, t.shape);
});

defineOp('aten.abs.default(Tensor self) -> Tensor', (ctx) => {
  const t = ctx.tensor('self');
  return out(dtypeInfo(t.dtype).component, t.shape);
});

/** Same type out; not for complex (and not for bool when `noBool`). */
function sameTypeReal(signature: string, what: string, noBool = false): void {
  defineOp(signature, (ctx) => {
    const t = ctx.tensor('self');
    noComplex(ctx, t.dtype, what);
    if (noBool && t.dtype === 'bool') ctx.fail(`${what} is not defined for bool tensors`);
    return out(t.dtype, t.shape);
  });
}

sameTypeReal('aten.sign.default(Tensor self) -> Tensor', 'sign');
sameTypeReal('aten.relu.default(Tensor self) -> Tensor', 'relu', true);
for (const op of ['floor', 'ceil', 'trunc']) sameTypeReal(`aten.${op}.default(Tensor self) -> Tensor`, op);
sameTypeReal('aten.round.default(Tensor self) -> Tensor', 'round');
sameTypeReal('aten.round.decimals(Tensor self, *, int decimals) -> Tensor', 'round');

for (const op of ['isnan', 'isinf']) {
  defineOp(`aten.${op}.default(Tensor self) -> Tensor`, (ctx) => out('bool', ctx.tensor('self').shape));
}

// ---------------------------------------------------------------------------------------
// Activations PyTorch implements only for floating types.

function floatOnly(ctx: InferContext, what: string): ValueType[] {
  const t = ctx.tensor('self');
  if (!isFloating(t.dtype)) ctx.fail(`${what} needs a floating-point tensor, got ${t.dtype}`);
  return out(t.dtype, t.shape);
}

defineOp("aten.gelu.default(Tensor self, *, str approximate='none') -> Tensor", (ctx) => {
  const approximate = ctx.str('approximate');
  if (approximate !== 'none' && approximate !== 'tanh') ctx.fail(`approximate must be 'none' or 'tanh', got ${JSON.stringify(approximate)}`);
  return floatOnly(ctx, 'gelu');
});
for (const op of ['silu', 'hardswish', 'hardsigmoid']) defineOp(`aten.${op}.default(Tensor self) -> Tensor`, (ctx) => floatOnly(ctx, op));
defineOp('aten.leaky_relu.default(Tensor self, Scalar negative_slope=0.01) -> Tensor', (ctx) => floatOnly(ctx, 'leaky_relu'));
defineOp('aten.elu.default(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor', (ctx) => floatOnly(ctx, 'elu'));
defineOp('aten.softplus.default(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor', (ctx) => {
  if (ctx.float('beta') === 0) ctx.fail('beta must not be 0');
  return floatOnly(ctx, 'softplus');
});
/** ONNX HardSigmoid: max(0, min(1, alpha·x + beta)) with any alpha and beta (PyTorch's is alpha 1/6, beta 1/2). */
defineOp('trt.hardsigmoid_onnx(Tensor self, float alpha=0.2, float beta=0.5) -> Tensor', (ctx) => floatOnly(ctx, 'hardsigmoid'));

/** PyTorch's prelu kernel: x > 0 ? x : weight·x, with the weight broadcast (NumPy rules) against x. */
defineOp('aten._prelu_kernel.default(Tensor self, Tensor weight) -> Tensor', (ctx) => {
  const r = binary(ctx, 'T', 'T', ['self', 'weight']);
  noComplex(ctx, r.dtype, 'prelu');
  return out(r.dtype, r.shape);
});

// ---------------------------------------------------------------------------------------
// Clamps.

function clampType(ctx: InferContext, operands: readonly Operand[], shapes: ReadonlyArray<readonly Dim[]>): ValueType[] {
  const dtype = promoteOperands(ctx, operands.map((o) => o.promo));
  noComplex(ctx, dtype, 'clamp');
  if (dtype === 'bool') ctx.fail('clamp is not defined for bool tensors');
  return out(dtype, broadcastDims(ctx, ...shapes));
}

defineOp('aten.clamp.default(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor', (ctx) => {
  const self = operand(ctx, 'self', 'T');
  const bounds = ['min', 'max'].filter((n) => ctx.has(n)).map((n) => operand(ctx, n, 'S'));
  if (bounds.length === 0) ctx.fail('at least one of min and max must be given');
  return clampType(ctx, [self, ...bounds], [self.shape]);
});

defineOp('aten.clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor', (ctx) => {
  const self = operand(ctx, 'self', 'T');
  const bounds = ['min', 'max'].filter((n) => ctx.has(n)).map((n) => operand(ctx, n, 'T'));
  if (bounds.length === 0) ctx.fail('at least one of min and max must be given');
  return clampType(ctx, [self, ...bounds], [self.shape, ...bounds.map((b) => b.shape)]);
});

for (const bound of ['min', 'max']) {
  for (const [overload, kind] of [
    ['default', 'S'],
    ['Tensor', 'T'],
  ] as const) {
    defineOp(`aten.clamp_${bound}.${overload}(Tensor self, ${kind === 'S' ? 'Scalar' : 'Tensor'} ${bound}) -> Tensor`, (ctx) => {
      const self = operand(ctx, 'self', 'T');
      const b = operand(ctx, bound, kind);
      return clampType(ctx, [self, b], [self.shape, b.shape]);
    });
  }
}

defineOp('aten.hardtanh.default(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor', (ctx) => {
  const self = operand(ctx, 'self', 'T');
  const lo = operand(ctx, 'min_val', 'S');
  const hi = operand(ctx, 'max_val', 'S');
  const dtype = promoteOperands(ctx, [self.promo, lo.promo, hi.promo]);
  // hardtanh writes into a tensor like self, which a promoted result could not be cast back to.
  if (dtype !== self.promo.dtype) ctx.fail(`hardtanh bounds ${String(ctx.arg('min_val'))}, ${String(ctx.arg('max_val'))} do not fit a ${self.promo.dtype} tensor`);
  if (dtype === 'bool' || isComplex(dtype)) ctx.fail(`hardtanh is not defined for ${dtype} tensors`);
  return out(dtype, self.shape);
});

// ---------------------------------------------------------------------------------------
// Casts, copies and identity-like ops.

defineOp(
  'aten._to_copy.default(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor',
  (ctx) => {
    const t = ctx.tensor('self');
    return out(ctx.dtype('dtype') ?? t.dtype, t.shape);
  },
);

defineOp('aten.to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  const dtype = ctx.dtype('dtype');
  if (dtype === null) return ctx.fail('dtype is required');
  return out(dtype, t.shape);
});

// The forms transformers' torch.export graphs carry: device/layout arguments are irrelevant to a
// functional graph (the decompositions turn them into _to_copy or drop them).
defineOp(
  'aten.to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)',
  (ctx) => {
    const t = ctx.tensor('self');
    return out(ctx.dtype('dtype') ?? t.dtype, t.shape);
  },
);
defineOp('aten.to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  const dtype = ctx.dtype('dtype');
  if (dtype === null) return ctx.fail('dtype is required');
  return out(dtype, t.shape);
});

defineOp('aten.type_as.default(Tensor self, Tensor other) -> Tensor', (ctx) => out(ctx.tensor('other').dtype, ctx.tensor('self').shape));

for (const signature of [
  'aten.clone.default(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor',
  'aten.alias.default(Tensor(a) self) -> Tensor(a)',
  'aten.lift_fresh_copy.default(Tensor self) -> Tensor',
  'aten.detach.default(Tensor(a) self) -> Tensor(a)',
  'aten.contiguous.default(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)',
]) {
  defineOp(signature, (ctx) => {
    const t = ctx.tensor('self');
    return out(t.dtype, t.shape);
  });
}

defineOp('aten.dropout.default(Tensor input, float p, bool train) -> Tensor', (ctx) => {
  const t = ctx.tensor('input');
  const p = ctx.float('p');
  if (!(p >= 0 && p <= 1)) ctx.fail(`dropout probability must be in [0, 1], got ${p}`);
  if (ctx.bool('train') && p > 0) ctx.fail('dropout in training mode is random and cannot be compiled; export the model in eval mode (model.eval())');
  return out(t.dtype, t.shape);
});

defineOp(
  'aten.scalar_tensor.default(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor',
  (ctx) => {
    operand(ctx, 's', 'S');
    // Without a dtype PyTorch uses the default dtype (float32), whatever the scalar.
    return out(ctx.dtype('dtype') ?? 'float32', []);
  },
);

// ---------------------------------------------------------------------------------------
// Complex numbers.

function requireComplex(ctx: InferContext, t: TensorType, what: string): void {
  if (!isComplex(t.dtype)) ctx.fail(`${what} needs a complex tensor, got ${t.dtype}`);
}

defineOp('aten.view_as_real.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  requireComplex(ctx, t, 'view_as_real');
  return out(dtypeInfo(t.dtype).component, [...t.shape, 2]);
});

defineOp('aten.view_as_complex.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  if (t.dtype !== 'float32' && t.dtype !== 'float64') ctx.fail(`view_as_complex needs a float32 or float64 tensor, got ${t.dtype}`);
  const last = t.shape[t.shape.length - 1];
  if (last !== 2) ctx.fail(`view_as_complex needs a last dimension of size 2, got shape ${formatShape(t.shape)}`);
  return out(t.dtype === 'float32' ? 'complex64' : 'complex128', t.shape.slice(0, -1));
});

defineOp('aten.polar.default(Tensor abs, Tensor angle) -> Tensor', (ctx) => {
  const a = ctx.tensor('abs');
  const b = ctx.tensor('angle');
  if (a.dtype !== b.dtype || (a.dtype !== 'float32' && a.dtype !== 'float64')) {
    ctx.fail(`abs and angle must both be float32 or both float64, got ${a.dtype} and ${b.dtype}`);
  }
  return out(a.dtype === 'float32' ? 'complex64' : 'complex128', broadcastDims(ctx, a.shape, b.shape));
});

defineOp('aten.real.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  return out(dtypeInfo(t.dtype).component, t.shape);
});

defineOp('aten.imag.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const t = ctx.tensor('self');
  requireComplex(ctx, t, 'imag');
  return out(dtypeInfo(t.dtype).component, t.shape);
});

for (const signature of ['aten.conj_physical.default(Tensor self) -> Tensor', 'aten._conj.default(Tensor(a) self) -> Tensor(a)']) {
  defineOp(signature, (ctx) => {
    const t = ctx.tensor('self');
    return out(t.dtype, t.shape);
  });
}

defineOp('aten.angle.default(Tensor self) -> Tensor', (ctx) => {
  const t = ctx.tensor('self');
  return out(isComplex(t.dtype) ? dtypeInfo(t.dtype).component : floatResultType(t.dtype), t.shape);
});
