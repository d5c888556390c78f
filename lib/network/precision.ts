/**
 * Reduced precision as a Network rewrite: what TensorRT's FP16/BF16 builder flags do to a
 * weakly typed network, done once at build so that the engine stores (and a loaded program
 * runs) exactly the rewritten network. It lives with the Network, not in one backend: it
 * reads and writes nothing but layers, and the TensorRT backend, which replays a strongly
 * typed network where those flags do nothing, can apply it the same way.
 *
 * The rule (docs/cuda-backend.md "Precision"):
 * - Network inputs and outputs keep their declared dtypes: cast layers at the boundary.
 * - Every float32 tensor computed from the network's inputs becomes float16 (bfloat16 when
 *   only bf16 is allowed; fp16 wins when both are: it has three more mantissa bits, and the
 *   PyTorch runs we compare with are fp16). Kernels load 16-bit values into fp32, compute and
 *   accumulate in fp32 and round once on store, so reductions, softmax and normalization
 *   layers are accurate in fp16 storage (as PyTorch's fp16 kernels are).
 * - Kept float32 (layers "kept fp32" in the report):
 *   - constant arithmetic (no network input upstream, e.g. exp of a constant): computed in
 *     fp32, as TensorRT folds it at build, and cast for the fp16 layers that read it. Data only
 *     moved out of constants (a transposed, reshaped, sliced or gathered weight) is emitted
 *     over the converted weights instead, so no weight is cast per run or stored twice;
 *   - float values made from integers (a cast from int/bool, a fill: positions, sizes, masks),
 *     which fp16 does not hold exactly past 2048;
 *   - large dynamic range: an elementwise pow of an activation (x², x³ overflow fp16 at
 *     |x| > 256 and 40), and a square x·x that a reduce sums (RMSNorm, a decomposed
 *     LayerNorm's variance). These seed fp32 regions that grow through every layer whose
 *     float inputs are all fp32-region or constant (mean, + eps, sqrt, 1/·). A product or
 *     quotient of an activation and a region value (x · rsqrt(var + eps), d / sqrt(var + eps))
 *     is computed in fp32 too, so a tiny variance never becomes an fp16 overflow or a
 *     subnormal divisor, and its result goes on in fp16.
 * - Float32 weights (constants, convolution kernels and biases) are converted at build,
 *   rounding to nearest even as numpy's and PyTorch's `.half()` do (subnormals included, ±inf
 *   and NaN kept). A finite value beyond the target's range (fp16: |x| ≥ 65520, which numpy
 *   rounds to inf) is clamped to ±65504 (bf16: ±3.3895e38) and counted, as TensorRT warns and
 *   clamps.
 * - Integer, bool and shape tensors are never touched.
 * - A strongly typed network keeps its dtypes: one asked for as such, and one that already
 *   holds float16/bfloat16 tensors (its author chose its precisions; a float32 island there,
 *   such as Llama's RMSNorm `.float()` in a half model, is deliberate).
 */
import { InvalidArgumentError } from '../errors';
import { fromBFloat16Bits, fromFloat16Bits, toBFloat16Bits, toFloat16Bits } from '../ir/half';
import { Tensor } from '../ir/tensor';
import type { Layer, LayerParams, TrtDType } from './layers';
import { liveLayers } from './live-layers';
import { Network, type NetTensor } from './network';

/** The precisions a build may allow (lib/engine/build-config.ts PRECISIONS). */
export type AllowedPrecision = 'fp32' | 'tf32' | 'fp16' | 'bf16';
const ALLOWED: readonly AllowedPrecision[] = ['fp32', 'tf32', 'fp16', 'bf16'];

export type ReducedDType = 'float16' | 'bfloat16';

export interface PrecisionOptions {
  /** Keep every dtype as the network declares it (TensorRT's strongly typed networks). */
  stronglyTyped?: boolean;
}

export interface PrecisionReport {
  /** What float32 activations compute in: null when the network is unchanged. */
  dtype: ReducedDType | null;
  /** Why the network is unchanged (dtype null). */
  unchanged?: 'fp32 only' | 'strongly typed' | 'no float32 activations';
  /** Layers of the source network computing in the reduced dtype. */
  reducedLayers: number;
  /** Layers of the source network that compute float32 values and stay float32 (constant subgraphs not counted). */
  fp32Layers: string[];
  /** Cast layers inserted (boundaries and between fp32 and reduced layers). */
  casts: number;
  /** Weight tensors converted to the reduced dtype. */
  convertedWeights: number;
  /** Finite weight values beyond the reduced dtype's range, clamped to its largest finite value. */
  clampedValues: number;
}

