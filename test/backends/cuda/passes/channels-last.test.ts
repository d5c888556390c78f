/**
 * The cuda backend's channels-last pass (lib/backends/cuda/passes/channels-last.ts) and convolution
 * epilogue pass (lib/backends/cuda/passes/conv-epilogue.ts) on a small ResNet (a stem, max pool, a
 * bottleneck block with a downsample branch, one with an identity, a global average pool and a
 * classifier): each rewritten network must compute what the original does on the reference
 * backend, and the lowered plan (channels-last cuDNN steps, fused ReLU and residual, the NHWC
 * pooling kernel) must compute it on the CPU emulator of the GPU plan.
 */
import * as path from 'node:path';

import { channelsLast } from '../../../../lib/backends/cuda/passes/channels-last';
import { foldConvolutionAffine } from '../../../../lib/backends/cuda/passes/fold-affine';
import { deserializeEngine } from '../../../../lib/backends/reference/engine-format';
import { compile } from '../../../../lib/compile';
import { fuseConvEpilogues } from '../../../../lib/backends/cuda/passes/conv-epilogue';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { Network, type NetTensor } from '../../../../lib/network';
import type { LayerParams } from '../../../../lib/network/layers';
import { reducePrecision } from '../../../../lib/network/precision';
import { deserializeNetworkFromBuffer, serializeNetworkToBuffer } from '../../../../lib/network/serialize';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, FP32, type Tolerance } from '../../../helpers/compare';
import { FIXTURES, loadFixture } from '../../../helpers/fixtures';
import { Random } from '../../../helpers/random';
import { emulateLowered } from '../emulated-network';

const random = new Random(7);
const FP16: Tolerance = { rtol: 2e-2, atol: 2e-2 };

function conv(net: Network, x: NetTensor, c: number, k: number, size: number, options: { stride?: number; groups?: number; asymmetric?: boolean; name: string }): NetTensor {
  const pad = Math.floor(size / 2);
  const groups = options.groups ?? 1;
  const params: LayerParams = {
    kind: 'convolution',
    nbOutputMaps: k,
    kernelSize: [size, size],
    stride: [options.stride ?? 1, options.stride ?? 1],
    prePadding: [pad, pad],
    postPadding: options.asymmetric ? [pad + 1, pad] : [pad, pad],
    dilation: [1, 1],
    groups,
    kernel: random.tensor([k, c / groups, size, size], 'float32', -1 / Math.sqrt(c * size * size), 1 / Math.sqrt(c * size * size)),
    bias: random.tensor([k], 'float32'),
  };
  return net.add1(params, [x], options.name);
}

const relu = (net: Network, x: NetTensor, name: string): NetTensor => net.add1({ kind: 'activation', type: 'relu' }, [x], name);

function bottleneck(net: Network, x: NetTensor, c: number, width: number, out: number, name: string, downsample: boolean): NetTensor {
  const a = relu(net, conv(net, x, c, width, 1, { name: `${name}.conv1` }), `${name}.relu1`);
  const b = relu(net, conv(net, a, width, width, 3, { name: `${name}.conv2` }), `${name}.relu2`);
  const d = conv(net, b, width, out, 1, { name: `${name}.conv3` });
  // As torchvision: the downsample branch is computed after conv3.
  const identity = downsample ? conv(net, x, c, out, 1, { name: `${name}.downsample` }) : x;
  return relu(net, net.add1({ kind: 'elementwise', op: 'sum' }, [d, identity], `${name}.add`), `${name}.relu3`);
}

/** A ResNet in miniature, fp32, with a dynamic batch. */
function tinyResnet(): Network {
  const net = new Network('tiny-resnet');
  const x = net.addInput('x', 'float32', [-1, 3, 12, 12], [{ min: [1, 3, 12, 12], opt: [2, 3, 12, 12], max: [4, 3, 12, 12] }]);
  const stem = relu(net, conv(net, x, 3, 16, 3, { stride: 2, name: 'stem' }), 'stem.relu');
  const pooled = net.add1(
    { kind: 'pooling', type: 'max', window: [3, 3], stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], paddingMode: 'explicit_round_down', averageCountExcludesPadding: true },
    [stem],
    'maxpool',
  );
  // A per-channel scale (a constant [1, C, 1, 1]) between the pool and the blocks: permuted at build.
  const scale = net.add1({ kind: 'constant', weights: random.tensor([1, 16, 1, 1], 'float32') }, [], 'scale');
  const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [pooled, scale], 'scaled');
  const b1 = bottleneck(net, scaled, 16, 8, 32, 'layer1.0', true);
  const b2 = bottleneck(net, b1, 32, 8, 32, 'layer1.1', false);
  const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [2, 3], keepDims: false }, [b2], 'avgpool');
  const fc = net.add1({ kind: 'constant', weights: random.tensor([32, 5], 'float32') }, [], 'fc.weight');
  net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [mean, fc], 'fc'), 'logits');
  return net;
}

