/**
 * RMSNorm as one normalization layer (lib/backends/cuda/passes/fuse-rmsnorm.ts): networks in the forms
 * PyTorch and ONNX export Llama's RMSNorm as, fused, against the reference backend running the
 * unfused form, and (float32) against onnxruntime running it; the fused layer's kernel on the CPU
 * emulator against the same; and the forms the pass leaves alone. The Llama fixture runs through
 * the pass against PyTorch in precision-fixtures.test.ts.
 */
import { fuseRmsNorm } from '../../../../lib/backends/cuda/passes/fuse-rmsnorm';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { Network, type NetTensor, type TrtDType } from '../../../../lib/network';
import { liveLayers } from '../../../../lib/network/live-layers';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { emulate } from '../emulated-network';
import { onnxruntimeBackend } from '../../../../lib/backends/onnxruntime';
import { runOrtEngine } from '../../onnxruntime/engine-worker';

// The unfused form rounds xf·inv to x's dtype before the weight multiplies it; the fused layer
// rounds once. One or two roundings of x's dtype apart.
const TOL: Record<'float16' | 'bfloat16' | 'float32', Tolerance> = {
  float16: { rtol: 4e-3, atol: 2e-3 },
  bfloat16: { rtol: 3e-2, atol: 1.6e-2 },
  float32: { rtol: 1e-5, atol: 1e-6 },
};

interface Form {
  dtype: 'float16' | 'bfloat16' | 'float32';
  shape: number[];
  /** x cast to float32 for the statistics and the product cast back (HF LlamaRMSNorm). */
  upcast?: boolean;
  /** Cast back to x's dtype after the product (with `upcast`; default true). */
  castBack?: boolean;
  /** 1/sqrt as recip (torch.rsqrt's export) or div of a constant 1 (ONNX's Reciprocal-free form). */
  invert?: 'recip' | 'div';
  /** inv·x instead of x·inv. */
  swapped?: boolean;
  /** The weight: none, a constant [1, …, last], a constant [last] reshaped to that, or one per row. */
  weight?: 'none' | 'plain' | 'reshaped' | 'per-row';
  /** The axis of the mean (default: the last). */
  axis?: number;
}

const scalar = (net: Network, dtype: TrtDType, value: number, rank: number, name: string): NetTensor =>
  net.add1({ kind: 'constant', weights: Tensor.from(dtype, new Array<number>(rank).fill(1), [value]) }, [], name);

function rmsForm(f: Form): Network {
  const net = new Network(`rmsnorm_${f.dtype}`);
  const rank = f.shape.length;
  const last = f.shape[rank - 1]!;
  const x = net.addInput('x', f.dtype, f.shape);
  const statsDtype = f.upcast ? 'float32' : f.dtype;
  const xf = f.upcast ? net.add1({ kind: 'cast', to: 'float32' }, [x], 'upcast') : x;
  const squares = net.add1({ kind: 'elementwise', op: 'prod' }, [xf, xf], 'square');
  const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [f.axis ?? rank - 1], keepDims: true }, [squares], 'mean');
  const variance = net.add1({ kind: 'elementwise', op: 'sum' }, [mean, scalar(net, statsDtype, 1e-5, rank, 'eps')], 'add_eps');
  const root = net.add1({ kind: 'unary', op: 'sqrt' }, [variance], 'sqrt');
  const inv = f.invert === 'div'
    ? net.add1({ kind: 'elementwise', op: 'div' }, [scalar(net, statsDtype, 1, rank, 'one'), root], 'inverse')
    : net.add1({ kind: 'unary', op: 'recip' }, [root], 'inverse');
  let y = net.add1({ kind: 'elementwise', op: 'prod' }, f.swapped ? [inv, xf] : [xf, inv], 'scaled');
  if (f.upcast && f.castBack !== false) y = net.add1({ kind: 'cast', to: f.dtype }, [y], 'downcast');
  const weight = f.weight ?? 'plain';
  if (weight !== 'none') {
    const r = new Random(11);
    const values = r.floats(weight === 'per-row' ? f.shape[rank - 2]! : last, 0.5, 1.5);
    const wDtype = y.dtype;
    let w: NetTensor;
    const ones = new Array<number>(rank - 2).fill(1);
    if (weight === 'plain') w = net.add1({ kind: 'constant', weights: Tensor.from(wDtype, [...ones, 1, last], values) }, [], 'weight');
    else if (weight === 'per-row') w = net.add1({ kind: 'constant', weights: Tensor.from(wDtype, [...ones, f.shape[rank - 2]!, 1], values) }, [], 'weight');
    else {
      const flat = net.add1({ kind: 'constant', weights: Tensor.from(wDtype, [last], values) }, [], 'weight_flat');
      w = net.add1({ kind: 'shuffle', reshape: [...new Array<number>(rank - 1).fill(1), last], zeroIsPlaceholder: false }, [flat], 'weight');
    }
    y = net.add1({ kind: 'elementwise', op: 'prod' }, [y, w], 'weighted');
  }
  net.markOutput(y, 'y');
  return net;
}