export interface PrecisionResult {
  /** The rewritten network (the given one when nothing changes). */
  network: Network;
  report: PrecisionReport;
}

/** The largest finite value of each reduced dtype. */
export const REDUCED_MAX: Readonly<Record<ReducedDType, number>> = { float16: 65504, bfloat16: fromBFloat16Bits(0x7f7f) };

/**
 * What float32 activations compute in under `precisions`: fp16 when allowed (it wins over
 * bf16), else bf16, else null (fp32 and tf32 keep float32 storage; tf32 is a GEMM/convolution
 * math mode the backend applies).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming an unknown precision.
 */
export function reducedDType(precisions: readonly string[]): ReducedDType | null {
  if (!Array.isArray(precisions)) throw new InvalidArgumentError(`precisions must be an array of ${ALLOWED.join(', ')}, got ${typeof precisions}`);
  for (const p of precisions) {
    if (!(ALLOWED as readonly unknown[]).includes(p)) throw new InvalidArgumentError(`precisions: unknown precision ${JSON.stringify(p)} (known: ${ALLOWED.join(', ')})`);
  }
  if (precisions.includes('fp16')) return 'float16';
  if (precisions.includes('bf16')) return 'bfloat16';
  return null;
}

/**
 * float32 values → 16-bit patterns of `dtype`, rounding to nearest even; finite values past
 * the range are clamped to ±max (counted in `clamped`).
 */
export function convertWeights(t: Tensor, dtype: ReducedDType): { tensor: Tensor; clamped: number } {
  const src = t.data as Float32Array;
  const bits = new Uint16Array(src.length);
  const to = dtype === 'float16' ? toFloat16Bits : toBFloat16Bits;
  const max = dtype === 'float16' ? 0x7bff : 0x7f7f;
  let clamped = 0;
  for (let i = 0; i < src.length; i++) {
    const v = src[i]!;
    let b = to(v);
    if (Number.isFinite(v) && (b & 0x7fff) > max && !Number.isNaN(dtype === 'float16' ? fromFloat16Bits(b) : fromBFloat16Bits(b))) {
      b = (b & 0x8000) | max;
      clamped++;
    }
    bits[i] = b;
  }
  return { tensor: new Tensor(dtype, t.shape, bits), clamped };
}

type Kind = 'static' | 'region' | 'activation';
type Mode = 'static' | 'fp32' | 'reduced';

/**
 * Static layers that only move data (exact in any dtype): when a reduced layer reads their
 * float32 output, they are emitted reading converted constants instead, so a weight reshaped
 * or sliced by the converter is converted at build like any other weight.
 */
const STATIC_IN_ANY_DTYPE = new Set<LayerParams['kind']>(['constant', 'identity', 'shuffle', 'slice', 'concat', 'gather']);

const isFloatDType = (d: TrtDType): boolean => d === 'float32' || d === 'float16' || d === 'bfloat16';

/**
 * How every live layer computes, from what its inputs are: static (no network input
 * upstream), region (fp32 by the rule at the top of this file) or activation.
 */
