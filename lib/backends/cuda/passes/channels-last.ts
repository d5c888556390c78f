/**
 * The channels-last layout pass of the cuda backend: 2-D fp16/bf16 convolutions (one group, or
 * depthwise) run on [N, H, W, C] tensors, which cuDNN's tensor-core kernels and the depthwise
 * kernel read without transposing
 * (ResNet-50's 53 convolutions, fp16, batch 32, H200, 2026-12-02: 2.85 ms as NCHW, 0.93 ms as
 * NHWC with the bias and ReLU fused; bench/gpu/conv_layouts.cc).
 *
 * Every rewritten tensor keeps its meaning: a channels-last convolution reads the
 * channels-last version of its input and makes the channels-last version of its output, and a
 * tensor is converted (a transpose, or a constant permuted at build) only where a reader needs
 * the other version. Layers whose result does not depend on the order of dims — pointwise
 * layers, pooling, concatenation, reductions over the spatial dims — follow their inputs into channels-last,
 * so the transposes stay at the edges of each convolution region (the network's input and
 * the global pool in a CNN). Pure: Network → Network, checked against the reference backend.
 */
import type { Layer, LayerParams, NetTensor, Network } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import { concat, permute } from '../../../kernels/shape';
import { Tensor } from '../../../ir/tensor';
import type { TrtDType } from '../../../network';

/** [N, C, H, W] → [N, H, W, C], and back. */
export const TO_LAST = [0, 2, 3, 1] as const;
export const TO_FIRST = [0, 3, 1, 2] as const;

export interface ChannelsLastOptions {
  /** The convolution dtypes that go channels-last (default fp16 and bf16, where cuDNN's NHWC kernels are faster). */
  dtypes?: readonly TrtDType[];
}

export interface ChannelsLastResult {
  network: Network;
  /** Convolutions made channels-last. */
  convolutions: number;
  /** Transposes the pass added (conversions that could not be a permuted constant). */
  transposes: number;
  /** Convolutions whose input was widened with zero channels ({@link PADDED_CHANNELS}). */
  padded: number;
}

const POINTWISE = new Set<LayerParams['kind']>(['elementwise', 'activation', 'unary', 'cast']);

/** Whether `layer` is a convolution this pass makes channels-last: one group, or depthwise (groups = C = K: the generated kernel, layers/depthwise.ts). */
function isCandidate(network: Network, layer: Layer, dtypes: readonly TrtDType[]): boolean {
  const p = layer.params;
  if (p.kind !== 'convolution' || p.channelsLast === true || p.kernelSize.length !== 2) return false;
  if (p.groups !== 1 && !(p.groups === network.tensor(layer.inputs[0]!).shape[1] && p.groups === p.nbOutputMaps)) return false;
  // Kernel and bias as static weights only (a tensor kernel would need a transpose per run).
  if (layer.inputs.length > 1 && layer.inputs.slice(1).some((id) => id !== null)) return false;
  // Asymmetric padding copies the input plane by plane (native/cudnn), which is NCHW only.
  if (p.prePadding.some((v, i) => v !== p.postPadding[i])) return false;
  const x = network.tensor(layer.inputs[0]!);
  return x.shape.length === 4 && x.shape[1]! > 0 && dtypes.includes(x.dtype);
}

/** `layer`'s reduce axes in channels-last order, when its output is the same either way; else null. */
function reduceAxesLast(p: Extract<LayerParams, { kind: 'reduce' }>): number[] | null {
  const axes = p.axes.map((a) => (a < 0 ? a + 4 : a));
  const mapped = axes.map((a) => TO_LAST.indexOf(a as 0 | 1 | 2 | 3));
  if (p.keepDims) return mapped;
  // Without keepDims the kept dims must come out in the same order: true when the channel is
  // reduced or every spatial dim is.
  const kept = TO_LAST.filter((_, i) => !mapped.includes(i));
  const original = [0, 1, 2, 3].filter((d) => !axes.includes(d));
  return kept.join() === original.join() ? mapped : null;
}

