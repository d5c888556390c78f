/**
 * Running the float model over the calibration batches and handing back the tensors to
 * observe. The tensors that feed the chosen ops become extra outputs of the ONNX model itself
 * (a graph output keeps its producer's value; no node changes), and that model runs in one of
 * two places:
 *
 * - onnxruntime (`OrtObserver`), on a worker thread: its kernels are native and multithreaded,
 *   50-100× faster than our interpreter on the CPU (docs/onnxruntime-backend.md measures the
 *   reference backend against it), which on a 2-core machine decides how many batches a
 *   calibration can afford. A worker keeps the caller's event loop free during a run, lets an
 *   abort stop a run midway (the worker is terminated), and gives onnxruntime a plain Node
 *   realm: in a vm context (jest's) its typed-array checks reject its own outputs.
 * - our interpreter (`InterpreterObserver`), over the same extended model imported with
 *   loadOnnx: where onnxruntime-node is not installed, or when asked for.
 *
 * Observing the ONNX model's own tensors, rather than the imported IR graph's values, keeps the
 * names the Q/DQ nodes are inserted at: the importer folds and renames values.
 */
import { Worker } from 'node:worker_threads';

import { BackendUnavailableError, BadInputError, BadModelError, TensorRTNodeError } from '../errors';
import { abortedError } from '../engine/build-context';
import { loadOnnx } from '../frontends/onnx';
import type { Graph } from '../ir/graph';
import { Tensor } from '../ir/tensor';
import { interpret } from '../interpreter';
import { ORT_INSTALL_HINT, ORT_PACKAGE } from '../backends/onnxruntime/ort-module';
import { encodeModel, type FloatModel } from './onnx-model';

/** An observed tensor's values: float32 ones are read, others only named by their type. */
export interface Observed {
  readonly dtype: string;
  readonly data: ArrayLike<number> | undefined;
}

export interface Observer {
  readonly kind: 'onnxruntime' | 'interpreter';
  /** Runs one batch and returns the tensors named in `fetch`. */
  run(feeds: Readonly<Record<string, Tensor>>, fetch: readonly string[], signal: AbortSignal | undefined): Promise<Map<string, Observed>>;
  close(): Promise<void>;
}

/**
 * The model's bytes with `observe` added to its outputs (by name only: onnxruntime and our
 * importer infer their types); names already outputs are not repeated. The model is restored.
 */
export function withObservedOutputs(model: FloatModel, observe: readonly string[]): Uint8Array {
  const outputs = model.graph.output ?? [];
  const existing = new Set(outputs.map((o) => o.name ?? ''));
  const extra = observe.filter((name) => !existing.has(name)).map((name) => ({ name }));
  const saved = model.graph.output;
  model.graph.output = [...outputs, ...extra] as typeof saved;
  try {
    return encodeModel(model.model);
  } finally {
    model.graph.output = saved;
  }
}

const observedOf = (t: { dtype: string; data: unknown }): Observed => ({ dtype: t.dtype, data: t.dtype === 'float32' ? (t.data as Float32Array) : undefined });

