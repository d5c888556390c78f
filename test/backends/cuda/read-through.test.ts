/**
 * Views (lib/backends/cuda/plan/: fuse-pointwise.ts planViews/readThrough, lower-instance.ts):
 * a slice inside its input or a transpose, whose readers are all pointwise maps over its box, is never copied — each
 * reader reads the view's source through the copy's strides. Whole networks run on the CPU
 * kernel emulator with and without it (bit for bit the same, fewer launches) and against the
 * reference backend; a reader that cannot read through gets the copy, run just before it.
 */
import * as path from 'node:path';
import { planViews } from '../../../lib/backends/cuda/plan/fuse-pointwise';
import { deserializeEngine } from '../../../lib/backends/reference/engine-format';
import { compile } from '../../../lib/compile';
import { lowerLayer, type LoweredStep } from '../../../lib/backends/cuda/layers';
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { Network, type NetTensor } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32, type Tolerance } from '../../helpers/compare';
import { FIXTURES, loadFixture } from '../../helpers/fixtures';
import { Random } from '../../helpers/random';
import { emulateLowered, expectEmulatedMatches } from './emulated-network';
import { expandLayers } from '../../../lib/conversion/expand-layers';

/** x [1, s, h, 2·p] as interleaved pairs times freqs [1, s, 1, p] (re, im): RoPE as the complex rewrite lowers it, outputs re and im. */
function ropeNetwork(dtype: 'float32' | 'float16', s = 6, h = 4, p = 4): Network {
  const net = new Network(`rope_${dtype}`);
  const x = net.addInput('x', dtype, [1, s, h, 2 * p]);
  const bRe = net.addInput('b_re', dtype, [1, s, 1, p]);
  const bIm = net.addInput('b_im', dtype, [1, s, 1, p]);
  const half = (start: number, name: string): NetTensor =>
    net.add1({ kind: 'slice', start: [0, 0, 0, start], size: [1, s, h, p], stride: [1, 1, 1, 2], mode: 'strict_bounds' }, [x], name);
  const aRe = half(0, 'a_re');
  const aIm = half(1, 'a_im');
  const prod = (a: NetTensor, b: NetTensor, name: string): NetTensor => net.add1({ kind: 'elementwise', op: 'prod' }, [a, b], name);
  const re = net.add1({ kind: 'elementwise', op: 'sub' }, [prod(aRe, bRe, 'ar_br'), prod(aIm, bIm, 'ai_bi')], 're');
  const im = net.add1({ kind: 'elementwise', op: 'sum' }, [prod(aRe, bIm, 'ar_bi'), prod(aIm, bRe, 'ai_br')], 'im');
  net.markOutput(re, 're');
  net.markOutput(im, 'im');
  return net;
}

const ropeFeeds = (dtype: 'float32' | 'float16', seed: number): Record<string, Tensor> => {
  const r = new Random(seed);
  return { x: r.tensor([1, 6, 4, 8], dtype), b_re: r.tensor([1, 6, 1, 4], dtype), b_im: r.tensor([1, 6, 1, 4], dtype) };
};

/** fp16 storage of O(1) values, against the reference's float64 (as precision-kinds.test.ts). */
const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };

/** The real lowerings, with a no-op copy of `bytes` after layer `name`'s steps: not one map launch, so nothing reads through it or fuses into it. */
const twoStepped = (name: string, bytes: number) => (ctx: Parameters<typeof lowerLayer>[0]): LoweredStep[] => {
  const steps = lowerLayer(ctx);
  return ctx.layer.name === name ? [...steps, { kind: 'copy', dst: ctx.outputs[0]!.at, src: ctx.outputs[0]!.at, bytes }] : steps;
};