const run = (net: Network, feeds: Record<string, Tensor>): Tensor => new ReferenceRunner(net).run(feeds).logits!;
const kinds = (net: Network): string[] => net.layers.map((l) => l.params.kind);
const image = (batch: number): Tensor => random.tensor([batch, 3, 12, 12], 'float32');

describe('channels-last pass', () => {
  test('every 2-D convolution goes channels-last with one transpose (the input), and the network computes the same', () => {
    const net = tinyResnet();
    const { network, convolutions, transposes } = channelsLast(net, { dtypes: ['float32'] });
    expect([convolutions, transposes]).toEqual([8, 1]);
    const params = network.layers.map((l) => l.params);
    expect(params.filter((p) => p.kind === 'convolution').every((p) => p.kind === 'convolution' && p.channelsLast === true)).toBe(true);
    expect(params.find((p) => p.kind === 'pooling')).toMatchObject({ channelsLast: true });
    // The global mean reduces H and W of the NHWC tensor and gives [N, C] as before.
    expect(params.find((p) => p.kind === 'reduce')).toMatchObject({ axes: [1, 2], keepDims: false });
    expect(kinds(network).filter((k) => k === 'shuffle')).toHaveLength(1);
    for (const batch of [1, 3]) {
      const x = image(batch);
      expectClose(run(network, { x }), run(net, { x }), FP32, `batch ${batch}`);
    }
    // Pure: the original keeps its layout.
    expect(net.layers.some((l) => l.params.kind === 'convolution' && l.params.channelsLast === true)).toBe(false);
  });

  test('fp32 convolutions stay as they are by default (cuDNN is measured faster channels-last in fp16/bf16 only); grouped (not depthwise) and asymmetric ones always', () => {
    const fp32 = tinyResnet();
    expect(channelsLast(fp32).network).toBe(fp32);
    const net = new Network('other');
    const x = net.addInput('x', 'float32', [1, 8, 6, 6]);
    const grouped = conv(net, x, 8, 8, 3, { groups: 2, name: 'grouped' });
    net.markOutput(conv(net, grouped, 8, 4, 2, { asymmetric: true, name: 'asymmetric' }), 'y');
    const half = reducePrecision(net, ['fp16']).network;
    expect(channelsLast(half).convolutions).toBe(0);
    expect(channelsLast(half).network).toBe(half);
  });

  test('a channel concatenation (SqueezeNet\'s fire module) stays channels-last on axis 3', () => {
    const net = new Network('fire');
    const x = net.addInput('x', 'float32', [2, 4, 6, 6]);
    const squeeze = relu(net, conv(net, x, 4, 3, 1, { name: 'squeeze' }), 'squeeze.relu');
    const e1 = relu(net, conv(net, squeeze, 3, 5, 1, { name: 'expand1x1' }), 'e1.relu');
    const e3 = relu(net, conv(net, squeeze, 3, 5, 3, { name: 'expand3x3' }), 'e3.relu');
    const cat = net.add1({ kind: 'concat', axis: 1 }, [e1, e3], 'cat');
    net.markOutput(conv(net, cat, 10, 2, 1, { name: 'next' }), 'y');
    const { network, transposes } = channelsLast(net, { dtypes: ['float32'] });
    // The input and the output: nothing between the convolutions.
    expect(transposes).toBe(2);
    expect(network.layers.find((l) => l.params.kind === 'concat')!.params).toMatchObject({ axis: 3 });
    const xv = random.tensor([2, 4, 6, 6], 'float32');
    expectClose(new ReferenceRunner(network).run({ x: xv }).y!, new ReferenceRunner(net).run({ x: xv }).y!, FP32, 'fire');
  });

  test('a reduction whose output order would change, and a network output in the middle, get transposes back', () => {
    const net = new Network('edges');
    const x = net.addInput('x', 'float32', [2, 4, 5, 5]);
    const c = conv(net, x, 4, 6, 3, { name: 'c' });
    net.markOutput(c, 'features');
    // Reducing only W keeps [N, C, H] channels-first, which the NHWC tensor cannot give directly.
    net.markOutput(net.add1({ kind: 'reduce', op: 'max', axes: [3], keepDims: false }, [c], 'rowmax'), 'rowmax');
    const { network, transposes } = channelsLast(net, { dtypes: ['float32'] });
    expect(transposes).toBe(2);
    const xv = random.tensor([2, 4, 5, 5], 'float32');
    const [want, got] = [new ReferenceRunner(net).run({ x: xv }), new ReferenceRunner(network).run({ x: xv })];
    expectClose(got.features!, want.features!, FP32, 'features');
    expectClose(got.rowmax!, want.rowmax!, FP32, 'rowmax');
  });
});

