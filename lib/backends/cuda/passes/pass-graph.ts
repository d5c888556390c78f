/** How the cuda backend's pattern passes (fuse-attention, fuse-rmsnorm) see a network: producers and readers. */
import type { Layer, Network } from '../../../network';
import { tensorReaders } from '../../../network/live-layers';

export interface PassGraph {
  network: Network;
  /** The layer writing tensor `id` (undefined: a network input). */
  producer(id: number): Layer | undefined;
  /** The distinct layers reading `id`. */
  readers(id: number): Layer[];
  /** Whether only `reader` reads `id` (and it is no network output). */
  only(id: number, reader: Layer): boolean;
}

export function passGraph(source: Network): PassGraph {
  const readers = tensorReaders(source.layers);
  const outputs = new Set(source.outputs.map((o) => o.tensor));
  return {
    network: source,
    producer: (id) => {
      const p = source.tensor(id).producer;
      return p >= 0 ? source.layers[p] : undefined;
    },
    readers: (id) => [...new Set(readers.get(id) ?? [])].map((j) => source.layers[j]!),
    only: (id, reader) => {
      const r = readers.get(id) ?? [];
      return !outputs.has(id) && r.length > 0 && r.every((j) => j === reader.index);
    },
  };
}
