/**
 * Sibling projections as one wide GEMM (lib/backends/cuda/passes/merge-matmuls.ts): networks in the
 * forms the frontends give a linear layer (a constant [n, k] reshaped to [1, n, k], matmul with
 * opB transpose; or [k, n] with opB none), merged, on the CPU emulator against the reference
 * backend running the unmerged network; the plan's steps (one GEMM, no slice copies); a fused
 * attention reading the wide product's columns at offsets, with the bias sums merged where only
 * attentions read them; the offsets through an engine file and at lowering; and the forms the
 * pass leaves alone. The Llama fixture runs through every pass against PyTorch in
 * precision-fixtures.test.ts; here its groups and its attentions' offsets are counted.
 */
import * as path from 'node:path';
import { fuseAttention } from '../../../../lib/backends/cuda/passes/fuse-attention';
import { mergeMatmuls } from '../../../../lib/backends/cuda/passes/merge-matmuls';
import { countsOf, runPasses } from '../../../../lib/backends/cuda/passes';
import { deserializeEngine } from '../../../../lib/backends/reference/engine-format';
import { checkNetwork } from '../../../../lib/network/check';
import { BadModelError } from '../../../../lib/errors';
import { deserializeNetworkFromBuffer, serializeNetworkToBuffer } from '../../../../lib/network/serialize';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { compile } from '../../../../lib/compile';
import { Network, type NetTensor, type TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, FP32, type Tolerance } from '../../../helpers/compare';
import { FIXTURES } from '../../../helpers/fixtures';
import { Random } from '../../../helpers/random';
import { emulateLowered } from '../emulated-network';

const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };

/** A linear layer as the PyTorch frontend gives it: x · Wᵀ (W [n, k] reshaped to [1, …, n, k]). */
function linear(net: Network, x: NetTensor, n: number, seed: number, name: string, opB: 'transpose' | 'none' = 'transpose'): NetTensor {
  const k = x.shape.at(-1)!;
  const r = new Random(seed);
  const shape = opB === 'transpose' ? [n, k] : [k, n];
  const w = net.add1({ kind: 'constant', weights: Tensor.from(x.dtype, shape, r.floats(n * k, -0.5, 0.5)) }, [], `${name}/weight`);
  const ones = new Array<number>(x.shape.length - 2).fill(1);
  const wb = ones.length === 0 ? w : net.add1({ kind: 'shuffle', reshape: [...ones, ...shape], zeroIsPlaceholder: false }, [w], `${name}/batch_b`);
  return net.add1({ kind: 'matmul', opA: 'none', opB }, [x, wb], name);
}

const biasAdd = (net: Network, y: NetTensor, seed: number, name: string): NetTensor => {
  const n = y.shape.at(-1)!;
  const b = net.add1({ kind: 'constant', weights: Tensor.from(y.dtype, [...new Array<number>(y.shape.length - 1).fill(1), n], new Random(seed).floats(n)) }, [], `${name}/bias`);
  return net.add1({ kind: 'elementwise', op: 'sum' }, [y, b], name);
};

/** BERT's attention inputs: query, key and value of x [b, s, h·d], each with its bias, split into heads and transposed to [b, h, s, d]. */
function bertProjections(dtype: TrtDType, b = 2, s = 8, h = 2, d = 8): Network {
  const net = new Network(`qkv_${dtype}`);
  const x = net.addInput('x', dtype, [b, s, h * d]);
  for (const [i, role] of ['query', 'key', 'value'].entries()) {
    const y = biasAdd(net, linear(net, x, h * d, 10 + i, role), 20 + i, `${role}/bias_add`);
    const heads = net.add1({ kind: 'shuffle', reshape: [b, s, h, d], secondTranspose: [0, 2, 1, 3], zeroIsPlaceholder: false }, [y], `${role}/heads`);
    net.markOutput(heads, role);
  }
  return net;
}

/**
 * Self-attention over x [b, s, h·d] in the frontends' math form: query, key and value projected
 * (each with its bias, or without for GQA, whose key and value have `kvh` heads repeated to h
 * by a stride-0 slice), split into heads and transposed, Q·Kᵀ, scaled, a float mask over the
 * keys added, softmax, ·V, and the heads transposed back.
 */