/** MobileNetV3's inverted residual in miniature: 1×1 expand, depthwise 3×3, squeeze-excitation (mean, two 1×1, sigmoid, scale), 1×1 project, residual. */
function invertedResidual(): Network {
  const net = new Network('inverted-residual');
  const x = net.addInput('x', 'float32', [2, 8, 10, 10]);
  const expand = relu(net, conv(net, x, 8, 16, 1, { name: 'expand' }), 'expand.relu');
  const dw = relu(net, conv(net, expand, 16, 16, 3, { groups: 16, name: 'depthwise' }), 'depthwise.relu');
  const squeezed = net.add1({ kind: 'reduce', op: 'avg', axes: [2, 3], keepDims: true }, [dw], 'se.mean');
  const reduced = relu(net, conv(net, squeezed, 16, 4, 1, { name: 'se.fc1' }), 'se.relu');
  const gate = net.add1({ kind: 'activation', type: 'sigmoid' }, [conv(net, reduced, 4, 16, 1, { name: 'se.fc2' })], 'se.gate');
  const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [dw, gate], 'se.scale');
  const project = conv(net, scaled, 16, 8, 1, { name: 'project' });
  net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [project, x], 'residual'), 'y');
  return net;
}

/** ConvNeXt's block in miniature: depthwise 7×7, the model's own permute to [N, H, W, C], a per-channel scale and activation there, the permute back, the residual, then a 1×1 convolution. */
function convnextBlock(): Network {
  const net = new Network('convnext-block');
  const x = net.addInput('x', 'float32', [2, 8, 9, 9]);
  const dw = conv(net, x, 8, 8, 7, { groups: 8, name: 'dwconv' });
  const nhwc = net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 3, 1], zeroIsPlaceholder: false }, [dw], 'permute');
  const gamma = net.add1({ kind: 'constant', weights: random.tensor([1, 1, 1, 8], 'float32') }, [], 'gamma');
  const mlp = relu(net, net.add1({ kind: 'elementwise', op: 'prod' }, [nhwc, gamma], 'scale'), 'act');
  const back = net.add1({ kind: 'shuffle', firstTranspose: [0, 3, 1, 2], zeroIsPlaceholder: false }, [mlp], 'permute_back');
  const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [back, x], 'residual');
  net.markOutput(conv(net, sum, 8, 4, 1, { name: 'next' }), 'y');
  return net;
}

