/**
 * ONNX DeformConv (opsets 19 and 22), composed of gathers and a grouped matrix product:
 * samples worked out by hand (bilinear between pixels, 0 outside the image, the mask and
 * bias), groups and offset groups; the importer + interpreter against onnxruntime on
 * one-node models with pads, strides, dilations and both kinds of groups; the imported graph
 * converted whole (no fallback) against the interpreter; malformed forms as typed errors.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor, type Shape } from '../../../lib/ir/tensor';
import { expectClose } from '../../helpers/compare';
import { expectConvertedMatches } from '../../helpers/convert-compare';
import { buildSingleOpModel, closeOrt, runOrtOp, type OrtInput, type OrtOpSpec } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

const rng = new Random(19022);
const f32 = (shape: Shape, values: number[]): Tensor => Tensor.from('float32', shape, values);
const rand = (shape: Shape, lo = -1, hi = 1): Tensor => rng.tensor(shape, 'float32', lo, hi);

afterAll(() => closeOrt());

const ours = (spec: OrtOpSpec): Tensor[] => interpret(loadOnnx(buildSingleOpModel(spec)), spec.inputs.filter((x): x is Tensor => x instanceof Tensor));

describe('DeformConv by hand', () => {
  // X = [[1, 2], [3, 4]], a 1x1 kernel of weight 1: each output is X sampled at its position
  // plus its offset. dy per position [[0.5, 0], [-1.5, 0]], dx [[0.5, 0.5], [0, 0]].
  const x = f32([1, 1, 2, 2], [1, 2, 3, 4]);
  const w = f32([1, 1, 1, 1], [1]);
  const offset = f32([1, 2, 2, 2], [0.5, 0, -1.5, 0, 0.5, 0.5, 0, 0]);

  test('bilinear samples, taps outside the image reading 0', () => {
    // (0.5, 0.5): the mean 2.5; (0, 1.5): half of 2, half outside; (-0.5, 0): half of 1; (1, 1): 4.
    const [y] = ours({ opType: 'DeformConv', inputs: [x, w, offset], attributes: { kernel_shape: [1, 1] }, opset: 19 });
    expectClose(y!, f32([1, 1, 2, 2], [2.5, 1, 0.5, 4]));
  });

  test('the mask scales each sample, the bias is added', () => {
    const mask = f32([1, 1, 2, 2], [1, 2, 0.5, 1]);
    const [y] = ours({ opType: 'DeformConv', inputs: [x, w, offset, f32([1], [10]), mask], opset: 22 });
    expectClose(y!, f32([1, 1, 2, 2], [12.5, 12, 10.25, 14]));
  });

  test('group 2 pairs each output channel with its input channel; offset_group 2 gives each its own offsets', () => {
    const x2 = f32([1, 2, 2, 2], [1, 2, 3, 4, 10, 20, 30, 40]);
    // Offset group 0 stays in place; group 1 moves half a pixel right (past the right edge: half 0).
    const off = f32([1, 4, 2, 2], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5]);
    const [y] = ours({ opType: 'DeformConv', inputs: [x2, f32([2, 1, 1, 1], [1, 2]), off], attributes: { group: 2, offset_group: 2 }, opset: 22 });
    expectClose(y!, f32([1, 2, 2, 2], [1, 2, 3, 4, 30, 20, 70, 40]));
  });

  test('zero offsets are a plain convolution: a 2x2 window sum of 3y + x', () => {
    const ramp = f32([1, 1, 3, 3], [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const [y] = ours({ opType: 'DeformConv', inputs: [ramp, f32([1, 1, 2, 2], [1, 1, 1, 1]), f32([1, 8, 2, 2], new Array(32).fill(0))], opset: 22 });
    expectClose(y!, f32([1, 1, 2, 2], [8, 12, 20, 24]));
  });
});

describe('ONNX DeformConv against onnxruntime, and converted whole', () => {
  async function expectMatches(inputs: OrtInput[], attributes: OrtOpSpec['attributes'], opset = 22): Promise<void> {
    const spec: OrtOpSpec = { opType: 'DeformConv', inputs, attributes, opset };
    const [want] = await runOrtOp(spec);
    expectClose(ours(spec)[0]!, want!, { rtol: 1e-4, atol: 1e-5 });
    const feeds = inputs.filter((t): t is Tensor => t instanceof Tensor);
    await expectConvertedMatches(loadOnnx(buildSingleOpModel(spec)), feeds);
  }

  test('3x3 kernel, pads, offsets of up to 2 pixels (many samples outside), mask and bias', async () => {
    // X [2, 4, 5, 6], W [3, 4, 3, 3]: output 5 x 6 with pads 1.
    await expectMatches([rand([2, 4, 5, 6]), rand([3, 4, 3, 3]), rand([2, 18, 5, 6], -2, 2), rand([3]), rand([2, 9, 5, 6], 0, 1)], { pads: [1, 1, 1, 1] });
  });

  test('strides, dilations and asymmetric pads', async () => {
    // H: (7 + 1 + 0 - 5) / 2 + 1 = 2; W: (8 + 0 + 2 - 3) / 1 + 1 = 8.
    await expectMatches([rand([1, 2, 7, 8]), rand([2, 2, 3, 3]), rand([1, 18, 2, 8], -1.5, 1.5)], { strides: [2, 1], dilations: [2, 1], pads: [1, 0, 0, 2] }, 19);
  });

  test('group 2 and offset_group 2 with a mask', async () => {
    await expectMatches([rand([1, 4, 4, 4]), rand([6, 2, 2, 2]), rand([1, 16, 3, 3], -1, 1), null, rand([1, 8, 3, 3], 0, 1)], { group: 2, offset_group: 2 });
  });

  test('float16 inputs give float16 outputs: onnxruntime on the same values in float32, rounded', async () => {
    const inputs = [rng.tensor([1, 2, 4, 4], 'float16'), rng.tensor([2, 2, 2, 2], 'float16'), rng.tensor([1, 8, 3, 3], 'float16', -1.5, 1.5)];
    const spec: OrtOpSpec = { opType: 'DeformConv', inputs, opset: 22 };
    const [want] = await runOrtOp({ ...spec, inputs: inputs.map((t) => Tensor.from('float32', t.shape, t.toArray())) });
    const got = ours(spec)[0]!;
    expect(got.dtype).toBe('float16');
    expectClose(Tensor.from('float32', got.shape, got.toArray()), want!, { rtol: 1e-3, atol: 1e-3 });
  });
});

describe('ONNX DeformConv refusals', () => {
  const x = rand([1, 2, 3, 3]);
  const w = rand([2, 2, 2, 2]);
  const offset = rand([1, 8, 2, 2]);
  const load = (inputs: OrtInput[], attributes?: OrtOpSpec['attributes']): ReturnType<typeof loadOnnx> =>
    loadOnnx(buildSingleOpModel({ opType: 'DeformConv', inputs, attributes, opset: 22 }));
  const bad = (message: string): ReturnType<typeof expect.objectContaining> => expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(new RegExp(`ONNX node "DeformConv_0".*${message}`)) });

  test('an offset, mask or bias of the wrong shape', () => {
    expect(() => load([x, w, rand([1, 6, 2, 2])])).toThrow(bad('offset \\[1, 6, 2, 2\\] must be \\[1, 8, 2, 2\\]'));
    expect(() => load([x, w, offset, null, rand([1, 4, 3, 3])])).toThrow(bad('mask'));
    expect(() => load([x, w, offset, rand([3])])).toThrow(bad('B \\[3\\] must be \\[2\\]'));
  });

  test('kernel_shape unlike W, groups that do not split the channels, bad strides', () => {
    expect(() => load([x, w, offset], { kernel_shape: [3, 3] })).toThrow(bad('kernel_shape'));
    expect(() => load([x, w, offset], { group: 3 })).toThrow(bad('group 3'));
    expect(() => load([x, rand([2, 2, 2, 2]), rand([1, 24, 2, 2])], { offset_group: 3 })).toThrow(bad('offset_group 3'));
    expect(() => load([x, w, offset], { strides: [0, 1] })).toThrow(bad('strides'));
    expect(() => load([x, w, offset], { pads: [0, 0] })).toThrow(bad('pads'));
  });

  test('mixed element types are E_BAD_MODEL; a 1-D input (rank 3) is E_UNSUPPORTED_OP', () => {
    expect(() => load([x, w, Tensor.from('float64', [1, 8, 2, 2], new Array(32).fill(0))])).toThrow(bad('offset is float64'));
    expect(() => load([rand([1, 2, 5]), rand([2, 2, 2]), rand([1, 4, 4])])).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('2-D') }));
  });
});
