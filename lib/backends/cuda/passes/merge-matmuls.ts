/**
 * Sibling projections as one GEMM, a pass of the cuda backend. A transformer
 * projects one activation several times with constant weights: BERT's query, key and value,
 * Llama's query and key, and its SwiGLU gate and up. Each is a GEMM of the same M and K; alone,
 * a 768-wide one leaves most of the H200 idle (BERT-base's ran at 0.24 of its fp16 peak). Here
 * their weights are concatenated along N at build, the product is computed once, and each
 * projection becomes a slice of the wide output along its last axis:
 *
 *   x·W₁, x·W₂, x·W₃  →  y = x·[W₁ W₂ W₃];  y[..., 0:n₁], y[..., n₁:n₁+n₂], y[..., n₁+n₂:]
 *
 * Each slice is a view (../plan/fuse-pointwise.ts, planViews) that its pointwise readers read
 * through (the bias add before the heads' transpose, RoPE's products, SiLU and its product),
 * so no copy runs. A fused attention (fuse-attention.ts) reading a projection as its query,
 * key or value reads the wide product's columns instead: its strides are rewritten over the
 * wide rows and it starts at the projection's column (AttentionParams `offsets`), so Llama's
 * value joins its query and key. A projection is taken only where every reader of its output,
 * through reshapes, is such a map or such an attention; one read by a matmul stays its own
 * GEMM, since its slice would be copied first. Every element of the wide product is the same
 * dot product over K as in its own GEMM; only the library's choice of kernel, and with it the
 * order of the fp32 accumulation, may differ.
 *
 * A linear layer's bias (a sum with a constant along N, the product's one reader) joins the
 * merge where attentions alone read the sum: BERT's query, key and value then take one sum
 * over the wide product with the biases side by side, one launch instead of three. Where a map
 * reads the sum, the map already computes it inside its own kernel, so it stays.
 *
 * Matched: matmul layers (not attentions) reading the same A with the same opA (`none`) and
 * opB (`none` or `transpose`), whose B is a constant, or reshapes of one, read by nothing else,
 * with batch dims of 1, the same K and dtype, and static output shapes; with a bias, only with
 * others that have one. Pure: Network → Network.
 */
import type { AttentionParams, Layer, Network, NetTensor } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import { concat } from '../../../kernels/shape';
import type { Tensor } from '../../../ir/tensor';
import { readsAsMap, throughDenseFrom } from '../plan/fuse-pointwise';
import { denseStrides } from '../layers/kernel';
import { passGraph, type PassGraph as Graph } from './pass-graph';

export interface MergeMatmulsResult {
  network: Network;
  /** GEMMs now one wide GEMM each (the groups). */
  groups: number;
  /** Projections computed inside a wide GEMM. */
  merged: number;
}

interface Projection {
  matmul: Layer;
  /** The constant's layer and the reshapes between it and the matmul (and the bias's layers, below): dropped with the matmul. */
  weightLayers: Layer[];
  /** The constant's values in B's shape ([1, …, n, k] or [1, …, k, n]). */
  weights: Tensor;
  /** N of this projection (its columns in the wide product) and K. */
  n: number;
  k: number;
  /** The sum with a constant along N that is the product's one reader (a linear layer's bias), or null. */
  bias: Bias | null;
  /** The tensor the projection stands for: the bias sum's output, else the product. */
  output: number;
}

interface Bias {
  sum: Layer;
  /** The bias's values as [1, …, 1, n] in the product's rank. */
  values: Tensor;
}


const isAttention = (layer: Layer): boolean => layer.params.kind === 'attention' && layer.params.strided !== undefined;

/** A shuffle that keeps the element order (no transposes): a reshape. */
function isReshape(layer: Layer): boolean {
  const p = layer.params;
  if (p.kind !== 'shuffle' || layer.inputs.length !== 1) return false;
  const identity = (perm: readonly number[] | undefined): boolean => perm === undefined || perm.every((v, i) => v === i);
  return identity(p.firstTranspose) && identity(p.secondTranspose);
}

/** The constant behind `id` (through reshapes), when only `reader`'s chain reads it, with the layers of that chain. */
function soleConstant(g: Graph, id: number, reader: Layer): { weights: Tensor; layers: Layer[] } | null {
  const layers: Layer[] = [];
  let tensor = id;
  let next = reader;
  for (;;) {
    const layer = g.producer(tensor);
    if (layer === undefined || !g.only(tensor, next)) return null;
    layers.push(layer);
    if (layer.params.kind === 'constant') return { weights: layer.params.weights, layers };
    if (!isReshape(layer)) return null;
    next = layer;
    tensor = layer.inputs[0]!;
  }
}

/**
 * The attention's query, key or value (input `j`) read at its strides from its offset inside
 * `inner` (the projection's shape), as strides and an offset inside `wide` (the wide product's
 * shape) starting `column` elements in; null when that walk leaves a row of `inner`.
 */
