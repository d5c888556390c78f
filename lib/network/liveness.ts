/** Which layers of a Network matter: those that reach an output (TensorRT prunes the rest). */
import type { Layer } from './layers';
import type { Network } from './network';

/** The layers one of whose outputs is needed by a network output, in network order. */
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