describe('depthwise convolutions and the network\'s own permutes', () => {
  test('an inverted residual with squeeze-excitation stays channels-last from its input to its output (the depthwise convolution too), on the reference and as the emulated plan', () => {
    const net = invertedResidual();
    const { network, convolutions, transposes } = channelsLast(net, { dtypes: ['float32'] });
    expect([convolutions, transposes]).toEqual([5, 2]);
    expect(network.layers.find((l) => l.name === 'depthwise')!.params).toMatchObject({ channelsLast: true, groups: 16 });
    const xv = random.tensor([2, 8, 10, 10], 'float32');
    const want = new ReferenceRunner(net).run({ x: xv }).y!;
    expectClose(new ReferenceRunner(network).run({ x: xv }).y!, want, FP32, 'reference');
    const { outputs, lowered } = emulateLowered(network, { x: xv });
    expectClose(outputs.y!, want, FP32, 'emulated plan');
    expect(lowered.steps.some((s) => s.kind === 'launch' && s.kernel.key.startsWith('dwconv2d.float32'))).toBe(true);
    expect(lowered.steps.filter((s) => s.kind === 'conv')).toHaveLength(0);
  });

  test("ConvNeXt's permutes to channels-last and back cost nothing: the only transposes are the network's input and output", () => {
    const net = convnextBlock();
    const { network, transposes } = channelsLast(net, { dtypes: ['float32'] });
    expect(transposes).toBe(2);
    expect(network.layers.filter((l) => l.params.kind === 'shuffle')).toHaveLength(2);
    const xv = random.tensor([2, 8, 9, 9], 'float32');
    const want = new ReferenceRunner(net).run({ x: xv }).y!;
    expectClose(new ReferenceRunner(network).run({ x: xv }).y!, want, FP32, 'reference');
    expectClose(emulateLowered(network, { x: xv }).outputs.y!, want, FP32, 'emulated plan');
  });

  test('an NHWC network input permuted to NCHW for the first convolution is read as it is: no transpose at all before it', () => {
    const net = new Network('nhwc-input');
    const x = net.addInput('x', 'float32', [1, 6, 6, 4]);
    const nchw = net.add1({ kind: 'shuffle', firstTranspose: [0, 3, 1, 2], zeroIsPlaceholder: false }, [x], 'to_nchw');
    const y = conv(net, nchw, 4, 4, 3, { groups: 4, name: 'dw' });
    net.markOutput(net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 3, 1], zeroIsPlaceholder: false }, [y], 'to_nhwc'), 'y');
    const { network, transposes } = channelsLast(net, { dtypes: ['float32'] });
    expect(transposes).toBe(0);
    expect(network.layers.map((l) => l.params.kind)).toEqual(['convolution']);
    const xv = random.tensor([1, 6, 6, 4], 'float32');
    expectClose(new ReferenceRunner(network).run({ x: xv }).y!, new ReferenceRunner(net).run({ x: xv }).y!, FP32, 'nhwc input');
  });
});

describe('convolution epilogue pass', () => {
  test('conv → ReLU and conv → sum → ReLU fuse (the downsample branch stays a plain convolution), and compute the same', () => {
    const net = tinyResnet();
    const { network, fused, residuals } = fuseConvEpilogues(net);
    // stem, 2 × (conv1, conv2), and each block's conv3 with its residual.
    expect([fused, residuals]).toEqual([7, 2]);
    expect(kinds(network).filter((k) => k === 'activation')).toHaveLength(0);
    expect(kinds(network).filter((k) => k === 'elementwise')).toHaveLength(1); // the per-channel scale
    const fusedLayer = network.layers.find((l) => l.name === 'layer1.0.conv3+layer1.0.add+layer1.0.relu3')!;
    expect(fusedLayer.params).toMatchObject({ kind: 'convolution', activation: 'relu' });
    expect(network.tensor(fusedLayer.inputs[3]!).name).toBe(net.tensor(net.layers.find((l) => l.name === 'layer1.0.downsample')!.outputs[0]!).name);
    for (const batch of [1, 4]) {
      const x = image(batch);
      expectClose(run(network, { x }), run(net, { x }), FP32, `batch ${batch}`);
    }
  });

  test('no fusion where the convolution output has another reader, is a network output, or no ReLU follows the sum', () => {
    const shapes: Array<(net: Network, c: NetTensor, other: NetTensor) => void> = [
      (net, c) => {
        net.markOutput(relu(net, c, 'r'), 'y');
        net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [c], 'abs'), 'z');
      },
      (net, c) => {
        net.markOutput(relu(net, c, 'r'), 'y');
        net.markOutput(c, 'raw');
      },
      (net, c, other) => net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [c, other], 's'), 'y'),
    ];
    for (const shape of shapes) {
      const net = new Network('keep');
      const x = net.addInput('x', 'float32', [1, 4, 5, 5]);
      shape(net, conv(net, x, 4, 4, 3, { name: 'c' }), x);
      expect(fuseConvEpilogues(net).network).toBe(net);
    }
  });

  test('the rewritten layers survive the engine file: channelsLast, activation and the residual input serialize', () => {
    const { network } = fuseConvEpilogues(channelsLast(tinyResnet(), { dtypes: ['float32'] }).network);
    const back = deserializeNetworkFromBuffer(serializeNetworkToBuffer(network), 'rewritten network', () => undefined);
    const x = image(2);
    expect(back.layers.map((l) => l.params.kind === 'convolution' && [l.params.channelsLast, l.params.activation, l.inputs.length])).toEqual(
      network.layers.map((l) => l.params.kind === 'convolution' && [l.params.channelsLast, l.params.activation, l.inputs.length]),
    );
    expectClose(run(back, { x }), run(network, { x }), FP32, 'reloaded');
  });
});

