/**
 * Replay of networks into TensorRT's INetworkDefinition, checked against the recording
 * TensorRT double: for every layer kind of the catalogue (LAYER_KINDS), the calls native/trt
 * makes carry the right layer type, inputs, dims, axes masks, padding, strides, dtypes and
 * names; profiles and builder settings arrive as the build configuration says; failures of
 * TensorRT become typed errors carrying TensorRT's own message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeProgram, type ReplayBuildOptions } from '../../../lib/backends/tensorrt/program';
import { LAYER_KINDS, Network, type LayerKind, type NetTensor } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { describeWithTensorRT, runDriver, tempFile, type Call, type DriverResult } from './harness';


const OPTIONS: ReplayBuildOptions = { precisions: ['fp32', 'tf32'], workspaceBytes: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 };
const f32 = (shape: number[], seed = 1): Tensor => Tensor.from('float32', shape, Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => (i * seed) % 7));

/** What a sample checks in the recorded calls (`layer` is the add* call, `on(obj)` the calls on an object). */
interface Recorded {
  calls: Call[];
  layer: Call;
  on: (obj: unknown) => Call[];
  setter: (method: string) => Call;
}

interface Sample {
  /** Adds the layer under test (named `L`) to `net`, with its inputs. */
  build(net: Network): void;
  /** The V-call that creates the layer (TensorRT's public method may forward under another name). */
  add: string;
  check(r: Recorded): void;
}

const x4 = (net: Network, name = 'x', shape = [1, 3, 8, 8]): NetTensor => net.addInput(name, 'float32', shape);

/**
 * Layer kinds with tests of their own below instead of a sample: IAttention is no ILayer (it
 * is named and read through its own methods), and some attentions are spelled out first; an
 * nms or unique layer is refused before any call (test/ops/nms-compiled.test.ts, test/ops/unique-compiled.test.ts).
 */
const OWN_TESTS = ['attention', 'nms', 'unique'] as const;
type ReplayedKind = Exclude<LayerKind, (typeof OWN_TESTS)[number]>;
const REPLAYED = LAYER_KINDS.filter((k): k is ReplayedKind => !(OWN_TESTS as readonly string[]).includes(k));

