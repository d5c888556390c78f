/**
 * Folding per-channel affine layers into convolutions (lib/backends/cuda/passes/fold-affine.ts): the
 * folded network must compute what the unfolded one does (both run on the reference backend,
 * and a real model against its PyTorch outputs), and chains that cannot fold must be left alone.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { deserializeEngine } from '../../../../lib/backends/reference/engine-format';
import { foldConvolutionAffine } from '../../../../lib/backends/cuda/passes/fold-affine';
import { compile } from '../../../../lib/compile';
import { Network, type NetTensor } from '../../../../lib/network';
import type { LayerParams } from '../../../../lib/network/layers';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../../helpers/compare';
import { FIXTURES, loadFixture } from '../../../helpers/fixtures';
import { Random } from '../../../helpers/random';

const randomTensor = (dtype: 'float32', shape: number[], seed: number): Tensor => new Random(seed).tensor(shape, dtype);

const K = 4;
const C = 3;

function conv(net: Network, x: NetTensor, bias: boolean, name = 'conv'): NetTensor {
  const params: LayerParams = {
    kind: 'convolution',
    nbOutputMaps: K,
    kernelSize: [3, 3],
    stride: [1, 1],
    prePadding: [1, 1],
    postPadding: [1, 1],
    dilation: [1, 1],
    groups: 1,
    kernel: randomTensor('float32', [K, C, 3, 3], 11),
    bias: bias ? randomTensor('float32', [K], 12) : null,
  };
  return net.add1(params, [x], name);
}

const constant = (net: Network, shape: number[], values: number[], name: string): NetTensor =>
  net.add1({ kind: 'constant', weights: Tensor.from('float32', shape, values) }, [], name);

const perChannel = (net: Network, values: number[], name: string): NetTensor => constant(net, [1, K, 1, 1], values, name);

/** x → conv → * scale → + shift → relu → y (what an inference BatchNorm after a convolution converts to). */
function batchNormNetwork(options: { bias?: boolean; constantFirst?: boolean; dynamicBatch?: boolean } = {}): Network {
  const net = new Network('bn');
  const x = options.dynamicBatch
    ? net.addInput('x', 'float32', [-1, C, 5, 6], [{ min: [1, C, 5, 6], opt: [2, C, 5, 6], max: [4, C, 5, 6] }])
    : net.addInput('x', 'float32', [2, C, 5, 6]);
  const c = conv(net, x, options.bias ?? false);
  const s = perChannel(net, [0.5, -2, 3.25, 1e-3], 'scale');
  const t = perChannel(net, [1, 0, -0.75, 10], 'shift');
  const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, options.constantFirst ? [s, c] : [c, s], 'scaled');
  const shifted = net.add1({ kind: 'elementwise', op: 'sum' }, options.constantFirst ? [t, scaled] : [scaled, t], 'shifted');
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [shifted], 'relu'), 'y');
  return net;
}

const run = (net: Network, inputs: Record<string, Tensor>): Record<string, Tensor> => new ReferenceRunner(net).run(inputs);
const kinds = (net: Network): string[] => net.layers.map((l) => (l.params.kind === 'elementwise' ? `elementwise.${l.params.op}` : l.params.kind));

