/**
 * ONNX pointwise ops (opsets 7–28) mapped onto the ATen-named pointwise ops. ONNX binary
 * ops require equal input types (Pow excepted), so the ATen ops are emitted on them directly
 * and PyTorch's promotion never changes the type. Folders for shape arithmetic (Add, Mul,
 * Equal, Where, Cast...) run first; these mappers handle the tensor case.
 */
import { isFloating, isInteger, isLowPrecision, type DType } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isMiniFloat, miniFloatMax } from '../../../ir/low-precision';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp, takesAnyValues } from '../registry';
import { dtypeFromOnnx } from '../tensor-proto';

/** Fails unless the inputs at `indices` share one element type, as the ONNX type constraints require. */
function sameTypes(ctx: OnnxContext, indices: readonly number[]): void {
  const types = indices.filter((i) => ctx.hasInput(i)).map((i) => ctx.inputType(i).dtype);
  if (types.some((t) => t !== types[0])) ctx.bad(`inputs must have one element type, got ${types.join(', ')}`);
}

function binary(opType: string, target: string): void {
  defineOnnxOp(opType, (ctx) => {
    sameTypes(ctx, [0, 1]);
    return [ctx.emit(target, { self: ctx.input(0), other: ctx.input(1) })];
  });
}

function unary(opType: string, target: string): void {
  defineOnnxOp(opType, (ctx) => [ctx.emit(target, { self: ctx.input(0) })]);
}

// Arithmetic.
binary('Add', 'aten.add.Tensor');
binary('Sub', 'aten.sub.Tensor');
binary('Mul', 'aten.mul.Tensor');

defineOnnxOp('Div', (ctx) => {
  sameTypes(ctx, [0, 1]);
  const self = ctx.input(0);
  const other = ctx.input(1);
  // ONNX integer division truncates toward zero (C semantics).
  if (isInteger(self.tensorType.dtype)) return [ctx.emit('aten.div.Tensor_mode', { self, other, rounding_mode: 'trunc' })];
  return [ctx.emit('aten.div.Tensor', { self, other })];
});

defineOnnxOp('Pow', (ctx) => {
  // Base and exponent may differ in type; the result has the base's type. PyTorch promotes
  // (int32 ** float32 → float32), so compute in the promoted type and cast back.
  const self = ctx.input(0);
  const exponent = ctx.input(1);
  const base = self.tensorType.dtype;
  if (base === 'bool' || exponent.tensorType.dtype === 'bool') ctx.bad('Pow is not defined for bool tensors');
  return [ctx.cast(ctx.emit('aten.pow.Tensor_Tensor', { self, exponent }), base)];
});

defineOnnxOp('Mod', (ctx) => {
  sameTypes(ctx, [0, 1]);
  const fmodAttr = ctx.attrInt('fmod', 0);
  if (fmodAttr !== 0 && fmodAttr !== 1) ctx.bad(`attribute fmod must be 0 or 1, got ${fmodAttr}`);
  const self = ctx.input(0);
  if (fmodAttr === 0 && isFloating(self.tensorType.dtype)) ctx.bad(`fmod must be 1 for floating-point inputs (${self.tensorType.dtype})`);
  // fmod=0: the sign of the divisor (Python %, torch.remainder); fmod=1: C fmod.
  return [ctx.emit(fmodAttr === 1 ? 'aten.fmod.Tensor' : 'aten.remainder.Tensor', { self, other: ctx.input(1) })];
});

/** A variadic op folded pairwise with `target` (broadcasting as it goes). */
function fold(ctx: OnnxContext, target: string): Value {
  const inputs = ctx.inputs();
  if (inputs.length === 0) ctx.bad('at least one input is required');
  sameTypes(
    ctx,
    ctx.node.inputs.map((_, i) => i),
  );
  return inputs.slice(1).reduce((acc, v) => ctx.emit(target, { self: acc, other: v }), inputs[0]!);
}

defineOnnxOp('Max', (ctx) => [fold(ctx, 'aten.maximum.default')]);
defineOnnxOp('Min', (ctx) => [fold(ctx, 'aten.minimum.default')]);
defineOnnxOp('Sum', (ctx) => [fold(ctx, 'aten.add.Tensor')]);
defineOnnxOp('Mean', (ctx) => {
  const n = ctx.inputs().length;
  const sum = fold(ctx, 'aten.add.Tensor');
  if (!isFloating(sum.tensorType.dtype)) ctx.bad(`Mean needs floating-point inputs, got ${sum.tensorType.dtype}`);
  return [n === 1 ? sum : ctx.emit('aten.div.Scalar', { self: sum, other: n })];
});

// Comparisons and logical ops.
// Equal also compares string tensors.
defineOnnxOp('Equal', (ctx) => {
  const x = ctx.input(0);
  const y = ctx.input(1);
  if (x.type.kind === 'strings' || y.type.kind === 'strings') return [ctx.emit('trt.string_equal', { x, y })];
  sameTypes(ctx, [0, 1]);
  return [ctx.emit('aten.eq.Tensor', { self: x, other: y })];
});
takesAnyValues(['Equal']);
binary('Less', 'aten.lt.Tensor');
binary('Greater', 'aten.gt.Tensor');
binary('LessOrEqual', 'aten.le.Tensor');
binary('GreaterOrEqual', 'aten.ge.Tensor');
binary('And', 'aten.logical_and.default');
binary('Or', 'aten.logical_or.default');
binary('Xor', 'aten.logical_xor.default');
unary('Not', 'aten.logical_not.default');

