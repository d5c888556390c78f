/**
 * Attention as one kernel, the cuda backend's `attention` pass. An attention reaches it whole,
 * as the `attention` layer the converters emit; the pass gives each one its kernel can run the
 * strided form (AttentionParams) that ../layers/attention.ts launches, so that the scores stay in
 * registers instead of a batch·Sq·Skv tensor written and read three times:
 * - each of Q, K and V is read through the views before it (transposes, reshapes, slices that
 *   start at 0), as strides into the view's source, while its head dim stays contiguous; the
 *   batch box splits where a walk needs it (grouped heads walk kv heads × group);
 * - the transpose after the output, when it is the output's only reader, is written through.
 * Float16 and bfloat16 only, static shapes only, head dims of multiples of 16 up to 128; the
 * attentions it leaves are spelled out by the next pass (lib/conversion/expand-layers.ts).
 *
 * Models whose exporter wrote attention out by hand (ONNX has no attention op before opset
 * 23) arrive as Q·Kᵀ → × scale → [select(mask, ·, −∞) | + mask] → softmax → ·V; the pass
 * takes that form too (a float mask that is PyTorch's causal constant, 0 on and below the
 * diagonal and −∞ above, becomes `causal`). Every tensor it absorbs must be read only inside
 * the form. Pure: Network → Network.
 */
import type { AttentionParams, Layer, Network, NetTensor } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import { passGraph, type PassGraph as Graph } from './pass-graph';
import { readNumbers } from '../../../kernels/access';
import { refinedStrides, splitForDense, throughDense } from '../plan/fuse-pointwise';
import { denseAttention } from '../../../network/attention';
import { ATTENTION_DTYPES, attentionHeadDimOk } from '../layers/attention';
import { broadcastStrides, denseStrides, volume } from '../layers/kernel';

export interface FuseAttentionResult {
  network: Network;
  /** Attentions now one kernel each. */
  attentions: number;
  /** Of those, the ones written out by the model's exporter (found as their primitive layers). */
  written: number;
  /** Of those, the ones whose mask became `causal`. */
  causal: number;
}

interface Found {
  /** Source tensor ids of query, key, value and the mask (null: none). */
  inputs: [number, number, number, number | null];
  /** The tensor the attention's output stands for. */
  output: number;
  params: AttentionParams;
  absorbed: Layer[];
  /** Found as the primitive layers of a hand-written attention (not an attention layer). */
  written: boolean;
}

/** An operand read at `strides` over [...batch, rows, cols] of tensor `source`'s dense bytes. */
interface Operand {
  source: number;
  strides: number[];
}

const isStatic = (t: NetTensor): boolean => t.shape.every((d) => d >= 0);
const isPerm = (p: readonly number[] | undefined, rank: number): boolean => p !== undefined && p.length === rank && [...p].sort((a, b) => a - b).every((v, i) => v === i);
const identity = (p: readonly number[] | undefined): boolean => p === undefined || p.every((v, i) => v === i);

/** Each batch dim's strides after the box splits as `parts` (per batch dim, extents outer first); the rows and columns keep theirs. */
const refine = (strides: readonly number[], parts: readonly (readonly number[])[]): number[] =>
  refinedStrides(strides, [...parts.map((p) => [...p]), ...strides.slice(parts.length).map(() => [1])]);

/**
 * A view layer's output as strides over its input's dense bytes, for the walk back through it:
 * each step is [dims, strides over the next tensor's dense layout]; null when it is not a view.
 */
