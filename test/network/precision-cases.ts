/**
 * Layer cases for the precision pass's tests (test/network/precision.test.ts runs them on the
 * reference backend, test/backends/cuda/precision-kinds.test.ts through the cuda lowerings):
 * every layer kind of the catalogue that carries float data, with deterministic inputs.
 */
import type { LayerParams } from '../../lib/network';
import { Tensor } from '../../lib/ir/tensor';
import type { LayerInput } from '../backends/reference/helpers';

/** Deterministic values in [lo, hi). */
export function values(n: number, seed: number, lo = -2, hi = 2): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo);
  });
}
export const f32 = (shape: number[], seed: number, lo?: number, hi?: number): Tensor =>
  Tensor.from('float32', shape, values(shape.reduce((a, d) => a * d, 1), seed, lo, hi));
export const idx = (shape: number[], data: number[]): Tensor => Tensor.from('int32', shape, data);

/** Every layer kind with float data: [label, params, inputs, whether its output computes in fp16]. */
export const KIND_CASES: Array<[string, LayerParams, LayerInput[], boolean]> = [
  ['elementwise sum', { kind: 'elementwise', op: 'sum' }, [f32([2, 3], 1), f32([1, 3], 2)], true],
  ['elementwise prod', { kind: 'elementwise', op: 'prod' }, [f32([2, 3], 3), f32([2, 3], 4)], true],
  ['elementwise sub', { kind: 'elementwise', op: 'sub' }, [f32([2, 3], 5), { constant: f32([2, 1], 6) }], true],
  ['elementwise div', { kind: 'elementwise', op: 'div' }, [f32([2, 3], 7), f32([2, 3], 8, 0.5, 2)], true],
  ['elementwise max', { kind: 'elementwise', op: 'max' }, [f32([2, 3], 9), f32([2, 3], 10)], true],
  ['elementwise min', { kind: 'elementwise', op: 'min' }, [f32([2, 3], 11), f32([2, 3], 12)], true],
  ['elementwise floor_div', { kind: 'elementwise', op: 'floor_div' }, [f32([2, 3], 13, 1, 9), { constant: Tensor.from('float32', [1, 1], [2]) }], true],
  ['elementwise pow (kept fp32: large range)', { kind: 'elementwise', op: 'pow' }, [f32([2, 3], 14, 0.5, 3), { constant: Tensor.from('float32', [1, 1], [3]) }], false],
  ['elementwise greater (bool out)', { kind: 'elementwise', op: 'greater' }, [f32([2, 3], 15), f32([2, 3], 16)], false],
  ['unary exp', { kind: 'unary', op: 'exp' }, [f32([2, 3], 17)], true],
  ['unary log', { kind: 'unary', op: 'log' }, [f32([2, 3], 18, 0.5, 4)], true],
  ['unary sqrt', { kind: 'unary', op: 'sqrt' }, [f32([2, 3], 19, 0.1, 4)], true],
  ['unary recip', { kind: 'unary', op: 'recip' }, [f32([2, 3], 20, 0.5, 3)], true],
  ['unary sin', { kind: 'unary', op: 'sin' }, [f32([2, 3], 21)], true],
  ['unary erf', { kind: 'unary', op: 'erf' }, [f32([2, 3], 22)], true],
  ['unary abs', { kind: 'unary', op: 'abs' }, [f32([2, 3], 23)], true],
  ['unary floor', { kind: 'unary', op: 'floor' }, [f32([2, 3], 24, -5, 5)], true],
  ['activation relu', { kind: 'activation', type: 'relu' }, [f32([2, 3], 25)], true],
  ['activation sigmoid', { kind: 'activation', type: 'sigmoid' }, [f32([2, 3], 26)], true],
  ['activation gelu_tanh', { kind: 'activation', type: 'gelu_tanh' }, [f32([2, 3], 27)], true],
  ['activation leaky_relu', { kind: 'activation', type: 'leaky_relu', alpha: 0.1 }, [f32([2, 3], 28)], true],
  ['activation clip', { kind: 'activation', type: 'clip', alpha: -0.5, beta: 0.5 }, [f32([2, 3], 29)], true],
  ['matmul', { kind: 'matmul', opA: 'none', opB: 'transpose' }, [f32([2, 3, 8], 30), { constant: f32([1, 4, 8], 31) }], true],
  ['matmul vector', { kind: 'matmul', opA: 'none', opB: 'vector' }, [f32([3, 8], 32), f32([8], 33)], true],
  ['shuffle', { kind: 'shuffle', firstTranspose: [1, 0], reshape: [6], zeroIsPlaceholder: false }, [f32([2, 3], 34)], true],
  ['slice', { kind: 'slice', start: [0, 1], size: [2, 2], stride: [1, 1], mode: 'strict_bounds' }, [f32([2, 3], 35)], true],
  ['slice fill', { kind: 'slice', start: [0, 1], size: [2, 4], stride: [1, 1], mode: 'fill' }, [f32([2, 3], 36), null, null, null, { constant: Tensor.from('float32', [], [0.75]) }], true],
  ['concat', { kind: 'concat', axis: 1 }, [f32([2, 3], 37), { constant: f32([2, 2], 38) }], true],
  ['gather', { kind: 'gather', mode: 'default', axis: 0 }, [f32([4, 3], 39), idx([2], [3, 1])], true],
  ['gather from a constant table by ids', { kind: 'gather', mode: 'default', axis: 0 }, [{ constant: f32([5, 3], 40) }, idx([3], [4, 0, 2])], true],
  ['scatter', { kind: 'scatter', mode: 'element', axis: 0 }, [f32([3, 2], 41), idx([1, 2], [2, 0]), f32([1, 2], 42)], true],
  ['reduce sum', { kind: 'reduce', op: 'sum', axes: [1], keepDims: true }, [f32([2, 5], 43)], true],
  ['reduce avg', { kind: 'reduce', op: 'avg', axes: [0, 1], keepDims: false }, [f32([2, 5], 44)], true],
  ['reduce max', { kind: 'reduce', op: 'max', axes: [1], keepDims: false }, [f32([2, 5], 45)], true],
  ['reduce prod', { kind: 'reduce', op: 'prod', axes: [1], keepDims: false }, [f32([2, 3], 46, 0.5, 1.5)], true],
  ['softmax', { kind: 'softmax', axis: 1 }, [f32([2, 6], 47, -4, 4)], true],
  ['select', { kind: 'select' }, [Tensor.from('bool', [2, 3], [1, 0, 1, 0, 0, 1]), f32([2, 3], 48), f32([2, 3], 49)], true],
  ['fill from static dims (constant subgraph)', { kind: 'fill', dims: [2, 3], alpha: 0.5, beta: [1, 0.25], dtype: 'float32' }, [], false],
  ['cast float32 → int32', { kind: 'cast', to: 'int32' }, [f32([2, 3], 50, -9, 9)], false],
  ['fill with a run-time alpha (kept fp32: made from a value, not rounded)', { kind: 'fill', dims: [2, 3], alpha: 0, beta: [1, 0.25], dtype: 'float32' }, [null, f32([], 65), { constant: Tensor.from('float32', [2], [1, 0.25]) }], false],
  ['cast int32 → float32 (kept fp32)', { kind: 'cast', to: 'float32' }, [idx([2, 2], [1, 2000, 2049, -3])], false],
  ['identity', { kind: 'identity' }, [f32([2, 3], 51)], true],
  [
    'convolution',
    { kind: 'convolution', nbOutputMaps: 4, kernelSize: [3, 3], stride: [1, 1], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1], groups: 1, kernel: f32([4, 2, 3, 3], 52, -0.5, 0.5), bias: f32([4], 53) },
    [f32([1, 2, 5, 5], 54)],
    true,
  ],
  [
    'deconvolution',
    { kind: 'deconvolution', nbOutputMaps: 3, kernelSize: [2, 2], stride: [2, 2], prePadding: [0, 0], postPadding: [0, 0], dilation: [1, 1], groups: 1, kernel: f32([2, 3, 2, 2], 55, -0.5, 0.5), bias: null },
    [f32([1, 2, 3, 3], 56)],
    true,
  ],
  [
    'pooling average',
    { kind: 'pooling', type: 'average', window: [2, 2], stride: [2, 2], prePadding: [0, 0], postPadding: [0, 0], paddingMode: 'explicit_round_down', averageCountExcludesPadding: true },
    [f32([1, 2, 4, 4], 57)],
    true,
  ],
  [
    'pooling max',
    { kind: 'pooling', type: 'max', window: [3, 3], stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], paddingMode: 'explicit_round_up', averageCountExcludesPadding: false },
    [f32([1, 2, 5, 5], 58)],
    true,
  ],
  ['normalization rms', { kind: 'normalization', axes: [2], epsilon: 1e-6, nbGroups: 1, rms: true }, [f32([2, 3, 16], 62), { constant: f32([1, 1, 16], 63) }, { constant: f32([1, 1, 16], 64) }], true],
  ['attention, grouped heads, causal', { kind: 'attention', scale: 0.25, causal: true }, [f32([1, 4, 6, 16], 65), f32([1, 2, 6, 16], 66), f32([1, 2, 6, 16], 67)], true],
  ['attention, additive mask', { kind: 'attention', scale: 0.25, causal: false }, [f32([2, 2, 5, 16], 68), f32([2, 2, 7, 16], 69), f32([2, 2, 7, 16], 70), f32([2, 1, 1, 7], 71, -2, 0)], true],
  ['normalization', { kind: 'normalization', axes: [2], epsilon: 1e-5, nbGroups: 1 }, [f32([2, 3, 8], 59), { constant: f32([1, 1, 8], 60) }, { constant: f32([1, 1, 8], 61) }], true],
  [
    'resize linear',
    { kind: 'resize', mode: 'linear', outputDims: [1, 2, 6, 6], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' },
    [f32([1, 2, 3, 3], 62)],
    true,
  ],
  ['topk', { kind: 'topk', op: 'max', k: 2, axis: 1, indicesType: 'int32' }, [f32([2, 5], 63)], true],
  ['cumulative', { kind: 'cumulative', op: 'sum', axis: 1, exclusive: false, reverse: false }, [f32([2, 6], 64)], true],
];