function classify(network: Network, layers: readonly Layer[]): Map<Layer, Mode> {
  const kind = new Map<number, Kind>();
  for (const input of network.inputs) kind.set(input.tensor, 'activation');
  const reduceInputs = new Set<number>();
  for (const layer of layers) if (layer.params.kind === 'reduce') for (const id of layer.inputs) if (id !== null) reduceInputs.add(id);
  const mode = new Map<Layer, Mode>();
  for (const layer of layers) {
    const ins = layer.inputs.filter((id): id is number => id !== null);
    const kinds = ins.map((id) => kind.get(id)!);
    const floats = ins.filter((id) => isFloatDType(network.tensor(id).dtype)).map((id) => kind.get(id)!);
    const p = layer.params;
    const outFloat = layer.outputs.some((id) => network.tensor(id).dtype === 'float32');
    let m: Mode;
    let out: Kind;
    const madeFromIntegers = outFloat && ((p.kind === 'cast' && !isFloatDType(network.tensor(ins[0]!).dtype)) || p.kind === 'fill');
    if (kinds.every((k) => k === 'static')) {
      m = 'static';
      out = 'static';
    } else if (madeFromIntegers) {
      m = 'fp32';
      out = 'region';
    } else if (p.kind === 'nonzero' || p.kind === 'nms' || p.kind === 'unique') {
      // Which elements are zero must not change with rounding (a tiny float32 becomes 0 in
      // fp16), and TensorRT's nonzero takes no bfloat16: its input stays as declared. An nms
      // keeps its boxes and scores as declared too: rounding would move IoUs across the
      // threshold and make distinct scores ties; a unique, which elements are equal.
      m = 'fp32';
      out = 'activation';
    } else if (p.kind === 'quantize' || p.kind === 'dequantize') {
      // Quantization keeps its declared types: its scale decides which integer each value
      // becomes, and an fp16 scale or fp16 x / scale would move values across those bins.
      m = 'fp32';
      out = 'activation';
    } else if (floats.includes('activation')) {
      const pow = p.kind === 'elementwise' && p.op === 'pow';
      const square = p.kind === 'elementwise' && p.op === 'prod' && ins[0] === ins[1] && reduceInputs.has(layer.outputs[0]!);
      const scaledByRegion = p.kind === 'elementwise' && (p.op === 'prod' || p.op === 'div') && floats.includes('region');
      m = outFloat && (pow || square || scaledByRegion) ? 'fp32' : 'reduced';
      out = outFloat && (pow || square) ? 'region' : 'activation';
    } else if (floats.includes('region')) {
      m = 'fp32';
      out = 'region';
    } else {
      // Data-dependent, with no float activation input: a gather from a constant table by
      // token ids, a slice of a constant by a run-time length. What it makes is activation data.
      m = 'reduced';
      out = 'activation';
    }
    mode.set(layer, m);
    for (const id of layer.outputs) kind.set(id, out);
  }
  return mode;
}

const hasReducedFloat = (network: Network): boolean => network.tensors.some((t) => t.dtype === 'float16' || t.dtype === 'bfloat16');

/** `params` for a layer computing in `dtype` (float32 parameters become `dtype`); `convert` converts weights. */
function reducedParams(params: LayerParams, dtype: ReducedDType, convert: (t: Tensor) => Tensor): LayerParams {
  const w = (t: Tensor | null): Tensor | null => (t !== null && t.dtype === 'float32' ? convert(t) : t);
  switch (params.kind) {
    case 'cast':
      return params.to === 'float32' ? { ...params, to: dtype } : params;
    case 'convolution':
    case 'deconvolution':
      return { ...params, kernel: w(params.kernel)!, bias: w(params.bias) };
    default:
      return params;
  }
}

/**
 * Rewrites `network` to compute in the reduced float type `precisions` allow (see the rule
 * at the top of this file). Pure: `network` is not modified; when nothing changes it is
 * returned itself.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` for an unknown precision.
 */