function viewSteps(network: Network, layer: Layer): Array<{ dims: number[]; strides: number[] }> | null {
  const p = layer.params;
  if (layer.inputs.length !== 1 || layer.inputs[0] === null) return null;
  const x = network.tensor(layer.inputs[0]!);
  const y = network.tensor(layer.outputs[0]!);
  if (!isStatic(x) || !isStatic(y) || x.dtype !== y.dtype) return null;
  if (p.kind === 'slice') {
    if (p.mode !== 'strict_bounds' || p.start.some((s) => s !== 0) || p.stride.some((s) => s < 0)) return null;
    const dense = denseStrides(x.shape);
    return [{ dims: [...y.shape], strides: y.shape.map((_, i) => dense[i]! * p.stride[i]!) }];
  }
  if (p.kind !== 'shuffle') return null;
  const first = p.firstTranspose;
  const second = p.secondTranspose;
  if ((first !== undefined && !isPerm(first, x.shape.length)) || (second !== undefined && !isPerm(second, y.shape.length))) return null;
  const steps: Array<{ dims: number[]; strides: number[] }> = [];
  // Outermost first: the second transpose over the reshaped dims, then the first over the input.
  if (!identity(second)) {
    const reshaped = y.shape.map(() => 0);
    second!.forEach((from, k) => (reshaped[from] = y.shape[k]!));
    const dense = denseStrides(reshaped);
    steps.push({ dims: [...y.shape], strides: second!.map((from) => dense[from]!) });
  }
  if (!identity(first)) {
    const dense = denseStrides(x.shape);
    steps.push({ dims: first!.map((from) => x.shape[from]!), strides: first!.map((from) => dense[from]!) });
  }
  return steps;
}

/** The values of a constant layer's weights, or null. */
function constantValues(layer: Layer | undefined): Float64Array | null {
  return layer !== undefined && layer.params.kind === 'constant' ? readNumbers(layer.params.weights) : null;
}

/** Whether a float mask of [1…, Sq, Skv] is PyTorch's causal constant: 0 where j ≤ i, −∞ above. */
function isCausalConstant(values: Float64Array, shape: readonly number[], sq: number, skv: number): boolean {
  if (shape.length < 2 || shape.at(-2) !== sq || shape.at(-1) !== skv || volume(shape) !== sq * skv) return false;
  for (let i = 0; i < sq; i++) for (let j = 0; j < skv; j++) if (values[i * skv + j] !== (j <= i ? 0 : -Infinity)) return false;
  return true;
}

