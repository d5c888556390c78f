/**
 * Big layers spelled out as primitive layers, for a backend that has no kernel for them: the
 * one place where an `attention` layer becomes matmul/scale/mask/softmax/matmul and an RMS
 * normalization becomes reduce/sqrt/divide/scale, through the same helpers the converters
 * would use (lib/conversion/impl/attention.ts, impl/norm.ts). Converters emit the big layers
 * whole; each backend calls this at build for what it cannot run (the onnxruntime and
 * tensorrt backends for both kinds, the cuda backend for the attentions its kernel does not
 * take). Pure: Network → Network.
 */
import { readNumbers } from '../kernels/access';
import type { Layer, Network } from '../network';
import { NetworkRewrite } from '../network/rewrite';
import { ConversionContext } from './context';
import { spellOutAttention } from './impl/attention';
import { spellOutRmsNorm } from './impl/norm';

export interface ExpandResult {
  network: Network;
  /** Attention layers spelled out. */
  attentions: number;
  /** RMS normalizations spelled out. */
  rmsNorms: number;
}

/** Whether `layer` is a big layer this module spells out: a plain attention, or an RMS normalization. */
export const isBigLayer = (layer: Layer): boolean =>
  (layer.params.kind === 'attention' && layer.params.strided === undefined) || (layer.params.kind === 'normalization' && layer.params.rms === true);

/** Whether the tensor `id` of `network` is made by a constant layer holding only zeros. */
function isZeroConstant(network: Network, id: number | null): boolean {
  if (id === null) return false;
  const layer = network.layers[network.tensor(id).producer];
  return layer !== undefined && layer.params.kind === 'constant' && readNumbers(layer.params.weights).every((v) => v === 0);
}

/** `source` with every big layer that `which` selects (all by default) spelled out. */
export function expandLayers(source: Network, which: (layer: Layer) => boolean = () => true): ExpandResult {
  const chosen = source.layers.filter((l) => isBigLayer(l) && which(l));
  if (chosen.length === 0) return { network: source, attentions: 0, rmsNorms: 0 };
  const expand = new Set(chosen);
  const rw = new NetworkRewrite(source, 'expand-layers');
  const ctx = new ConversionContext(rw.out);
  let attentions = 0;
  let rmsNorms = 0;
  for (const layer of source.layers) {
    const p = layer.params;
    if (!expand.has(layer)) {
      rw.copy(layer);
      continue;
    }
    ctx.layerName = layer.name;
    const inputs = layer.inputs.map((id) => rw.get(id));
    let out;
    if (p.kind === 'attention') {
      out = spellOutAttention(ctx, inputs[0]!, inputs[1]!, inputs[2]!, { mask: inputs[3] ?? null, causal: p.causal, scale: p.scale });
      attentions++;
    } else if (p.kind === 'normalization') {
      out = spellOutRmsNorm(ctx, inputs[0]!, p.axes, inputs[1]!, inputs[2]!, p.epsilon, isZeroConstant(source, layer.inputs[2] ?? null));
      rmsNorms++;
    } else {
      rw.copy(layer);
      continue;
    }
    rw.set(layer.outputs[0]!, out);
  }
  return { network: rw.finish(), attentions, rmsNorms };
}
