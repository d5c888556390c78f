/**
 * The convolution epilogue pass of the cuda backend: a convolution followed
 * by a ReLU, or by a residual sum and then a ReLU (a ResNet block's end), becomes one
 * convolution layer with `activation: 'relu'` and the residual as its input 3, which cuDNN runs
 * as one call (cudnnConvolutionBiasActivationForward: y = relu(conv(x) + bias + z)). That drops
 * the separate bias pass and a pointwise kernel over the whole activation per convolution.
 *
 * The fused layer takes the place of the last layer it absorbs, so the residual (which a
 * network may compute after the convolution, as torchvision's downsample branch) is ready when
 * it runs. Only a ReLU ends a fusion: cuDNN's identity activation is limited to one algorithm.
 * Pure: Network → Network, checked against the reference backend.
 */
import type { Layer, Network } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import { tensorReaders } from '../../../network/live-layers';

export interface EpilogueResult {
  network: Network;
  /** Convolutions that took a ReLU (with a residual: `residuals` of them). */
  fused: number;
  residuals: number;
}

interface Fusion {
  conv: Layer;
  /** The residual sum, when there is one, and the tensor it adds. */
  sum?: Layer;
  residual?: number;
  relu: Layer;
}

/** The single reader of `tensor`, when it has exactly one and is not a network output. */
function onlyReader(network: Network, readers: ReadonlyMap<number, number[]>, outputs: ReadonlySet<number>, tensor: number): Layer | null {
  const r = readers.get(tensor) ?? [];
  return r.length === 1 && !outputs.has(tensor) ? network.layers[r[0]!]! : null;
}

const isRelu = (layer: Layer | null): boolean => layer?.params.kind === 'activation' && layer.params.type === 'relu';

function findFusion(network: Network, conv: Layer, readers: ReadonlyMap<number, number[]>, outputs: ReadonlySet<number>): Fusion | null {
  const p = conv.params;
  if (p.kind !== 'convolution' || p.activation !== undefined || conv.inputs[3] !== undefined) return null;
  const y = conv.outputs[0]!;
  const next = onlyReader(network, readers, outputs, y);
  if (next !== null && isRelu(next)) return { conv, relu: next };
  if (next?.params.kind !== 'elementwise' || next.params.op !== 'sum') return null;
  const [a, b] = next.inputs;
  const residual = a === y ? b : a;
  if (residual === null || residual === undefined || residual === y) return null;
  // The residual must be exactly the output's shape (no broadcast).
  const shape = network.tensor(y).shape.join();
  if (network.tensor(residual).shape.join() !== shape || network.tensor(next.outputs[0]!).shape.join() !== shape) return null;
  const relu = onlyReader(network, readers, outputs, next.outputs[0]!);
  return relu !== null && isRelu(relu) ? { conv, sum: next, residual, relu } : null;
}

/** `source` with every convolution → [residual sum →] ReLU chain fused; the same network when there is none. */
export function fuseConvEpilogues(source: Network): EpilogueResult {
  const readers = tensorReaders(source.layers);
  const outputs = new Set(source.outputs.map((o) => o.tensor));
  const byLast = new Map<number, Fusion>();
  const absorbed = new Set<number>();
  for (const layer of source.layers) {
    const f = findFusion(source, layer, readers, outputs);
    // A sum of two convolutions fuses into the first; the second stays as it is.
    if (f === null || [f.conv, f.sum, f.relu].some((l) => l !== undefined && absorbed.has(l.index))) continue;
    byLast.set(f.relu.index, f);
    for (const l of [f.conv, f.sum, f.relu]) if (l !== undefined) absorbed.add(l.index);
  }
  if (byLast.size === 0) return { network: source, fused: 0, residuals: 0 };
  const rw = new NetworkRewrite(source, 'conv-epilogue');
  let residuals = 0;
  for (const layer of source.layers) {
    const f = byLast.get(layer.index);
    const params = f?.conv.params;
    if (f !== undefined && params?.kind === 'convolution') {
      const c = f.conv;
      const inputs = [rw.get(c.inputs[0]), rw.get(c.inputs[1]), rw.get(c.inputs[2]), rw.get(f.residual)];
      while (inputs.length > 1 && inputs[inputs.length - 1] === null) inputs.pop();
      const name = [c.name, f.sum?.name, f.relu.name].filter((n) => n !== undefined).join('+');
      rw.set(f.relu.outputs[0]!, rw.add({ ...params, activation: 'relu' }, inputs, name)[0]!);
      if (f.residual !== undefined) residuals++;
    } else if (!absorbed.has(layer.index)) {
      rw.copy(layer);
    }
  }
  return { network: rw.finish(), fused: byLast.size, residuals };
}
