/**
 * Fusion across shapes (lib/backends/cuda/plan/fuse-pointwise.ts): a producer read broadcast,
 * permuted or reshaped by its consumer, several producers in one consumer, a producer computed
 * in a copy's place (a transpose, a concat's block), and views read through reshapes and other
 * copies. Each network runs on the CPU kernel emulator with and without fusion — the same bits —
 * and against the reference backend.
 */
import { refinedStrides, splitForDense, throughDense, throughDenseFrom } from '../../../lib/backends/cuda/plan/fuse-pointwise';
import { Network, type NetTensor } from '../../../lib/network';
import { FP32, type Tolerance } from '../../helpers/compare';
import { Random } from '../../helpers/random';
import { expectEmulatedMatches } from './emulated-network';

const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };

describe('throughDense', () => {
  test('element for element: the operand keeps its strides', () => {
    expect(throughDense([2, 3, 4], [12, 4, 1], [2, 3, 4], [0, 4, 1])).toEqual([0, 4, 1]);
  });

  test('broadcast: a stride-0 walk reads the same element', () => {
    // A [4, 1] producer read across 6 columns: every column reads its row.
    expect(throughDense([4, 6], [1, 0], [4, 1], [1, 0])).toEqual([1, 0]);
  });

  test('permuted through a reshape: the heads transpose of a [2, 3, 8] bias add read as [2, 4, 3, 2]', () => {
    // y[b, h, s, d] = x[b, s, h·2 + d]: over x's dense strides [24, 8, 1], the walk is [24, 2, 8, 1].
    // The bias operand ([8], broadcast over b and s) is at h·2 + d.
    expect(throughDense([2, 4, 3, 2], [24, 2, 8, 1], [2, 3, 8], [0, 0, 1])).toEqual([0, 2, 0, 1]);
    expect(throughDense([2, 4, 3, 2], [24, 2, 8, 1], [2, 3, 8], [24, 8, 1])).toEqual([24, 2, 8, 1]);
  });

  test('null where the walk carries from one dim into the next, or is not a whole number of elements', () => {
    // A walk of 4 across a dim of 2 and the next (a repeat's merged heads): not one stride.
    expect(throughDense([4, 16], [16, 1], [2, 2, 16], [16, 0, 1])).toBeNull();
    expect(throughDense([3], [3], [4, 2], [2, 1])).toBeNull();
    expect(throughDense([2], [-1], [2], [1])).toBeNull();
  });
});

describe('throughDenseFrom', () => {
  test('a walk from inside the tensor, stepping backwards: RoPE\'s swapped pairs read from q\'s columns of a wide product', () => {
    // q [8, 4, 2] (pairs) laid over its columns [8, 8] of a [8, 12] product (operand strides [12, 1]):
    // the swapped half starts 1 element in and steps −1 within each pair.
    expect(throughDenseFrom([8, 4, 2], [8, 2, -1], [8, 8], [12, 1], 1)).toEqual({ strides: [12, 2, -1], offset: 1 });
    // From the start it would step before the first element.
    expect(throughDenseFrom([8, 4, 2], [8, 2, -1], [8, 8], [12, 1], 0)).toBeNull();
    // The start's digits: element 9 of [8, 8] is row 1, column 1.
    expect(throughDenseFrom([3, 2], [8, 1], [8, 8], [12, 1], 9)).toEqual({ strides: [12, 1], offset: 13 });
  });

  test('null where the walk leaves a dim at either end, or starts outside the tensor', () => {
    // Column 7 plus one more step of 1 is column 8: past the row.
    expect(throughDenseFrom([2], [1], [8, 8], [12, 1], 7)).toBeNull();
    expect(throughDenseFrom([2], [1], [8, 8], [12, 1], 6)).toEqual({ strides: [1], offset: 6 });
    expect(throughDenseFrom([3], [-8], [8, 8], [12, 1], 8)).toBeNull();
    expect(throughDenseFrom([3], [-8], [8, 8], [12, 1], 16)).toEqual({ strides: [-12], offset: 24 });
    expect(throughDenseFrom([1], [1], [8, 8], [12, 1], 64)).toBeNull();
  });
});

