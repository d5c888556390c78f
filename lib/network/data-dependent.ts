/**
 * Sizes only a run can tell inside a Network: a nonzero layer's count of nonzero elements, an
 * nms layer's count of selected boxes, and every run-time dim computed from one. Backends that
 * plan their buffers before a run (cuda), or that cannot yet hand such a tensor back from an
 * engine (tensorrt: it would need an IOutputAllocator), refuse what this finds, naming the
 * nonzero or nms layer it comes from.
 */
import type { Layer } from './layers';
import type { Network } from './network';

/**
 * The tensors of `network` whose size depends on tensor data: a nonzero or nms layer's output,
 * and every tensor computed (through any number of layers, shape tensors included) from one
 * that has a run-time (-1) dim. Each maps to the first nonzero or nms layer it depends on.
 */
export function dataDependentTensors(network: Network): Map<number, Layer> {
  const dependsOn = new Map<number, Layer>();
  const sized = new Map<number, Layer>();
  for (const layer of network.layers) {
    const from = layer.params.kind === 'nonzero' || layer.params.kind === 'nms' || layer.params.kind === 'unique' ? layer : layer.inputs.map((id) => (id === null ? undefined : dependsOn.get(id))).find((l) => l !== undefined);
    if (from === undefined) continue;
    for (const id of layer.outputs) {
      dependsOn.set(id, from);
      if (network.tensor(id).shape.some((d) => d < 0)) sized.set(id, from);
    }
  }
  return sized;
}
