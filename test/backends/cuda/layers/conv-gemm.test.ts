/**
 * A channels-last 1×1 stride-1 convolution lowers to one cuBLASLt GEMM over its pixels, with
 * the bias, the residual (as C, beta 1) and the ReLU in the epilogue
 * (lib/backends/cuda/layers/linalg.ts). The plan runs on the CPU emulator against the
 * reference backend on the network before any cuda pass; what stays a cuDNN convolution is
 * listed; TENSORRT_NODE_GEMM_TUNE is checked.
 */
import { channelsLast } from '../../../../lib/backends/cuda/passes/channels-last';
import { fuseConvEpilogues } from '../../../../lib/backends/cuda/passes/conv-epilogue';
import { CONV_GEMM_TUNE } from '../../../../lib/backends/cuda/layers/linalg';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { InvalidArgumentError } from '../../../../lib/errors';
import { Network, type NetTensor } from '../../../../lib/network';
import type { LayerParams } from '../../../../lib/network/layers';
import { reducePrecision } from '../../../../lib/network/precision';
import { expectClose, type Tolerance } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { emulateLowered } from '../emulated-network';

const random = new Random(31);
const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };

function conv(net: Network, x: NetTensor, c: number, k: number, options: { size?: number; stride?: number; groups?: number; pad?: number }, name: string): NetTensor {
  const size = options.size ?? 1;
  const groups = options.groups ?? 1;
  const pad = options.pad ?? 0;
  const params: LayerParams = {
    kind: 'convolution',
    nbOutputMaps: k,
    kernelSize: [size, size],
    stride: [options.stride ?? 1, options.stride ?? 1],
    prePadding: [pad, pad],
    postPadding: [pad, pad],
    dilation: [1, 1],
    groups,
    kernel: random.tensor([k, c / groups, size, size], 'float32', -0.5, 0.5),
    bias: random.tensor([k], 'float32'),
  };
  return net.add1(params, [x], name);
}

/** x → 1×1 conv (bias, ReLU) → 1×1 conv + x → ReLU: a bottleneck's ends, fp32 [2, 16, 5, 3]. */
function block(): Network {
  const net = new Network('block');
  const x = net.addInput('x', 'float32', [2, 16, 5, 3]);
  const a = net.add1({ kind: 'activation', type: 'relu' }, [conv(net, x, 16, 24, {}, 'reduce')], 'relu1');
  const b = conv(net, a, 24, 16, {}, 'expand');
  const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [b, x], 'add');
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [sum], 'relu2'), 'y');
  return net;
}

/** The build's order for fp16: precision, channels-last, convolution epilogues. */
const asBuilt = (net: Network): Network => fuseConvEpilogues(channelsLast(reducePrecision(net, ['fp16']).network).network).network;

const feeds = () => ({ x: random.tensor([2, 16, 5, 3], 'float32') });

afterEach(() => {
  delete process.env.TENSORRT_NODE_GEMM_TUNE;
});

describe('1×1 stride-1 channels-last convolutions as GEMMs', () => {
  test('bias, ReLU and the residual ride in the epilogue: two GEMM steps, matching the reference backend in fp16', () => {
    const net = block();
    const x = feeds();
    const { outputs, lowered } = emulateLowered(asBuilt(net), x);
    const library = lowered.steps.filter((s) => s.kind === 'gemm' || s.kind === 'conv');
    expect(library).toHaveLength(2);
    // 2·5·3 = 30 pixels: [30, 16]·[24, 16]ᵀ, then [30, 24]·[16, 24]ᵀ + x.
    expect(library[0]).toMatchObject({ kind: 'gemm', m: 30, n: 24, k: 16, transB: true, dtype: 'float16', relu: true, tune: CONV_GEMM_TUNE });
    expect(library[0]).not.toHaveProperty('c');
    expect(library[1]).toMatchObject({ kind: 'gemm', m: 30, n: 16, k: 24, transB: true, dtype: 'float16', relu: true, beta: 1 });
    expect(library.every((s) => s.kind === 'gemm' && s.bias !== undefined)).toBe(true);
    expect(library[1]!.kind === 'gemm' && library[1]!.c).toBeDefined();
    expectClose(outputs.y!, new ReferenceRunner(net).run(x).y!, FP16, 'emulated GEMM plan (fp16) vs reference (fp32)');
  });

  test('what is not a 1×1 stride-1 single-group convolution stays cuDNN\'s', () => {
    const variants: [string, { size?: number; stride?: number; groups?: number; pad?: number }][] = [
      ['3×3', { size: 3, pad: 1 }],
      ['stride 2', { stride: 2 }],
      ['two groups', { groups: 2 }],
      ['padded', { pad: 1 }],
    ];
    for (const [what, options] of variants) {
      const net = new Network(what);
      const x = net.addInput('x', 'float32', [1, 8, 6, 6]);
      net.markOutput(conv(net, x, 8, 8, options, 'conv'), 'y');
      const input = { x: random.tensor([1, 8, 6, 6], 'float32') };
      const { outputs, lowered } = emulateLowered(asBuilt(net), input);
      expect([what, lowered.steps.filter((s) => s.kind === 'gemm').length, lowered.steps.filter((s) => s.kind === 'conv').length]).toEqual([what, 0, 1]);
      expectClose(outputs.y!, new ReferenceRunner(net).run(input).y!, FP16, what);
    }
  });

  test('TENSORRT_NODE_GEMM_TUNE sets every GEMM\'s candidate count (a matmul\'s is untimed by default); a bad value is E_INVALID_ARGUMENT', () => {
    const net = new Network('mm');
    const a = net.addInput('a', 'float16', [8, 16]);
    const w = net.add1({ kind: 'constant', weights: random.tensor([16, 12], 'float16') }, [], 'w');
    net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [a, w], 'mm'), 'y');
    const input = { a: random.tensor([8, 16], 'float16') };
    const gemmOf = () => emulateLowered(net, input).lowered.steps.find((s) => s.kind === 'gemm')!;
    expect(gemmOf()).not.toHaveProperty('tune');
    process.env.TENSORRT_NODE_GEMM_TUNE = '4';
    expect(gemmOf()).toMatchObject({ tune: 4 });
    expect(emulateLowered(asBuilt(block()), feeds()).lowered.steps.filter((s) => s.kind === 'gemm').map((s) => s.kind === 'gemm' && s.tune)).toEqual([4, 4]);
    process.env.TENSORRT_NODE_GEMM_TUNE = '0';
    expect(emulateLowered(asBuilt(block()), feeds()).lowered.steps.filter((s) => s.kind === 'gemm').map((s) => s.kind === 'gemm' && s.tune)).toEqual([0, 0]);
    for (const bad of ['17', 'many', '-1', '2.5']) {
      process.env.TENSORRT_NODE_GEMM_TUNE = bad;
      expect(gemmOf).toThrow(InvalidArgumentError);
      expect(gemmOf).toThrow(/TENSORRT_NODE_GEMM_TUNE must be an integer from 0 to 16/);
    }
  });
});
