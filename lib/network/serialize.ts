/**
 * The serialized Network: what every backend receives (the reference backend keeps it as its
 * "engine"; the TensorRT backend replays it into a native INetworkDefinition). It is the
 * container of lib/io/json-blobs.ts: a JSON description plus one blob of weights.
 *
 * The JSON ({@link SerializedNetwork}) holds the network's name, its tensors (name, dtype,
 * shape, producer), inputs with their optimization profiles, outputs and layers. Layer
 * parameters are stored as they are in LayerParams, except that a Tensor (constant weights,
 * convolution kernels and biases) becomes {"$weights": k}, the k-th entry of `weights`
 * ({dtype, shape, offset, byteLength} into the blob, offsets 8-byte aligned), and a number
 * JSON cannot hold becomes {"$number": "NaN" | "Infinity" | "-Infinity" | "-0"}.
 *
 * Deserializing is zero-copy: weight tensors view the given blob (so its bytes must not
 * change while a runner uses them); only a blob at an offset that does not suit a typed array
 * is copied once. Every reference and parameter is checked; whatever is wrong is a
 * BadModelError that names it, prefixed with the caller's label. The layer-by-layer shape
 * check needs shape inference that backends own (`check`), so callers pass it in.
 */
import { BadModelError } from '../errors';
import { dtypeInfo } from '../ir/dtype';
import { BlobTable, blobRange, CodecError, decodeNumber, defineEntry, encodeNumber, isNumberTag, MagicError, packContainer, unpackContainer } from '../io/json-blobs';
import { shapeSize, Tensor } from '../ir/tensor';
import { VERSION } from '../version';
import type {
  ActivationType,
  ElementWiseOp,
  GatherMode,
  LayerKind,
  LayerParams,
  MatrixOp,
  QuantizedDType,
  ReduceOp,
  ResizeCoordinateTransformation,
  ResizeMode,
  ResizeRoundMode,
  ResizeSelector,
  SampleMode,
  UnaryOp,
} from './layers';
import { TRT_DTYPES } from './layers';
import { Network, type NetTensor, type NetworkInput, type NetworkOutput } from './network';

/** The `format` field of every description. */
export const NETWORK_FORMAT = 'tensorrt-node network';
/** The container magic of {@link serializeNetworkToBuffer}. */
export const NETWORK_MAGIC = 'TRTNNETW';
/** The container version of {@link serializeNetworkToBuffer} (2: the first as a backend-neutral format). */
export const NETWORK_FORMAT_VERSION = 2;

interface WeightsRecord {
  dtype: string;
  shape: number[];
  offset: number;
  byteLength: number;
}

/** The JSON part of a serialized Network. */
export interface SerializedNetwork {
  format: string;
  producer: { library: string; version: string };
  name: string;
  tensors: Array<{ name: string; dtype: string; shape: number[]; producer: number }>;
  inputs: NetworkInput[];
  outputs: NetworkOutput[];
  layers: Array<{ name: string; params: unknown; inputs: Array<number | null>; outputs: number[] }>;
  weights: WeightsRecord[];
}

/** Raises the caller's error for `message`. */
export type Fail = (message: string, cause?: unknown) => never;
/** Checks a deserialized Network's consistency (lib/network/check.ts). */
export type NetworkCheck = (net: Network, fail: Fail) => unknown;

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/** Replaces Tensors and numbers JSON cannot hold in layer parameters by their JSON stand-ins. */
function encodeParams(value: unknown, addWeights: (t: Tensor) => number): unknown {
  if (value instanceof Tensor) return { $weights: addWeights(value) };
  if (typeof value === 'number') return encodeNumber(value);
  if (Array.isArray(value)) return value.map((v) => encodeParams(v, addWeights));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) defineEntry(out, k, encodeParams(v, addWeights));
    return out;
  }
  return value;
}

