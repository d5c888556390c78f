/**
 * Casts recomputed per reader, a pass of the cuda backend: a cast whose
 * output several layers read, each of them a kind that fuses a pointwise producer (maps, concat blocks
 * and row kernels, lib/backends/cuda/plan/fuse-pointwise.ts), becomes one cast per reader. Fusion
 * takes a producer into its only reader, so each reader then converts the values as it loads
 * them, and the cast's output never reaches memory. Llama's RMSNorm, kept in float32 by the
 * precision pass, reads the float32 copy of the float16 residual twice (the mean of squares and
 * the scaling): two launches that each read 2-byte values replace a cast that wrote 4-byte ones
 * and two launches that read them.
 *
 * Where a reader cannot fuse after all, its copy of the cast runs as a launch of its own: the
 * same values, one more launch. Pure: Network → Network, checked against the reference backend.
 */
import type { Network, NetTensor } from '../../../network';
import { tensorReaders } from '../../../network/live-layers';
import { NetworkRewrite } from '../../../network/rewrite';

/**
 * Layer kinds that compute a pointwise producer of (some of) their inputs inside their own
 * kernel. Not slices and transposes: those are mostly views their readers read through, which
 * take no producer, so a copy of the cast per view would run as a launch of its own. Not casts:
 * a cast of a recomputed cast would need the first copied before it is placed.
 */
const FUSING = new Set(['elementwise', 'unary', 'activation', 'select', 'concat', 'softmax', 'normalization', 'reduce']);

/** Casts read by more layers than this keep their output (each copy re-reads the cast's input). */
export const MAX_RECOMPUTED_READERS = 4;

export interface RecomputeResult {
  network: Network;
  /** The casts now computed once per reader. */
  casts: number;
}

export function recomputeCasts(source: Network): RecomputeResult {
  const readers = tensorReaders(source.layers);
  const outputs = new Set(source.outputs.map((o) => o.tensor));
  // Cast output tensor id → its reader layers (by index), for the casts to recompute.
  const recomputed = new Map<number, number[]>();
  for (const layer of source.layers) {
    if (layer.params.kind !== 'cast' || layer.outputs.length !== 1) continue;
    const out = layer.outputs[0]!;
    const r = [...new Set(readers.get(out) ?? [])];
    if (outputs.has(out) || r.length < 2 || r.length > MAX_RECOMPUTED_READERS) continue;
    if (r.every((j) => FUSING.has(source.layers[j]!.params.kind))) recomputed.set(out, r);
  }
  if (recomputed.size === 0) return { network: source, casts: 0 };
  const rw = new NetworkRewrite(source, 'recompute-casts');
  const castOf = new Map<number, (typeof source.layers)[number]>();
  for (const layer of source.layers) {
    const out = layer.outputs[0];
    if (out !== undefined && recomputed.has(out)) {
      castOf.set(out, layer);
      continue;
    }
    const own = layer.inputs.filter((id): id is number => id !== null && recomputed.has(id));
    if (own.length === 0) {
      rw.copy(layer);
      continue;
    }
    // This reader's own copy of each recomputed cast it reads, placed just before it.
    const copies = new Map<number, NetTensor>();
    for (const id of new Set(own)) {
      const cast = castOf.get(id)!;
      const k = recomputed.get(id)!.indexOf(layer.index);
      copies.set(id, rw.add(cast.params, [rw.get(cast.inputs[0])], `${cast.name}/for_${k}`)[0]!);
    }
    const outs = rw.add(layer.params, layer.inputs.map((id) => (id !== null && copies.has(id) ? copies.get(id)! : rw.get(id))), layer.name);
    layer.outputs.forEach((id, i) => rw.set(id, outs[i]!));
  }
  return { network: rw.finish(), casts: recomputed.size };
}