describe('foldConvolutionAffine', () => {
  test.each([
    ['no bias, constants second', {}],
    ['a bias, constants first', { bias: true, constantFirst: true }],
  ])('convolution → prod → sum folds into one convolution that computes the same (%s)', (_, options) => {
    const net = batchNormNetwork(options);
    const { network, foldedLayers } = foldConvolutionAffine(net);
    expect(foldedLayers).toBe(2);
    expect(kinds(network)).toEqual(['convolution', 'activation']);
    const x = randomTensor('float32', [2, C, 5, 6], 3);
    expectClose(run(network, { x }).y!, run(net, { x }).y!, FP32, 'folded vs unfolded');
    // The original network is untouched (pure).
    expect(kinds(net)).toEqual(['convolution', 'constant', 'constant', 'elementwise.prod', 'elementwise.sum', 'activation']);
  });

  test('the folded kernel and bias are the per-channel products, rounded once', () => {
    const net = batchNormNetwork({ bias: true });
    const before = net.layers[0]!.params as Extract<LayerParams, { kind: 'convolution' }>;
    const after = foldConvolutionAffine(net).network.layers[0]!.params as Extract<LayerParams, { kind: 'convolution' }>;
    // The constants are float32: 1e-3 is stored rounded.
    const scale = [0.5, -2, 3.25, 1e-3].map(Math.fround);
    const shift = [1, 0, -0.75, 10];
    const per = C * 9;
    const [k0, k1] = [before.kernel.data as Float32Array, after.kernel.data as Float32Array];
    const [b0, b1] = [before.bias!.data as Float32Array, after.bias!.data as Float32Array];
    for (let i = 0; i < K * per; i++) expect(k1[i]).toBe(Math.fround(k0[i]! * scale[Math.floor(i / per)]!));
    for (let k = 0; k < K; k++) expect(b1[k]).toBe(Math.fround(b0[k]! * scale[k]! + shift[k]!));
  });

  test('a dynamic batch keeps its optimization profile', () => {
    const { network } = foldConvolutionAffine(batchNormNetwork({ dynamicBatch: true }));
    expect(network.inputs[0]!.profiles).toEqual([{ min: [1, C, 5, 6], opt: [2, C, 5, 6], max: [4, C, 5, 6] }]);
    const x = randomTensor('float32', [3, C, 5, 6], 4);
    expectClose(run(network, { x }).y!, run(batchNormNetwork({ dynamicBatch: true }), { x }).y!, FP32, 'batch 3');
  });

  test('a scalar-shaped [1, 1, 1, 1] factor folds; a lone bias add folds', () => {
    const net = new Network('scalar');
    const x = net.addInput('x', 'float32', [1, C, 4, 4]);
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [conv(net, x, true), constant(net, [1, 1, 1, 1], [-1.5], 'half')], 'scaled');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [scaled, perChannel(net, [1, 2, 3, 4], 'bias')], 'biased'), 'y');
    const { network, foldedLayers } = foldConvolutionAffine(net);
    expect([foldedLayers, kinds(network)]).toEqual([2, ['convolution']]);
    const x0 = randomTensor('float32', [1, C, 4, 4], 5);
    expectClose(run(network, { x: x0 }).y!, run(net, { x: x0 }).y!, FP32, 'scalar factor');
  });

  const unfoldable: Array<[string, (net: Network, c: NetTensor) => NetTensor]> = [
    ['a per-pixel constant', (net, c) => net.add1({ kind: 'elementwise', op: 'prod' }, [c, constant(net, [1, 1, 4, 4], Array.from({ length: 16 }, (_, i) => i), 'pixels')], 'p')],
    ['a batch-shaped constant', (net, c) => net.add1({ kind: 'elementwise', op: 'sum' }, [c, constant(net, [2, K, 1, 1], Array.from({ length: 8 }, (_, i) => i), 'batchy')], 'p')],
    ['a subtraction', (net, c) => net.add1({ kind: 'elementwise', op: 'sub' }, [c, perChannel(net, [1, 2, 3, 4], 't')], 'p')],
    ['a product with a computed tensor', (net, c) => net.add1({ kind: 'elementwise', op: 'prod' }, [c, net.add1({ kind: 'unary', op: 'exp' }, [c], 'e')], 'p')],
  ];
  test.each(unfoldable)('%s is left alone (the same network comes back)', (_, after) => {
    const net = new Network('keep');
    const x = net.addInput('x', 'float32', [1, C, 4, 4]);
    net.markOutput(after(net, conv(net, x, false)), 'y');
    const result = foldConvolutionAffine(net);
    expect(result.foldedLayers).toBe(0);
    expect(result.network).toBe(net);
  });

  test('a convolution output that is also a network output, or read twice, is not folded', () => {
    for (const shape of ['output', 'two readers'] as const) {
      const net = new Network('keep');
      const x = net.addInput('x', 'float32', [1, C, 4, 4]);
      const c = conv(net, x, false);
      net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [c, perChannel(net, [1, 2, 3, 4], 's')], 'p'), 'y');
      if (shape === 'output') net.markOutput(c, 'raw');
      else net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [c], 'abs'), 'z');
      expect(foldConvolutionAffine(net).network).toBe(net);
    }
  });

  test('a folded chain stops at the first layer it cannot absorb: prod folds, the following per-pixel sum stays', () => {
    const net = new Network('partial');
    const x = net.addInput('x', 'float32', [1, C, 4, 4]);
    const p = net.add1({ kind: 'elementwise', op: 'prod' }, [conv(net, x, false), perChannel(net, [2, 2, 2, 2], 's')], 'p');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [p, constant(net, [1, 1, 4, 4], Array.from({ length: 16 }, (_, i) => i), 'pixels')], 'q'), 'y');
    const { network, foldedLayers } = foldConvolutionAffine(net);
    expect([foldedLayers, kinds(network)]).toEqual([1, ['convolution', 'constant', 'elementwise.sum']]);
    const x0 = randomTensor('float32', [1, C, 4, 4], 6);
    expectClose(run(network, { x: x0 }).y!, run(net, { x: x0 }).y!, FP32, 'partial fold');
  });

  test('mobilenet_v3_small (.pt2, BatchNorm after every convolution): the folded network matches PyTorch at both stored sizes', async () => {
    const fixture = loadFixture('mobilenet_v3_small');
    const program = await compile(path.join(FIXTURES, 'mobilenet_v3_small', 'model.pt2'), {
      backend: 'reference',
      inputs: { x: { min: [1, 3, 96, 96], max: [8, 3, 96, 96] } },
    });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    program.dispose();
    const networks = segments.filter((s) => s.kind === 'engine').map((s) => deserializeEngine(s.engine!));
    expect(networks).toHaveLength(1);
    const net = networks[0]!;
    const { network, foldedLayers } = foldConvolutionAffine(net);
    // Every BatchNorm of the exported graph (each right after a convolution; the
    // squeeze-excitation convolutions have biases and no BatchNorm) went into its convolution.
    const graph = fs.readFileSync(path.join(FIXTURES, 'mobilenet_v3_small', 'graph.txt'), 'utf8');
    const batchNorms = graph.split('\n').filter((l) => l.includes('call_function[target=torch.ops.aten.batch_norm.default]')).length;
    expect(batchNorms).toBe(34);
    expect(foldedLayers).toBe(2 * batchNorms);
    expect(network.layers.length).toBe(net.layers.length - 2 * foldedLayers);
    for (const c of fixture.cases) {
      const out = run(network, { [network.inputs[0]!.name]: c.inputs[0]! });
      expectClose(out[network.outputs[0]!.name]!, c.outputs[0]!, FP32, 'folded mobilenet vs PyTorch');
    }
  }, 120_000);
});