function selfAttention(dtype: TrtDType, o: { b: number; s: number; h: number; kvh: number; d: number; bias: boolean }): Network {
  const { b, s, h, kvh, d } = o;
  const net = new Network(`self_attention_${dtype}_${o.bias ? 'bias' : 'gqa'}`);
  const x = net.addInput('x', dtype, [b, s, h * d]);
  const mask = net.addInput('mask', dtype, [b, 1, 1, s]);
  const project = (heads: number, i: number, role: string): NetTensor => {
    const y = linear(net, x, heads * d, 10 + i, role);
    const z = o.bias ? biasAdd(net, y, 20 + i, `${role}/bias_add`) : y;
    let t = net.add1({ kind: 'shuffle', reshape: [b, s, heads, d], secondTranspose: [0, 2, 1, 3], zeroIsPlaceholder: false }, [z], `${role}/heads`);
    if (heads !== h) {
      const one = net.add1({ kind: 'shuffle', reshape: [b, heads, 1, s, d], zeroIsPlaceholder: false }, [t], `${role}/split`);
      const rep = net.add1({ kind: 'slice', start: [0, 0, 0, 0, 0], size: [b, heads, h / heads, s, d], stride: [1, 1, 0, 1, 1], mode: 'strict_bounds' }, [one], `${role}/repeat`);
      t = net.add1({ kind: 'shuffle', reshape: [b, h, s, d], zeroIsPlaceholder: false }, [rep], `${role}/merge`);
    }
    return t;
  };
  const [q, k, v] = [project(h, 0, 'query'), project(kvh, 1, 'key'), project(kvh, 2, 'value')];
  let scores = net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [q, k], 'scores');
  const scale = net.add1({ kind: 'constant', weights: Tensor.from(dtype, [1, 1, 1, 1], [1 / Math.sqrt(d)]) }, [], 'scale_factor');
  scores = net.add1({ kind: 'elementwise', op: 'prod' }, [scores, scale], 'scale');
  scores = net.add1({ kind: 'elementwise', op: 'sum' }, [scores, mask], 'masked');
  const probs = net.add1({ kind: 'softmax', axis: 3 }, [scores], 'softmax');
  const out = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [probs, v], 'output');
  net.markOutput(net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], reshape: [b, s, h * d], zeroIsPlaceholder: false }, [out], 'out_t'), 'y');
  return net;
}

const gemms = (steps: ReadonlyArray<{ kind: string }>): number => steps.filter((s) => s.kind === 'gemm').length;

/** `merged` on the emulator against the reference backend on `source` (the unmerged network). */
function expectMergedMatches(source: Network, merged: Network, feeds: Record<string, Tensor>, tol: Tolerance) {
  const { outputs, lowered } = emulateLowered(merged, feeds);
  const want = new ReferenceRunner(source).run(feeds);
  for (const o of source.outputs) expectClose(outputs[o.name]!, want[o.name]!, tol, `${source.name} ${o.name}`);
  return lowered;
}

