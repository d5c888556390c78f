/**
 * The reference backend's "engine": a Network serialized into one Uint8Array.
 *
 * Layout (little-endian):
 *
 *   offset  0  magic 'TRTNREF1' (8 ASCII bytes)
 *   offset  8  uint32 format version ({@link ENGINE_FORMAT_VERSION})
 *   offset 12  uint32 byte length J of the JSON description
 *   offset 16  uint64 byte length B of the weights blob
 *   offset 24  the JSON description (UTF-8), then zero padding to a multiple of 8
 *   then       the weights blob: B bytes, every tensor at an 8-byte aligned offset
 *
 * The JSON holds the network's name, its tensors (name, dtype, shape, producer), inputs with
 * their optimization profiles, outputs and layers. Layer parameters are stored as they are in
 * LayerParams, except that a Tensor (constant weights, convolution kernels and biases)
 * becomes {"$weights": k}, the k-th entry of `weights` ({dtype, shape, offset, byteLength}
 * into the blob), and a non-finite number becomes {"$number": "Infinity" | "-Infinity" | "NaN"}.
 *
 * Loading is zero-copy: weight tensors view the engine's own bytes (so the bytes must not be
 * changed while a runner uses them). Only where the bytes sit at an offset that does not
 * suit a typed array is the blob copied once. Every reference and layer is checked on load;
 * whatever is wrong is a BadModelError that names it.
 */
import { BadModelError } from '../../errors';
import { dtypeInfo, type TypedArray } from '../../ir/dtype';
import {
  Network,
  TRT_DTYPES,
  type ActivationType,
  type ElementWiseOp,
  type GatherMode,
  type LayerKind,
  type LayerParams,
  type MatrixOp,
  type NetTensor,
  type NetworkInput,
  type NetworkOutput,
  type ReduceOp,
  type ResizeCoordinateTransformation,
  type ResizeMode,
  type ResizeRoundMode,
  type ResizeSelector,
  type SampleMode,
  type UnaryOp,
} from '../../network';
import { shapeSize, Tensor } from '../../tensor';
import { VERSION } from '../../version';
import { checkNetwork } from './check-network';

export const ENGINE_MAGIC = 'TRTNREF1';
export const ENGINE_FORMAT_VERSION = 1;
/** Magic, version, JSON length, blob length. */
export const ENGINE_HEADER_BYTES = 24;

const ALIGN = 8;
const align = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;

interface WeightsRecord {
  dtype: string;
  shape: number[];
  offset: number;
  byteLength: number;
}

/** The JSON part of an engine. */
interface EngineDescription {
  format: string;
  producer: { library: string; version: string };
  name: string;
  tensors: Array<{ name: string; dtype: string; shape: number[]; producer: number }>;
  inputs: NetworkInput[];
  outputs: NetworkOutput[];
  layers: Array<{ name: string; params: unknown; inputs: Array<number | null>; outputs: number[] }>;
  weights: WeightsRecord[];
}

const FORMAT_NAME = 'tensorrt-node reference engine';

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/** Replaces Tensors and non-finite numbers in layer parameters by their JSON stand-ins. */
function encodeParams(value: unknown, addWeights: (t: Tensor) => number): unknown {
  if (value instanceof Tensor) return { $weights: addWeights(value) };
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $number: String(value) };
  if (Array.isArray(value)) return value.map((v) => encodeParams(v, addWeights));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = encodeParams(v, addWeights);
    return out;
  }
  return value;
}

