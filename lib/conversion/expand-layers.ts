/**
 * Big layers spelled out as primitive layers, for a backend that has no kernel for them: the
 * one place where an `attention` layer becomes matmul/scale/mask/softmax/matmul, an RMS
 * normalization becomes reduce/sqrt/divide/scale, and a quantize or dequantize layer becomes
 * float arithmetic and casts, through the same helpers the converters would use
 * (lib/conversion/impl/attention.ts, impl/norm.ts, impl/quantize.ts). Converters emit the big
 * layers whole; each backend calls this at build for what it cannot run (the onnxruntime
 * backend for attention and RMS normalization, the cuda backend for quantization and the
 * attentions its kernel does not take). A quantize or dequantize layer whose inputs are all
 * constants becomes the constant it computes instead (quantized weights, decompressed at
 * build); one of float8e4m3fn or int4 that is not constant cannot be spelled out, as no other
 * layer holds those types: UnsupportedOpError naming the layer. Pure: Network → Network.
 */
import type { Tensor } from '../ir/tensor';
import { readNumbers } from '../kernels/access';
import type { Layer, NetTensor, Network } from '../network';
import { executeLayer } from '../network/evaluate';
import { NetworkRewrite } from '../network/rewrite';
import { ConversionContext } from './context';
import { spellOutAttention } from './impl/attention';
import { spellOutRmsNorm } from './impl/norm';
import { spellOutDequantize, spellOutQuantize } from './impl/quantize';

export interface ExpandResult {
  network: Network;
  /** Attention layers spelled out. */
  attentions: number;
  /** RMS normalizations spelled out. */
  rmsNorms: number;
  /** Quantize and dequantize layers spelled out. */
  quantizations: number;
  /** Quantize and dequantize layers of constants computed into constants. */
  foldedQuantizations: number;
}

/** Whether `layer` is a quantize or dequantize layer. */
export const isQuantizationLayer = (layer: Layer): boolean => layer.params.kind === 'quantize' || layer.params.kind === 'dequantize';

/** Whether `layer` is a big layer this module spells out: a plain attention, an RMS normalization, a quantize or a dequantize. */
export const isBigLayer = (layer: Layer): boolean =>
  (layer.params.kind === 'attention' && layer.params.strided === undefined) || (layer.params.kind === 'normalization' && layer.params.rms === true) || isQuantizationLayer(layer);

/** The weights of the constant layer that makes `t`, if a constant layer does. */
function constantWeights(network: Network, t: NetTensor | null): Tensor | undefined {
  if (t === null) return undefined;
  const layer = network.layers[t.producer];
  return layer !== undefined && layer.params.kind === 'constant' ? layer.params.weights : undefined;
}

/** Whether the tensor `id` of `network` is made by a constant layer holding only zeros. */
function isZeroConstant(network: Network, id: number | null): boolean {
  if (id === null) return false;
  const layer = network.layers[network.tensor(id).producer];
  return layer !== undefined && layer.params.kind === 'constant' && readNumbers(layer.params.weights).every((v) => v === 0);
}

/** `source` with every big layer that `which` selects (all by default) spelled out. */
export function expandLayers(source: Network, which: (layer: Layer) => boolean = () => true): ExpandResult {
  const chosen = source.layers.filter((l) => isBigLayer(l) && which(l));
  if (chosen.length === 0) return { network: source, attentions: 0, rmsNorms: 0, quantizations: 0, foldedQuantizations: 0 };
  const expand = new Set(chosen);
  const rw = new NetworkRewrite(source, 'expand-layers');
  const ctx = new ConversionContext(rw.out);
  let attentions = 0;
  let rmsNorms = 0;
  let quantizations = 0;
  let foldedQuantizations = 0;
  for (const layer of source.layers) {
    const p = layer.params;
    if (!expand.has(layer)) {
      rw.copy(layer);
      continue;
    }
    ctx.layerName = layer.name;
    const inputs = layer.inputs.map((id) => rw.get(id));
    let out;
    if (p.kind === 'quantize' || p.kind === 'dequantize') {
      const weights = inputs.map((t) => constantWeights(rw.out, t));
      const result = source.tensor(layer.outputs[0]!).dtype;
      // TensorRT has no uint8 constants (the converters make them from int32 through a cast).
      if (weights.every((w, i) => w !== undefined || inputs[i] === null) && result !== 'uint8') {
        const [value] = executeLayer(layer, weights.map((w) => w ?? null));
        out = rw.out.add1({ kind: 'constant', weights: value! }, [], layer.name);
        foldedQuantizations++;
      } else {
        const layout = { axis: p.axis, blockSize: p.blockSize ?? 0 };
        out =
          p.kind === 'quantize'
            ? spellOutQuantize(ctx, inputs[0]!, inputs[1]!, inputs[2] ?? null, p.to, layout)
            : spellOutDequantize(ctx, inputs[0]!, inputs[1]!, inputs[2] ?? null, p.to, layout);
        quantizations++;
      }
    } else if (p.kind === 'attention') {
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
  return { network: rw.finish(), attentions, rmsNorms, quantizations, foldedQuantizations };
}
