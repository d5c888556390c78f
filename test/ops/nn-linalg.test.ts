/**
 * NN family, matrix products and attention: ONNX MatMul and Gemm against onnxruntime; mm,
 * bmm, addmm, linear and scaled_dot_product_attention against hand-derived values; symbolic
 * inference.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import { formatShape, sym } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, floatAttr } from '../helpers/ort-single-op';
import { expectValues, f32, run } from '../helpers/ops-setup';
import { Random } from '../helpers/random';

describe('ONNX MatMul against onnxruntime', () => {
  const rng = new Random(201);
  it.each([
    [[2, 1, 3, 4], [5, 4, 6]],
    [[3, 4], [4, 5]],
    [[4], [4]],
    [[4], [3, 4, 5]],
    [[2, 3, 4], [4]],
    [[1, 3, 4], [2, 4, 5]],
    [[0, 4], [4, 3]],
    [[3, 0], [0, 2]],
    [[1, 1], [1, 1]],
  ])('%j x %j', async (a, b) => {
    await expectOnnxMatchesOrt({ opType: 'MatMul', inputs: [rng.tensor(a), rng.tensor(b)], opset: 13 });
  });

  it('multiplies int32 matrices exactly', async () => {
    await expectOnnxMatchesOrt({ opType: 'MatMul', inputs: [rng.intTensor([2, 3], -9, 9, 'int32'), rng.intTensor([3, 2], -9, 9, 'int32')], opset: 13 });
  });
});

describe('ONNX Gemm against onnxruntime', () => {
  const rng = new Random(202);
  const A = rng.tensor([3, 4]);
  const At = rng.tensor([4, 3]);
  const B = rng.tensor([4, 5]);
  const Bt = rng.tensor([5, 4]);

  it.each([
    ['plain with C [5]', [A, B, rng.tensor([5])], {}],
    ['transB (the Linear pattern) with C [5]', [A, Bt, rng.tensor([5])], { transB: 1 }],
    ['transB without C', [A, Bt], { transB: 1 }],
    ['transA and transB, alpha, beta, C [3, 1]', [At, Bt, rng.tensor([3, 1])], { transA: 1, transB: 1, alpha: floatAttr(0.5), beta: floatAttr(2) }],
    ['transA, C scalar', [At, B, rng.tensor([])], { transA: 1, beta: floatAttr(-1.5) }],
    ['full C [3, 5], alpha 2', [A, B, rng.tensor([3, 5])], { alpha: floatAttr(2) }],
    ['C [1, 5] with transB and beta 0.25', [A, Bt, rng.tensor([1, 5])], { transB: 1, beta: floatAttr(0.25) }],
    ['no C, alpha 3', [A, B], { alpha: floatAttr(3) }],
    ['beta 0 ignores C', [A, B, rng.tensor([3, 5])], { beta: floatAttr(0) }],
  ] as const)('%s', async (_label, inputs, attributes) => {
    for (const opset of [13, 21]) {
      await expectOnnxMatchesOrt({ opType: 'Gemm', inputs: [...inputs], attributes: attributes as Record<string, never>, opset });
    }
  });

  it('with constant weights (initializers), transposed and not', async () => {
    await expectOnnxMatchesOrt({ opType: 'Gemm', inputs: [A, { constant: Bt }, { constant: rng.tensor([5]) }], attributes: { transB: 1 }, opset: 13 });
    await expectOnnxMatchesOrt({
      opType: 'Gemm',
      inputs: [{ constant: At }, B, { constant: rng.tensor([5]) }],
      attributes: { transA: 1, alpha: floatAttr(0.75) },
      opset: 13,
    });
  });

  it('maps the Linear pattern onto aten.linear and others onto addmm', () => {
    const linear = loadOnnx(buildSingleOpModel({ opType: 'Gemm', inputs: [A, Bt, rng.tensor([5])], attributes: { transB: 1 }, opset: 13 }));
    expect(linear.calls().map((n) => n.target)).toEqual(['aten.linear.default']);
    const addmm = loadOnnx(buildSingleOpModel({ opType: 'Gemm', inputs: [At, B, rng.tensor([3, 5])], attributes: { transA: 1 }, opset: 13 }));
    expect(addmm.calls().map((n) => n.target)).toEqual(['aten.permute.default', 'aten.addmm.default']);
  });

  it('rejects a 3-D A as E_BAD_MODEL naming the node', () => {
    const model = buildSingleOpModel({ opType: 'Gemm', inputs: [rng.tensor([1, 3, 4]), B], opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "Gemm_0"') }));
  });

  it('rejects inner dims that differ as E_BAD_MODEL', () => {
    const model = buildSingleOpModel({ opType: 'Gemm', inputs: [A, rng.tensor([5, 5])], opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});

describe('ATen matrix products on hand-derived values', () => {
  const a = f32([2, 3], [1, 2, 3, 4, 5, 6]);
  const b = f32([3, 2], [1, 0, 0, 1, 1, 1]);

  it('mm, addmm with beta/alpha and a broadcast bias, linear with bias', () => {
    expectValues(run('aten.mm.default', [a, b], ([self, mat2]) => ({ self, mat2 }))[0]!, [4, 5, 10, 11]);
    const bias = f32([2], [10, 20]);
    // 2*(a@b) + 0.5*bias
    expectValues(run('aten.addmm.default', [bias, a, b], ([self, mat1, mat2]) => ({ self, mat1, mat2, beta: 0.5, alpha: 2 }))[0]!, [13, 20, 25, 32]);
    // x @ w^T + bias, w [2, 3]
    const w = f32([2, 3], [1, 1, 1, 0, 1, 0]);
    expectValues(run('aten.linear.default', [a, w, bias], ([input, weight, bias]) => ({ input, weight, bias }))[0]!, [16, 22, 25, 25]);
  });

  it('bmm multiplies per batch; matmul of two vectors is a 0-d dot product', () => {
    const x = f32([2, 1, 2], [1, 2, 3, 4]);
    const y = f32([2, 2, 1], [1, 1, 2, 0]);
    const [r] = run('aten.bmm.default', [x, y], ([self, mat2]) => ({ self, mat2 }));
    expect(r!.shape).toEqual([2, 1, 1]);
    expectValues(r!, [3, 6]);
    const [dot] = run('aten.matmul.default', [f32([3], [1, 2, 3]), f32([3], [4, 5, 6])], ([self, other]) => ({ self, other }));
    expect(dot!.shape).toEqual([]);
    expectValues(dot!, [32]);
  });

  it('rejects mm of a 3-D tensor and mismatched dtypes as E_BAD_MODEL', () => {
    const g = new Graph();
    const x = g.addInput('x', tensorType('float32', [2, 3, 4]));
    const y = g.addInput('y', tensorType('float32', [4, 5]));
    const z = g.addInput('z', tensorType('float16', [4, 5]));
    expect(() => call(g, 'aten.mm.default', { self: x, mat2: y })).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
    expect(() => call(g, 'aten.matmul.default', { self: x, other: z })).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});

describe('symbolic inference of matrix products', () => {
  it('linear on [s0, s1, 64]', () => {
    const g = new Graph();
    g.symbols.set('s0', { min: 1, max: 8 });
    g.symbols.set('s1', { min: 1, max: 512 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), sym('s1'), 64]));
    const w = g.addConstant('w', new Tensor('float32', [32, 64]));
    const b = g.addConstant('b', new Tensor('float32', [32]));
    const y = call(g, 'aten.linear.default', { input: x, weight: w, bias: b }).output;
    expect(formatShape(y.tensorType.shape)).toBe('[s0, s1, 32]');
    g.setOutputs([y]);
    const rng = new Random(203);
    const [out] = interpret(g, [rng.tensor([2, 3, 64])]);
    expect(out!.shape).toEqual([2, 3, 32]);
  });

  it('matmul broadcasts a symbolic batch: [s0, 1, 3, 4] x [5, 4, 6]', () => {
    const g = new Graph();
    g.symbols.set('s0', { min: 1, max: 8 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 1, 3, 4]));
    const y = g.addInput('y', tensorType('float32', [5, 4, 6]));
    expect(formatShape(call(g, 'aten.matmul.default', { self: x, other: y }).output.tensorType.shape)).toBe('[s0, 5, 3, 6]');
  });

  it('fails naming the node when inner dims differ', () => {
    const g = new Graph();
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 4]));
    const w = g.addInput('w', tensorType('float32', [8, 5]));
    g.symbols.set('s0', { min: 1, max: 8 });
    expect(() => call(g, 'aten.linear.default', { input: x, weight: w }, { name: 'fc1' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('fc1') }),
    );
  });
});

describe('aten.scaled_dot_product_attention on hand-derived values', () => {
  // A tiny [1, 1, 2, 2] example: q = k = I, v = [[1, 2], [3, 4]].
  const q = f32([1, 1, 2, 2], [1, 0, 0, 1]);
  const k = f32([1, 1, 2, 2], [1, 0, 0, 1]);
  const v = f32([1, 1, 2, 2], [1, 2, 3, 4]);
  const sdpa = (inputs: Tensor[], extra: (vs: Value[]) => Record<string, unknown> = () => ({})): Tensor =>
    run('aten.scaled_dot_product_attention.default', inputs, (vs) => ({ query: vs[0], key: vs[1], value: vs[2], ...extra(vs) }))[0]!;

  it('default scale 1/sqrt(E)', () => {
    const e = Math.exp(1 / Math.sqrt(2)); // weight of the matching key
    // row 0 attends [e, 1] / (e + 1); row 1 attends [1, e] / (1 + e)
    const row0 = [(e * 1 + 3) / (e + 1), (e * 2 + 4) / (e + 1)];
    const row1 = [(1 + e * 3) / (1 + e), (2 + e * 4) / (1 + e)];
    const out = sdpa([q, k, v]);
    expect(out.shape).toEqual([1, 1, 2, 2]);
    expectValues(out, [...row0, ...row1]);
  });

  it('is_causal: row 0 sees only key 0', () => {
    const e = Math.exp(1 / Math.sqrt(2));
    expectValues(sdpa([q, k, v], () => ({ is_causal: true })), [1, 2, (1 + e * 3) / (1 + e), (2 + e * 4) / (1 + e)]);
  });

  it('a bool mask equal to the causal one gives the same; a float mask adds; scale is used', () => {
    const e = Math.exp(1 / Math.sqrt(2));
    const boolMask = Tensor.from('bool', [2, 2], [1, 0, 1, 1]);
    expectValues(sdpa([q, k, v, boolMask], (vs) => ({ attn_mask: vs[3] })), [1, 2, (1 + e * 3) / (1 + e), (2 + e * 4) / (1 + e)]);
    // scale 1, additive mask [[0, -1], [0.5, 0]]: scores [[1, -1], [0.5, 1]]
    const floatMask = f32([1, 1, 2, 2], [0, -1, 0.5, 0]);
    const w0 = [Math.exp(1), Math.exp(-1)];
    const w1 = [Math.exp(0.5), Math.exp(1)];
    const mix = (w: number[]): number[] => [(w[0]! * 1 + w[1]! * 3) / (w[0]! + w[1]!), (w[0]! * 2 + w[1]! * 4) / (w[0]! + w[1]!)];
    expectValues(sdpa([q, k, v, floatMask], (vs) => ({ attn_mask: vs[3], scale: 1 })), [...mix(w0), ...mix(w1)]);
  });

  it('enable_gqa repeats each key/value head for its query group', () => {
    const rng = new Random(204);
    const Q = rng.tensor([1, 4, 3, 2]);
    const K = rng.tensor([1, 2, 3, 2]);
    const V = rng.tensor([1, 2, 3, 2]);
    const out = sdpa([Q, K, V], () => ({ enable_gqa: true }));
    expect(out.shape).toEqual([1, 4, 3, 2]);
    // Reference: plain attention per query head h with key/value head floor(h / 2).
    const qa = Q.toArray();
    const ka = K.toArray();
    const va = V.toArray();
    const expected: number[] = [];
    for (let h = 0; h < 4; h++) {
      const kv = Math.floor(h / 2);
      for (let i = 0; i < 3; i++) {
        const scores = [0, 1, 2].map((j) => (qa[(h * 3 + i) * 2]! * ka[(kv * 3 + j) * 2]! + qa[(h * 3 + i) * 2 + 1]! * ka[(kv * 3 + j) * 2 + 1]!) / Math.sqrt(2));
        const w = scores.map((s) => Math.exp(s));
        const total = w.reduce((p, x) => p + x, 0);
        for (let d = 0; d < 2; d++) expected.push([0, 1, 2].reduce((p, j) => p + (w[j]! / total) * va[(kv * 3 + j) * 2 + d]!, 0));
      }
    }
    expectValues(out, expected);
  });

  it('infers [..., L, Ev] symbolically and rejects dropout and mask with is_causal', () => {
    const g = new Graph();
    g.symbols.set('s0', { min: 1, max: 128 });
    const query = g.addInput('q', tensorType('float32', [2, 8, sym('s0'), 16]));
    const key = g.addInput('k', tensorType('float32', [2, 2, 7, 16]));
    const value = g.addInput('v', tensorType('float32', [2, 2, 7, 32]));
    const mask = g.addInput('m', tensorType('bool', [sym('s0'), 7]));
    const out = call(g, 'aten.scaled_dot_product_attention.default', { query, key, value, attn_mask: mask, enable_gqa: true }).output;
    expect(formatShape(out.tensorType.shape)).toBe('[2, 8, s0, 32]');
    expect(() => call(g, 'aten.scaled_dot_product_attention.default', { query, key, value, enable_gqa: true, dropout_p: 0.1 }, { name: 'attn' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('dropout_p') }),
    );
    expect(() => call(g, 'aten.scaled_dot_product_attention.default', { query, key, value, attn_mask: mask, is_causal: true, enable_gqa: true })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL' }),
    );
  });
});