/** A Network (assumed checked) as its JSON description and weights blob. */
export function serializeNetwork(network: Network): { json: SerializedNetwork; blobs: BlobTable<Tensor> } {
  if (!isLittleEndian) throw new BadModelError('serialized networks are little-endian; this host is big-endian');
  const weights: WeightsRecord[] = [];
  const blobs = new BlobTable<Tensor>();
  const index = new Map<Tensor, number>();
  const addWeights = (t: Tensor): number => {
    const known = index.get(t);
    if (known !== undefined) return known;
    weights.push({ dtype: t.dtype, shape: [...t.shape], offset: blobs.add(t, t.data), byteLength: t.data.byteLength });
    index.set(t, weights.length - 1);
    return weights.length - 1;
  };
  const json: SerializedNetwork = {
    format: NETWORK_FORMAT,
    producer: { library: 'tensorrt-node', version: VERSION },
    name: network.name,
    tensors: network.tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: [...t.shape], producer: t.producer })),
    inputs: network.inputs.map((i) => ({ tensor: i.tensor, name: i.name, profiles: i.profiles })),
    outputs: network.outputs.map((o) => ({ tensor: o.tensor, name: o.name })),
    layers: network.layers.map((l) => ({ name: l.name, params: encodeParams(l.params, addWeights), inputs: [...l.inputs], outputs: [...l.outputs] })),
    weights,
  };
  return { json, blobs };
}

/** The Network in one container with `magic` and `version` (lib/io/json-blobs.ts). */
export function serializeNetworkToBuffer(network: Network, magic = NETWORK_MAGIC, version = NETWORK_FORMAT_VERSION): Uint8Array<ArrayBuffer> {
  const { json, blobs } = serializeNetwork(network);
  return packContainer(magic, version, json, blobs);
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/** `Record<T, true>` so that the compiler checks each list is complete. */
const keys = <T extends string>(r: Record<T, true>): readonly T[] => Object.keys(r) as T[];

const ELEMENTWISE_OPS = keys<ElementWiseOp>({
  sum: true, prod: true, max: true, min: true, sub: true, div: true, pow: true, floor_div: true,
  and: true, or: true, xor: true, equal: true, greater: true, less: true,
});
const UNARY_OPS = keys<UnaryOp>({
  exp: true, log: true, sqrt: true, recip: true, abs: true, neg: true, sin: true, cos: true, tan: true, sinh: true,
  cosh: true, asin: true, acos: true, atan: true, asinh: true, acosh: true, atanh: true, ceil: true, floor: true,
  erf: true, not: true, sign: true, round: true, isinf: true, isnan: true,
});
const ACTIVATIONS = keys<ActivationType>({
  relu: true, sigmoid: true, tanh: true, leaky_relu: true, elu: true, selu: true, softsign: true, softplus: true,
  clip: true, hard_sigmoid: true, scaled_tanh: true, thresholded_relu: true, gelu_erf: true, gelu_tanh: true,
});
const REDUCE_OPS = keys<ReduceOp>({ sum: true, prod: true, max: true, min: true, avg: true });
const MATRIX_OPS = keys<MatrixOp>({ none: true, transpose: true, vector: true });
const SAMPLE_MODES = keys<SampleMode>({ strict_bounds: true, wrap: true, clamp: true, fill: true, reflect: true });
const GATHER_MODES = keys<GatherMode>({ default: true, element: true, nd: true });
const RESIZE_MODES = keys<ResizeMode>({ nearest: true, linear: true, cubic: true });
const COORDINATE_TRANSFORMS = keys<ResizeCoordinateTransformation>({ align_corners: true, asymmetric: true, half_pixel: true });
const SELECTORS = keys<ResizeSelector>({ formula: true, upper: true });
const ROUND_MODES = keys<ResizeRoundMode>({ half_up: true, half_down: true, floor: true, ceil: true });

/** What a parameter field must hold; a '?' suffix (or `optional`) allows it to be absent. */
type FieldSpec = 'int' | 'number' | 'bool' | 'ints' | 'numbers' | 'tensor' | 'tensor|null' | 'dtype' | 'attention' | readonly string[];
type ParamSpec = Record<string, FieldSpec | { optional: FieldSpec }>;

const opt = (f: FieldSpec): { optional: FieldSpec } => ({ optional: f });
const convSpec: ParamSpec = {
  nbOutputMaps: 'int', kernelSize: 'ints', stride: 'ints', prePadding: 'ints', postPadding: 'ints', dilation: 'ints',
  groups: 'int', kernel: 'tensor', bias: 'tensor|null', channelsLast: opt('bool'), activation: opt(['relu']),
};

/** The fields of each layer kind's parameters (mirrors LayerParams in lib/network/layers.ts). */
const PARAM_SPECS: Record<LayerKind, ParamSpec> = {
  constant: { weights: 'tensor' },
  identity: {},
  cast: { to: 'dtype' },
  elementwise: { op: ELEMENTWISE_OPS },
  unary: { op: UNARY_OPS },
  activation: { type: ACTIVATIONS, alpha: opt('number'), beta: opt('number') },
  matmul: { opA: MATRIX_OPS, opB: MATRIX_OPS },
  attention: { scale: 'number', causal: 'bool', strided: opt('attention') },
  shuffle: { firstTranspose: opt('ints'), reshape: opt('ints'), secondTranspose: opt('ints'), zeroIsPlaceholder: 'bool' },
  slice: { start: 'ints', size: 'ints', stride: 'ints', mode: SAMPLE_MODES },
  concat: { axis: 'int' },
  gather: { mode: GATHER_MODES, axis: 'int', nbElementWiseDims: opt('int') },
  scatter: { mode: ['element', 'nd'], axis: 'int' },
  reduce: { op: REDUCE_OPS, axes: 'ints', keepDims: 'bool' },
  softmax: { axis: 'int' },
  shape: {},
  fill: { dims: 'ints', alpha: 'number', beta: 'numbers', dtype: 'dtype' },
  select: {},
  convolution: convSpec,
  deconvolution: convSpec,
  pooling: {
    type: ['max', 'average'], window: 'ints', stride: 'ints', prePadding: 'ints', postPadding: 'ints',
    paddingMode: ['explicit_round_down', 'explicit_round_up'], averageCountExcludesPadding: 'bool', channelsLast: opt('bool'),
  },
  normalization: { axes: 'ints', epsilon: 'number', nbGroups: 'int', rms: opt('bool') },
  resize: {
    mode: RESIZE_MODES, outputDims: 'ints', coordinateTransformation: COORDINATE_TRANSFORMS, selector: SELECTORS,
    nearestRounding: ROUND_MODES,
  },
  topk: { op: ['max', 'min'], k: 'int', axis: 'int', indicesType: ['int32', 'int64'] },
  cumulative: { op: ['sum'], axis: 'int', exclusive: 'bool', reverse: 'bool' },
  nonzero: {},
  nms: { maxOutputBoxesPerClass: 'int', iouThreshold: 'number', scoreThreshold: opt('number'), centerPointBox: 'bool' },
  unique: { axis: opt('int'), sorted: 'bool' },
  quantize: { to: keys<QuantizedDType>({ int8: true, uint8: true, float8e4m3fn: true, int4: true }), axis: 'int', blockSize: opt('int') },
  dequantize: { to: ['float32', 'float16', 'bfloat16'], axis: 'int', blockSize: opt('int') },
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isIntList = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x));