/** One sample network per replayed layer kind; the Record type makes a missing kind a compile error. */
const SAMPLES: Record<ReplayedKind, Sample> = {
  constant: {
    build: (net) => void net.add1({ kind: 'constant', weights: f32([2, 3]) }, [], 'L'),
    add: 'VNetworkDefinition::addConstant',
    check: ({ layer }) => expect(layer.args).toEqual([[2, 3], { type: 0, count: 6, fnv: expect.any(String) }]),
  },
  identity: {
    build: (net) => void net.add1({ kind: 'identity' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addIdentity',
    check: ({ layer }) => expect(layer.args).toEqual(['%x']),
  },
  cast: {
    build: (net) => void net.add1({ kind: 'cast', to: 'float16' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addCast',
    check: ({ layer }) => expect(layer.args).toEqual(['%x', 1]),
  },
  elementwise: {
    build: (net) => void net.add1({ kind: 'elementwise', op: 'sub' }, [x4(net), x4(net, 'y', [1, 3, 1, 8])], 'L'),
    add: 'VNetworkDefinition::addElementWise',
    check: ({ layer }) => expect(layer.args).toEqual(['%x', '%y', 4]),
  },
  unary: {
    build: (net) => void net.add1({ kind: 'unary', op: 'sqrt' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addUnary',
    check: ({ layer }) => expect(layer.args).toEqual(['%x', 2]),
  },
  activation: {
    build: (net) => void net.add1({ kind: 'activation', type: 'clip', alpha: 0, beta: 6 }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addActivation',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%x', 8]);
      expect(setter('VActivationLayer::setAlpha').args).toEqual([0]);
      expect(setter('VActivationLayer::setBeta').args).toEqual([6]);
    },
  },
  matmul: {
    build: (net) => void net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [net.addInput('a', 'float32', [2, 3]), net.addInput('b', 'float32', [4, 3])], 'L'),
    add: 'VNetworkDefinition::addMatrixMultiply',
    check: ({ layer }) => expect(layer.args).toEqual(['%a', 0, '%b', 1]),
  },
  shuffle: {
    build: (net) => void net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 3, 1], reshape: [1, 64, 3], zeroIsPlaceholder: false }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addShuffle',
    check: ({ layer, setter, on }) => {
      expect(layer.args).toEqual(['%x']);
      expect(setter('VShuffleLayer::setFirstTranspose').args).toEqual([[0, 2, 3, 1, 4, 5, 6, 7]]);
      expect(setter('VShuffleLayer::setReshapeDimensions').args).toEqual([[1, 64, 3]]);
      expect(setter('VShuffleLayer::setZeroIsPlaceholder').args).toEqual([false]);
      expect(on(layer.ret).map((c) => c.m)).not.toContain('VShuffleLayer::setSecondTranspose');
    },
  },
  slice: {
    build: (net) => void net.add1({ kind: 'slice', start: [0, 0, 1, 1], size: [1, 3, 4, 4], stride: [1, 1, 2, 2], mode: 'clamp' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addSlice',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%x', [0, 0, 1, 1], [1, 3, 4, 4], [1, 1, 2, 2]]);
      expect(setter('VSliceLayer::setMode').args).toEqual([2]);
    },
  },
  concat: {
    build: (net) => void net.add1({ kind: 'concat', axis: 1 }, [x4(net), x4(net, 'y')], 'L'),
    add: 'VNetworkDefinition::addConcatenation',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual([['%x', '%y'], 2]);
      expect(setter('VConcatenationLayer::setAxis').args).toEqual([1]);
    },
  },
  gather: {
    build: (net) => void net.add1({ kind: 'gather', mode: 'default', axis: 1 }, [net.addInput('d', 'float32', [5, 4]), net.addInput('i', 'int32', [3])], 'L'),
    add: 'VNetworkDefinition::addGatherV2',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%d', '%i', 0]);
      expect(setter('VGatherLayer::setGatherAxis').args).toEqual([1]);
    },
  },
  scatter: {
    build: (net) =>
      void net.add1({ kind: 'scatter', mode: 'element', axis: 1 }, [net.addInput('d', 'float32', [2, 4]), net.addInput('i', 'int64', [2, 2]), net.addInput('u', 'float32', [2, 2])], 'L'),
    add: 'VNetworkDefinition::addScatter',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%d', '%i', '%u', 0]);
      expect(setter('VScatterLayer::setAxis').args).toEqual([1]);
    },
  },
  reduce: {
    build: (net) => void net.add1({ kind: 'reduce', op: 'avg', axes: [2, 3], keepDims: true }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addReduce',
    check: ({ layer }) => expect(layer.args).toEqual(['%x', 4, 0b1100, true]),
  },
  softmax: {
    build: (net) => void net.add1({ kind: 'softmax', axis: 1 }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addSoftMax',
    // Set although it is one axis: TensorRT's default is nbDims-3 (here 1 too, by chance of rank).
    check: ({ setter }) => expect(setter('VSoftMaxLayer::setAxes').args).toEqual([0b10]),
  },
  shape: {
    build: (net) => void net.add1({ kind: 'shape' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addShape',
    check: ({ layer }) => expect(layer.args).toEqual(['%x']),
  },
  fill: {
    build: (net) => void net.add1({ kind: 'fill', dims: [2, 3], alpha: 1, beta: [0.5, 2], dtype: 'float32' }, [], 'L'),
    add: 'VNetworkDefinition::addFillV2',
    check: ({ layer, calls, on }) => {
      expect(layer.args).toEqual([[2, 3], 0, 0]);
      const constants = calls.filter((c) => c.m === 'VNetworkDefinition::addConstant').map((c) => c.args);
      expect(constants).toEqual([
        [[], { type: 0, count: 1, fnv: expect.any(String) }],
        [[2], { type: 0, count: 2, fnv: expect.any(String) }],
      ]);
      const inputs = on(layer.ret).filter((c) => c.m === 'VLayer::setInput').map((c) => c.args);
      expect(inputs).toEqual([[1, '%L/alpha:out'], [2, '%L/beta:out']]);
    },
  },
  select: {
    build: (net) => void net.add1({ kind: 'select' }, [net.addInput('c', 'bool', [2, 3]), net.addInput('a', 'float32', [2, 3]), net.addInput('b', 'float32', [1, 3])], 'L'),
    add: 'VNetworkDefinition::addSelect',
    check: ({ layer }) => expect(layer.args).toEqual(['%c', '%a', '%b']),
  },
  convolution: {
    build: (net) =>
      void net.add1(
        { kind: 'convolution', nbOutputMaps: 4, kernelSize: [3, 3], stride: [2, 1], prePadding: [1, 0], postPadding: [0, 1], dilation: [1, 2], groups: 1, kernel: f32([4, 3, 3, 3]), bias: f32([4]) },
        [x4(net)],
        'L',
      ),
    add: 'VNetworkDefinition::addConvolutionNd',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%x', 4, [3, 3], { type: 0, count: 108, fnv: expect.any(String) }, { type: 0, count: 4, fnv: expect.any(String) }]);
      expect(setter('VConvolutionLayer::setStrideNd').args).toEqual([[2, 1]]);
      expect(setter('VConvolutionLayer::setPrePadding').args).toEqual([[1, 0]]);
      expect(setter('VConvolutionLayer::setPostPadding').args).toEqual([[0, 1]]);
      expect(setter('VConvolutionLayer::setDilationNd').args).toEqual([[1, 2]]);
      expect(setter('VConvolutionLayer::setNbGroups').args).toEqual([1]);
    },
  },
  deconvolution: {
    build: (net) =>
      void net.add1(
        { kind: 'deconvolution', nbOutputMaps: 2, kernelSize: [2, 2], stride: [2, 2], prePadding: [0, 0], postPadding: [0, 0], dilation: [1, 1], groups: 1, kernel: f32([3, 2, 2, 2]), bias: null },
        [x4(net)],
        'L',
      ),
    add: 'VNetworkDefinition::addDeconvolutionNd',
    check: ({ layer, setter }) => {
      // No bias: empty Weights (count 0, no values).
      expect(layer.args).toEqual(['%x', 2, [2, 2], { type: 0, count: 24, fnv: expect.any(String) }, { type: 0, count: 0, fnv: '0' }]);
      expect(setter('VDeconvolutionLayer::setStrideNd').args).toEqual([[2, 2]]);
    },
  },
  pooling: {
    build: (net) =>
      void net.add1(
        { kind: 'pooling', type: 'average', window: [3, 3], stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], paddingMode: 'explicit_round_up', averageCountExcludesPadding: true },
        [x4(net)],
        'L',
      ),
    add: 'VNetworkDefinition::addPoolingNd',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%x', 1, [3, 3]]);
      expect(setter('VPoolingLayer::setStrideNd').args).toEqual([[2, 2]]);
      expect(setter('VPoolingLayer::setPrePadding').args).toEqual([[1, 1]]);
      expect(setter('VPoolingLayer::setPostPadding').args).toEqual([[1, 1]]);
      expect(setter('VPoolingLayer::setPaddingMode').args).toEqual([1]);
      expect(setter('VPoolingLayer::setAverageCountExcludesPadding').args).toEqual([true]);
    },
  },
  normalization: {
    build: (net) =>
      void net.add1({ kind: 'normalization', axes: [2, 3], epsilon: 1e-3, nbGroups: 1 }, [x4(net), net.addInput('s', 'float32', [1, 3, 1, 1]), net.addInput('b', 'float32', [1, 3, 1, 1])], 'L'),
    add: 'VNetworkDefinition::addNormalizationV2',
    check: ({ layer, setter }) => {
      expect(layer.args).toEqual(['%x', '%s', '%b', 0b1100]);
      expect(Math.fround(setter('VNormalizationLayer::setEpsilon').args[0] as number)).toBe(Math.fround(1e-3));
      expect(setter('VNormalizationLayer::setNbGroups').args).toEqual([1]);
    },
  },
  resize: {
    build: (net) =>
      void net.add1({ kind: 'resize', mode: 'linear', outputDims: [1, 3, 16, 12], coordinateTransformation: 'half_pixel', selector: 'upper', nearestRounding: 'floor' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addResize',
    check: ({ setter }) => {
      expect(setter('VResizeLayer::setResizeMode').args).toEqual([1]);
      expect(setter('VResizeLayer::setOutputDimensions').args).toEqual([[1, 3, 16, 12]]);
      expect(setter('VResizeLayer::setCoordinateTransformation').args).toEqual([2]);
      expect(setter('VResizeLayer::setSelectorForSinglePixel').args).toEqual([1]);
      expect(setter('VResizeLayer::setNearestRounding').args).toEqual([2]);
    },
  },
  topk: {
    build: (net) => void net.add({ kind: 'topk', op: 'min', k: 2, axis: 3, indicesType: 'int64' }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addTopKV2',
    check: ({ layer, on }) => {
      expect(layer.args).toEqual(['%x', 1, 2, 0b1000, 8]);
      expect(on(layer.ret).filter((c) => c.m === 'VLayer::getOutput').map((c) => c.args)).toEqual([[0], [1]]);
    },
  },
  cumulative: {
    build: (net) => void net.add1({ kind: 'cumulative', op: 'sum', axis: 1, exclusive: false, reverse: true }, [x4(net)], 'L'),
    add: 'VNetworkDefinition::addCumulative',
    check: ({ layer, calls }) => {
      expect(layer.args).toEqual(['%x', '%L/axis:out', 0, false, true]);
      expect(calls.find((c) => c.m === 'VNetworkDefinition::addConstant')!.args).toEqual([[], { type: 3, count: 1, fnv: expect.any(String) }]);
    },
  },
  nonzero: {
    // The two-argument form (addNonZeroV2) with kINT64 indices: the one-argument form, deprecated in 10.14, gives kINT32.
    build: (net) => void net.add1({ kind: 'nonzero' }, [net.addInput('x', 'bool', [3, 4])], 'L'),
    add: 'VNetworkDefinition::addNonZeroV2',
    check: ({ layer, on }) => {
      expect(layer.args).toEqual(['%x', 8]);
      expect(on(layer.ret).map((c) => c.m)).not.toContain('VNonZeroLayer::setIndicesType');
    },
  },
  quantize: {
    // Per tensor, INT8, of an activation: a 0-D constant scale, no zero point.
    build: (net) => void net.add1({ kind: 'quantize', to: 'int8', axis: 1 }, [x4(net), net.add1({ kind: 'constant', weights: Tensor.from('float32', [], [0.05]) }, [], 's')], 'L'),
    add: 'VNetworkDefinition::addQuantizeV2',
    check: ({ layer, setter, on }) => {
      expect(layer.args).toEqual(['%x', '%s:out', 2]); // DataType::kINT8 given at creation
      expect(setter('VQuantizeLayer::setAxis').args).toEqual([1]);
      expect(on(layer.ret).map((c) => c.m)).not.toContain('VQuantizeLayer::setBlockShape');
      expect(on(layer.ret).map((c) => c.m)).not.toContain('VLayer::setInput');
    },
  },
  dequantize: {
    // Per tensor, FP8 (a network input) to float16.
    build: (net) =>
      void net.add1({ kind: 'dequantize', to: 'float16', axis: 0 }, [net.addInput('q', 'float8e4m3fn', [2, 8]), net.add1({ kind: 'constant', weights: Tensor.from('float16', [], [0.5]) }, [], 's')], 'L'),
    add: 'VNetworkDefinition::addDequantizeV2',
    check: ({ layer, setter, calls }) => {
      expect(layer.args).toEqual(['%q', '%s:out', 1]); // DataType::kHALF
      expect(setter('VDequantizeLayer::setAxis').args).toEqual([0]);
      expect(calls.find((c) => c.m === 'VNetworkDefinition::addConstant')!.args).toEqual([[], { type: 1, count: 1, fnv: expect.any(String) }]);
    },
  },
};

describeWithTensorRT('TensorRT network replay against the recording double', (ctx) => {
  const build = (net: Network, options: ReplayBuildOptions = OPTIONS, env: Record<string, string> = {}, extra: string[] = []): DriverResult => {
    const program = tempFile(ctx.tmp, `${net.name}.program`, encodeProgram(net, options));
    return runDriver(ctx.built, ['build', program, path.join(ctx.tmp, 'plan'), path.join(ctx.tmp, 'cache'), ...extra], env);
  };

  it('generates every apiv class and pure virtual method of NvInferImpl.h', () => {
    // 84 classes besides the empty VRoot, 744 methods, 83 public holders (docs/tensorrt.md).
    expect(ctx.built.generated).toEqual({ classes: 84, methods: 744, shells: 83 });
  });

  it('covers every layer kind of the catalogue (the samples here, the others in their own tests below)', () => {
    expect([...Object.keys(SAMPLES), ...OWN_TESTS].sort()).toEqual([...LAYER_KINDS].sort());
  });

  /** q [1, 4, L, 8], k and v [1, kvHeads, S, 8] → attention "L" → "out"; a mask input when given. */
  const attentionNet = (o: { L: number; S: number; kvHeads: number; causal: boolean; scale: number; mask?: 'bool'; maskL?: number; rank?: 3 }): Network => {
    const net = new Network('replay_attention');
    const shape = (h: number, s: number): number[] => (o.rank === 3 ? [h, s, 8] : [1, h, s, 8]);
    const q = net.addInput('q', 'float16', shape(4, o.L));
    const k = net.addInput('k', 'float16', shape(o.kvHeads, o.S));
    const v = net.addInput('v', 'float16', shape(o.kvHeads, o.S));
    const inputs = o.mask === undefined ? [q, k, v] : [q, k, v, net.addInput('m', 'bool', [1, 1, o.maskL ?? o.L, o.S])];
    net.markOutput(net.add1({ kind: 'attention', scale: o.scale, causal: o.causal }, inputs, 'L'), 'out');
    return net;
  };

  it('an attention replays as one IAttention: softmax, the causal flag, grouped heads, decomposable, the queries scaled first', () => {
    const { result, calls } = build(attentionNet({ L: 6, S: 6, kvHeads: 2, causal: true, scale: 0.5 }));
    expect(result).toMatchObject({ ok: true });
    const adds = calls.filter((c) => c.m === 'VNetworkDefinition::addAttention');
    expect(adds).toHaveLength(1);
    // query (scaled by a product with a constant 0.5), key, value, AttentionNormalizationOp::kSOFTMAX, causal.
    expect(adds[0]!.args).toEqual(['%L/scaled_query:out', '%k', '%v', 1, true]);
    const on = (m: string): Call[] => calls.filter((c) => c.obj === adds[0]!.ret && c.m === m);
    expect(on('VAttention::setDecomposable').map((c) => c.args)).toEqual([[true]]);
    expect(on('VAttention::setMask')).toHaveLength(0);
    expect(on('VAttention::setName').map((c) => c.args)).toEqual([['L']]);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addElementWise')).toHaveLength(1);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addMatrixMultiply')).toHaveLength(0);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::markOutput').map((c) => c.args[0])).toEqual(['%out']);
  });

  it('a mask goes to IAttention::setMask; a scale of 1 adds no product', () => {
    const { result, calls } = build(attentionNet({ L: 3, S: 5, kvHeads: 4, causal: false, scale: 1, mask: 'bool' }));
    expect(result).toMatchObject({ ok: true });
    const add = calls.find((c) => c.m === 'VNetworkDefinition::addAttention')!;
    expect(add.args).toEqual(['%q', '%k', '%v', 1, false]);
    expect(calls.filter((c) => c.obj === add.ret && c.m === 'VAttention::setMask').map((c) => c.args)).toEqual([['%m']]);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addElementWise')).toHaveLength(0);
  });

  it.each([
    ['rank 3 (IAttention takes rank 4)', { L: 4, S: 4, kvHeads: 4, causal: false, scale: 0.5, rank: 3 as const }],
    ["causal over L ≠ S (IAttention's causal flag is for square scores)", { L: 3, S: 7, kvHeads: 4, causal: true, scale: 0.5 }],
    ['a mask broadcast along the queries (IAttention broadcasts batch and heads only)', { L: 3, S: 5, kvHeads: 4, causal: false, scale: 0.5, mask: 'bool' as const, maskL: 1 }],
  ])('spelled out for TensorRT: %s', (_, o) => {
    const { result, calls } = build(attentionNet(o));
    expect(result).toMatchObject({ ok: true });
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addAttention')).toHaveLength(0);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addMatrixMultiply')).toHaveLength(2);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addSoftMax')).toHaveLength(1);
  });

  it('spells an RMS normalization out before replay (10.16 has no RMS mode): a mean of squares, no INormalizationLayer', () => {
    const net = new Network('replay_rms');
    const x = net.addInput('x', 'float32', [2, 8]);
    const ones = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 8], new Array<number>(8).fill(1)) }, [], 'scale');
    const zeros = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 1], [0]) }, [], 'bias');
    net.markOutput(net.add1({ kind: 'normalization', axes: [1], epsilon: 1e-6, nbGroups: 1, rms: true }, [x, ones, zeros], 'L'), 'out');
    const { result, calls } = build(net);
    expect(result).toMatchObject({ ok: true });
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addNormalizationV2')).toHaveLength(0);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addReduce')).toHaveLength(1);
  });

  describe('quantize and dequantize', () => {
    const constant = (net: Network, name: string, t: Tensor): NetTensor => net.add1({ kind: 'constant', weights: t }, [], name);
    const byMethod = (calls: Call[], m: string): Call[] => calls.filter((c) => c.m === m);
    const onLayer = (calls: Call[], layer: Call, m: string): unknown[][] => calls.filter((c) => c.obj === layer.ret && c.m === m).map((c) => c.args);

    it('per-axis INT8 weights with a zero point: both layers whole, the axis set, the zero point as input 2', () => {
      const net = new Network('replay_q_per_axis');
      const x = net.addInput('x', 'float32', [2, 3]);
      const w = constant(net, 'w', f32([4, 3]));
      const s = constant(net, 's', Tensor.from('float32', [4], [0.1, 0.2, 0.3, 0.4]));
      const zp = constant(net, 'zp', Tensor.from('int8', [4], [0, 0, 0, 0]));
      const q = net.add1({ kind: 'quantize', to: 'int8', axis: 0 }, [w, s, zp], 'Q');
      const dq = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [q, s, zp], 'DQ');
      net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [x, dq], 'M'), 'y');
      const { result, calls } = build(net);
      expect(result).toMatchObject({ ok: true });
      const [qAdd] = byMethod(calls, 'VNetworkDefinition::addQuantizeV2');
      const [dqAdd] = byMethod(calls, 'VNetworkDefinition::addDequantizeV2');
      expect(qAdd!.args).toEqual(['%w:out', '%s:out', 2]);
      expect(dqAdd!.args).toEqual(['%Q:out', '%s:out', 0]);
      for (const [add, cls] of [[qAdd!, 'VQuantizeLayer'], [dqAdd!, 'VDequantizeLayer']] as const) {
        expect(onLayer(calls, add, `${cls}::setAxis`)).toEqual([[0]]);
        expect(onLayer(calls, add, `${cls}::setBlockShape`)).toEqual([]);
        expect(onLayer(calls, add, 'VLayer::setInput')).toEqual([[2, '%zp:out']]);
      }
      expect(byMethod(calls, 'VNetworkDefinition::addConstant').map((c) => c.args[1])).toEqual([
        { type: 0, count: 12, fnv: expect.any(String) },
        { type: 0, count: 4, fnv: expect.any(String) },
        { type: 2, count: 4, fnv: expect.any(String) }, // the INT8 zero point
      ]);
    });

    it('FP8 per tensor of an activation and back, a float16 scale, FP8 weights', () => {
      const net = new Network('replay_q_fp8');
      const s = constant(net, 's', Tensor.from('float16', [], [0.25]));
      const e = constant(net, 'e', Tensor.from('float8e4m3fn', [2], [1, -2]));
      const q = net.add1({ kind: 'quantize', to: 'float8e4m3fn', axis: 1 }, [net.addInput('x', 'float16', [2, 8]), s], 'Q');
      net.markOutput(net.add1({ kind: 'dequantize', to: 'float16', axis: 1 }, [q, s], 'DQ'), 'y');
      net.markOutput(net.add1({ kind: 'dequantize', to: 'float16', axis: 0 }, [e, s], 'EDQ'), 'z');
      const { result, calls } = build(net);
      expect(result).toMatchObject({ ok: true });
      const [qAdd] = byMethod(calls, 'VNetworkDefinition::addQuantizeV2');
      const [dqAdd] = byMethod(calls, 'VNetworkDefinition::addDequantizeV2');
      expect(qAdd!.args).toEqual(['%x', '%s:out', 6]); // DataType::kFP8
      expect(dqAdd!.args).toEqual(['%Q:out', '%s:out', 1]);
      expect(onLayer(calls, qAdd!, 'VLayer::setInput')).toEqual([]);
      expect(onLayer(calls, dqAdd!, 'VLayer::setInput')).toEqual([]);
      expect(byMethod(calls, 'VNetworkDefinition::addDequantizeV2')[1]!.args).toEqual(['%e:out', '%s:out', 1]);
      expect(byMethod(calls, 'VNetworkDefinition::addConstant').map((c) => c.args)).toEqual([
        [[], { type: 1, count: 1, fnv: expect.any(String) }],
        [[2], { type: 6, count: 2, fnv: expect.any(String) }], // FP8 weights, one byte each
      ]);
    });

    it('INT4 weights quantized in blocks of 64: the block shape on both layers, an INT4 zero point counted in values', () => {
      const net = new Network('replay_q_int4');
      const x = net.addInput('x', 'float32', [3, 128]);
      const w = constant(net, 'w', f32([128, 4]));
      const s = constant(net, 's', Tensor.from('float32', [2, 4], [1, 2, 3, 4, 5, 6, 7, 8]));
      const zp = constant(net, 'zp', Tensor.from('int4', [2, 4], new Array<number>(8).fill(0)));
      const q = net.add1({ kind: 'quantize', to: 'int4', axis: 0, blockSize: 64 }, [w, s], 'Q');
      const dq = net.add1({ kind: 'dequantize', to: 'float32', axis: 0, blockSize: 64 }, [q, s, zp], 'DQ');
      net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [x, dq], 'M'), 'y');
      const { result, calls } = build(net);
      expect(result).toMatchObject({ ok: true });
      const [qAdd] = byMethod(calls, 'VNetworkDefinition::addQuantizeV2');
      const [dqAdd] = byMethod(calls, 'VNetworkDefinition::addDequantizeV2');
      expect(qAdd!.args).toEqual(['%w:out', '%s:out', 9]); // DataType::kINT4
      expect(dqAdd!.args).toEqual(['%Q:out', '%s:out', 0]);
      expect(onLayer(calls, qAdd!, 'VQuantizeLayer::setBlockShape')).toEqual([[[64, 1]]]);
      expect(onLayer(calls, dqAdd!, 'VDequantizeLayer::setBlockShape')).toEqual([[[64, 1]]]);
      expect(onLayer(calls, qAdd!, 'VQuantizeLayer::setAxis')).toEqual([[0]]);
      expect(onLayer(calls, dqAdd!, 'VLayer::setInput')).toEqual([[2, '%zp:out']]);
      expect(byMethod(calls, 'VNetworkDefinition::addConstant').map((c) => c.args[0])).toEqual([[128, 4], [2, 4], [2, 4]]);
      expect(byMethod(calls, 'VNetworkDefinition::addConstant')[2]!.args[1]).toMatchObject({ type: 9, count: 8 });
    });

    it('an INT4 constant dequantized in blocks of 128 along the last axis: kINT4 weights counted in values', () => {
      const net = new Network('replay_dq_int4_constant');
      // First, so that the program holds more bytes after its 64 packed ones than the double hashes (it counts a byte a value).
      const q = constant(net, 'q', Tensor.from('int4', [1, 128], Array.from({ length: 128 }, (_, i) => (i % 16) - 8)));
      const s = constant(net, 's', Tensor.from('float16', [1, 1], [0.5]));
      const dq = net.add1({ kind: 'dequantize', to: 'float16', axis: 1, blockSize: 128 }, [q, s], 'DQ');
      net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [net.addInput('x', 'float16', [3, 128]), dq], 'M'), 'y');
      const { result, calls } = build(net);
      expect(result).toMatchObject({ ok: true });
      expect(byMethod(calls, 'VNetworkDefinition::addConstant')[0]!.args).toEqual([[1, 128], { type: 9, count: 128, fnv: expect.any(String) }]);
      const [dqAdd] = byMethod(calls, 'VNetworkDefinition::addDequantizeV2');
      expect(dqAdd!.args).toEqual(['%q:out', '%s:out', 1]);
      expect(onLayer(calls, dqAdd!, 'VDequantizeLayer::setAxis')).toEqual([[1]]);
      expect(onLayer(calls, dqAdd!, 'VDequantizeLayer::setBlockShape')).toEqual([[[1, 128]]]);
    });
  });

  describe.each(REPLAYED)('layer kind %s', (kind) => {
    it('replays with the right call, arguments and names', () => {
      const sample = SAMPLES[kind];
      const net = new Network(`replay_${kind}`);
      sample.build(net);
      const layerIr = net.layers.find((l) => l.name === 'L')!;
      for (const id of layerIr.outputs) net.markOutput(net.tensor(id), `out${id}`);
      const { result, calls } = build(net);
      expect(result).toMatchObject({ ok: true });
      const adds = calls.filter((c) => c.m === sample.add);
      expect(adds.length).toBeGreaterThanOrEqual(1);
      const layer = adds[adds.length - 1]!;
      const on = (obj: unknown): Call[] => calls.filter((c) => c.obj === obj);
      const setter = (method: string): Call => {
        const found = on(layer.ret).filter((c) => c.m === method);
        if (found.length !== 1) throw new Error(`expected one ${method} on ${String(layer.ret)}, found ${found.length}`);
        return found[0]!;
      };
      sample.check({ calls, layer, on, setter });
      // Named after the IR layer; every output tensor named after the IR tensor, then as the network output.
      expect(on(layer.ret).filter((c) => c.m === 'VLayer::setName').map((c) => c.args)).toEqual([['L']]);
      const outputs = on(layer.ret).filter((c) => c.m === 'VLayer::getOutput').map((c) => c.ret);
      expect(outputs).toHaveLength(layerIr.outputs.length);
      outputs.forEach((t, i) => {
        const names = on(t).filter((c) => c.m === 'VTensor::setName').map((c) => c.args[0]);
        expect(names).toEqual([net.tensor(layerIr.outputs[i]!).name, `out${layerIr.outputs[i]}`]);
      });
      const marked = calls.filter((c) => c.m === 'VNetworkDefinition::markOutput').map((c) => c.args[0]);
      expect(marked).toEqual(layerIr.outputs.map((id) => `%out${id}`));
      // Network inputs: name, DataType and dims as declared.
      const inputs = calls.filter((c) => c.m === 'VNetworkDefinition::addInput').map((c) => c.args);
      const DT: Record<string, number> = { float32: 0, float16: 1, int8: 2, int32: 3, bool: 4, float8e4m3fn: 6, int64: 8 };
      expect(inputs).toEqual(net.inputs.map((i) => [i.name, DT[net.tensor(i.tensor).dtype], net.tensor(i.tensor).shape]));
    });
  });

  it('creates a strongly typed network and applies the build configuration', () => {
    const net = new Network('config');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { result, calls } = build(net, { precisions: ['fp32'], workspaceBytes: 1 << 30, hardwareCompatibility: 'ampere+', optimizationLevel: 5, versionCompatible: true, timingCache: new TextEncoder().encode('CACHE-IN') });
    expect(result).toMatchObject({ ok: true, libraryVersion: 101600, hardwareCompatibility: 1 });
    const one = (m: string): Call => {
      const found = calls.filter((c) => c.m === m);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    expect(one('VBuilder::createNetworkV2').args).toEqual([2]); // 1U << kSTRONGLY_TYPED
    expect(one('VBuilderConfig::setBuilderOptimizationLevel').args).toEqual([5]);
    expect(one('VBuilderConfig::setMemoryPoolLimit').args).toEqual([0, 1 << 30]);
    expect(one('VBuilderConfig::clearFlag').args).toEqual([6]); // kTF32: fp32 only
    expect(one('VBuilderConfig::setFlag').args).toEqual([13]); // kVERSION_COMPATIBLE
    expect(one('VBuilderConfig::setHardwareCompatibilityLevel').args).toEqual([1]);
    expect(one('VBuilderConfig::createTimingCache').args).toEqual([{ size: 8, fnv: expect.any(String) }, 8]);
    expect(one('VBuilderConfig::setTimingCache').args).toEqual([expect.stringMatching(/^ITimingCache#/), true]);
    expect(one('VBuilderConfig::setProgressMonitor').args).toEqual([expect.stringMatching(/^0x[0-9a-f]+$/)]);
    expect(fs.readFileSync(path.join(ctx.tmp, 'cache'), 'utf8')).toBe('CACHE-IN');
    // No precision flags on a strongly typed network: types come from the network.
    expect(calls.filter((c) => c.m === 'VBuilderConfig::setFlag' && [0, 17].includes(c.args[0] as number))).toEqual([]);
    // Everything made is released, the network before its builder.
    const destroyed = calls.filter((c) => c.m === '~').map((c) => c.obj);
    expect(destroyed.indexOf('INetworkDefinition#1' as never)).toBeGreaterThanOrEqual(0);
    const order = ['INetworkDefinition', 'IBuilderConfig', 'IBuilder', 'ITimingCache'].map((cls) => destroyed.findIndex((o) => String(o).startsWith(`${cls}#`)));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('leaves TF32 on and the workspace at TensorRT’s default when not limited', () => {
    const net = new Network('defaults');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { calls } = build(net);
    expect(calls.filter((c) => ['VBuilderConfig::clearFlag', 'VBuilderConfig::setMemoryPoolLimit', 'VBuilderConfig::setFlag'].includes(c.m))).toEqual([]);
    expect(calls.find((c) => c.m === 'VBuilderConfig::setHardwareCompatibilityLevel')!.args).toEqual([0]);
  });

  it('declares optimization profiles for dynamic inputs, one per profile', () => {
    const net = new Network('profiles');
    const x = net.addInput('x', 'float32', [-1, 3, -1], [
      { min: [1, 3, 4], opt: [2, 3, 8], max: [4, 3, 16] },
      { min: [8, 3, 4], opt: [8, 3, 4], max: [16, 3, 4] },
    ]);
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x], 'L'), 'y');
    const { result, calls } = build(net);
    expect(result).toMatchObject({ ok: true });
    expect(calls.find((c) => c.m === 'VNetworkDefinition::addInput')!.args).toEqual(['x', 0, [-1, 3, -1]]);
    const profiles = calls.filter((c) => c.m === 'VBuilder::createOptimizationProfile').map((c) => c.ret);
    expect(profiles).toHaveLength(2);
    expect(calls.filter((c) => c.obj === profiles[0] && c.m !== '~').map((c) => c.args)).toEqual([
      ['x', 0, [1, 3, 4]],
      ['x', 1, [2, 3, 8]],
      ['x', 2, [4, 3, 16]],
    ]);
    expect(calls.filter((c) => c.obj === profiles[1] && c.m === 'VOptimizationProfile::setDimensions').map((c) => c.args[2])).toEqual([[8, 3, 4], [8, 3, 4], [16, 3, 4]]);
    expect(calls.filter((c) => c.m === 'VBuilderConfig::addOptimizationProfile').map((c) => c.args)).toEqual([[profiles[0]], [profiles[1]]]);
  });

  it('gives an output that is also an input, or a second output of one tensor, an identity layer of its own', () => {
    const net = new Network('aliases');
    const x = x4(net);
    const y = net.add1({ kind: 'unary', op: 'exp' }, [x], 'L');
    net.markOutput(x, 'x_out');
    net.markOutput(y, 'y1');
    net.markOutput(y, 'y2');
    const { result, calls } = build(net);
    expect(result).toMatchObject({ ok: true });
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::addIdentity').map((c) => c.args)).toEqual([['%x'], ['%y1']]);
    expect(calls.filter((c) => c.m === 'VNetworkDefinition::markOutput').map((c) => c.args)).toEqual([['%x_out'], ['%y1'], ['%y2']]);
  });

  it('forwards the TensorRT log and build progress from TensorRT’s threads', () => {
    const net = new Network('events');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { events } = build(net);
    // The driver forwards every severity; the addon filters kVERBOSE (backend.test.ts).
    const p = (kind: number, phase: string, parent: string, step: number): Record<string, unknown> => ({ event: 'progress', kind, phase, parent, step });
    // A phase inside `Building engine`: its start (with the step count), each step, its finish.
    const nested = (phase: string, steps: number): Array<Record<string, unknown>> => [
      p(0, phase, 'Building engine', steps),
      ...Array.from({ length: steps }, (_, i) => p(1, phase, '', i)),
      p(2, phase, '', 0),
    ];
    expect(events).toEqual([
      { event: 'log', severity: 3, message: 'fake build: replayed network accepted' },
      { event: 'log', severity: 4, message: 'fake build: a verbose line' },
      { event: 'log', severity: 2, message: 'fake build: a warning line' },
      p(0, 'Building engine', '', 2),
      ...nested('Layer fusion', 2),
      p(1, 'Building engine', '', 0),
      ...nested('Tactic selection', 3),
      p(1, 'Building engine', '', 1),
      p(2, 'Building engine', '', 0),
    ]);
  });

  it('stops the build when cancelled from a progress event', () => {
    const net = new Network('cancel');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { result, events } = build(net, OPTIONS, {}, ['cancel']);
    expect(result).toMatchObject({ ok: false, code: 'E_ABORTED', message: expect.stringContaining('cancelled') });
    // The first stepComplete answers false; TensorRT then finishes the phases it started and stops.
    expect(events.filter((e) => e.kind === 1)).toEqual([{ event: 'progress', kind: 1, phase: 'Layer fusion', parent: '', step: 0 }]);
    expect(events.filter((e) => e.kind === 2).map((e) => e.phase)).toEqual(['Layer fusion', 'Building engine']);
  });

  it.each([
    ['VNetworkDefinition::addUnary', 'adding layer "L"'],
    ['VBuilder::buildSerializedNetwork', 'buildSerializedNetwork()'],
    ['VBuilder::createNetworkV2', 'createNetworkV2(kSTRONGLY_TYPED)'],
    ['createInferBuilder_INTERNAL', 'createInferBuilder'],
  ])('a failure of %s is E_TENSORRT with TensorRT’s message', (method, call) => {
    const net = new Network('fails');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { result } = build(net, OPTIONS, { FAKE_TRT_FAIL: method });
    expect(result).toEqual({
      ok: false,
      code: 'E_TENSORRT',
      message: `TensorRT failed at ${call}: fake failure injected in ${method}`,
      details: { call, tensorrtMessage: `fake failure injected in ${method}` },
    });
  });

  it.each([
    ['100800', 'TensorRT 10.8 changed'],
    ['101500', 'methods older libraries lack'],
    ['110000', 'another major version'],
  ])('a libnvinfer of version %s is refused with E_TENSORRT_MISSING naming both versions', (version, why) => {
    const net = new Network('version');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const { result, calls } = build(net, OPTIONS, { FAKE_TRT_LIB_VERSION: version });
    expect(result).toMatchObject({ ok: false, code: 'E_TENSORRT_MISSING', details: { headerVersion: '10.16.0' } });
    expect(result.message).toContain(why);
    expect(calls).toEqual([]);
  });

  it('refuses a malformed program with E_BAD_MODEL naming the byte offset, without calling TensorRT further', () => {
    const net = new Network('truncated');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x4(net)], 'L'), 'y');
    const program = encodeProgram(net, OPTIONS);
    const file = tempFile(ctx.tmp, 'truncated.program', program.subarray(0, program.length - 12));
    const { result, calls } = runDriver(ctx.built, ['build', file, path.join(ctx.tmp, 'plan'), path.join(ctx.tmp, 'cache')]);
    expect(result).toMatchObject({ ok: false, code: 'E_BAD_MODEL', message: expect.stringMatching(/^replay program, byte \d+: truncated/) });
    expect(calls.some((c) => c.m === 'VBuilder::buildSerializedNetwork')).toBe(false);
  });
});