describe('splitForDense', () => {
  test('a dim that walks two dims of the dense layout splits into them', () => {
    // A GQA repeat: 4 heads over [2 kv heads, 2 repeats, 16] read at stride 16 (the merged heads).
    expect(splitForDense([4, 16], [16, 1], [2, 2, 16])).toEqual([[2, 2], [16]]);
    const parts = splitForDense([4, 16], [16, 1], [2, 2, 16])!;
    expect(refinedStrides([16, 1], parts)).toEqual([32, 16, 1]);
    expect(throughDense(parts.flat(), refinedStrides([16, 1], parts), [2, 2, 16], [16, 0, 1])).toEqual([16, 0, 1]);
    // RoPE's pairs read as one head dim of 8 over [4 pairs, 2].
    expect(splitForDense([3, 8], [8, 1], [3, 4, 2])).toEqual([[3], [4, 2]]);
  });

  test('no split where the walk does not fill whole runs of a dim, and none needed where it stays in one', () => {
    expect(splitForDense([3], [3], [4, 2])).toBeNull();
    expect(splitForDense([3], [2], [4, 2])).toEqual([[3]]);
    expect(splitForDense([6], [1], [4, 4])).toBeNull();
    expect(splitForDense([2, 3], [3, 1], [2, 3])).toEqual([[2], [3]]);
    expect(splitForDense([5, 7], [0, 1], [1, 7])).toEqual([[5], [7]]);
  });
});