defineOnnxOp('Where', (ctx) => {
  sameTypes(ctx, [1, 2]);
  return [ctx.emit('aten.where.self', { condition: ctx.input(0), self: ctx.input(1), other: ctx.input(2) })];
});

// Unary math.
unary('Neg', 'aten.neg.default');
unary('Abs', 'aten.abs.default');
unary('Sign', 'aten.sign.default');
unary('Exp', 'aten.exp.default');
unary('Log', 'aten.log.default');
unary('Sqrt', 'aten.sqrt.default');
unary('Reciprocal', 'aten.reciprocal.default');
unary('Sin', 'aten.sin.default');
unary('Cos', 'aten.cos.default');
unary('Tan', 'aten.tan.default');
unary('Tanh', 'aten.tanh.default');
unary('Sigmoid', 'aten.sigmoid.default');
unary('Relu', 'aten.relu.default');
unary('Erf', 'aten.erf.default');
unary('Floor', 'aten.floor.default');
unary('Ceil', 'aten.ceil.default');
unary('Round', 'aten.round.default');
unary('IsNaN', 'aten.isnan.default');
unary('HardSwish', 'aten.hardswish.default');

defineOnnxOp('IsInf', (ctx) => {
  const self = ctx.input(0);
  const positive = ctx.attrInt('detect_positive', 1) !== 0;
  const negative = ctx.attrInt('detect_negative', 1) !== 0;
  if (positive && negative) return [ctx.emit('aten.isinf.default', { self })];
  if (positive || negative) return [ctx.emit('aten.eq.Scalar', { self, other: positive ? Infinity : -Infinity })];
  // Neither sign: all false (NaN equals nothing).
  return [ctx.emit('aten.eq.Scalar', { self, other: NaN })];
});

// Activations.
defineOnnxOp('Gelu', (ctx) => {
  if (ctx.opset < 20) ctx.unsupported(`Gelu is an ONNX op from opset 20; this model imports opset ${ctx.opset}`);
  const approximate = ctx.attrString('approximate', 'none');
  if (approximate !== 'none' && approximate !== 'tanh') ctx.bad(`attribute approximate must be "none" or "tanh", got ${JSON.stringify(approximate)}`);
  return [ctx.emit('aten.gelu.default', { self: ctx.input(0), approximate })];
});

defineOnnxOp('HardSigmoid', (ctx) => {
  const alpha = ctx.attrFloat('alpha', 0.2);
  const beta = ctx.attrFloat('beta', 0.5);
  const self = ctx.input(0);
  // PyTorch's hardsigmoid is alpha = 1/6, beta = 1/2 (alpha arrives as a float32).
  if (Math.fround(alpha) === Math.fround(1 / 6) && beta === 0.5) return [ctx.emit('aten.hardsigmoid.default', { self })];
  return [ctx.emit('trt.hardsigmoid_onnx', { self, alpha, beta })];
});

defineOnnxOp('LeakyRelu', (ctx) => [ctx.emit('aten.leaky_relu.default', { self: ctx.input(0), negative_slope: ctx.attrFloat('alpha', 0.01) })]);
defineOnnxOp('Elu', (ctx) => [ctx.emit('aten.elu.default', { self: ctx.input(0), alpha: ctx.attrFloat('alpha', 1) })]);
// ONNX Softplus is log(1 + e^x) everywhere; PyTorch's threshold 20 differs by < e^-20 relative.
unary('Softplus', 'aten.softplus.default');

defineOnnxOp('Softsign', (ctx) => {
  const self = ctx.input(0);
  const denominator = ctx.emit('aten.add.Scalar', { self: ctx.emit('aten.abs.default', { self }), other: 1 });
  return [ctx.emit('aten.div.Tensor', { self, other: denominator })];
});

defineOnnxOp('PRelu', (ctx) => {
  sameTypes(ctx, [0, 1]);
  return [ctx.emit('aten._prelu_kernel.default', { self: ctx.input(0), weight: ctx.input(1) })];
});