// The worker: loads onnxruntime-node, creates one session from the model bytes, and runs it on
// the feeds it is sent, fetching only the observed tensors. Plain JavaScript (eval'd), so it
// needs no build output: it runs the same from lib/ (tests) and dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let ort;
let session;
parentPort.on('message', async (m) => {
  try {
    if (m.kind === 'load') {
      ort = require(workerData.ortPath);
      parentPort.postMessage({ id: m.id });
    } else if (m.kind === 'open') {
      session = await ort.InferenceSession.create(m.model, { graphOptimizationLevel: 'all', logSeverityLevel: 3 });
      parentPort.postMessage({ id: m.id });
    } else if (m.kind === 'close') {
      if (session) await session.release();
      session = undefined;
      parentPort.postMessage({ id: m.id });
    } else {
      const feeds = {};
      for (const [name, t] of Object.entries(m.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
      const results = await session.run(feeds, m.fetch);
      const outputs = {};
      for (const name of m.fetch) {
        const t = results[name];
        outputs[name] = { dtype: t.type, data: t.type === 'float32' ? t.data : undefined };
      }
      parentPort.postMessage({ id: m.id, outputs });
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.message ? e.message : e) });
  }
});
`;

interface Reply {
  id: number;
  error?: string;
  outputs?: Record<string, { dtype: string; data: unknown }>;
}

/** Where onnxruntime-node is installed, or undefined. */
export function ortModulePath(): string | undefined {
  try {
    return require.resolve(ORT_PACKAGE);
  } catch {
    return undefined;
  }
}

/**
 * onnxruntime-node on a worker thread, running the extended model. A worker is never
 * terminated while onnxruntime works in it: stopping a thread whose native call (a session's
 * creation, a run) has not returned aborts the whole process (Napi::Error at teardown). So an
 * abort rejects the caller at once, and the worker is shut down once its call returns: the
 * session released, then the thread stopped.
 */
export class OrtObserver implements Observer {
  readonly kind = 'onnxruntime';
  private readonly worker: Worker;
  private nextId = 0;
  /** The request in the worker, if any: its reply settles it (or, after an abort, is dropped). */
  private inFlight: { id: number; settle: (r: Reply | Error) => void } | undefined;
  private failure: unknown;
  private closing: Promise<void> | undefined;
  private exited = false;

  private constructor(ortPath: string, private readonly source: string) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ortPath } });
    this.worker.on('message', (reply: Reply) => {
      const call = this.inFlight;
      if (call === undefined || call.id !== reply.id) return;
      this.inFlight = undefined;
      call.settle(reply);
    });
    const lost = (error: Error): void => {
      this.failure ??= error;
      const call = this.inFlight;
      this.inFlight = undefined;
      call?.settle(error);
    };
    this.worker.on('error', lost);
    this.worker.on('exit', (code) => {
      this.exited = true;
      lost(new BadModelError(`${this.source}: the onnxruntime worker stopped (exit code ${code}) while calibrating`));
    });
  }

  /**
   * Starts the worker and creates the session.
   *
   * @throws {BackendUnavailableError} `E_BACKEND_UNAVAILABLE`: onnxruntime-node failed to load.
   * @throws {BadModelError} `E_BAD_MODEL`: onnxruntime refused the model.
   */
  static async open(ortPath: string, model: Uint8Array, source: string, signal: AbortSignal | undefined): Promise<OrtObserver> {
    const observer = new OrtObserver(ortPath, source);
    try {
      const loaded = await observer.request({ kind: 'load' }, signal);
      if (loaded.error !== undefined) {
        throw new BackendUnavailableError(`calibrate: ${ORT_PACKAGE} failed to load (${loaded.error}); ${ORT_INSTALL_HINT}`, { details: { backend: 'onnxruntime' } });
      }
      const opened = await observer.request({ kind: 'open', model }, signal);
      if (opened.error !== undefined) throw new BadModelError(`${source}: onnxruntime cannot load the float model: ${opened.error}`, { details: { file: source } });
      return observer;
    } catch (error) {
      void observer.close();
      throw error;
    }
  }

  /** Sends one request; an abort rejects at once and leaves the request to finish in the worker. */
  private request(message: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Reply> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(abortedError(signal, 'calibrate()'));
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const onAbort = (): void => {
        this.failure ??= abortedError(signal, 'calibrate()');
        reject(this.failure);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.inFlight = {
        id,
        settle: (r) => {
          signal?.removeEventListener('abort', onAbort);
          if (r instanceof Error) reject(r);
          else resolve(r);
        },
      };
      this.worker.postMessage({ ...message, id });
    });
  }

  async run(feeds: Readonly<Record<string, Tensor>>, fetch: readonly string[], signal: AbortSignal | undefined): Promise<Map<string, Observed>> {
    const wire: Record<string, { type: string; data: unknown; dims: number[] }> = {};
    for (const [name, t] of Object.entries(feeds)) wire[name] = { type: t.dtype, data: t.data, dims: [...t.shape] };
    const reply = await this.request({ kind: 'run', feeds: wire, fetch: [...fetch] }, signal);
    if (reply.error !== undefined) throw new BadInputError(`onnxruntime could not run the float model on this batch: ${reply.error}`);
    const out = new Map<string, Observed>();
    for (const name of fetch) out.set(name, observedOf(reply.outputs![name]!));
    return out;
  }

  /**
   * Shuts the worker down once onnxruntime is idle in it: waits for a request still running
   * (one an abort left behind), releases the session, then stops the thread. Resolves at once;
   * the shutdown goes on in the background (the thread keeps the process alive until it ends).
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return Promise.resolve();
  }

  private async shutDown(): Promise<void> {
    this.failure ??= new BadModelError(`${this.source}: calibration is over`);
    const idle = (): Promise<void> =>
      new Promise((resolve) => {
        const call = this.inFlight;
        if (call === undefined) return resolve();
        const settle = call.settle;
        call.settle = (r) => {
          settle(r);
          resolve();
        };
      });
    await idle();
    if (this.exited) return;
    const id = this.nextId++;
    await new Promise<void>((resolve) => {
      this.inFlight = { id, settle: () => resolve() };
      this.worker.postMessage({ kind: 'close', id });
    });
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}

/** Our interpreter over the extended model imported with loadOnnx. */
export class InterpreterObserver implements Observer {
  readonly kind = 'interpreter';
  private readonly outputIndex: Map<string, number>;

  constructor(
    private readonly graph: Graph,
    outputNames: readonly string[],
  ) {
    this.outputIndex = new Map(outputNames.map((n, i) => [n, i]));
  }

  /** Imports the extended model; `outputNames` are its ONNX outputs in order. */
  static open(model: Uint8Array, outputNames: readonly string[]): InterpreterObserver {
    return new InterpreterObserver(loadOnnx(model), outputNames);
  }

  async run(feeds: Readonly<Record<string, Tensor>>, fetch: readonly string[], signal: AbortSignal | undefined): Promise<Map<string, Observed>> {
    if (signal?.aborted) throw abortedError(signal, 'calibrate()');
    let outputs: Tensor[];
    try {
      outputs = interpret(this.graph, feeds);
    } catch (error) {
      if (error instanceof TensorRTNodeError) throw error;
      throw new BadInputError(`the interpreter could not run the float model on this batch: ${(error as Error).message}`, { cause: error });
    }
    const out = new Map<string, Observed>();
    for (const name of fetch) {
      const t = outputs[this.outputIndex.get(name)!]!;
      out.set(name, observedOf(t));
    }
    return out;
  }

  async close(): Promise<void> {
    // Nothing is held beyond the graph, which goes with this object.
  }
}
