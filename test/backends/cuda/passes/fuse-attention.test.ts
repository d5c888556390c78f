/**
 * Attention as one kernel (lib/backends/cuda/passes/fuse-attention.ts, layers/attention.ts,
 * tensor-core fragments emulated lane for lane on the CPU): attention layers as the converters
 * emit them, and attentions written out as primitive layers (what exporters without an
 * attention op give), fused, against the reference backend running the written-out form; the
 * reference backend's own attention executor against the same; and the forms the pass leaves
 * alone.
 */
import { fuseAttention } from '../../../../lib/backends/cuda/passes/fuse-attention';
import { checkNetwork } from '../../../../lib/network/check';
import { BadModelError } from '../../../../lib/errors';
import { deserializeNetworkFromBuffer, serializeNetworkToBuffer } from '../../../../lib/network/serialize';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { Network, type AttentionParams, type NetTensor, type TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { attentionLaunch, type AttentionTiling } from '../../../../lib/backends/cuda/layers/attention';
import { lowerLayer, type LoweringContext } from '../../../../lib/backends/cuda/layers';
import { runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { emulate, emulateLowered } from '../emulated-network';

// The unfused form rounds the scores and probabilities to fp16 (bf16) between layers; the fused
// kernel keeps them in fp32 and rounds the probabilities once, unnormalized.
const TOL: Record<'float16' | 'bfloat16', Tolerance> = { float16: { rtol: 1e-2, atol: 4e-3 }, bfloat16: { rtol: 4e-2, atol: 2e-2 } };

interface Form {
  dtype: TrtDType;
  batch: number;
  heads: number;
  /** Key/value heads (GQA: repeated to `heads` with a stride-0 slice, as repeatHeads does). */
  kvHeads?: number;
  sq: number;
  skv: number;
  d: number;
  mask?: 'bool' | 'add' | 'causal';
  /** The output's transpose back to [B, S, H, D]. */
  transposeOut?: boolean;
}

const scalar = (net: Network, dtype: TrtDType, value: number, rank: number, name: string): NetTensor =>
  net.add1({ kind: 'constant', weights: Tensor.from(dtype, new Array<number>(rank).fill(1), [value]) }, [], name);

/** q [B, Sq, H, D], k and v [B, Skv, Hkv, D] transposed to heads-first, then PyTorch's math attention. */
function attentionForm(f: Form): Network {
  const net = new Network(`attention_${f.dtype}_${f.mask ?? 'nomask'}`);
  const kvh = f.kvHeads ?? f.heads;
  const q = net.addInput('q', f.dtype, [f.batch, f.sq, f.heads, f.d]);
  const k = net.addInput('k', f.dtype, [f.batch, f.skv, kvh, f.d]);
  const v = net.addInput('v', f.dtype, [f.batch, f.skv, kvh, f.d]);
  const heads = (t: NetTensor, name: string): NetTensor => {
    let x = net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], zeroIsPlaceholder: false }, [t], `${name}_t`);
    if (kvh !== f.heads) {
      const rep = f.heads / kvh;
      const one = net.add1({ kind: 'shuffle', reshape: [f.batch, kvh, 1, f.skv, f.d], zeroIsPlaceholder: false }, [x], `${name}_split`);
      const repeated = net.add1({ kind: 'slice', start: [0, 0, 0, 0, 0], size: [f.batch, kvh, rep, f.skv, f.d], stride: [1, 1, 0, 1, 1], mode: 'strict_bounds' }, [one], `${name}_repeat`);
      x = net.add1({ kind: 'shuffle', reshape: [f.batch, f.heads, f.skv, f.d], zeroIsPlaceholder: false }, [repeated], `${name}_merge`);
    }
    return x;
  };
  const qt = net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], zeroIsPlaceholder: false }, [q], 'q_t');
  const [kt, vt] = [heads(k, 'k'), heads(v, 'v')];
  let scores = net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [qt, kt], 'scores');
  scores = net.add1({ kind: 'elementwise', op: 'prod' }, [scores, scalar(net, f.dtype, 1 / Math.sqrt(f.d), 4, 'scale_factor')], 'scale');
  if (f.mask === 'bool') {
    const m = net.addInput('mask', 'bool', [f.batch, 1, f.sq, f.skv]);
    scores = net.add1({ kind: 'select' }, [m, scores, scalar(net, f.dtype, -Infinity, 4, 'neg_inf')], 'masked');
  } else if (f.mask === 'add') {
    const m = net.addInput('mask', f.dtype, [f.batch, 1, 1, f.skv]);
    scores = net.add1({ kind: 'elementwise', op: 'sum' }, [scores, m], 'masked');
  } else if (f.mask === 'causal') {
    const bias = Array.from({ length: f.sq * f.skv }, (_, i) => (i % f.skv <= Math.floor(i / f.skv) ? 0 : -Infinity));
    const causal = net.add1({ kind: 'constant', weights: Tensor.from(f.dtype, [1, 1, f.sq, f.skv], bias) }, [], 'causal_mask');
    scores = net.add1({ kind: 'elementwise', op: 'sum' }, [scores, causal], 'masked');
  }
  const probs = net.add1({ kind: 'softmax', axis: 3 }, [scores], 'softmax');
  let out = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [probs, vt], 'output');
  if (f.transposeOut) out = net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], reshape: [f.batch, f.sq, f.heads * f.d], zeroIsPlaceholder: false }, [out], 'out_t');
  net.markOutput(out, 'y');
  return net;
}

