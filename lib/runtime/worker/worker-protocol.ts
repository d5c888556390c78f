/**
 * The messages between a program object (Program, TensorParallelProgram) and the worker
 * thread that runs it, and the worker side of them:
 * {type: 'run', id, inputs} → {id, outputs} or {id, error: {code, message, details}};
 * {type: 'profile', id, inputs, options} → {id, profile} (lib/runtime/profile.ts);
 * {type: 'load', id, shapes?} loads the engines now (→ {id, loaded, report} or {id, error}), so
 * that the first run does not pay for it, and reports what loading and a warm run on zeros (at
 * `shapes`, or the static input shapes) cost; {type: 'dispose'} releases the executor and
 * closes the port. A run's answer carries `runMs`, the time the executor took (the thread hop
 * excluded). Tensors travel as their parts (structured clone); typed errors keep their code
 * and details.
 */
import { parentPort } from 'node:worker_threads';

import { InvalidArgumentError, TensorRTNodeError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import type { PreloadReport } from '../execute';
import type { ProgramProfile } from '../../engine/profile';
import type { ResolvedProfileOptions } from '../profile';
import type { CollectivesPolicy } from '../tensor-parallel/collectives-policy';
import { asResourceLimitError, type RunLimits } from '../../engine/resource-limits';

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

/** A worker's workerData: what it runs (one program's data, or every rank's), and the limits of its runs. */
export interface WorkerSetup<D> {
  data: D;
  limits: RunLimits;
  /** Tensor-parallel programs: where their all-reduces run (lib/runtime/tensor-parallel/collectives.ts). */
  collectives?: CollectivesPolicy;
}

/** What the program object posts to its worker. */
export type WorkerRequest =
  | { type: 'run'; id: number; inputs: WireTensor[] }
  | { type: 'load'; id: number; shapes?: number[][] }
  | { type: 'profile'; id: number; inputs: WireTensor[]; options: ResolvedProfileOptions }
  | { type: 'dispose'; id: number };

/** What the worker answers to one run request: `outputs` (encoded) and `runMs`, or `error`; to a load request, `loaded` and `report`, or `error`. */
export interface WorkerReply {
  id: number;
  outputs?: unknown;
  runMs?: number;
  loaded?: true;
  report?: PreloadReport;
  /** The answer to a dispose request: the executor was released. */
  disposed?: true;
  /** The answer to a profile request (lib/runtime/profile.ts). */
  profile?: ProgramProfile;
  error?: WireError;
}

/** By tag, not instanceof: buffers from another realm (vm contexts such as jest's) count too. */
export const isShared = (buffer: ArrayBufferLike): boolean => Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';

/**
 * Data that postMessage copies as it is: a view that covers its whole ArrayBuffer. A view of
 * part of a larger buffer is copied to a buffer of its own first, since structured clone
 * copies the whole buffer (512 bytes of a 512 MiB buffer would send 512 MiB); so is a view
 * of a SharedArrayBuffer, which would otherwise be shared with the worker, not copied.
 */
export function ownData<A extends Tensor['data']>(data: A): A {
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !isShared(data.buffer);
  return whole ? data : (data.slice() as A);
}

/** `t` as it crosses the thread boundary: its data is cloned by postMessage (only the bytes `t` views), never transferred. */
export const toWire = (t: Tensor): WireTensor => ({ dtype: t.dtype, shape: [...t.shape], data: ownData(t.data) });

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
 * Runs are answered in the order they came, one at a time (an engine is not re-entrant).
 */
export function serveRuns<T>(
  executor: {
    run(inputs: readonly Tensor[]): Promise<T>;
    preload?(shapes?: number[][]): Promise<PreloadReport | void>;
    profile?(inputs: readonly Tensor[], options: ResolvedProfileOptions): Promise<ProgramProfile>;
    dispose(): void | Promise<void>;
  },
  encode: (outputs: T) => unknown,
): void {
  const port = parentPort;
  if (port === null) throw new Error('serveRuns() runs on a worker thread only');
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: WorkerRequest) => {
    queue = queue.then(async () => {
      if (message.type === 'dispose') {
        try {
          await executor.dispose();
        } catch {
          // The thread is stopped next; what dispose could not release goes with it.
        }
        port.postMessage({ id: message.id, disposed: true } satisfies WorkerReply);
        port.close();
        return;
      }
      try {
        if (message.type === 'load') {
          const report = (await executor.preload?.(message.shapes)) ?? undefined;
          port.postMessage({ id: message.id, loaded: true, ...(report && { report }) } satisfies WorkerReply);
          return;
        }
        if (message.type === 'profile') {
          if (executor.profile === undefined) throw new InvalidArgumentError('profile(): this program cannot be profiled');
          const profile = await executor.profile(message.inputs.map(fromWire), message.options);
          port.postMessage({ id: message.id, profile } satisfies WorkerReply);
          return;
        }
        const inputs = message.inputs.map(fromWire);
        const t0 = performance.now();
        const outputs = await executor.run(inputs);
        const runMs = performance.now() - t0;
        port.postMessage({ id: message.id, outputs: encode(outputs), runMs } satisfies WorkerReply);
      } catch (error) {
        // A failed allocation leaves this thread usable: it is the run's error, not the worker's.
        port.postMessage({ id: message.id, error: toWireError(asResourceLimitError(error)) } satisfies WorkerReply);
      }
    });
  });
}
