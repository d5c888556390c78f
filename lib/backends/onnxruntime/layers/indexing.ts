/** IGatherLayer, IScatterLayer, ITopKLayer, IResizeLayer, INonZeroLayer and the nms layer as ONNX ops. */
import type { DType } from '../../../ir/dtype';
import type { ResizeRoundMode } from '../../../network';
import { computeIn, type LowerContext, type Lowering } from './context';
import { int64Input } from './data';

/**
 * A layer's indices (input 1) as int64 in which a negative index is out of range: the
 * conversion has already added d to the model's negative indices once (lib/conversion/impl/
 * indices.ts), so a negative one here was below -d in the model, which every backend must
 * refuse; onnxruntime would read it from the end again. It becomes 2^62, which onnxruntime
 * refuses at run time as out of bounds (E_BAD_INPUT, as the reference backend's check).
 */
function strictIndices(c: LowerContext): string {
  const g = c.g;
  const indices = g.cast(c.input(1), c.inputDType(1), 'int64');
  return g.op('Where', [g.op('Less', [indices, g.int64([0], [])]), g.int64([2n ** 62n], []), indices]);
}

/**
 * default: ONNX Gather; element: GatherElements; nd: GatherND with nbElementWiseDims batch
 * dims. Indices are in [0, d) (the conversion has already wrapped negative ones once);
 * onnxruntime refuses one outside [0, d) at run time (strictIndices()).
 */
export const gather: Lowering<'gather'> = (p, c) => {
  const data = c.input(0);
  switch (p.mode) {
    case 'default':
      if ((p.nbElementWiseDims ?? 0) !== 0) c.unsupported('default-mode gather with nbElementWiseDims has no ONNX form');
      return [c.g.op('Gather', [data, strictIndices(c)], { axis: p.axis })];
    case 'element':
      return [c.g.op('GatherElements', [data, strictIndices(c)], { axis: p.axis })];
    case 'nd':
      return [c.g.op('GatherND', [data, strictIndices(c)], { batch_dims: p.nbElementWiseDims ?? 0 })];
  }
};

/** element: ONNX ScatterElements; nd: ScatterND. Later updates of one element win (onnxruntime applies them in order). Indices as gather's. */
export const scatter: Lowering<'scatter'> = (p, c) => {
  const [data, updates] = [c.input(0), c.input(2)];
  if (p.mode === 'element') return [c.g.op('ScatterElements', [data, strictIndices(c), updates], { axis: p.axis })];
  return [c.g.op('ScatterND', [data, strictIndices(c), updates])];
};

/** ITopKLayer: sorted, ties to the lower index (onnxruntime's TopK keeps them in index order). */
export const topk: Lowering<'topk'> = (p, c) => {
  const g = c.g;
  if (c.inputShape(0).length === 0) c.unsupported('top-k of a scalar has no ONNX form');
  let indices = '';
  const values = computeIn(c, [c.input(0)], c.inputDType(0), 'numeric', (ins) => {
    const outs = g.node('TopK', [ins[0]!, g.int64([p.k])], { axis: p.axis, largest: p.op === 'max' ? 1 : 0, sorted: 1 }, 2);
    indices = outs[1]!;
    return outs[0]!;
  });
  return [values, g.cast(indices, 'int64', p.indicesType)];
};

const NEAREST: Record<ResizeRoundMode, string> = {
  half_up: 'round_prefer_ceil',
  half_down: 'round_prefer_floor',
  floor: 'floor',
  ceil: 'ceil',
};

/**
 * IResizeLayer to the output dims (static or input 1). half_pixel with the `upper` selector
 * (a dim resized to one element reads element 0) is ONNX's pytorch_half_pixel; cubic uses
 * TensorRT's default coefficient, -0.75.
 */
export const resize: Lowering<'resize'> = (p, c) => {
  const g = c.g;
  const sizes = c.has(1) ? int64Input(c, 1) : g.int64(p.outputDims);
  const transform = p.coordinateTransformation === 'half_pixel' && p.selector === 'upper' ? 'pytorch_half_pixel' : p.coordinateTransformation;
  const attrs = {
    mode: p.mode,
    coordinate_transformation_mode: transform,
    nearest_mode: p.mode === 'nearest' ? NEAREST[p.nearestRounding] : undefined,
    cubic_coeff_a: p.mode === 'cubic' ? { float: -0.75 } : undefined,
  };
  const types = p.mode === 'nearest' ? 'numeric' : 'float';
  return [computeIn(c, [c.input(0)], c.inputDType(0), types, (ins) => g.op('Resize', [ins[0]!, '', '', sizes], attrs))];
};


/** INonZeroLayer: ONNX NonZero, which onnxruntime's CPU kernel computes for every type the layer takes (float32, float16, int32, bool). */
export const nonzero: Lowering<'nonzero'> = (_p, c) => [c.g.op('NonZero', [c.input(0)])];

/**
 * The nms layer: ONNX NonMaxSuppression, the layer's own definition. onnxruntime's CPU kernel
 * takes float32 only: float16 boxes and scores are cast up (exact). Its parameters become
 * initializers: max_output_boxes_per_class int64, the thresholds float32 (ONNX's types).
 */
export const nms: Lowering<'nms'> = (p, c) => {
  const g = c.g;
  const [boxes, scores] = [0, 1].map((i) => g.cast(c.input(i), c.inputDType(i), 'float32'));
  const inputs = [boxes!, scores!, g.int64([p.maxOutputBoxesPerClass], [1]), g.scalar('float32', p.iouThreshold)];
  if (p.scoreThreshold !== undefined) inputs.push(g.scalar('float32', p.scoreThreshold));
  return [g.op('NonMaxSuppression', inputs, { center_point_box: p.centerPointBox ? 1 : 0 })];
};

/**
 * The unique layer: ONNX Unique, the layer's own definition. onnxruntime's CPU kernel takes
 * float32, float64, int64 and int8: float16 and bfloat16 go through float32, int32 and uint8
 * through int64, bool through int8 (exact and order-keeping casts, so the same elements are
 * equal and sort alike), and Y is cast back.
 */
export const unique: Lowering<'unique'> = (p, c) => {
  const g = c.g;
  const dtype = c.inputDType(0);
  const wide: DType = dtype === 'float16' || dtype === 'bfloat16' ? 'float32' : dtype === 'int32' || dtype === 'uint8' ? 'int64' : dtype === 'bool' ? 'int8' : dtype;
  const attrs = p.axis === undefined ? { sorted: p.sorted ? 1 : 0 } : { sorted: p.sorted ? 1 : 0, axis: p.axis };
  const [y, indices, inverse, counts] = g.node('Unique', [g.cast(c.input(0), dtype, wide)], attrs, 4);
  return [g.cast(y!, wide, dtype), indices!, inverse!, counts!];
};
