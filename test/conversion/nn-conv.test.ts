/**
 * NN converters: convolution.default (1-D/2-D/3-D, groups, stride, dilation, padding,
 * transposed with output padding), trt.conv_padded / trt.conv_transpose_padded, and the
 * refusal of non-constant weights.
 */
import type { Arg, Value } from '../../lib/ir/graph';
import { check, f16, f32, layerKinds, refused, weight, type In } from './nn-helpers';

interface Conv {
  x: number[];
  w: number[];
  bias?: boolean;
  stride: number[];
  padding: number[];
  dilation: number[];
  groups: number;
  transposed?: boolean;
  outputPadding?: number[];
}

function convArgs(c: Conv) {
  return ([x, w, b]: Value[]): Record<string, Arg> => ({
    input: x!,
    weight: w!,
    bias: c.bias ? b! : null,
    stride: c.stride,
    padding: c.padding,
    dilation: c.dilation,
    transposed: c.transposed ?? false,
    output_padding: c.outputPadding ?? c.stride.map(() => 0),
    groups: c.groups,
  });
}

function convInputs(c: Conv, x: In = f32(...c.x)): In[] {
  const cout = c.transposed ? c.w[1]! * c.groups : c.w[0]!;
  return [x, { ...weight(...c.w), dtype: x.dtype }, ...(c.bias ? [{ ...weight(cout), dtype: x.dtype }] : [])];
}

describe('convolution.default', () => {
  test.each<[string, Conv]>([
    ['2-D plain with bias', { x: [2, 3, 7, 6], w: [4, 3, 3, 3], bias: true, stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 }],
    ['2-D stride 2, padding 1, no bias', { x: [1, 3, 8, 9], w: [5, 3, 3, 3], stride: [2, 2], padding: [1, 1], dilation: [1, 1], groups: 1 }],
    ['2-D groups 2, dilation 2, uneven stride', { x: [2, 4, 9, 10], w: [6, 2, 3, 2], bias: true, stride: [1, 2], padding: [2, 1], dilation: [2, 2], groups: 2 }],
    ['2-D depthwise', { x: [1, 4, 6, 6], w: [4, 1, 3, 3], bias: true, stride: [1, 1], padding: [1, 1], dilation: [1, 1], groups: 4 }],
    ['1-D', { x: [2, 3, 11], w: [4, 3, 3], bias: true, stride: [2], padding: [1], dilation: [2], groups: 1 }],
    ['1-D groups 3', { x: [1, 6, 8], w: [3, 2, 2], stride: [1], padding: [0], dilation: [1], groups: 3 }],
    ['3-D', { x: [1, 2, 5, 6, 4], w: [3, 2, 3, 2, 2], bias: true, stride: [1, 2, 1], padding: [1, 0, 1], dilation: [1, 1, 2], groups: 1 }],
  ])('%s', async (_, c) => {
    await check('aten.convolution.default', convInputs(c), convArgs(c));
  });

  test('float16', async () => {
    const c: Conv = { x: [1, 4, 6, 6], w: [2, 4, 3, 3], bias: true, stride: [1, 1], padding: [1, 1], dilation: [1, 1], groups: 1 };
    await check('aten.convolution.default', convInputs(c, f16(...c.x)), convArgs(c));
  });

  test.each<[string, Conv]>([
    ['2-D stride 2', { x: [2, 3, 4, 5], w: [3, 4, 3, 3], bias: true, stride: [2, 2], padding: [0, 0], dilation: [1, 1], groups: 1, transposed: true }],
    [
      '2-D output padding within the padding',
      { x: [1, 4, 3, 3], w: [4, 2, 3, 3], bias: true, stride: [2, 2], padding: [1, 1], dilation: [1, 1], groups: 1, transposed: true, outputPadding: [1, 1] },
    ],
    [
      '2-D output padding beyond the padding (extra bias rows)',
      { x: [1, 2, 3, 4], w: [2, 3, 2, 2], bias: true, stride: [3, 2], padding: [0, 0], dilation: [1, 1], groups: 1, transposed: true, outputPadding: [2, 1] },
    ],
    ['2-D groups 2, dilation 2', { x: [1, 4, 4, 4], w: [4, 3, 3, 3], bias: true, stride: [2, 1], padding: [1, 2], dilation: [2, 2], groups: 2, transposed: true, outputPadding: [1, 0] }],
    ['1-D', { x: [2, 3, 5], w: [3, 2, 4], bias: true, stride: [2], padding: [1], dilation: [1], groups: 1, transposed: true, outputPadding: [1] }],
    ['1-D output padding beyond the padding, no bias', { x: [1, 2, 4], w: [2, 2, 3], stride: [2], padding: [0], dilation: [1], groups: 1, transposed: true, outputPadding: [1] }],
    ['3-D', { x: [1, 2, 3, 3, 2], w: [2, 2, 2, 2, 2], bias: true, stride: [2, 1, 2], padding: [0, 1, 0], dilation: [1, 1, 1], groups: 1, transposed: true }],
  ])('transposed %s', async (_, c) => {
    await check('aten.convolution.default', convInputs(c), convArgs(c));
  });

  test('a 1-D convolution runs as a 2-D convolution layer', () => {
    const c: Conv = { x: [2, 3, 11], w: [4, 3, 3], stride: [1], padding: [0], dilation: [1], groups: 1 };
    expect(layerKinds('aten.convolution.default', convInputs(c), convArgs(c))).toEqual(['shuffle', 'convolution', 'shuffle']);
  });

  test('refused: a weight or bias computed at run time', () => {
    const c: Conv = { x: [1, 3, 5, 5], w: [2, 3, 3, 3], bias: true, stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 };
    const runtimeWeight = [f32(...c.x), f32(...c.w), weight(2)];
    expect(refused('aten.convolution.default', runtimeWeight, convArgs(c))).toMatch(/weight is not a constant/);
    const runtimeBias = [f32(...c.x), weight(...c.w), f32(2)];
    expect(refused('aten.convolution.default', runtimeBias, convArgs(c))).toMatch(/bias is not a constant/);
  });
});

