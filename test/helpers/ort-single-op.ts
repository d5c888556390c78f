/**
 * Runs ONNX operators through onnxruntime-node, to get reference outputs for kernel tests:
 * builds a single-node model (runOrtOp) or a small multi-node graph (runOrtGraph) with
 * onnx-proto (ir_version 8, opset 17 unless told otherwise), or takes a whole serialized
 * model (runOrtModel), feeds our Tensors in and converts the results back to Tensors.
 */
import { Worker } from 'node:worker_threads';

import { ONNX_DTYPES } from '../../lib/backends/onnxruntime/layers/onnx-graph';
import { dtypeInfo, type DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';
import { StringTensor } from '../../lib/ir/values';

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

/** Attributes by name; undefined entries are left out. */
export type OrtAttributes = Readonly<Record<string, OrtAttribute | undefined>>;

/** An input fed at run time (a Tensor), baked into the model as an initializer ({ constant }), or omitted (null). */
export type OrtInput = Tensor | { readonly constant: Tensor } | null;

/** One ONNX node to run: its op type, inputs in order, attributes and how many outputs to fetch. */
export interface OrtOpSpec {
  readonly opType: string;
  readonly inputs: readonly OrtInput[];
  /** Attributes by name; undefined entries are left out. */
  readonly attributes?: OrtAttributes;
  /** Number of outputs to fetch (default 1). */
  readonly outputCount?: number;
  /** Default 17. */
  readonly opset?: number;
  /** Operator domain (default the ONNX domain ''). */
  readonly domain?: string;
}

/** One node of a multi-node graph (ONNX domain), wired to the others by tensor names. */
export interface OrtGraphNode {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes?: OrtAttributes;
}

/** A graph of several nodes, fed `inputs` by name, whose `outputs` are fetched by name. */
export interface OrtGraphSpec {
  readonly nodes: readonly OrtGraphNode[];
  readonly inputs: Readonly<Record<string, Tensor>>;
  readonly outputs: readonly string[];
  /** Default 17. */
  readonly opset?: number;
}

/** Marks a float attribute (e.g. `alpha: floatAttr(1)`), which a bare integer would not be. */
export const floatAttr = (value: number): FloatAttr => ({ float: value });
/** Marks a FLOATS attribute. */
export const floatsAttr = (values: readonly number[]): FloatsAttr => ({ floats: values });

/**
 * The dtypes this helper exchanges, with their ONNX TensorProto.DataType codes (the
 * onnxruntime backend's table, less bfloat16, which onnxruntime-node has no tensors for);
 * onnxruntime-node's tensor type names are the same as our dtype names.
 */
const onnxTypes: Partial<Record<DType, number>> = { ...ONNX_DTYPES, uint16: 4, int16: 5, uint32: 12, uint64: 13, bfloat16: undefined };

const isOrtType = (type: string): type is DType => typeof onnxTypes[type as DType] === 'number';

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

function nodeProto(opType: string, domain: string, inputs: readonly string[], outputs: readonly string[], attributes: OrtAttributes = {}): unknown {
  return onnx.NodeProto.create({
    opType,
    domain,
    input: inputs,
    output: outputs,
    attribute: Object.entries(attributes).flatMap(([k, v]) => (v === undefined ? [] : [attributeProto(k, v)])),
  });
}

/** The parts of a graph that differ between the model builders. */
interface GraphParts {
  readonly name: string;
  readonly nodes: readonly unknown[];
  readonly inputs: readonly unknown[];
  readonly initializers: readonly unknown[];
  readonly outputNames: readonly string[];
}

/** Serializes an ir_version 8 model of one graph whose outputs are declared by name only. */
function encodeModel(graph: GraphParts, domain: string, opset: number): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'tensorrt-node-tests',
    opsetImport: [{ domain, version: opset }],
    graph: onnx.GraphProto.create({
      name: graph.name,
      node: graph.nodes,
      input: graph.inputs,
      initializer: graph.initializers,
      output: graph.outputNames.map((name) => onnx.ValueInfoProto.create({ name })),
    }),
  });
  return onnx.ModelProto.encode(model).finish();
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
  const domain = spec.domain ?? '';
  const node = nodeProto(spec.opType, domain, inputNames, outputNames, spec.attributes);
  return encodeModel({ name: `single_${spec.opType}`, nodes: [node], inputs: graphInputs, initializers, outputNames }, domain, spec.opset ?? 17);
}