describe('planViews', () => {
  test('a slice read only by pointwise layers over its own shape is a view; the readers are listed', () => {
    const net = ropeNetwork('float32');
    const layers = net.layers;
    const views = planViews(layers, (id) => ({ shape: net.tensors[id]!.shape, intermediate: !net.outputs.some((o) => o.tensor === id) }));
    const at = (name: string): number => layers.findIndex((l) => l.name === name);
    expect([...views.entries()]).toEqual([
      [at('a_re'), [at('ar_br'), at('ar_bi')]],
      [at('a_im'), [at('ai_bi'), at('ai_br')]],
    ]);
  });

  test('not a view: a network output, a reader that is not a map', () => {
    const net = new Network('not_views');
    const x = net.addInput('x', 'float32', [4, 6]);
    const t = (name: string): NetTensor => net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], name);
    const out = t('output');
    net.markOutput(out, 'y');
    net.markOutput(net.add1({ kind: 'softmax', axis: 1 }, [t('to_softmax')], 'softmax'), 'w');
    const views = planViews(net.layers, (id) => ({ shape: net.tensors[id]!.shape, intermediate: !net.outputs.some((o) => o.tensor === id) }));
    expect(views.size).toBe(0);
  });

  test('a view: read broadcast, or through a reshape laid onto its bytes whose readers are maps', () => {
    const net = new Network('views');
    const x = net.addInput('x', 'float32', [4, 6]);
    const row = net.add1({ kind: 'slice', start: [0, 0], size: [1, 6], stride: [1, 1], mode: 'strict_bounds' }, [x], 'row');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [row, x], 'row_plus_x'), 'z');
    const t = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], 't');
    const flat = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [24] }, [t], 'flat');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [flat], 'exp'), 'w');
    const at = (name: string): number => net.layers.findIndex((l) => l.name === name);
    const facts = (id: number) => ({ shape: net.tensors[id]!.shape, intermediate: !net.outputs.some((o) => o.tensor === id) });
    expect([...planViews(net.layers, facts, (i) => i === at('flat'))]).toEqual([
      [at('row'), [at('row_plus_x')]],
      [at('t'), [at('flat')]],
      [at('flat'), [at('exp')]],
    ]);
    // A reshape read by a softmax reads the transpose's bytes later, in a kernel of its own: not a view.
    const softmax = net.add1({ kind: 'softmax', axis: 0 }, [net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [24] }, [net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], 't2')], 'flat2')], 'softmax');
    net.markOutput(softmax, 'v');
    expect([...planViews(net.layers, facts, (i) => i === at('flat') || i === at('flat2')).keys()]).toEqual([at('row'), at('t'), at('flat')]);
  });
});