function feedsFor(f: Form, seed: number): Record<string, Tensor> {
  const r = new Random(seed);
  const kvh = f.kvHeads ?? f.heads;
  const feeds: Record<string, Tensor> = {
    q: r.tensor([f.batch, f.sq, f.heads, f.d], f.dtype),
    k: r.tensor([f.batch, f.skv, kvh, f.d], f.dtype),
    v: r.tensor([f.batch, f.skv, kvh, f.d], f.dtype),
  };
  if (f.mask === 'bool') {
    // Every row keeps at least its first key (a row with none gives NaN on both sides).
    const keep = Array.from({ length: f.batch * f.sq * f.skv }, (_, i) => (i % f.skv === 0 || r.next() < 0.7 ? 1 : 0));
    feeds.mask = Tensor.from('bool', [f.batch, 1, f.sq, f.skv], keep);
  }
  if (f.mask === 'add') feeds.mask = Tensor.from(f.dtype, [f.batch, 1, 1, f.skv], Array.from({ length: f.batch * f.skv }, (_, i) => (i % 5 === 4 ? -10000 : 0)));
  return feeds;
}

const attentionOf = (net: Network): AttentionParams[] => net.layers.flatMap((l) => (l.params.kind === 'attention' && l.params.strided ? [l.params.strided] : []));