describe('fused across shapes on the emulator', () => {
  test('RMSNorm: 1/rms (a row value) is computed inside the scaling, read broadcast', () => {
    const net = new Network('rmsnorm');
    const x = net.addInput('x', 'float32', [6, 32]);
    const w = net.add1({ kind: 'constant', weights: new Random(1).tensor([1, 32]) }, [], 'weight');
    const square = net.add1({ kind: 'elementwise', op: 'prod' }, [x, x], 'square');
    const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [square], 'mean');
    const eps = net.add1({ kind: 'constant', weights: new Random(2).tensor([1, 1], 'float32', 1e-5, 1e-5) }, [], 'eps');
    const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [mean, eps], 'add');
    const rsqrt = net.add1({ kind: 'unary', op: 'recip' }, [net.add1({ kind: 'unary', op: 'sqrt' }, [sum], 'sqrt')], 'rsqrt');
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [x, rsqrt], 'scaled');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [scaled, w], 'y'), 'y');
    const { fused, plain } = expectEmulatedMatches(net, { x: new Random(3).tensor([6, 32]) }, FP32);
    // The mean computes the square as it loads the row (a prologue), then one launch for
    // add → sqrt → recip → scaled → y reads the mean broadcast.
    expect([plain.launches, fused.launches]).toEqual([7, 2]);
    expect(fused.names).toEqual(['square+mean', 'add+sqrt+rsqrt+scaled+y']);
  });

  test("attention's scale computed inside its mask's select (the mask broadcast over heads)", () => {
    const net = new Network('masked');
    const scores = net.addInput('scores', 'float16', [2, 3, 4, 4]);
    const mask = net.addInput('mask', 'bool', [2, 1, 1, 4]);
    const scale = net.add1({ kind: 'constant', weights: new Random(8).tensor([1, 1, 1, 1], 'float16', 0.125, 0.125) }, [], 'scale_value');
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [scores, scale], 'scale');
    const low = net.add1({ kind: 'constant', weights: new Random(9).tensor([1, 1, 1, 1], 'float16', -6e4, -6e4) }, [], 'low');
    net.markOutput(net.add1({ kind: 'select' }, [mask, scaled, low], 'masked'), 'y');
    const r = new Random(10);
    const { fused, plain } = expectEmulatedMatches(net, { scores: r.tensor([2, 3, 4, 4], 'float16'), mask: r.tensor([2, 1, 1, 4], 'bool') }, FP16);
    expect(fused.names).toEqual(['scale+masked']);
    expect(plain.launches).toBe(2);
  });

  test.each([
    ['float32', FP32],
    ['float16', FP16],
  ] as const)('a %s bias add computed in the heads transpose, through the reshape between them', (dtype, tol) => {
    const net = new Network(`heads_${dtype}`);
    const x = net.addInput('x', dtype, [2, 5, 12]);
    const bias = net.addInput('bias', dtype, [12]);
    const biased = net.add1({ kind: 'elementwise', op: 'sum' }, [x, net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [1, 1, 12] }, [bias], 'bias3')], 'add_bias');
    const heads = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [2, 5, 3, 4] }, [biased], 'view');
    const t = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [0, 2, 1, 3] }, [heads], 'transpose');
    // A softmax reads the transposed heads: the transpose is not a view, so the bias runs in its place.
    net.markOutput(net.add1({ kind: 'softmax', axis: 3 }, [t], 'softmax'), 'y');
    const r = new Random(4);
    const { fused, plain } = expectEmulatedMatches(net, { x: r.tensor([2, 5, 12], dtype), bias: r.tensor([12], dtype) }, tol);
    expect(fused.launches).toBe(plain.launches - 1);
    expect(fused.names).toContain('add_bias+transpose');
  });

  test('the halves of a complex product computed in their blocks of the concat (RoPE re, im → pairs)', () => {
    const net = new Network('pairs');
    const x = net.addInput('x', 'float16', [3, 4, 8, 2]);
    const f = net.addInput('f', 'float16', [3, 1, 8, 2]);
    const half = (t: NetTensor, k: number, n: number, name: string): NetTensor =>
      net.add1({ kind: 'slice', start: [0, 0, 0, k], size: [3, n, 8, 1], stride: [1, 1, 1, 1], mode: 'strict_bounds' }, [t], name);
    const [ar, ai, br, bi] = [half(x, 0, 4, 'ar'), half(x, 1, 4, 'ai'), half(f, 0, 1, 'br'), half(f, 1, 1, 'bi')];
    const op = (o: 'prod' | 'sub' | 'sum', a: NetTensor, b: NetTensor, name: string): NetTensor => net.add1({ kind: 'elementwise', op: o }, [a, b], name);
    const re = op('sub', op('prod', ar, br, 'ar_br'), op('prod', ai, bi, 'ai_bi'), 're');
    const im = op('sum', op('prod', ar, bi, 'ar_bi'), op('prod', ai, br, 'ai_br'), 'im');
    net.markOutput(net.add1({ kind: 'concat', axis: 3 }, [re, im], 'pair'), 'y');
    const r = new Random(5);
    const { fused, plain } = expectEmulatedMatches(net, { x: r.tensor([3, 4, 8, 2], 'float16'), f: r.tensor([3, 1, 8, 2], 'float16') }, FP16);
    // Unfused: 4 slices, 4 products, re, im and two blocks. Fused: each block computes its half,
    // reading q and the frequencies (broadcast over the heads) through the slices, and the two
    // blocks are one launch storing a whole pair a thread
    // (lib/backends/cuda/layers/row-blocks.ts).
    expect([plain.launches, fused.launches]).toEqual([12, 1]);
    expect(fused.names).toEqual(['ar_br+ai_bi+re+ar_bi+ai_br+im+pair']);
  });

  test('a repeat (an expand) read by a transpose through a reshape, and a reversed slice read by a concat: neither copy runs', () => {
    const net = new Network('copies');
    const k = net.addInput('k', 'float32', [1, 5, 2, 1, 4]);
    const expand = net.add1({ kind: 'slice', start: [0, 0, 0, 0, 0], size: [1, 5, 2, 3, 4], stride: [1, 1, 1, 0, 1], mode: 'strict_bounds' }, [k], 'expand');
    const merged = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [1, 5, 6, 4] }, [expand], 'merge');
    const t = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [0, 2, 1, 3] }, [merged], 'transpose');
    net.markOutput(net.add1({ kind: 'softmax', axis: 3 }, [t], 'softmax'), 'y');
    const reversed = net.add1({ kind: 'slice', start: [0, 4, 0, 0, 0], size: [1, 5, 2, 1, 4], stride: [1, -1, 1, 1, 1], mode: 'strict_bounds' }, [k], 'reversed');
    net.markOutput(net.add1({ kind: 'concat', axis: 3 }, [reversed, k], 'cat'), 'z');
    const { fused, plain } = expectEmulatedMatches(net, { k: new Random(6).tensor([1, 5, 2, 1, 4]) }, FP32);
    expect(plain.names).toEqual(expect.arrayContaining(['expand', 'reversed']));
    expect(fused.names).not.toContain('reversed');
    // The repeat's 3 copies of each head merge with the heads into one dim of 6, which no single
    // stride walks: the transpose's box splits it back into 2 heads of 3 (splitForDense).
    expect(fused.names).not.toContain('expand');
    expect(fused.launches).toBe(plain.launches - 2);
  });

  test('an expand whose repeats stay a dim of their own is read through by the transpose', () => {
    const net = new Network('repeat');
    const k = net.addInput('k', 'float32', [1, 5, 2, 4]);
    const expand = net.add1({ kind: 'slice', start: [0, 0, 0, 0], size: [3, 5, 2, 4], stride: [0, 1, 1, 1], mode: 'strict_bounds' }, [k], 'expand');
    const t = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [0, 2, 1, 3] }, [expand], 'transpose');
    net.markOutput(net.add1({ kind: 'softmax', axis: 3 }, [t], 'softmax'), 'y');
    const { fused, plain } = expectEmulatedMatches(net, { k: new Random(7).tensor([1, 5, 2, 4]) }, FP32);
    expect(fused.names).not.toContain('expand');
    expect(fused.launches).toBe(plain.launches - 1);
  });
});