describe('both passes through the lowered plan (CPU emulator of the GPU steps)', () => {
  test('fp32: channels-last cuDNN steps with fused ReLU and residual, 1×1 convolutions as GEMMs with epilogues, NHWC max pooling, match the original network', () => {
    const net = tinyResnet();
    const rewritten = fuseConvEpilogues(channelsLast(net, { dtypes: ['float32'] }).network).network;
    const x = image(2);
    const { outputs, lowered } = emulateLowered(rewritten, { x });
    // The 3×3 convolutions (the stem and each block's second) stay cuDNN's, with their ReLU.
    const convs = lowered.steps.filter((s) => s.kind === 'conv');
    expect(convs).toHaveLength(3);
    expect(convs.every((s) => s.kind === 'conv' && s.channelsLast === true && s.relu === true && s.weight[2] === 3)).toBe(true);
    // The five 1×1 ones are GEMMs over the pixels: [2·6·6 / 4 pixels, c] · [k, c]ᵀ, their bias,
    // residual (C, beta 1) and ReLU in cuBLASLt's epilogue.
    const gemms = lowered.steps.filter((s) => s.kind === 'gemm');
    expect(gemms).toHaveLength(6); // and the classifier
    const pointwise = gemms.filter((s) => s.kind === 'gemm' && s.bias !== undefined);
    expect(pointwise.map((s) => s.kind === 'gemm' && [s.m, s.n, s.k, s.transB, s.relu === true, s.c !== undefined && s.beta === 1])).toEqual([
      [18, 8, 16, true, true, false], // layer1.0.conv1
      [18, 32, 16, true, false, false], // layer1.0.downsample (the residual runs first)
      [18, 32, 8, true, true, true], // layer1.0.conv3 + the downsample's output + ReLU
      [18, 8, 32, true, true, false],
      [18, 32, 8, true, true, true],
    ]);
    expectClose(outputs.logits!, run(net, { x }), FP32, 'emulated plan vs reference');
  });

  test('fp16 (the build order: precision, then layout, then epilogues) stays within fp16 error of the fp32 original', () => {
    const net = tinyResnet();
    const half = reducePrecision(net, ['fp16']).network;
    const layout = channelsLast(half);
    expect(layout.convolutions).toBe(8);
    const rewritten = fuseConvEpilogues(layout.network).network;
    const x = image(3);
    const got = emulateLowered(rewritten, { x }).outputs.logits!;
    expectClose(got, run(net, { x }), FP16, 'fp16 emulated plan vs fp32 reference');
  });
});

describe('widened channels', () => {
  test.each([1, 2, 3])('a static input of %d channels is widened to 4 with zero channels and zero weights: the same sums, on the reference and as the emulated plan', (c) => {
    const net = new Network(`rgb${c}`);
    const x = net.addInput('x', 'float32', [2, c, 9, 10]);
    const y = conv(net, x, c, 8, 3, { stride: 2, name: 'stem' });
    net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [y], 'relu'), 'logits');
    const { network, padded } = channelsLast(net, { dtypes: ['float32'] });
    expect(padded).toBe(1);
    const stem = network.layers.find((l) => l.name === 'stem')!;
    expect(network.tensor(stem.inputs[0]!).shape).toEqual([2, 9, 10, 4]);
    expect((stem.params as { kernel: Tensor }).kernel.shape).toEqual([8, 3, 3, 4]);
    const feeds = { x: new Random(c).tensor([2, c, 9, 10], 'float32') };
    const want = run(net, feeds);
    expectClose(run(network, feeds), want, FP32, 'widened (reference backend)');
    const { outputs, lowered } = emulateLowered(network, feeds);
    expectClose(outputs.logits!, want, FP32, 'widened (emulated plan)');
    expect(lowered.steps.find((s) => s.kind === 'conv')).toMatchObject({ input: [2, 4, 9, 10], weight: [8, 4, 3, 3], channelsLast: true });
  });

  test('left alone: 4 or more channels, and an input of dynamic shape', () => {
    const four = new Network('rgba');
    four.markOutput(conv(four, four.addInput('x', 'float32', [1, 4, 6, 6]), 4, 8, 3, { name: 'stem' }), 'logits');
    expect(channelsLast(four, { dtypes: ['float32'] }).padded).toBe(0);
    const dynamic = new Network('dynamic');
    dynamic.markOutput(conv(dynamic, dynamic.addInput('x', 'float32', [-1, 3, 6, 6], [{ min: [1, 3, 6, 6], opt: [2, 3, 6, 6], max: [4, 3, 6, 6] }]), 3, 8, 3, { name: 'stem' }), 'logits');
    const result = channelsLast(dynamic, { dtypes: ['float32'] });
    expect([result.convolutions, result.padded]).toEqual([1, 0]);
  });
});

