/**
 * ONNX ops without an IR op of their own, composed of existing IR ops: inverse and
 * hyperbolic trigonometry, activation variants, Hardmax, ReduceLogSum, EyeLike, window
 * functions. Each composition is the op's defining formula.
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { dtypeFromOnnx } from '../tensor-proto';
import { coercedAxisOp } from './nn';

export const mulS = (ctx: OnnxContext, self: Value, other: number): Value => ctx.emit('aten.mul.Scalar', { self, other });
export const addS = (ctx: OnnxContext, self: Value, other: number): Value => ctx.emit('aten.add.Scalar', { self, other });
export const un = (ctx: OnnxContext, target: string, self: Value): Value => ctx.emit(`aten.${target}.default`, { self });
export const bin = (ctx: OnnxContext, target: string, self: Value, other: Value): Value => ctx.emit(`aten.${target}.Tensor`, { self, other });

function floatInput(ctx: OnnxContext): Value {
  const x = ctx.input(0);
  if (!isFloating(x.tensorType.dtype)) ctx.bad(`the input must be floating point, got ${x.tensorType.dtype}`);
  return x;
}

function composed(opType: string, f: (ctx: OnnxContext, x: Value) => Value): void {
  defineOnnxOp(opType, (ctx) => {
    const x = floatInput(ctx);
    const dtype = x.tensorType.dtype;
    // A 16-bit float input is computed in float32 and rounded once at the end, as the ONNX
    // reference and onnxruntime compute it: each composed step rounding to bfloat16 left Celu one
    // unit in the last place off.
    if (dtype !== 'float16' && dtype !== 'bfloat16') return [f(ctx, x)];
    return [ctx.cast(f(ctx, ctx.cast(x, 'float32')), dtype)];
  });
}

/** sqrt(1 - x²) */
const cosOfAsin = (ctx: OnnxContext, x: Value): Value => un(ctx, 'sqrt', ctx.emit('aten.rsub.Scalar', { self: bin(ctx, 'mul', x, x), other: 1 }));
const one = (ctx: OnnxContext, x: Value): Value => ctx.emit('aten.ones_like.default', { self: x });

composed('Asin', (ctx, x) => ctx.emit('aten.atan2.default', { self: x, other: cosOfAsin(ctx, x) }));
composed('Acos', (ctx, x) => ctx.emit('aten.atan2.default', { self: cosOfAsin(ctx, x), other: x }));
composed('Atan', (ctx, x) => ctx.emit('aten.atan2.default', { self: x, other: one(ctx, x) }));
composed('Sinh', (ctx, x) => mulS(ctx, bin(ctx, 'sub', un(ctx, 'exp', x), un(ctx, 'exp', un(ctx, 'neg', x))), 0.5));
composed('Cosh', (ctx, x) => mulS(ctx, bin(ctx, 'add', un(ctx, 'exp', x), un(ctx, 'exp', un(ctx, 'neg', x))), 0.5));
// asinh(x) = sign(x)·log(|x| + sqrt(x² + 1)): the odd form keeps precision for negative x.
composed('Asinh', (ctx, x) => {
  const a = un(ctx, 'abs', x);
  const r = un(ctx, 'log', bin(ctx, 'add', a, un(ctx, 'sqrt', addS(ctx, bin(ctx, 'mul', a, a), 1))));
  return bin(ctx, 'mul', un(ctx, 'sign', x), r);
});
composed('Acosh', (ctx, x) => un(ctx, 'log', bin(ctx, 'add', x, un(ctx, 'sqrt', addS(ctx, bin(ctx, 'mul', x, x), -1)))));
composed('Atanh', (ctx, x) => mulS(ctx, un(ctx, 'log', bin(ctx, 'div', addS(ctx, x, 1), ctx.emit('aten.rsub.Scalar', { self: x, other: 1 }))), 0.5));

composed('ThresholdedRelu', (ctx, x) => {
  const alpha = ctx.attrFloat('alpha', 1);
  return ctx.emit('aten.where.ScalarOther', { condition: ctx.emit('aten.gt.Scalar', { self: x, other: alpha }), self: x, other: 0 });
});

