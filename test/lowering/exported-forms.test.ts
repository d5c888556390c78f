/**
 * The sharding pass on Llama blocks in the form ONNX exports write them (MatMul projections
 * with `[in, out]` initializers, Reshape/Transpose heads, MatMul/Softmax attention, x·sigmoid(x)):
 * a two-layer GQA model built with the repo's ONNX writer (test/lowering/sharding/onnx-llama.ts).
 * onnxruntime on the same file is the reference: every rank of the split graph (interpreted,
 * with the test's own all-reduce) and of the compiled tensor-parallel program (reference
 * backend) must match it (fp32 rtol 1e-4 / atol 1e-5), match the unsharded graph, and agree
 * across ranks exactly. Forms the pass cannot split are E_SHARDING naming the softmax node.
 */
import { deserializeEngine } from '../../lib/backends/reference/engine-format';
import { compile } from '../../lib/compile';
import { loadOnnx } from '../../lib/frontends/onnx';
import { interpret } from '../../lib/interpreter';
import type { Value } from '../../lib/ir/graph';
import { findProblems } from '../../lib/ir/verify';
import { shardGraph } from '../../lib/lowering/sharding';
import { canonicalizeOnnxForms, recognizeAttention } from '../../lib/lowering/exported-forms';
import { loadTensorParallelProgramBuffer } from '../../lib/runtime/tensor-parallel/file-load';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, FP32 } from '../helpers/compare';
import { rejection, thrownError } from '../helpers/errors';
import { runOrtModel } from '../helpers/ort-single-op';
import { pt2Graph } from '../helpers/pt2-graphs';
import { interpretRanks } from './sharding/helpers';
import { onnxLlama, pseudoRandom } from './sharding/onnx-llama';

describe.each([false, true])('ONNX-exported Llama (q/k/v biases: %s)', (qkvBias) => {
  const { model, dim, seq } = onnxLlama({ qkvBias });
  const graph = loadOnnx(model);
  const x = pseudoRandom([1, seq, dim], 7, 2);
  let ort: Tensor;
  let unsharded: Tensor;

  beforeAll(async () => {
    [ort] = (await runOrtModel(model, [x])) as [Tensor];
    [unsharded] = interpret(graph, [x]) as [Tensor];
  });

  test('the import itself matches onnxruntime (so the comparisons below mean something)', () => {
    expectClose(unsharded, ort, FP32, 'unsharded vs onnxruntime');
  });

  test('every attention and MLP block is found, named by its weights', () => {
    const two = shardGraph(graph, 2).blocks;
    expect(two.map((b) => [b.kind, b.layer])).toEqual([
      ['attention', 'model.layers.0.self_attn'],
      ['mlp', 'model.layers.0.mlp'],
      ['attention', 'model.layers.1.self_attn'],
      ['mlp', 'model.layers.1.mlp'],
    ]);
    expect(two[0]).toMatchObject({ heads: 4, kvHeads: 2, kvMode: 'divide', columns: [{ role: 'q', weight: 'model.layers.0.self_attn.q_proj.weight' }, { role: 'k' }, { role: 'v' }] });
    expect(two[1]).toMatchObject({ hidden: 24, columns: [{ role: 'gate', weight: 'model.layers.0.mlp.gate_proj.weight' }, { role: 'up' }], row: { weight: 'model.layers.0.mlp.down_proj.weight' } });
    expect(shardGraph(graph, 4).blocks[2]).toMatchObject({ heads: 4, kvHeads: 2, kvMode: 'replicate' });
  });

  test('the rewritten graph computes the same (MatMul → linear, MatMul/Softmax → sdpa, x·sigmoid(x) → silu)', () => {
    const canon = canonicalizeOnnxForms(graph);
    const targets = canon.calls().map((n) => n.target);
    expect(targets.filter((t) => t === 'aten.scaled_dot_product_attention.default')).toHaveLength(2);
    expect(targets.filter((t) => t === 'aten.linear.default')).toHaveLength(14);
    expect(targets.filter((t) => t === 'aten.silu.default')).toHaveLength(2);
    expect(targets).not.toContain('aten._softmax.default');
    // Biases fold into the linear layers (an Add left on a column-parallel output would span the split axis).
    const biased = canon.calls().filter((n) => n.target === 'aten.linear.default' && n.args.bias !== null).map((n) => (n.args.bias as Value).name);
    expect(biased).toEqual(qkvBias ? ['q', 'k', 'v', 'q', 'k', 'v'].map((w, i) => `model.layers.${i < 3 ? 0 : 1}.self_attn.${w}_proj.bias`) : []);
    expect(findProblems(canon)).toEqual([]);
    expectClose(interpret(canon, [x])[0]!, ort, FP32, 'rewritten vs onnxruntime');
  });

  describe.each([2, 4])('split %i ways', (n) => {
    test('rank graphs: valid, heads and columns divided, an all-reduce after each row-parallel layer', () => {
      const { ranks, weights } = shardGraph(graph, n);
      for (const rank of ranks) {
        expect(findProblems(rank)).toEqual([]);
        expect(rank.calls().filter((c) => c.target === 'trt.all_reduce')).toHaveLength(4);
      }
      const q = weights.filter((w) => w.name === 'model.layers.0.self_attn.q_proj.weight');
      expect(q.map((w) => [w.rank, w.axis, w.start, w.end, w.shard.shape.join('x')])).toEqual(Array.from({ length: n }, (_, r) => [r, 0, (r * dim) / n, ((r + 1) * dim) / n, `${dim / n}x${dim}`]));
      const down = weights.filter((w) => w.name === 'model.layers.1.mlp.down_proj.weight');
      expect(down.map((w) => [w.axis, w.layout, w.shard.shape.join('x')])).toEqual(Array.from({ length: n }, () => [1, 'copy', `${dim}x${24 / n}`]));
    });

    test('every rank matches onnxruntime and the unsharded graph; the ranks agree exactly', () => {
      const perRank = interpretRanks(shardGraph(graph, n).ranks, [x]);
      perRank.forEach(([out], r) => {
        expectClose(out!, ort, FP32, `rank ${r} vs onnxruntime`);
        expectClose(out!, unsharded, FP32, `rank ${r} vs unsharded`);
        expectExact(out!, perRank[0]![0]!, `rank ${r} vs rank 0`);
      });
    });

    test('compile(onnx bytes, {tensorParallel}) on the reference backend, and its saved file, match onnxruntime', async () => {
      const program = await compile(model, { backend: 'reference', tensorParallel: n });
      try {
        const perRank = await program.runAllRanks([x]);
        perRank.forEach(([out], r) => expectClose(out!, ort, FP32, `compiled rank ${r} vs onnxruntime`));
        const loaded = await loadTensorParallelProgramBuffer(program.saveBuffer());
        try {
          const back = await loaded.runAllRanks([x]);
          back.forEach(([out], r) => expectExact(out!, perRank[r]![0]!, `loaded rank ${r} vs compiled`));
        } finally {
          await loaded.dispose();
        }
      } finally {
        await program.dispose();
      }
    }, 120_000);
  });
});