function fieldOk(value: unknown, spec: FieldSpec): boolean {
  if (Array.isArray(spec)) return typeof value === 'string' && spec.includes(value);
  switch (spec) {
    case 'int':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'bool':
      return typeof value === 'boolean';
    case 'ints':
      return isIntList(value);
    case 'numbers':
      return Array.isArray(value) && value.every((x) => typeof x === 'number');
    case 'tensor':
      return value instanceof Tensor;
    case 'tensor|null':
      return value === null || value instanceof Tensor;
    case 'dtype':
      return typeof value === 'string' && (TRT_DTYPES as readonly string[]).includes(value);
    case 'attention':
      return attentionOk(value);
  }
  return false;
}

/** An attention layer's strided form (AttentionParams): every field, its type, strides that cover the batch box, and three offsets of at least 0 if any. */
function attentionOk(value: unknown): boolean {
  if (!isObject(value)) return false;
  const fields: Record<string, FieldSpec | { optional: FieldSpec }> = {
    batch: 'ints', seqQ: 'int', seqKV: 'int', headDim: 'int', scale: 'number', causal: 'bool',
    query: 'ints', key: 'ints', value: 'ints', output: 'ints', offsets: opt('ints'), mask: opt('ints'), outputShape: 'ints',
  };
  if (Object.keys(value).some((k) => !Object.hasOwn(fields, k))) return false;
  const typed = Object.entries(fields).every(([k, f]) => {
    if (typeof f === 'string' || Array.isArray(f)) return fieldOk(value[k], f as FieldSpec);
    return value[k] === undefined || fieldOk(value[k], (f as { optional: FieldSpec }).optional);
  });
  if (!typed) return false;
  const rank = (value.batch as number[]).length;
  const rows = ['query', 'key', 'value', 'output'].every((k) => (value[k] as number[]).length === rank + 1);
  const offsets = value.offsets as number[] | undefined;
  const starts = offsets === undefined || (offsets.length === 3 && offsets.every((o) => o >= 0));
  return rows && starts && (value.mask === undefined || (value.mask as number[]).length === rank + 2);
}