/** Serializes a Network (assumed checked) into engine bytes. */
export function serializeEngine(network: Network): Uint8Array {
  if (!isLittleEndian) throw new BadModelError('reference engines are little-endian; this host is big-endian');
  const weights: WeightsRecord[] = [];
  const payloads: TypedArray[] = [];
  const seen = new Map<Tensor, number>();
  let blobLength = 0;
  const addWeights = (t: Tensor): number => {
    const known = seen.get(t);
    if (known !== undefined) return known;
    const byteLength = t.data.byteLength;
    weights.push({ dtype: t.dtype, shape: [...t.shape], offset: blobLength, byteLength });
    payloads.push(t.data);
    blobLength = align(blobLength + byteLength);
    seen.set(t, weights.length - 1);
    return weights.length - 1;
  };
  const description: EngineDescription = {
    format: FORMAT_NAME,
    producer: { library: 'tensorrt-node', version: VERSION },
    name: network.name,
    tensors: network.tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: [...t.shape], producer: t.producer })),
    inputs: network.inputs.map((i) => ({ tensor: i.tensor, name: i.name, profiles: i.profiles })),
    outputs: network.outputs.map((o) => ({ tensor: o.tensor, name: o.name })),
    layers: network.layers.map((l) => ({ name: l.name, params: encodeParams(l.params, addWeights), inputs: [...l.inputs], outputs: [...l.outputs] })),
    weights,
  };
  const json = new TextEncoder().encode(JSON.stringify(description));
  const blobStart = align(ENGINE_HEADER_BYTES + json.length);
  const bytes = new Uint8Array(blobStart + blobLength);
  bytes.set(new TextEncoder().encode(ENGINE_MAGIC), 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, ENGINE_FORMAT_VERSION, true);
  view.setUint32(12, json.length, true);
  view.setBigUint64(16, BigInt(blobLength), true);
  bytes.set(json, ENGINE_HEADER_BYTES);
  weights.forEach((w, k) => {
    const data = payloads[k]!;
    bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), blobStart + w.offset);
  });
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

function bad(message: string, cause?: unknown): never {
  throw new BadModelError(`reference engine: ${message}`, cause === undefined ? undefined : { cause });
}

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
type FieldSpec = 'int' | 'number' | 'bool' | 'ints' | 'numbers' | 'tensor' | 'tensor|null' | 'dtype' | readonly string[];
type ParamSpec = Record<string, FieldSpec | { optional: FieldSpec }>;

const opt = (f: FieldSpec): { optional: FieldSpec } => ({ optional: f });
const convSpec: ParamSpec = {
  nbOutputMaps: 'int', kernelSize: 'ints', stride: 'ints', prePadding: 'ints', postPadding: 'ints', dilation: 'ints',
  groups: 'int', kernel: 'tensor', bias: 'tensor|null',
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
    paddingMode: ['explicit_round_down', 'explicit_round_up'], averageCountExcludesPadding: 'bool',
  },
  normalization: { axes: 'ints', epsilon: 'number', nbGroups: 'int' },
  resize: {
    mode: RESIZE_MODES, outputDims: 'ints', coordinateTransformation: COORDINATE_TRANSFORMS, selector: SELECTORS,
    nearestRounding: ROUND_MODES,
  },
  topk: { op: ['max', 'min'], k: 'int', axis: 'int', indicesType: ['int32', 'int64'] },
  cumulative: { op: ['sum'], axis: 'int', exclusive: 'bool', reverse: 'bool' },
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
  }
  return false;
}

const specName = (spec: FieldSpec): string => (Array.isArray(spec) ? `one of ${spec.join('/')}` : (spec as string));

/** Checks decoded layer parameters against PARAM_SPECS. */
function checkParams(params: unknown, label: string): LayerParams {
  if (!isObject(params) || typeof params.kind !== 'string' || !Object.hasOwn(PARAM_SPECS, params.kind)) {
    bad(`${label} has unknown kind ${JSON.stringify(isObject(params) ? params.kind : params)}`);
  }
  const spec = PARAM_SPECS[params.kind as LayerKind];
  for (const [field, f] of Object.entries(spec)) {
    const optional = typeof f === 'object' && !Array.isArray(f) && 'optional' in f;
    const fs = optional ? (f as { optional: FieldSpec }).optional : (f as FieldSpec);
    const value = params[field];
    if (value === undefined && optional) continue;
    if (!fieldOk(value, fs)) bad(`${label} (${params.kind}): parameter ${field} must be ${specName(fs)}, got ${JSON.stringify(value)}`);
  }
  for (const field of Object.keys(params)) {
    if (field !== 'kind' && !Object.hasOwn(spec, field)) bad(`${label} (${params.kind}): unknown parameter ${field}`);
  }
  return params as unknown as LayerParams;
}

