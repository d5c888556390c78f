/**
 * NN converters: scaled_dot_product_attention (plain, scale, causal, bool and float masks,
 * GQA, broadcast batch dims, float16) and resizing (upsample_nearest2d, upsample_bilinear2d
 * with sizes or scale factors, trt.resize's modes), against the interpreter.
 */
import type { Arg, Value } from '../../lib/ir/graph';
import { check, f16, f32, layerKinds, randomFor, refused, typed, type In } from './nn-helpers';

const sdpa =
  (opts: { mask?: boolean; causal?: boolean; scale?: number; gqa?: boolean; dropout?: number } = {}) =>
  ([q, k, v, m]: Value[]): Record<string, Arg> => ({
    query: q!,
    key: k!,
    value: v!,
    attn_mask: opts.mask ? m! : null,
    dropout_p: opts.dropout ?? 0,
    is_causal: opts.causal ?? false,
    scale: opts.scale ?? null,
    enable_gqa: opts.gqa ?? false,
  });

describe('scaled_dot_product_attention', () => {
  test('plain, [B, H, L, E] with a different value width', async () => {
    await check('aten.scaled_dot_product_attention.default', [f32(2, 3, 5, 8), f32(2, 3, 6, 8), f32(2, 3, 6, 4)], sdpa());
  });

  test('explicit scale, rank 3 inputs', async () => {
    await check('aten.scaled_dot_product_attention.default', [f32(2, 4, 8), f32(2, 5, 8), f32(2, 5, 8)], sdpa({ scale: 0.3 }));
  });

  test('causal (square and L < S)', async () => {
    await check('aten.scaled_dot_product_attention.default', [f32(1, 2, 6, 8), f32(1, 2, 6, 8), f32(1, 2, 6, 8)], sdpa({ causal: true }));
    await check('aten.scaled_dot_product_attention.default', [f32(1, 2, 3, 8), f32(1, 2, 7, 8), f32(1, 2, 7, 8)], sdpa({ causal: true }));
  });

  test('bool mask (broadcast over batch and heads) and float mask', async () => {
    const bool: In = { dtype: 'bool', shape: [5, 6] };
    // At least one True per row keeps the softmax finite: make the first column True.
    const b = randomFor(bool);
    for (let i = 0; i < 5; i++) (b.data as Uint8Array)[i * 6] = 1;
    await check('aten.scaled_dot_product_attention.default', [f32(2, 3, 5, 8), f32(2, 3, 6, 8), f32(2, 3, 6, 8), { ...bool, data: b }], sdpa({ mask: true }));
    await check('aten.scaled_dot_product_attention.default', [f32(2, 3, 5, 8), f32(2, 3, 6, 8), f32(2, 3, 6, 8), f32(2, 1, 5, 6)], sdpa({ mask: true }));
  });

  test('grouped-query attention (key/value heads repeated)', async () => {
    await check('aten.scaled_dot_product_attention.default', [f32(2, 6, 4, 8), f32(2, 2, 5, 8), f32(2, 2, 5, 8)], sdpa({ gqa: true }));
    await check('aten.scaled_dot_product_attention.default', [f32(1, 4, 4, 8), f32(1, 1, 4, 8), f32(1, 1, 4, 8)], sdpa({ gqa: true, causal: true }));
  });

  test('batch dims broadcast between query and key/value', async () => {
    await check('aten.scaled_dot_product_attention.default', [f32(2, 3, 4, 8), f32(1, 3, 5, 8), f32(1, 3, 5, 8)], sdpa());
  });

  test('float16', async () => {
    await check('aten.scaled_dot_product_attention.default', [f16(1, 2, 4, 8), f16(1, 2, 4, 8), f16(1, 2, 4, 8)], sdpa({ causal: true }));
  });

  test('one attention layer, whole; operands it does not take (batch dims that broadcast) spelled out as matmul, softmax, matmul', () => {
    expect(layerKinds('aten.scaled_dot_product_attention.default', [f32(1, 2, 4, 8), f32(1, 2, 4, 8), f32(1, 2, 4, 8)], sdpa())).toEqual(['attention']);
    expect(layerKinds('aten.scaled_dot_product_attention.default', [f32(1, 4, 4, 8), f32(1, 1, 4, 8), f32(1, 1, 4, 8)], sdpa({ gqa: true, causal: true }))).toEqual(['attention']);
    const broadcast = layerKinds('aten.scaled_dot_product_attention.default', [f32(2, 3, 4, 8), f32(1, 3, 5, 8), f32(1, 3, 5, 8)], sdpa());
    expect(broadcast.filter((k) => k === 'matmul' || k === 'softmax' || k === 'attention')).toEqual(['matmul', 'softmax', 'matmul']);
  });

  test('refused by the IR: dropout', () => {
    expect(() => refused('aten.scaled_dot_product_attention.default', [f32(1, 4, 8), f32(1, 4, 8), f32(1, 4, 8)], sdpa({ dropout: 0.1 }))).toThrow(/dropout_p must be 0/);
  });
});