function findAttention(g: Graph, m2: Layer): Found | null {
  const { network, producer, only } = g;
  const p2 = m2.params;
  if (p2.kind !== 'matmul' || p2.opA !== 'none' || p2.opB !== 'none' || m2.inputs.length !== 2) return null;
  const probs = m2.inputs[0]!;
  const softmax = producer(probs);
  if (softmax === undefined || softmax.params.kind !== 'softmax' || !only(probs, m2)) return null;
  const rank = network.tensor(probs).shape.length;
  if (rank < 3 || (softmax.params.axis !== rank - 1 && softmax.params.axis !== -1)) return null;
  const absorbed: Layer[] = [m2, softmax];
  let x = softmax.inputs[0]!;
  if (!only(x, softmax)) return null;
  let layer = producer(x);
  // The mask.
  let mask: number | null = null;
  if (layer?.params.kind === 'select' && layer.inputs.length === 3) {
    const [cond, s, fill] = layer.inputs as number[];
    const fills = constantValues(producer(fill!));
    if (fills === null || fills.length === 0 || !fills.every((v) => v === -Infinity) || network.tensor(cond!).dtype !== 'bool' || !only(s!, layer)) return null;
    absorbed.push(layer);
    mask = cond!;
    x = s!;
    layer = producer(x);
  } else if (layer?.params.kind === 'elementwise' && layer.params.op === 'sum' && layer.inputs.length === 2) {
    const [a, b] = layer.inputs as number[];
    const leads = (id: number): boolean => {
      const l = producer(id);
      return l !== undefined && (l.params.kind === 'matmul' || (l.params.kind === 'elementwise' && (l.params.op === 'prod' || l.params.op === 'div')));
    };
    const [s, m] = leads(a!) && only(a!, layer) ? [a!, b!] : leads(b!) && only(b!, layer) ? [b!, a!] : [null, null];
    if (s === null) return null;
    absorbed.push(layer);
    mask = m;
    x = s;
    layer = producer(x);
  }
  // The scale.
  let scale = 1;
  if (layer?.params.kind === 'elementwise' && (layer.params.op === 'prod' || layer.params.op === 'div') && layer.inputs.length === 2) {
    const [a, b] = layer.inputs as number[];
    const va = layer.params.op === 'prod' ? constantValues(producer(a!)) : null;
    const vb = constantValues(producer(b!));
    const [s, c] = vb !== null && vb.length === 1 ? [a!, vb[0]!] : va !== null && va.length === 1 ? [b!, va[0]!] : [null, 0];
    if (s === null || !only(s, layer)) return null;
    scale = layer.params.op === 'prod' ? c : 1 / c;
    absorbed.push(layer);
    x = s;
    layer = producer(x);
  }
  if (!Number.isFinite(scale)) return null;
  const m1 = layer;
  if (m1 === undefined || m1.params.kind !== 'matmul' || m1.params.opA !== 'none' || m1.params.opB === 'vector' || m1.inputs.length !== 2) return null;
  absorbed.push(m1);
  const transB = m1.params.opB === 'transpose';
  const [qId, kId] = m1.inputs as [number, number];
  const vId = m2.inputs[1]!;
  const [q, k, v, s, o] = [qId, kId, vId, x, m2.outputs[0]!].map((id) => network.tensor(id)) as [NetTensor, NetTensor, NetTensor, NetTensor, NetTensor];
  const dtype = q.dtype;
  if (!ATTENTION_DTYPES.has(dtype) || [k, v, s, o, network.tensor(probs)].some((t) => t.dtype !== dtype)) return null;
  if (![q, k, v, s, o].every((t) => isStatic(t) && t.shape.length === rank)) return null;
  const batch = s.shape.slice(0, rank - 2);
  const [sq, skv] = s.shape.slice(rank - 2) as [number, number];
  const d = q.shape[rank - 1]!;
  if (!attentionHeadDimOk(d) || v.shape[rank - 1] !== d || v.shape[rank - 2] !== skv || !o.shape.slice(0, rank - 2).every((n, i) => n === batch[i])) return null;
  if (volume(batch) * sq * skv === 0) return null;

  // The mask: a causal constant, or read broadcast over the scores.
  let causal = false;
  let maskStrides: number[] | null = null;
  if (mask !== null) {
    const m = network.tensor(mask);
    if (!isStatic(m) || m.shape.length !== rank || m.shape.some((n, i) => n !== 1 && n !== s.shape[i])) return null;
    if (m.dtype !== 'bool' && m.dtype !== dtype && m.dtype !== 'float32') return null;
    const values = m.dtype === 'bool' ? null : constantValues(producer(mask));
    if (values !== null && isCausalConstant(values, m.shape, sq, skv)) causal = true;
    else maskStrides = broadcastStrides(m.shape, s.shape);
  }
  // Operand strides over [...box, rows, head dim] of their own tensors (broadcast batch dims read stride 0).
  const over = (t: NetTensor, swap: boolean): number[] => {
    const own = swap ? [...t.shape.slice(0, rank - 2), t.shape[rank - 1]!, t.shape[rank - 2]!] : t.shape;
    const strides = broadcastStrides(t.shape, own.map((n, i) => (i < rank - 2 ? batch[i]! : t.shape[i]!)));
    return swap ? [...strides.slice(0, rank - 2), strides[rank - 1]!, strides[rank - 2]!] : strides;
  };
  return throughViews(g, {
    box: [...batch],
    operands: [
      { source: qId, strides: over(q, false) },
      { source: kId, strides: over(k, !transB) },
      { source: vId, strides: over(v, false) },
    ],
    readers: [m1, m1, m2],
    mask: maskStrides === null ? null : mask,
    maskStrides,
    output: m2.outputs[0]!,
    sq,
    skv,
    d,
    scale,
    causal,
    absorbed,
    written: true,
  });
}