function attentionColumns(att: AttentionParams, j: number, inner: readonly number[], wide: readonly number[], column: number): { strides: number[]; offset: number } | null {
  const strides = [att.query, att.key, att.value][j]!;
  const rows = j === 0 ? att.seqQ : att.seqKV;
  // The head dim is contiguous: walked as one more dim of stride 1, so it must stay in its row too.
  const through = throughDenseFrom([...att.batch, rows, att.headDim], [...strides, 1], inner, denseStrides(wide), att.offsets?.[j] ?? 0);
  if (through === null || through.strides.at(-1) !== 1) return null;
  return { strides: through.strides.slice(0, -1), offset: through.offset + column };
}

/**
 * Whether every reader of `id`, through reshapes, reads it as a map (`readsAsMap`: a view of a
 * slice can be read through by each), or, of `id` itself (`direct`), is an attention reading it
 * as query, key or value within its rows (its strides can then be rewritten into the wide
 * product's; behind a reshape the slice would be copied for it); never a network output.
 */
function readInPlace(g: Graph, id: number, outputs: ReadonlySet<number>, direct = true): boolean {
  if (outputs.has(id)) return false;
  const readers = g.readers(id);
  if (readers.length === 0) return false;
  const inner = g.network.tensor(id).shape;
  return readers.every((r) => {
    const p = r.params;
    if (p.kind === 'attention' && p.strided !== undefined) {
      const slots = r.inputs.flatMap((t, j) => (t === id ? [j] : []));
      return direct && slots.every((j) => j < 3 && attentionColumns(p.strided!, j, inner, inner, 0) !== null);
    }
    return readsAsMap(p.kind) && r.outputs.length === 1 && (!isReshape(r) || readInPlace(g, r.outputs[0]!, outputs, false));
  });
}

/** The sum of `layer`'s output (its one reader) with a constant along its last axis only, or null. */
function biasOf(g: Graph, layer: Layer, outputs: ReadonlySet<number>): { bias: Bias; layers: Layer[] } | null {
  const product = layer.outputs[0]!;
  const readers = g.readers(product);
  if (outputs.has(product) || readers.length !== 1) return null;
  const sum = readers[0]!;
  if (sum.params.kind !== 'elementwise' || sum.params.op !== 'sum' || sum.inputs.length !== 2 || sum.outputs.length !== 1) return null;
  const other = sum.inputs[sum.inputs[0] === product ? 1 : 0];
  if (other === product || other === null || other === undefined) return null;
  const shape = g.network.tensor(product).shape;
  const b = g.network.tensor(other);
  const n = shape.at(-1)!;
  const alongN = b.shape.length === shape.length && b.shape.at(-1) === n && b.shape.slice(0, -1).every((d) => d === 1);
  if (!alongN || b.dtype !== g.network.tensor(product).dtype) return null;
  const constant = soleConstant(g, other, sum);
  if (constant === null) return null;
  return { bias: { sum, values: constant.weights.reshape([...b.shape]) }, layers: [...constant.layers, sum] };
}

/** `layer` as a projection of its A by a constant B, or null. */
function projection(g: Graph, layer: Layer, outputs: ReadonlySet<number>): Projection | null {
  const p = layer.params;
  if (p.kind !== 'matmul' || p.opA !== 'none' || (p.opB !== 'none' && p.opB !== 'transpose')) return null;
  if (layer.inputs.length !== 2 || layer.outputs.length !== 1) return null;
  const a = g.network.tensor(layer.inputs[0]!);
  const b = g.network.tensor(layer.inputs[1]!);
  const out = g.network.tensor(layer.outputs[0]!);
  if (b.shape.length !== a.shape.length || b.shape.length < 2 || b.shape.slice(0, -2).some((d) => d !== 1)) return null;
  if (out.shape.some((d) => d < 0) || b.dtype !== a.dtype) return null;
  const weight = soleConstant(g, layer.inputs[1]!, layer);
  if (weight === null) return null;
  // A bias joins the merge only where attentions alone read the sum: they read the wide sum in
  // place, so one launch replaces one a projection. A map reader computes its bias add inside
  // its own kernel already, where one wide sum would be a launch more.
  const found = biasOf(g, layer, outputs);
  const sum = found?.bias.sum.outputs[0];
  const bias = sum !== undefined && g.readers(sum).every(isAttention) && readInPlace(g, sum, outputs) ? found : null;
  // Without a merged bias the product's own readers decide (a bias sum among them is a map).
  if (bias === null && !readInPlace(g, layer.outputs[0]!, outputs)) return null;
  const projected = bias?.bias.sum.outputs[0] ?? layer.outputs[0]!;
  const [n, k] = p.opB === 'transpose' ? b.shape.slice(-2) : b.shape.slice(-2).reverse();
  return {
    matmul: layer,
    weightLayers: [...weight.layers, ...(bias?.layers ?? [])],
    weights: weight.weights.reshape([...b.shape]),
    n: n!,
    k: k!,
    bias: bias?.bias ?? null,
    output: projected,
  };
}