composed('Shrink', (ctx, x) => {
  const lambd = ctx.attrFloat('lambd', 0.5);
  const bias = ctx.attrFloat('bias', 0);
  const below = ctx.emit('aten.where.ScalarOther', { condition: ctx.emit('aten.lt.Scalar', { self: x, other: -lambd }), self: addS(ctx, x, bias), other: 0 });
  return ctx.emit('aten.where.self', { condition: ctx.emit('aten.gt.Scalar', { self: x, other: lambd }), self: addS(ctx, x, -bias), other: below });
});

// max(0, x) + min(0, alpha·(exp(x/alpha) − 1))
composed('Celu', (ctx, x) => {
  const alpha = ctx.attrFloat('alpha', 1);
  const neg = ctx.emit('aten.clamp_max.default', { self: mulS(ctx, addS(ctx, un(ctx, 'exp', mulS(ctx, x, 1 / alpha)), -1), alpha), max: 0 });
  return bin(ctx, 'add', un(ctx, 'relu', x), neg);
});

// gamma · (max(0, x) + min(0, alpha·(exp(x) − 1)))
composed('Selu', (ctx, x) => {
  const alpha = ctx.attrFloat('alpha', 1.67326319217681884765625);
  const gamma = ctx.attrFloat('gamma', 1.05070102214813232421875);
  const neg = ctx.emit('aten.clamp_max.default', { self: mulS(ctx, addS(ctx, un(ctx, 'exp', x), -1), alpha), max: 0 });
  return mulS(ctx, bin(ctx, 'add', un(ctx, 'relu', x), neg), gamma);
});

// Swish (opset 24): x · sigmoid(alpha · x); alpha 1 is SiLU.
composed('Swish', (ctx, x) => {
  const alpha = ctx.attrFloat('alpha', 1);
  return alpha === 1 ? un(ctx, 'silu', x) : bin(ctx, 'mul', x, un(ctx, 'sigmoid', mulS(ctx, x, alpha)));
});

composed('Mish', (ctx, x) => bin(ctx, 'mul', x, un(ctx, 'tanh', ctx.emit('aten.softplus.default', { self: x }))));

composed('MeanVarianceNormalization', (ctx, x) => {
  const axes = ctx.attrInts('axes', [0, 2, 3]);
  const mean = ctx.emit('aten.mean.dim', { self: x, dim: axes, keepdim: true });
  const centered = bin(ctx, 'sub', x, mean);
  const variance = ctx.emit('aten.mean.dim', { self: bin(ctx, 'mul', centered, centered), dim: axes, keepdim: true });
  return bin(ctx, 'div', centered, un(ctx, 'sqrt', variance));
});

// One 1 per slice along the axis, at the first maximum.
defineOnnxOp('Hardmax', (ctx) => [
  coercedAxisOp(ctx, (x, dim) => {
    const rank = x.tensorType.shape.length;
    const axis = dim < 0 ? dim + rank : dim;
    const d = x.tensorType.shape[axis]!;
    if (!isStatic(d)) ctx.unsupported(`the axis ${axis} must have a static size`);
    const n = d as number;
    const arg = ctx.emit('aten.argmax.default', { self: x, dim: axis, keepdim: true });
    const shape = Array.from({ length: rank }, (_, i) => (i === axis ? n : 1));
    // An arange node, not a constant: the axis size is what the model declares, and a constant
    // of it would be built here, at import, whatever its size.
    const positions = ctx.emit('aten.reshape.default', { self: ctx.emit('aten.arange.default', { end: n, dtype: 'int64' }), shape });
    return ctx.cast(ctx.emit('aten.eq.Tensor', { self: positions, other: arg }), x.tensorType.dtype);
  }),
]);

defineOnnxOp('EyeLike', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  if (shape.length !== 2 || !shape.every(isStatic)) ctx.unsupported(`only static 2-D inputs are supported, got rank ${shape.length}`);
  const [rows, cols] = shape as number[];
  const k = ctx.attrInt('k', 0);
  const dtype = ctx.has('dtype') ? dtypeFromOnnx(ctx.attrInt('dtype'), `${ctx.where}: attribute dtype`) : x.tensorType.dtype;
  // eye[i, j] = (j == i + k), from two aranges: the declared dims can be any size, and a
  // constant of them would be built here, at import.
  const i = ctx.emit('aten.reshape.default', { self: ctx.emit('aten.arange.default', { end: rows!, dtype: 'int64' }), shape: [rows!, 1] });
  const j = ctx.emit('aten.reshape.default', { self: ctx.emit('aten.arange.default', { end: cols!, dtype: 'int64' }), shape: [1, cols!] });
  return [ctx.cast(ctx.emit('aten.eq.Tensor', { self: j, other: addS(ctx, i, k) }), dtype)];
});

