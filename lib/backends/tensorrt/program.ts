/**
 * The replay program: a Network as the flat sequence of TensorRT calls that rebuilds it, in
 * bytes the native side (native/trt/build.cc) reads front to back. Every IR → TensorRT
 * decision is made here (enum values, axes bitmasks, extra constant tensors for a fill's
 * alpha/beta and a cumulative's axis, identity layers for outputs that are inputs or already
 * outputs): the native side knows plans, not graphs, and TypeScript is where they are tested.
 *
 * Layout (little-endian): magic `TRTNPLAY`, u32 version, then ops until END. Strings are
 * u32 length + UTF-8; dims are u32 rank + i64 each; weights are i32 DataType, dims, u64 byte
 * length, 8-byte aligned bytes (the native side points TensorRT's Weights into them, so the
 * program outlives the build).
 */
import { InternalError } from '../../errors';
import { dtypeInfo } from '../../ir/dtype';
import { ByteWriter } from '../../io/byte-writer';
import type { Layer, LayerKind, Network, TrtDType } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { BuildConfig } from '../../engine/build-config';
import * as E from './enums';
import { expandLayers } from '../../conversion/expand-layers';
import { NetworkRewrite } from '../../network/rewrite';
import { cannotBuild, quantizeForms, refuseUnbuildable } from './quantize';

export const PROGRAM_MAGIC = 'TRTNPLAY';
export const PROGRAM_VERSION = 1;

/** Ops of the program (native/trt/program.h mirrors them). */
export const OP = { END: 0, INPUT: 1, LAYER: 2, OUTPUT: 3, PROFILE: 4, CONFIG: 5 } as const;

/** Layer opcodes: stable numbers, not positions in LAYER_KINDS (native/trt/program.h mirrors them). */
export const LAYER_OPCODE: Record<LayerKind, number> = {
  constant: 1, identity: 2, cast: 3, elementwise: 4, unary: 5, activation: 6, matmul: 7, shuffle: 8, slice: 9, concat: 10,
  gather: 11, scatter: 12, reduce: 13, softmax: 14, shape: 15, fill: 16, select: 17, convolution: 18, deconvolution: 19,
  pooling: 20, normalization: 21, resize: 22, topk: 23, cumulative: 24, attention: 25, quantize: 26, dequantize: 27,
  nonzero: 28,
  // Never emitted: the replay refuses nms and unique layers (NMS_REFUSAL, UNIQUE_REFUSAL); the numbers only keep the table whole.
  nms: 29,
  unique: 30,
};

/** Why the tensorrt backend refuses a unique layer: TensorRT 10.16 has none (NvInfer.h lists no such layer). */
export const UNIQUE_REFUSAL = 'TensorRT has no layer that computes ONNX Unique';

/**
 * Why the tensorrt backend refuses an nms layer. TensorRT's INMSLayer (NvInfer.h 10.16) lists
 * the selected boxes of a batch item by descending score across classes with equal scores in an
 * unspecified order, where ONNX lists them class by class, lower box index first among equal
 * scores; it also considers only the 5000 (2000 on SM 5.3/6.2) highest-scoring boxes of a batch
 * item, where ONNX has no limit. Its rows would be other rows: compile() runs such nodes in
 * fallback segments instead (Backend.refusedLayers).
 */
export const NMS_REFUSAL =
  "TensorRT's INMSLayer orders the selected boxes by descending score across classes (equal scores in no set order), " +
  'where ONNX NonMaxSuppression orders them class by class with the lower box index first among equal scores, and it considers only the 5000 highest-scoring boxes of a batch item';

/** What the builder is told besides the network (native/trt/build.cc applies it). */
export interface ReplayBuildOptions extends Pick<BuildConfig, 'precisions' | 'workspaceBytes' | 'hardwareCompatibility' | 'optimizationLevel'> {
  /** Serialized timing cache to start from (empty: a new one). */
  timingCache?: Uint8Array;
  /** BuilderFlag::kVERSION_COMPATIBLE (plans that run on later TensorRT 10.x runtimes). */
  versionCompatible?: boolean;
}