describe('against PyTorch', () => {
  test('squeezenet1_1 (.pt2): folded, channels-last and fused (fire modules concatenated on axis 3, ceil-mode max pools NHWC), on the reference backend and as the emulated plan, matches PyTorch\'s stored output', async () => {
    const fixture = loadFixture('squeezenet1_1');
    const program = await compile(path.join(FIXTURES, 'squeezenet1_1', 'model.pt2'), { backend: 'reference' });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    await program.dispose();
    const engines = segments.filter((s) => s.kind === 'engine').map((s) => deserializeEngine(s.engine!));
    expect(engines).toHaveLength(1);
    const layout = channelsLast(foldConvolutionAffine(engines[0]!).network, { dtypes: ['float32'] });
    const epilogues = fuseConvEpilogues(layout.network);
    // 26 convolutions (the stem, 8 fire modules × 3, the classifier), each followed by a ReLU.
    expect(layout.convolutions).toBe(26);
    expect(epilogues.fused).toBe(26);
    // The stem's RGB input widened to 4 channels (a concat with zero channels).
    expect(layout.padded).toBe(1);
    const network = epilogues.network;
    const concats = network.layers.filter((l) => l.params.kind === 'concat');
    expect(concats.filter((l) => !l.name.endsWith('/padded_channels')).map((l) => l.params)).toEqual(new Array(8).fill(expect.objectContaining({ axis: 3 })));
    expect(concats.filter((l) => l.name.endsWith('/padded_channels')).map((l) => network.tensor(l.outputs[0]!).shape)).toEqual([[1, 64, 64, 4]]);
    const [input] = network.inputs;
    const [output] = network.outputs;
    const c = fixture.cases[0]!;
    expectClose(new ReferenceRunner(network).run({ [input!.name]: c.inputs[0]! })[output!.name]!, c.outputs[0]!, FP32, 'rewritten squeezenet (reference backend) vs PyTorch');
    const emulated = emulateLowered(network, { [input!.name]: c.inputs[0]! });
    expectClose(emulated.outputs[output!.name]!, c.outputs[0]!, FP32, 'rewritten squeezenet (emulated GPU plan) vs PyTorch');
    // 26 convolutions with their ReLU: the stem and the fire modules' 3×3 expands through cuDNN,
    // the 1×1 squeezes and expands as GEMMs with the bias and ReLU in their epilogue.
    expect(emulated.lowered.steps.filter((s) => s.kind === 'conv' && s.channelsLast === true && s.relu === true)).toHaveLength(9);
    expect(emulated.lowered.steps.filter((s) => s.kind === 'gemm' && s.relu === true && s.bias !== undefined && s.transB === true)).toHaveLength(17);
    // The build's own order at fp16 (precision, then the default channels-last dtypes): within fp16 error of PyTorch's fp32 output.
    const half = fuseConvEpilogues(channelsLast(reducePrecision(foldConvolutionAffine(engines[0]!).network, ['fp16']).network).network).network;
    const halfOut = emulateLowered(half, { [input!.name]: c.inputs[0]! }).outputs[output!.name]!;
    expectClose(halfOut, c.outputs[0]!, FP16, 'fp16 rewritten squeezenet (emulated GPU plan) vs PyTorch fp32');
  }, 180_000);
});
