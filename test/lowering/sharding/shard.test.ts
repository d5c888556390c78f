/**
 * The tensor-parallel sharding pass on the Llama fixtures (PyTorch outputs are the
 * reference): each rank graph is interpreted, with an all-reduce written in the test, and
 * every rank's output must match PyTorch (fp32 rtol 1e-4 / atol 1e-5) and the unsharded
 * graph, and be identical across ranks. Also: what the pattern matcher finds, that the
 * column-parallel weights are views of the model's memory and the row-parallel ones copies,
 * and the E_SHARDING errors for bad n and unrecognizable models.
 */
import * as path from 'node:path';

import { ShardingError } from '../../../lib/errors';
import { loadPt2 } from '../../../lib/frontends/pt2';
import { interpret } from '../../../lib/interpreter';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType } from '../../../lib/ir/graph';
import { findProblems } from '../../../lib/ir/verify';
import { findBlocks, shardGraph } from '../../../lib/lowering/sharding';
import { readNumbers } from '../../../lib/kernels/access';
import { expectClose, expectExact, FP32 } from '../../helpers/compare';
import { thrownError } from '../../helpers/errors';
import { FIXTURES, loadFixture } from '../../helpers/fixtures';
import { pt2Graph } from '../../helpers/pt2-graphs';
import { interpretRanks, tinyLlama } from './helpers';

describe('pattern matching', () => {
  test('finds the attention and SwiGLU blocks of both layers, named by their weights', () => {
    const blocks = findBlocks(pt2Graph('llama_rotary_complex_input'));
    expect(blocks.map((b) => [b.kind, b.layer, b.columns.map((c) => `${c.role}:${c.node.name}`).join(' '), b.row.name])).toEqual([
      ['attention', 'p_layers_0_attention', 'q:linear k:linear_1 v:linear_2', 'linear_3'],
      ['mlp', 'p_layers_0_feed_forward', 'gate:linear_4 up:linear_5', 'linear_6'],
      ['attention', 'p_layers_1_attention', 'q:linear_7 k:linear_8 v:linear_9', 'linear_10'],
      ['mlp', 'p_layers_1_feed_forward', 'gate:linear_11 up:linear_12', 'linear_13'],
    ]);
  });

  test('the sharding report: heads, key/value heads divided (n=2) or replicated (n=4), MLP columns', () => {
    const two = shardGraph(pt2Graph('llama_rotary_complex_input'), 2).blocks;
    expect(two[0]).toMatchObject({ kind: 'attention', heads: 4, kvHeads: 2, kvMode: 'divide', row: { weight: 'p_layers_0_attention_wo_weight' } });
    expect(two[1]).toMatchObject({ kind: 'mlp', hidden: 128, row: { weight: 'p_layers_0_feed_forward_w2_weight' } });
    expect(shardGraph(pt2Graph('llama_rotary_complex_input'), 4).blocks[2]).toMatchObject({ heads: 4, kvHeads: 2, kvMode: 'replicate' });
  });
});

