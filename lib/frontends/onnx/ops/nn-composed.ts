/**
 * ONNX NN ops without an IR op of their own, composed of existing IR ops: LRN (a channel
 * window sum of squares), MaxUnpool (a scatter into zeros), ReverseSequence (a gather of
 * per-batch reversed time indices), LpNormalization and RMSNormalization (opset 23).
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { staticShape } from './sampling';

// y = x / (bias + alpha/size · Σ x² over the `size` channels around c)^beta.
defineOnnxOp('LRN', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  if (!isFloating(x.tensorType.dtype) || rank < 3) ctx.bad(`input must be floating point [N, C, ...], got ${x.tensorType.dtype} of rank ${rank}`);
  const channels = x.tensorType.shape[1]!;
  if (!isStatic(channels)) ctx.unsupported('the channel dim must be static');
  const size = ctx.attrInt('size');
  if (size < 1) ctx.bad(`size must be positive, got ${size}`);
  const before = Math.floor((size - 1) / 2);
  const after = size - 1 - before;
  const squares = ctx.emit('aten.mul.Tensor', { self: x, other: x });
  // constant_pad_nd lists (begin, end) from the last dim backwards: the channel dim's pair is last.
  const padded = ctx.emit('aten.constant_pad_nd.default', { self: squares, pad: [...new Array<number>(2 * (rank - 2)).fill(0), before, after], value: 0 });
  let sum: Value | null = null;
  for (let k = 0; k < size; k++) {
    const window = ctx.emit('aten.slice.Tensor', { self: padded, dim: 1, start: k, end: k + (channels as number), step: 1 });
    sum = sum === null ? window : ctx.emit('aten.add.Tensor', { self: sum, other: window });
  }
  const scaled = ctx.emit('aten.add.Scalar', { self: ctx.emit('aten.mul.Scalar', { self: sum!, other: ctx.attrFloat('alpha', 1e-4) / size }), other: ctx.attrFloat('bias', 1) });
  return [ctx.emit('aten.div.Tensor', { self: x, other: ctx.emit('aten.pow.Tensor_Scalar', { self: scaled, exponent: ctx.attrFloat('beta', 0.75) }) })];
});

// Each X value lands at its flat index (over the whole output, as MaxPool's Indices count) in zeros.
defineOnnxOp('MaxUnpool', (ctx) => {
  const x = ctx.input(0);
  const indices = ctx.input(1);
  const shape = staticShape(ctx, x, 'X');
  const n = shape.length - 2;
  const kernel = ctx.attrInts('kernel_shape');
  if (n < 1 || kernel.length !== n) ctx.bad(`kernel_shape [${kernel.join(', ')}] must list the ${n} spatial dims of X`);
  const strides = ctx.attrInts('strides', new Array<number>(n).fill(1));
  const pads = ctx.attrInts('pads', new Array<number>(2 * n).fill(0));
  const unpooled = [shape[0]!, shape[1]!, ...shape.slice(2).map((d, i) => (d - 1) * strides[i]! + kernel[i]! - pads[i]! - pads[n + i]!)];
  const out = ctx.hasInput(2) ? ctx.staticInts(2, 'output_shape') : unpooled;
  if (out.length !== n + 2 || out.some((d, i) => (i < 2 ? d !== unpooled[i] : d < unpooled[i]!))) {
    ctx.bad(`output_shape [${out.join(', ')}] must be [N, C, ...] of X with spatial dims at least [${unpooled.slice(2).join(', ')}]`);
  }
  const total = unpooled.reduce((p, d) => p * d, 1);
  const zeros = ctx.constantValue(new Tensor(x.tensorType.dtype, [total]), 'zeros');
  const flat = (v: Value): Value => ctx.emit('aten.reshape.default', { self: v, shape: [-1] });
  const scattered = ctx.emit('aten.scatter.src', { self: zeros, dim: 0, index: ctx.cast(flat(indices), 'int64'), src: flat(x) });
  const y = ctx.emit('aten.reshape.default', { self: scattered, shape: unpooled });
  // A larger output_shape keeps the indices' layout and adds zeros at the end of each spatial dim.
  const extra = out.slice(2).map((d, i) => d - unpooled[i + 2]!);
  if (extra.every((e) => e === 0)) return [y];
  return [ctx.emit('aten.constant_pad_nd.default', { self: y, pad: [...extra].reverse().flatMap((e) => [0, e]), value: 0 })];
});

// Time index t of batch b reads len[b] − 1 − t while t < len[b], else t itself.
defineOnnxOp('ReverseSequence', (ctx) => {
  const x = ctx.input(0);
  const lens = ctx.input(1);
  const shape = staticShape(ctx, x, 'input');
  const timeAxis = ctx.attrInt('time_axis', 0);
  const batchAxis = ctx.attrInt('batch_axis', 1);
  if (![timeAxis, batchAxis].every((a) => a === 0 || a === 1) || timeAxis === batchAxis || shape.length < 2) {
    ctx.bad(`time_axis ${timeAxis} and batch_axis ${batchAxis} must be 0 and 1 in some order`);
  }
  const steps = shape[timeAxis]!;
  const time = ctx.constantValue(
    Tensor.from('int64', timeAxis === 0 ? [steps, 1] : [1, steps], Array.from({ length: steps }, (_, t) => t)),
    'time',
  );
  const len = ctx.emit('aten.reshape.default', { self: ctx.cast(lens, 'int64'), shape: timeAxis === 0 ? [1, -1] : [-1, 1] });
  const reversed = ctx.emit('aten.sub.Tensor', { self: ctx.emit('aten.sub.Scalar', { self: len, other: 1 }), other: time });
  let index = ctx.emit('aten.where.self', { condition: ctx.emit('aten.lt.Tensor', { self: time, other: len }), self: reversed, other: time });
  for (let i = 2; i < shape.length; i++) index = ctx.emit('aten.unsqueeze.default', { self: index, dim: -1 });
  index = ctx.emit('aten.expand.default', { self: index, size: shape });
  return [ctx.emit('aten.gather.default', { self: x, dim: timeAxis, index })];
});

// x / ‖x‖_p along `axis` (p 1 or 2); a zero norm divides by 1 (a zero vector stays zero), as
// ONNX's reference does.
defineOnnxOp('LpNormalization', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  if (!isFloating(x.tensorType.dtype)) ctx.bad(`the input must be floating point, got ${x.tensorType.dtype}`);
  const given = ctx.attrInt('axis', -1);
  const axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) ctx.bad(`axis ${given} is out of range for rank ${rank}`);
  const p = ctx.attrInt('p', 2);
  if (p !== 1 && p !== 2) ctx.bad(`p must be 1 or 2, got ${p}`);
  const terms = p === 1 ? ctx.emit('aten.abs.default', { self: x }) : ctx.emit('aten.mul.Tensor', { self: x, other: x });
  const sum = ctx.emit('aten.sum.dim_IntList', { self: terms, dim: [axis], keepdim: true });
  const norm = p === 1 ? sum : ctx.emit('aten.sqrt.default', { self: sum });
  const zero = ctx.cast(ctx.emit('aten.eq.Scalar', { self: norm, other: 0 }), x.tensorType.dtype);
  return [ctx.emit('aten.div.Tensor', { self: x, other: ctx.emit('aten.add.Tensor', { self: norm, other: zero }) })];
});

/**
 * RMSNormalization (opset 23): x / sqrt(mean(x², axes axis..) + epsilon), in the stash type
 * (float32 by default) and cast back, times `scale` (broadcast to the normalized shape), as
 * ONNX's function body computes it. A float32 input with a scale of the normalized shape is
 * aten.rms_norm, the whole layer the GPU backends take.
 */