defineOnnxOp('Clip', (ctx) => {
  const self = ctx.input(0);
  sameTypes(ctx, [0, 1, 2]);
  const dtype = self.tensorType.dtype;
  const bounds: Record<string, number | Value | null> = { min: null, max: null };
  let scalars = true;
  ['min', 'max'].forEach((name, k) => {
    const i = k + 1;
    if (!ctx.hasInput(i)) return;
    const type = ctx.inputType(i);
    const rank = type.shape.length;
    if (rank > 1 || (rank === 1 && type.shape[0] !== 1)) ctx.bad(`${name} (input ${i}) must be a scalar, got rank ${rank}`);
    const c = ctx.constant(i);
    const v = c === null ? null : c.toArray()[0]!;
    // A constant becomes a Scalar argument unless int64 precision would be lost.
    if (v !== null && (isFloating(dtype) || Number.isSafeInteger(v))) bounds[name] = v;
    else {
      if (rank === 1 && self.tensorType.shape.length === 0) ctx.unsupported(`${name} of shape [1] on a 0-d input is only supported as a constant`);
      bounds[name] = ctx.input(i);
      scalars = false;
    }
  });
  if (bounds.min === null && bounds.max === null) return [self];
  if (scalars) return [ctx.emit('aten.clamp.default', { self, ...bounds })];
  const asTensor = (b: number | Value | null): Value | null =>
    typeof b === 'number' ? ctx.constantValue(Tensor.from(dtype, [], [b]), 'bound') : b;
  return [ctx.emit('aten.clamp.Tensor', { self, min: asTensor(bounds.min), max: asTensor(bounds.max) })];
});

// Casts.
/**
 * Cast and CastLike into `dtype` with ONNX's `saturate` (opset 19) and `round_mode` (opset 24),
 * which only the float8 types and float8e8m0 read. Saturating into float8 is ONNX's reference
 * exactly: a clip to the type's finite range (±Infinity to ±max, NaN kept) before the cast,
 * computed in float32 or float64, which hold every input value the clip must see. float4e2m1
 * saturates either way (it has no Infinity or NaN). float8e8m0's cast (_to_copy) rounds up
 * and saturates, ONNX's defaults; other settings are refused.
 */
function castTo(ctx: OnnxContext, self: Value, dtype: DType): Value {
  const saturate = ctx.attrInt('saturate', 1);
  const roundMode = ctx.attrString('round_mode', 'up');
  if (dtype === 'float8e8m0' && (saturate !== 1 || roundMode !== 'up')) {
    ctx.unsupported(`a cast to float8e8m0 with saturate=${saturate} and round_mode "${roundMode}" is not supported (saturate=1 with round_mode "up" is)`);
  }
  if (self.tensorType.dtype === dtype) return self;
  if (saturate !== 0 && isMiniFloat(dtype) && dtype !== 'float4e2m1') {
    const from = self.tensorType.dtype;
    const wide = from === 'float32' || from === 'float64' ? self : ctx.cast(self, 'float64');
    const max = miniFloatMax(dtype);
    return ctx.cast(ctx.emit('aten.clamp.default', { self: wide, min: -max, max }), dtype);
  }
  return ctx.emit('aten._to_copy.default', { self, dtype });
}

defineOnnxOp('Cast', (ctx) => {
  const self = ctx.input(0);
  const dtype = dtypeFromOnnx(ctx.attrInt('to'), `${ctx.where}: attribute to`);
  // A small integer constant cast to a float stays a constant (exact), so that what is computed
  // from it (a Range limit, say) is still known at import.
  const c = ctx.constant(0);
  if (self.tensorType.dtype !== dtype && c !== null && c.size <= 64 && isInteger(c.dtype) && isFloating(dtype) && !isLowPrecision(dtype)) {
    ctx.ignoreAttributes('saturate', 'round_mode');
    return [ctx.constantValue(Tensor.from(dtype, c.shape, c.toArray().map(Number)), 'cast')];
  }
  return [castTo(ctx, self, dtype)];
});

defineOnnxOp('CastLike', (ctx) => [castTo(ctx, ctx.input(0), ctx.inputType(1).dtype)]);

defineOnnxOp('Dropout', (ctx) => {
  const self = ctx.input(0);
  // The random seed and the ratio matter in training mode only, which is refused below (or at
  // run time, where training_mode is only known then).
  ctx.ignoreAttributes('seed');
  ctx.ignoreInputs(1);
  const wantsMask = ctx.node.outputs.length > 1 && ctx.node.outputs[1] !== '';
  if (ctx.hasInput(2)) {
    const ratio = ctx.hasInput(1) ? ctx.constant(1) : null;
    // Dropout with ratio 0 is the identity even in training mode.
    const dropsNothing = ratio !== null && ratio.toArray()[0] === 0;
    const mode = ctx.constant(2);
    if (mode === null && !dropsNothing) {
      // Known only at run time: a node that computes the runs whose result is defined (not
      // training, or ratio 0) and refuses the others.
      const node = ctx.call('trt.dropout_onnx', { self, ratio: ctx.optInput(1), training_mode: ctx.input(2) });
      return wantsMask ? node.outputs : [node.outputs[0]!];
    }
    if (mode !== null && mode.toArray()[0] !== 0 && !dropsNothing) ctx.unsupported('Dropout in training mode is random and cannot be compiled');
  }
  if (!wantsMask) return [self];
  if (ctx.opset < 10) ctx.unsupported(`the mask output of Dropout at opset ${ctx.opset} (of the input's type, not bool) is not supported`);
  // No element is dropped: the mask is all true.
  const mask = ctx.emit('aten.where.Scalar', { condition: ctx.emit('aten.isnan.default', { self }), self: true, other: true });
  return [self, mask];
});