describe('row prologues on the emulator', () => {
  test.each([
    ['float16', 256, FP16],
    ['float16', 48, FP16],
    ['float32', 96, FP32],
  ] as const)('a %s residual sum (with its bias) computed as LayerNorm loads its rows of %i', (dtype, width, tol) => {
    const net = new Network(`residual_${dtype}_${width}`);
    const x = net.addInput('x', dtype, [2, 6, width]);
    const h = net.addInput('h', dtype, [2, 6, width]);
    const r = new Random(11);
    const bias = net.add1({ kind: 'constant', weights: r.tensor([1, 1, width], dtype) }, [], 'bias');
    const biased = net.add1({ kind: 'elementwise', op: 'sum' }, [x, bias], 'add_bias');
    const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [biased, h], 'residual');
    const scale = net.add1({ kind: 'constant', weights: r.tensor([1, 1, width], dtype) }, [], 'scale');
    const shift = net.add1({ kind: 'constant', weights: r.tensor([1, 1, width], dtype) }, [], 'shift');
    net.markOutput(net.add1({ kind: 'normalization', axes: [2], epsilon: 1e-5, nbGroups: 1 }, [sum, scale, shift], 'layer_norm'), 'y');
    const { fused, plain } = expectEmulatedMatches(net, { x: r.tensor([2, 6, width], dtype), h: r.tensor([2, 6, width], dtype) }, tol);
    expect([plain.launches, fused.launches]).toEqual([3, 1]);
    expect(fused.names).toEqual(['add_bias+residual+layer_norm']);
  });

  test("attention's scale and mask computed as the softmax loads its rows (the mask broadcast over heads and queries)", () => {
    const net = new Network('masked_softmax');
    const scores = net.addInput('scores', 'float16', [2, 3, 5, 256]);
    const mask = net.addInput('mask', 'bool', [2, 1, 1, 256]);
    const scale = net.add1({ kind: 'constant', weights: new Random(12).tensor([1, 1, 1, 1], 'float16', 0.125, 0.125) }, [], 'scale_value');
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [scores, scale], 'scale');
    const low = net.add1({ kind: 'constant', weights: new Random(13).tensor([1, 1, 1, 1], 'float16', -6e4, -6e4) }, [], 'low');
    const masked = net.add1({ kind: 'select' }, [mask, scaled, low], 'masked');
    net.markOutput(net.add1({ kind: 'softmax', axis: 3 }, [masked], 'softmax'), 'y');
    const r = new Random(14);
    const { fused, plain } = expectEmulatedMatches(net, { scores: r.tensor([2, 3, 5, 256], 'float16'), mask: r.tensor([2, 1, 1, 256], 'bool') }, FP16);
    expect([plain.launches, fused.launches]).toEqual([3, 1]);
    expect(fused.names).toEqual(['scale+masked+softmax']);
  });

  /** Two Llama-style residual steps: each sum read by the norm after it and by the next sum. */
  function residualChain(dtype: 'float16' | 'float32', width: number, rms: boolean): Network {
    const net = new Network(`stored_${dtype}_${width}`);
    const x = net.addInput('x', dtype, [2, 6, width]);
    const a = net.addInput('a', dtype, [2, 6, width]);
    const r = new Random(21);
    const constant = (name: string, shape: number[], lo = -1, hi = 1): NetTensor => net.add1({ kind: 'constant', weights: r.tensor(shape, dtype, lo, hi) }, [], name);
    const h1 = net.add1({ kind: 'elementwise', op: 'sum' }, [x, a], 'residual_1');
    const zero = constant('zero', [1, 1, 1], 0, 0);
    const n1 = net.add1({ kind: 'normalization', axes: [2], epsilon: 1e-5, nbGroups: 1, rms }, [h1, constant('weight_1', [1, 1, width]), zero], 'norm_1');
    const m = net.add1({ kind: 'elementwise', op: 'prod' }, [n1, constant('mlp_scale', [1, 1, width])], 'mlp');
    const h2 = net.add1({ kind: 'elementwise', op: 'sum' }, [h1, m], 'residual_2');
    const n2 = net.add1({ kind: 'normalization', axes: [2], epsilon: 1e-5, nbGroups: 1, rms }, [h2, constant('weight_2', [1, 1, width]), zero], 'norm_2');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [h2, n2], 'residual_3'), 'y');
    return net;
  }

  test.each([
    ['float16', 256, true, FP16],
    ['float16', 48, true, FP16],
    ['float32', 96, true, FP32],
    ['float16', 256, false, FP16],
  ] as const)('a %s residual sum over rows of %i read again later is stored by the norm that loads it (rms %s)', (dtype, width, rms, tol) => {
    const net = residualChain(dtype, width, rms);
    const r = new Random(22);
    const { fused, plain } = expectEmulatedMatches(net, { x: r.tensor([2, 6, width], dtype), a: r.tensor([2, 6, width], dtype) }, tol);
    // residual_3 reads both sums from memory: each norm wrote its sum as it loaded the row.
    expect([plain.launches, fused.launches]).toEqual([6, 3]);
    expect(fused.names).toEqual(['residual_1+norm_1', 'mlp+residual_2+norm_2', 'residual_3']);
  });

  test('a stored sum the norm cannot take (rows of 2050: the block form) runs first; a later reshape of it reads memory', () => {
    const net = new Network('stored_declined');
    const x = net.addInput('x', 'bfloat16', [3, 2050]);
    const a = net.addInput('a', 'bfloat16', [3, 2050]);
    const r = new Random(24);
    const h = net.add1({ kind: 'elementwise', op: 'sum' }, [x, a], 'residual');
    const w = net.add1({ kind: 'constant', weights: r.tensor([1, 2050], 'bfloat16') }, [], 'w');
    const norm = net.add1({ kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1, rms: true }, [h, w, w], 'norm');
    const later = net.add1({ kind: 'elementwise', op: 'sum' }, [h, norm], 'later');
    net.markOutput(later, 'y');
    const flat = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, reshape: [6150] }, [h], 'flat');
    net.markOutput(net.add1({ kind: 'unary', op: 'neg' }, [flat], 'neg'), 'z');
    const { fused } = expectEmulatedMatches(net, { x: r.tensor([3, 2050], 'bfloat16'), a: r.tensor([3, 2050], 'bfloat16') }, FP16);
    expect(fused.names).toEqual(['residual', 'norm', 'later', 'neg']);
  });

  test('a sum read first by another layer, or first by a softmax, is not stored by a row kernel', () => {
    const net = new Network('not_stored');
    const x = net.addInput('x', 'float16', [4, 256]);
    const a = net.addInput('a', 'float16', [4, 256]);
    const r = new Random(23);
    const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [x, a], 'sum');
    const early = net.add1({ kind: 'unary', op: 'exp' }, [sum], 'early');
    const w = net.add1({ kind: 'constant', weights: r.tensor([1, 256], 'float16') }, [], 'w');
    const b = net.add1({ kind: 'constant', weights: r.tensor([1, 256], 'float16') }, [], 'b');
    const norm = net.add1({ kind: 'normalization', axes: [1], epsilon: 1e-5, nbGroups: 1 }, [sum, w, b], 'norm');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [early, norm], 'y'), 'y');
    const sum2 = net.add1({ kind: 'elementwise', op: 'sum' }, [x, x], 'sum2');
    const soft = net.add1({ kind: 'softmax', axis: 1 }, [sum2], 'soft');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [sum2, soft], 'z'), 'z');
    const { fused } = expectEmulatedMatches(net, { x: r.tensor([4, 256], 'float16'), a: r.tensor([4, 256], 'float16') }, FP16);
    expect(fused.names).toEqual(['sum', 'norm', 'early+y', 'sum2', 'soft', 'z']);
  });

  test('a producer read elsewhere too, or over a strided row, runs as its own launch', () => {
    const net = new Network('declined');
    const x = net.addInput('x', 'float32', [4, 40]);
    const e = net.add1({ kind: 'unary', op: 'exp' }, [x], 'exp');
    const t = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false, firstTranspose: [1, 0] }, [x], 't');
    const n = net.add1({ kind: 'unary', op: 'neg' }, [t], 'neg');
    net.markOutput(net.add1({ kind: 'softmax', axis: 0 }, [n], 'columns'), 'y');
    net.markOutput(net.add1({ kind: 'softmax', axis: 1 }, [e], 'rows'), 'z');
    const { fused } = expectEmulatedMatches(net, { x: new Random(15).tensor([4, 40]) }, FP32);
    // exp is computed in the row softmax; neg's softmax runs over strided columns (no warp form).
    expect(fused.names).toContain('exp+rows');
    expect(fused.names).toContain('columns');
  });
});
