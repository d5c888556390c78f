/**
 * Runs one ONNX operator through onnxruntime-node, to get reference outputs for kernel
 * tests: builds a single-node model (ir_version 8, opset 17 unless told otherwise) with
 * onnx-proto, feeds our Tensors in and converts the results back to Tensors.
 */
import { Worker } from 'node:worker_threads';

import { dtypeInfo, type DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/tensor';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** A float attribute whose value happens to be an integer (plain numbers that are integers become INT). */
export interface FloatAttr {
  readonly float: number;
}
/** A FLOATS attribute (plain number arrays become INTS). */
export interface FloatsAttr {
  readonly floats: readonly number[];
}
/** An attribute value: integers → INT, other numbers → FLOAT, number[] → INTS, string → STRING, Tensor → TENSOR. */
export type OrtAttribute = number | string | readonly number[] | readonly string[] | FloatAttr | FloatsAttr | Tensor;

/** An input fed at run time (a Tensor), baked into the model as an initializer ({ constant }), or omitted (null). */
export type OrtInput = Tensor | { readonly constant: Tensor } | null;

/** One ONNX node to run: its op type, inputs in order, attributes and how many outputs to fetch. */
export interface OrtOpSpec {
  readonly opType: string;
  readonly inputs: readonly OrtInput[];
  /** Attributes by name; undefined entries are left out. */
  readonly attributes?: Readonly<Record<string, OrtAttribute | undefined>>;
  /** Number of outputs to fetch (default 1). */
  readonly outputCount?: number;
  /** Default 17. */
  readonly opset?: number;
  /** Operator domain (default the ONNX domain ''). */
  readonly domain?: string;
}

/** Marks a float attribute (e.g. `alpha: floatAttr(1)`), which a bare integer would not be. */
export const floatAttr = (value: number): FloatAttr => ({ float: value });
/** Marks a FLOATS attribute. */
export const floatsAttr = (values: readonly number[]): FloatsAttr => ({ floats: values });

const onnxTypes: Partial<Record<DType, number>> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
};

const ortTypes: Partial<Record<DType, string>> = {
  float32: 'float32',
  float16: 'float16',
  float64: 'float64',
  int8: 'int8',
  uint8: 'uint8',
  int32: 'int32',
  int64: 'int64',
  bool: 'bool',
};

const fromOrtType: Record<string, DType> = {
  float32: 'float32',
  float16: 'float16',
  float64: 'float64',
  int8: 'int8',
  uint8: 'uint8',
  int32: 'int32',
  int64: 'int64',
  bool: 'bool',
};

function onnxType(dtype: DType): number {
  const t = onnxTypes[dtype];
  if (t === undefined) throw new Error(`runOrtOp: ${dtype} is not supported by this helper`);
  return t;
}

function tensorProto(name: string, t: Tensor): unknown {
  const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();
  return onnx.TensorProto.create({ name, dims: [...t.shape], dataType: onnxType(t.dtype), rawData: bytes });
}

function valueInfo(name: string, t: Tensor): unknown {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: { elemType: onnxType(t.dtype), shape: { dim: t.shape.map((d) => ({ dimValue: d })) } },
    },
  });
}

function attributeProto(name: string, value: OrtAttribute): unknown {
  const T = onnx.AttributeProto.AttributeType;
  if (value instanceof Tensor) return { name, type: T.TENSOR, t: tensorProto(name, value) };
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { name, type: T.INT, i: value } : { name, type: T.FLOAT, f: value };
  }
  if (typeof value === 'string') return { name, type: T.STRING, s: Buffer.from(value, 'utf8') };
  if ('float' in value) return { name, type: T.FLOAT, f: value.float };
  if ('floats' in value) return { name, type: T.FLOATS, floats: [...value.floats] };
  const list = value as readonly (number | string)[];
  if (list.length > 0 && typeof list[0] === 'string') {
    return { name, type: T.STRINGS, strings: list.map((s) => Buffer.from(String(s), 'utf8')) };
  }
  return { name, type: T.INTS, ints: [...(list as number[])] };
}

