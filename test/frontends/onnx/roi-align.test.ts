/**
 * ONNX RoiAlign (opsets 10, 16, 22) as trt.roi_align: the kernel against values computed by
 * hand (bilinear sampling of a linear ramp is exact, so each bin's value is the ramp at its
 * samples' mean), including ONNX's 'max' rule (the largest weighted corner term) and its
 * out-of-map samples counting as 0; the importer + interpreter against onnxruntime on
 * one-node models; malformed attributes and inputs as typed errors naming the node. The op
 * has no converter: compiled, it runs in a fallback segment.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { roiAlign, type RoiAlignArgs } from '../../../lib/kernels/roi-align';
import { selectConverter } from '../../../lib/conversion/registry';
import '../../../lib/conversion/converters';
import { expectClose } from '../../helpers/compare';
import { buildSingleOpModel, closeOrt, floatAttr, runOrtOp, type OrtOpSpec } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

const rng = new Random(20260807);
const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

afterAll(() => closeOrt());

/** A 4x4 map whose value at (y, x) is 4y + x. */
const ramp = f32([1, 1, 4, 4], Array.from({ length: 16 }, (_, i) => i));

function run(args: Partial<RoiAlignArgs> & Pick<RoiAlignArgs, 'input' | 'rois'>): Tensor {
  return roiAlign({ batchIndices: i64([0]), mode: 'avg', outputHeight: 1, outputWidth: 1, samplingRatio: 1, spatialScale: 1, halfPixel: false, ...args });
}

describe('RoiAlign kernel, by hand', () => {
  test('half_pixel, 2x2 bins of one sample each: the ramp at (0.5 + 2i, 0.5 + 2j)', () => {
    // Region [0, 0, 4, 4] shifted by -0.5: bins of 2, each sampled at its center.
    const out = run({ input: ramp, rois: f32([1, 4], [0, 0, 4, 4]), outputHeight: 2, outputWidth: 2, halfPixel: true });
    expectClose(out, f32([1, 1, 2, 2], [2.5, 4.5, 10.5, 12.5]));
  });

  test('output_half_pixel with spatial_scale 0.5: region [0, 0, 6, 6] is [0, 3] of the map', () => {
    // Two samples per axis in the one bin: at 0.75 and 2.25, mean 1.5; 4·1.5 + 1.5 = 7.5.
    const out = run({ input: ramp, rois: f32([1, 4], [0, 0, 6, 6]), samplingRatio: 2, spatialScale: 0.5 });
    expectClose(out, f32([1, 1, 1, 1], [7.5]));
  });

  test('adaptive sampling (ratio 0): ceil(3 / 1) = 3 samples per axis at 0.5, 1.5, 2.5', () => {
    const out = run({ input: ramp, rois: f32([1, 4], [0, 0, 3, 3]), samplingRatio: 0 });
    expectClose(out, f32([1, 1, 1, 1], [7.5]));
    // A region 1 high and 2 wide: 1 x 2 samples at y 0.5, x 0.5 and 1.5; 4·0.5 + 1 = 3.
    expectClose(run({ input: ramp, rois: f32([1, 4], [0, 0, 2, 1]), samplingRatio: 0 }), f32([1, 1, 1, 1], [3]));
  });

  test("'max' takes the largest weighted corner term, not the largest interpolated value", () => {
    const x = f32([1, 1, 2, 2], [1, 2, 3, 4]);
    // One sample at (0.5, 0.5): weights 0.25 each. avg: 2.5; max: max(0.25, 0.5, 0.75, 1) = 1.
    expectClose(run({ input: x, rois: f32([1, 4], [0, 0, 1, 1]) }), f32([1, 1, 1, 1], [2.5]));
    expectClose(run({ input: x, rois: f32([1, 4], [0, 0, 1, 1]), mode: 'max' }), f32([1, 1, 1, 1], [1]));
  });

  test('samples past the map: clamped to the last row within one pixel, 0 beyond (also in max)', () => {
    const x = f32([1, 1, 2, 2], [-4, -4, -4, -4]);
    // Region [0, 4] with 2 samples per axis: at 1 (the last row and column, weight 1 on one
    // corner) and 3 (past 2 + 1: all weights 0). avg: (-4 + 0 + 0 + 0) / 4; max: the zero-weight
    // corner terms are -0, larger than -4.
    expectClose(run({ input: x, rois: f32([1, 4], [0, 0, 4, 4]), samplingRatio: 2 }), f32([1, 1, 1, 1], [-1]));
    expectClose(run({ input: x, rois: f32([1, 4], [0, 0, 4, 4]), samplingRatio: 2, mode: 'max' }), f32([1, 1, 1, 1], [0]));
  });

  test('regions pick their batch item; an empty half_pixel region gives 0', () => {
    const x = Tensor.from('float32', [2, 1, 2, 2], [1, 1, 1, 1, 5, 5, 5, 5]);
    const rois = f32([3, 4], [0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0]);
    // The third region is inverted: half_pixel keeps its negative size, an adaptive grid of none.
    const out = roiAlign({ input: x, rois, batchIndices: i64([1, 0, 0]), mode: 'avg', outputHeight: 1, outputWidth: 1, samplingRatio: 0, spatialScale: 1, halfPixel: true });
    expectClose(out, f32([3, 1, 1, 1], [5, 1, 0]));
  });

  test('a batch index outside the input is E_BAD_INPUT naming it', () => {
    expect(() => run({ input: ramp, rois: f32([1, 4], [0, 0, 1, 1]), batchIndices: i64([1]) })).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringContaining('batch index 1') }));
  });
});