describe('reading through views on the emulator', () => {
  test.each([
    ['float32', FP32],
    ['float16', FP16],
  ] as const)('RoPE in %s: the two slices never run, the same bits as with their copies', (dtype, tol) => {
    const { fused, plain } = expectEmulatedMatches(ropeNetwork(dtype), ropeFeeds(dtype, 3), tol);
    expect(plain.names).toEqual(expect.arrayContaining(['a_re', 'a_im']));
    expect(fused.names).not.toContain('a_re');
    expect(fused.names).not.toContain('a_im');
    // 8 launches without fusion: 2 slices, 4 products, re and im. With it: no slices, and both
    // products of each half run inside it (a consumer takes every producer it reads).
    expect([plain.launches, fused.launches]).toEqual([8, 2]);
    expect(fused.names).toEqual(['ar_br+ai_bi+re', 'ar_bi+ai_br+im']);
    // A step's bytes name the source, not the views: x (192 elements) once, b_re and b_im (24 each), the output (96).
    const bytes = dtype === 'float32' ? 4 : 2;
    expect(fused.bytes[0]).toBe(bytes * (192 + 24 + 24 + 96));
  });

  test('a reader that cannot read through (here: its lowering is two steps) gets the copy, run just before it', () => {
    const net = ropeNetwork('float32');
    const feeds = ropeFeeds('float32', 5);
    // ar_bi lowered as its map and a no-op copy after it: not one map launch, so it reads a_re's memory.
    const lower = twoStepped('ar_bi', 4);
    const { outputs, lowered } = emulateLowered(net, feeds, { lower });
    const names = lowered.stepLayers.map((s) => s.name);
    // ar_br (first reader of a_re) read through it; the copy runs right before ar_bi; a_im stays a view.
    expect(names.indexOf('a_re')).toBe(names.indexOf('ar_bi') - 1);
    expect(names.indexOf('a_re')).toBeGreaterThan(names.findIndex((n) => n.startsWith('ar_br')));
    expect(names).not.toContain('a_im');
    const plain = emulateLowered(net, feeds, { fuse: false }).outputs;
    for (const o of ['re', 'im']) expect(Buffer.from(outputs[o]!.data.buffer).equals(Buffer.from(plain[o]!.data.buffer))).toBe(true);
  });

  test('a reversed slice (negative stride) and a transpose read by a cast; a wrapping slice keeps its own kernel', () => {
    const net = new Network('views');
    const x = net.addInput('x', 'float32', [5, 6]);
    const reversed = net.add1({ kind: 'slice', start: [4, 1], size: [3, 5], stride: [-2, 1], mode: 'strict_bounds' }, [x], 'reversed');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [reversed], 'exp'), 'a');
    const transposed = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], 'transposed');
    net.markOutput(net.add1({ kind: 'cast', to: 'float16' }, [transposed], 'half'), 'b');
    const wrapped = net.add1({ kind: 'slice', start: [3, 0], size: [4, 6], stride: [1, 1], mode: 'wrap' }, [x], 'wrapped');
    net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [wrapped], 'relu'), 'c');
    const { fused } = expectEmulatedMatches(net, { x: new Random(9).tensor([5, 6]) }, FP32);
    expect(fused.names).not.toContain('reversed');
    expect(fused.names).not.toContain('transposed');
    expect(fused.names).toContain('wrapped');
  });

  test.each([
    ['float32', FP32],
    ['float16', FP16],
  ] as const)('a slice of a view from inside it, stepping backwards (RoPE\'s swapped pairs in a wide product\'s columns), in %s: neither slice runs', (dtype, tol) => {
    const net = new Network('view_of_view');
    const x = net.addInput('x', dtype, [3, 10]);
    const columns = net.add1({ kind: 'slice', start: [0, 2], size: [3, 6], stride: [1, 1], mode: 'strict_bounds' }, [x], 'columns');
    const pairs = net.add1({ kind: 'shuffle', reshape: [3, 3, 2], zeroIsPlaceholder: false }, [columns], 'pairs');
    const swapped = net.add1({ kind: 'slice', start: [0, 0, 1], size: [3, 3, 2], stride: [1, 1, -1], mode: 'strict_bounds' }, [pairs], 'swapped');
    const every = net.add1({ kind: 'slice', start: [0, 1, 0], size: [3, 2, 2], stride: [1, 1, 1], mode: 'strict_bounds' }, [pairs], 'later_pairs');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [swapped, pairs], 'product'), 'y');
    net.markOutput(net.add1({ kind: 'unary', op: 'neg' }, [every], 'neg'), 'z');
    const { fused, plain } = expectEmulatedMatches(net, { x: new Random(12).tensor([3, 10], dtype) }, tol);
    expect(plain.names).toEqual(expect.arrayContaining(['columns', 'swapped', 'later_pairs']));
    expect(fused.names).toEqual(['product', 'neg']);
  });
});