/** The channels-last network of `source` (the same network when no convolution qualifies). */
export function channelsLast(source: Network, options: ChannelsLastOptions = {}): ChannelsLastResult {
  const dtypes = options.dtypes ?? ['float16', 'bfloat16'];
  if (!source.layers.some((l) => isCandidate(source, l, dtypes))) return { network: source, convolutions: 0, transposes: 0, padded: 0 };
  // Each source tensor's version in its own layout (the rewrite's map) and channels-last (`last`).
  const rw = new NetworkRewrite(source, 'channels-last');
  const last = new Map<number, NetTensor>();
  const first = (id: number): NetTensor | undefined => (rw.has(id) ? rw.get(id)! : undefined);
  let transposes = 0;
  let convolutions = 0;
  let padded = 0;
  const constantOf = (id: number): Extract<LayerParams, { kind: 'constant' }> | null => {
    const producer = source.tensor(id).producer;
    const p = producer < 0 ? undefined : source.layers[producer]!.params;
    return p?.kind === 'constant' ? p : null;
  };
  const convert = (id: number, to: 'first' | 'last'): NetTensor => {
    const perm = to === 'last' ? TO_LAST : TO_FIRST;
    const done = to === 'last' ? last.get(id) : first(id);
    if (done !== undefined) return done;
    const name = `${source.tensor(id).name}/${to === 'last' ? 'nhwc' : 'nchw'}`;
    const constant = constantOf(id);
    let made: NetTensor;
    if (constant !== null && constant.weights.shape.length === 4) {
      made = rw.add({ kind: 'constant', weights: permute(constant.weights, perm) }, [], name)[0]!;
    } else {
      // The other version exists: every tensor is produced in one layout or the other first.
      const from = to === 'last' ? rw.get(id)! : last.get(id)!;
      made = rw.add({ kind: 'shuffle', firstTranspose: [...perm], zeroIsPlaceholder: false }, [from], name)[0]!;
      transposes++;
    }
    if (to === 'last') last.set(id, made);
    else rw.set(id, made);
    return made;
  };
  const mapped = (id: number | null): NetTensor | null => (id === null ? null : (first(id) ?? convert(id, 'first')));
  const rank4 = (id: number | null): boolean => id !== null && source.tensor(id).shape.length === 4;

  for (const layer of source.layers) {
    const p = layer.params;
    const dataInputs = layer.inputs.filter((id): id is number => id !== null);
    const anyLast = dataInputs.some((id) => last.has(id));
    if (isCandidate(source, layer, dtypes) && p.kind === 'convolution') {
      const x = source.tensor(layer.inputs[0]!);
      const channels = x.shape[1]!;
      let kernel = permute(p.kernel.reshape([p.nbOutputMaps, channels / p.groups, ...p.kernelSize]), TO_LAST);
      let input = convert(layer.inputs[0]!, 'last');
      if (p.groups === 1 && channels < PADDED_CHANNELS && x.shape.every((d) => d > 0)) {
        input = paddedChannels(rw, input, layer.name);
        kernel = padLastAxis(kernel, PADDED_CHANNELS);
        padded++;
      }
      const params: LayerParams = { ...p, kernel, channelsLast: true };
      last.set(layer.outputs[0]!, rw.add(params, [input], layer.name)[0]!);
      convolutions++;
      continue;
    }
    // The network's own layout changes (ConvNeXt permutes to [N, H, W, C] around its LayerNorm
    // and MLP, and back): a transpose to channels-last of a tensor that has a channels-last
    // version is that version; a transpose back to channels-first has its input as its
    // channels-last version (the channels-first one is made only where a reader needs it).
    const transpose = p.kind === 'shuffle' && p.reshape === undefined && p.secondTranspose === undefined && layer.inputs.length === 1 && rank4(layer.inputs[0]!) ? p.firstTranspose?.join() : undefined;
    if (transpose === TO_LAST.join() && last.has(layer.inputs[0]!)) {
      rw.set(layer.outputs[0]!, last.get(layer.inputs[0]!)!);
      continue;
    }
    if (transpose === TO_FIRST.join()) {
      last.set(layer.outputs[0]!, mapped(layer.inputs[0]!)!);
      continue;
    }
    // Layers that follow a channels-last input: pointwise (every input of rank 4), pooling over
    // two spatial dims, reductions whose output reads the same in either layout.
    let follow: LayerParams | null = null;
    if (anyLast && POINTWISE.has(p.kind) && layer.inputs.every(rank4) && layer.outputs.length === 1) follow = p;
    if (anyLast && p.kind === 'pooling' && p.window.length === 2 && p.channelsLast !== true) follow = { ...p, channelsLast: true };
    // SqueezeNet's fire modules concatenate channels: axis 1 becomes axis 3.
    if (anyLast && p.kind === 'concat' && layer.inputs.every(rank4)) follow = { ...p, axis: TO_LAST.indexOf((p.axis < 0 ? p.axis + 4 : p.axis) as 0 | 1 | 2 | 3) };
    let reducedFirst = false;
    if (anyLast && p.kind === 'reduce' && rank4(layer.inputs[0]!)) {
      const axes = reduceAxesLast(p);
      if (axes !== null) {
        follow = { ...p, axes };
        reducedFirst = !p.keepDims;
      }
    }
    if (follow !== null) {
      const [output] = rw.add(follow, layer.inputs.map((id) => (id === null ? null : convert(id, 'last'))), layer.name);
      if (reducedFirst) rw.set(layer.outputs[0]!, output!);
      else last.set(layer.outputs[0]!, output!);
      continue;
    }
    rw.add(p, layer.inputs.map(mapped), layer.name).forEach((t, i) => rw.set(layer.outputs[i]!, t));
  }
  return { network: rw.finish((id) => mapped(id)!), convolutions, transposes, padded };
}