describe('forms the pass cannot split are refused by name', () => {
  test('.pt2 graphs (sdpa, linear) are left as they are', () => {
    const g = pt2Graph('llama_rotary_complex_input');
    expect(canonicalizeOnnxForms(g)).toBe(g);
  });

  test('scores scaled by a computed value', () => {
    const { model } = onnxLlama({ layers: 1, scores: (nodes, s) => {
      nodes.push({ op: 'Sigmoid', inputs: [s], outputs: ['gate_s'], name: '/gate' }, { op: 'Mul', inputs: [s, 'gate_s'], outputs: ['gated_s'], name: '/gated' });
      return 'gated_s';
    } });
    const e = thrownError(() => shardGraph(loadOnnx(model), 2));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toMatch(/^attention at softmax node "\S+" cannot be split for tensor parallelism: its scores are scaled by node \S+ \(aten\.mul\.Tensor\), whose factor is not one constant number$/);
  });

  test('scores through an op that is not a scale or a mask', () => {
    const { model } = onnxLlama({ layers: 1, scores: (nodes, s) => {
      nodes.push({ op: 'Tanh', inputs: [s], outputs: ['capped'], name: '/softcap' });
      return 'capped';
    } });
    const e = thrownError(() => shardGraph(loadOnnx(model), 2));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('its scores come from node');
    expect(e.message).toContain('(aten.tanh.default), not from a matmul of queries and transposed keys [times a constant] [plus a mask]');
  });

  test('through compile(), the same refusal', async () => {
    const { model } = onnxLlama({ layers: 1, scores: (nodes, s) => {
      nodes.push({ op: 'Tanh', inputs: [s], outputs: ['capped'], name: '/softcap' });
      return 'capped';
    } });
    const e = await rejection(compile(model, { backend: 'reference', tensorParallel: 2 }));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('attention at softmax node');
  });
});

describe('recognizeAttention: attention written out by an exporter, for every compile', () => {
  const { model, dim, seq } = onnxLlama({ qkvBias: true });
  const graph = loadOnnx(model);
  const x = pseudoRandom([1, seq, dim], 11, 2);

  test('each MatMul/Softmax/MatMul becomes one SDPA node and nothing else changes; onnxruntime agrees', async () => {
    const { graph: out, attentions } = recognizeAttention(graph);
    expect(attentions).toBe(2);
    const targets = out.calls().map((n) => n.target);
    expect(targets.filter((t) => t === 'aten.scaled_dot_product_attention.default')).toHaveLength(2);
    expect(targets).not.toContain('aten._softmax.default');
    // Projections stay MatMuls here (the linear rewrite is the sharding matcher's), and the graph is valid.
    expect(targets.filter((t) => t === 'aten.linear.default')).toHaveLength(0);
    expect(findProblems(out)).toEqual([]);
    const [ort] = (await runOrtModel(model, [x])) as [Tensor];
    expectClose(interpret(out, [x])[0]!, ort, FP32, 'recognized vs onnxruntime');
  });

  test('compile() converts them into attention layers, and the program matches onnxruntime', async () => {
    const program = await compile(model, { backend: 'reference' });
    const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
    const layers = segments.flatMap((s) => (s.kind === 'engine' ? deserializeEngine(s.engine!).layers : []));
    expect(layers.filter((l) => l.params.kind === 'attention')).toHaveLength(2);
    expect(layers.filter((l) => l.params.kind === 'softmax')).toHaveLength(0);
    const [ort] = (await runOrtModel(model, [x])) as [Tensor];
    expectClose(((await program.run([x])) as Tensor[])[0]!, ort, FP32, 'compiled vs onnxruntime');
    await program.dispose();
  });

  test('a graph without written-out attention is returned as it is', () => {
    const plain = pt2Graph('mlp');
    expect(recognizeAttention(plain)).toEqual({ graph: plain, attentions: 0 });
  });
});