describe('fuseAttention', () => {
  const forms: Array<[string, Form]> = [
    ['fp16, bool mask, tails of both tiles', { dtype: 'float16', batch: 2, heads: 2, sq: 70, skv: 75, d: 32, mask: 'bool', transposeOut: true }],
    ['fp16, additive mask, head dim 64', { dtype: 'float16', batch: 1, heads: 2, sq: 20, skv: 24, d: 64, mask: 'add' }],
    ['fp16, causal constant, GQA repeat', { dtype: 'float16', batch: 1, heads: 4, kvHeads: 2, sq: 67, skv: 67, d: 16, mask: 'causal', transposeOut: true }],
    ['bf16, no mask', { dtype: 'bfloat16', batch: 1, heads: 3, sq: 9, skv: 130, d: 16 }],
  ];
  test.each(forms)('%s: one launch, against the reference backend on the unfused form', (_, f) => {
    const source = attentionForm(f);
    const { network, attentions, causal } = fuseAttention(source);
    expect(attentions).toBe(1);
    expect(causal).toBe(f.mask === 'causal' ? 1 : 0);
    const [p] = attentionOf(network);
    // The transposes and the repeat are read through; the output's transpose is written through.
    expect(network.layers.map((l) => l.params.kind).filter((k) => k !== 'constant')).toEqual(['attention']);
    if (f.kvHeads !== undefined) expect(p!.batch).toEqual([f.batch, f.kvHeads, f.heads / f.kvHeads]);
    const feeds = feedsFor(f, 7);
    const want = new ReferenceRunner(source).run(feeds).y!;
    const tol = TOL[f.dtype as 'float16' | 'bfloat16'];
    // The reference executor of the fused layer (float64 throughout) and the kernel on the emulator.
    expectClose(new ReferenceRunner(network).run(feeds).y!, want, tol, 'reference attention');
    const run = emulate(network, feeds, true);
    expect(run.launches).toBe(1);
    expect(run.names).toEqual(['output/attention']);
    expectClose(run.outputs.y!, want, tol, 'fused kernel');
  });

  // Each tiling of the kernel (every model runs the default, 4 × 2): 32-row blocks of four key
  // streams (three merged into the first) and 64-row blocks of two.
  const tilings: AttentionTiling[] = [{ rowGroups: 2, streams: 4 }, { rowGroups: 4, streams: 2 }];
  const label = (t: AttentionTiling): string => `${t.rowGroups} row groups × ${t.streams} key streams`;
  const causal100: Form = { ...forms[2]![1], sq: 100, skv: 100 };
  const tiled: Array<[string, Form, AttentionTiling]> = [
    [forms[0]![0], forms[0]![1], tilings[0]!],
    [forms[1]![0], forms[1]![1], tilings[0]!],
    [`${forms[2]![0]}, 100 tokens`, causal100, tilings[0]!],
    [`${forms[2]![0]}, 100 tokens`, causal100, tilings[1]!],
  ].map(([n, f, t]) => [`${n as string}, ${label(t as AttentionTiling)}`, f as Form, t as AttentionTiling]);
  test.each(tiled)('%s: the kernel against the reference backend on the unfused form', (_, f, tiling) => {
    const source = attentionForm(f);
    const { network } = fuseAttention(source);
    const lower = (ctx: LoweringContext): ReturnType<typeof lowerLayer> =>
      ctx.layer.params.kind === 'attention' && ctx.layer.params.strided ? attentionLaunch(ctx, ctx.layer.params.strided, tiling) : lowerLayer(ctx);
    const feeds = feedsFor(f, 11);
    const { outputs, lowered } = emulateLowered(network, feeds, { fuse: true, lower });
    const launch = lowered.steps.find((s) => s.kind === 'launch');
    expect(launch?.kind === 'launch' && launch.block).toEqual([32 * tiling.rowGroups * tiling.streams]);
    expectClose(outputs.y!, new ReferenceRunner(source).run(feeds).y!, TOL[f.dtype as 'float16'], 'tiled kernel');
  });

  test('a tiling of more than 256 threads is refused by name', () => {
    const f = forms[1]![1];
    const { network } = fuseAttention(attentionForm(f));
    const lower = (ctx: LoweringContext): ReturnType<typeof lowerLayer> =>
      ctx.layer.params.kind === 'attention' && ctx.layer.params.strided ? attentionLaunch(ctx, ctx.layer.params.strided, { rowGroups: 4, streams: 4 }) : lowerLayer(ctx);
    expect(() => emulateLowered(network, feedsFor(f, 1), { fuse: true, lower })).toThrow(/attention tiling r4s4 runs 512 threads a block/);
  });

  test('Q, K and V off their alignment take the element-wise reads, and the 2-byte output stores give the paired ones\' bits', () => {
    // One batch of 2 heads, q [1, 20, 2, 32] and k, v [1, 24, 2, 32] read heads-first through strides.
    const p: AttentionParams = {
      batch: [1, 2], seqQ: 20, seqKV: 24, headDim: 32, scale: 1 / Math.sqrt(32), causal: false,
      query: [1280, 32, 64], key: [1536, 32, 64], value: [1536, 32, 64], output: [1280, 32, 64], outputShape: [1, 20, 64],
    };
    const r = new Random(5);
    const inputs = [r.tensor([1, 20, 2, 32], 'float16'), r.tensor([1, 24, 2, 32], 'float16'), r.tensor([1, 24, 2, 32], 'float16')];
    const params = { kind: 'attention' as const, scale: p.scale, causal: p.causal, strided: p };
    const vecOf = (steps: ReturnType<typeof runLayer>['steps']): number => {
      const l = steps[0]!;
      const arg = l.kind === 'launch' ? l.args[l.args.length - 1] : undefined;
      return arg !== undefined && 'scalar' in arg ? Number(arg.value) : -1;
    };
    // Two bytes into their buffers: Q not 4-byte aligned, K and V not 16-byte aligned; the output is (bit 2).
    const off = runLayer(params, inputs, 'attention', undefined, [2, 2, 2]);
    expect(vecOf(off.steps)).toBe(4);
    expectClose(off.actual[0]!, off.expected[0]!, TOL.float16, 'unaligned inputs');
    const aligned = runLayer(params, inputs, 'attention');
    expect(vecOf(aligned.steps)).toBe(7);
    expectClose(aligned.actual[0]!, aligned.expected[0]!, TOL.float16, 'aligned inputs');
    // The same launch told its output is unaligned stores element by element: the same bits.
    const halves = runLayer(params, inputs, 'attention', (steps) => steps.map((l) => (l.kind === 'launch' ? { ...l, args: [...l.args.slice(0, -1), { scalar: 'i32' as const, value: 3 }] } : l)));
    expect(Array.from(halves.actual[0]!.data as Uint16Array)).toEqual(Array.from(aligned.actual[0]!.data as Uint16Array));
  });

  test('a masked row gives NaN, as the unfused softmax does', () => {
    const f: Form = { dtype: 'float16', batch: 1, heads: 1, sq: 3, skv: 5, d: 16, mask: 'bool' };
    const feeds = feedsFor(f, 3);
    feeds.mask = Tensor.from('bool', [1, 1, 3, 5], [1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    const y = emulate(fuseAttention(attentionForm(f)).network, feeds, true).outputs.y!;
    const rows = Array.from(new ReferenceRunner(attentionForm(f)).run(feeds).y!.data as Uint16Array).map((h) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0);
    const got = Array.from(y.data as Uint16Array).map((h) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0);
    expect(got).toEqual(rows);
    expect(got.filter(Boolean)).toHaveLength(16);
  });

  test('an engine stores the attention layer and checks its parameters when it loads', () => {
    const { network } = fuseAttention(attentionForm({ dtype: 'float16', batch: 1, heads: 4, kvHeads: 2, sq: 8, skv: 8, d: 16, mask: 'bool', transposeOut: true }));
    const check = (net: Network, fail: (m: string, cause?: unknown) => never): unknown => checkNetwork(net, fail);
    const bytes = serializeNetworkToBuffer(network);
    const back = deserializeNetworkFromBuffer(bytes, 'engine', check);
    expect(attentionOf(back)).toEqual(attentionOf(network));
    // A stride list that does not cover the batch box is refused by name.
    const bad = fuseAttention(attentionForm({ dtype: 'float16', batch: 1, heads: 2, sq: 8, skv: 8, d: 16 })).network;
    attentionOf(bad)[0]!.query.pop();
    expect(() => deserializeNetworkFromBuffer(serializeNetworkToBuffer(bad), 'engine', check)).toThrow(BadModelError);
    expect(() => deserializeNetworkFromBuffer(serializeNetworkToBuffer(bad), 'engine', check)).toThrow(/parameter strided must be attention parameters whose strides cover their batch box/);
  });

  test('left alone: float32, scores read elsewhere, a head dim the kernel does not take, a softmax over another axis', () => {
    const base: Form = { dtype: 'float16', batch: 1, heads: 2, sq: 8, skv: 8, d: 16 };
    expect(fuseAttention(attentionForm({ ...base, dtype: 'float32' })).attentions).toBe(0);
    expect(fuseAttention(attentionForm({ ...base, d: 24 })).attentions).toBe(0);
    const read = attentionForm(base);
    read.markOutput(read.tensor(read.layers.find((l) => l.name === 'scale')!.outputs[0]!), 'scores');
    expect(fuseAttention(read).attentions).toBe(0);
    const axis = attentionForm(base);
    const sm = axis.layers.find((l) => l.params.kind === 'softmax')!;
    (sm.params as { axis: number }).axis = 2;
    expect(fuseAttention(axis).attentions).toBe(0);
  });
});

/** The same attention as the converters emit it: q, k and v transposed heads-first, one attention layer, the output transposed back. */
function layerForm(f: Form): Network {
  const net = new Network(`attention_layer_${f.dtype}_${f.mask ?? 'nomask'}`);
  const kvh = f.kvHeads ?? f.heads;
  const heads = (name: string, s: number, h: number): NetTensor =>
    net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], zeroIsPlaceholder: false }, [net.addInput(name, f.dtype, [f.batch, s, h, f.d])], `${name}_t`);
  const [q, k, v] = [heads('q', f.sq, f.heads), heads('k', f.skv, kvh), heads('v', f.skv, kvh)];
  let mask: NetTensor | null = null;
  if (f.mask === 'bool') mask = net.addInput('mask', 'bool', [f.batch, 1, f.sq, f.skv]);
  if (f.mask === 'add') mask = net.addInput('mask', f.dtype, [f.batch, 1, 1, f.skv]);
  const params = { kind: 'attention' as const, scale: 1 / Math.sqrt(f.d), causal: f.mask === 'causal' };
  let out = net.add1(params, mask === null ? [q, k, v] : [q, k, v, mask], 'sdpa');
  if (f.transposeOut) out = net.add1({ kind: 'shuffle', firstTranspose: [0, 2, 1, 3], reshape: [f.batch, f.sq, f.heads * f.d], zeroIsPlaceholder: false }, [out], 'out_t');
  net.markOutput(out, 'y');
  return net;
}

