/**
 * Sibling projections as one GEMM, a pass of the cuda backend (issue 19). A transformer
 * projects one activation several times with constant weights: BERT's query, key and value,
 * Llama's query and key, and its SwiGLU gate and up. Each is a GEMM of the same M and K; alone,
 * a 768-wide one leaves most of the H200 idle (BERT-base's ran at 0.24 of its fp16 peak). Here
 * their weights are concatenated along N at build, the product is computed once, and each
 * projection becomes a slice of the wide output along its last axis:
 *
 *   x·W₁, x·W₂, x·W₃  →  y = x·[W₁ W₂ W₃];  y[..., 0:n₁], y[..., n₁:n₁+n₂], y[..., n₁+n₂:]
 *
 * Each slice is a view (fuse-pointwise.ts, planViews) that its pointwise readers read through
 * (the bias add before the heads' transpose, RoPE's products, SiLU and its product), so no copy
 * runs. A projection is taken only where every reader of its output, through reshapes, is such
 * a map; one read by an attention or a matmul (Llama's value) stays its own GEMM, since its
 * slice would be copied first. Every element of the wide product is the same dot product over
 * K as in its own GEMM; only the library's choice of kernel, and with it the order of the
 * fp32 accumulation, may differ.
 *
 * Matched: matmul layers (not attentions) reading the same A with the same opA (`none`) and
 * opB (`none` or `transpose`), whose B is a constant, or reshapes of one, read by nothing else,
 * with batch dims of 1, the same K and dtype, and static output shapes. Pure: Network → Network.
 */
import type { Layer, Network } from '../../network';
import { NetworkRewrite } from '../../network/rewrite';
import { concat } from '../../kernels/shape';
import type { Tensor } from '../../tensor';
import { readsAsMap } from './fuse-pointwise';
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
  /** The constant's layer and the reshapes between it and the matmul: dropped with the matmul. */
  weightLayers: Layer[];
  /** The constant's values in B's shape ([1, …, n, k] or [1, …, k, n]). */
  weights: Tensor;
  /** N of this projection (its columns in the wide product) and K. */
  n: number;
  k: number;
}


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

/** Whether every reader of `id`, through reshapes, reads it as a map (`readsAsMap`: a view of a slice can be read through by each); never a network output. */
function readByMapsOnly(g: Graph, id: number, outputs: ReadonlySet<number>): boolean {
  if (outputs.has(id)) return false;
  const readers = g.readers(id);
  if (readers.length === 0) return false;
  return readers.every((r) => readsAsMap(r.params.kind) && r.outputs.length === 1 && (!isReshape(r) || readByMapsOnly(g, r.outputs[0]!, outputs)));
}

/** `layer` as a projection of its A by a constant B, or null. */
function projection(g: Graph, layer: Layer, outputs: ReadonlySet<number>): Projection | null {
  const p = layer.params;
  if (p.kind !== 'matmul' || p.attention !== undefined || p.opA !== 'none' || (p.opB !== 'none' && p.opB !== 'transpose')) return null;
  if (layer.inputs.length !== 2 || layer.outputs.length !== 1) return null;
  const a = g.network.tensor(layer.inputs[0]!);
  const b = g.network.tensor(layer.inputs[1]!);
  const out = g.network.tensor(layer.outputs[0]!);
  if (b.shape.length !== a.shape.length || b.shape.length < 2 || b.shape.slice(0, -2).some((d) => d !== 1)) return null;
  if (out.shape.some((d) => d < 0) || b.dtype !== a.dtype) return null;
  const weight = soleConstant(g, layer.inputs[1]!, layer);
  if (weight === null || !readByMapsOnly(g, layer.outputs[0]!, outputs)) return null;
  const [n, k] = p.opB === 'transpose' ? b.shape.slice(-2) : b.shape.slice(-2).reverse();
  return { matmul: layer, weightLayers: weight.layers, weights: weight.weights.reshape([...b.shape]), n: n!, k: k! };
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
    const key = `${layer.inputs[0]}|${params.opB}|${p.k}|${p.weights.dtype}`;
    byKey.set(key, [...(byKey.get(key) ?? []), p]);
  }
  const groups = [...byKey.values()].filter((group) => group.length > 1);
  if (groups.length === 0) return { network: source, groups: 0, merged: 0 };
  // Each group computes where its first member was; its members and their weights' layers go.
  const first = new Map(groups.map((group) => [group[0]!.matmul.index, group]));
  const dropped = new Set(groups.flatMap((group) => group.flatMap((p) => [p.matmul.index, ...p.weightLayers.map((l) => l.index)])));
  const rw = new NetworkRewrite(source, 'merge-matmuls');
  for (const layer of source.layers) {
    const group = first.get(layer.index);
    if (group !== undefined) {
      const params = layer.params as Extract<Layer['params'], { kind: 'matmul' }>;
      const a = rw.get(layer.inputs[0]!)!;
      const name = group.map((p) => p.matmul.name).join('+');
      // Side by side along N: stacked rows of a transposed B, joined rows of a plain one.
      const joined = concat(group.map((p) => p.weights), params.opB === 'transpose' ? -2 : -1);
      const weights = rw.add({ kind: 'constant', weights: joined }, [], `${name}/weights`)[0]!;
      const wide = rw.add({ kind: 'matmul', opA: 'none', opB: params.opB }, [a, weights], name)[0]!;
      let column = 0;
      for (const p of group) {
        const shape = source.tensor(p.matmul.outputs[0]!).shape;
        const start = shape.map((_, i) => (i === shape.length - 1 ? column : 0));
        const slice = rw.add({ kind: 'slice', start, size: [...shape], stride: shape.map(() => 1), mode: 'strict_bounds' }, [wide], `${p.matmul.name}/columns`)[0]!;
        rw.set(p.matmul.outputs[0]!, slice);
        column += p.n;
      }
    } else if (!dropped.has(layer.index)) rw.copy(layer);
  }
  return { network: rw.finish(), groups: groups.length, merged: groups.reduce((s, group) => s + group.length, 0) };
}
