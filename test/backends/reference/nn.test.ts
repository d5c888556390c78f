/**
 * Reference backend: matmul, convolution, deconvolution, pooling, normalization, reduce,
 * softmax and cumulative layers against onnxruntime.
 */
import { Network, type LayerParams, type ReduceOp } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, expectTensor } from '../../helpers/compare';
import { floatAttr, runOrtGraph, runOrtOp1 } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { runLayer1, runNetwork } from './helpers';

const rng = new Random(1234);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

describe('matmul', () => {
  it('none × none broadcasts batch dims of equal rank (ONNX MatMul)', async () => {
    const a = rng.tensor([2, 1, 3, 4]);
    const b = rng.tensor([1, 5, 4, 2]);
    expectClose(await runLayer1({ kind: 'matmul', opA: 'none', opB: 'none' }, [a, b]), await runOrtOp1({ opType: 'MatMul', inputs: [a, b] }));
  });

  it('transpose swaps the last two dims (ONNX Transpose → MatMul)', async () => {
    const a = rng.tensor([2, 4, 3]);
    const b = rng.tensor([2, 5, 4]);
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Transpose', inputs: ['a'], outputs: ['at'], attributes: { perm: [0, 2, 1] } },
        { opType: 'Transpose', inputs: ['b'], outputs: ['bt'], attributes: { perm: [0, 2, 1] } },
        { opType: 'MatMul', inputs: ['at', 'bt'], outputs: ['y'] },
      ],
      inputs: { a, b },
      outputs: ['y'],
    });
    expectClose(await runLayer1({ kind: 'matmul', opA: 'transpose', opB: 'transpose' }, [a, b]), expected!);
  });

  it('vector treats the last dim as a vector per batch (ONNX Unsqueeze → MatMul → Squeeze)', async () => {
    const a = rng.tensor([2, 4]);
    const b = rng.tensor([2, 4, 3]);
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Unsqueeze', inputs: ['a', 'axes'], outputs: ['a3'] },
        { opType: 'MatMul', inputs: ['a3', 'b'], outputs: ['p'] },
        { opType: 'Squeeze', inputs: ['p', 'axes'], outputs: ['y'] },
      ],
      inputs: { a, b, axes: i64([1]) },
      outputs: ['y'],
    });
    const actual = await runLayer1({ kind: 'matmul', opA: 'vector', opB: 'none' }, [a, b]);
    expect(actual.shape).toEqual([2, 3]);
    expectClose(actual, expected!);
  });

  it('vector × vector is a batched dot product; none × vector a matrix-vector product (hand-derived)', async () => {
    const a = Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6]);
    const b = Tensor.from('float32', [2, 3], [1, 0, -1, 2, 2, 2]);
    expectTensor(await runLayer1({ kind: 'matmul', opA: 'vector', opB: 'vector' }, [a, b]), 'float32', [2], [-2, 30]);
    const m = Tensor.from('float32', [1, 2, 3], [1, 2, 3, 4, 5, 6]);
    const v = Tensor.from('float32', [1, 3], [1, 1, -1]);
    expectTensor(await runLayer1({ kind: 'matmul', opA: 'none', opB: 'vector' }, [m, v]), 'float32', [1, 2], [0, 3]);
  });
});

