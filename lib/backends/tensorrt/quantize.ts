/**
 * Which quantize and dequantize layers TensorRT 10.16 takes whole (IQuantizeLayer,
 * IDequantizeLayer), which the replay spells out into primitive layers first
 * (lib/conversion/expand-layers.ts), and which neither can express. The rules are TensorRT's
 * own, from NvInfer.h (10.16) and NVIDIA's quantized-types guide:
 *
 * - symmetric only: a zero point, when given, is a build-time constant of zeros;
 * - the scale is a build-time constant (dynamic scales are IDynamicQuantizeLayer's, for
 *   FP4/MXFP8, which the IR has not), strictly positive, float32 or the float type of the data;
 * - quantized types INT8, FP8 and INT4 (UINT8 is an I/O type only); no scalar data;
 * - per-axis scales for weights only (data rooted at a constant layer), never activations;
 * - INT4 for weights only, with per-block scales only (blocks of 64 or 128 along one of the
 *   last two dimensions; scale and zero point of rank 2 at most, so rank-2 weights), and an
 *   even last dimension (two values a byte);
 * - blocked FP8 is MXFP8's (E8M0 scales from dynamic quantization): not with float scales.
 *
 * A form TensorRT does not take is spelled out where the pieces exist in TensorRT: INT8 and
 * UINT8 through float arithmetic and ICastLayer. FP8 and INT4 have no ICastLayer (TensorRT
 * reaches them only through its quantize and dequantize layers), so their other forms are an
 * `E_UNSUPPORTED_OP` naming the layer and the rule. Pure; the network is not changed.
 */
import { InternalError, UnsupportedOpError } from '../../errors';
import { readNumbers } from '../../kernels/access';
import type { Tensor } from '../../ir/tensor';
import type { QuantizeDescription } from '../../conversion/types';
import type { Layer, Network, TrtDType } from '../../network';

/** What the replay does with a quantize or dequantize layer. */
export type QuantizeForm = { take: 'whole' } | { take: 'spell'; why: string } | { take: 'neither'; why: string };

/** INT4 block sizes TensorRT has kernels for. */
const INT4_BLOCK_SIZES: readonly number[] = [64, 128];

const isQuantizeKind = (l: Layer): boolean => l.params.kind === 'quantize' || l.params.kind === 'dequantize';

/** The weights of the constant layer producing tensor `id`, or null when no constant layer produces it. */
function constantOf(network: Network, id: number | null | undefined): Tensor | null {
  if (id === null || id === undefined) return null;
  const p = network.layers[network.tensor(id).producer]?.params;
  return p !== undefined && p.kind === 'constant' ? p.weights : null;
}

/** Why TensorRT 10.16 does not take the quantize or dequantize `d` whole, or null when it does. */
export function quantizeRefusal(d: QuantizeDescription): string | null {
  const { qType, floatType, shape } = d;
  const rank = shape.length;
  if (qType !== 'int8' && qType !== 'float8e4m3fn' && qType !== 'int4') return `TensorRT quantizes to INT8, FP8 and INT4 only, not ${qType}`;
  if (rank === 0) return 'TensorRT takes no scalar data in a quantize or dequantize layer';
  if (d.scaleValues === null) return 'the scale is computed at run time; TensorRT takes a build-time constant scale only';
  if (d.scaleDType !== 'float32' && d.scaleDType !== floatType) return `a ${d.scaleDType} scale with ${floatType} data: TensorRT takes a float32 scale or one of the data's own type`;
  if (!d.scaleValues.every((v) => v > 0)) return 'a scale coefficient is not positive; TensorRT wants every one > 0';
  if (d.zeroPointValues !== undefined && (d.zeroPointValues === null || !d.zeroPointValues.every((v) => v === 0))) {
    return 'the zero point is not a constant of zeros; TensorRT quantizes symmetrically only';
  }
  // Weights: a constant, or (a dequantize) quantized whole from one.
  const weights = d.constantData || (d.quantizedFrom !== undefined && quantizeRefusal(d.quantizedFrom) === null);
  const blocked = d.blockSize !== undefined;
  const perAxis = !blocked && d.scaleRank === 1;
  if (perAxis && !weights) return 'per-axis scales on a run-time tensor: TensorRT quantizes activations per tensor only';
  if (qType === 'int4') {
    if (!weights) return 'TensorRT has INT4 for weights only (data made by a constant layer)';
    if (!blocked) return 'TensorRT quantizes INT4 with per-block scales only';
    const last = shape[rank - 1]!;
    if (last < 0 || last % 2 !== 0) return `INT4 needs an even last dimension (two values a byte), not ${last}`;
  }
  if (blocked) {
    const axis = d.axis < 0 ? d.axis + rank : d.axis;
    if (qType !== 'int4') return `blocked ${qType} quantization: TensorRT blocks INT4 with float scales (FP8 blocks are MXFP8's, from dynamic quantization)`;
    if (rank !== 2) return `blocked quantization of rank-${rank} data: TensorRT takes a scale of rank 2 at most, so rank-2 weights`;
    if (!INT4_BLOCK_SIZES.includes(d.blockSize!)) return `INT4 blocks of ${d.blockSize}: TensorRT takes blocks of ${INT4_BLOCK_SIZES.join(' or ')}`;
    if (shape[axis]! < 0) return 'a blocked axis of run-time size';
  }
  return null;
}