/** Inputs centred off zero, so that a kernel that subtracts the mean fails. */
const feedsFor = (f: Form, seed: number): Record<string, Tensor> => ({ x: new Random(seed).tensor(f.shape, f.dtype, -0.5, 1.5) });

// The layers the backend lowers: the pass leaves the upcast for the lowering's dead-layer pruning.
const layerKinds = (net: Network): string[] => liveLayers(net).map((l) => l.params.kind).filter((k) => k !== 'constant');
const normsOf = (net: Network) => net.layers.flatMap((l) => (l.params.kind === 'normalization' ? [l.params] : []));

describe('fuseRmsNorm', () => {
  const forms: Array<[string, Form]> = [
    ['fp16, HF form: upcast, recip, cast back, weight', { dtype: 'float16', shape: [2, 3, 768], upcast: true }],
    ['fp16, 2048 channels (warp64), inv·x, reshaped weight', { dtype: 'float16', shape: [1, 4, 2048], upcast: true, swapped: true, weight: 'reshaped' }],
    ['bf16, no upcast, 1/sqrt as div, no weight', { dtype: 'bfloat16', shape: [5, 40], invert: 'div', weight: 'none' }],
    ['bf16, upcast, odd width (block rows), weight', { dtype: 'bfloat16', shape: [3, 2050], upcast: true }],
    ['fp32, no casts, weight', { dtype: 'float32', shape: [4, 6, 96] }],
  ];
  test.each(forms)('%s: one layer, one launch, against the reference backend on the unfused form', (_, f) => {
    const source = rmsForm(f);
    const { network, norms } = fuseRmsNorm(source);
    expect(norms).toBe(1);
    expect(layerKinds(network)).toEqual(f.weight === 'reshaped' ? ['shuffle', 'normalization'] : ['normalization']);
    const [p] = normsOf(network);
    expect(p).toMatchObject({ axes: [f.shape.length - 1], nbGroups: 1, rms: true });
    // eps as its constant stores it (float32, or bf16's 8 bits of mantissa).
    expect(Math.abs(p!.epsilon / 1e-5 - 1)).toBeLessThan(4e-3);
    const feeds = feedsFor(f, 5);
    const want = new ReferenceRunner(source).run(feeds).y!;
    expect(want.dtype).toBe(f.dtype);
    const tol = TOL[f.dtype];
    expectClose(new ReferenceRunner(network).run(feeds).y!, want, tol, 'reference rms normalization');
    const run = emulate(network, feeds, true);
    expect(run.launches).toBe(1);
    expectClose(run.outputs.y!, want, tol, 'rms kernel');
  });

  // An independent check of the unfused side: onnxruntime runs the same unfused network
  // (float32: its CPU provider's ReduceMean, Sqrt and Reciprocal), and the fused kernel on the
  // emulator must match it too.
  test.each<[string, Form]>([
    ['fp32, 1/sqrt as div, weight', { dtype: 'float32', shape: [3, 5, 96], invert: 'div' }],
    ['fp32, 2048 channels, inv·x, no weight', { dtype: 'float32', shape: [2, 2048], swapped: true, weight: 'none' }],
  ])('%s: the fused kernel against onnxruntime on the unfused form', async (_, f) => {
    const source = rmsForm(f);
    const feeds = feedsFor(f, 8);
    const ort = await runOrtEngine(await onnxruntimeBackend.build(source, {} as never, { type: 'cpu' } as never), feeds);
    const { network, norms } = fuseRmsNorm(source);
    expect(norms).toBe(1);
    expectClose(emulate(network, feeds, true).outputs.y!, ort.y!, { rtol: 1e-5, atol: 1e-6 }, 'rms kernel vs onnxruntime');
  });

  test('a float32 input written as float16 fuses as a float32 norm; its cast and weight stay', () => {
    // Llama's first norm: the embedding (float32 network input) normalized, then cast to fp16.
    const net = new Network('first_norm');
    const f: Form = { dtype: 'float32', shape: [2, 64], weight: 'none' };
    const x = net.addInput('x', 'float32', f.shape);
    const sq = net.add1({ kind: 'elementwise', op: 'prod' }, [x, x], 'square');
    const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [sq], 'mean');
    const v = net.add1({ kind: 'elementwise', op: 'sum' }, [mean, scalar(net, 'float32', 1e-6, 2, 'eps')], 'add_eps');
    const inv = net.add1({ kind: 'unary', op: 'recip' }, [net.add1({ kind: 'unary', op: 'sqrt' }, [v], 'sqrt')], 'inverse');
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [x, inv], 'scaled');
    const half = net.add1({ kind: 'cast', to: 'float16' }, [scaled], 'to_half');
    const w = net.add1({ kind: 'constant', weights: Tensor.from('float16', [1, 64], new Random(2).floats(64, 0.5, 1.5)) }, [], 'weight');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [half, w], 'weighted'), 'y');
    const { network, norms } = fuseRmsNorm(net);
    expect(norms).toBe(1);
    expect(layerKinds(network)).toEqual(['normalization', 'cast', 'elementwise']);
    expect(normsOf(network)[0]!.epsilon).toBeCloseTo(1e-6, 12);
    const feeds = feedsFor(f, 9);
    const want = new ReferenceRunner(net).run(feeds).y!;
    expectClose(emulate(network, feeds, true).outputs.y!, want, TOL.float16, 'fused first norm');
  });

  test('two norms in a row both fuse, each in its own place', () => {
    const f: Form = { dtype: 'float16', shape: [3, 128], upcast: true };
    const net = rmsForm(f);
    // A second norm over the first one's output, built by hand on the same pattern.
    const y1 = net.tensor(net.outputs[0]!.tensor);
    net.outputs.length = 0;
    const xf = net.add1({ kind: 'cast', to: 'float32' }, [y1], 'upcast2');
    const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [net.add1({ kind: 'elementwise', op: 'prod' }, [xf, xf], 'square2')], 'mean2');
    const inv = net.add1({ kind: 'unary', op: 'recip' }, [net.add1({ kind: 'unary', op: 'sqrt' }, [net.add1({ kind: 'elementwise', op: 'sum' }, [mean, scalar(net, 'float32', 1e-5, 2, 'eps2')], 'add_eps2')], 'sqrt2')], 'inverse2');
    const y2 = net.add1({ kind: 'cast', to: 'float16' }, [net.add1({ kind: 'elementwise', op: 'prod' }, [xf, inv], 'scaled2')], 'downcast2');
    net.markOutput(y2, 'y');
    const { network, norms } = fuseRmsNorm(net);
    expect(norms).toBe(2);
    expect(layerKinds(network)).toEqual(['normalization', 'normalization']);
    const feeds = feedsFor(f, 4);
    expectClose(emulate(network, feeds, true).outputs.y!, new ReferenceRunner(net).run(feeds).y!, TOL.float16, 'two norms');
  });

  test('a weight that varies along another axis stays a product after the fused norm', () => {
    const f: Form = { dtype: 'float32', shape: [4, 32], weight: 'per-row' };
    const { network, norms } = fuseRmsNorm(rmsForm(f));
    expect(norms).toBe(1);
    expect(layerKinds(network)).toEqual(['normalization', 'elementwise']);
    const feeds = feedsFor(f, 6);
    expectClose(new ReferenceRunner(network).run(feeds).y!, new ReferenceRunner(rmsForm(f)).run(feeds).y!, TOL.float32, 'per-row weight');
  });

  describe('left alone', () => {
    const base: Form = { dtype: 'float16', shape: [2, 64], upcast: true };
    const unchanged = (net: Network): void => {
      const { network, norms } = fuseRmsNorm(net);
      expect(norms).toBe(0);
      expect(network).toBe(net);
    };
    test('an fp16 x whose norm stays float32 (no cast back): the output dtype is not x\'s', () => {
      unchanged(rmsForm({ ...base, castBack: false }));
    });
    test('the mean over another axis', () => {
      unchanged(rmsForm({ ...base, shape: [2, 64, 3], axis: 1 }));
    });
    test('an intermediate of the chain read elsewhere or marked as an output', () => {
      for (const name of ['mean', 'add_eps', 'sqrt', 'inverse']) {
        const net = rmsForm(base);
        net.markOutput(net.tensor(net.layers.find((l) => l.name === name)!.outputs[0]!), `leak_${name}`);
        unchanged(net);
      }
      const read = rmsForm(base);
      const root = read.tensor(read.layers.find((l) => l.name === 'sqrt')!.outputs[0]!);
      read.markOutput(read.add1({ kind: 'unary', op: 'exp' }, [root], 'other_reader'), 'other');
      unchanged(read);
    });
    test('an epsilon that is not a constant, or a square of two different tensors', () => {
      const net = new Network('eps_input');
      const x = net.addInput('x', 'float32', [2, 8]);
      const eps = net.addInput('eps', 'float32', [1, 1]);
      const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [net.add1({ kind: 'elementwise', op: 'prod' }, [x, x], 'square')], 'mean');
      const inv = net.add1({ kind: 'unary', op: 'recip' }, [net.add1({ kind: 'unary', op: 'sqrt' }, [net.add1({ kind: 'elementwise', op: 'sum' }, [mean, eps], 'add_eps')], 'sqrt')], 'inverse');
      net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [x, inv], 'scaled'), 'y');
      unchanged(net);
      const two = new Network('two');
      const a = two.addInput('a', 'float32', [2, 8]);
      const b = two.addInput('b', 'float32', [2, 8]);
      const m = two.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [two.add1({ kind: 'elementwise', op: 'prod' }, [a, b], 'square')], 'mean');
      const i = two.add1({ kind: 'unary', op: 'recip' }, [two.add1({ kind: 'unary', op: 'sqrt' }, [two.add1({ kind: 'elementwise', op: 'sum' }, [m, scalar(two, 'float32', 1e-5, 2, 'eps')], 'add_eps')], 'sqrt')], 'inverse');
      two.markOutput(two.add1({ kind: 'elementwise', op: 'prod' }, [a, i], 'scaled'), 'y');
      unchanged(two);
    });
  });
});
