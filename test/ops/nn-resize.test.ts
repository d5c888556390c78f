/**
 * NN family, resizing: ONNX Resize (nearest/linear, every supported coordinate transform and
 * nearest mode, scales or sizes, opset 13 and 18+ forms) against onnxruntime; ATen upsample
 * ops against hand-derived values; symbolic output sizes.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { formatShape, sym } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, floatAttr, type OrtAttributes, type OrtInput } from '../helpers/ort-single-op';
import { expectValues, f32, i64, run } from '../helpers/ops-setup';
import { Random } from '../helpers/random';

const withScales = (x: Tensor, scales: number[]): OrtInput[] => [x, null, { constant: f32([scales.length], scales) }];
const withSizes = (x: Tensor, sizes: number[]): OrtInput[] => [x, null, null, { constant: i64(sizes) }];

describe('ONNX Resize against onnxruntime', () => {
  const rng = new Random(501);
  const x = rng.tensor([2, 3, 4, 5]);

  const coordinateModes = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric'];
  const nearestModes = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'];

  // [label, inputs]
  const geometries: Array<[string, OrtInput[]]> = [
    ['scales 2x', withScales(x, [1, 1, 2, 2])],
    ['scales 1.5 x 0.6', withScales(x, [1, 1, 1.5, 0.6])],
    ['sizes 7 x 3', withSizes(x, [2, 3, 7, 3])],
    ['sizes 1 x 9', withSizes(x, [2, 3, 1, 9])],
  ];

  describe.each(geometries)('%s', (_label, inputs) => {
    it.each(coordinateModes)('linear, %s', async (coordinate_transformation_mode) => {
      for (const opset of [13, 19]) {
        await expectOnnxMatchesOrt({ opType: 'Resize', inputs, attributes: { mode: 'linear', coordinate_transformation_mode }, opset });
      }
    });
    it.each(coordinateModes.flatMap((c) => nearestModes.map((n) => [c, n])))('nearest, %s, %s', async (coordinate_transformation_mode, nearest_mode) => {
      await expectOnnxMatchesOrt({ opType: 'Resize', inputs, attributes: { mode: 'nearest', coordinate_transformation_mode, nearest_mode }, opset: 13 });
    });
  });

  it('defaults (nearest, half_pixel, round_prefer_floor) and an int8 input', async () => {
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [1, 1, 3, 2]), opset: 13 });
    const xi = rng.intTensor([1, 2, 3, 3], -100, 100, 'int8');
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(xi, [1, 2, 5, 2]), attributes: { nearest_mode: 'floor' }, opset: 13 });
  });

  it('cubic_coeff_a and extrapolation_value on a bilinear and a nearest resize (exporters write them on every Resize) change nothing', async () => {
    const extra = { cubic_coeff_a: floatAttr(-0.5), extrapolation_value: floatAttr(0) };
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(x, [2, 3, 8, 10]), attributes: { mode: 'linear', coordinate_transformation_mode: 'pytorch_half_pixel', ...extra }, opset: 20 });
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [1, 1, 2, 2]), attributes: { mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor', ...extra }, opset: 17 });
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(x, [2, 3, 7, 3]), attributes: { mode: 'cubic', ...extra }, opset: 17 });
  });

  it('the opset-13 form with empty roi and scales initializers', async () => {
    const empty = { constant: new Tensor('float32', [0]) };
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: [x, empty, empty, { constant: i64([2, 3, 8, 10]) }], attributes: { mode: 'linear' }, opset: 13 });
  });

  it('the opset-18 axes attribute', async () => {
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [2, 0.5]), attributes: { axes: [2, 3], mode: 'linear' }, opset: 18 });
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(x, [6, 6]), attributes: { axes: [-2, -1] }, opset: 19 });
  });

  it('maps PyTorch-compatible forms onto aten.upsample_*', () => {
    const targetOf = (inputs: OrtInput[], attributes: OrtAttributes): string => loadOnnx(buildSingleOpModel({ opType: 'Resize', inputs, attributes, opset: 13 })).calls()[0]!.target;
    expect(targetOf(withScales(x, [1, 1, 2, 2]), { coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' })).toBe('aten.upsample_nearest2d.vec');
    expect(targetOf(withSizes(x, [2, 3, 8, 9]), { mode: 'linear', coordinate_transformation_mode: 'align_corners' })).toBe('aten.upsample_bilinear2d.vec');
    expect(targetOf(withScales(x, [1, 1, 2, 2]), { mode: 'linear' })).toBe('aten.upsample_bilinear2d.vec');
    expect(targetOf(withScales(x, [1, 1, 2, 2]), {})).toBe('trt.resize');
  });

  it('rejects a 3-D input and scaling the channels as E_UNSUPPORTED_OP', () => {
    const threeD = buildSingleOpModel({ opType: 'Resize', inputs: withScales(rng.tensor([1, 2, 4]), [1, 1, 2]), opset: 13 });
    expect(() => loadOnnx(threeD)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('ONNX node "Resize_0"') }));
    const channels = buildSingleOpModel({ opType: 'Resize', inputs: withScales(x, [1, 2, 2, 2]), opset: 13 });
    expect(() => loadOnnx(channels)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });

  describe.each(geometries)('cubic, %s', (_label, inputs) => {
    it.each(coordinateModes)('%s', async (coordinate_transformation_mode) => {
      await expectOnnxMatchesOrt({ opType: 'Resize', inputs, attributes: { mode: 'cubic', coordinate_transformation_mode }, opset: 13 });
    });
  });

  it('cubic with cubic_coeff_a -0.5 and exclude_outside', async () => {
    const attributes = { mode: 'cubic', cubic_coeff_a: -0.5, exclude_outside: 1 };
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [1, 1, 0.6, 1.7]), attributes, opset: 13 });
  });

  it.each(['linear', 'cubic'])('%s with antialias (down and up)', async (mode) => {
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [1, 1, 0.6, 0.4]), attributes: { mode, antialias: 1 }, opset: 18 });
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(x, [2, 3, 3, 8]), attributes: { mode, antialias: 1 }, opset: 18 });
  });

  it('half_pixel_symmetric', async () => {
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withScales(x, [1, 1, 1.7, 0.7]), attributes: { mode: 'linear', coordinate_transformation_mode: 'half_pixel_symmetric' }, opset: 19 });
  });

  it('tf_crop_and_resize with an extrapolation value', async () => {
    const roi = { constant: f32([8], [0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4]) };
    const attributes = { mode: 'linear', coordinate_transformation_mode: 'tf_crop_and_resize', extrapolation_value: 7.5 };
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: [x, roi, null, { constant: i64([2, 3, 5, 4]) }], attributes, opset: 13 });
  });

  it.each(['not_larger', 'not_smaller'])('keep_aspect_ratio_policy %s', async (keep_aspect_ratio_policy) => {
    const attributes = { mode: 'linear', keep_aspect_ratio_policy, axes: [2, 3] };
    await expectOnnxMatchesOrt({ opType: 'Resize', inputs: withSizes(x, [7, 7]), attributes, opset: 18 });
  });

  it('rejects both scales and sizes as E_BAD_MODEL', () => {
    const model = buildSingleOpModel({ opType: 'Resize', inputs: [x, null, { constant: f32([4], [1, 1, 2, 2]) }, { constant: i64([2, 3, 8, 10]) }], opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});

describe('ATen upsample ops on hand-derived values', () => {
  const x = f32([1, 1, 2, 2], [1, 2, 3, 4]);

  it('upsample_nearest2d.vec copies floor(dst / scale)', () => {
    const [y] = run('aten.upsample_nearest2d.vec', [x], ([input]) => ({ input, output_size: null, scale_factors: [2, 1.5] }));
    expect(y!.shape).toEqual([1, 1, 4, 3]);
    // columns: floor(j / 1.5) = 0, 0, 1
    expectValues(y!, [1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4]);
  });

  it('upsample_bilinear2d.vec with align_corners true and false', () => {
    const [a] = run('aten.upsample_bilinear2d.vec', [x], ([input]) => ({ input, output_size: [3, 3], align_corners: true, scale_factors: null }));
    expectValues(a!, [1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4]);
    const [h] = run('aten.upsample_bilinear2d.vec', [x], ([input]) => ({ input, output_size: [1, 4], align_corners: false, scale_factors: null }));
    // row: src = (0 + 0.5) * 2 - 0.5 = 0.5 -> halfway between rows; cols: src = (j + 0.5) / 2 - 0.5 clamped at 0
    // = 0 (clamped), 0.25, 0.75, 1 (clamped)
    expectValues(h!, [2, 2.25, 2.75, 3]);
  });

  it('infers exact symbolic sizes from scale factors and rejects giving neither', () => {
    const g = new Graph();
    g.symbols.set('s1', { min: 1, max: 512 });
    const input = g.addInput('x', tensorType('float32', [1, 3, sym('s1'), 8]));
    const a = call(g, 'aten.upsample_nearest2d.vec', { input, output_size: null, scale_factors: [2, 2] }).output;
    expect(formatShape(a.tensorType.shape)).toBe('[1, 3, s1*2, 16]');
    const b = call(g, 'aten.upsample_bilinear2d.vec', { input, output_size: null, align_corners: false, scale_factors: [1.5, 0.5] }).output;
    expect(formatShape(b.tensorType.shape)).toBe('[1, 3, s1*3//2, 4]');
    g.setOutputs([a, b]);
    const outs = interpret(g, [new Random(502).tensor([1, 3, 5, 8])]);
    expect(outs.map((t) => t.shape)).toEqual([
      [1, 3, 10, 16],
      [1, 3, 7, 4],
    ]);
    expect(() => call(g, 'aten.upsample_nearest2d.vec', { input, output_size: null, scale_factors: null }, { name: 'up' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('up') }),
    );
  });
});
