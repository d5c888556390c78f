/**
 * Convolution biases moved into their pointwise readers (lib/backends/cuda/bias-epilogue.ts):
 * the rewritten network computes what the original does (reference backend, and the cuda
 * lowering on the CPU emulator, bit for bit against the unmoved network's lowering), the bias
 * add then fuses with the reader into one launch, and convolutions whose output goes elsewhere
 * keep their bias.
 */
import { moveConvolutionBiases } from '../../../lib/backends/cuda/bias-epilogue';
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { Network, type NetTensor } from '../../../lib/network';
import type { LayerParams } from '../../../lib/network/layers';
import { Tensor } from '../../../lib/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { Random } from '../../helpers/random';
import { emulate } from './emulated-network';

const K = 4;
const C = 3;

function conv(net: Network, x: NetTensor, name: string, bias = true): NetTensor {
  const params: LayerParams = {
    kind: 'convolution',
    nbOutputMaps: K,
    kernelSize: [3, 3],
    stride: [1, 1],
    prePadding: [1, 1],
    postPadding: [1, 1],
    dilation: [1, 1],
    groups: 1,
    kernel: new Random(11).tensor([K, name === 'conv2' ? K : C, 3, 3], 'float32'),
    bias: bias ? Tensor.from('float32', [K], [0.5, -1.25, 2, -0.125]) : null,
  };
  return net.add1(params, [x], name);
}

/** x → conv1(bias) → relu → conv2(bias) → + x' (a residual) → relu → y, and conv1's output also as an output when `exposed`. */
function network(exposed = false): Network {
  const net = new Network('bias-epilogue');
  const x = net.addInput('x', 'float32', [2, C, 5, 6]);
  const skip = net.addInput('skip', 'float32', [2, K, 5, 6]);
  const c1 = conv(net, x, 'conv1');
  if (exposed) net.markOutput(c1, 'c1');
  const r1 = net.add1({ kind: 'activation', type: 'relu' }, [c1], 'relu1');
  const c2 = conv(net, r1, 'conv2');
  const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [c2, skip], 'residual');
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [sum], 'relu2'), 'y');
  return net;
}

const kinds = (net: Network): string[] => net.layers.map((l) => (l.params.kind === 'elementwise' ? `elementwise.${l.params.op}` : l.params.kind));
const feeds = (): Record<string, Tensor> => ({ x: new Random(3).tensor([2, C, 5, 6], 'float32'), skip: new Random(4).tensor([2, K, 5, 6], 'float32') });

describe('moveConvolutionBiases', () => {
  test('each bias becomes a [1, K, 1, 1] constant summed into the convolution output, computing the same', () => {
    const net = network();
    const { network: moved, moved: count } = moveConvolutionBiases(net);
    expect(count).toBe(2);
    expect(kinds(moved)).toEqual([
      'convolution', 'constant', 'elementwise.sum', 'activation',
      'convolution', 'constant', 'elementwise.sum', 'elementwise.sum', 'activation',
    ]);
    for (const l of moved.layers) if (l.params.kind === 'convolution') expect(l.params.bias).toBeNull();
    const bias = moved.layers.find((l) => l.name === 'conv1/bias')!.params as Extract<LayerParams, { kind: 'constant' }>;
    expect(bias.weights.shape).toEqual([1, K, 1, 1]);
    expect(Array.from(bias.weights.data as Float32Array)).toEqual([0.5, -1.25, 2, -0.125]);
    const inputs = feeds();
    expectClose(new ReferenceRunner(moved).run(inputs).y!, new ReferenceRunner(net).run(inputs).y!, FP32, 'moved vs original');
    // Pure: the original keeps its biases.
    expect(kinds(net)).toEqual(['convolution', 'activation', 'convolution', 'elementwise.sum', 'activation']);
  });

  test('on the cuda lowering the bias adds fuse into their readers: fewer launches, the same bits as the unmoved network', () => {
    const net = network();
    const moved = moveConvolutionBiases(net).network;
    const inputs = feeds();
    const before = emulate(net, inputs, true);
    const after = emulate(moved, inputs, true);
    expect(Array.from(new Uint8Array(after.outputs.y!.data.buffer))).toEqual(Array.from(new Uint8Array(before.outputs.y!.data.buffer)));
    // conv1, bias+relu1, conv2, bias+residual+relu2: two convolutions and two map launches.
    expect(after.steps.filter((s) => s === 'conv')).toHaveLength(2);
    expect(after.launches).toBe(2);
    expect(after.names.filter((n) => n.includes('bias_add'))).toEqual(['conv1/bias_add+relu1', 'conv2/bias_add+residual+relu2']);
  });

  test('a convolution whose output is a network output or has several readers keeps its bias', () => {
    const { network: moved, moved: count } = moveConvolutionBiases(network(true));
    expect(count).toBe(1);
    expect(moved.layers.filter((l) => l.params.kind === 'convolution').map((l) => (l.params as { bias: unknown }).bias !== null)).toEqual([true, false]);
    const none = new Network('plain');
    const x = none.addInput('x', 'float32', [1, C, 4, 4]);
    none.markOutput(conv(none, x, 'only'), 'y');
    const result = moveConvolutionBiases(none);
    expect(result.moved).toBe(0);
    expect(result.network).toBe(none);
  });
});
