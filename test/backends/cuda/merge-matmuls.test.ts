/**
 * Sibling projections as one wide GEMM (lib/backends/cuda/merge-matmuls.ts): networks in the
 * forms the frontends give a linear layer (a constant [n, k] reshaped to [1, n, k], matmul with
 * opB transpose; or [k, n] with opB none), merged, on the CPU emulator against the reference
 * backend running the unmerged network; the plan's steps (one GEMM, no slice copies); and the
 * forms the pass leaves alone. The Llama fixture runs through every pass against PyTorch in
 * precision-fixtures.test.ts; here its groups are counted.
 */
import * as path from 'node:path';
import { mergeMatmuls } from '../../../lib/backends/cuda/merge-matmuls';
import { cudaNetworkPasses } from '../../../lib/backends/cuda/build';
import { deserializeEngine } from '../../../lib/backends/reference/engine-format';
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { compile } from '../../../lib/compile';
import { Network, type NetTensor, type TrtDType } from '../../../lib/network';
import { Tensor } from '../../../lib/tensor';
import { expectClose, FP32, type Tolerance } from '../../helpers/compare';
import { FIXTURES } from '../../helpers/fixtures';
import { Random } from '../../helpers/random';
import { emulateLowered } from './emulated-network';

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

  test('nothing to merge: the same network back', () => {
    const net = new Network('single');
    const x = net.addInput('x', 'float32', [4, 6]);
    net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [linear(net, x, 5, 1, 'a')], 'relu'), 'y');
    expect(mergeMatmuls(net)).toEqual({ network: net, groups: 0, merged: 0 });
  });

  test('the Llama fixture: each layer\'s query with its key, and its gate with its up projection; the value (read by the attention) alone', async () => {
    const program = await compile(path.join(FIXTURES, 'llama_rotary_complex_input', 'model.pt2'), { backend: 'reference', inputs: [{ shape: [1, 8, 64] }, { shape: [8, 8] }] });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    await program.dispose();
    const { network, merged } = cudaNetworkPasses(deserializeEngine(segments[0]!.engine!), ['fp32', 'fp16']);
    expect([merged.groups, merged.merged]).toEqual([4, 8]);
    const names = network.layers.filter((l) => l.params.kind === 'matmul' && !('attention' in l.params && l.params.attention)).map((l) => l.name);
    expect(names).toEqual(['linear+linear_1', 'linear_2', 'linear_3', 'linear_4+linear_5', 'linear_6', 'linear_7+linear_8', 'linear_9', 'linear_10', 'linear_11+linear_12', 'linear_13']);
  }, 120_000);
});
