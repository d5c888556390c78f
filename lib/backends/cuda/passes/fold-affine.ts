/**
 * Folds per-channel affine layers into the convolution before them: convolution → prod by a
 * constant [1, K, 1, ...] → sum with a constant [1, K, 1, ...] (what an inference BatchNorm and
 * a separate bias add become, lib/conversion/impl/norm.ts) is one convolution with its kernel
 * scaled per output channel and a bias. TensorRT fuses this itself; the cuda backend otherwise
 * runs each of those layers as a kernel launch over the whole activation (ResNet-50: 106 of its
 * 229 steps). Applied at build, so the engine carries the folded network.
 *
 * Folding is exact up to rounding: kernel[k] * s[k] and (bias[k] * s[k] + t[k]) are computed in
 * float64 and rounded once to float32, where the unfolded network rounds after the convolution
 * and after each layer (the difference is within float32's rounding of those products).
 */
import { Tensor } from '../../../ir/tensor';
import type { Network } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import type { Layer, LayerParams } from '../../../network/layers';
import { tensorReaders } from '../../../network/live-layers';

/** The folded network and how many affine layers went into convolutions (their constants are dropped too). */
export interface FoldResult {
  network: Network;
  foldedLayers: number;
}

/** Per-channel values of a constant shaped [1, K, 1, ...] (or all ones: one value for every channel) for `channels` channels; else null. */
function perChannelConstant(network: Network, tensorId: number, rank: number, channels: number): Float64Array | null {
  const t = network.tensor(tensorId);
  if (t.producer < 0) return null;
  const producer = network.layers[t.producer]!;
  if (producer.params.kind !== 'constant') return null;
  const w = producer.params.weights;
  if (w.dtype !== 'float32' || w.shape.length !== rank) return null;
  if (!w.shape.every((d, i) => d === 1 || (i === 1 && d === channels))) return null;
  const data = w.data as Float32Array;
  return Float64Array.from({ length: channels }, (_, k) => data[data.length === 1 ? 0 : k]!);
}

interface Fold {
  conv: number;
  /** The affine layers folded into the convolution, in order, and their per-channel (scale, shift). */
  absorbed: number[];
  scale: Float64Array;
  shift: Float64Array;
  /** The tensor the folded convolution now produces (the last absorbed layer's output). */
  output: number;
}

/** The affine chain after convolution layer `conv`, or null. Pure. */
function findFold(network: Network, conv: Layer, readers: ReadonlyMap<number, number[]>, isOutput: ReadonlySet<number>): Fold | null {
  const p = conv.params;
  if (p.kind !== 'convolution' || conv.inputs.length !== 1 || p.channelsLast === true || p.activation !== undefined || p.kernel.dtype !== 'float32' || (p.bias !== null && p.bias.dtype !== 'float32')) return null;
  const channels = p.nbOutputMaps;
  let tensor = conv.outputs[0]!;
  const rank = network.tensor(tensor).shape.length;
  if (network.tensor(tensor).dtype !== 'float32') return null;
  const scale = new Float64Array(channels).fill(1);
  const shift = new Float64Array(channels);
  const absorbed: number[] = [];
  for (;;) {
    const r = readers.get(tensor) ?? [];
    if (isOutput.has(tensor) || r.length !== 1) break;
    const next = network.layers[r[0]!]!;
    if (next.params.kind !== 'elementwise' || (next.params.op !== 'prod' && next.params.op !== 'sum') || next.inputs.length !== 2) break;
    const other = next.inputs[0] === tensor ? next.inputs[1] : next.inputs[0];
    if (other === null || other === undefined || other === tensor) break;
    const values = perChannelConstant(network, other, rank, channels);
    // The constant must not widen the output (a [1, K, 1, 1] constant broadcasts into the convolution's shape).
    if (values === null || network.tensor(next.outputs[0]!).shape.join() !== network.tensor(tensor).shape.join()) break;
    for (let k = 0; k < channels; k++) {
      if (next.params.op === 'prod') {
        scale[k]! *= values[k]!;
        shift[k]! *= values[k]!;
      } else {
        shift[k]! += values[k]!;
      }
    }
    absorbed.push(next.index);
    tensor = next.outputs[0]!;
  }
  return absorbed.length === 0 ? null : { conv: conv.index, absorbed, scale, shift, output: tensor };
}

/** The convolution parameters with `fold`'s scale and shift applied (float64, rounded once). */
function foldedParams(params: Extract<LayerParams, { kind: 'convolution' }>, fold: Fold): LayerParams {
  const k = params.kernel;
  const perChannel = k.size / params.nbOutputMaps;
  const src = k.data as Float32Array;
  const kernel = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) kernel[i] = src[i]! * fold.scale[Math.floor(i / perChannel)]!;
  const oldBias = params.bias?.data as Float32Array | undefined;
  const bias = Float32Array.from({ length: params.nbOutputMaps }, (_, c) => (oldBias ? oldBias[c]! : 0) * fold.scale[c]! + fold.shift[c]!);
  return { ...params, kernel: new Tensor('float32', k.shape, kernel), bias: new Tensor('float32', [params.nbOutputMaps], bias) };
}

/** `network` with every foldable affine chain folded into its convolution; the same network when there is none. Pure. */
export function foldConvolutionAffine(network: Network): FoldResult {
  const readers = tensorReaders(network.layers);
  const isOutput = new Set(network.outputs.map((o) => o.tensor));
  const folds = new Map<number, Fold>();
  const dropped = new Set<number>();
  for (const layer of network.layers) {
    const fold = findFold(network, layer, readers, isOutput);
    if (fold === null) continue;
    folds.set(layer.index, fold);
    for (const i of fold.absorbed) dropped.add(i);
  }
  if (folds.size === 0) return { network, foldedLayers: 0 };
  // Constants only the absorbed layers read are dropped with them.
  const liveReads = new Map<number, number>();
  for (const layer of network.layers) if (!dropped.has(layer.index)) for (const t of layer.inputs) if (t !== null) liveReads.set(t, (liveReads.get(t) ?? 0) + 1);
  for (const layer of network.layers) {
    if (layer.params.kind === 'constant' && !isOutput.has(layer.outputs[0]!) && !liveReads.has(layer.outputs[0]!) && readers.has(layer.outputs[0]!)) dropped.add(layer.index);
  }
  let foldedLayers = 0;
  for (const f of folds.values()) foldedLayers += f.absorbed.length;
  return { network: rebuild(network, folds, dropped), foldedLayers };
}

/** A copy of `network` with `dropped` layers left out and folded convolutions producing their chain's output. */
function rebuild(network: Network, folds: ReadonlyMap<number, Fold>, dropped: ReadonlySet<number>): Network {
  const rw = new NetworkRewrite(network, 'fold-affine');
  for (const layer of network.layers) {
    if (dropped.has(layer.index)) continue;
    const fold = folds.get(layer.index);
    if (fold === undefined || layer.params.kind !== 'convolution') {
      rw.copy(layer);
      continue;
    }
    rw.set(fold.output, rw.add(foldedParams(layer.params, fold), layer.inputs.map((id) => rw.get(id)), layer.name)[0]!);
  }
  return rw.finish();
}