/** The serialized one-node model (exported for debugging a failing comparison). */
export function buildSingleOpModel(spec: OrtOpSpec): Uint8Array {
  const inputNames: string[] = [];
  const graphInputs: unknown[] = [];
  const initializers: unknown[] = [];
  spec.inputs.forEach((input, i) => {
    if (input === null) {
      inputNames.push('');
      return;
    }
    const name = `in${i}`;
    inputNames.push(name);
    if (input instanceof Tensor) graphInputs.push(valueInfo(name, input));
    else initializers.push(tensorProto(name, input.constant));
  });
  const outputNames = Array.from({ length: spec.outputCount ?? 1 }, (_, i) => `out${i}`);
  const node = onnx.NodeProto.create({
    opType: spec.opType,
    domain: spec.domain ?? '',
    input: inputNames,
    output: outputNames,
    attribute: Object.entries(spec.attributes ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [attributeProto(k, v)])),
  });
  const graph = onnx.GraphProto.create({
    name: `single_${spec.opType}`,
    node: [node],
    input: graphInputs,
    initializer: initializers,
    output: outputNames.map((name) => onnx.ValueInfoProto.create({ name })),
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'tensorrt-node-tests',
    opsetImport: [{ domain: spec.domain ?? '', version: spec.opset ?? 17 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

// Jest runs tests in a vm context whose typed-array constructors differ from the ones
// onnxruntime's native binding creates, and ort's `instanceof` checks then reject its own
// outputs. So onnxruntime runs in a worker thread (a plain Node realm); tensors cross as
// structured clones and are copied back into this realm's typed arrays.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
parentPort.on('message', async ({ id, model, feeds }) => {
  let session;
  try {
    session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled', logSeverityLevel: 3 });
    const inputs = {};
    for (const [name, t] of Object.entries(feeds)) inputs[name] = new ort.Tensor(t.type, t.data, t.dims);
    const results = await session.run(inputs);
    const outputs = {};
    for (const [name, t] of Object.entries(results)) outputs[name] = { type: t.type, data: t.data.slice(), dims: [...t.dims] };
    parentPort.postMessage({ id, outputs });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message ? e.message : e) });
  } finally {
    if (session) await session.release();
  }
});
`;

interface WireTensor {
  type: string;
  data: ArrayLike<number | bigint> & { length: number };
  dims: number[];
}
type Reply = { id: number; outputs?: Record<string, WireTensor>; error?: string };

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, (reply: Reply) => void>();

function ortWorker(): Worker {
  if (worker === undefined) {
    worker = new Worker(workerSource, { eval: true, workerData: { ortPath: require.resolve('onnxruntime-node') } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const resolve = pending.get(reply.id);
      pending.delete(reply.id);
      resolve?.(reply);
    });
  }
  return worker;
}

/** Stops the onnxruntime worker thread (registered with afterAll automatically when jest is present). */
export async function closeOrt(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w !== undefined) await w.terminate();
}

if (typeof afterAll === 'function') afterAll(closeOrt);

function toWire(t: Tensor): WireTensor {
  const type = ortTypes[t.dtype];
  if (type === undefined) throw new Error(`runOrtOp: ${t.dtype} is not supported by onnxruntime-node`);
  return { type, data: t.data.slice(), dims: [...t.shape] };
}

function fromWire(value: WireTensor): Tensor {
  const dtype = fromOrtType[value.type];
  if (dtype === undefined) throw new Error(`runOrtOp: onnxruntime returned an unsupported type ${value.type}`);
  const info = dtypeInfo(dtype);
  const data = new info.storage(value.data.length);
  // float16 may arrive as a Float16Array where the runtime has one: copy its bits, not values.
  const src = value.data as unknown as { buffer: ArrayBuffer; byteOffset: number; BYTES_PER_ELEMENT: number };
  if (dtype === 'float16' && src.BYTES_PER_ELEMENT === 2) {
    data.set(new Uint16Array(src.buffer, src.byteOffset, value.data.length) as never);
  } else {
    for (let i = 0; i < value.data.length; i++) (data as { [i: number]: unknown })[i] = value.data[i];
  }
  return new Tensor(dtype, value.dims.map(Number), data);
}

/** Runs `spec` in onnxruntime (CPU) and returns its outputs as Tensors. */
export async function runOrtOp(spec: OrtOpSpec): Promise<Tensor[]> {
  const model = buildSingleOpModel(spec);
  const feeds: Record<string, WireTensor> = {};
  spec.inputs.forEach((input, i) => {
    if (input instanceof Tensor) feeds[`in${i}`] = toWire(input);
  });
  const w = ortWorker();
  const id = nextId++;
  const reply = await new Promise<Reply>((resolve) => {
    pending.set(id, resolve);
    w.postMessage({ id, model, feeds });
  });
  if (reply.error !== undefined) throw new Error(`onnxruntime ${spec.opType}: ${reply.error}`);
  const count = spec.outputCount ?? 1;
  return Array.from({ length: count }, (_, i) => fromWire(reply.outputs![`out${i}`]!));
}

/** Runs a whole serialized model in onnxruntime with `inputs` in the graph's input order. */
export async function runOrtModel(model: Uint8Array, inputs: readonly Tensor[]): Promise<Tensor[]> {
  const decoded = onnx.ModelProto.decode(model);
  const initializers = new Set<string>(decoded.graph.initializer.map((t: { name: string }) => t.name));
  const inputNames: string[] = decoded.graph.input.map((i: { name: string }) => i.name).filter((n: string) => !initializers.has(n));
  const outputNames: string[] = decoded.graph.output.map((o: { name: string }) => o.name);
  if (inputNames.length !== inputs.length) throw new Error(`runOrtModel: the model has ${inputNames.length} inputs, got ${inputs.length}`);
  const feeds: Record<string, WireTensor> = {};
  inputNames.forEach((name, i) => (feeds[name] = toWire(inputs[i]!)));
  const w = ortWorker();
  const id = nextId++;
  const reply = await new Promise<Reply>((resolve) => {
    pending.set(id, resolve);
    w.postMessage({ id, model, feeds });
  });
  if (reply.error !== undefined) throw new Error(`onnxruntime: ${reply.error}`);
  return outputNames.map((name) => fromWire(reply.outputs![name]!));
}
