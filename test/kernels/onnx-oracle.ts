/**
 * Test oracle: builds a small ONNX graph (opset 17, IR version 8) with onnx-proto and runs it
 * in onnxruntime-node, so kernel tests compare with an independent implementation.
 */
import { Worker } from 'node:worker_threads';

import { dtypeInfo, type DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/tensor';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** ONNX TensorProto.DataType codes of the dtypes onnxruntime-node can exchange. */
const ELEM: Partial<Record<DType, number>> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
};

/** An attribute value with its ONNX type spelled out (1 and 1.0 differ in ONNX). */
export type Attr = { i: number } | { f: number } | { ints: number[] } | { floats: number[] } | { s: string };

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Record<string, Attr>;
}

function attributeProto(name: string, a: Attr): object {
  if ('i' in a) return { name, type: 2, i: a.i };
  if ('f' in a) return { name, type: 1, f: a.f };
  if ('ints' in a) return { name, type: 7, ints: a.ints };
  if ('floats' in a) return { name, type: 6, floats: a.floats };
  return { name, type: 3, s: Buffer.from(a.s) };
}

function elemType(dtype: DType): number {
  const e = ELEM[dtype];
  if (e === undefined) throw new Error(`onnx-oracle: ${dtype} has no onnxruntime-node mapping`);
  return e;
}

function valueInfo(name: string, dtype: DType, shape?: readonly number[]): object {
  const tensorType: Record<string, unknown> = { elemType: elemType(dtype) };
  if (shape !== undefined) tensorType.shape = { dim: shape.map((d) => ({ dimValue: d })) };
  return { name, type: { tensorType } };
}

// Jest runs tests in a vm context whose typed-array constructors are not the ones
// onnxruntime's native binding uses, and ort's own instanceof checks then reject its outputs.
// So onnxruntime runs in a worker thread (a plain Node realm) and results are copied back.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
parentPort.on('message', async ({ id, model, feeds, outputs }) => {
  let session;
  try {
    session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
    const inputs = {};
    for (const [name, t] of Object.entries(feeds)) inputs[name] = new ort.Tensor(t.type, t.data, t.dims);
    const results = await session.run(inputs);
    const out = {};
    for (const name of outputs) out[name] = { type: results[name].type, data: results[name].data.slice(), dims: [...results[name].dims] };
    parentPort.postMessage({ id, outputs: out });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message ? e.message : e) });
  } finally {
    if (session) await session.release();
  }
});
`;

interface Wire {
  type: string;
  data: ArrayLike<number | bigint>;
  dims: number[];
}
type Reply = { id: number; outputs?: Record<string, Wire>; error?: string };

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, (reply: Reply) => void>();

function ortWorker(): Worker {
  if (worker === undefined) {
    worker = new Worker(workerSource, { eval: true, workerData: { ortPath: require.resolve('onnxruntime-node') } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      pending.get(reply.id)?.(reply);
      pending.delete(reply.id);
    });
  }
  return worker;
}

afterAll(async () => {
  const w = worker;
  worker = undefined;
  if (w !== undefined) await w.terminate();
});

function toWire(t: Tensor): Wire {
  if (ELEM[t.dtype] === undefined) throw new Error(`onnx-oracle: ${t.dtype} cannot be passed to onnxruntime`);
  return { type: t.dtype, data: t.data.slice(), dims: [...t.shape] };
}

/** Copies a result into this realm's typed array (float16 as its raw bits). */
function fromWire(w: Wire): Tensor {
  const dtype = w.type as DType;
  elemType(dtype);
  const info = dtypeInfo(dtype);
  const data = new info.storage(w.data.length);
  const src = w.data as unknown as { buffer: ArrayBuffer; byteOffset: number; BYTES_PER_ELEMENT: number };
  if (dtype === 'float16' && src.BYTES_PER_ELEMENT === 2) (data as Uint16Array).set(new Uint16Array(src.buffer, src.byteOffset, w.data.length));
  else for (let i = 0; i < w.data.length; i++) (data as unknown as { [i: number]: unknown })[i] = w.data[i];
  return new Tensor(dtype, w.dims, data);
}

/**
 * Runs a graph of `nodes` on named inputs and returns the named outputs; `outputs` gives
 * each output's dtype (the graph declares it).
 */
export async function runOnnx(
  nodes: OnnxNode[],
  inputs: Record<string, Tensor>,
  outputs: Record<string, DType>,
): Promise<Record<string, Tensor>> {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'oracle',
      node: nodes.map((n, i) => ({
        name: `n${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attrs ?? {}).map(([k, a]) => attributeProto(k, a)),
      })),
      input: Object.entries(inputs).map(([name, t]) => valueInfo(name, t.dtype, t.shape)),
      output: Object.entries(outputs).map(([name, dtype]) => valueInfo(name, dtype)),
    },
  });
  const feeds: Record<string, Wire> = {};
  for (const [name, t] of Object.entries(inputs)) feeds[name] = toWire(t);
  const w = ortWorker();
  const id = nextId++;
  const reply = await new Promise<Reply>((resolve) => {
    pending.set(id, resolve);
    w.postMessage({ id, model: onnx.ModelProto.encode(model).finish(), feeds, outputs: Object.keys(outputs) });
  });
  if (reply.error !== undefined) throw new Error(`onnxruntime (${nodes.map((n) => n.op).join(', ')}): ${reply.error}`);
  const out: Record<string, Tensor> = {};
  for (const name of Object.keys(outputs)) out[name] = fromWire(reply.outputs![name]!);
  return out;
}

/** Runs a single node `op` with inputs named in order and one output `y`. */
export async function runOnnxOp(op: string, inputs: Tensor[], outDtype: DType, attrs?: Record<string, Attr>): Promise<Tensor> {
  const names = inputs.map((_, i) => `x${i}`);
  const feeds = Object.fromEntries(inputs.map((t, i) => [names[i]!, t]));
  const { y } = await runOnnx([{ op, inputs: names, outputs: ['y'], attrs }], feeds, { y: outDtype });
  return y!;
}

/** Asserts dtype, shape and values within atol + rtol·|expected| (NaN matches NaN, infinities exactly). */
export function expectClose(actual: Tensor, expected: Tensor, rtol = 1e-4, atol = 1e-5): void {
  expect(actual.dtype).toBe(expected.dtype);
  expect([...actual.shape]).toEqual([...expected.shape]);
  const a = actual.toArray();
  const e = expected.toArray();
  const bad: string[] = [];
  for (let i = 0; i < e.length; i++) {
    const x = a[i]!;
    const y = e[i]!;
    const ok = Number.isNaN(y) ? Number.isNaN(x) : !Number.isFinite(y) ? x === y : Math.abs(x - y) <= atol + rtol * Math.abs(y);
    if (!ok && bad.length < 5) bad.push(`[${i}] got ${x}, expected ${y}`);
  }
  if (bad.length > 0) throw new Error(`values differ:\n${bad.join('\n')}`);
}

/** Asserts a tensor's dtype, shape and exact values (NaN matches NaN). */
export function expectTensor(actual: Tensor, dtype: DType, shape: readonly number[], values: readonly number[]): void {
  expect(actual.dtype).toBe(dtype);
  expect([...actual.shape]).toEqual([...shape]);
  expect(actual.toArray()).toEqual([...values]);
}
