/**
 * compile()'s side of the compile worker thread (lib/compile/worker/compile-worker.ts): one
 * worker, started on the first compile and shared by all, referenced only while a compile is
 * in flight (an idle one never holds the process open) and stopped after IDLE_MS without
 * work (its ~50 MB of loaded modules are not kept for a process that compiles once). Log and progress messages go to the
 * caller's logger and onProgress as they arrive; an error is rebuilt into its typed class
 * with its code and details; a worker that dies fails its compiles and the next compile
 * starts another.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { abortReason } from '../engine/build-context';
import { createError, TensorRTNodeError } from '../errors';
import { Graph } from '../ir/graph';
import { serializeGraphToBuffer } from '../ir/serialize';
import type { Logger } from '../logger';
import type { CompileAbort, CompileReply, CompileRequest, WireModel } from './worker/compile-protocol';
import { workerFailure, workerScript } from '../runtime/worker/worker-client';
import type { ModelSource } from './load-model';
import type { CompiledProgram, ProgressHook } from './pipeline';
import type { ResolvedSettings } from './settings';

interface PendingCompile {
  log: Logger;
  progress: ProgressHook;
  resolve: (result: CompiledProgram) => void;
  reject: (error: unknown) => void;
}

interface CompileChannel {
  worker: Worker;
  pending: Map<number, PendingCompile>;
  idle: NodeJS.Timeout | undefined;
}

/** How long an idle compile worker is kept for the next compile. */
const IDLE_MS = 2000;

/** The compile worker script's folder under dist/ (lib/compile/worker/compile-worker.ts, built). */
const COMPILE_WORKER_FOLDER = path.join('compile', 'worker');

let channel: CompileChannel | null = null;
let nextId = 0;

const typedArrays: Record<string, new (source: ArrayLike<number> & ArrayLike<bigint>) => ArrayBufferView> = {
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array,
  BigInt64Array: BigInt64Array as never, BigUint64Array: BigUint64Array as never,
};

/**
 * `value` (received from the worker) rebuilt from this realm's constructors. postMessage
 * creates objects of the main realm, which differ from a vm context's (jest's, an Electron
 * sandbox's): `instanceof Uint8Array` and plain-object checks there would refuse them.
 */
export function adoptIntoRealm(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(adoptIntoRealm);
  if (ArrayBuffer.isView(value)) {
    const tag = Object.prototype.toString.call(value).slice(8, -1);
    const Ctor = typedArrays[tag];
    if (Ctor === undefined) throw createError('E_INTERNAL', `the compile worker answered a ${tag}, which compile() does not expect`);
    return new Ctor(value as never);
  }
  const out: Record<string, unknown> = {};
  // defineProperty: a key "__proto__" (a value's name) stays an ordinary key.
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: adoptIntoRealm(v), enumerable: true, writable: true, configurable: true });
  return out;
}

function failAll(c: CompileChannel, error: Error): void {
  if (channel === c) channel = null;
  const all = [...c.pending.values()];
  c.pending.clear();
  for (const p of all) p.reject(error);
}

function settle(c: CompileChannel, id: number): PendingCompile | undefined {
  const p = c.pending.get(id);
  c.pending.delete(id);
  if (c.pending.size === 0) {
    c.worker.unref();
    c.idle = setTimeout(() => {
      if (channel === c) channel = null;
      void c.worker.terminate();
    }, IDLE_MS);
    c.idle.unref();
  }
  return p;
}

function open(): CompileChannel {
  if (channel !== null) return channel;
  const worker = new Worker(workerScript('compile-worker.js', 'compile worker', COMPILE_WORKER_FOLDER));
  const c: CompileChannel = { worker, pending: new Map(), idle: undefined };
  worker.on('message', (m: CompileReply) => {
    const p = c.pending.get(m.id);
    if (p === undefined) return;
    try {
      if (m.type === 'log') p.log(m.level, m.message);
      else if (m.type === 'progress') p.progress(m.stage, m.state, m.message, m.extra);
      else if (m.type === 'done') settle(c, m.id)?.resolve(adoptIntoRealm(m.result) as CompiledProgram);
      else settle(c, m.id)?.reject(createError(m.error.code, m.error.message, m.error.details));
    } catch (error) {
      // The caller's logger or onProgress threw: that is the compile's error (its later messages are dropped).
      settle(c, m.id)?.reject(error);
    }
  });
  worker.on('error', (error) => failAll(c, workerFailure(error, 'compile worker')));
  worker.on('exit', (code) => failAll(c, createError('E_INTERNAL', `the compile worker exited (code ${code}) during a compile`)));
  worker.unref();
  channel = c;
  return c;
}

/** The model as it crosses the thread boundary (a Graph as its serialization, which compile() would copy it through anyway). */
function wireModel(model: ModelSource): WireModel {
  if (typeof model === 'string') return { kind: 'path', path: model };
  if (model instanceof Graph) return { kind: 'graph', bytes: serializeGraphToBuffer(model) };
  if (model instanceof Uint8Array) return { kind: 'bytes', bytes: model };
  throw createError('E_INVALID_ARGUMENT', 'compile() takes a model path, the model file bytes, or a Graph');
}

/** Why the compile worker cannot start here (its script is missing), or null when it can. */
export function compileWorkerMissing(): string | null {
  if (channel !== null) return null;
  try {
    workerScript('compile-worker.js', 'compile worker', COMPILE_WORKER_FOLDER);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Tells the worker when `signal` aborts; the compile then answers E_ABORTED (at the next check or TensorRT step). */
function forwardAbort(c: CompileChannel, id: number, signal: AbortSignal | undefined): void {
  if (signal === undefined) return;
  const abort = (): void => {
    if (!c.pending.has(id)) return;
    c.worker.postMessage({ id, type: 'abort', reason: abortReason(signal) } satisfies CompileAbort);
  };
  if (signal.aborted) return abort();
  signal.addEventListener('abort', abort, { once: true });
  const p = c.pending.get(id)!;
  const done = (): void => signal.removeEventListener('abort', abort);
  c.pending.set(id, { ...p, resolve: (r) => (done(), p.resolve(r)), reject: (e) => (done(), p.reject(e)) });
}

/** Runs the compile pipeline on the compile worker; resolves what it produced. */
export function compileOnWorker(model: ModelSource, resolved: ResolvedSettings, log: Logger, progress: ProgressHook): Promise<CompiledProgram> {
  const { logger: _logger, onProgress: _onProgress, signal, ...settings } = resolved;
  const request: CompileRequest = { id: nextId++, model: wireModel(model), settings, abortable: signal !== undefined };
  let c: CompileChannel;
  try {
    c = open();
  } catch (error) {
    return Promise.reject(error instanceof TensorRTNodeError ? error : createError('E_INTERNAL', `the compile worker cannot be started: ${(error as Error).message}`));
  }
  return new Promise<CompiledProgram>((resolve, reject) => {
    clearTimeout(c.idle);
    c.pending.set(request.id, { log, progress, resolve, reject });
    c.worker.ref();
    try {
      c.worker.postMessage(request);
    } catch (error) {
      settle(c, request.id);
      reject(createError('E_INVALID_ARGUMENT', `the model or settings cannot be sent to the compile worker: ${(error as Error).message}`));
      return;
    }
    forwardAbort(c, request.id, signal);
  });
}
