/**
 * NN converters: max/avg pooling (1-D/2-D/3-D, padding, stride, dilation, ceil_mode with and
 * without PyTorch's dropped last window, count_include_pad, divisor_override, unbatched,
 * integer and float16 inputs), max pooling indices, the ONNX-form trt pools, adaptive
 * pooling (global, divisible, uneven windows) and the refusals of huge composed windows.
 */
import type { Arg, Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { check, f16, f32, layerKinds, refused, typed, type In } from './nn-helpers';

interface Pool {
  kernel: number[];
  stride?: number[];
  padding?: number[];
  dilation?: number[];
  ceil?: boolean;
}

const maxArgs =
  (p: Pool) =>
  ([x]: Value[]): Record<string, Arg> => ({
    self: x!,
    kernel_size: p.kernel,
    stride: p.stride ?? [],
    padding: p.padding ?? p.kernel.map(() => 0),
    dilation: p.dilation ?? p.kernel.map(() => 1),
    ceil_mode: p.ceil ?? false,
  });

const avgArgs =
  (p: Pool, countIncludePad: boolean, divisor: number | null = null) =>
  ([x]: Value[]): Record<string, Arg> => ({
    self: x!,
    kernel_size: p.kernel,
    stride: p.stride ?? [],
    padding: p.padding ?? p.kernel.map(() => 0),
    ceil_mode: p.ceil ?? false,
    count_include_pad: countIncludePad,
    ...(p.kernel.length > 1 ? { divisor_override: divisor } : {}),
  });

const MAX_CASES: Array<[string, number[], Pool]> = [
  ['2-D kernel 2 (stride = kernel)', [2, 3, 8, 8], { kernel: [2, 2] }],
  ['2-D kernel 3 stride 2 padding 1', [1, 2, 9, 7], { kernel: [3, 3], stride: [2, 2], padding: [1, 1] }],
  ['2-D ceil_mode', [1, 2, 8, 7], { kernel: [3, 2], stride: [2, 2], ceil: true }],
  ['2-D ceil_mode where PyTorch drops the last window', [1, 2, 5, 6], { kernel: [2, 2], stride: [2, 2], padding: [1, 1], ceil: true }],
  ['2-D dilation 2', [1, 2, 9, 9], { kernel: [3, 3], stride: [1, 2], padding: [1, 0], dilation: [2, 2] }],
  ['1-D', [2, 3, 11], { kernel: [3], stride: [2], padding: [1] }],
  ['1-D ceil_mode', [2, 3, 10], { kernel: [3], stride: [3], ceil: true }],
  ['3-D', [1, 2, 5, 6, 4], { kernel: [2, 3, 2], stride: [2, 2, 1], padding: [1, 1, 0] }],
  ['unbatched 2-D', [3, 6, 6], { kernel: [2, 2] }],
];

describe('max_pool', () => {
  test.each(MAX_CASES)('max_pool %s', async (_, shape, p) => {
    await check(`aten.max_pool${p.kernel.length}d.default`, [f32(...shape)], maxArgs(p));
  });

  test.each(MAX_CASES)('max_pool_with_indices %s (values and indices)', async (_, shape, p) => {
    await check(`aten.max_pool${p.kernel.length}d_with_indices.default`, [f32(...shape)], maxArgs(p));
  });

  test('float16, and integer inputs (composed from taps)', async () => {
    await check('aten.max_pool2d.default', [f16(1, 2, 6, 6)], maxArgs({ kernel: [3, 3], stride: [2, 2], padding: [1, 1] }));
    await check('aten.max_pool2d_with_indices.default', [typed('int32', 1, 2, 6, 6)], maxArgs({ kernel: [2, 2], padding: [1, 1] }));
    await check('aten.max_pool1d.default', [typed('int64', 2, 7)], maxArgs({ kernel: [3], stride: [2], ceil: true }));
    await check('aten.max_pool2d.default', [typed('uint8', 1, 1, 4, 4)], maxArgs({ kernel: [2, 2] }));
  });

  test('indices with ties pick the first maximum in the window', async () => {
    const data = Tensor.from('float32', [1, 1, 4, 4], [1, 1, 0, 2, 1, 0, 2, 2, 3, 3, 3, 3, 0, 3, 3, 1]);
    await check('aten.max_pool2d_with_indices.default', [{ dtype: 'float32', shape: [1, 1, 4, 4], data }], maxArgs({ kernel: [2, 2], stride: [1, 1] }));
  });

  test('a float max pool is one pooling layer (1-D through a 2-D layout)', () => {
    expect(layerKinds('aten.max_pool2d.default', [f32(1, 2, 8, 8)], maxArgs({ kernel: [2, 2] }))).toEqual(['pooling']);
    expect(layerKinds('aten.max_pool1d.default', [f32(1, 2, 8)], maxArgs({ kernel: [2] }))).toEqual(['shuffle', 'pooling', 'shuffle']);
  });

  test('refused: indices of a window with more positions than are composed', () => {
    expect(refused('aten.max_pool2d_with_indices.default', [f32(1, 1, 40, 40)], maxArgs({ kernel: [17, 17] }))).toMatch(/289 positions/);
  });
});

describe('avg_pool', () => {
  test.each<[string, number[], Pool]>([
    ['2-D kernel 2', [2, 3, 8, 8], { kernel: [2, 2] }],
    ['2-D kernel 3 stride 2 padding 1', [1, 2, 9, 7], { kernel: [3, 3], stride: [2, 2], padding: [1, 1] }],
    ['2-D ceil_mode, padding (last window past the padding)', [1, 2, 6, 7], { kernel: [3, 3], stride: [2, 2], padding: [1, 1], ceil: true }],
    ['2-D ceil_mode, no padding', [1, 2, 8, 7], { kernel: [3, 2], stride: [2, 2], ceil: true }],
    ['2-D ceil_mode where PyTorch drops the last window', [1, 2, 5, 6], { kernel: [2, 2], stride: [2, 2], padding: [1, 1], ceil: true }],
    ['2-D ceil_mode mixed (one dim dropped, one rounded up)', [1, 1, 5, 8], { kernel: [2, 3], stride: [2, 2], padding: [1, 1], ceil: true }],
    ['1-D', [2, 3, 11], { kernel: [3], stride: [2], padding: [1] }],
    ['3-D ceil_mode', [1, 2, 5, 6, 5], { kernel: [2, 3, 2], stride: [2, 2, 2], padding: [1, 1, 0], ceil: true }],
    ['unbatched', [3, 7, 7], { kernel: [3, 3], stride: [2, 2], padding: [1, 1] }],
  ])('%s', async (_, shape, p) => {
    const target = `aten.avg_pool${p.kernel.length}d.default`;
    await check(target, [f32(...shape)], avgArgs(p, true));
    await check(target, [f32(...shape)], avgArgs(p, false));
  });

  test('divisor_override (with padding and ceil_mode)', async () => {
    await check('aten.avg_pool2d.default', [f32(1, 2, 6, 6)], avgArgs({ kernel: [2, 2] }, true, 3));
    await check('aten.avg_pool2d.default', [f32(1, 2, 7, 6)], avgArgs({ kernel: [3, 3], stride: [2, 2], padding: [1, 1], ceil: true }, false, 5));
    await check('aten.avg_pool3d.default', [f32(1, 1, 4, 4, 4)], avgArgs({ kernel: [2, 2, 2] }, true, 2));
  });

  test('float16', async () => {
    await check('aten.avg_pool2d.default', [f16(1, 2, 8, 8)], avgArgs({ kernel: [3, 3], stride: [2, 2], padding: [1, 1], ceil: true }, true));
  });

  test('maps ceil_mode to explicit_round_up and count_include_pad to the padding count', () => {
    const kinds = layerKinds('aten.avg_pool2d.default', [f32(1, 2, 8, 7)], avgArgs({ kernel: [3, 2], stride: [2, 2], ceil: true }, false));
    expect(kinds).toEqual(['pooling']);
  });
});

describe('trt pools with begin/end pads', () => {
  const padded = (kernel: number[], stride: number[], begin: number[], end: number[], ceil: boolean) => ({
    kernel_size: kernel,
    stride,
    pads_begin: begin,
    pads_end: end,
    ceil_mode: ceil,
  });

  test('trt.max_pool_padded', async () => {
    await check('trt.max_pool_padded', [f32(1, 2, 7, 8)], ([x]) => ({ self: x!, ...padded([3, 3], [2, 2], [0, 1], [1, 0], false), dilation: [1, 1] }));
    await check('trt.max_pool_padded', [f32(1, 2, 7, 8)], ([x]) => ({ self: x!, ...padded([2, 3], [2, 2], [1, 0], [0, 2], true), dilation: [1, 2] }));
  });

  test('trt.max_pool_onnx_indices: indices over the whole tensor', async () => {
    await check('trt.max_pool_onnx_indices', [f32(2, 3, 6, 5)], ([x]) => ({ self: x!, ...padded([2, 2], [2, 2], [0, 0], [1, 1], false), dilation: [1, 1] }));
    await check('trt.max_pool_onnx_indices', [f32(2, 2, 9)], ([x]) => ({ self: x!, ...padded([3], [2], [1], [1], true), dilation: [1] }));
  });

  test.each([true, false])('trt.avg_pool_padded count_include_pad %s', async (include) => {
    await check('trt.avg_pool_padded', [f32(1, 2, 7, 8)], ([x]) => ({ self: x!, ...padded([3, 3], [2, 2], [0, 1], [2, 1], true), count_include_pad: include }));
    await check('trt.avg_pool_padded', [f32(1, 2, 9)], ([x]) => ({ self: x!, ...padded([4], [3], [2], [1], false), count_include_pad: include }));
  });
});

describe('adaptive pooling', () => {
  test.each<[string, number[], number[]]>([
    ['global (output 1)', [2, 3, 7, 6], [1, 1]],
    ['divisible', [2, 3, 8, 6], [4, 3]],
    ['uneven windows', [1, 2, 7, 10], [3, 4]],
    ['mixed (one dim divisible, one uneven, one kept)', [1, 2, 6, 5], [3, 5]],
    ['unbatched', [3, 9, 9], [2, 3]],
  ])('adaptive_avg_pool2d and _adaptive_avg_pool2d %s', async (_, shape, out) => {
    await check('aten.adaptive_avg_pool2d.default', [f32(...shape)], ([x]) => ({ self: x!, output_size: out }));
    await check('aten._adaptive_avg_pool2d.default', [f32(...shape)], ([x]) => ({ self: x!, output_size: out }));
  });

  test('adaptive_avg_pool 1-D and 3-D, float16', async () => {
    await check('aten.adaptive_avg_pool1d.default', [f32(2, 3, 10)], ([x]) => ({ self: x!, output_size: [4] }));
    await check('aten.adaptive_avg_pool1d.default', [f32(2, 3, 10)], ([x]) => ({ self: x!, output_size: [5] }));
    await check('aten.adaptive_avg_pool3d.default', [f32(1, 2, 4, 6, 5)], ([x]) => ({ self: x!, output_size: [2, 3, 2] }));
    await check('aten._adaptive_avg_pool3d.default', [f32(1, 2, 4, 6, 5)], ([x]) => ({ self: x!, output_size: [1, 1, 1] }));
    await check('aten.adaptive_avg_pool2d.default', [f16(1, 4, 8, 8)], ([x]) => ({ self: x!, output_size: [2, 2] }));
  });

  test('global average is one reduce; divisible is one pooling layer', () => {
    expect(layerKinds('aten._adaptive_avg_pool2d.default', [f32(1, 2, 7, 7)], ([x]) => ({ self: x!, output_size: [1, 1] }))).toEqual(['reduce']);
    expect(layerKinds('aten._adaptive_avg_pool2d.default', [f32(1, 2, 8, 8)], ([x]) => ({ self: x!, output_size: [2, 4] }))).toEqual(['pooling']);
  });

  test.each<[string, number[], number[]]>([
    ['global', [2, 3, 7, 6], [1, 1]],
    ['divisible', [1, 2, 8, 6], [4, 3]],
    ['uneven windows', [1, 2, 7, 10], [3, 4]],
    ['unbatched', [3, 9, 9], [2, 3]],
  ])('adaptive_max_pool2d %s (values and indices)', async (_, shape, out) => {
    await check('aten.adaptive_max_pool2d.default', [f32(...shape)], ([x]) => ({ self: x!, output_size: out }));
  });

  test('adaptive_max_pool 1-D and 3-D, int32', async () => {
    await check('aten.adaptive_max_pool1d.default', [f32(2, 3, 11)], ([x]) => ({ self: x!, output_size: [4] }));
    await check('aten.adaptive_max_pool3d.default', [f32(1, 2, 4, 5, 6)], ([x]) => ({ self: x!, output_size: [2, 2, 3] }));
    await check('aten.adaptive_max_pool2d.default', [typed('int32', 1, 2, 6, 5)], ([x]) => ({ self: x!, output_size: [3, 2] }));
  });

  test('refused: too many uneven windows, or too many window positions for the indices', () => {
    expect(refused('aten._adaptive_avg_pool2d.default', [f32(1, 1, 200, 4)], ([x]) => ({ self: x!, output_size: [67, 2] }))).toMatch(/uneven windows/);
    expect(refused('aten.adaptive_max_pool2d.default', [f32(1, 1, 60, 60)], ([x]) => ({ self: x!, output_size: [2, 3] }))).toMatch(/indices of adaptive windows/);
  });

  test('refused: an empty output size', () => {
    const input: In = f32(1, 2, 4, 4);
    expect(refused('aten._adaptive_avg_pool2d.default', [input], ([x]) => ({ self: x!, output_size: [0, 2] }))).toMatch(/empty/);
  });
});