describe.each([1, 2, 4])('llama_rotary_complex_input split %i ways', (n) => {
  const fixture = loadFixture('llama_rotary_complex_input');
  const g = pt2Graph('llama_rotary_complex_input');

  test('rank graphs are valid, with heads divided and an all-reduce after each row-parallel layer', () => {
    const { ranks } = shardGraph(g, n);
    expect(ranks).toHaveLength(n);
    for (const rank of ranks) {
      expect(findProblems(rank)).toEqual([]);
      expect(rank.calls().filter((c) => c.target === 'trt.all_reduce')).toHaveLength(4);
      // The complex freqs_cis input reaches every rank unchanged.
      expect(rank.inputs.map((v) => `${v.name}:${v.tensorType.dtype}[${v.tensorType.shape.join(',')}]`)).toEqual(['x:float32[1,8,64]', 'freqs_cis:complex64[8,8]']);
      const q = rank.nodes.find((x) => x.name === 'view')!.output.tensorType.shape;
      expect(q).toEqual([1, 8, 4 / n, 16]);
      const k = rank.nodes.find((x) => x.name === 'view_1')!.output.tensorType.shape;
      expect(k).toEqual([1, 8, Math.max(1, 2 / n), 16]);
      expect(rank.nodes.find((x) => x.name === 'linear_4')!.output.tensorType.shape).toEqual([1, 8, 128 / n]);
    }
  });

  test('every rank matches PyTorch and the unsharded graph, and the ranks agree exactly', () => {
    const { inputs, outputs } = fixture.cases[0]!;
    const [whole] = interpret(g, inputs);
    const perRank = interpretRanks(shardGraph(g, n).ranks, inputs);
    perRank.forEach(([out], r) => {
      expectClose(out!, outputs[0]!, FP32, `rank ${r} vs PyTorch`);
      expectClose(out!, whole!, FP32, `rank ${r} vs unsharded`);
      expectExact(out!, perRank[0]![0]!, `rank ${r} vs rank 0`);
    });
  });

  test('column-parallel weights are views of the model weights; row-parallel ones are copies of their columns', () => {
    const { ranks, weights } = shardGraph(g, n);
    // 2 layers x (q, k, v, gate, up as views + o, down as copies) per rank.
    expect(weights.filter((w) => w.layout === 'view')).toHaveLength(10 * n);
    expect(weights.filter((w) => w.layout === 'copy')).toHaveLength(4 * n);
    for (const w of weights) {
      const o = w.original;
      const [rows, cols] = o.shape as [number, number];
      const constant = ranks[w.rank]!.nodes.find((x) => x.kind === 'constant' && x.name === w.name)!;
      expect(constant.tensor).toBe(w.shard);
      const a = readNumbers(w.shard);
      const b = readNumbers(o);
      if (w.layout === 'view') {
        expect(w.shard.data.buffer).toBe(o.data.buffer);
        expect(w.shard.data.byteOffset).toBe(o.data.byteOffset + w.start * cols * 4);
        expect(w.shard.shape).toEqual([w.end - w.start, cols]);
        expect(Array.from(a)).toEqual(Array.from(b.subarray(w.start * cols, w.end * cols)));
      } else {
        expect(w.shard.data.buffer).not.toBe(o.data.buffer);
        expect(w.shard.shape).toEqual([rows, w.end - w.start]);
        for (let r = 0; r < rows; r++) expect(Array.from(a.subarray(r * (w.end - w.start), (r + 1) * (w.end - w.start)))).toEqual(Array.from(b.subarray(r * cols + w.start, r * cols + w.end)));
      }
    }
    // The ranks' query rows tile the model's query weight; replicated weights are the very same tensors.
    const q = weights.filter((w) => w.name === 'p_layers_0_attention_wq_weight').map((w) => [w.start, w.end]);
    expect(q).toEqual(Array.from({ length: n }, (_, r) => [(r * 64) / n, ((r + 1) * 64) / n]));
    const norm = (x: Graph) => x.nodes.find((c) => c.name === 'p_layers_0_attention_norm_weight')!.tensor;
    for (const rank of ranks) expect(norm(rank)).toBe(norm(g));
  });

  test('key/value rows: whole for n=1, divided for n=2, replicated per pair of ranks for n=4', () => {
    const k = shardGraph(g, n).weights.filter((w) => w.name === 'p_layers_0_attention_wk_weight').map((w) => [w.start, w.end]);
    expect(k).toEqual({ 1: [[0, 32]], 2: [[0, 16], [16, 32]], 4: [[0, 16], [0, 16], [16, 32], [16, 32]] }[n]);
  });
});

describe.each([2, 4])('llama_rotary_complex_input_dynamic split %i ways (symbolic sequence length)', (n) => {
  const fixture = loadFixture('llama_rotary_complex_input_dynamic');
  const g = pt2Graph('llama_rotary_complex_input_dynamic');
  const { ranks } = shardGraph(g, n);

  test('rank graphs keep the symbolic sequence length', () => {
    for (const rank of ranks) {
      expect(findProblems(rank)).toEqual([]);
      expect([...rank.symbols.keys()]).toEqual([...g.symbols.keys()]);
      expect(typeof rank.inputs[0]!.tensorType.shape[1]).toBe('object');
    }
  });

  test.each([0, 1])('case %i (seq 8, then 16) matches PyTorch and the unsharded graph', (c) => {
    const { inputs, outputs } = fixture.cases[c]!;
    const [whole] = interpret(g, inputs);
    const perRank = interpretRanks(ranks, inputs);
    perRank.forEach(([out], r) => {
      expectClose(out!, outputs[0]!, FP32, `rank ${r} vs PyTorch`);
      expectClose(out!, whole!, FP32, `rank ${r} vs unsharded`);
      expectExact(out!, perRank[0]![0]!, `rank ${r} vs rank 0`);
    });
  });
});

describe('llama_tokens_complex_buffer (embedding, complex freqs_cis buffer, LM head left replicated)', () => {
  test.each([2, 4])('split %i ways, every rank matches PyTorch', (n) => {
    const fixture = loadFixture('llama_tokens_complex_buffer');
    const g = pt2Graph('llama_tokens_complex_buffer');
    const sharded = shardGraph(g, n);
    expect(sharded.blocks).toHaveLength(4);
    const perRank = interpretRanks(sharded.ranks, fixture.cases[0]!.inputs);
    perRank.forEach(([out], r) => expectClose(out!, fixture.cases[0]!.outputs[0]!, FP32, `rank ${r}`));
    // The LM head and the embedding are not split: the same tensors on every rank.
    for (const rank of sharded.ranks) expect(rank.nodes.find((x) => x.name === 'p_output_weight')!.tensor).toBe(g.nodes.find((x) => x.name === 'p_output_weight')!.tensor);
  });
});