/** The program's own value encodings on top of the byte writer. */
class Writer extends ByteWriter {
  bool(v: boolean): void {
    this.u8(v ? 1 : 0);
  }
  str(s: string): void {
    const b = new TextEncoder().encode(s);
    this.u32(b.byteLength);
    this.bytes(b);
  }
  dims(d: readonly number[]): void {
    this.u32(d.length);
    for (const x of d) this.i64(x);
  }
  /**
   * Weights: DataType, dims, byte length, then the bytes 8-byte aligned. FP8 goes as its bit
   * patterns (one a byte, as the IR holds them); INT4 packed two values a byte, the first in
   * the low nibble (ONNX's packing, which NVIDIA's ONNX parser hands TensorRT unchanged).
   */
  weights(t: Tensor | null): void {
    if (t === null) {
      this.i32(-1);
      return;
    }
    this.i32(dataType(t.dtype as TrtDType, 'weights'));
    this.dims(t.shape);
    const bytes = t.dtype === 'int4' ? packInt4(t.data as Int8Array) : new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    this.i64(bytes.byteLength);
    this.align(8);
    this.bytes(bytes);
  }
}

/** INT4 values (one a byte) packed two a byte, the first in the low nibble; an odd count leaves the last high nibble 0. */
export function packInt4(values: Int8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(values.length / 2));
  for (let i = 0; i < values.length; i++) out[i >> 1]! |= (values[i]! & 0xf) << ((i & 1) * 4);
  return out;
}

function dataType(dtype: TrtDType, what: string): number {
  const v = E.DATA_TYPE[dtype];
  if (v === undefined) throw new InternalError(`${what}: dtype ${dtype} has no TensorRT DataType`);
  return v;
}

/** A bitmask of `axes` (bit i = dimension i), as addReduce/addNormalization/addTopK/setAxes take it. */
export function axesMask(axes: readonly number[], rank: number, where: string): number {
  let mask = 0;
  for (const a of axes) {
    const axis = a < 0 ? a + rank : a;
    if (!Number.isInteger(axis) || axis < 0 || axis >= rank) throw new InternalError(`${where}: axis ${a} is outside rank ${rank}`);
    mask |= 1 << axis;
  }
  return mask >>> 0;
}

/** Encodes the build options (CONFIG op). */
function writeConfig(w: Writer, o: ReplayBuildOptions): void {
  w.u8(OP.CONFIG);
  w.i32(o.optimizationLevel);
  w.i64(o.workspaceBytes ?? -1);
  w.bool(o.precisions.includes('tf32'));
  w.i32(E.HARDWARE_COMPATIBILITY_LEVEL[o.hardwareCompatibility]);
  w.bool(o.versionCompatible ?? false);
  const cache = o.timingCache ?? new Uint8Array(0);
  w.i64(cache.byteLength);
  w.bytes(cache);
}

/**
 * The network the replay gives TensorRT: RMS normalizations spelled out (10.16's
 * INormalizationLayer has no RMS mode; lib/conversion/expand-layers.ts), attentions IAttention
 * takes kept whole with their queries scaled first (IAttention has no scale), and the others
 * spelled out. IAttention takes rank-4 query, key and value ([batch, heads, seq, head dim],
 * fewer key/value heads for grouped queries), a mask that broadcasts over batch and heads only,
 * and a causal flag for square scores only: an attention over a mask with a broadcast L or S
 * (BERT's [B, 1, 1, S]), or causal over L ≠ S (PyTorch's mask is top-left), is spelled out.
 * Quantize and dequantize layers TensorRT takes stay whole; the INT8/UINT8 forms it does not
 * take are spelled out by the same module, selected by their layer kind; an FP8/INT4 form it
 * does not take, or one the expansion left, is an `E_UNSUPPORTED_OP` (./quantize.ts). Pure.
 */