describe('convolution and deconvolution', () => {
  const conv = (kernel: Tensor, bias: Tensor | null, over: Partial<Extract<LayerParams, { kind: 'convolution' }>> = {}): LayerParams => ({
    kind: 'convolution',
    nbOutputMaps: kernel.shape[0]!,
    kernelSize: kernel.shape.slice(2),
    stride: [2, 1],
    prePadding: [1, 0],
    postPadding: [2, 1],
    dilation: [1, 2],
    groups: 2,
    kernel,
    bias,
    ...over,
  });

  it('2-D with groups, stride, dilation and asymmetric padding matches ONNX Conv', async () => {
    const x = rng.tensor([2, 4, 7, 8]);
    const w = rng.tensor([6, 2, 3, 2]);
    const b = rng.tensor([6]);
    const expected = await runOrtOp1({
      opType: 'Conv',
      inputs: [x, { constant: w }, { constant: b }],
      attributes: { group: 2, strides: [2, 1], pads: [1, 0, 2, 1], dilations: [1, 2] },
    });
    expectClose(await runLayer1(conv(w, b), [x]), expected);
    // The same kernel and bias as run-time inputs 1 and 2.
    expectClose(await runLayer1(conv(w, null), [x, w, b]), expected);
  });

  it('3-D without bias matches ONNX Conv', async () => {
    const x = rng.tensor([1, 2, 5, 6, 4]);
    const w = rng.tensor([3, 2, 2, 3, 2]);
    const params = conv(w, null, { stride: [1, 2, 1], prePadding: [0, 1, 1], postPadding: [1, 0, 1], dilation: [1, 1, 2], groups: 1 });
    const expected = await runOrtOp1({ opType: 'Conv', inputs: [x, { constant: w }], attributes: { strides: [1, 2, 1], pads: [0, 1, 1, 1, 0, 1], dilations: [1, 1, 2] } });
    expectClose(await runLayer1(params, [x]), expected);
  });

  it('float16 input converts float32 weights to float16', async () => {
    const x = rng.tensor([1, 2, 5, 5], 'float16');
    const w = rng.tensor([2, 1, 3, 3]);
    const out = await runLayer1(conv(w, null, { stride: [1, 1], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1] }), [x]);
    expect(out.dtype).toBe('float16');
    const expected = await runOrtOp1({ opType: 'Conv', inputs: [x, { constant: Tensor.from('float16', w.shape, w.toArray()) }], attributes: { group: 2, pads: [1, 1, 1, 1] } });
    expectClose(out, expected, { rtol: 2e-3, atol: 2e-3 });
  });

  it('deconvolution matches ONNX ConvTranspose (groups, stride, dilation, asymmetric padding)', async () => {
    const x = rng.tensor([2, 4, 3, 4]);
    const w = rng.tensor([4, 3, 3, 2]); // [C, K/groups, R, S]
    const b = rng.tensor([6]);
    const params: LayerParams = {
      kind: 'deconvolution',
      nbOutputMaps: 6,
      kernelSize: [3, 2],
      stride: [2, 3],
      prePadding: [1, 0],
      postPadding: [0, 2],
      dilation: [2, 1],
      groups: 2,
      kernel: w,
      bias: b,
    };
    const expected = await runOrtOp1({
      opType: 'ConvTranspose',
      inputs: [x, { constant: w }, { constant: b }],
      attributes: { group: 2, strides: [2, 3], pads: [1, 0, 0, 2], dilations: [2, 1] },
    });
    expectClose(await runLayer1(params, [x]), expected);
  });
});

