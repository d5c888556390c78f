/**
 * Moves a convolution's bias into the pointwise layer that reads its output: convolution(bias)
 * → relu becomes convolution → sum with a constant [1, K, 1, ...] → relu, and pointwise fusion
 * (fuse-pointwise.ts) then runs the bias add and the relu as one kernel. The convolution step
 * otherwise adds its bias with cudnnAddTensor, a pass of its own over the whole activation
 * (read and write) before the reader's pass: ResNet-50 has 53 of them, each as costly as its
 * ReLU. A bottleneck's last convolution → residual sum → relu fuses into one kernel likewise.
 *
 * Exact: cuDNN rounds the convolution to the output dtype before adding the bias in float and
 * rounding again; the sum layer does the same (the fused kernel rounds its intermediates as
 * separate kernels would). Runs after BatchNorm folding (which makes most biases) and before the
 * precision pass, which converts the bias constant with the other weights.
 */
import { InternalError } from '../../errors';
import { Network, type NetTensor } from '../../network';
import type { Layer, LayerParams } from '../../network/layers';
import { tensorReaders } from '../../network/live-layers';
import { POINTWISE_KINDS } from './fuse-pointwise';

export interface BiasEpilogueResult {
  network: Network;
  /** How many convolutions gave their bias to their reader. */
  moved: number;
}

/** Whether `conv`'s bias can move into its reader: one pointwise reader over the same box, the output not a network output. Pure. */
function movable(network: Network, conv: Layer, readers: ReadonlyMap<number, number[]>, isOutput: ReadonlySet<number>): boolean {
  const p = conv.params;
  if (p.kind !== 'convolution' || p.bias === null || conv.outputs.length !== 1) return false;
  const out = conv.outputs[0]!;
  const r = new Set(readers.get(out) ?? []);
  if (isOutput.has(out) || r.size !== 1) return false;
  const reader = network.layers[[...r][0]!]!;
  if (!POINTWISE_KINDS.has(reader.params.kind) || reader.outputs.length !== 1) return false;
  // The reader must not broadcast the activation wider (fusion needs one box).
  return network.tensor(reader.outputs[0]!).shape.join() === network.tensor(out).shape.join();
}

/** `network` with the bias of every {@link movable} convolution moved into a sum layer; the same network when there is none. Pure. */
export function moveConvolutionBiases(network: Network): BiasEpilogueResult {
  const readers = tensorReaders(network.layers);
  const isOutput = new Set(network.outputs.map((o) => o.tensor));
  const chosen = new Set(network.layers.filter((l) => movable(network, l, readers, isOutput)).map((l) => l.index));
  if (chosen.size === 0) return { network, moved: 0 };
  const out = new Network(network.name);
  const map = new Map<number, NetTensor>();
  for (const input of network.inputs) {
    const t = network.tensor(input.tensor);
    map.set(input.tensor, out.addInput(input.name, t.dtype, t.shape, input.profiles));
  }
  const mapped = (id: number | null): NetTensor | null => {
    if (id === null) return null;
    const t = map.get(id);
    if (t === undefined) throw new InternalError(`bias-epilogue: tensor ${id} of network ${network.name} is read before it is produced`);
    return t;
  };
  for (const layer of network.layers) {
    const inputs = layer.inputs.map(mapped);
    if (!chosen.has(layer.index) || layer.params.kind !== 'convolution') {
      const outputs = out.add(layer.params, inputs, layer.name);
      layer.outputs.forEach((id, i) => map.set(id, outputs[i]!));
      continue;
    }
    const { bias, ...rest } = layer.params;
    const unbiased = out.add1({ ...rest, bias: null } as LayerParams, inputs, layer.name);
    const rank = network.tensor(layer.outputs[0]!).shape.length;
    const shape = [1, bias!.size, ...new Array<number>(Math.max(0, rank - 2)).fill(1)];
    const constant = out.add1({ kind: 'constant', weights: bias!.reshape(shape) }, [], `${layer.name}/bias`);
    map.set(layer.outputs[0]!, out.add1({ kind: 'elementwise', op: 'sum' }, [unbiased, constant], `${layer.name}/bias_add`));
  }
  for (const o of network.outputs) out.markOutput(mapped(o.tensor)!, o.name);
  return { network: out, moved: chosen.size };
}
