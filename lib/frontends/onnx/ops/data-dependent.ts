/**
 * ONNX mappers of the ops whose output size depends on tensor data: NonZero, Compress,
 * Unique and NonMaxSuppression (lib/ir/ops/data-dependent.ts). Each declares a fresh
 * data-dependent symbol for that size; NonZero and Compress convert into a nonzero layer on
 * backends whose engines hold such sizes, the rest run in fallback segments. Compress with a
 * constant condition keeps a static shape instead (an index_select of the kept slices).
 */
import { isFloating } from '../../../ir/dtype';
import { dataDependentSymbol, maxElements } from '../../../ir/ops/data-dependent';
import { isStatic, symMin, type Dim } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

function checkedAxis(ctx: OnnxContext, rank: number): number | null {
  if (!ctx.has('axis')) return null;
  const axis = ctx.attrInt('axis');
  if (axis < -rank || axis >= rank) ctx.bad(`attribute axis ${axis} is out of range for rank ${rank}`);
  return axis < 0 ? axis + rank : axis;
}

// A 0-d input lists its one position as a 1-D tensor's: ONNX's reference (NumPy) and
// onnxruntime give [1, N], where the IR op (as TensorRT's layer) would give [0, N].
defineOnnxOp('NonZero', (ctx) => {
  const input = ctx.input(0);
  const x = input.tensorType.shape.length === 0 ? ctx.emit('aten.reshape.default', { self: input, shape: [1] }) : input;
  const count = dataDependentSymbol(ctx.graph, maxElements(x.tensorType.shape));
  return [ctx.emit('trt.nonzero', { self: x, count })];
});

defineOnnxOp('Compress', (ctx) => {
  let x = ctx.input(0);
  const shape = x.tensorType.shape;
  const axis = checkedAxis(ctx, shape.length);
  const condType = ctx.inputType(1);
  if (condType.dtype !== 'bool' || condType.shape.length !== 1) ctx.bad(`condition must be a 1-D bool tensor, got ${condType.dtype}[${condType.shape.length} dims]`);
  const n: Dim = axis === null ? (isStatic(maxElements(shape)) ? maxElements(shape) : Infinity) : shape[axis]!;
  const known = ctx.constant(1);
  if (known !== null) {
    const keep = known.toArray().flatMap((c, i) => (c ? [i] : []));
    if (isStatic(n) && keep.some((i) => i >= n)) ctx.bad(`condition selects slice ${keep.find((i) => i >= n)} of an axis of ${n}`);
    if (axis === null) x = ctx.emit('aten.reshape.default', { self: x, shape: [-1] });
    const index = ctx.constantValue(Tensor.from('int64', [keep.length], keep), 'kept');
    return [ctx.emit('aten.index_select.default', { self: x, dim: axis ?? 0, index })];
  }
  const condLength = condType.shape[0]!;
  const count = dataDependentSymbol(ctx.graph, isStatic(n) ? (isStatic(condLength) ? Math.min(n, condLength) : n) : symMin(n, condLength));
  return [ctx.emit('trt.compress', { self: x, condition: ctx.input(1), axis, count })];
});

defineOnnxOp('Unique', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  const axis = checkedAxis(ctx, shape.length);
  const sorted = ctx.attrInt('sorted', 1);
  if (sorted !== 0 && sorted !== 1) ctx.bad(`attribute sorted must be 0 or 1, got ${sorted}`);
  if (axis === null && !isStatic(maxElements(shape))) ctx.unsupported(`Unique without axis needs a static input shape (its inverse_indices has one entry per element)`);
  const count = dataDependentSymbol(ctx.graph, axis === null ? maxElements(shape) : shape[axis]!);
  const node = ctx.call('trt.unique', { self: x, axis, sorted: sorted === 1, count });
  return node.outputs.slice(0, Math.max(1, ctx.node.outputs.length));
});

/** A constant scalar (or one-element) input, else `fallback` when absent; unsupported when computed at run time. */
function scalarInput(ctx: OnnxContext, i: number, what: string, fallback: number): number {
  if (!ctx.hasInput(i)) return fallback;
  const t = ctx.constant(i);
  if (t === null) return ctx.needsKnown(`${what} (input ${i}) must be a constant`);
  if (t.size !== 1) ctx.bad(`${what} (input ${i}) must hold one value, got ${t.size}`);
  return Number(t.toArray()[0]);
}

defineOnnxOp('NonMaxSuppression', (ctx) => {
  const boxes = ctx.input(0);
  const scores = ctx.input(1);
  if (!isFloating(boxes.tensorType.dtype)) ctx.bad(`boxes must be floating point, got ${boxes.tensorType.dtype}`);
  // Exporters write "no limit" as a huge int64: past 2^53 it is no limit at all.
  const maxPerClass = Math.min(scalarInput(ctx, 2, 'max_output_boxes_per_class', 0), Number.MAX_SAFE_INTEGER);
  if (!Number.isInteger(maxPerClass) || maxPerClass < 0) ctx.bad(`max_output_boxes_per_class must be a non-negative integer, got ${maxPerClass}`);
  const iou = scalarInput(ctx, 3, 'iou_threshold', 0);
  if (!(iou >= 0 && iou <= 1)) ctx.bad(`iou_threshold must be in [0, 1], got ${iou}`);
  const scoreThreshold = ctx.hasInput(4) ? scalarInput(ctx, 4, 'score_threshold', 0) : null;
  const center = ctx.attrInt('center_point_box', 0);
  if (center !== 0 && center !== 1) ctx.bad(`attribute center_point_box must be 0 or 1, got ${center}`);
  const [b, n] = boxes.tensorType.shape;
  const classes = scores.tensorType.shape[1];
  const max = [b, classes, n].every((d) => d !== undefined && isStatic(d)) ? (b as number) * (classes as number) * Math.min(n as number, maxPerClass) : Infinity;
  const count = dataDependentSymbol(ctx.graph, max);
  return [
    ctx.emit('trt.non_max_suppression', {
      boxes,
      scores,
      max_output_boxes_per_class: maxPerClass,
      iou_threshold: iou,
      score_threshold: scoreThreshold,
      center_point_box: center === 1,
      count,
    }),
  ];
});