/** `layer`, an attention, reading each merged projection among its query, key and value from the wide product's columns. */
function readingColumns(rw: NetworkRewrite, layer: Layer, columns: ReadonlyMap<number, Columns>): void {
  const p = layer.params as Extract<Layer['params'], { kind: 'attention' }>;
  const att = { ...p.strided!, offsets: [...(p.strided!.offsets ?? [0, 0, 0])] };
  const inputs = layer.inputs.map((t, j) => {
    const c = t === null ? undefined : columns.get(t);
    if (c === undefined) return rw.get(t);
    const through = attentionColumns(p.strided!, j, c.shape, c.wide.shape, c.column)!;
    const key = (['query', 'key', 'value'] as const)[j]!;
    att[key] = through.strides;
    att.offsets[j] = through.offset;
    return c.wide;
  });
  const [out] = rw.add({ ...p, strided: att }, inputs, layer.name);
  rw.set(layer.outputs[0]!, out!);
}

/** Where a merged projection's values are: `column` elements into each row of `wide`, `shape` its own. */
interface Columns {
  wide: NetTensor;
  column: number;
  shape: readonly number[];
}

/** Every group of sibling projections of `source` as one wide GEMM and slices (see the module comment). */
export function mergeMatmuls(source: Network): MergeMatmulsResult {
  const g = passGraph(source);
  const outputs = new Set(source.outputs.map((o) => o.tensor));
  // Projections by their A, opB, K and dtype: only those can share a GEMM.
  const byKey = new Map<string, Projection[]>();
  for (const layer of source.layers) {
    const p = projection(g, layer, outputs);
    if (p === null) continue;
    const params = layer.params as Extract<Layer['params'], { kind: 'matmul' }>;
    const key = `${layer.inputs[0]}|${params.opB}|${p.k}|${p.weights.dtype}|${p.bias === null ? '' : 'bias'}`;
    byKey.set(key, [...(byKey.get(key) ?? []), p]);
  }
  const groups = [...byKey.values()].filter((group) => group.length > 1);
  if (groups.length === 0) return { network: source, groups: 0, merged: 0 };
  // Each group computes where its first member was; its members and their weights' layers go.
  const first = new Map(groups.map((group) => [group[0]!.matmul.index, group]));
  const dropped = new Set(groups.flatMap((group) => group.flatMap((p) => [p.matmul.index, ...p.weightLayers.map((l) => l.index)])));
  const rw = new NetworkRewrite(source, 'merge-matmuls');
  // Each merged projection's output, for the attentions that read it from the wide product.
  const columns = new Map<number, Columns>();
  for (const layer of source.layers) {
    const group = first.get(layer.index);
    if (group !== undefined) {
      const params = layer.params as Extract<Layer['params'], { kind: 'matmul' }>;
      const a = rw.get(layer.inputs[0]!)!;
      const name = group.map((p) => p.matmul.name).join('+');
      // Side by side along N: stacked rows of a transposed B, joined rows of a plain one.
      const joined = concat(group.map((p) => p.weights), params.opB === 'transpose' ? -2 : -1);
      const weights = rw.add({ kind: 'constant', weights: joined }, [], `${name}/weights`)[0]!;
      let wide = rw.add({ kind: 'matmul', opA: 'none', opB: params.opB }, [a, weights], name)[0]!;
      if (group[0]!.bias !== null) {
        // One sum over every column, with the biases side by side in the same order (a sum's
        // operand order does not change its bits).
        const biases = rw.add({ kind: 'constant', weights: concat(group.map((p) => p.bias!.values), -1) }, [], `${name}/bias`)[0]!;
        wide = rw.add({ kind: 'elementwise', op: 'sum' }, [wide, biases], `${name}/bias_add`)[0]!;
      }
      let column = 0;
      for (const p of group) {
        const shape = source.tensor(p.output).shape;
        columns.set(p.output, { wide, column, shape });
        // Attentions read the wide product itself (readingColumns); a slice only for the maps.
        if (g.readers(p.output).some((r) => !isAttention(r))) {
          const start = shape.map((_, i) => (i === shape.length - 1 ? column : 0));
          const slice = rw.add({ kind: 'slice', start, size: [...shape], stride: shape.map(() => 1), mode: 'strict_bounds' }, [wide], `${p.matmul.name}/columns`)[0]!;
          rw.set(p.output, slice);
        }
        column += p.n;
      }
    } else if (dropped.has(layer.index)) continue;
    else if (isAttention(layer) && layer.inputs.some((t) => t !== null && columns.has(t))) readingColumns(rw, layer, columns);
    else rw.copy(layer);
  }
  return { network: rw.finish(), groups: groups.length, merged: groups.reduce((s, group) => s + group.length, 0) };
}
