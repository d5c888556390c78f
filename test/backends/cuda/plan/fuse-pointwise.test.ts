/**
 * Pointwise fusion (lib/backends/cuda/plan/fuse-pointwise.ts): which layers fuse, and whole
 * networks lowered with and without fusion and run on the CPU kernel emulator — the fused
 * plan must give bit for bit what the unfused one gives (fusion rounds the intermediate to its
 * storage dtype as a store would), with fewer launches, and both must match the reference backend.
 */
import { fusionChainEnds, planPointwiseFusion, planStoredPrologues } from '../../../../lib/backends/cuda/plan/fuse-pointwise';
import { Network, type NetTensor } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { FP32 } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { expectEmulatedMatches as expectFusedMatches } from '../emulated-network';

const constant = (net: Network, shape: number[], seed: number): NetTensor => net.add1({ kind: 'constant', weights: new Random(seed).tensor(shape) }, [], `c${seed}`);

describe('planPointwiseFusion', () => {
  test('a single-reader pointwise producer fuses into its pointwise reader; chains link by link', () => {
    const net = new Network('chain');
    const x = net.addInput('x', 'float32', [2, 3]);
    const a = net.add1({ kind: 'unary', op: 'exp' }, [x], 'a');
    const b = net.add1({ kind: 'activation', type: 'relu' }, [a], 'b');
    const c = net.add1({ kind: 'elementwise', op: 'prod' }, [b, x], 'c');
    net.markOutput(c, 'y');
    const facts = (id: number) => ({ shape: net.tensor(id).shape, intermediate: id !== x.id && id !== c.id });
    const into = planPointwiseFusion(net.layers, facts);
    expect([...into]).toEqual([[0, 1], [1, 2]]);
    expect(fusionChainEnds(into, 3)).toEqual([2, 2, 2]);
  });

  test('a broadcasting reader fuses its producer; no fusion across two readers, into a non-map layer or out of a network output', () => {
    const net = new Network('keep');
    const x = net.addInput('x', 'float32', [1, 3]);
    const a = net.add1({ kind: 'unary', op: 'exp' }, [x], 'a'); // read broadcast by b
    const b = net.add1({ kind: 'elementwise', op: 'sum' }, [a, constant(net, [4, 3], 1)], 'b');
    const d = net.add1({ kind: 'unary', op: 'abs' }, [b], 'd'); // two readers
    const e1 = net.add1({ kind: 'unary', op: 'neg' }, [d], 'e1');
    const e2 = net.add1({ kind: 'unary', op: 'sqrt' }, [d], 'e2');
    const s = net.add1({ kind: 'cumulative', op: 'sum', axis: 1, exclusive: false, reverse: false }, [e1], 's');
    net.markOutput(e2, 'y');
    net.markOutput(s, 'z');
    const outputs = new Set([e2.id, s.id]);
    const into = planPointwiseFusion(net.layers, (id) => ({ shape: net.tensor(id).shape, intermediate: id !== x.id && !outputs.has(id) && net.tensor(id).producer >= 0 && net.layers[net.tensor(id).producer]!.params.kind !== 'constant' }));
    // a fuses into b (which reads it broadcast: a is computed per element of b), b into d; d
    // has two readers, e1's reader is a cumulative sum, e2 is a network output.
    expect([...into]).toEqual([[0, 2], [2, 3]]);
  });
});

describe('planStoredPrologues', () => {
  test("a pointwise producer read first by a normalization's data input, then by others; not one fused already, read first elsewhere, or read by the norm's scale", () => {
    const net = new Network('stored');
    const x = net.addInput('x', 'float32', [2, 8]);
    const w = constant(net, [1, 8], 1);
    const norm = (t: NetTensor, name: string, scale = w): NetTensor => net.add1({ kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 }, [t, scale, w], name);
    // Layer 0 is the constant w.
    const h = net.add1({ kind: 'elementwise', op: 'sum' }, [x, x], 'h'); // 1: read by n1 first, then by g
    const n1 = norm(h, 'n1'); // 2
    const g = net.add1({ kind: 'elementwise', op: 'sum' }, [h, n1], 'g'); // 3: read by e first
    const e = net.add1({ kind: 'unary', op: 'exp' }, [g], 'e'); // 4
    const n2 = norm(g, 'n2'); // 5
    const k = net.add1({ kind: 'unary', op: 'abs' }, [e], 'k'); // 6: read by a norm as data and as scale
    const n3 = norm(k, 'n3', k); // 7
    const only = net.add1({ kind: 'unary', op: 'neg' }, [n3], 'only'); // 8: one reader, a norm (a plain prologue)
    const n4 = norm(only, 'n4'); // 9
    const outputs = [n2, net.add1({ kind: 'elementwise', op: 'sum' }, [k, n4], 'z')];
    outputs.forEach((t, i) => net.markOutput(t, `y${i}`));
    const ids = new Set([x.id, ...outputs.map((t) => t.id)]);
    const facts = (id: number) => ({ shape: net.tensor(id).shape, intermediate: !ids.has(id) && net.layers[net.tensor(id).producer]!.params.kind !== 'constant' });
    const into = planPointwiseFusion(net.layers, facts);
    expect(into.get(8)).toBe(9);
    expect([...planStoredPrologues(net.layers, facts, into)]).toEqual([[1, 2]]);
  });
});