describe('trt.conv_padded / trt.conv_transpose_padded', () => {
  test('asymmetric pads (2-D and 1-D)', async () => {
    await check('trt.conv_padded', [f32(1, 3, 7, 7), weight(4, 3, 3, 3), weight(4)], ([x, w, b]) => ({
      input: x!,
      weight: w!,
      bias: b!,
      stride: [2, 2],
      pads_begin: [0, 1],
      pads_end: [1, 2],
      dilation: [1, 1],
      groups: 1,
    }));
    await check('trt.conv_padded', [f32(2, 2, 9), weight(4, 1, 3)], ([x, w]) => ({
      input: x!,
      weight: w!,
      bias: null,
      stride: [1],
      pads_begin: [2],
      pads_end: [0],
      dilation: [1],
      groups: 2,
    }));
  });

  test('transposed with asymmetric pads and output padding beyond the stride', async () => {
    await check('trt.conv_transpose_padded', [f32(1, 2, 3, 3), weight(2, 3, 3, 3), weight(3)], ([x, w, b]) => ({
      input: x!,
      weight: w!,
      bias: b!,
      stride: [2, 2],
      pads_begin: [1, 0],
      pads_end: [0, 1],
      output_padding: [1, 3],
      dilation: [1, 1],
      groups: 1,
    }));
  });

  test('refused: run-time weights', () => {
    expect(
      refused('trt.conv_padded', [f32(1, 3, 5, 5), f32(2, 3, 3, 3)], ([x, w]) => ({
        input: x!,
        weight: w!,
        bias: null,
        stride: [1, 1],
        pads_begin: [0, 0],
        pads_end: [0, 0],
        dilation: [1, 1],
        groups: 1,
      })),
    ).toMatch(/weight is not a constant/);
  });
});
