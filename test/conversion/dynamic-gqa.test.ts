/**
 * Grouped-query attention with run-time shapes (the dynamic scaled_dot_product_attention
 * converter, lib/conversion/converters/dynamic.ts): batch and sequence are run-time dims,
 * 8 query heads share 2 key/value heads. Compiled once, run at two (batch, seq) sizes and
 * compared with onnxruntime-node computing the same attention from its definition
 * (key/value heads repeated by Unsqueeze/Expand/Reshape, MatMul, Softmax, MatMul).
 */
import '../../lib/conversion/converters';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { closeOrt, runOrtGraph, type OrtGraphNode } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';
import { DynGraph, compileAndRun } from '../legalization/helpers';

const rng = new Random(8282);
const [HQ, HKV, E] = [8, 2, 16];

afterAll(() => closeOrt());

const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

/** softmax(Q·Kᵀ/√E + mask)·V with each key/value head serving HQ/HKV query heads, in onnxruntime. */
async function ortAttention(q: Tensor, k: Tensor, v: Tensor, causal: boolean): Promise<Tensor> {
  const [L, S] = [q.shape[2]!, k.shape[2]!];
  const mask = Tensor.from('float32', [L, S], Array.from({ length: L * S }, (_, i) => (causal && i % S > Math.floor(i / S) ? -Infinity : 0)));
  const constant = (name: string, t: Tensor): OrtGraphNode => ({ opType: 'Constant', inputs: [], outputs: [name], attributes: { value: t } });
  const repeat = (x: string): OrtGraphNode[] => [
    { opType: 'Unsqueeze', inputs: [x, 'axis2'], outputs: [`${x}_u`] },
    { opType: 'Expand', inputs: [`${x}_u`, 'groups'], outputs: [`${x}_e`] },
    { opType: 'Reshape', inputs: [`${x}_e`, 'merged'], outputs: [`${x}_r`] },
  ];
  const nodes: OrtGraphNode[] = [
    constant('axis2', i64([2])),
    constant('groups', i64([1, 1, HQ / HKV, 1, 1])),
    constant('merged', i64([0, HQ, -1, E])),
    constant('scale', Tensor.from('float32', [], [1 / Math.sqrt(E)])),
    ...repeat('k'),
    ...repeat('v'),
    { opType: 'Transpose', inputs: ['k_r'], outputs: ['kt'], attributes: { perm: [0, 1, 3, 2] } },
    { opType: 'MatMul', inputs: ['q', 'kt'], outputs: ['qk'] },
    { opType: 'Mul', inputs: ['qk', 'scale'], outputs: ['scaled'] },
    { opType: 'Add', inputs: ['scaled', 'mask'], outputs: ['masked'] },
    { opType: 'Softmax', inputs: ['masked'], outputs: ['p'], attributes: { axis: -1 } },
    { opType: 'MatMul', inputs: ['p', 'v_r'], outputs: ['out'] },
  ];
  const [out] = await runOrtGraph({ nodes, inputs: { q, k, v, mask }, outputs: ['out'] });
  return out!;
}

test.each([false, true])('GQA (8 query heads, 2 kv heads), run-time batch and sequence, is_causal %s: one compile, two sizes, matches onnxruntime', async (causal) => {
  const b = new DynGraph('gqa', { b: { min: 1, max: 4 }, l: { min: 1, max: 32 } });
  const q = b.input('q', 'float32', ['b', HQ, 'l', E]);
  const k = b.input('k', 'float32', ['b', HKV, 'l', E]);
  const v = b.input('v', 'float32', ['b', HKV, 'l', E]);
  const out = b.call('aten.scaled_dot_product_attention.default', {
    query: q,
    key: k,
    value: v,
    attn_mask: null,
    dropout_p: 0,
    is_causal: causal,
    scale: null,
    enable_gqa: true,
  }).output;
  const graph = b.outputs(out);
  const runs = [
    [2, 5],
    [3, 11],
  ].map(([n, l]) => [rng.tensor([n!, HQ, l!, E]), rng.tensor([n!, HKV, l!, E]), rng.tensor([n!, HKV, l!, E])]);
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  const sdpa = program.report.ops.find((o) => o.target === 'aten.scaled_dot_product_attention.default')!;
  expect(sdpa.reasons).toEqual([]);
  expect(sdpa.converter).toBe('aten.scaled_dot_product_attention.default (dynamic)');
  expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
  for (const [r, [qv, kv, vv]] of runs.entries()) {
    const expected = await ortAttention(qv!, kv!, vv!, causal);
    expectClose(outputs[r]![0]!, expected, FP32, `gqa causal=${causal} run ${r}`);
  }
}, 60_000);

test('GQA with run-time head counts is refused with the reason', async () => {
  const b = new DynGraph('gqa_heads', { h: { min: 1, max: 4 }, l: { min: 1, max: 8 } });
  const q = b.input('q', 'float32', [1, 4, 'l', E]);
  const k = b.input('k', 'float32', [1, 'h', 'l', E]);
  const out = b.call('aten.scaled_dot_product_attention.default', { query: q, key: k, value: k, attn_mask: null, dropout_p: 0, is_causal: false, scale: null, enable_gqa: true }).output;
  const graph = b.outputs(out);
  const { program } = await compileAndRun(graph, { minBlockSize: 1 }, []);
  const sdpa = program.report.ops.find((o) => o.target === 'aten.scaled_dot_product_attention.default')!;
  expect(sdpa.converted).toBe(false);
  expect(sdpa.reasons.join('; ')).toContain('grouped-query attention needs static head counts (dim -3 of query, key and value), got 4, h, h');
});
