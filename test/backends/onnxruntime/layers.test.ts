/**
 * Every layer kind through the onnxruntime backend (Network → ONNX → InferenceSession)
 * against the reference backend, the oracle of TensorRT's layer semantics, on random
 * inputs: several shapes, broadcasting, dtypes, static parameters and the same parameters
 * given as run-time shape tensors (the `_dyn` forms). CASES is a record over the layer
 * kinds, and the first test enumerates LAYER_KINDS, so a new kind without a lowering and a
 * case here fails.
 */
import { onnxruntimeBackend, LOWERINGS } from '../../../lib/backends/onnxruntime';
import { LAYER_KINDS, type LayerKind, type LayerParams } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { Random } from '../../helpers/random';
import { floatAttr, runOrtOp } from '../../helpers/ort-single-op';
import { runOrtEngine } from './engine-worker';
import { layerNetwork, runNetwork, type LayerInput } from '../reference/helpers';

const rng = new Random(20261201);
const DEVICE = { type: 'cpu' } as never;
/** float32 results: the reference computes in float64 and rounds once; onnxruntime in float32. */
const TOL: Tolerance = { rtol: 1e-4, atol: 1e-5 };
const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };
const EXACT: Tolerance = { rtol: 0, atol: 0 };

interface Case {
  label: string;
  params: LayerParams;
  inputs: () => LayerInput[];
  tol?: Tolerance;
}

const f = (shape: number[], lo = -1, hi = 1): Tensor => rng.tensor(shape, 'float32', lo, hi);
const pos = (shape: number[]): Tensor => rng.tensor(shape, 'float32', 0.1, 2);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);
const c = (t: Tensor): { constant: Tensor } => ({ constant: t });
const half = (t: Tensor): Tensor => Tensor.from('float16', t.shape, t.toArray() as number[]);

const conv = (kind: 'convolution' | 'deconvolution', k: number, cin: number, groups: number, extra: Partial<LayerParams & { stride: number[] }> = {}): LayerParams => {
  const layout = kind === 'convolution' ? [k, cin / groups, 3, 3] : [cin, k / groups, 3, 3];
  return {
    kind,
    nbOutputMaps: k,
    kernelSize: [3, 3],
    stride: [1, 1],
    prePadding: [1, 0],
    postPadding: [1, 2],
    dilation: [1, 1],
    groups,
    kernel: rng.tensor(layout),
    bias: rng.tensor([k]),
    ...extra,
  } as LayerParams;
};

const pool = (type: 'max' | 'average', paddingMode: 'explicit_round_down' | 'explicit_round_up', exclude: boolean): LayerParams => ({
  kind: 'pooling',
  type,
  window: [3, 2],
  stride: [2, 2],
  prePadding: [1, 0],
  postPadding: [1, 1],
  paddingMode,
  averageCountExcludesPadding: exclude,
});

const resize = (mode: 'nearest' | 'linear', coordinateTransformation: 'align_corners' | 'asymmetric' | 'half_pixel', selector: 'formula' | 'upper', nearestRounding: 'half_up' | 'half_down' | 'floor' | 'ceil'): LayerParams => ({
  kind: 'resize',
  mode,
  outputDims: [1, 2, 7, 5],
  coordinateTransformation,
  selector,
  nearestRounding,
});

