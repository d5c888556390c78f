/**
 * The cuda backend's pass list (lib/backends/cuda/passes/index.ts) as data: the order the
 * module states, each pass's counts reported by name, the precision report kept, and a list
 * given by the caller run as given. What each rewrite computes is tested in its own file here
 * (against PyTorch's outputs or onnxruntime where the pass allows).
 */
import { CUDA_PASSES, countsOf, formatPassList, runPasses, type NetworkPass } from '../../../../lib/backends/cuda/passes';
import { Network, type NetTensor } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { Random } from '../../../helpers/random';

/** x[2, 3, 5, 6] → conv 3×3 → × per-channel scale → + shift → relu → y: a BatchNorm for fold-affine, a convolution for the layout passes. */
function convNetwork(): Network {
  const net = new Network('conv-bn');
  const x = net.addInput('x', 'float32', [2, 3, 5, 6]);
  const r = new Random(5);
  const c = net.add1(
    { kind: 'convolution', nbOutputMaps: 4, kernelSize: [3, 3], stride: [1, 1], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1], groups: 1, kernel: r.tensor([4, 3, 3, 3], 'float32'), bias: null },
    [x],
    'conv',
  );
  const perChannel = (values: number[], name: string): NetTensor => net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 4, 1, 1], values) }, [], name);
  const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [c, perChannel([0.5, -2, 1.5, 1], 'scale')], 'scaled');
  const shifted = net.add1({ kind: 'elementwise', op: 'sum' }, [scaled, perChannel([1, 0, -0.5, 2], 'shift')], 'shifted');
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [shifted], 'relu'), 'y');
  return net;
}

describe('the cuda pass list', () => {
  it('runs in the order its module states, each pass named once', () => {
    const names = CUDA_PASSES.map((p) => p.name);
    expect(names).toEqual([
      'fold-affine',
      'precision',
      'spell-out-quantization',
      'channels-last',
      'conv-epilogues',
      'complex-pairs',
      'attention',
      'spell-out-attention',
      'rms-norm',
      'merge-matmuls',
      'recompute-casts',
    ]);
    expect(new Set(names).size).toBe(names.length);
    const text = formatPassList();
    expect(text.split('\n')).toHaveLength(names.length);
    expect(text).toMatch(/^1\. fold-affine: .*BatchNorm/);
  });

  it('reports every pass by name and keeps the precision report', () => {
    const source = convNetwork();
    const result = runPasses(source, { precisions: ['fp32'] });
    expect(result.outcomes.map((o) => o.pass)).toEqual(CUDA_PASSES.map((p) => p.name));
    expect(countsOf(result, 'fold-affine').foldedLayers).toBe(2);
    expect(result.precision.dtype).toBeNull();
    // The BatchNorm folded into the convolution, and its ReLU taken into the convolution's epilogue.
    expect(countsOf(result, 'conv-epilogues').fused).toBe(1);
    expect(result.network.layers.map((l) => l.params.kind)).toEqual(['convolution']);
  });

  it('with fp16 allowed, the precision pass reduces the convolution and the later passes see it', () => {
    const result = runPasses(convNetwork(), { precisions: ['fp32', 'fp16'] });
    expect(result.precision.dtype).toBe('float16');
    expect(countsOf(result, 'precision').reducedLayers).toBeGreaterThan(0);
    // channels-last takes reduced-precision convolutions only, so it ran on the reduced one.
    expect(countsOf(result, 'channels-last').convolutions).toBe(1);
    expect(countsOf(result, 'conv-epilogues').fused).toBe(1);
  });

  it('runs a list given by the caller, in its order', () => {
    const seen: string[] = [];
    const probe = (name: string): NetworkPass => ({ name, does: name, run: (network) => (seen.push(name), { network, counts: { calls: seen.length } }), describe: () => null });
    const result = runPasses(convNetwork(), { precisions: ['fp32'] }, [probe('b'), probe('a')]);
    expect(seen).toEqual(['b', 'a']);
    expect(countsOf(result, 'a')).toEqual({ calls: 2 });
    expect(countsOf(result, 'missing')).toEqual({});
  });
});