/** A plain attention layer its kernel can run, in the strided form; null when the kernel cannot. */
function fromLayer(g: Graph, layer: Layer): Found | null {
  const p = layer.params;
  if (p.kind !== 'attention' || p.strided !== undefined) return null;
  const { network } = g;
  const [q, k, v] = layer.inputs.slice(0, 3).map((id) => network.tensor(id!)) as [NetTensor, NetTensor, NetTensor];
  const maskId = layer.inputs[3] ?? null;
  const m = maskId === null ? null : network.tensor(maskId);
  const o = network.tensor(layer.outputs[0]!);
  const dtype = q.dtype;
  if (!ATTENTION_DTYPES.has(dtype) || [k, v, o].some((t) => t.dtype !== dtype)) return null;
  if (![q, k, v, o, ...(m === null ? [] : [m])].every(isStatic)) return null;
  if (m !== null && m.dtype !== 'bool' && m.dtype !== dtype && m.dtype !== 'float32') return null;
  const rank = q.shape.length;
  const d = q.shape[rank - 1]!;
  const [sq, skv] = [q.shape[rank - 2]!, k.shape[rank - 2]!];
  if (!attentionHeadDimOk(d) || volume(q.shape.slice(0, rank - 2)) * sq * skv === 0) return null;
  const dense = denseAttention({ query: q.shape, key: k.shape, value: v.shape, mask: m?.shape ?? null }, p.scale, p.causal);
  return throughViews(g, {
    box: dense.batch,
    operands: [
      { source: layer.inputs[0]!, strides: dense.query.concat(1) },
      { source: layer.inputs[1]!, strides: dense.key.concat(1) },
      { source: layer.inputs[2]!, strides: dense.value.concat(1) },
    ],
    readers: [layer, layer, layer],
    mask: maskId,
    maskStrides: dense.mask ?? null,
    output: layer.outputs[0]!,
    sq,
    skv,
    d,
    scale: p.scale,
    causal: p.causal,
    absorbed: [layer],
    written: false,
  });
}

/** An attention's operands over its batch box, before the views around it are read through. */
interface Walk {
  box: number[];
  /** Strides over [...box, rows, head dim] of each operand's tensor. */
  operands: Operand[];
  /** The layer that reads each operand (whose only reader a view must be). */
  readers: [Layer, Layer, Layer];
  mask: number | null;
  /** Strides over [...box, query row, key column] of the mask. */
  maskStrides: number[] | null;
  /** The tensor the attention's output stands for (dense, [...leading dims, rows, head dim]). */
  output: number;
  sq: number;
  skv: number;
  d: number;
  scale: number;
  causal: boolean;
  absorbed: Layer[];
  written: boolean;
}