const CASES: Record<LayerKind, Case[]> = {
  constant: [
    { label: 'float32 weights', params: { kind: 'constant', weights: f([2, 3]) }, inputs: () => [] },
    { label: 'int32 weights', params: { kind: 'constant', weights: Tensor.from('int32', [3], [1, -2, 3]) }, inputs: () => [] },
  ],
  identity: [
    { label: 'float32', params: { kind: 'identity' }, inputs: () => [f([2, 3])] },
    { label: 'bool', params: { kind: 'identity' }, inputs: () => [Tensor.from('bool', [3], [1, 0, 1])] },
  ],
  cast: [
    { label: 'float32 → int32 truncates', params: { kind: 'cast', to: 'int32' }, inputs: () => [f([4, 5], -9, 9)] },
    { label: 'float32 → bool', params: { kind: 'cast', to: 'bool' }, inputs: () => [Tensor.from('float32', [4], [0, -0.5, 2, 0])] },
    { label: 'int64 → float16', params: { kind: 'cast', to: 'float16' }, inputs: () => [rng.intTensor([6], -100, 100)], tol: FP16 },
    { label: 'bool → float32', params: { kind: 'cast', to: 'float32' }, inputs: () => [Tensor.from('bool', [3], [1, 0, 1])] },
  ],
  elementwise: [
    ...(['sum', 'prod', 'max', 'min', 'sub', 'div', 'floor_div'] as const).map((op) => ({
      label: `${op} broadcasting [2,1,4] with [1,3,1]`,
      params: { kind: 'elementwise', op } as LayerParams,
      inputs: () => [f([2, 1, 4]), pos([1, 3, 1])],
    })),
    { label: 'pow', params: { kind: 'elementwise', op: 'pow' }, inputs: () => [pos([3, 4]), f([3, 4])] },
    // Constants with leading 1s go in without them (a 1-D bias, a scalar): the rank stays the input's.
    { label: 'sum with a constant [1,1,3] bias', params: { kind: 'elementwise', op: 'sum' }, inputs: () => [f([2, 4, 3]), c(f([1, 1, 3]))] },
    { label: 'sub from a constant [1,1,1]', params: { kind: 'elementwise', op: 'sub' }, inputs: () => [c(f([1, 1, 1])), f([2, 4, 3])] },
    { label: 'div of two constants [1,1] keeps rank 2', params: { kind: 'elementwise', op: 'div' }, inputs: () => [c(f([1, 1])), c(pos([1, 1]))] },
    { label: 'prod with a constant [1,3,1] (a 1 inside stays)', params: { kind: 'elementwise', op: 'prod' }, inputs: () => [f([2, 3, 4]), c(f([1, 3, 1]))] },
    { label: 'int32 div toward zero, 0 divisor gives 0', params: { kind: 'elementwise', op: 'div' }, inputs: () => [Tensor.from('int32', [5], [7, -7, 7, -7, 5]), Tensor.from('int32', [5], [2, 2, -2, -2, 0])] },
    { label: 'int64 floor_div', params: { kind: 'elementwise', op: 'floor_div' }, inputs: () => [Tensor.from('int64', [5], [7, -7, 7, -7, 5]), Tensor.from('int64', [5], [2, 2, -2, -2, 0])] },
    { label: 'int8 sum', params: { kind: 'elementwise', op: 'sum' }, inputs: () => [rng.intTensor([2, 3], -50, 50, 'int8'), rng.intTensor([1, 3], -50, 50, 'int8')] },
    { label: 'float16 prod', params: { kind: 'elementwise', op: 'prod' }, inputs: () => [half(f([2, 3])), half(f([2, 1]))], tol: FP16 },
    ...(['equal', 'greater', 'less'] as const).map((op) => ({
      label: `${op} int32`,
      params: { kind: 'elementwise', op } as LayerParams,
      inputs: () => [rng.intTensor([3, 4], 0, 3, 'int32'), rng.intTensor([1, 4], 0, 3, 'int32')],
    })),
    ...(['and', 'or', 'xor'] as const).map((op) => ({
      label: `${op}`,
      params: { kind: 'elementwise', op } as LayerParams,
      inputs: () => [Tensor.from('bool', [4], [0, 0, 1, 1]), Tensor.from('bool', [4], [0, 1, 0, 1])],
    })),
  ],
  unary: [
    ...(['exp', 'abs', 'neg', 'sin', 'cos', 'tan', 'sinh', 'cosh', 'asin', 'acos', 'atan', 'asinh', 'ceil', 'floor', 'erf', 'sign', 'round', 'isinf', 'isnan'] as const).map((op) => ({
      label: op,
      params: { kind: 'unary', op } as LayerParams,
      inputs: () => [op === 'round' ? Tensor.from('float32', [6], [0.5, 1.5, 2.5, -0.5, -1.7, 3.2]) : f([2, 3], -0.9, 0.9)],
    })),
    ...(['log', 'sqrt', 'recip', 'acosh'] as const).map((op) => ({ label: op, params: { kind: 'unary', op } as LayerParams, inputs: () => [rng.tensor([2, 3], 'float32', 1.1, 3)] })),
    { label: 'atanh', params: { kind: 'unary', op: 'atanh' }, inputs: () => [f([4], -0.9, 0.9)] },
    { label: 'not', params: { kind: 'unary', op: 'not' }, inputs: () => [Tensor.from('bool', [3], [1, 0, 1])] },
    { label: 'abs int32', params: { kind: 'unary', op: 'abs' }, inputs: () => [rng.intTensor([5], -9, 9, 'int32')] },
    { label: 'exp float16', params: { kind: 'unary', op: 'exp' }, inputs: () => [half(f([5]))], tol: FP16 },
  ],
  activation: [
    ...(['relu', 'sigmoid', 'tanh', 'softsign', 'gelu_erf', 'gelu_tanh'] as const).map((type) => ({ label: type, params: { kind: 'activation', type } as LayerParams, inputs: () => [f([3, 5], -3, 3)] })),
    ...(
      [
        ['leaky_relu', 0.1, 0],
        ['elu', 1.3, 0],
        ['selu', 1.6732632, 1.050701],
        ['softplus', 2, 0.5],
        ['clip', -0.5, 0.7],
        ['hard_sigmoid', 0.2, 0.5],
        ['scaled_tanh', 1.7, 0.66],
        ['thresholded_relu', 0.3, 0],
      ] as const
    ).map(([type, alpha, beta]) => ({ label: type, params: { kind: 'activation', type, alpha, beta } as LayerParams, inputs: () => [f([3, 5], -3, 3)] })),
  ],
  matmul: [
    { label: 'batched broadcast [2,1,3,4]×[1,5,4,2]', params: { kind: 'matmul', opA: 'none', opB: 'none' }, inputs: () => [f([2, 1, 3, 4]), f([1, 5, 4, 2])] },
    { label: 'transpose both', params: { kind: 'matmul', opA: 'transpose', opB: 'transpose' }, inputs: () => [f([2, 4, 3]), f([2, 5, 4])] },
    { label: 'vector × matrix', params: { kind: 'matmul', opA: 'vector', opB: 'none' }, inputs: () => [f([2, 4]), f([2, 4, 3])] },
    { label: 'matrix × vector', params: { kind: 'matmul', opA: 'none', opB: 'vector' }, inputs: () => [f([3, 4]), f([4])] },
    { label: 'vector × vector', params: { kind: 'matmul', opA: 'vector', opB: 'vector' }, inputs: () => [f([2, 4]), f([2, 4])] },
    { label: 'constant weights', params: { kind: 'matmul', opA: 'none', opB: 'transpose' }, inputs: () => [f([3, 4]), c(f([6, 4]))] },
  ],
  shuffle: [
    { label: 'transpose, reshape, transpose', params: { kind: 'shuffle', firstTranspose: [0, 2, 1], reshape: [3, -1], secondTranspose: [1, 0], zeroIsPlaceholder: false }, inputs: () => [f([2, 4, 3])] },
    { label: 'zero as placeholder', params: { kind: 'shuffle', reshape: [0, -1], zeroIsPlaceholder: true }, inputs: () => [f([2, 3, 4])] },
    { label: 'literal zero', params: { kind: 'shuffle', reshape: [0, 4], zeroIsPlaceholder: false }, inputs: () => [f([0, 2, 2])] },
    { label: 'a constant reshaped (folded into an initializer)', params: { kind: 'shuffle', reshape: [1, 2, 3], zeroIsPlaceholder: false }, inputs: () => [c(f([6]))] },
    { label: 'reshape dims from a run-time shape tensor', params: { kind: 'shuffle', zeroIsPlaceholder: true }, inputs: () => [f([2, 3, 4]), i64([0, 12])] },
  ],
  slice: [
    { label: 'strided strict', params: { kind: 'slice', start: [1, 0], size: [2, 3], stride: [2, 2], mode: 'strict_bounds' }, inputs: () => [f([5, 6])] },
    { label: 'negative stride', params: { kind: 'slice', start: [4, 5], size: [5, 3], stride: [-1, -2], mode: 'strict_bounds' }, inputs: () => [f([5, 6])] },
    { label: 'stride 0 broadcasts', params: { kind: 'slice', start: [1, 0], size: [3, 6], stride: [0, 1], mode: 'strict_bounds' }, inputs: () => [f([5, 6])] },
    ...(['wrap', 'clamp', 'reflect', 'fill'] as const).map((mode) => ({
      label: `${mode} out of bounds`,
      params: { kind: 'slice', start: [-2, 3], size: [7, 5], stride: [1, 2], mode } as LayerParams,
      inputs: () => [f([3, 4])],
    })),
    { label: 'fill with a fill value', params: { kind: 'slice', start: [-1, 0], size: [4, 2], stride: [1, 1], mode: 'fill' }, inputs: () => [f([2, 2]), null, null, null, Tensor.from('float32', [], [7])] },
    { label: 'start, size, stride from shape tensors (strict)', params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'strict_bounds' }, inputs: () => [f([5, 6]), i64([4, 1]), i64([3, 2]), i64([-1, 2])] },
    { label: 'stride 0 from shape tensors (strict)', params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'strict_bounds' }, inputs: () => [f([5, 6]), i64([1, 0]), i64([3, 6]), i64([0, 1])] },
    ...(['wrap', 'clamp', 'reflect', 'fill'] as const).map((mode) => ({
      label: `${mode} from shape tensors`,
      params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode } as LayerParams,
      inputs: () => [f([3, 4]), i64([-2, 3]), i64([7, 5]), i64([1, 2])],
    })),
  ],
  concat: [
    { label: 'axis 1, three inputs', params: { kind: 'concat', axis: 1 }, inputs: () => [f([2, 1, 3]), f([2, 4, 3]), f([2, 2, 3])] },
    { label: 'int64 shape tensors', params: { kind: 'concat', axis: 0 }, inputs: () => [i64([1, 2]), i64([3])] },
  ],
  gather: [
    { label: 'default axis 1', params: { kind: 'gather', mode: 'default', axis: 1 }, inputs: () => [f([3, 5, 2]), rng.intTensor([2, 4], 0, 4, 'int32')] },
    { label: 'element', params: { kind: 'gather', mode: 'element', axis: 0 }, inputs: () => [f([4, 3]), rng.intTensor([2, 3], 0, 3)] },
    { label: 'nd with a batch dim', params: { kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: 1 }, inputs: () => [f([2, 3, 4]), rng.intTensor([2, 5, 1], 0, 2)] },
  ],
  scatter: [
    { label: 'element', params: { kind: 'scatter', mode: 'element', axis: 1 }, inputs: () => [f([3, 4]), Tensor.from('int64', [3, 2], [0, 3, 1, 2, 3, 0]), f([3, 2])] },
    { label: 'nd', params: { kind: 'scatter', mode: 'nd', axis: 0 }, inputs: () => [f([4, 3]), Tensor.from('int64', [2, 1], [3, 1]), f([2, 3])] },
  ],
  reduce: [
    ...(['sum', 'prod', 'max', 'min', 'avg'] as const).map((op) => ({
      label: `${op} over [0, 2], keepDims`,
      params: { kind: 'reduce', op, axes: [0, 2], keepDims: true } as LayerParams,
      inputs: () => [f([2, 3, 4])],
    })),
    { label: 'sum without keepDims', params: { kind: 'reduce', op: 'sum', axes: [1], keepDims: false }, inputs: () => [f([2, 3, 4])] },
    { label: 'int32 avg truncates', params: { kind: 'reduce', op: 'avg', axes: [1], keepDims: false }, inputs: () => [rng.intTensor([2, 3], -10, 10, 'int32')] },
    { label: 'no axes', params: { kind: 'reduce', op: 'max', axes: [], keepDims: true }, inputs: () => [f([2, 3])] },
  ],
  softmax: [
    { label: 'axis 1 of 3', params: { kind: 'softmax', axis: 1 }, inputs: () => [f([2, 5, 3], -4, 4)] },
    { label: 'last axis', params: { kind: 'softmax', axis: 1 }, inputs: () => [f([3, 7], -4, 4)] },
  ],
  shape: [
    { label: 'of a 3-D input', params: { kind: 'shape' }, inputs: () => [f([2, 3, 4])] },
    { label: 'of a scalar', params: { kind: 'shape' }, inputs: () => [f([])] },
  ],
  fill: [
    { label: 'static float32 linspace', params: { kind: 'fill', dims: [2, 3], alpha: 0.5, beta: [1, 0.25], dtype: 'float32' }, inputs: () => [] },
    { label: 'static int64', params: { kind: 'fill', dims: [4], alpha: 3, beta: [2], dtype: 'int64' }, inputs: () => [] },
    { label: 'dims from a shape tensor', params: { kind: 'fill', dims: [0, 0], alpha: 1, beta: [3, 1], dtype: 'int32' }, inputs: () => [i64([2, 3])] },
    {
      label: 'dims, alpha and beta from tensors (float32)',
      params: { kind: 'fill', dims: [0], alpha: 0, beta: [0], dtype: 'float32' },
      inputs: () => [i64([5]), Tensor.from('float32', [], [0.5]), Tensor.from('float32', [1], [0.25])],
    },
  ],
  select: [
    { label: 'broadcast float32', params: { kind: 'select' }, inputs: () => [Tensor.from('bool', [2, 1], [1, 0]), f([2, 3]), f([1, 3])] },
    { label: 'int64', params: { kind: 'select' }, inputs: () => [Tensor.from('bool', [3], [1, 0, 1]), i64([1, 2, 3]), i64([4, 5, 6])] },
  ],
  convolution: [
    { label: '2-D with asymmetric padding and bias', params: conv('convolution', 4, 3, 1), inputs: () => [f([2, 3, 7, 6])] },
    { label: 'grouped, strided, dilated', params: conv('convolution', 4, 4, 2, { stride: [2, 1], dilation: [1, 2] } as never), inputs: () => [f([1, 4, 9, 9])] },
    { label: 'kernel as an input', params: { ...(conv('convolution', 2, 3, 1) as object), bias: null } as LayerParams, inputs: () => [f([1, 3, 5, 5]), f([2, 3, 3, 3])] },
  ],
  deconvolution: [
    { label: 'strided with padding', params: conv('deconvolution', 3, 2, 1, { stride: [2, 2] } as never), inputs: () => [f([1, 2, 4, 5])] },
    { label: 'grouped', params: conv('deconvolution', 4, 4, 2), inputs: () => [f([2, 4, 3, 3])] },
  ],
  pooling: [
    { label: 'max round down', params: pool('max', 'explicit_round_down', true), inputs: () => [f([1, 2, 7, 6])] },
    { label: 'max round up', params: pool('max', 'explicit_round_up', true), inputs: () => [f([1, 2, 8, 7])] },
    { label: 'average excluding padding, round up', params: pool('average', 'explicit_round_up', true), inputs: () => [f([2, 2, 8, 7])] },
    { label: 'average counting padding, round down', params: pool('average', 'explicit_round_down', false), inputs: () => [f([1, 2, 7, 6])] },
    { label: 'average counting padding, round up (window past the padding)', params: pool('average', 'explicit_round_up', false), inputs: () => [f([1, 2, 8, 7])] },
  ],
  // Attention: spelled out before lowering (lib/conversion/expand-layers.ts), ONNX opset 18 has no attention op.
  attention: [
    { label: 'plain, scale 0.3', params: { kind: 'attention', scale: 0.3, causal: false }, inputs: () => [f([2, 2, 5, 8]), f([2, 2, 7, 8]), f([2, 2, 7, 8])] },
    { label: 'causal, 4 query heads over 2 key/value heads', params: { kind: 'attention', scale: 0.25, causal: true }, inputs: () => [f([1, 4, 6, 8]), f([1, 2, 6, 8]), f([1, 2, 6, 8])] },
    {
      label: 'bool mask broadcast over heads',
      params: { kind: 'attention', scale: 0.5, causal: false },
      inputs: () => [f([1, 2, 3, 4]), f([1, 2, 5, 4]), f([1, 2, 5, 4]), Tensor.from('bool', [1, 1, 3, 5], Array.from({ length: 15 }, (_, i) => (i % 5 === 0 || i % 3 === 1 ? 1 : 0)))],
    },
    { label: 'additive mask per key', params: { kind: 'attention', scale: 0.5, causal: false }, inputs: () => [f([2, 1, 3, 4]), f([2, 1, 6, 4]), f([2, 1, 6, 4]), f([2, 1, 1, 6], -3, 0)] },
  ],
  normalization: [
    // RMS normalization: ONNX opset 18 has none; spelled out before lowering (lib/conversion/expand-layers.ts).
    { label: 'RMS norm over the last axis, with a bias', params: { kind: 'normalization', axes: [2], epsilon: 1e-6, nbGroups: 1, rms: true }, inputs: () => [f([2, 3, 8]), f([1, 1, 8]), f([1, 1, 8])] },
    { label: 'RMS norm over the last two axes, zero bias', params: { kind: 'normalization', axes: [1, 2], epsilon: 1e-5, nbGroups: 1, rms: true }, inputs: () => [f([2, 3, 4]), f([1, 3, 4]), c(Tensor.from('float32', [1, 1, 1], [0]))] },
    { label: 'layer norm over the last two axes', params: { kind: 'normalization', axes: [1, 2], epsilon: 1e-5, nbGroups: 1 }, inputs: () => [f([2, 3, 4]), f([1, 3, 4]), f([1, 3, 4])] },
    { label: 'instance norm (axes 2, 3) per channel', params: { kind: 'normalization', axes: [2, 3], epsilon: 1e-5, nbGroups: 1 }, inputs: () => [f([2, 3, 4, 5]), f([1, 3, 1, 1]), f([1, 3, 1, 1])] },
    { label: 'group norm, per-channel scale', params: { kind: 'normalization', axes: [2, 3], epsilon: 1e-5, nbGroups: 2 }, inputs: () => [f([2, 4, 3, 3]), f([1, 4, 1, 1]), f([1, 4, 1, 1])] },
    { label: 'group norm, per-group scale', params: { kind: 'normalization', axes: [2], epsilon: 1e-3, nbGroups: 3 }, inputs: () => [f([1, 6, 5]), f([1, 3, 1]), f([1, 3, 1])] },
  ],
  resize: [
    { label: 'nearest asymmetric floor', params: resize('nearest', 'asymmetric', 'formula', 'floor'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'nearest half_pixel half_up', params: resize('nearest', 'half_pixel', 'formula', 'half_up'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'nearest align_corners half_down', params: resize('nearest', 'align_corners', 'formula', 'half_down'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'nearest ceil', params: resize('nearest', 'asymmetric', 'formula', 'ceil'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'linear half_pixel', params: resize('linear', 'half_pixel', 'formula', 'floor'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'linear half_pixel, upper selector (pytorch_half_pixel)', params: { ...(resize('linear', 'half_pixel', 'upper', 'floor') as object), outputDims: [1, 2, 1, 6] } as LayerParams, inputs: () => [f([1, 2, 3, 4])] },
    { label: 'linear align_corners', params: resize('linear', 'align_corners', 'formula', 'floor'), inputs: () => [f([1, 2, 3, 4])] },
    { label: 'output dims from a shape tensor', params: resize('nearest', 'asymmetric', 'formula', 'floor'), inputs: () => [f([1, 2, 3, 4]), i64([1, 2, 6, 8])] },
  ],
  topk: [
    { label: 'max along axis 1, int32 indices', params: { kind: 'topk', op: 'max', k: 3, axis: 1, indicesType: 'int32' }, inputs: () => [f([2, 6, 3])] },
    { label: 'min along the last axis, int64 indices', params: { kind: 'topk', op: 'min', k: 2, axis: 1, indicesType: 'int64' }, inputs: () => [f([4, 5])] },
  ],
  cumulative: [
    { label: 'inclusive', params: { kind: 'cumulative', op: 'sum', axis: 1, exclusive: false, reverse: false }, inputs: () => [f([2, 5])] },
    { label: 'exclusive reversed', params: { kind: 'cumulative', op: 'sum', axis: 0, exclusive: true, reverse: true }, inputs: () => [f([4, 3])] },
    { label: 'int32', params: { kind: 'cumulative', op: 'sum', axis: 0, exclusive: false, reverse: false }, inputs: () => [rng.intTensor([5], -9, 9, 'int32')] },
  ],
  // The count is a run-time dim: the shapes compared below are the ones each run gave.
  nonzero: [
    { label: 'float32 with zeros and -0', params: { kind: 'nonzero' }, inputs: () => [Tensor.from('float32', [2, 3], [0, 1.5, -0, -2, 0, 3])], tol: EXACT },
    { label: 'int32 rank 3', params: { kind: 'nonzero' }, inputs: () => [rng.intTensor([2, 3, 4], -1, 2, 'int32')], tol: EXACT },
    { label: 'bool', params: { kind: 'nonzero' }, inputs: () => [Tensor.from('bool', [5], [1, 0, 0, 1, 1])], tol: EXACT },
    { label: 'float16', params: { kind: 'nonzero' }, inputs: () => [half(Tensor.from('float32', [2, 2], [0, 0.5, 0, 1]))], tol: EXACT },
    { label: 'no nonzero element (N = 0)', params: { kind: 'nonzero' }, inputs: () => [Tensor.from('float32', [3, 2], [0, 0, 0, 0, 0, 0])], tol: EXACT },
  ],
  // Rows of (batch, class, box), exactly: onnxruntime's NonMaxSuppression against the reference's kernel.
  nms: [
    {
      label: 'two batches, three classes, overlapping random boxes, score threshold',
      params: { kind: 'nms', maxOutputBoxesPerClass: 3, iouThreshold: 0.4, scoreThreshold: 0.2, centerPointBox: false },
      inputs: () => [
        Tensor.from('float32', [2, 6, 4], Array.from({ length: 48 }, (_, i) => (i % 4 < 2 ? ((i * 37) % 11) / 10 : 1 + ((i * 53) % 13) / 10))),
        Tensor.from('float32', [2, 3, 6], Array.from({ length: 36 }, (_, i) => ((i * 29) % 17) / 17)),
      ],
      tol: EXACT,
    },
    {
      label: 'equal scores (lower box index first), centre-size boxes, no score threshold',
      params: { kind: 'nms', maxOutputBoxesPerClass: 10, iouThreshold: 0.5, centerPointBox: true },
      inputs: () => [
        Tensor.from('float32', [1, 5, 4], [0, 0, 2, 2, 0.1, 0, 2, 2, 5, 5, 1, 1, 5, 5.1, 1, 1, 9, 9, 1, 1]),
        Tensor.from('float32', [1, 2, 5], [0.5, 0.5, 0.5, 0.5, 0.5, -1, 0.3, 0.3, 0.9, -2]),
      ],
      tol: EXACT,
    },
    {
      label: 'nothing selected (every score at or below the threshold)',
      params: { kind: 'nms', maxOutputBoxesPerClass: 2, iouThreshold: 0.5, scoreThreshold: 0.9, centerPointBox: false },
      inputs: () => [f([1, 4, 4]), Tensor.from('float32', [1, 1, 4], [0.1, 0.9, 0.5, -3])],
      tol: EXACT,
    },
    {
      label: 'float16 boxes and scores, flipped corners',
      params: { kind: 'nms', maxOutputBoxesPerClass: 2, iouThreshold: 0.3, centerPointBox: false },
      inputs: () => [half(Tensor.from('float32', [1, 3, 4], [2, 2, 0, 0, 0, 0, 2, 2, 3, 3, 4, 4])), half(Tensor.from('float32', [1, 1, 3], [0.25, 0.75, 0.5]))],
      tol: EXACT,
    },
  ],
  // Unique's four outputs, exactly: onnxruntime's Unique (through the lowering's casts) against the reference's kernel.
  unique: [
    { label: 'float32 flattened, sorted, with -0 and 0', params: { kind: 'unique', sorted: true }, inputs: () => [Tensor.from('float32', [2, 3], [2, -0, 1.5, 0, 2, -3])], tol: EXACT },
    { label: 'int32 rows (axis 0), in order of first occurrence', params: { kind: 'unique', axis: 0, sorted: false }, inputs: () => [Tensor.from('int32', [4, 2], [5, 1, 0, 2, 5, 1, -7, 2])], tol: EXACT },
    { label: 'bool flattened (through int8)', params: { kind: 'unique', sorted: true }, inputs: () => [Tensor.from('bool', [5], [1, 0, 0, 1, 1])], tol: EXACT },
    { label: 'float16 columns (axis 1), sorted', params: { kind: 'unique', axis: 1, sorted: true }, inputs: () => [half(Tensor.from('float32', [2, 3], [0.5, 0.25, 0.5, 1, 2, 1]))], tol: EXACT },
    { label: 'uint8 flattened (through int64), unsorted', params: { kind: 'unique', sorted: false }, inputs: () => [Tensor.from('uint8', [6], [200, 3, 200, 255, 0, 3])], tol: EXACT },
  ],
  // Quantized outputs compare exactly (tol 0): both sides round x / scale half to even.
  quantize: [
    {
      label: 'int8 per tensor with a zero point, saturating',
      params: { kind: 'quantize', to: 'int8', axis: 0 },
      inputs: () => [f([3, 4], -4, 4), c(Tensor.from('float32', [], [0.02])), c(Tensor.from('int8', [], [3]))],
      tol: EXACT,
    },
    {
      label: 'uint8 per axis (a uint8 zero point fed as an input)',
      params: { kind: 'quantize', to: 'uint8', axis: 1 },
      inputs: () => [f([2, 3, 4], -2, 2), c(Tensor.from('float32', [3], [0.01, 0.02, 0.05])), Tensor.from('uint8', [3], [0, 128, 250])],
      tol: EXACT,
    },
    {
      label: 'int4 in blocks of 2 along axis 1',
      params: { kind: 'quantize', to: 'int4', axis: 1, blockSize: 2 },
      inputs: () => [f([2, 6], -1, 1), c(pos([2, 3])), c(Tensor.from('int4', [2, 3], [0, 1, -1, 2, -3, 7]))],
      tol: EXACT,
    },
    {
      label: 'float8e4m3fn per tensor, saturating to ±448',
      params: { kind: 'quantize', to: 'float8e4m3fn', axis: 0 },
      inputs: () => [Tensor.from('float32', [6], [0.013, -1.7, 5, 1000, -3000, 7.3]), c(Tensor.from('float32', [], [0.5]))],
      tol: EXACT,
    },
    {
      label: 'float16 x divided in float16, int8 per axis',
      params: { kind: 'quantize', to: 'int8', axis: 0 },
      inputs: () => [half(f([3, 5], -2, 2)), c(half(Tensor.from('float32', [3], [0.01, 0.003, 0.07])))],
      tol: EXACT,
    },
  ],
  dequantize: [
    {
      label: 'int8 per axis with a zero point',
      params: { kind: 'dequantize', to: 'float32', axis: 1 },
      inputs: () => [rng.intTensor([2, 3, 2], -128, 127, 'int8'), c(pos([3])), c(Tensor.from('int8', [3], [0, -5, 9]))],
    },
    {
      label: 'uint8 per tensor to float16',
      params: { kind: 'dequantize', to: 'float16', axis: 0 },
      inputs: () => [rng.intTensor([4, 3], 0, 255, 'uint8'), c(Tensor.from('float32', [], [0.037])), Tensor.from('uint8', [], [131])],
      tol: FP16,
    },
    {
      label: 'int4 in blocks of 3 along axis 0',
      params: { kind: 'dequantize', to: 'float32', axis: 0, blockSize: 3 },
      inputs: () => [c(Tensor.from('int4', [6, 2], [-8, 7, 3, -1, 0, 5, 1, 1, -2, 6, 4, -7])), c(pos([2, 2])), c(Tensor.from('int4', [2, 2], [1, -1, 0, 2]))],
    },
    {
      label: 'float8e4m3fn (a network input) per tensor to bfloat16',
      params: { kind: 'dequantize', to: 'bfloat16', axis: 0 },
      inputs: () => [Tensor.from('float8e4m3fn', [5], [0.5, -448, 3.25, 0.015625, -0.875]), c(Tensor.from('float32', [], [1.5]))],
      tol: FP16,
    },
  ],
};

async function runOrt(network: Parameters<typeof onnxruntimeBackend.build>[0], feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
  return runOrtEngine(await onnxruntimeBackend.build(network, {} as never, DEVICE), feeds);
}

describe('onnxruntime backend: layer kinds', () => {
  it('has a lowering and test cases for every layer kind', () => {
    const lowerings = LOWERINGS as Readonly<Record<string, unknown>>;
    expect(LAYER_KINDS.filter((kind) => typeof lowerings[kind] !== 'function')).toEqual([]);
    expect(LAYER_KINDS.filter((kind) => (CASES[kind]?.length ?? 0) === 0)).toEqual([]);
    expect(Object.keys(CASES).sort()).toEqual([...LAYER_KINDS].sort());
  });

  const all = LAYER_KINDS.flatMap((kind) => CASES[kind].map((c) => [kind, c.label, c] as const));
  it.each(all)('%s: %s matches the reference backend', async (_kind, _label, c) => {
    const { network, feeds } = layerNetwork(c.params, c.inputs());
    const expected = await runNetwork(network, feeds);
    const actual = await runOrt(network, feeds);
    for (const o of network.outputs) {
      const [a, e] = [actual[o.name]!, expected[o.name]!];
      expect(a.dtype).toBe(e.dtype);
      expect(a.shape).toEqual(e.shape);
      expectClose(a, e, c.tol ?? TOL, o.name);
    }
  });
});

// Cubic resize, which the reference backend cannot compute: compared with onnxruntime's own
// Resize given TensorRT's cubic coefficient (−0.75) and the coordinate transformation the
// layer's selector implies.
it('resize: cubic matches an ONNX Resize with a = -0.75 (the reference has no cubic)', async () => {
  const x = f([1, 2, 4, 5]);
  const params: LayerParams = { kind: 'resize', mode: 'cubic', outputDims: [1, 2, 7, 9], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' };
  const { network, feeds } = layerNetwork(params, [x]);
  const actual = await runOrt(network, feeds);
  const [expected] = await runOrtOp({
    opType: 'Resize',
    inputs: [x, null, null, { constant: i64([1, 2, 7, 9]) }],
    attributes: { mode: 'cubic', coordinate_transformation_mode: 'half_pixel', cubic_coeff_a: floatAttr(-0.75) },
  });
  expectClose(actual.out0!, expected!, TOL, 'cubic');
});