describe('mergeMatmuls', () => {
  test.each([
    ['float32', FP32],
    ['float16', FP16],
  ] as const)('BERT-style query, key and value in %s: one GEMM, each bias add and head transpose reading its columns, no copies', (dtype, tol) => {
    const source = bertProjections(dtype);
    const result = mergeMatmuls(source);
    expect([result.groups, result.merged]).toEqual([1, 3]);
    expect(result.network.layers.filter((l) => l.params.kind === 'matmul')).toHaveLength(1);
    // The three weights are gone; one constant [1, 48, 16] holds them.
    const constants = result.network.layers.filter((l) => l.params.kind === 'constant' && !l.name.endsWith('/bias'));
    expect(constants.map((l) => [l.name, (l.params as { weights: Tensor }).weights.shape])).toEqual([['query+key+value/weights', [1, 48, 16]]]);
    const feeds = { x: new Random(3).tensor([2, 8, 16], dtype) };
    const lowered = expectMergedMatches(source, result.network, feeds, tol);
    expect(gemms(lowered.steps)).toBe(1);
    const names = lowered.stepLayers.map((s) => s.name);
    expect(names.filter((n) => n.includes('/columns'))).toEqual([]);
    // Each bias add runs inside its transpose, reading the wide product: 1 GEMM and 3 launches.
    expect(lowered.steps.filter((s) => s.kind === 'launch')).toHaveLength(3);
  });

  test('B as [k, n] (opB none), different widths, A of rank 2: the columns land where each projection\'s did', () => {
    const net = new Network('kn');
    const x = net.addInput('x', 'float32', [5, 6]);
    const ys = [3, 7, 2].map((n, i) => linear(net, x, n, 40 + i, `p${i}`, 'none'));
    ys.forEach((y, i) => net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [y], `relu${i}`), `y${i}`));
    const result = mergeMatmuls(net);
    expect([result.groups, result.merged]).toEqual([1, 3]);
    const lowered = expectMergedMatches(net, result.network, { x: new Random(4).tensor([5, 6]) }, FP32);
    expect(gemms(lowered.steps)).toBe(1);
    expect(lowered.steps.find((s) => s.kind === 'gemm')).toMatchObject({ m: 5, n: 12, k: 6 });
  });

  test('left alone: an output read by a matmul, a network output, a shared weight, a different A; the rest still merge', () => {
    const net = new Network('alone');
    const x = net.addInput('x', 'float32', [4, 6]);
    const other = net.addInput('z', 'float32', [4, 6]);
    // Two that merge (read by maps only).
    const a = linear(net, x, 5, 1, 'a');
    const b = linear(net, x, 5, 2, 'b');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [a, b], 'ab'), 'ab');
    // Read by a matmul: its slice would be copied first.
    const c = linear(net, x, 6, 3, 'c');
    net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [c, x], 'cx'), 'cx');
    // A network output itself.
    net.markOutput(linear(net, x, 5, 4, 'd'), 'd');
    // A weight another layer also reads.
    const w = net.add1({ kind: 'constant', weights: new Random(5).tensor([5, 6]) }, [], 'shared');
    const e = net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [x, w], 'e');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [e], 'exp_e'), 'e');
    net.markOutput(net.add1({ kind: 'unary', op: 'neg' }, [w], 'neg_w'), 'w');
    // Another A.
    net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [linear(net, other, 5, 6, 'f')], 'abs_f'), 'f');
    const result = mergeMatmuls(net);
    expect([result.groups, result.merged]).toEqual([1, 2]);
    expect(result.network.layers.filter((l) => l.params.kind === 'matmul').map((l) => l.name)).toEqual(['a+b', 'c', 'cx', 'd', 'e', 'f']);
    const feeds = { x: new Random(7).tensor([4, 6]), z: new Random(8).tensor([4, 6]) };
    expectMergedMatches(net, result.network, feeds, FP32);
  });

  // The unfused form rounds the scores and probabilities between layers; the fused kernel keeps them in fp32.
  const ATTENTION: Tolerance = { rtol: 1e-2, atol: 4e-3 };
  test.each([
    ['BERT: query, key and value with their biases', { b: 2, s: 24, h: 2, kvh: 2, d: 16, bias: true }, [0, 32, 64], ['query+key+value/bias_add', 'output/attention']],
    ['GQA: a key and value of one head each, no biases', { b: 1, s: 20, h: 2, kvh: 1, d: 16, bias: false }, [0, 32, 48], ['output/attention']],
  ] as const)('%s, read by the fused attention: one GEMM, the attention reading its columns at offsets', (_, o, offsets, launched) => {
    const source = selfAttention('float16', o);
    const fused = fuseAttention(source);
    expect(fused.attentions).toBe(1);
    const result = mergeMatmuls(fused.network);
    expect([result.groups, result.merged]).toEqual([1, 3]);
    const [att] = result.network.layers.flatMap((l) => (l.params.kind === 'attention' && l.params.strided ? [l.params.strided] : []));
    expect(att!.offsets).toEqual(offsets);
    // Q, K and V read one wide tensor: rows of its full width.
    const width = (o.h + 2 * o.kvh) * o.d;
    expect([att!.query.at(-1), att!.key.at(-1), att!.value.at(-1)]).toEqual([width, width, width]);
    const feeds = {
      x: new Random(3).tensor([o.b, o.s, o.h * o.d], 'float16', -1, 1),
      mask: Tensor.from('float16', [o.b, 1, 1, o.s], Array.from({ length: o.b * o.s }, (_, i) => (i % 7 === 6 ? -10000 : 0))),
    };
    const lowered = expectMergedMatches(source, result.network, feeds, ATTENTION);
    // The reference backend's attention executor reads the same offsets.
    expectClose(new ReferenceRunner(result.network).run(feeds).y!, new ReferenceRunner(source).run(feeds).y!, ATTENTION, 'reference attention at offsets');
    expect(gemms(lowered.steps)).toBe(1);
    // No slice copies: the biases as one sum over the wide product, then the attention.
    expect(lowered.steps.flatMap((step, i) => (step.kind === 'launch' ? [lowered.stepLayers[i]!.name] : []))).toEqual(launched);
  });

  test('a bias sum stays with its projection where a map reads it (the map computes it), and joins the merge where attentions alone read it', () => {
    const source = bertProjections('float32');
    const merged = mergeMatmuls(source).network;
    expect(merged.layers.filter((l) => l.params.kind === 'elementwise').map((l) => l.name)).toEqual(['query/bias_add', 'key/bias_add', 'value/bias_add']);
    const attention = mergeMatmuls(fuseAttention(selfAttention('float16', { b: 1, s: 8, h: 2, kvh: 2, d: 16, bias: true })).network).network;
    expect(attention.layers.filter((l) => l.params.kind === 'elementwise').map((l) => l.name)).toEqual(['query+key+value/bias_add']);
  });

  test('left alone: projections an attention reads behind a reshape (their slices would be copied for it)', () => {
    const [b, s, h, d] = [1, 8, 2, 16];
    const net = new Network('behind_reshape');
    const x = net.addInput('x', 'float16', [b, s, h * d]);
    const heads = ['query', 'key', 'value'].map((role, i) => net.add1({ kind: 'shuffle', reshape: [b, s, h, d], zeroIsPlaceholder: false }, [linear(net, x, h * d, 30 + i, role)], `${role}/heads`));
    const strides = [s * h * d, d, h * d];
    const strided = { batch: [b, h], seqQ: s, seqKV: s, headDim: d, scale: 0.25, causal: false, query: strides, key: strides, value: strides, output: strides, outputShape: [b, s, h * d] };
    net.markOutput(net.add1({ kind: 'attention', scale: 0.25, causal: false, strided }, heads, 'attention'), 'y');
    expect(mergeMatmuls(net)).toEqual({ network: net, groups: 0, merged: 0 });
  });

  test('an engine stores the offsets and refuses bad ones by name; a lowering refuses offsets that read past the tensor', () => {
    const o = { b: 1, s: 8, h: 2, kvh: 2, d: 16, bias: true };
    const merged = () => mergeMatmuls(fuseAttention(selfAttention('float16', o)).network).network;
    const attentionOf = (net: Network) => net.layers.flatMap((l) => (l.params.kind === 'attention' && l.params.strided ? [l.params.strided] : []));
    const check = (net: Network, fail: (m: string, cause?: unknown) => never): unknown => checkNetwork(net, fail);
    const good = merged();
    expect(attentionOf(deserializeNetworkFromBuffer(serializeNetworkToBuffer(good), 'engine', check))[0]!.offsets).toEqual([0, 32, 64]);
    for (const offsets of [[0, 32], [0, -32, 64]]) {
      const bad = merged();
      attentionOf(bad)[0]!.offsets = offsets;
      expect(() => deserializeNetworkFromBuffer(serializeNetworkToBuffer(bad), 'engine', check)).toThrow(BadModelError);
      expect(() => deserializeNetworkFromBuffer(serializeNetworkToBuffer(bad), 'engine', check)).toThrow(/parameter strided must be attention parameters .*three offsets/);
    }
    // The value one column further reads one element past the wide product's last row.
    const past = merged();
    attentionOf(past)[0]!.offsets = [0, 32, 65];
    const feeds = { x: new Random(1).tensor([1, 8, 32], 'float16'), mask: Tensor.from('float16', [1, 1, 1, 8], new Array<number>(8).fill(0)) };
    expect(() => emulateLowered(past, feeds)).toThrow(/attention reads value elements 65 to 768 of its 768/);
  });

  test('nothing to merge: the same network back', () => {
    const net = new Network('single');
    const x = net.addInput('x', 'float32', [4, 6]);
    net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [linear(net, x, 5, 1, 'a')], 'relu'), 'y');
    expect(mergeMatmuls(net)).toEqual({ network: net, groups: 0, merged: 0 });
  });

  test('the Llama fixture: each layer\'s query, key and value (the attention reading the value\'s columns), and its gate with its up projection', async () => {
    const program = await compile(path.join(FIXTURES, 'llama_rotary_complex_input', 'model.pt2'), { backend: 'reference', inputs: [{ shape: [1, 8, 64] }, { shape: [8, 8] }] });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    await program.dispose();
    const passes = runPasses(deserializeEngine(segments[0]!.engine!), { precisions: ['fp32', 'fp16'] });
    const { network } = passes;
    const merged = countsOf(passes, 'merge-matmuls');
    expect([merged.groups, merged.merged]).toEqual([4, 10]);
    const names = network.layers.filter((l) => l.params.kind === 'matmul').map((l) => l.name);
    expect(names).toEqual(['linear+linear_1+linear_2', 'linear_3', 'linear_4+linear_5', 'linear_6', 'linear_7+linear_8+linear_9', 'linear_10', 'linear_11+linear_12', 'linear_13']);
    // Each attention reads its value from the wide product's last columns.
    const attentions = network.layers.filter((l) => l.params.kind === 'attention' && l.params.strided !== undefined);
    expect(attentions.map((l) => (l.params as { strided: { offsets?: number[] } }).strided.offsets)).toEqual([[0, 0, 96], [0, 0, 96]]);
  }, 120_000);
});