export function reducePrecision(network: Network, precisions: readonly string[], options: PrecisionOptions = {}): PrecisionResult {
  const dtype = reducedDType(precisions);
  const report: PrecisionReport = { dtype: null, reducedLayers: 0, fp32Layers: [], casts: 0, convertedWeights: 0, clampedValues: 0 };
  if (dtype === null) return { network, report: { ...report, unchanged: 'fp32 only' } };
  if (options.stronglyTyped === true || hasReducedFloat(network)) return { network, report: { ...report, unchanged: 'strongly typed' } };

  const layers = liveLayers(network);
  const mode = classify(network, layers);
  if (![...mode].some(([layer, m]) => m === 'reduced' && layer.outputs.some((id) => network.tensor(id).dtype === 'float32'))) {
    return { network, report: { ...report, unchanged: 'no float32 activations' } };
  }
  report.dtype = dtype;

  const out = new Network(network.name);
  /** The rewritten tensor of each computed (non-static) source tensor, in the dtype its layer computes. */
  const made = new Map<number, NetTensor>();
  /** Runtime casts, by `${source id}:${dtype}`. */
  const casts = new Map<string, NetTensor>();
  /** Static layers emitted on demand, by `${layer index}:${variant}`. */
  const emitted = new Map<string, NetTensor[]>();
  const converted = new Map<Tensor, Tensor>();
  const convert = (t: Tensor): Tensor => {
    let c = converted.get(t);
    if (c === undefined) {
      const r = convertWeights(t, dtype);
      report.convertedWeights++;
      report.clampedValues += r.clamped;
      c = r.tensor;
      converted.set(t, c);
    }
    return c;
  };
  const srcDType = (id: number): TrtDType => network.tensor(id).dtype;

  /** The producer of source tensor `id` when it is a static layer (emitted on demand). */
  const staticProducer = (id: number): Layer | undefined => {
    const index = network.tensor(id).producer;
    const layer = index >= 0 ? network.layers[index] : undefined;
    return layer !== undefined && mode.get(layer) === 'static' ? layer : undefined;
  };
  /** Source tensor `id` as its rewritten producer made it. */
  const current = (id: number): NetTensor => {
    const producer = staticProducer(id);
    return producer !== undefined ? emit(producer, 'as-is')[producer.outputs.indexOf(id)]! : made.get(id)!;
  };

  /** `layer` added to `out`: as it is, or computing in `variant` (its float32 inputs and parameters in that dtype). */
  const emit = (layer: Layer, variant: 'as-is' | ReducedDType): NetTensor[] => {
    const key = `${layer.index}:${variant}`;
    const seen = emitted.get(key);
    if (seen !== undefined) return seen;
    const reduced = variant !== 'as-is';
    const p = layer.params;
    // A shape layer reads dims, not values: it takes its input in whatever dtype it was made, never a cast.
    const inputs = layer.inputs.map((id) => (id === null ? null : p.kind === 'shape' ? current(id) : view(id, reduced && srcDType(id) === 'float32' ? variant : srcDType(id))));
    const params = !reduced ? p : p.kind === 'constant' ? { kind: 'constant' as const, weights: p.weights.dtype === 'float32' ? convert(p.weights) : p.weights } : reducedParams(p, variant, convert);
    const outs = out.add(params, inputs, reduced && mode.get(layer) === 'static' ? `${layer.name}/${variant}` : layer.name);
    emitted.set(key, outs);
    return outs;
  };

  /**
   * Source tensor `id` as `want`. A constant, or data moved out of constants (a reshaped or
   * sliced weight), is emitted in `want` itself: converted at build, never cast per run. Other
   * values are cast (once per tensor and dtype).
   */
  const view = (id: number, want: TrtDType): NetTensor => {
    const producer = staticProducer(id);
    if (producer !== undefined && want !== srcDType(id) && srcDType(id) === 'float32' && want === dtype && STATIC_IN_ANY_DTYPE.has(producer.params.kind)) {
      return emit(producer, dtype)[producer.outputs.indexOf(id)]!;
    }
    const have = current(id);
    if (have.dtype === want) return have;
    const key = `${id}:${want}`;
    let t = casts.get(key);
    if (t === undefined) {
      t = out.add1({ kind: 'cast', to: want }, [have], `${network.tensor(id).name}/to_${want}`);
      casts.set(key, t);
      report.casts++;
    }
    return t;
  };

  for (const input of network.inputs) {
    const t = network.tensor(input.tensor);
    made.set(t.id, out.addInput(input.name, t.dtype, t.shape, input.profiles));
  }
  for (const layer of layers) {
    const m = mode.get(layer)!;
    if (m === 'static') continue; // emitted where a consumer asks, in the dtype it asks for
    const reduced = m === 'reduced';
    emit(layer, reduced ? dtype : 'as-is').forEach((t, i) => made.set(layer.outputs[i]!, t));
    const makesFloat32 = layer.outputs.some((id) => srcDType(id) === 'float32');
    if (reduced && makesFloat32) report.reducedLayers++;
    else if (m === 'fp32') report.fp32Layers.push(layer.name);
  }
  for (const o of network.outputs) out.markOutput(view(o.tensor, network.tensor(o.tensor).dtype), o.name);
  return { network: out, report };
}

/** One line for a build log or `inspect`: the precision and how many layers stayed fp32. */
export function describePrecision(report: PrecisionReport): string {
  if (report.dtype === null) return `fp32 (${report.unchanged ?? 'unchanged'})`;
  const name = report.dtype === 'float16' ? 'fp16' : 'bf16';
  const kept = report.fp32Layers.length;
  return (
    `${name}: ${report.reducedLayers} layers in ${name}, ${kept} kept fp32${kept > 0 ? ` (${report.fp32Layers.slice(0, 4).join(', ')}${kept > 4 ? ', …' : ''})` : ''}, ` +
    `${report.casts} casts, ${report.convertedWeights} weights converted${report.clampedValues > 0 ? `, ${report.clampedValues} weight values clamped to ±${REDUCED_MAX[report.dtype]}` : ''}`
  );
}