/** Reverses encodeParams, resolving {"$weights": k} against the loaded weight tensors. */
function decodeParams(value: unknown, weights: readonly Tensor[], label: string): unknown {
  if (Array.isArray(value)) return value.map((v) => decodeParams(v, weights, label));
  if (isObject(value)) {
    const fields = Object.keys(value);
    if (fields.length === 1 && fields[0] === '$weights') {
      const k = value.$weights;
      if (!Number.isInteger(k) || (k as number) < 0 || (k as number) >= weights.length) bad(`${label} refers to weights ${JSON.stringify(k)}, which do not exist`);
      return weights[k as number];
    }
    if (fields.length === 1 && fields[0] === '$number') {
      const n = value.$number;
      if (n !== 'Infinity' && n !== '-Infinity' && n !== 'NaN') bad(`${label} has an invalid number ${JSON.stringify(n)}`);
      return Number(n);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') bad(`${label} has a parameter named __proto__`);
      out[k] = decodeParams(v, weights, label);
    }
    return out;
  }
  return value;
}

/** The engine bytes as a Uint8Array of this realm (Buffers and other views accepted). */
function asBytes(engine: unknown): Uint8Array {
  if (!ArrayBuffer.isView(engine) || engine instanceof DataView || (engine as Uint8Array).BYTES_PER_ELEMENT !== 1) {
    bad(`engine bytes must be a Uint8Array, got ${engine === null ? 'null' : typeof engine === 'object' ? ((engine as object).constructor?.name ?? 'an object') : typeof engine}`);
  }
  const view = engine as Uint8Array;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Views (or, where the offset does not suit the element size, copies) each weights record out of the blob. */
function loadWeights(records: unknown, bytes: Uint8Array, blobStart: number, blobLength: number): Tensor[] {
  if (!Array.isArray(records)) bad('the description has no weights list');
  let source = bytes;
  let base = blobStart;
  // Typed arrays need offsets that are multiples of their element size; the blob is 8-byte
  // aligned within the engine, so only a misaligned engine buffer needs the one copy.
  if ((bytes.byteOffset + blobStart) % ALIGN !== 0) {
    source = bytes.slice(blobStart, blobStart + blobLength);
    base = 0;
  }
  return records.map((r: unknown, k) => {
    if (!isObject(r)) bad(`weights ${k} is not an object`);
    const { dtype, shape, offset, byteLength } = r;
    if (typeof dtype !== 'string' || !(TRT_DTYPES as readonly string[]).includes(dtype)) bad(`weights ${k} has an invalid dtype ${JSON.stringify(dtype)}`);
    if (!isIntList(shape) || shape.some((d) => d < 0)) bad(`weights ${k} has an invalid shape ${JSON.stringify(shape)}`);
    const info = dtypeInfo(dtype as Tensor['dtype']);
    const expected = shapeSize(shape) * info.itemBytes;
    if (!Number.isInteger(offset) || (offset as number) < 0 || (offset as number) % ALIGN !== 0) bad(`weights ${k} has an invalid offset ${JSON.stringify(offset)}`);
    if (byteLength !== expected) bad(`weights ${k} (${dtype}[${shape.join(', ')}]) records ${JSON.stringify(byteLength)} bytes, its shape needs ${expected}`);
    if ((offset as number) + expected > blobLength) bad(`weights ${k} (bytes ${offset}..${(offset as number) + expected}) lie outside the ${blobLength}-byte blob`);
    const data = new info.storage(source.buffer as ArrayBuffer, source.byteOffset + base + (offset as number), shapeSize(shape));
    return new Tensor(dtype as Tensor['dtype'], shape, data);
  });
}

/** Reads the header and returns the JSON text and where the blob lies; checks lengths. */
function readHeader(bytes: Uint8Array): { json: Uint8Array; blobStart: number; blobLength: number } {
  if (bytes.length < ENGINE_HEADER_BYTES) bad(`truncated: ${bytes.length} bytes, the header alone needs ${ENGINE_HEADER_BYTES}`);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== ENGINE_MAGIC) {
    bad(`not a reference engine: the bytes start with ${JSON.stringify(magic)}, expected ${JSON.stringify(ENGINE_MAGIC)} (a TensorRT plan needs the tensorrt backend)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== ENGINE_FORMAT_VERSION) bad(`format version ${version} is not supported (this build reads version ${ENGINE_FORMAT_VERSION}); rebuild the engine`);
  const jsonLength = view.getUint32(12, true);
  const blobLength64 = view.getBigUint64(16, true);
  if (blobLength64 > BigInt(Number.MAX_SAFE_INTEGER)) bad(`the header records an impossible weights size of ${blobLength64} bytes`);
  const blobLength = Number(blobLength64);
  const blobStart = align(ENGINE_HEADER_BYTES + jsonLength);
  const total = blobStart + blobLength;
  if (bytes.length < total) bad(`truncated: ${bytes.length} bytes, the header records ${total} (description ${jsonLength}, weights ${blobLength})`);
  if (bytes.length > total) bad(`${bytes.length - total} unexpected bytes after the weights (the header records ${total} bytes in all)`);
  return { json: bytes.subarray(ENGINE_HEADER_BYTES, ENGINE_HEADER_BYTES + jsonLength), blobStart, blobLength };
}

/**
 * Loads engine bytes back into a Network (weights viewing the bytes), checking everything:
 * malformed or inconsistent bytes are a BadModelError that names the problem.
 */
export function deserializeEngine(engine: Uint8Array): Network {
  if (!isLittleEndian) bad('reference engines are little-endian; this host is big-endian');
  const bytes = asBytes(engine);
  const { json, blobStart, blobLength } = readHeader(bytes);
  let description: unknown;
  try {
    description = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (e) {
    bad(`the description is not valid JSON (${(e as Error).message})`, e);
  }
  if (!isObject(description) || description.format !== FORMAT_NAME) bad('the description is not a reference engine description');
  const d = description as unknown as EngineDescription;
  for (const key of ['tensors', 'inputs', 'outputs', 'layers'] as const) if (!Array.isArray(d[key])) bad(`the description has no ${key} list`);
  const weights = loadWeights(d.weights, bytes, blobStart, blobLength);

  const net = new Network(typeof d.name === 'string' ? d.name : 'network');
  d.tensors.forEach((t: unknown, id) => {
    if (!isObject(t) || typeof t.name !== 'string' || !Number.isInteger(t.producer)) bad(`tensor ${id} is malformed`);
    net.tensors.push({ id, name: t.name, dtype: t.dtype, shape: t.shape, producer: t.producer } as NetTensor);
  });
  d.inputs.forEach((i: unknown, k) => {
    if (!isObject(i) || typeof i.name !== 'string' || !Array.isArray(i.profiles)) bad(`input ${k} is malformed`);
    const profiles = i.profiles.map((p: unknown, j) => {
      if (!isObject(p) || !isIntList(p.min) || !isIntList(p.opt) || !isIntList(p.max)) bad(`input "${i.name}" profile ${j} is malformed`);
      return { min: p.min, opt: p.opt, max: p.max };
    });
    net.inputs.push({ tensor: i.tensor as number, name: i.name, profiles });
  });
  d.outputs.forEach((o: unknown, k) => {
    if (!isObject(o) || typeof o.name !== 'string') bad(`output ${k} is malformed`);
    net.outputs.push({ tensor: o.tensor as number, name: o.name });
  });
  d.layers.forEach((l: unknown, index) => {
    const label = `layer ${index}${isObject(l) && typeof l.name === 'string' ? ` "${l.name}"` : ''}`;
    if (!isObject(l) || typeof l.name !== 'string' || !Array.isArray(l.inputs) || !isIntList(l.outputs)) bad(`${label} is malformed`);
    if (!l.inputs.every((x) => x === null || Number.isInteger(x))) bad(`${label} has malformed inputs ${JSON.stringify(l.inputs)}`);
    const params = checkParams(decodeParams(l.params, weights, label), label);
    net.layers.push({ index, name: l.name, params, inputs: l.inputs as Array<number | null>, outputs: l.outputs });
  });
  checkNetwork(net, bad);
  return net;
}