export function replayedNetwork(source: Network): Network {
  const forms = quantizeForms(source);
  refuseUnbuildable(source, forms);
  const takes = (l: Layer): boolean => {
    const p = l.params;
    if (p.kind === 'quantize' || p.kind === 'dequantize') return forms.get(l)?.take === 'whole';
    if (p.kind !== 'attention' || p.strided !== undefined) return false;
    const q = source.tensor(l.inputs[0]!).shape;
    const k = source.tensor(l.inputs[1]!).shape;
    const mask = l.inputs[3] === undefined || l.inputs[3] === null ? null : source.tensor(l.inputs[3]).shape;
    // IAttention's mask broadcasts over batch and heads only: its L and S are the scores' own.
    const maskFits = mask === null || (q[2]! >= 0 && mask[2] === q[2] && k[2]! >= 0 && mask[3] === k[2]);
    return q.length === 4 && maskFits && (!p.causal || (q[2]! >= 0 && q[2] === k[2]));
  };
  const spelled = expandLayers(source, (l) => !takes(l)).network;
  for (const [layer, form] of quantizeForms(spelled)) {
    if (form.take !== 'whole') throw cannotBuild(spelled, layer, `${form.why}, and lib/conversion/expand-layers.ts does not spell this form out`);
  }
  if (!spelled.layers.some((l) => l.params.kind === 'attention' && l.params.scale !== 1)) return spelled;
  const rw = new NetworkRewrite(spelled, 'tensorrt attention scale');
  for (const layer of spelled.layers) {
    const p = layer.params;
    if (p.kind !== 'attention' || p.scale === 1) {
      rw.copy(layer);
      continue;
    }
    const [q, ...rest] = layer.inputs.map((id) => rw.get(id));
    const factor = rw.add({ kind: 'constant', weights: Tensor.from(q!.dtype, [1, 1, 1, 1], [p.scale]) }, [], `${layer.name}/scale`)[0]!;
    const scaled = rw.add({ kind: 'elementwise', op: 'prod' }, [q!, factor], `${layer.name}/scaled_query`)[0]!;
    const [out] = rw.add({ ...p, scale: 1 }, [scaled, ...rest], layer.name);
    rw.set(layer.outputs[0]!, out!);
  }
  return rw.finish();
}