describe('biases (structure only)', () => {
  test('column-parallel biases are views; a row-parallel bias is added once, after the all-reduce', () => {
    const g = tinyLlama(4, 2, 8, { bias: true });
    const { ranks, weights } = shardGraph(g, 2);
    const qb = weights.filter((w) => w.name === 'layers_0_attn_wq_bias');
    expect(qb.map((w) => [w.layout, w.start, w.end])).toEqual([
      ['view', 0, 8],
      ['view', 8, 16],
    ]);
    for (const w of qb) expect(w.shard.data.buffer).toBe(w.original.data.buffer);
    expect(weights.some((w) => w.name === 'layers_0_attn_wo_bias')).toBe(false);
    for (const rank of ranks) {
      expect(findProblems(rank)).toEqual([]);
      const reduce = rank.calls().find((c) => c.target === 'trt.all_reduce' && c.name.startsWith('linear_3'))!;
      const add = rank.calls().find((c) => c.args.self === reduce.output)!;
      expect(add.target).toBe('aten.add.Tensor');
      expect((add.args.other as { producer: { tensor: unknown } }).producer.tensor).toBe(g.nodes.find((x) => x.name === 'layers_0_attn_wo_bias')!.tensor);
      const o = rank.calls().find((c) => c.name === 'linear_3')!;
      expect(o.args.bias).toBeNull();
    }
  });
});

describe('errors', () => {
  test('n that does not divide the query heads names the layer', () => {
    const e = thrownError(() => shardGraph(pt2Graph('llama_rotary_complex_input'), 3));
    expect(e).toBeInstanceOf(ShardingError);
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('attention layer "p_layers_0_attention"');
    expect(e.message).toContain('its 4 query heads do not divide by 3');
    expect(e.details).toMatchObject({ layer: 'p_layers_0_attention', node: 'scaled_dot_product_attention', n: 3, heads: 4, kvHeads: 2 });
  });

  test('key/value heads that neither divide by n nor divide n name the layer', () => {
    // 6 query heads split 3 ways, but 2 key/value heads can be neither divided nor replicated.
    const e = thrownError(() => shardGraph(tinyLlama(6, 2, 0), 3));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('attention layer "layers_0_attn"');
    expect(e.message).toContain('its 2 key/value heads do not divide by 3');
    // The same model splits 2 and 6 ways (divided, then replicated).
    expect(shardGraph(tinyLlama(6, 2, 0), 2).blocks[0]).toMatchObject({ kvMode: 'divide' });
    expect(shardGraph(tinyLlama(6, 2, 0), 6).blocks[0]).toMatchObject({ kvMode: 'replicate' });
  });

  test('MLP columns that do not divide name the layer', () => {
    const e = thrownError(() => shardGraph(tinyLlama(4, 2, 6), 4));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('MLP layer "layers_0_ffn"');
    expect(e.message).toContain('its 6 hidden columns do not divide by 4');
  });

  test('a model without a Llama-style block names its linear layers', () => {
    const e = thrownError(() => shardGraph(loadPt2(path.join(FIXTURES, 'mlp', 'model.pt2')), 2));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toMatch(/graph "\w+" has no Llama-style block/);
    expect(e.message).toMatch(/its linear layers "linear" \(weight \w+\)/);
  });

  test('an attention whose query is not a projection names the sdpa node', () => {
    const g = new Graph('bare');
    const x = g.addInput('x', tensorType('float32', [1, 2, 3, 4]));
    const s = call(g, 'aten.scaled_dot_product_attention.default', { query: x, key: x, value: x }, { name: 'attn' });
    g.setOutputs([s.output]);
    const e = thrownError(() => shardGraph(g, 2));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('attention at sdpa node "attn": cannot find its query projection: it does not come from a linear layer');
  });

  test('an op inside a block that would mix the ranks\' heads names the layer and the node', () => {
    // q / mean over heads (keepdim): a reduction across the head axis cannot be computed per rank.
    const g = tinyLlama(4, 2, 0, {
      query: (graph, q) => {
        const m = call(graph, 'aten.mean.dim', { self: q, dim: [2], keepdim: true }, { name: 'head_mean' }).output;
        return call(graph, 'aten.div.Tensor', { self: q, other: m }).output;
      },
    });
    const e = thrownError(() => shardGraph(g, 2));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toBe('cannot split layer "layers_0_attn" 2 ways at node head_mean (aten.mean.dim): it reduces over the head-sharded axis 2');
    expect(e.details).toMatchObject({ layer: 'layers_0_attn', node: 'head_mean', n: 2 });
  });

  test('bad n is E_INVALID_ARGUMENT', () => {
    for (const n of [0, -1, 1.5, NaN]) expect(thrownError(() => shardGraph(tinyLlama(4, 2, 8), n)).code).toBe('E_INVALID_ARGUMENT');
  });

  test('the model graph is not changed', () => {
    const g = tinyLlama(4, 2, 8);
    const before = g.nodes.map((x) => `${x.name}:${x.outputs.map((v) => v.tensorType.shape.join(',')).join(';')}`);
    shardGraph(g, 2);
    expect(g.nodes.map((x) => `${x.name}:${x.outputs.map((v) => v.tensorType.shape.join(',')).join(';')}`)).toEqual(before);
  });
});