/**
 * Channels-last inputs with fewer channels than this (an RGB image) are widened to it with
 * zero channels, and their kernels with zero weights: the same sums. Measured on the H200,
 * 2026-12-03 (bench/gpu/conv_layouts.cc, STEM_C): ResNet-50's stem, fp16 NHWC with bias and ReLU, takes
 * 85 µs at batch 32 over 3 channels and 64 µs over 4 (15.4 and 10.8 µs at batch 1); over 8 it
 * takes 203 µs, so 4 it is.
 */
export const PADDED_CHANNELS = 4;

/**
 * [N, H, W, c] → [N, H, W, PADDED_CHANNELS]: `t` then zero channels, a concat of a broadcast
 * zero. The input's cast computes in the concat block's place, reading through the transpose
 * (../plan/fuse-pointwise.ts, a producer behind a view), so the widened input costs one launch
 * more than the plain one: the zero channels' copy. Without that fusion (H200, 2026-12-03) the
 * cast, the transpose read and the padding took 41 µs at batch 32 instead of 21, and the
 * stem's gain was lost.
 */
function paddedChannels(rw: NetworkRewrite, t: NetTensor, name: string): NetTensor {
  const [n, h, w, c] = t.shape as [number, number, number, number];
  const zero = rw.add({ kind: 'constant', weights: Tensor.from(t.dtype, [1, 1, 1, 1], [0]) }, [], `${name}/zero`)[0]!;
  const zeros = rw.add({ kind: 'slice', start: [0, 0, 0, 0], size: [n, h, w, PADDED_CHANNELS - c], stride: [0, 0, 0, 0], mode: 'strict_bounds' }, [zero], `${name}/zero_channels`)[0]!;
  return rw.add({ kind: 'concat', axis: 3 }, [t, zeros], `${name}/padded_channels`)[0]!;
}

/** `kernel` [..., c] with zeros appended along its last axis up to `to`. */
const padLastAxis = (kernel: Tensor, to: number): Tensor => concat([kernel, new Tensor(kernel.dtype, [...kernel.shape.slice(0, -1), to - kernel.shape.at(-1)!])], -1);