describe('pooling', () => {
  const pool = (type: 'max' | 'average', over: Partial<Extract<LayerParams, { kind: 'pooling' }>> = {}): LayerParams => ({
    kind: 'pooling',
    type,
    window: [3, 3],
    stride: [2, 2],
    prePadding: [1, 1],
    postPadding: [1, 1],
    paddingMode: 'explicit_round_down',
    averageCountExcludesPadding: true,
    ...over,
  });
  const x = rng.tensor([2, 3, 9, 8]);

  it('max matches ONNX MaxPool', async () => {
    const expected = await runOrtOp1({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] } });
    expectClose(await runLayer1(pool('max'), [x]), expected);
  });

  it.each([
    [true, 0],
    [false, 1],
  ])('average (excludes padding: %s) matches ONNX AveragePool count_include_pad=%s', async (exclude, include) => {
    const params = pool('average', { averageCountExcludesPadding: exclude, prePadding: [2, 0], postPadding: [1, 2], window: [4, 3], stride: [3, 2] });
    const expected = await runOrtOp1({ opType: 'AveragePool', inputs: [x], attributes: { kernel_shape: [4, 3], strides: [3, 2], pads: [2, 0, 1, 2], count_include_pad: include } });
    expectClose(await runLayer1(params, [x]), expected);
  });

  it.each(['max', 'average'] as const)('explicit_round_up %s matches ONNX ceil_mode where every window touches the input', async (type) => {
    const y = rng.tensor([1, 2, 6, 7]);
    const params = pool(type, { window: [3, 2], stride: [2, 2], prePadding: [0, 1], postPadding: [0, 0], paddingMode: 'explicit_round_up', averageCountExcludesPadding: false });
    const expected = await runOrtOp1({
      opType: type === 'max' ? 'MaxPool' : 'AveragePool',
      inputs: [y],
      attributes: { kernel_shape: [3, 2], strides: [2, 2], pads: [0, 1, 0, 0], ceil_mode: 1, ...(type === 'average' ? { count_include_pad: 1 } : {}) },
    });
    const actual = await runLayer1(params, [y]);
    expect(actual.shape).toEqual([1, 2, 3, 4]);
    expectClose(actual, expected);
  });

  it("explicit_round_up keeps a last window that starts in the post padding (TensorRT's formula, unlike ceil_mode)", async () => {
    const y = Tensor.from('float32', [1, 1, 1, 5], [1, 2, 3, 4, 5]);
    const params = pool('average', { window: [1, 2], stride: [1, 2], prePadding: [0, 1], postPadding: [0, 1], paddingMode: 'explicit_round_up' });
    // ceil((5 + 1 + 1 − 2)/2) + 1 = 4 windows: [-1, 1), [1, 3), [3, 5), [5, 7); PyTorch keeps 3.
    // The fourth holds no input element. Its denominator, as TensorRT documents it: the overlap
    // with the unpadded input (empty: 0/0, NaN) or with the padded input [-1, 6) (one element:
    // 0/1 = 0).
    expectTensor(await runLayer1(params, [y]), 'float32', [1, 1, 1, 4], [1, 2.5, 4.5, Number.NaN]);
    const included = await runLayer1({ ...params, averageCountExcludesPadding: false } as LayerParams, [y]);
    expectTensor(included, 'float32', [1, 1, 1, 4], [0.5, 2.5, 4.5, 0]);
  });

  it('3-D average matches ONNX AveragePool', async () => {
    const v = rng.tensor([1, 2, 5, 6, 4]);
    const params = pool('average', { window: [2, 3, 2], stride: [1, 2, 2], prePadding: [0, 1, 1], postPadding: [1, 1, 0] });
    const expected = await runOrtOp1({ opType: 'AveragePool', inputs: [v], attributes: { kernel_shape: [2, 3, 2], strides: [1, 2, 2], pads: [0, 1, 1, 1, 1, 0] } });
    expectClose(await runLayer1(params, [v]), expected);
  });
});