/**
 * Why no replay of a quantize or dequantize of `d` exists, or null: TensorRT does not take it
 * whole and the form cannot be spelled out (FP8 and INT4 have no ICastLayer; INT8 and UINT8
 * forms are spelled out in float arithmetic). What the tensorrt backend gives converter
 * selection (Backend.quantizeRefusal), so such nodes run in fallback segments.
 */
export function unbuildableQuantize(d: QuantizeDescription): string | null {
  const why = quantizeRefusal(d);
  return why === null || d.qType === 'int8' || d.qType === 'uint8' ? null : why;
}

/** Layer `layer` (a quantize or dequantize) of `network` as the rules see it. */
function describeLayer(network: Network, layer: Layer): QuantizeDescription {
  const p = layer.params as Extract<Layer['params'], { kind: 'quantize' | 'dequantize' }>;
  const quantize = p.kind === 'quantize';
  const data = network.tensor(layer.inputs[0]!);
  const scale = network.tensor(layer.inputs[1]!);
  const scaleValues = constantOf(network, layer.inputs[1]);
  const zeroPoint = layer.inputs[2] ?? null;
  const zeros = zeroPoint === null ? undefined : constantOf(network, zeroPoint);
  const source = network.layers[data.producer];
  const fromConstant = !quantize && source !== undefined && source.params.kind === 'quantize' && constantOf(network, source.inputs[0]) !== null;
  return {
    kind: p.kind,
    qType: quantize ? p.to : data.dtype,
    floatType: quantize ? data.dtype : p.to,
    shape: data.shape,
    scaleDType: scale.dtype,
    scaleRank: scale.shape.length,
    scaleValues: scaleValues === null ? null : Array.from(readNumbers(scaleValues)),
    ...(zeros === undefined ? {} : { zeroPointValues: zeros === null ? null : Array.from(readNumbers(zeros)) }),
    constantData: source !== undefined && source.params.kind === 'constant',
    ...(fromConstant ? { quantizedFrom: describeLayer(network, source) } : {}),
    axis: p.axis,
    ...(p.blockSize === undefined ? {} : { blockSize: p.blockSize }),
  };
}

/** Which forms of quantize and dequantize layers `network` holds, by layer (the other layers are absent). */
export function quantizeForms(network: Network): Map<Layer, QuantizeForm> {
  const forms = new Map<Layer, QuantizeForm>();
  for (const layer of network.layers) {
    if (!isQuantizeKind(layer)) continue;
    const why = quantizeRefusal(describeLayer(network, layer));
    if (why === null) {
      forms.set(layer, { take: 'whole' });
      continue;
    }
    const p = layer.params as { kind: 'quantize' | 'dequantize'; to: TrtDType };
    const qType = p.kind === 'quantize' ? p.to : network.tensor(layer.inputs[0]!).dtype;
    forms.set(
      layer,
      qType === 'int8' || qType === 'uint8'
        ? { take: 'spell', why }
        : { take: 'neither', why: `${why}; spelled out, it would need casts to or from ${qType}, which TensorRT's cast layer does not have` },
    );
  }
  return forms;
}

/** The form of one quantize or dequantize layer of `network` ({@link quantizeForms}). */
export function quantizeForm(network: Network, layer: Layer): QuantizeForm {
  const form = quantizeForms(network).get(layer);
  if (form === undefined) throw new InternalError(`layer "${layer.name}" (${layer.params.kind}) is no quantize or dequantize layer`);
  return form;
}

/** The typed error of a layer the tensorrt backend cannot build, naming it and why. */
export function cannotBuild(network: Network, layer: Layer, why: string): UnsupportedOpError {
  return new UnsupportedOpError(`the tensorrt backend cannot build layer "${layer.name}" (${layer.params.kind}) of network "${network.name}": ${why}`, {
    details: { layer: layer.name, kind: layer.params.kind },
  });
}

/**
 * Refuses, before anything is spelled out, what no replay of `network` can express: a quantize
 * or dequantize form of {@link quantizeForms}'s `neither`, and an INT4 network input or output
 * (TensorRT packs INT4 I/O two values a byte; this library's tensors hold one a byte).
 */
export function refuseUnbuildable(network: Network, forms: ReadonlyMap<Layer, QuantizeForm> = quantizeForms(network)): void {
  for (const [layer, form] of forms) if (form.take === 'neither') throw cannotBuild(network, layer, form.why);
  const io = [...network.inputs.map((i) => ['input', i] as const), ...network.outputs.map((o) => ['output', o] as const)];
  for (const [role, { tensor, name }] of io) {
    if (network.tensor(tensor).dtype !== 'int4') continue;
    throw new UnsupportedOpError(`the tensorrt backend cannot build network "${network.name}": its ${role} "${name}" is int4, which TensorRT packs two values a byte at its I/O`, {
      details: { tensor: name },
    });
  }
}
