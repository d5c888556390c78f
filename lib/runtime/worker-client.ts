/**
 * The parent side of a program's worker thread (lib/runtime/worker-protocol.ts), shared by
 * Program and TensorParallelProgram: checks run inputs against the declared ones, starts the
 * worker on the first run, numbers the runs and settles each with its answer, keeps the
 * worker referenced only while a run is in flight (so an idle program never holds the
 * process open), fails every pending run when the worker dies, and stops it on dispose (a
 * finalizer does it too, as a backstop); a disposed client refuses runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { createError, InternalError, InvalidArgumentError, type TensorRTNodeError } from '../errors';
import { PACKAGE_ROOT, unpackedFromAsar } from '../native';
import type { ShapedInputs } from '../interpreter/bind-inputs';
import type { Tensor } from '../tensor';
import { checkRunInputs } from './program-io';
import { toWire, type WorkerReply, type WorkerRequest } from './worker-protocol';

/** Names a directory holding the compiled worker scripts (bundlers, unusual layouts). */
export const WORKER_DIR_ENV = 'TENSORRT_NODE_WORKER_DIR';

/**
 * Where the compiled worker script `file` (e.g. `worker.js`) is, given the directories that
 * may hold it. `override` (the {@link WORKER_DIR_ENV} value) replaces the default places:
 * `here` (dist/runtime when running the build) and `packageRoot`/dist/runtime (when the
 * sources run directly, as in tests). A place inside Electron's app.asar is looked up first in
 * app.asar.unpacked, where a worker thread can start from.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: the override holds no `file`.
 * @throws {InternalError} `E_INTERNAL`: no default place holds it (the package was not built).
 */
export function resolveWorkerScript(
  file: string,
  what: string,
  places: { here: string; packageRoot: string; override?: string | undefined },
  exists: (file: string) => boolean = fs.existsSync,
): string {
  const dirs = places.override ? [path.resolve(places.override)] : [places.here, path.join(places.packageRoot, 'dist', 'runtime')];
  const candidates = [...new Set(dirs)].flatMap((dir) => {
    const script = path.join(dir, file);
    const unpacked = unpackedFromAsar(script);
    return unpacked === script ? [script] : [unpacked, script];
  });
  const found = candidates.find((candidate) => exists(candidate));
  if (found !== undefined) return found;
  if (places.override) {
    throw new InvalidArgumentError(
      `${WORKER_DIR_ENV} is ${places.override}, but the ${what} script ${file} is not there (looked for ${candidates.join(', ')}). ` +
        `Point it at the dist/runtime directory of a copy of tensorrt-node (all of dist/ and package.json), or unset it.`,
      { details: { tried: candidates } },
    );
  }
  throw new InternalError(`the ${what} script is missing (looked for ${candidates.join(', ')}); run \`npm run build\``);
}

/** {@link resolveWorkerScript} for this module's location and environment. */
export function workerScript(file: string, what: string): string {
  return resolveWorkerScript(file, what, { here: __dirname, packageRoot: PACKAGE_ROOT, override: process.env[WORKER_DIR_ENV] });
}

/** How a WorkerClient starts its worker and reads its answers. */
export interface WorkerClientOptions<T> {
  /** The worker script's file name in dist/runtime/ (e.g. `worker.js`). */
  script: string;
  /** Names the worker in errors, e.g. `program worker`. */
  what: string;
  /** The worker's workerData, read when the worker starts. */
  workerData: () => unknown;
  /** Rebuilds a run's result from the worker's encoded outputs. */
  decode: (outputs: unknown) => T;
  /** The declared inputs runs are checked against. */
  inputs: ShapedInputs;
  /** The message of the `E_INVALID_ARGUMENT` error of calls after dispose(), e.g. `this program has been disposed`. */
  disposedMessage: string;
}

interface Pending<T> {
  resolve: (result: T) => void;
  reject: (e: Error) => void;
}

const finalizer = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

/** Runs requests on one worker thread; see the top of this file. */
export class WorkerClient<T> {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending<T>>();
  private nextId = 0;
  private disposed = false;

  constructor(private readonly options: WorkerClientOptions<T>) {}

  /**
   * Checks `inputs` (in order or by name) and runs them on the worker; settles with its answer.
   * Bad inputs reject with E_BAD_INPUT (or E_SHAPE_OUT_OF_RANGE) naming the input, runs after
   * dispose() with E_INVALID_ARGUMENT.
   */
  async run(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<T> {
    if (this.disposed) throw this.disposedError();
    const ordered = checkRunInputs(this.options.inputs, inputs);
    const worker = this.start();
    const id = this.nextId++;
    const result = new Promise<T>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ type: 'run', id, inputs: ordered.map(toWire) } satisfies WorkerRequest);
    return result;
  }

  /** Stops the worker (if started), failing every pending run; later runs are refused. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const w = this.worker;
    this.worker = null;
    finalizer.unregister(this);
    this.failAll(this.disposedError());
    if (w !== null) await w.terminate();
  }

  private disposedError(): TensorRTNodeError {
    return createError('E_INVALID_ARGUMENT', this.options.disposedMessage);
  }

  private start(): Worker {
    if (this.worker !== null) return this.worker;
    const { what } = this.options;
    const worker = new Worker(workerScript(this.options.script, what), { workerData: this.options.workerData() });
    worker.on('message', (m: WorkerReply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (!p) return;
      try {
        if (m.error) p.reject(createError(m.error.code, m.error.message, m.error.details));
        else p.resolve(this.options.decode(m.outputs));
      } catch (error) {
        p.reject(error as Error);
      }
    });
    worker.on('error', (error) => this.failAll(createError('E_INTERNAL', `the ${what} failed: ${error.message}`)));
    worker.on('exit', (code) => {
      if (this.pending.size > 0) this.failAll(createError('E_INTERNAL', `the ${what} exited (code ${code}) during a run`));
      this.worker = null;
    });
    worker.unref();
    finalizer.register(this, worker, this);
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