describe('fuseAttention on attention layers', () => {
  const forms: Array<[string, Form]> = [
    ['fp16, bool mask, output transposed back', { dtype: 'float16', batch: 2, heads: 2, sq: 70, skv: 75, d: 32, mask: 'bool', transposeOut: true }],
    ['fp16, additive mask', { dtype: 'float16', batch: 1, heads: 2, sq: 20, skv: 24, d: 64, mask: 'add' }],
    ['fp16, causal, grouped heads (4 query heads over 2)', { dtype: 'float16', batch: 1, heads: 4, kvHeads: 2, sq: 67, skv: 67, d: 16, mask: 'causal', transposeOut: true }],
    ['bf16, no mask, one key/value head for three', { dtype: 'bfloat16', batch: 2, heads: 3, kvHeads: 1, sq: 9, skv: 130, d: 16 }],
  ];
  test.each(forms)('%s: one launch reading through the transposes, against the written-out form on the reference backend', (_, f) => {
    const source = layerForm(f);
    const { network, attentions, written, causal } = fuseAttention(source);
    expect([attentions, written, causal]).toEqual([1, 0, f.mask === 'causal' ? 1 : 0]);
    // The transposes before q, k, v and after the output are read and written through.
    expect(network.layers.map((l) => l.params.kind)).toEqual(['attention']);
    const [p] = attentionOf(network);
    if (f.kvHeads !== undefined) expect(p!.batch).toEqual([f.batch, f.kvHeads, f.heads / f.kvHeads]);
    const feeds = feedsFor(f, 13);
    const want = new ReferenceRunner(attentionForm(f)).run(feeds).y!;
    const tol = TOL[f.dtype as 'float16' | 'bfloat16'];
    const run = emulate(network, feeds, true);
    expect(run.launches).toBe(1);
    expectClose(run.outputs.y!, want, tol, 'fused kernel');
  });

  test('left for spelling out: float32, a head dim the kernel does not take', () => {
    const base: Form = { dtype: 'float16', batch: 1, heads: 2, sq: 8, skv: 8, d: 16 };
    for (const f of [{ ...base, dtype: 'float32' as const }, { ...base, d: 24 }]) {
      const { network, attentions } = fuseAttention(layerForm(f));
      expect(attentions).toBe(0);
      expect(network.layers.filter((l) => l.params.kind === 'attention' && l.params.strided === undefined)).toHaveLength(1);
    }
  });
});