describe('a producer behind a view', () => {
  /** x [2, 3, 4, 5] cast to float16, transposed to [2, 4, 5, 3] and widened to 4 channels by a concat with a broadcast zero (the RGB stem's input). */
  function widenedInput(): Network {
    const net = new Network('widened_input');
    const x = net.addInput('x', 'float32', [2, 3, 4, 5]);
    const half = net.add1({ kind: 'cast', to: 'float16' }, [x], 'cast');
    const nhwc = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [0, 2, 3, 1] }, [half], 'nhwc');
    const zero = net.add1({ kind: 'constant', weights: Tensor.from('float16', [1, 1, 1, 1], [0]) }, [], 'zero');
    const zeros = net.add1({ kind: 'slice', start: [0, 0, 0, 0], size: [2, 4, 5, 1], stride: [0, 0, 0, 0], mode: 'strict_bounds' }, [zero], 'zeros');
    net.markOutput(net.add1({ kind: 'concat', axis: 3 }, [nhwc, zeros], 'widened'), 'y');
    return net;
  }

  test('a cast whose transpose (a view) is read by one copy computes in that copy\'s place: the same bits in one launch instead of five', () => {
    const { fused, plain } = expectEmulatedMatches(widenedInput(), { x: new Random(21).tensor([2, 3, 4, 5]) }, FP16);
    expect(plain.names).toEqual(['cast', 'nhwc', 'zeros', 'widened', 'widened']);
    // The cast computes in its block's place; the blocks are one launch of 4-channel rows
    // (lib/backends/cuda/layers/row-blocks.ts).
    expect(fused.names).toEqual(['cast+widened']);
  });

  test('when the copy cannot read through the view after all, the held producer runs before the view\'s copy', () => {
    const net = widenedInput();
    const feeds = { x: new Random(22).tensor([2, 3, 4, 5]) };
    // The concat lowered with a no-op copy after its blocks: not map launches only, so it reads the transpose's memory.
    const lower = twoStepped('widened', 2);
    const { outputs, lowered } = emulateLowered(net, feeds, { lower });
    expect(lowered.stepLayers.map((s) => s.name)).toEqual(['cast', 'nhwc', 'zeros', 'widened', 'widened', 'widened']);
    const plain = emulateLowered(net, feeds, { fuse: false }).outputs;
    expect(Buffer.from(outputs.y!.data.buffer).equals(Buffer.from(plain.y!.data.buffer))).toBe(true);
    expectClose(outputs.y!, new ReferenceRunner(net).run(feeds).y!, FP16, 'widened input');
  });

  test('when the view itself lowers to more than one copy (so it is copied where it stands), the held producer runs before it', () => {
    const net = widenedInput();
    const feeds = { x: new Random(23).tensor([2, 3, 4, 5]) };
    const lower = twoStepped('nhwc', 2);
    const { outputs, lowered } = emulateLowered(net, feeds, { lower });
    expect(lowered.stepLayers.map((s) => s.name).slice(0, 3)).toEqual(['cast', 'nhwc', 'nhwc']);
    const plain = emulateLowered(net, feeds, { fuse: false }).outputs;
    expect(Buffer.from(outputs.y!.data.buffer).equals(Buffer.from(plain.y!.data.buffer))).toBe(true);
    expectClose(outputs.y!, new ReferenceRunner(net).run(feeds).y!, FP16, 'widened input, transpose copied where it stands');
  });
});

describe('against PyTorch', () => {
  // PyTorch's Llama-style RoPE (view_as_complex · freqs_cis, complex64 freqs) through the
  // complex rewrite, lowered with views, on the emulator: PyTorch's stored outputs.
  test.each(['rotary_only', 'llama_rotary_complex_input'])('%s (.pt2): every real and imaginary half of q and k read through, the outputs PyTorch stored', async (name) => {
    const fixture = loadFixture(name);
    const program = await compile(path.join(FIXTURES, name, 'model.pt2'), { backend: 'reference' });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    await program.dispose();
    expect(segments.map((s) => s.kind)).toEqual(['engine']);
    // The Llama block's attention layer spelled out, as the cuda build does for an fp32 one (spell-out-attention).
    const network = expandLayers(deserializeEngine(segments[0]!.engine!)).network;
    const c = fixture.cases[0]!;
    // The engine takes a complex64 input as its float32 carrier [..., 2].
    const feeds = Object.fromEntries(network.inputs.map((input, i) => {
      const t = c.inputs[i]!;
      return [input.name, t.dtype === 'complex64' ? new Tensor('float32', [...t.shape, 2], t.data as Float32Array) : t];
    }));
    const { outputs, lowered } = emulateLowered(network, feeds);
    network.outputs.forEach((o, i) => expectClose(outputs[o.name]!, c.outputs[i]!, FP32, `${name} ${o.name} (emulated plan with views) vs PyTorch`));
    const names = lowered.stepLayers.map((s) => s.name);
    const halves = network.layers.filter((l) => /\/a_(re|im)$/.test(l.name)).map((l) => l.name);
    expect(halves.length).toBeGreaterThanOrEqual(4);
    for (const half of halves) expect(names).not.toContain(half);
  }, 120_000);
});