const specName = (spec: FieldSpec): string =>
  Array.isArray(spec) ? `one of ${spec.join('/')}` : spec === 'attention' ? 'attention parameters whose strides cover their batch box (and three offsets ≥ 0, if any)' : (spec as string);

/** Checks decoded layer parameters against PARAM_SPECS. */
function checkParams(params: unknown, label: string, fail: Fail): LayerParams {
  if (!isObject(params) || typeof params.kind !== 'string' || !Object.hasOwn(PARAM_SPECS, params.kind)) {
    fail(`${label} has unknown kind ${JSON.stringify(isObject(params) ? params.kind : params)}`);
  }
  const spec = PARAM_SPECS[params.kind as LayerKind];
  for (const [field, f] of Object.entries(spec)) {
    const optional = typeof f === 'object' && !Array.isArray(f) && 'optional' in f;
    const fs = optional ? (f as { optional: FieldSpec }).optional : (f as FieldSpec);
    const value = params[field];
    if (value === undefined && optional) continue;
    if (!fieldOk(value, fs)) fail(`${label} (${params.kind}): parameter ${field} must be ${specName(fs)}, got ${JSON.stringify(value)}`);
  }
  for (const field of Object.keys(params)) {
    if (field !== 'kind' && !Object.hasOwn(spec, field)) fail(`${label} (${params.kind}): unknown parameter ${field}`);
  }
  return params as unknown as LayerParams;
}