describe('normalization', () => {
  const norm = (axes: number[], nbGroups = 1, epsilon = 1e-5): LayerParams => ({ kind: 'normalization', axes, epsilon, nbGroups });

  it('layer normalization over trailing axes matches ONNX LayerNormalization', async () => {
    const x = rng.tensor([2, 3, 4, 5]);
    const scale = rng.tensor([4, 5]);
    const bias = rng.tensor([4, 5]);
    const expected = await runOrtOp1({ opType: 'LayerNormalization', inputs: [x, scale, bias], attributes: { axis: 2, epsilon: floatAttr(1e-5) } });
    expectClose(await runLayer1(norm([2, 3]), [x, scale.reshape([1, 1, 4, 5]), bias.reshape([1, 1, 4, 5])]), expected);
  });

  it('normalizes over a non-trailing axis (ONNX Transpose → LayerNormalization → Transpose)', async () => {
    const x = rng.tensor([2, 3, 4]);
    const scale = rng.tensor([3]);
    const bias = rng.tensor([3]);
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Transpose', inputs: ['x'], outputs: ['t'], attributes: { perm: [0, 2, 1] } },
        { opType: 'LayerNormalization', inputs: ['t', 'scale', 'bias'], outputs: ['n'], attributes: { axis: -1, epsilon: floatAttr(1e-3) } },
        { opType: 'Transpose', inputs: ['n'], outputs: ['y'], attributes: { perm: [0, 2, 1] } },
      ],
      inputs: { x, scale, bias },
      outputs: ['y'],
    });
    expectClose(await runLayer1(norm([1], 1, 1e-3), [x, scale.reshape([1, 3, 1]), bias.reshape([1, 3, 1])]), expected!);
  });

  it('instance normalization (axes 2, 3; scale [1, C, 1, 1]) matches ONNX InstanceNormalization', async () => {
    const x = rng.tensor([2, 3, 4, 5]);
    const scale = rng.tensor([3]);
    const bias = rng.tensor([3]);
    const expected = await runOrtOp1({ opType: 'InstanceNormalization', inputs: [x, scale, bias], attributes: { epsilon: floatAttr(1e-5) } });
    expectClose(await runLayer1(norm([2, 3]), [x, scale.reshape([1, 3, 1, 1]), bias.reshape([1, 3, 1, 1])]), expected);
  });

  it('group normalization with per-channel scale matches ONNX GroupNormalization-21', async () => {
    const x = rng.tensor([2, 6, 3, 4]);
    const scale = rng.tensor([6]);
    const bias = rng.tensor([6]);
    const expected = await runOrtOp1({ opType: 'GroupNormalization', inputs: [x, scale, bias], attributes: { num_groups: 3, epsilon: floatAttr(1e-5) }, opset: 21 });
    expectClose(await runLayer1(norm([2, 3], 3), [x, scale.reshape([1, 6, 1, 1]), bias.reshape([1, 6, 1, 1])]), expected);
  });

  it("group normalization with per-group scale [1, G, 1, 1] (TensorRT's documented shape)", async () => {
    const x = rng.tensor([2, 6, 3, 4]);
    const scale = rng.tensor([3]);
    const bias = rng.tensor([3]);
    // Per-group parameters are per-channel parameters repeated over each group's channels.
    const perChannel = (t: Tensor): Tensor => Tensor.from('float32', [6], [0, 0, 1, 1, 2, 2].map((g) => t.toArray()[g]!));
    const expected = await runOrtOp1({
      opType: 'GroupNormalization',
      inputs: [x, perChannel(scale), perChannel(bias)],
      attributes: { num_groups: 3, epsilon: floatAttr(1e-5) },
      opset: 21,
    });
    expectClose(await runLayer1(norm([2, 3], 3), [x, scale.reshape([1, 3, 1, 1]), bias.reshape([1, 3, 1, 1])]), expected);
  });

  it('float16 stays float16', async () => {
    const x = rng.tensor([2, 8], 'float16');
    const scale = Tensor.from('float16', [1, 8], new Array(8).fill(1));
    const bias = Tensor.from('float16', [1, 8], new Array(8).fill(0));
    const expected = await runOrtOp1({ opType: 'LayerNormalization', inputs: [x, scale.reshape([8]), bias.reshape([8])], attributes: { axis: 1 } });
    expectClose(await runLayer1(norm([1]), [x, scale, bias]), expected, { rtol: 2e-3, atol: 2e-3 });
  });
});

describe('reduce', () => {
  const x = rng.tensor([2, 3, 4], 'float32', 0.5, 1.5);
  const onnx: Record<ReduceOp, string> = { sum: 'ReduceSum', prod: 'ReduceProd', max: 'ReduceMax', min: 'ReduceMin', avg: 'ReduceMean' };
  it.each([
    ['sum', [1], true],
    ['prod', [0, 2], false],
    ['max', [2], false],
    ['min', [0, 1, 2], true],
    ['avg', [0, 2], true],
  ] as Array<[ReduceOp, number[], boolean]>)('%s over %j (keepDims %s) matches ONNX', async (op, axes, keepDims) => {
    const expected = await runOrtOp1({ opType: onnx[op], inputs: [x, { constant: i64(axes) }], attributes: { keepdims: keepDims ? 1 : 0 }, opset: 18 });
    expectClose(await runLayer1({ kind: 'reduce', op, axes, keepDims }, [x]), expected);
  });

  it('keeps integer types; avg of integers truncates; no axes is the identity', async () => {
    const i = Tensor.from('int32', [2, 3], [1, 2, 4, -1, -2, -4]);
    expectTensor(await runLayer1({ kind: 'reduce', op: 'sum', axes: [1], keepDims: false }, [i]), 'int32', [2], [7, -7]);
    expectTensor(await runLayer1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [i]), 'int32', [2, 1], [2, -2]);
    expectTensor(await runLayer1({ kind: 'reduce', op: 'max', axes: [], keepDims: true }, [i]), 'int32', [2, 3], [1, 2, 4, -1, -2, -4]);
  });
});