/** The serialized multi-node model (exported for debugging a failing comparison). */
export function buildGraphModel(spec: OrtGraphSpec): Uint8Array {
  return encodeModel(
    {
      name: 'graph',
      nodes: spec.nodes.map((n) => nodeProto(n.opType, '', n.inputs, n.outputs, n.attributes)),
      inputs: Object.entries(spec.inputs).map(([name, t]) => valueInfo(name, t)),
      initializers: [],
      outputNames: spec.outputs,
    },
    '',
    spec.opset ?? 17,
  );
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
  data: ArrayLike<number | bigint | string> & { length: number };
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

function toWire(t: Tensor | StringTensor): WireTensor {
  if (t instanceof StringTensor) return { type: 'string', data: [...t.data], dims: [...t.shape] };
  if (!isOrtType(t.dtype)) throw new Error(`runOrtOp: ${t.dtype} is not supported by onnxruntime-node`);
  return { type: t.dtype, data: t.data.slice(), dims: [...t.shape] };
}

function fromWire(value: WireTensor): Tensor {
  if (!isOrtType(value.type)) throw new Error(`runOrtOp: onnxruntime returned an unsupported type ${value.type}`);
  const dtype = value.type;
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

/**
 * Runs a serialized model in the worker on `feeds` (by input name) and returns the outputs
 * named in `outputNames`, in that order; `label` names the model in an error.
 */
async function runInWorker(model: Uint8Array, feeds: Readonly<Record<string, Tensor | StringTensor>>, outputNames: readonly string[], label: string): Promise<Tensor[]> {
  const values = await runValuesInWorker(model, feeds, outputNames, label);
  return values.map((v) => {
    if (!(v instanceof Tensor)) throw new Error('runOrtOp: onnxruntime returned a string tensor; use runOrtModelValues');
    return v;
  });
}

async function runValuesInWorker(
  model: Uint8Array,
  feeds: Readonly<Record<string, Tensor | StringTensor>>,
  outputNames: readonly string[],
  label: string,
): Promise<Array<Tensor | StringTensor>> {
  const wireFeeds: Record<string, WireTensor> = {};
  for (const [name, t] of Object.entries(feeds)) wireFeeds[name] = toWire(t);
  const w = ortWorker();
  const id = nextId++;
  const reply = await new Promise<Reply>((resolve) => {
    pending.set(id, resolve);
    w.postMessage({ id, model, feeds: wireFeeds });
  });
  if (reply.error !== undefined) throw new Error(`onnxruntime${label ? ` ${label}` : ''}: ${reply.error}`);
  return outputNames.map((name) => {
    const w = reply.outputs![name]!;
    return w.type === 'string' ? new StringTensor(w.dims.map(Number), Array.from(w.data as ArrayLike<string>)) : fromWire(w);
  });
}

/** Runs `spec` in onnxruntime (CPU) and returns its outputs as Tensors. */
export async function runOrtOp(spec: OrtOpSpec): Promise<Tensor[]> {
  const feeds: Record<string, Tensor> = {};
  spec.inputs.forEach((input, i) => {
    if (input instanceof Tensor) feeds[`in${i}`] = input;
  });
  const outputNames = Array.from({ length: spec.outputCount ?? 1 }, (_, i) => `out${i}`);
  return runInWorker(buildSingleOpModel(spec), feeds, outputNames, spec.opType);
}

/** Runs `spec` in onnxruntime (CPU) and returns its first (usually only) output. */
export async function runOrtOp1(spec: OrtOpSpec): Promise<Tensor> {
  const [output] = await runOrtOp(spec);
  return output!;
}

/** Runs the multi-node graph `spec` in onnxruntime (CPU) and returns its `outputs` in order. */
export async function runOrtGraph(spec: OrtGraphSpec): Promise<Tensor[]> {
  return runInWorker(buildGraphModel(spec), spec.inputs, spec.outputs, `graph (${spec.nodes.map((n) => n.opType).join(', ')})`);
}

/** {@link runOrtModel} for models whose inputs or outputs are string tensors. */
export async function runOrtModelValues(model: Uint8Array, inputs: ReadonlyArray<Tensor | StringTensor>): Promise<Array<Tensor | StringTensor>> {
  const decoded = onnx.ModelProto.decode(model);
  const inputNames: string[] = decoded.graph.input.map((i: { name: string }) => i.name);
  const outputNames: string[] = decoded.graph.output.map((o: { name: string }) => o.name);
  const feeds: Record<string, Tensor | StringTensor> = {};
  inputNames.forEach((name, i) => (feeds[name] = inputs[i]!));
  return runValuesInWorker(model, feeds, outputNames, '');
}

/** Runs a whole serialized model in onnxruntime with `inputs` in the graph's input order. */
export async function runOrtModel(model: Uint8Array, inputs: readonly Tensor[]): Promise<Tensor[]> {
  const decoded = onnx.ModelProto.decode(model);
  const initializers = new Set<string>(decoded.graph.initializer.map((t: { name: string }) => t.name));
  const inputNames: string[] = decoded.graph.input.map((i: { name: string }) => i.name).filter((n: string) => !initializers.has(n));
  const outputNames: string[] = decoded.graph.output.map((o: { name: string }) => o.name);
  if (inputNames.length !== inputs.length) throw new Error(`runOrtModel: the model has ${inputNames.length} inputs, got ${inputs.length}`);
  const feeds: Record<string, Tensor> = {};
  inputNames.forEach((name, i) => (feeds[name] = inputs[i]!));
  return runInWorker(model, feeds, outputNames, '');
}