/** The attention of `w` reading its operands through the views before them and writing through the transpose after it. */
function throughViews(g: Graph, w: Walk): Found | null {
  const { network, producer, only } = g;
  const { sq, skv, d, absorbed } = w;
  let maskStrides = w.maskStrides;

  // The output, written through the transpose after it when that is its only reader: strides
  // over its own dims first, then over the box (which splits its heads when they are grouped).
  let output = w.output;
  const o = network.tensor(output);
  let outputShape = [...o.shape];
  let own = denseStrides(o.shape);
  const after = g.readers(output);
  const t = after.length === 1 ? after[0]! : undefined;
  if (t !== undefined && t.params.kind === 'shuffle' && only(output, t) && t.inputs.length === 1 && identity(t.params.secondTranspose) && isPerm(t.params.firstTranspose, o.shape.length)) {
    const y = network.tensor(t.outputs[0]!);
    const perm = t.params.firstTranspose!;
    const dense = denseStrides(perm.map((from) => o.shape[from]!));
    const strides = o.shape.map((_, j) => dense[perm.indexOf(j)]!);
    if (isStatic(y) && strides.at(-1) === 1) {
      own = strides;
      output = t.outputs[0]!;
      outputShape = [...y.shape];
      absorbed.push(t);
    }
  }
  let outputStrides = refine(own, boxParts(o.shape.slice(0, o.shape.length - 2), w.box));
  let box = [...w.box];
  const operands = w.operands.map((op) => ({ ...op, strides: [...op.strides] }));
  /** The box splits as `parts` (extents per box dim, outer first): every list of strides over it follows. */
  const split = (parts: readonly (readonly number[])[]): void => {
    box = parts.flat();
    for (const op of operands) op.strides = refine(op.strides, parts);
    if (maskStrides !== null) maskStrides = refine(maskStrides, parts);
    outputStrides = refine(outputStrides, parts);
  };
  // Each operand read through the views before it, while its head dim stays contiguous.
  operands.forEach((op, n) => {
    let reader = w.readers[n]!;
    for (;;) {
      const view = producer(op.source);
      if (view === undefined || !only(op.source, reader)) return;
      const steps = viewSteps(network, view);
      if (steps === null) return;
      let strides = op.strides;
      for (const step of steps) {
        const dims = [...box, n === 0 ? sq : skv, d];
        let next = throughDense(dims, strides, step.dims, step.strides);
        if (next === null) {
          const parts = splitForDense(dims, strides, step.dims);
          // Only the batch box may split; the rows and the head dim walk as they are.
          if (parts === null || parts.slice(box.length).some((e) => e.length !== 1)) return;
          const boxParts = parts.slice(0, box.length);
          strides = refine(strides, boxParts);
          split(boxParts);
          next = throughDense([...box, n === 0 ? sq : skv, d], strides, step.dims, step.strides);
          if (next === null) return;
        }
        strides = next;
      }
      if (strides.at(-1) !== 1) return;
      op.strides = strides;
      op.source = view.inputs[0]!;
      absorbed.push(view);
      reader = view;
    }
  });
  if (box.length > 8 || operands.some((op) => op.strides.at(-1) !== 1)) return null;
  const rows = (st: readonly number[]): number[] => st.slice(0, box.length + 1);
  const params: AttentionParams = {
    batch: box,
    seqQ: sq,
    seqKV: skv,
    headDim: d,
    scale: w.scale,
    causal: w.causal,
    query: rows(operands[0]!.strides),
    key: rows(operands[1]!.strides),
    value: rows(operands[2]!.strides),
    output: rows(outputStrides),
    outputShape,
  };
  if (maskStrides !== null) params.mask = maskStrides;
  const inputs: Found['inputs'] = [operands[0]!.source, operands[1]!.source, operands[2]!.source, maskStrides === null ? null : w.mask];
  return { inputs, output, params, absorbed, written: w.written };
}

/** How the dims of `own` (outer first) split into the dims of `box`, whose products they are: extents per dim of `own`. */
function boxParts(own: readonly number[], box: readonly number[]): number[][] {
  const parts: number[][] = [];
  let j = 0;
  for (const n of own) {
    const part: number[] = [];
    let size = 1;
    do {
      part.push(box[j]!);
      size *= box[j++]!;
    } while (size < n && j < box.length);
    parts.push(part);
  }
  return parts;
}

/** Every attention of `source` that the kernel can run as one strided attention layer (see the module comment). */
export function fuseAttention(source: Network): FuseAttentionResult {
  const g = passGraph(source);
  const found = new Map<number, Found>();
  const absorbed = new Set<number>();
  for (const layer of source.layers) {
    const f = fromLayer(g, layer) ?? findAttention(g, layer);
    if (f === null || f.absorbed.some((l) => absorbed.has(l.index))) continue;
    found.set(layer.index, f);
    for (const l of f.absorbed) absorbed.add(l.index);
  }
  if (found.size === 0) return { network: source, attentions: 0, written: 0, causal: 0 };
  const rw = new NetworkRewrite(source, 'fuse-attention');
  for (const layer of source.layers) {
    const f = found.get(layer.index);
    if (f !== undefined) {
      const [q, k, v, m] = f.inputs.map((id) => rw.get(id));
      const params = { kind: 'attention', scale: f.params.scale, causal: f.params.causal, strided: f.params } as const;
      const out = rw.add(params, m === null ? [q!, k!, v!] : [q!, k!, v!, m], f.written ? `${layer.name}/attention` : layer.name)[0]!;
      rw.set(f.output, out);
    } else if (!absorbed.has(layer.index)) rw.copy(layer);
  }
  const all = [...found.values()];
  return { network: rw.finish(), attentions: found.size, written: all.filter((f) => f.written).length, causal: all.filter((f) => f.params.causal).length };
}