describe('upsample', () => {
  test.each([
    ['output_size, integral scale', [8, 10], null],
    ['output_size, downscale', [3, 4], null],
    ['output_size, non-integral ratio', [7, 9], null],
    ['scale_factors 2', null, [2, 2]],
    ['scale_factors 1.5 (in*scale not integral: composed from gathers)', null, [1.5, 1.7]],
  ] as const)('upsample_nearest2d %s', async (_, size, scales) => {
    await check('aten.upsample_nearest2d.vec', [f32(2, 3, 4, 5)], ([x]) => ({ input: x!, output_size: size ? [...size] : null, scale_factors: scales ? [...scales] : null }));
  });

  test('upsample_nearest2d of int64 and bool (gathers)', async () => {
    await check('aten.upsample_nearest2d.vec', [typed('int64', 1, 2, 3, 3)], ([x]) => ({ input: x!, output_size: [6, 5], scale_factors: null }));
    await check('aten.upsample_nearest2d.vec', [typed('bool', 1, 2, 3, 3)], ([x]) => ({ input: x!, output_size: null, scale_factors: [2, 3] }));
  });

  test.each([
    ['output_size', [8, 9], null, false],
    ['output_size, align_corners', [8, 9], null, true],
    ['downscale', [2, 3], null, false],
    ['to one pixel, align_corners', [1, 1], null, true],
    ['scale_factors 2', null, [2, 2], false],
    ['scale_factors 1.5 (composed)', null, [1.5, 2.5], false],
    ['scale_factors 1.5, align_corners (the scale does not matter)', null, [1.5, 2.5], true],
  ] as const)('upsample_bilinear2d %s', async (_, size, scales, alignCorners) => {
    await check('aten.upsample_bilinear2d.vec', [f32(1, 2, 4, 5)], ([x]) => ({
      input: x!,
      output_size: size ? [...size] : null,
      align_corners: alignCorners,
      scale_factors: scales ? [...scales] : null,
    }));
  });

  test('float16 bilinear', async () => {
    await check('aten.upsample_bilinear2d.vec', [f16(1, 2, 4, 4)], ([x]) => ({ input: x!, output_size: [8, 8], align_corners: false, scale_factors: null }));
  });

  test('sizes give one resize layer; inexact scale factors give gathers', () => {
    expect(layerKinds('aten.upsample_nearest2d.vec', [f32(1, 2, 4, 5)], ([x]) => ({ input: x!, output_size: [8, 10], scale_factors: null }))).toEqual(['resize']);
    const kinds = layerKinds('aten.upsample_nearest2d.vec', [f32(1, 2, 4, 5)], ([x]) => ({ input: x!, output_size: null, scale_factors: [1.5, 1.5] }));
    expect(kinds).not.toContain('resize');
    expect(kinds).toContain('gather');
  });
});

describe('trt.resize', () => {
  const COORDS = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric'] as const;
  const NEAREST = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'] as const;

  test.each(COORDS.flatMap((c) => NEAREST.map((n) => [c, n] as const)))('nearest %s %s', async (coordinate, nearest) => {
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => ({ self: x!, size: [7, 3], mode: 'nearest', coordinate_transformation_mode: coordinate, nearest_mode: nearest }));
  });

  test.each(COORDS)('linear %s (up, down and to one pixel)', async (coordinate) => {
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => ({ self: x!, size: [7, 3], mode: 'linear', coordinate_transformation_mode: coordinate, nearest_mode: 'floor' }));
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => ({ self: x!, size: [1, 8], mode: 'linear', coordinate_transformation_mode: coordinate, nearest_mode: 'floor' }));
  });

  test('scales that differ from out/in, 1-D and 3-D spatial', async () => {
    await check('trt.resize', [f32(1, 2, 5)], ([x]) => ({ self: x!, size: [7], scales: [1.5], mode: 'linear', coordinate_transformation_mode: 'half_pixel', nearest_mode: 'floor' }));
    await check('trt.resize', [f32(1, 2, 5)], ([x]) => ({ self: x!, size: [12], scales: [2.5], mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'round_prefer_ceil' }));
    await check('trt.resize', [f32(1, 1, 3, 4, 2)], ([x]) => ({ self: x!, size: [6, 4, 5], mode: 'linear', coordinate_transformation_mode: 'align_corners', nearest_mode: 'floor' }));
  });

  test('ONNX filters composed from gathers: cubic, antialias, half_pixel_symmetric, a tf_crop_and_resize crop', async () => {
    const args = (x: Value, extra: Record<string, Arg>): Record<string, Arg> => ({ self: x, mode: 'cubic', coordinate_transformation_mode: 'half_pixel', nearest_mode: 'floor', ...extra });
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => args(x!, { size: [7, 3] }));
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => args(x!, { size: [2, 9], scales: [0.6, 1.9], cubic_coeff_a: -0.5, exclude_outside: true }));
    await check('trt.resize', [f32(1, 2, 9, 8)], ([x]) => args(x!, { size: [4, 3], mode: 'linear', antialias: true }));
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) => args(x!, { size: [6, 3], scales: [1.7, 0.7], mode: 'linear', coordinate_transformation_mode: 'half_pixel_symmetric' }));
    await check('trt.resize', [f32(1, 2, 4, 5)], ([x]) =>
      args(x!, { size: [5, 4], mode: 'linear', coordinate_transformation_mode: 'tf_crop_and_resize', roi: [-0.2, 0.3, 0.9, 1.4], extrapolation_value: 7.5 }),
    );
    expect(layerKinds('trt.resize', [f32(1, 2, 4, 5)], ([x]) => args(x!, { size: [7, 3] }))).not.toContain('resize');
  });

  test('int32 nearest through the layer', async () => {
    await check('trt.resize', [typed('int32', 1, 2, 3, 3)], ([x]) => ({ self: x!, size: [6, 6], mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' }));
  });
});