describe('softmax and cumulative', () => {
  it('softmax matches ONNX Softmax over one axis', async () => {
    const x = rng.tensor([2, 3, 4], 'float32', -5, 5);
    expectClose(await runLayer1({ kind: 'softmax', axis: 1 }, [x]), await runOrtOp1({ opType: 'Softmax', inputs: [x], attributes: { axis: 1 } }));
  });

  it.each([
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])('cumulative sum (exclusive %s, reverse %s) matches ONNX CumSum', async (exclusive, reverse) => {
    const x = rng.tensor([3, 4]);
    const expected = await runOrtOp1({ opType: 'CumSum', inputs: [x, { constant: Tensor.from('int64', [], [1]) }], attributes: { exclusive: exclusive ? 1 : 0, reverse: reverse ? 1 : 0 } });
    expectClose(await runLayer1({ kind: 'cumulative', op: 'sum', axis: 1, exclusive, reverse }, [x]), expected);
    const i = Tensor.from('int32', [4], [1, 2, 3, 4]);
    const ei = await runOrtOp1({ opType: 'CumSum', inputs: [i, { constant: Tensor.from('int64', [], [0]) }], attributes: { exclusive: exclusive ? 1 : 0, reverse: reverse ? 1 : 0 } });
    expectTensor(await runLayer1({ kind: 'cumulative', op: 'sum', axis: 0, exclusive, reverse }, [i]), 'int32', [4], ei.toArray());
  });
});

describe('a small network', () => {
  it('conv → relu → pool → shuffle → matmul runs end to end with a dynamic batch', async () => {
    const net = new Network('mini');
    const x = net.addInput('x', 'float32', [-1, 1, 6, 6], [{ min: [1, 1, 6, 6], opt: [2, 1, 6, 6], max: [4, 1, 6, 6] }]);
    const w = rng.tensor([2, 1, 3, 3]);
    const c = net.add1({ kind: 'convolution', nbOutputMaps: 2, kernelSize: [3, 3], stride: [1, 1], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1], groups: 1, kernel: w, bias: null }, [x], 'conv');
    const r = net.add1({ kind: 'activation', type: 'relu' }, [c], 'relu');
    const p = net.add1({ kind: 'pooling', type: 'max', window: [2, 2], stride: [2, 2], prePadding: [0, 0], postPadding: [0, 0], paddingMode: 'explicit_round_down', averageCountExcludesPadding: true }, [r], 'pool');
    const f = net.add1({ kind: 'shuffle', reshape: [-1, 18], zeroIsPlaceholder: true }, [p], 'flatten');
    const fc = rng.tensor([18, 3]);
    const wc = net.add1({ kind: 'constant', weights: fc }, [], 'fc_w');
    const y = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [f, wc], 'fc');
    expect(y.shape).toEqual([-1, 3]);
    net.markOutput(y, 'y');
    const xs = rng.tensor([3, 1, 6, 6]);
    const { y: out } = await runNetwork(net, { x: xs });
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Conv', inputs: ['x', 'w'], outputs: ['c'], attributes: { pads: [1, 1, 1, 1] } },
        { opType: 'Relu', inputs: ['c'], outputs: ['r'] },
        { opType: 'MaxPool', inputs: ['r'], outputs: ['p'], attributes: { kernel_shape: [2, 2], strides: [2, 2] } },
        { opType: 'Flatten', inputs: ['p'], outputs: ['f'] },
        { opType: 'MatMul', inputs: ['f', 'fc'], outputs: ['y'] },
      ],
      inputs: { x: xs, w, fc },
      outputs: ['y'],
    });
    expectClose(out!, expected!);
  });
});