defineOnnxOp('RMSNormalization', (ctx) => {
  const x = ctx.input(0);
  const scale = ctx.input(1);
  const shape = x.tensorType.shape;
  const rank = shape.length;
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.bad(`the input must be floating point, got ${dtype}`);
  const given = ctx.attrInt('axis', -1);
  const axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) ctx.bad(`axis ${given} is out of range for rank ${rank}`);
  const eps = ctx.attrFloat('epsilon', 1e-5);
  const stash = ctx.attrInt('stash_type', 1);
  if (stash !== 1) ctx.unsupported(`stash_type ${stash}: only 1 (float32) is supported`);
  const normalized = shape.slice(axis);
  const scaleShape = scale.tensorType.shape;
  const whole = dtype === 'float32' && scale.tensorType.dtype === 'float32' && scaleShape.length === normalized.length && scaleShape.every((d, i) => d === normalized[i]);
  if (whole) return [ctx.emit('aten.rms_norm.default', { input: x, normalized_shape: normalized.map((d) => ctx.dimArg(d)), weight: scale, eps })];
  const x32 = ctx.cast(x, 'float32');
  const meanSquare = ctx.emit('aten.mean.dim', { self: ctx.emit('aten.mul.Tensor', { self: x32, other: x32 }), dim: normalized.map((_, i) => axis + i), keepdim: true });
  const rstd = ctx.emit('aten.rsqrt.default', { self: ctx.emit('aten.add.Scalar', { self: meanSquare, other: eps }) });
  const y = ctx.cast(ctx.emit('aten.mul.Tensor', { self: x32, other: rstd }), dtype);
  return [ctx.emit('aten.mul.Tensor', { self: y, other: ctx.cast(scale, dtype) })];
});