/** Regions inside and around a [N, C, 6, 8] map, some across its border. */
function regions(n: number, count: number): { rois: Tensor; batch: Tensor } {
  const boxes: number[] = [];
  for (let k = 0; k < count; k++) {
    const x1 = rng.uniform(-2, 7);
    const y1 = rng.uniform(-2, 5);
    boxes.push(x1, y1, x1 + rng.uniform(0.2, 6), y1 + rng.uniform(0.2, 5));
  }
  return { rois: f32([count, 4], boxes), batch: i64(Array.from({ length: count }, (_, k) => k % n)) };
}

async function expectMatchesOrt(spec: OrtOpSpec): Promise<void> {
  const [want] = await runOrtOp(spec);
  const got = interpret(loadOnnx(buildSingleOpModel(spec)), spec.inputs as Tensor[]);
  expectClose(got[0]!, want!, { rtol: 1e-4, atol: 1e-5 }, `${JSON.stringify(spec.attributes)}`);
}

describe('ONNX RoiAlign against onnxruntime', () => {
  const x = rng.tensor([2, 3, 6, 8], 'float32', -2, 2);
  const { rois, batch } = regions(2, 7);

  test.each([
    ['half_pixel', 'avg', 2],
    ['half_pixel', 'avg', 0],
    ['output_half_pixel', 'avg', 0],
    ['output_half_pixel', 'avg', 3],
    ['half_pixel', 'max', 2],
    ['output_half_pixel', 'max', 0],
  ])('opset 16: %s, %s, sampling_ratio %d', async (transform, mode, ratio) => {
    await expectMatchesOrt({
      opType: 'RoiAlign',
      inputs: [x, rois, batch],
      attributes: { coordinate_transformation_mode: transform, mode, sampling_ratio: ratio, output_height: 3, output_width: 2, spatial_scale: floatAttr(0.75) },
      opset: 16,
    });
  });

  test('opset 10 (no coordinate_transformation_mode: regions unshifted), default attributes and a 4x5 output', async () => {
    await expectMatchesOrt({ opType: 'RoiAlign', inputs: [x, rois, batch], opset: 10 });
    await expectMatchesOrt({ opType: 'RoiAlign', inputs: [x, rois, batch], attributes: { output_height: 4, output_width: 5 }, opset: 10 });
  });
});

describe('ONNX RoiAlign forms and refusals', () => {
  const x = rng.tensor([1, 2, 5, 5], 'float32');
  const rois = f32([2, 4], [0, 0, 2, 2, 1, 1, 4, 3]);
  const batch = i64([0, 0]);
  const load = (attributes: OrtOpSpec['attributes'], opset = 22, inputs = [x, rois, batch]): ReturnType<typeof loadOnnx> =>
    loadOnnx(buildSingleOpModel({ opType: 'RoiAlign', inputs, attributes, opset }));

  test('opset 22 imports as one trt.roi_align node of output [R, C, h, w]; it has no converter', () => {
    const g = load({ output_height: 2, output_width: 3 });
    const node = g.calls().find((n) => n.target === 'trt.roi_align')!;
    expect(node.args).toMatchObject({ mode: 'avg', output_height: 2, output_width: 3, sampling_ratio: 0, half_pixel: true });
    expect(g.outputs[0]!.tensorType.shape).toEqual([2, 2, 2, 3]);
    expect(selectConverter(node).ok).toBe(false);
  });

  test.each([
    [{ mode: 'min' }, 'mode'],
    [{ output_height: 0 }, 'output_height'],
    [{ sampling_ratio: -1 }, 'sampling_ratio'],
    [{ coordinate_transformation_mode: 'align_corners' }, 'coordinate_transformation_mode'],
    [{ output_width: floatAttr(2.5) }, 'output_width'],
  ])('%j is E_BAD_MODEL naming the node and the attribute', (attributes, name) => {
    expect(() => load(attributes as OrtOpSpec['attributes'])).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(new RegExp(`ONNX node "RoiAlign_0".*${name}`)) }));
  });

  test('coordinate_transformation_mode at opset 10, which has none, is refused by name', () => {
    expect(() => load({ coordinate_transformation_mode: 'half_pixel' }, 10)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('"coordinate_transformation_mode"') }));
  });

  test('rois not [R, 4], int32 batch indices or a region count mismatch are E_BAD_MODEL', () => {
    expect(() => load({}, 22, [x, f32([2, 5], new Array(10).fill(0)), batch])).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('[R, 4]') }));
    expect(() => load({}, 22, [x, rois, Tensor.from('int32', [2], [0, 0])])).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('int64') }));
    expect(() => load({}, 22, [x, rois, i64([0, 0, 0])])).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('regions') }));
  });

  test('a batch index past N at run time is E_BAD_INPUT naming the node', () => {
    expect(() => interpret(load({}), [x, rois, i64([0, 3])])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringContaining('RoiAlign_0') }));
  });
});