describe('fused pointwise chains on the emulator', () => {
  test('bias add → ReLU → product with the input: one launch, the same bits as three', () => {
    const net = new Network('bias_relu');
    const x = net.addInput('x', 'float32', [2, 4, 5]);
    const bias = [0.5, -0.25, 1, -2];
    const b = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 4, 1], bias) }, [], 'b');
    const biased = net.add1({ kind: 'elementwise', op: 'sum' }, [x, b], 'bias');
    const relu = net.add1({ kind: 'activation', type: 'relu' }, [biased], 'relu');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [relu, x], 'gate'), 'y');
    const input = new Random(3).tensor([2, 4, 5]);
    const { fused, plain } = expectFusedMatches(net, { x: input }, FP32);
    expect([fused.launches, plain.launches]).toEqual([1, 3]);
    expect(fused.names).toEqual(['bias+relu+gate']);
    // What a profile states the fused step's bandwidth against: x, b and y once each (the two
    // intermediates never reach memory); unfused, each layer's own inputs and output.
    expect(fused.bytes).toEqual([4 * (40 + 4 + 40)]);
    expect(plain.bytes).toEqual([4 * (40 + 4 + 40), 4 * (40 + 40), 4 * (40 + 40 + 40)]);
    // And by hand: max(x + b[c], 0) · x in float32.
    const xs = input.data as Float32Array;
    const expected = Array.from(xs, (v, i) => Math.fround(Math.max(Math.fround(v + bias[Math.floor(i / 5) % 4]!), 0) * v));
    expect(Array.from(fused.outputs.y!.data as Float32Array)).toEqual(expected);
  });

  test('activation parameters of both halves reach the fused kernel (leaky ReLU → clip)', () => {
    const net = new Network('params');
    const x = net.addInput('x', 'float32', [64]);
    const leaky = net.add1({ kind: 'activation', type: 'leaky_relu', alpha: 0.25 }, [x], 'leaky');
    net.markOutput(net.add1({ kind: 'activation', type: 'clip', alpha: -0.1, beta: 0.5 }, [leaky], 'clip'), 'y');
    const { fused } = expectFusedMatches(net, { x: new Random(4).tensor([64], 'float32', -2, 2) }, FP32);
    expect(fused.launches).toBe(1);
  });

  test('a float16 intermediate is rounded as a store would round it (fused = unfused, bit for bit)', () => {
    const net = new Network('half');
    const x = net.addInput('x', 'float32', [300]);
    const h = net.add1({ kind: 'cast', to: 'float16' }, [x], 'to_half');
    const e = net.add1({ kind: 'unary', op: 'exp' }, [h], 'exp');
    net.markOutput(net.add1({ kind: 'cast', to: 'float32' }, [e], 'to_float'), 'y');
    const { fused, plain } = expectFusedMatches(net, { x: new Random(5).tensor([300], 'float32', -3, 3) }, { rtol: 2e-3, atol: 1e-3 });
    expect([fused.launches, plain.launches]).toEqual([1, 3]);
  });

  test('the same input read by both halves, and the intermediate read twice (x·x)', () => {
    const net = new Network('square');
    const x = net.addInput('x', 'float32', [3, 7]);
    const a = net.add1({ kind: 'elementwise', op: 'sub' }, [x, constant(net, [1, 7], 6)], 'centered');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [a, a], 'square'), 'y');
    const { fused } = expectFusedMatches(net, { x: new Random(7).tensor([3, 7]) }, FP32);
    expect(fused.launches).toBe(1);
  });

  test('a producer whose reader is not next in line: the layers between keep their memory and results', () => {
    // a = exp(x) is read only by d, after b and c, which reuse nothing of x while a's work
    // waits; d also reads x's transpose t through its strides (a view), so t's copy never runs.
    const net = new Network('apart');
    const x = net.addInput('x', 'float32', [4, 4]);
    const a = net.add1({ kind: 'unary', op: 'exp' }, [x], 'a');
    const b = net.add1({ kind: 'reduce', op: 'sum', axes: [1], keepDims: true }, [x], 'b');
    const c = net.add1({ kind: 'unary', op: 'neg' }, [b], 'c');
    const d = net.add1({ kind: 'elementwise', op: 'sum' }, [a, net.add1({ kind: 'shuffle', reshape: [4, 4], zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], 't')], 'd');
    net.markOutput(d, 'y');
    net.markOutput(c, 'z');
    const { fused, plain } = expectFusedMatches(net, { x: new Random(8).tensor([4, 4]) }, FP32);
    expect(fused.launches).toBe(plain.launches - 2);
    expect(fused.names).not.toContain('t');
  });
});