/** The replay program of `network` (as {@link replayedNetwork} gives it to TensorRT) with build options `options`. */
export function encodeProgram(source: Network, options: ReplayBuildOptions): Uint8Array {
  const network = replayedNetwork(source);
  const w = new Writer();
  w.bytes(new TextEncoder().encode(PROGRAM_MAGIC));
  w.u32(PROGRAM_VERSION);
  writeConfig(w, options);
  for (const input of network.inputs) {
    const t = network.tensor(input.tensor);
    w.u8(OP.INPUT);
    w.i32(t.id);
    w.str(input.name);
    w.i32(dataType(t.dtype, `network input "${input.name}"`));
    w.dims(t.shape);
  }
  let nextId = network.tensors.length;
  const emit = (opcode: number, name: string, inputs: ReadonlyArray<number | null>, outputs: ReadonlyArray<{ id: number; name: string }>, payload: (w: Writer) => void): void => {
    w.u8(OP.LAYER);
    w.i32(opcode);
    w.str(name);
    w.u32(inputs.length);
    for (const i of inputs) w.i32(i ?? -1);
    w.u32(outputs.length);
    for (const o of outputs) {
      w.i32(o.id);
      w.str(o.name);
    }
    payload(w);
  };
  /** A constant tensor the IR does not have (named after the layer that needs it); returns its id. */
  const constant = (layer: Layer, role: string, t: Tensor): number => {
    const id = nextId++;
    emit(LAYER_OPCODE.constant, `${layer.name}/${role}`, [], [{ id, name: `${layer.name}/${role}:out` }], (w) => w.weights(t));
    return id;
  };
  for (const layer of network.layers) {
    const rank = (k: number): number => network.tensor(layer.inputs[k]!).shape.length;
    const where = `layer "${layer.name}" (${layer.params.kind})`;
    const inputs = [...layer.inputs];
    const p = layer.params;
    let payload: (w: Writer) => void = () => {};
    switch (p.kind) {
      case 'constant':
        payload = (w) => w.weights(p.weights);
        break;
      case 'identity':
      case 'shape':
      case 'select':
        break;
      case 'cast':
        payload = (w) => w.i32(dataType(p.to, where));
        break;
      case 'elementwise':
        payload = (w) => w.i32(E.ELEMENTWISE_OP[p.op]);
        break;
      case 'unary':
        payload = (w) => w.i32(E.UNARY_OP[p.op]);
        break;
      case 'activation':
        payload = (w) => {
          w.i32(E.ACTIVATION_TYPE[p.type]);
          w.bool(p.alpha !== undefined);
          w.f64(p.alpha ?? 0);
          w.bool(p.beta !== undefined);
          w.f64(p.beta ?? 0);
        };
        break;
      case 'matmul':
        payload = (w) => {
          w.i32(E.MATRIX_OP[p.opA]);
          w.i32(E.MATRIX_OP[p.opB]);
        };
        break;
      case 'shuffle':
        payload = (w) => {
          for (const v of [p.firstTranspose, p.reshape, p.secondTranspose]) {
            w.bool(v !== undefined);
            if (v !== undefined) w.dims(v);
          }
          w.bool(p.zeroIsPlaceholder);
        };
        break;
      case 'slice':
        payload = (w) => {
          w.dims(p.start);
          w.dims(p.size);
          w.dims(p.stride);
          w.i32(E.SAMPLE_MODE[p.mode]);
        };
        break;
      case 'concat':
        payload = (w) => w.i32(p.axis < 0 ? p.axis + rank(0) : p.axis);
        break;
      case 'gather':
        payload = (w) => {
          w.i32(E.GATHER_MODE[p.mode]);
          w.i32(p.axis < 0 ? p.axis + rank(0) : p.axis);
          w.i32(p.nbElementWiseDims ?? -1);
        };
        break;
      case 'scatter':
        payload = (w) => {
          w.i32(E.SCATTER_MODE[p.mode]);
          w.i32(p.axis < 0 ? p.axis + rank(0) : p.axis);
        };
        break;
      case 'reduce':
        payload = (w) => {
          w.i32(E.REDUCE_OP[p.op]);
          w.u32(axesMask(p.axes, rank(0), where));
          w.bool(p.keepDims);
        };
        break;
      case 'softmax':
        payload = (w) => w.u32(axesMask([p.axis], rank(0), where));
        break;
      case 'fill': {
        // A static IFillLayer beta is one double; the IR's per-dimension beta (and an exact
        // int64 alpha) only fit the dynamic form, so alpha and beta become constant inputs
        // of the fill's own dtype (TensorRT wants both static or both dynamic).
        const dt = p.dtype;
        const make = (shape: number[], values: number[]): Tensor => {
          const info = dtypeInfo(dt);
          const data = new info.storage(values.length);
          values.forEach((v, i) => ((data as unknown as Array<number | bigint>)[i] = data instanceof BigInt64Array ? BigInt(Math.trunc(v)) : v));
          return new Tensor(dt, shape, data);
        };
        while (inputs.length < 3) inputs.push(null);
        if (inputs[1] === null) inputs[1] = constant(layer, 'alpha', make([], [p.alpha]));
        if (inputs[2] === null) inputs[2] = constant(layer, 'beta', make([p.beta.length], p.beta));
        payload = (w) => {
          w.dims(p.dims);
          w.i32(dataType(dt, where));
        };
        break;
      }
      case 'convolution':
      case 'deconvolution':
        // The cuda backend's own rewrites (channels-last, fused epilogues) never reach TensorRT.
        if (p.channelsLast === true || p.activation !== undefined || inputs[3] != null) throw new InternalError(`${where}: a cuda-backend convolution (channels-last or fused) has no TensorRT layer`);
        payload = (w) => {
          w.i32(p.nbOutputMaps);
          w.dims(p.kernelSize);
          w.weights(inputs[1] != null ? null : p.kernel);
          w.weights(inputs[2] != null ? null : p.bias);
          w.dims(p.stride);
          w.dims(p.prePadding);
          w.dims(p.postPadding);
          w.dims(p.dilation);
          w.i32(p.groups);
        };
        break;
      case 'pooling':
        if (p.channelsLast === true) throw new InternalError(`${where}: a channels-last pooling (a cuda-backend rewrite) has no TensorRT layer`);
        payload = (w) => {
          w.i32(E.POOLING_TYPE[p.type]);
          w.dims(p.window);
          w.dims(p.stride);
          w.dims(p.prePadding);
          w.dims(p.postPadding);
          w.i32(E.PADDING_MODE[p.paddingMode]);
          w.bool(p.averageCountExcludesPadding);
        };
        break;
      case 'attention':
        // IAttention (native/trt/build.cc): softmax normalization, decomposable where TensorRT has no fused kernel.
        if (p.strided !== undefined || p.scale !== 1) throw new InternalError(`${where}: replayedNetwork gives IAttention plain attentions with their queries scaled`);
        payload = (w) => w.bool(p.causal);
        break;
      case 'normalization':
        if (p.rms === true) throw new InternalError(`${where}: an RMS normalization reached the replay; encodeProgram spells them out (lib/conversion/expand-layers.ts)`);
        payload = (w) => {
          w.u32(axesMask(p.axes, rank(0), where));
          w.f64(p.epsilon);
          w.i32(p.nbGroups);
        };
        break;
      case 'resize':
        payload = (w) => {
          w.i32(E.INTERPOLATION_MODE[p.mode]);
          w.dims(p.outputDims);
          w.i32(E.COORDINATE_TRANSFORMATION[p.coordinateTransformation]);
          w.i32(E.RESIZE_SELECTOR[p.selector]);
          w.i32(E.RESIZE_ROUND_MODE[p.nearestRounding]);
        };
        break;
      case 'topk':
        payload = (w) => {
          w.i32(E.TOPK_OP[p.op]);
          w.i32(p.k);
          w.u32(axesMask([p.axis], rank(0), where));
          w.i32(dataType(p.indicesType, where));
        };
        break;
      case 'quantize':
      case 'dequantize':
        // IQuantizeLayer/IDequantizeLayer (native/trt/build.cc): the output DataType, the axis (per
        // axis, or the blocked one), the block shape (empty unless blocked: the block size at the
        // axis, 1 elsewhere); the zero point, when given, is input 2 (replayedNetwork checked it is zeros).
        payload = (w) => {
          const r = rank(0);
          const axis = p.axis < 0 ? p.axis + r : p.axis;
          if (!Number.isInteger(axis) || axis < 0 || axis >= r) throw new InternalError(`${where}: axis ${p.axis} is outside rank ${r}`);
          w.i32(dataType(p.to, where));
          w.i32(axis);
          w.dims(p.blockSize === undefined ? [] : Array.from({ length: r }, (_, i) => (i === axis ? p.blockSize! : 1)));
        };
        break;
      case 'cumulative':
        // addCumulative takes its axis as a build-time constant 0-D tensor.
        inputs.push(constant(layer, 'axis', new Tensor('int32', [], Int32Array.of(p.axis))));
        payload = (w) => {
          w.i32(E.CUMULATIVE_OP[p.op]);
          w.bool(p.exclusive);
          w.bool(p.reverse);
        };
        break;
      case 'nonzero':
        // addNonZero(input, indicesType): the network's nonzero is int64 (TensorRT's default is int32).
        payload = (w) => w.i32(dataType('int64', where));
        break;
      case 'nms':
        throw cannotBuild(network, layer, NMS_REFUSAL);
      case 'unique':
        throw cannotBuild(network, layer, UNIQUE_REFUSAL);
      default: {
        const unknown: never = p;
        throw new InternalError(`${where}: no replay for layer kind ${JSON.stringify((unknown as { kind: string }).kind)}`);
      }
    }
    emit(LAYER_OPCODE[p.kind], layer.name, inputs, layer.outputs.map((id) => ({ id, name: network.tensor(id).name })), payload);
  }
  // An ITensor has one name and is one output once; a network input cannot be an output in
  // TensorRT. Such outputs get an identity layer of their own.
  const marked = new Set<number>();
  const inputIds = new Set(network.inputs.map((i) => i.tensor));
  for (const output of network.outputs) {
    let id = output.tensor;
    if (marked.has(id) || inputIds.has(id)) {
      const copy = nextId++;
      emit(LAYER_OPCODE.identity, `output:${output.name}`, [id], [{ id: copy, name: output.name }], () => {});
      id = copy;
    }
    marked.add(id);
    w.u8(OP.OUTPUT);
    w.i32(id);
    w.str(output.name);
  }
  const profileCount = Math.max(0, ...network.inputs.map((i) => i.profiles.length));
  for (let k = 0; k < profileCount; k++) {
    const entries = network.inputs.filter((i) => i.profiles.length > 0);
    w.u8(OP.PROFILE);
    w.u32(entries.length);
    for (const input of entries) {
      const profile = input.profiles[k];
      if (profile === undefined) throw new InternalError(`network "${network.name}" input "${input.name}" has ${input.profiles.length} optimization profiles, others ${profileCount}`);
      w.str(input.name);
      w.dims(profile.min);
      w.dims(profile.opt);
      w.dims(profile.max);
    }
  }
  w.u8(OP.END);
  return w.result();
}
