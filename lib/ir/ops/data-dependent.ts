/**
 * Ops whose output size depends on the input's values, not only on its shape (ONNX NonZero,
 * Compress, Unique, NonMaxSuppression). Such a size is a *data-dependent symbol*: declared in
 * the graph with the range the size can take, named by the node's `count` argument, bound by
 * the interpreter when the node has run. NonZero and Compress convert into TensorRT's nonzero
 * layer, NonMaxSuppression into an nms layer and Unique into a unique layer, where the
 * backend's engines can hold such a size and the backend takes the layer (lib/conversion/
 * converters/data-dependent.ts, SelectionSettings.dataDependentSizes and refusedLayers);
 * otherwise the converter registry refuses every node that reads or writes one and they run
 * in fallback segments, where the interpreter binds the symbol from the tensor it receives.
 */
import { isComplex } from '../dtype';
import { tensorType, type Graph, type ValueType } from '../graph';
import { formatShape, isStatic, sym, symbolsOf, type Dim } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';

const PREFIX = 'data_dependent_';

/** Whether `name` is a symbol made by {@link dataDependentSymbol}. */
export function isDataDependentSymbol(name: string): boolean {
  return name.startsWith(PREFIX);
}

/** Whether a dim involves a data-dependent symbol. */
export function isDataDependentDim(d: Dim): boolean {
  return typeof d !== 'number' && [...symbolsOf(d)].some(isDataDependentSymbol);
}

/** Declares a fresh data-dependent symbol in `graph` with range [0, max] and returns its name. */
export function dataDependentSymbol(graph: Graph, max: Dim): string {
  let i = 0;
  while (graph.symbols.has(`${PREFIX}${i}`)) i++;
  const name = `${PREFIX}${i}`;
  graph.symbols.set(name, { min: 0, max: isStatic(max) ? max : Infinity });
  return name;
}

/**
 * A data-dependent symbol named after `key` (the same key, the same symbol: inferring the node
 * again, in a pass that copies it, gives it back), declared with the range [0, max] when the
 * graph's symbols can be added to. For shape rules whose op has no `count` argument (a .pt2
 * op such as aten.masked_select), keyed by the values the size is a function of.
 */
export function keyedDataDependentSymbol(ctx: InferContext, key: string, max: Dim): Dim {
  const name = `${PREFIX}${key.replace(/[^A-Za-z0-9_]/g, '_')}`;
  if (ctx.symbols instanceof Map && !ctx.symbols.has(name)) ctx.symbols.set(name, { min: 0, max: isStatic(max) ? max : Infinity });
  return sym(name);
}

/** The most elements a shape can hold, or Infinity when a dim is symbolic. */
export function maxElements(shape: readonly Dim[]): number {
  return shape.reduce<number>((p, d) => p * (isStatic(d) ? d : Infinity), 1);
}

/** The `count` argument's symbol as a dim; it must be declared in the graph. */
function countDim(ctx: InferContext): Dim {
  const name = ctx.str('count');
  if (!isDataDependentSymbol(name) || !ctx.symbols.has(name)) ctx.fail(`count ${JSON.stringify(name)} is not a data-dependent symbol of the graph`);
  return sym(name);
}

// The indices of the nonzero elements, one column per element in row-major order.
defineOp('trt.nonzero(Tensor self, str count) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  if (isComplex(self.dtype)) ctx.fail(`self is ${self.dtype}; complex tensors are not supported`);
  return [tensorType('int64', [self.shape.length, countDim(ctx)])];
});

// The slices of self along axis (or of its flattened elements) whose condition is true.
defineOp('trt.compress(Tensor self, Tensor condition, int? axis, str count) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const cond = ctx.tensor('condition');
  if (cond.dtype !== 'bool') ctx.fail(`condition must be bool, got ${cond.dtype}`);
  if (cond.shape.length !== 1) ctx.fail(`condition ${formatShape(cond.shape)} must be 1-D`);
  const n = countDim(ctx);
  const axis = ctx.optInt('axis');
  if (axis === null) return [tensorType(self.dtype, [n])];
  const a = normAxis(ctx, axis, self.shape.length, 'axis');
  return [tensorType(self.dtype, self.shape.map((d, i) => (i === a ? n : d)))];
});

// ONNX Unique: the unique elements (or slices along axis), the index of each one's first
// occurrence, each input element's index into them, and their counts.
defineOp('trt.unique(Tensor self, int? axis, bool sorted, str count) -> (Tensor Y, Tensor indices, Tensor inverse_indices, Tensor counts)', (ctx): ValueType[] => {
  const self = ctx.tensor('self');
  if (isComplex(self.dtype)) ctx.fail(`self is ${self.dtype}; complex tensors cannot be ordered`);
  const n = countDim(ctx);
  const axis = ctx.optInt('axis');
  if (axis === null) {
    const total = self.shape.length === 0 ? 1 : self.shape.reduce<Dim>((p, d) => (isStatic(p) && isStatic(d) ? p * d : Infinity), 1);
    if (!isStatic(total)) ctx.fail(`Unique without an axis needs a static input shape, got ${formatShape(self.shape)}`);
    return [tensorType(self.dtype, [n]), tensorType('int64', [n]), tensorType('int64', [total]), tensorType('int64', [n])];
  }
  const a = normAxis(ctx, axis, self.shape.length, 'axis');
  return [
    tensorType(self.dtype, self.shape.map((d, i) => (i === a ? n : d))),
    tensorType('int64', [n]),
    tensorType('int64', [self.shape[a]!]),
    tensorType('int64', [n]),
  ];
});

// ONNX NonMaxSuppression: [selected, 3] rows of (batch, class, box index).
defineOp(
  'trt.non_max_suppression(Tensor boxes, Tensor scores, int max_output_boxes_per_class, float iou_threshold, float? score_threshold, bool center_point_box, str count) -> Tensor',
  (ctx) => {
    const boxes = ctx.tensor('boxes');
    const scores = ctx.tensor('scores');
    if (boxes.shape.length !== 3 || (isStatic(boxes.shape[2]!) && boxes.shape[2] !== 4)) ctx.fail(`boxes ${formatShape(boxes.shape)} must be [batches, boxes, 4]`);
    if (scores.shape.length !== 3) ctx.fail(`scores ${formatShape(scores.shape)} must be [batches, classes, boxes]`);
    const same = (a: Dim, b: Dim): boolean => !isStatic(a) || !isStatic(b) || a === b;
    if (!same(boxes.shape[0]!, scores.shape[0]!) || !same(boxes.shape[1]!, scores.shape[2]!)) {
      ctx.fail(`boxes ${formatShape(boxes.shape)} and scores ${formatShape(scores.shape)} disagree on batches or boxes`);
    }
    if (boxes.dtype !== scores.dtype) ctx.fail(`boxes are ${boxes.dtype}, scores ${scores.dtype}`);
    if (ctx.int('max_output_boxes_per_class') < 0) ctx.fail('max_output_boxes_per_class must be non-negative');
    return [tensorType('int64', [countDim(ctx), 3])];
  },
);