/** Reverses encodeParams, resolving {"$weights": k} against the loaded weight tensors. */
function decodeParams(value: unknown, weights: readonly Tensor[], label: string, fail: Fail): unknown {
  if (Array.isArray(value)) return value.map((v) => decodeParams(v, weights, label, fail));
  if (isObject(value)) {
    const fields = Object.keys(value);
    if (fields.length === 1 && fields[0] === '$weights') {
      const k = value.$weights;
      if (!Number.isInteger(k) || (k as number) < 0 || (k as number) >= weights.length) fail(`${label} refers to weights ${JSON.stringify(k)}, which do not exist`);
      return weights[k as number];
    }
    if (isNumberTag(value)) {
      try {
        return decodeNumber(value.$number);
      } catch (e) {
        return fail(`${label} has ${(e as Error).message}`, e);
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') fail(`${label} has a parameter named __proto__`);
      defineEntry(out, k, decodeParams(v, weights, label, fail));
    }
    return out;
  }
  return value;
}

/** Views (or, where the offset does not suit the element size, copies) each weights record out of the blob. */
function loadWeights(records: unknown, blob: Uint8Array, fail: Fail): Tensor[] {
  if (!Array.isArray(records)) fail('the description has no weights list');
  const blobLength = blob.byteLength;
  // Typed arrays need offsets that are multiples of their element size; records are 8-byte
  // aligned within the blob, so only a misaligned blob needs the one copy (new Uint8Array copies;
  // a Buffer's slice() would be another view at the same offset).
  const source = blob.byteOffset % 8 === 0 ? blob : new Uint8Array(blob);
  return records.map((r: unknown, k) => {
    if (!isObject(r)) fail(`weights ${k} is not an object`);
    const { dtype, shape, offset, byteLength } = r;
    if (typeof dtype !== 'string' || !(TRT_DTYPES as readonly string[]).includes(dtype)) fail(`weights ${k} has an invalid dtype ${JSON.stringify(dtype)}`);
    if (!isIntList(shape) || shape.some((d) => d < 0)) fail(`weights ${k} has an invalid shape ${JSON.stringify(shape)}`);
    const info = dtypeInfo(dtype as Tensor['dtype']);
    const expected = shapeSize(shape) * info.itemBytes;
    if (byteLength !== expected) fail(`weights ${k} (${dtype}[${shape.join(', ')}]) records ${JSON.stringify(byteLength)} bytes, its shape needs ${expected}`);
    let start: number;
    try {
      start = blobRange(offset, expected, blobLength, `weights ${k}`);
    } catch (e) {
      return fail((e as Error).message, e);
    }
    const data = new info.storage(source.buffer as ArrayBuffer, source.byteOffset + start, shapeSize(shape));
    // int4 weights hold one value a byte; a byte outside int4's range is no int4 value.
    if (dtype === 'int4' && (data as Int8Array).some((v) => v < -8 || v > 7)) fail(`weights ${k} (int4) hold a value outside [-8, 7]`);
    return new Tensor(dtype as Tensor['dtype'], shape, data);
  });
}

/**
 * Rebuilds a Network from its JSON description and weights blob (weights viewing the blob),
 * checking every reference and parameter, then running `check`. Whatever is wrong is a
 * BadModelError prefixed with `source` (e.g. `reference engine`).
 */
export function deserializeNetwork(description: unknown, blob: Uint8Array, source: string, check: NetworkCheck): Network {
  const fail: Fail = (message, cause) => {
    throw new BadModelError(`${source}: ${message}`, cause === undefined ? undefined : { cause });
  };
  if (!isLittleEndian) fail('serialized networks are little-endian; this host is big-endian');
  if (!isObject(description) || description.format !== NETWORK_FORMAT) fail(`the description is not a serialized network (format ${JSON.stringify(isObject(description) ? description.format : description)})`);
  const d = description as unknown as SerializedNetwork;
  for (const key of ['tensors', 'inputs', 'outputs', 'layers'] as const) if (!Array.isArray(d[key])) fail(`the description has no ${key} list`);
  const weights = loadWeights(d.weights, blob, fail);

  const net = new Network(typeof d.name === 'string' ? d.name : 'network');
  d.tensors.forEach((t: unknown, id) => {
    if (!isObject(t) || typeof t.name !== 'string' || !Number.isInteger(t.producer)) fail(`tensor ${id} is malformed`);
    net.tensors.push({ id, name: t.name, dtype: t.dtype, shape: t.shape, producer: t.producer } as NetTensor);
  });
  d.inputs.forEach((i: unknown, k) => {
    if (!isObject(i) || typeof i.name !== 'string' || !Array.isArray(i.profiles)) fail(`input ${k} is malformed`);
    const profiles = i.profiles.map((p: unknown, j) => {
      if (!isObject(p) || !isIntList(p.min) || !isIntList(p.opt) || !isIntList(p.max)) fail(`input "${i.name}" profile ${j} is malformed`);
      return { min: p.min, opt: p.opt, max: p.max };
    });
    net.inputs.push({ tensor: i.tensor as number, name: i.name, profiles });
  });
  d.outputs.forEach((o: unknown, k) => {
    if (!isObject(o) || typeof o.name !== 'string') fail(`output ${k} is malformed`);
    net.outputs.push({ tensor: o.tensor as number, name: o.name });
  });
  d.layers.forEach((l: unknown, index) => {
    const label = `layer ${index}${isObject(l) && typeof l.name === 'string' ? ` "${l.name}"` : ''}`;
    if (!isObject(l) || typeof l.name !== 'string' || !Array.isArray(l.inputs) || !isIntList(l.outputs)) fail(`${label} is malformed`);
    if (!l.inputs.every((x) => x === null || Number.isInteger(x))) fail(`${label} has malformed inputs ${JSON.stringify(l.inputs)}`);
    const params = checkParams(decodeParams(l.params, weights, label, fail), label, fail);
    net.layers.push({ index, name: l.name, params, inputs: l.inputs as Array<number | null>, outputs: l.outputs });
  });
  check(net, fail);
  return net;
}

/**
 * Reads a container of `magic` and one of `versions` (lib/io/json-blobs.ts) and deserializes
 * its Network as {@link deserializeNetwork}; `describeMagic` words a wrong magic.
 */
export function deserializeNetworkFromBuffer(
  bytes: Uint8Array,
  label: string,
  check: NetworkCheck,
  options: { magic?: string; versions?: readonly number[]; wrongMagic?: (found: string) => string } = {},
): Network {
  const magic = options.magic ?? NETWORK_MAGIC;
  let container;
  try {
    container = unpackContainer(bytes, magic, options.versions ?? [NETWORK_FORMAT_VERSION]);
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    const message = e instanceof MagicError && options.wrongMagic !== undefined ? options.wrongMagic(e.found) : e.message;
    throw new BadModelError(`${label}: ${message}`, { cause: e });
  }
  return deserializeNetwork(container.json, container.blob, label, check);
}
