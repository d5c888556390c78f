/**
 * Opsets 7–12 (older node forms rewritten to the opset-13 form), ops composed of IR ops
 * (trigonometry, activations, Hardmax, losses, quantization, LpPool, windows, CenterCropPad) and
 * loadOnnx's constantInputs: our importer + interpreter against onnxruntime on one-node models.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor, type Shape } from '../../../lib/ir/tensor';
import { expectClose } from '../../helpers/compare';
import { expectOnnxMatchesOrt } from '../../helpers/onnx-compare';
import { buildSingleOpModel, closeOrt, floatAttr, runOrtOp, type OrtOpSpec } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

const rng = new Random(20261201);
const f32 = (shape: Shape, lo = -3, hi = 3): Tensor => rng.tensor(shape, 'float32', lo, hi);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

afterAll(async () => closeOrt());

describe('older op forms (opsets 7-12) match onnxruntime', () => {
  const cases: Array<[string, OrtOpSpec]> = [
    ['Squeeze-11 axes attribute (not every 1-dim)', { opType: 'Squeeze', inputs: [f32([1, 3, 1, 2])], attributes: { axes: [0] }, opset: 11 }],
    ['Unsqueeze-11 axes attribute', { opType: 'Unsqueeze', inputs: [f32([3, 2])], attributes: { axes: [0, 3] }, opset: 11 }],
    ['Split-11 split attribute', { opType: 'Split', inputs: [f32([6, 2])], attributes: { axis: 0, split: [1, 5] }, outputCount: 2, opset: 11 }],
    ['Split-11 even split', { opType: 'Split', inputs: [f32([6, 2])], attributes: { axis: 0 }, outputCount: 3, opset: 11 }],
    ['Slice-9 attributes', { opType: 'Slice', inputs: [f32([4, 5])], attributes: { starts: [1, -4], ends: [3, 100], axes: [0, 1] }, opset: 9 }],
    ['Pad-10 reflect attributes', { opType: 'Pad', inputs: [f32([3, 4])], attributes: { pads: [0, 2, 1, 1], mode: 'reflect' }, opset: 10 }],
    ['Pad-10 constant value', { opType: 'Pad', inputs: [f32([2, 2])], attributes: { pads: [1, 0, 0, 1], value: floatAttr(2.5) }, opset: 10 }],
    ['Clip-6 form (min/max attributes) at opset 10', { opType: 'Clip', inputs: [f32([3, 4])], attributes: { min: floatAttr(-1), max: floatAttr(0.5) }, opset: 10 }],
    ['Clip-9 min only', { opType: 'Clip', inputs: [f32([5])], attributes: { min: floatAttr(0) }, opset: 9 }],
    ['TopK-9 k attribute', { opType: 'TopK', inputs: [f32([3, 5])], attributes: { k: 2 }, outputCount: 2, opset: 9 }],
    ['Softmax-11 coerced to 2-D at axis 1', { opType: 'Softmax', inputs: [f32([2, 3, 4])], opset: 11 }],
    ['LogSoftmax-11 axis 0', { opType: 'LogSoftmax', inputs: [f32([2, 3, 2])], attributes: { axis: 0 }, opset: 11 }],
    ['Hardmax-11 coerced to 2-D', { opType: 'Hardmax', inputs: [f32([2, 3, 4])], opset: 11 }],
    ['ReduceSum-11 axes attribute', { opType: 'ReduceSum', inputs: [f32([2, 3, 4])], attributes: { axes: [0, 2], keepdims: 0 }, opset: 11 }],
    ['Upsample-9 nearest', { opType: 'Upsample', inputs: [f32([1, 1, 2, 3]), { constant: Tensor.from('float32', [4], [1, 1, 2, 3]) }], opset: 9 }],
    ['Resize-10 linear', { opType: 'Resize', inputs: [f32([1, 1, 2, 3]), { constant: Tensor.from('float32', [4], [1, 1, 2, 2]) }], attributes: { mode: 'linear' }, opset: 10 }],
    [
      'BatchNormalization-7',
      {
        opType: 'BatchNormalization',
        inputs: [f32([2, 3, 2]), { constant: f32([3]) }, { constant: f32([3]) }, { constant: f32([3]) }, { constant: f32([3], 0.5, 2) }],
        opset: 7,
      },
    ],
    ['Dropout-7 in inference', { opType: 'Dropout', inputs: [f32([3, 2])], attributes: { ratio: floatAttr(0.3) }, opset: 7 }],
    [
      'Scatter-9 as ScatterElements',
      { opType: 'Scatter', inputs: [f32([3, 3]), Tensor.from('int64', [1, 2], [1, 0]), f32([1, 2])], attributes: { axis: 1 }, opset: 9 },
    ],
  ];
  it.each(cases)('%s', async (_name, spec) => {
    await expectOnnxMatchesOrt(spec);
  });

  it('refuses BatchNormalization-7 with spatial=0 instead of computing per-channel statistics', () => {
    const spec: OrtOpSpec = {
      opType: 'BatchNormalization',
      inputs: [f32([2, 3]), { constant: f32([3]) }, { constant: f32([3]) }, { constant: f32([3]) }, { constant: f32([3], 0.5, 2) }],
      attributes: { spatial: 0 },
      opset: 7,
    };
    expect(() => loadOnnx(buildSingleOpModel(spec))).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/spatial=0/) }));
  });

  it('still refuses opsets below 7 for ops whose form changed since (Add: broadcast attributes), naming the opset', () => {
    expect(() => loadOnnx(buildSingleOpModel({ opType: 'Add', inputs: [f32([2]), f32([2])], opset: 6 }))).toThrow(/opset 6; tensorrt-node imports opsets 7 to 28/);
  });
});

describe('ops composed of IR ops match onnxruntime', () => {
  const unit = (shape: Shape) => f32(shape, -0.95, 0.95);
  const cases: Array<[string, OrtOpSpec]> = [
    ['Asin', { opType: 'Asin', inputs: [unit([7])] }],
    ['Acos', { opType: 'Acos', inputs: [unit([7])] }],
    ['Atan', { opType: 'Atan', inputs: [f32([7])] }],
    ['Sinh', { opType: 'Sinh', inputs: [f32([7])] }],
    ['Cosh', { opType: 'Cosh', inputs: [f32([7])] }],
    ['Asinh', { opType: 'Asinh', inputs: [f32([7], -20, 20)] }],
    ['Acosh', { opType: 'Acosh', inputs: [f32([7], 1, 20)] }],
    ['Atanh', { opType: 'Atanh', inputs: [unit([7])] }],
    ['ThresholdedRelu', { opType: 'ThresholdedRelu', inputs: [f32([9])], attributes: { alpha: floatAttr(0.5) } }],
    ['Shrink', { opType: 'Shrink', inputs: [f32([9])], attributes: { lambd: floatAttr(1), bias: floatAttr(0.25) } }],
    ['Celu', { opType: 'Celu', inputs: [f32([9])], attributes: { alpha: floatAttr(2) } }],
    ['Selu defaults', { opType: 'Selu', inputs: [f32([9])] }],
    ['Selu at opset 6 (a model of ops unchanged since)', { opType: 'Selu', inputs: [f32([9])], attributes: { alpha: floatAttr(2), gamma: floatAttr(3) }, opset: 6 }],
    ['Mish', { opType: 'Mish', inputs: [f32([9])], opset: 18 }],
    ['MeanVarianceNormalization', { opType: 'MeanVarianceNormalization', inputs: [f32([2, 3, 2, 2])] }],
    ['Hardmax-13 with ties (the first maximum wins)', { opType: 'Hardmax', inputs: [Tensor.from('float32', [2, 3], [1, 3, 3, 0, -1, 0])], attributes: { axis: 1 } }],
    ['EyeLike k=1, int64', { opType: 'EyeLike', inputs: [f32([3, 4])], attributes: { k: 1, dtype: 7 } }],
    ['ReduceMin over an empty axis (+inf)', { opType: 'ReduceMin', inputs: [f32([2, 0, 3]), { constant: i64([1]) }], opset: 18 }],
    ['ReduceLogSumExp over an empty axis (-inf), no keepdims', { opType: 'ReduceLogSumExp', inputs: [f32([2, 0, 3]), { constant: i64([1]) }], attributes: { keepdims: 0 }, opset: 18 }],
    ['ReduceLogSum', { opType: 'ReduceLogSum', inputs: [f32([2, 3], 0.1, 2)], attributes: { keepdims: 0 }, opset: 18 }],
    [
      'NegativeLogLikelihoodLoss mean, weights, ignore_index',
      {
        opType: 'NegativeLogLikelihoodLoss',
        inputs: [f32([3, 4, 2]), Tensor.from('int64', [3, 2], [0, 3, -1, 2, 1, -1]), f32([4], 0.2, 1)],
        attributes: { ignore_index: -1 },
      },
    ],
    ['NegativeLogLikelihoodLoss none', { opType: 'NegativeLogLikelihoodLoss', inputs: [f32([3, 4]), Tensor.from('int64', [3], [0, 3, 2])], attributes: { reduction: 'none' } }],
    [
      'SoftmaxCrossEntropyLoss sum with log_prob',
      { opType: 'SoftmaxCrossEntropyLoss', inputs: [f32([3, 5]), Tensor.from('int64', [3], [4, 0, 2])], attributes: { reduction: 'sum' }, outputCount: 2 },
    ],
    [
      'QuantizeLinear per-axis to int8',
      {
        opType: 'QuantizeLinear',
        inputs: [f32([2, 3, 2], -40, 40), { constant: Tensor.from('float32', [3], [0.25, 0.5, 0.125]) }, { constant: Tensor.from('int8', [3], [0, -3, 5]) }],
      },
    ],
    ['QuantizeLinear default uint8', { opType: 'QuantizeLinear', inputs: [f32([6], -2, 60), { constant: Tensor.from('float32', [], [0.2]) }] }],
    [
      'DequantizeLinear uint8 with a zero point',
      { opType: 'DequantizeLinear', inputs: [Tensor.from('uint8', [5], [0, 3, 128, 200, 255]), { constant: Tensor.from('float32', [], [0.5]) }, { constant: Tensor.from('uint8', [], [128]) }] },
    ],
    ['DynamicQuantizeLinear', { opType: 'DynamicQuantizeLinear', inputs: [f32([2, 5], -2, 6)], outputCount: 3, opset: 11 }],
    [
      'MatMulInteger',
      { opType: 'MatMulInteger', inputs: [Tensor.from('uint8', [2, 3], [1, 200, 30, 4, 5, 255]), Tensor.from('uint8', [3, 2], [7, 8, 90, 10, 11, 12]), Tensor.from('uint8', [], [12])], opset: 10 },
    ],
    [
      'QLinearMatMul uint8',
      {
        opType: 'QLinearMatMul',
        inputs: [
          Tensor.from('uint8', [2, 3], [1, 200, 30, 4, 5, 255]),
          { constant: Tensor.from('float32', [], [0.02]) },
          { constant: Tensor.from('uint8', [], [100]) },
          Tensor.from('uint8', [3, 2], [7, 8, 90, 10, 11, 12]),
          { constant: Tensor.from('float32', [], [0.01]) },
          { constant: Tensor.from('uint8', [], [20]) },
          { constant: Tensor.from('float32', [], [0.05]) },
          { constant: Tensor.from('uint8', [], [110]) },
        ],
        opset: 10,
      },
    ],
    ['LpPool p=3 with asymmetric pads', { opType: 'LpPool', inputs: [f32([1, 2, 5, 5])], attributes: { kernel_shape: [2, 3], pads: [1, 0, 0, 1], p: 3 }, opset: 18 }],
    ['LpPool p=2 with strides', { opType: 'LpPool', inputs: [f32([1, 1, 6, 6])], attributes: { kernel_shape: [2, 2], strides: [2, 2] }, opset: 11 }],
    ['HannWindow periodic', { opType: 'HannWindow', inputs: [{ constant: Tensor.from('int64', [], [10]) }], opset: 17 }],
    ['HammingWindow symmetric, float64', { opType: 'HammingWindow', inputs: [{ constant: Tensor.from('int64', [], [7]) }], attributes: { periodic: 0, output_datatype: 11 }, opset: 17 }],
    ['BlackmanWindow symmetric', { opType: 'BlackmanWindow', inputs: [{ constant: Tensor.from('int64', [], [9]) }], attributes: { periodic: 0 }, opset: 17 }],
    ['CenterCropPad crop and pad', { opType: 'CenterCropPad', inputs: [f32([5, 2, 3]), { constant: i64([3, 5]) }], attributes: { axes: [0, 2] }, opset: 18 }],
  ];
  it.each(cases)('%s', async (_name, spec) => {
    await expectOnnxMatchesOrt(spec);
  });

  it('blocked quantization (block_size, opset 21) matches onnxruntime exactly', async () => {
    const spec: OrtOpSpec = {
      opType: 'QuantizeLinear',
      inputs: [f32([2, 4]), { constant: f32([2, 2], 0.1, 1) }, { constant: Tensor.from('int8', [2, 2], [0, 3, -2, 0]) }],
      attributes: { block_size: 2, axis: 1 },
      opset: 21,
    };
    await expectOnnxMatchesOrt(spec, { rtol: 0, atol: 0 });
  });
});

describe('loadOnnx constantInputs', () => {
  // Reshape's shape given as a graph input: imported at run time unless fixed at import.
  const data = f32([2, 6]);
  const shape = i64([3, -1]);
  const spec: OrtOpSpec = { opType: 'Reshape', inputs: [data, shape] };

  it('without it, a shape that is a graph input is imported at run time: sizes known only then, the same values', async () => {
    const graph = loadOnnx(buildSingleOpModel(spec));
    expect(graph.nodes.filter((n) => n.kind === 'call').map((n) => n.target)).toEqual(['trt.deferred_node']);
    expect(graph.outputs[0]!.tensorType.shape.every((d) => typeof d !== 'number')).toBe(true);
    const [expected] = await runOrtOp(spec);
    expectClose(interpret(graph, [data, shape])[0]!, expected!);
  });

  it('fixes the named input: the graph no longer takes it and matches onnxruntime', async () => {
    const graph = loadOnnx(buildSingleOpModel(spec), { constantInputs: { in1: shape } });
    expect(graph.inputs).toHaveLength(1);
    const [expected] = await runOrtOp(spec);
    expectClose(interpret(graph, [data])[0]!, expected!);
  });

  it('refuses a value of another type or shape, or a name the model has no input of', () => {
    const bytes = buildSingleOpModel(spec);
    expect(() => loadOnnx(bytes, { constantInputs: { in1: Tensor.from('int32', [2], [3, -1]) } })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringMatching(/must be a int64 tensor of shape \[2\].*got int32/) }),
    );
    expect(() => loadOnnx(bytes, { constantInputs: { nope: shape } })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringMatching(/"nope"/) }),
    );
  });
});
