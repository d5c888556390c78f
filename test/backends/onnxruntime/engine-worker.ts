/**
 * Loads and runs onnxruntime engine bytes on a worker thread, through the built backend
 * (dist/backends/onnxruntime, so run `npm run build:ts` after changing lib/). Jest's vm
 * context has typed-array constructors of its own, which onnxruntime-common's instanceof
 * checks reject in its own outputs; a worker is a plain Node realm, as a program's worker
 * thread is in production. Tensors cross as structured clones.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { BadInputError, createError } from '../../../lib/errors';
import { Tensor } from '../../../lib/ir/tensor';

const DIST = path.join(__dirname, '..', '..', '..', 'dist');

const source = `
const { parentPort, workerData } = require('node:worker_threads');
const { onnxruntimeBackend } = require(workerData.dist + '/backends/onnxruntime');
const { Tensor } = require(workerData.dist + '/ir/tensor');
parentPort.on('message', async ({ id, engine, feeds }) => {
  let loaded;
  try {
    loaded = await onnxruntimeBackend.load(engine, null);
    const inputs = {};
    for (const [name, t] of Object.entries(feeds)) inputs[name] = new Tensor(t.dtype, t.shape, t.data);
    const out = await loaded.run(inputs);
    const outputs = {};
    for (const [name, t] of Object.entries(out)) outputs[name] = { dtype: t.dtype, shape: [...t.shape], data: t.data.slice() };
    parentPort.postMessage({ id, outputs });
  } catch (e) {
    parentPort.postMessage({ id, error: { code: e.code || 'E_INTERNAL', message: String(e && e.message ? e.message : e), details: e.details || {} } });
  } finally {
    if (loaded) loaded.dispose();
  }
});
`;

interface Wire {
  dtype: Tensor['dtype'];
  shape: number[];
  data: Tensor['data'];
}
type Reply = { id: number; outputs?: Record<string, Wire>; error?: { code: string; message: string; details: Record<string, unknown> } };

let worker: Worker | undefined;
let nextId = 0;
/** Requests go one at a time (each waits for the previous answer), so an answer is the last request's. */
let queue: Promise<unknown> = Promise.resolve();

function engineWorker(): Worker {
  worker ??= new Worker(source, { eval: true, workerData: { dist: DIST } });
  return worker;
}

if (typeof afterAll === 'function') {
  afterAll(async () => {
    const w = worker;
    worker = undefined;
    if (w !== undefined) await w.terminate();
  });
}

/** Copies typed-array data into this realm's storage type (postMessage gives the worker's realm's). */
function fromWire(w: Wire): Tensor {
  const probe = new Tensor(w.dtype, w.shape.map(() => 0));
  const Storage = probe.data.constructor as new (n: number) => Tensor['data'];
  const data = new Storage(w.data.length);
  (data as unknown as { set(v: unknown): void }).set(w.data);
  return new Tensor(w.dtype, w.shape, data);
}

/** Loads `engine` with the onnxruntime backend and runs it once; typed errors come back typed. */
export async function runOrtEngine(engine: Uint8Array, feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
  const id = nextId++;
  const wire: Record<string, Wire> = {};
  for (const [name, t] of Object.entries(feeds)) wire[name] = { dtype: t.dtype, shape: [...t.shape], data: t.data.slice() };
  const ask = queue.then(
    () =>
      new Promise<Reply>((resolve) => {
        const w = engineWorker();
        w.ref();
        w.once('message', (reply: Reply) => {
          w.unref();
          resolve(reply);
        });
        w.postMessage({ id, engine: engine.slice(), feeds: wire });
      }),
  );
  queue = ask.catch(() => undefined);
  const reply = await ask;
  if (reply.error !== undefined) throw createError(reply.error.code, reply.error.message, reply.error.details);
  if (reply.outputs === undefined) throw new BadInputError('the engine worker returned nothing');
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(reply.outputs)) out[name] = fromWire(t);
  return out;
}
