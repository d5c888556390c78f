/** Which layers of a Network run (those that reach an output: TensorRT prunes the rest), and who reads what. */
import type { Layer } from './layers';
import type { Network } from './network';

/** The layers that reach an output, in network order. */
export function liveLayers(network: Network): Layer[] {
  const needed = new Set(network.outputs.map((o) => o.tensor));
  const live = new Array<boolean>(network.layers.length).fill(false);
  for (let i = network.layers.length - 1; i >= 0; i--) {
    const layer = network.layers[i]!;
    if (!layer.outputs.some((id) => needed.has(id))) continue;
    live[i] = true;
    for (const id of layer.inputs) if (id !== null) needed.add(id);
  }
  return network.layers.filter((_, i) => live[i]);
}

/** For each tensor id, the positions in `layers` of the layers that read it (once per input slot). */
export function tensorReaders(layers: readonly Layer[]): Map<number, number[]> {
  const readers = new Map<number, number[]>();
  layers.forEach((layer, i) => {
    for (const id of layer.inputs) if (id !== null) (readers.get(id) ?? readers.set(id, []).get(id)!).push(i);
  });
  return readers;
}