// Crops (centered, the extra element at the end) or zero-pads (centered, the extra at the end) each axis to `shape`.
defineOnnxOp('CenterCropPad', (ctx) => {
  let x = ctx.input(0);
  const shape = x.tensorType.shape;
  const rank = shape.length;
  const target = ctx.staticInts(1, 'shape');
  const axes = ctx.attrInts('axes', Array.from({ length: rank }, (_, i) => i)).map((a) => (a < 0 ? a + rank : a));
  if (axes.length !== target.length) ctx.bad(`shape has ${target.length} values for ${axes.length} axes`);
  const pads = new Array<number>(2 * rank).fill(0);
  axes.forEach((a, i) => {
    if (a < 0 || a >= rank) ctx.bad(`axis ${a} is out of range for rank ${rank}`);
    if (!isStatic(shape[a]!)) ctx.unsupported(`axis ${a} must have a static size`);
    const n = shape[a] as number;
    const want = target[i]!;
    if (want < n) {
      const start = Math.floor((n - want) / 2);
      x = ctx.emit('aten.slice.Tensor', { self: x, dim: a, start, end: start + want, step: 1 });
    } else if (want > n) {
      const before = Math.floor((want - n) / 2);
      // constant_pad_nd lists (begin, end) from the last dim backwards.
      pads[2 * (rank - 1 - a)] = before;
      pads[2 * (rank - 1 - a) + 1] = want - n - before;
    }
  });
  if (pads.some((p) => p !== 0)) x = ctx.emit('aten.constant_pad_nd.default', { self: x, pad: pads, value: 0 });
  return [x];
});

/** Windows up to this many elements are built as constants at import; longer ones are computed by nodes. */
const MAX_WINDOW_CONSTANT = 1 << 16;

/** Generalized cosine windows: sum of (-1)^k a_k cos(2πkn/N), N = size (periodic) or size - 1. */
function cosineWindow(opType: string, coefficients: readonly number[]): void {
  defineOnnxOp(opType, (ctx) => {
    const sizes = ctx.staticInts(0, 'size');
    if (sizes.length !== 1 || sizes[0]! < 0) ctx.bad(`size must be one non-negative integer, got [${sizes.join(', ')}]`);
    const size = sizes[0]!;
    const n = ctx.attrInt('periodic', 1) === 1 ? size : size - 1;
    const dtype = dtypeFromOnnx(ctx.attrInt('output_datatype', 1), `${ctx.where}: attribute output_datatype`);
    if (size > MAX_WINDOW_CONSTANT) {
      // The size is the model's to declare: past the bound the window is computed by nodes (in
      // float64, as the constant is) rather than built here, at import, whatever its size.
      const i = ctx.emit('aten.arange.default', { end: size, dtype: 'float64' });
      let sum: Value | null = null;
      coefficients.forEach((a, k) => {
        const term = mulS(ctx, un(ctx, 'cos', mulS(ctx, i, (2 * Math.PI * k) / n)), k % 2 === 0 ? a : -a);
        sum = sum === null ? term : bin(ctx, 'add', sum, term);
      });
      return [ctx.cast(sum!, dtype)];
    }
    const values = Array.from({ length: size }, (_, i) =>
      coefficients.reduce((sum, a, k) => sum + (k % 2 === 0 ? a : -a) * Math.cos((2 * Math.PI * k * i) / n), 0),
    );
    return [ctx.constantValue(Tensor.from(dtype, [size], dtype === 'int64' ? values.map((v) => BigInt(Math.trunc(v))) : values), 'window')];
  });
}

cosineWindow('HannWindow', [0.5, 0.5]);
cosineWindow('HammingWindow', [25 / 46, 21 / 46]);
cosineWindow('BlackmanWindow', [0.42, 0.5, 0.08]);
