/** IGatherLayer, IScatterLayer, ITopKLayer, IResizeLayer, INonZeroLayer and the nms layer. */
import { readNumbers } from '../../kernels/access';
import { nonMaxSuppression, nonzero as nonzeroKernel, unique as uniqueKernel } from '../../kernels/data-dependent';
import { gather as gatherKernel, gatherElements, gatherND, resize as resizeKernel, scatterElements, scatterND, topk as topkKernel } from '../../kernels/indexing';
import type { CoordinateTransform, NearestMode } from '../../kernels/indexing';
import { cast as castKernel } from '../../kernels/unary';
import type { ResizeRoundMode } from '..';
import type { Tensor } from '../../ir/tensor';
import { badData, fail, fmtShape, intValues, required, type Executor, type LayerContext } from './common';

/**
 * Checks every index of `indices` against the dim it addresses (`dimOf(k)` for the k-th
 * index value): TensorRT gathers and scatters take [0, d). They do not count negatives from
 * the end (TensorRT reads past-the-end indices as 0 and leaves negative ones undefined), so
 * the conversion adds d to the model's negative indices before this layer
 * (lib/conversion/impl/indices.ts), once; a negative index here was below -d in the model.
 * The reference refuses anything outside [0, d) with a BadInputError naming the layer (whose
 * name starts with the node's) and the index.
 */
function checkIndices(layer: LayerContext, indices: Tensor, dimOf: (k: number) => { dim: number; axis: number }): void {
  const values = readNumbers(indices);
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    const { dim, axis } = dimOf(k);
    if (v < 0 || v >= dim) {
      const raw = indices.data[k]!;
      const index = String(raw);
      // Negative here means the model's index, before the conversion's one wrap, was below -d.
      const original = typeof raw === 'bigint' ? raw - BigInt(dim) : raw - dim;
      const why = v < 0 ? ` (the conversion adds ${dim} to negative indices: the model's index ${original} is outside [${-dim}, ${dim}))` : '';
      badData(layer, `index ${index} (element ${k} of the indices) is out of range [0, ${dim}) for axis ${axis}${why}`, { index, axis, dim });
    }
  }
}

/**
 * IGatherLayer. default: out = data[..., indices[...], ...] along `axis` (ONNX Gather);
 * element: ONNX GatherElements; nd: ONNX GatherND with nbElementWiseDims batch dims.
 */
export const gather: Executor<'gather'> = (p, inputs, layer) => {
  const data = required(inputs, 0, layer);
  const indices = required(inputs, 1, layer);
  switch (p.mode) {
    case 'default': {
      if ((p.nbElementWiseDims ?? 0) !== 0) fail(layer, 'default gather with nbElementWiseDims is not supported by the reference backend');
      checkIndices(layer, indices, () => ({ dim: data.shape[p.axis]!, axis: p.axis }));
      return [gatherKernel(data, indices, p.axis)];
    }
    case 'element':
      checkIndices(layer, indices, () => ({ dim: data.shape[p.axis]!, axis: p.axis }));
      return [gatherElements(data, indices, p.axis)];
    case 'nd': {
      const b = p.nbElementWiseDims ?? 0;
      const last = indices.shape[indices.rank - 1]!;
      checkIndices(layer, indices, (k) => ({ dim: data.shape[b + (k % last)]!, axis: b + (k % last) }));
      return [gatherND(data, indices, b)];
    }
  }
};

/** IScatterLayer. element: ONNX ScatterElements along `axis`; nd: ONNX ScatterND. Later updates win. */
export const scatter: Executor<'scatter'> = (p, inputs, layer) => {
  const data = required(inputs, 0, layer);
  const indices = required(inputs, 1, layer);
  const updates = required(inputs, 2, layer);
  if (p.mode === 'element') {
    checkIndices(layer, indices, () => ({ dim: data.shape[p.axis]!, axis: p.axis }));
    return [scatterElements(data, indices, updates, p.axis)];
  }
  const last = indices.shape[indices.rank - 1]!;
  checkIndices(layer, indices, (k) => ({ dim: data.shape[k % last]!, axis: k % last }));
  return [scatterND(data, indices, updates)];
};

/** ITopKLayer: the k largest (max) or smallest (min) along `axis`, sorted, ties to the lower index. */
export const topk: Executor<'topk'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const dim = x.rank === 0 ? 1 : x.shape[p.axis]!;
  if (p.k > dim) badData(layer, `k ${p.k} exceeds dim ${p.axis} of input ${fmtShape(x.shape)}`, { k: p.k, axis: p.axis, dim });
  const [values, indices] = topkKernel(x, p.k, p.axis, p.op === 'max');
  return [values, p.indicesType === 'int64' ? indices : castKernel(indices, 'int32')];
};

const NEAREST: Record<ResizeRoundMode, NearestMode> = {
  half_up: 'round_prefer_ceil',
  half_down: 'round_prefer_floor',
  floor: 'floor',
  ceil: 'ceil',
};

/**
 * IResizeLayer to the output dims (static or input 1). Coordinates map back by
 * half_pixel ((x + 0.5)·in/out − 0.5), asymmetric (x·in/out) or align_corners
 * (x·(in − 1)/(out − 1)); the `upper` selector maps a dim resized to one element to input
 * element 0 (the upper-left pixel), `formula` applies the formula there too. Nearest rounds
 * the coordinate as `nearestRounding` says; linear interpolates each resized dim, clamping
 * coordinates to the input.
 */
export const resize: Executor<'resize'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const outShape = inputs[1] ? intValues(inputs[1]) : [...p.outputDims];
  if (p.mode === 'cubic') fail(layer, 'cubic resize is not supported by the reference backend');
  if (outShape.some((d) => !Number.isInteger(d) || d < 0)) badData(layer, `output dims ${fmtShape(outShape)} has a negative entry`);
  // pytorch_half_pixel is half_pixel except that a one-element output reads element 0.
  const transform: CoordinateTransform =
    p.coordinateTransformation === 'half_pixel' && p.selector === 'upper' ? 'pytorch_half_pixel' : p.coordinateTransformation;
  return [resizeKernel(x, outShape, { mode: p.mode, coordinateTransformationMode: transform, nearestMode: NEAREST[p.nearestRounding] })];
};

/**
 * INonZeroLayer: int64 [rank, N], the positions of the nonzero (true) elements column by
 * column in row-major order; N is the count this input has (the IR kernel, ONNX's NonZero).
 */
export const nonzero: Executor<'nonzero'> = (_p, inputs, layer) => [nonzeroKernel(required(inputs, 0, layer))];

/**
 * The nms layer: ONNX NonMaxSuppression's rows of (batch, class, box), int64 [S, 3], computed by
 * the IR kernel (scores compared as given, IoU in float64).
 */
export const nms: Executor<'nms'> = (p, inputs, layer) => [
  nonMaxSuppression(required(inputs, 0, layer), required(inputs, 1, layer), {
    maxPerClass: p.maxOutputBoxesPerClass,
    iouThreshold: p.iouThreshold,
    scoreThreshold: p.scoreThreshold ?? null,
    centerPointBox: p.centerPointBox,
  }),
];

/** The unique layer: ONNX Unique's four outputs, by the IR kernel. */
export const unique: Executor<'unique'> = (p, inputs, layer) => {
  const r = uniqueKernel(required(inputs, 0, layer), p.axis ?? null, p.sorted);
  return [r.values, r.indices, r.inverse, r.counts];
};
