/**
 * Test helpers for tensor parallelism: running rank graphs in lockstep with an all-reduce
 * written here (independent of lib/runtime/tensor-parallel/program.ts), and small Llama-style graphs
 * built by hand for the error cases.
 */
import { interpret } from '../../../lib/interpreter';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../../lib/ir/graph';
import { splitAtCollectives } from '../../../lib/lowering/sharding';
import { readNumbers, fromNumbers } from '../../../lib/kernels/access';
import { Tensor } from '../../../lib/ir/tensor';

/** Sum of the ranks' tensors, accumulated in float64 in rank order. */
function sumAcrossRanks(tensors: Tensor[]): Tensor {
  const first = tensors[0]!;
  const acc = new Float64Array(first.data.length);
  for (const t of tensors) {
    if (t.dtype !== first.dtype || t.shape.join() !== first.shape.join()) throw new Error(`all-reduce of ${t.toString()} and ${first.toString()}`);
    const x = readNumbers(t);
    for (let i = 0; i < acc.length; i++) acc[i] += x[i]!;
  }
  return fromNumbers(first.dtype, first.shape, acc);
}

/**
 * Interprets every rank graph, stopping all of them at each `trt.all_reduce` and summing the
 * ranks' tensors there. Returns each rank's outputs.
 */
export function interpretRanks(graphs: readonly Graph[], inputs: readonly Tensor[]): Tensor[][] {
  const plans = graphs.map((g) => splitAtCollectives(g));
  const envs = graphs.map((g) => new Map<string, Tensor>(g.inputs.map((v, i) => [v.name, inputs[i]!])));
  const pcs = graphs.map(() => 0);
  for (;;) {
    const at = plans.map((steps, r) => {
      for (; pcs[r]! < steps.length; pcs[r]!++) {
        const step = steps[pcs[r]!]!;
        if (step.kind === 'all_reduce') return step;
        const out = interpret(step.graph, step.inputs.map((n) => envs[r]!.get(n)!));
        step.outputs.forEach((n, i) => envs[r]!.set(n, out[i]!));
      }
      return undefined;
    });
    if (at.every((s) => s === undefined)) break;
    if (at.some((s) => s === undefined || s.node !== at[0]!.node)) throw new Error(`ranks stopped at different collectives: ${at.map((s) => s?.node).join(', ')}`);
    const sum = sumAcrossRanks(at.map((s, r) => envs[r]!.get(s!.input)!));
    at.forEach((s, r) => {
      envs[r]!.set(s!.output, sum);
      pcs[r]!++;
    });
  }
  return graphs.map((g, r) => g.outputNames.map((n) => envs[r]!.get(n)!));
}

/** Deterministic pseudo-random floats in [-0.5, 0.5). */
function weights(shape: number[], seed: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    v[i] = s / 2 ** 32 - 0.5;
  }
  return new Tensor('float32', shape, v);
}

/**
 * A one-layer Llama-style block stack built by hand: GQA attention with `heads` query and
 * `kvHeads` key/value heads (repeat-kv by expand) and, unless `mlp` is 0, a SwiGLU MLP of
 * `mlp` hidden columns. Only its structure is used (errors), never its numbers.
 */
export function tinyLlama(
  heads: number,
  kvHeads: number,
  mlp: number,
  options: { headDim?: number; bias?: boolean; /** Rewrites the query [1, seq, heads, headDim] before attention. */ query?: (g: Graph, q: Value) => Value } = {},
): Graph {
  const headDim = options.headDim ?? 4;
  const dim = heads * headDim;
  const seq = 3;
  const g = new Graph('tiny_llama');
  const x = g.addInput('x', tensorType('float32', [1, seq, dim]));
  const w = (name: string, shape: number[], seed: number): Value => g.addConstant(name, weights(shape, seed), 'parameter');
  const wq = w('layers_0_attn_wq_weight', [dim, dim], 1);
  const wk = w('layers_0_attn_wk_weight', [kvHeads * headDim, dim], 2);
  const wv = w('layers_0_attn_wv_weight', [kvHeads * headDim, dim], 3);
  const wo = w('layers_0_attn_wo_weight', [dim, dim], 4);
  const op = (target: string, args: Record<string, unknown>, name?: string): Value => call(g, target, args as never, { name }).output;
  const bias = (name: string, n: number, seed: number): Value | null => (options.bias ? w(name, [n], seed) : null);
  const heads4 = (v: Value, h: number): Value => op('aten.view.default', { self: v, size: [1, seq, h, headDim] });
  let q = heads4(op('aten.linear.default', { input: x, weight: wq, bias: bias('layers_0_attn_wq_bias', dim, 11) }), heads);
  if (options.query) q = options.query(g, q);
  let k = heads4(op('aten.linear.default', { input: x, weight: wk, bias: bias('layers_0_attn_wk_bias', kvHeads * headDim, 12) }), kvHeads);
  let v = heads4(op('aten.linear.default', { input: x, weight: wv, bias: bias('layers_0_attn_wv_bias', kvHeads * headDim, 13) }), kvHeads);
  const repeat = (t: Value): Value => {
    const u = op('aten.view.default', { self: t, size: [1, seq, kvHeads, 1, headDim] });
    const e = op('aten.expand.default', { self: u, size: [1, seq, kvHeads, heads / kvHeads, headDim] });
    return op('aten.view.default', { self: e, size: [1, seq, heads, headDim] });
  };
  k = repeat(k);
  v = repeat(v);
  const t = (a: Value): Value => op('aten.permute.default', { self: a, dims: [0, 2, 1, 3] });
  const attn = op('aten.scaled_dot_product_attention.default', { query: t(q), key: t(k), value: t(v), is_causal: true });
  const merged = op('aten.view.default', { self: t(attn), size: [1, seq, dim] });
  let h = op('aten.add.Tensor', { self: x, other: op('aten.linear.default', { input: merged, weight: wo, bias: bias('layers_0_attn_wo_bias', dim, 14) }) });
  if (mlp > 0) {
    const w1 = w('layers_0_ffn_w1_weight', [mlp, dim], 5);
    const w3 = w('layers_0_ffn_w3_weight', [mlp, dim], 6);
    const w2 = w('layers_0_ffn_w2_weight', [dim, mlp], 7);
    const gate = op('aten.silu.default', { self: op('aten.linear.default', { input: h, weight: w1 }) });
    const up = op('aten.linear.default', { input: h, weight: w3 });
    h = op('aten.add.Tensor', { self: h, other: op('aten.linear.default', { input: op('aten.mul.Tensor', { self: gate, other: up }), weight: w2 }) });
  }
  g.setOutputs([h], ['out']);
  return g;
}
