/**
 * The messages between a program object (Program, TensorParallelProgram) and the worker
 * thread that runs it, and the worker side of them:
 * {type: 'run', id, inputs} → {id, outputs} or {id, error: {code, message, details}};
 * {type: 'dispose'} releases the executor and closes the port. Tensors travel as their
 * parts (structured clone); typed errors keep their code and details.
 */
import { parentPort } from 'node:worker_threads';

import { TensorRTNodeError } from '../errors';
import type { DType } from '../ir/dtype';
import { Tensor } from '../tensor';

/** A tensor as it crosses the thread boundary. */
export interface WireTensor {
  dtype: DType;
  shape: number[];
  data: Tensor['data'];
}

/** A thrown error as it crosses the thread boundary (`createError` rebuilds the typed error). */
export interface WireError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** What the program object posts to its worker. */
export type WorkerRequest = { type: 'run'; id: number; inputs: WireTensor[] } | { type: 'dispose' };

/** What the worker answers to one run request: `outputs` (encoded) or `error`. */
export interface WorkerReply {
  id: number;
  outputs?: unknown;
  error?: WireError;
}

/** `t` as it crosses the thread boundary (the data is cloned by postMessage, not here). */
export const toWire = (t: Tensor): WireTensor => ({ dtype: t.dtype, shape: [...t.shape], data: t.data });

/** A tensor received from the other thread. */
export const fromWire = (t: WireTensor): Tensor => new Tensor(t.dtype, t.shape, t.data);

/** A thrown value as a WireError: typed errors keep their code; anything else is E_INTERNAL. */
export function toWireError(error: unknown): WireError {
  const e = error as Partial<TensorRTNodeError> & Error;
  return { code: e instanceof TensorRTNodeError ? e.code : 'E_INTERNAL', message: e.message ?? String(error), details: e.details ?? {} };
}

/**
 * Worker side: answers run requests from the parent thread with `executor` until a dispose
 * request, encoding each run's outputs with `encode` (a run that throws answers its error).
 */
export function serveRuns<T>(executor: { run(inputs: readonly Tensor[]): T; dispose(): void }, encode: (outputs: T) => unknown): void {
  const port = parentPort;
  if (port === null) throw new Error('serveRuns() runs on a worker thread only');
  port.on('message', (message: WorkerRequest) => {
    if (message.type === 'dispose') {
      executor.dispose();
      port.close();
      return;
    }
    try {
      const inputs = message.inputs.map(fromWire);
      port.postMessage({ id: message.id, outputs: encode(executor.run(inputs)) } satisfies WorkerReply);
    } catch (error) {
      port.postMessage({ id: message.id, error: toWireError(error) } satisfies WorkerReply);
    }
  });
}
