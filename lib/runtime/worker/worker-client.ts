/**
 * The parent side of a program's worker thread (lib/runtime/worker/worker-protocol.ts), shared by
 * Program and TensorParallelProgram: checks run inputs against the declared ones (before
 * anything changes, so a refused run leaves no trace), starts the worker on the first run,
 * numbers the runs and settles each with its answer, keeps the worker referenced only while a
 * run is in flight (so an idle program never holds the process open), fails every pending run
 * when the worker dies (the next run starts a new one), and stops it on dispose; a disposed
 * client refuses runs.
 *
 * Forgotten programs: the worker's listeners hold only a Channel (the worker, the pending
 * runs), never the client or its program, and the channel holds the client only while a run
 * is in flight. So a program nobody references can be collected, and a finalizer then stops
 * its worker; without that, every forgotten program would keep a thread (and its ~9 MB).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { BadInputError, createError, InternalError, InvalidArgumentError, ResourceLimitError, TensorRTNodeError } from '../../errors';
import { PACKAGE_ROOT, unpackedFromAsar } from '../../native';
import type { ShapedInputs } from '../../interpreter/bind-inputs';
import type { Tensor } from '../../ir/tensor';
import type { PreloadReport } from '../execute';
import type { ProgramProfile } from '../../engine/profile';
import type { ResolvedProfileOptions } from '../profile';
import { checkRunInputs } from '../program-io';
import { asResourceLimitError, type RunLimits } from '../../engine/resource-limits';
import { toWire, type WorkerReply, type WorkerRequest } from './worker-protocol';

/** Names a directory holding the compiled worker scripts (bundlers, unusual layouts). */
export const WORKER_DIR_ENV = 'TENSORRT_NODE_WORKER_DIR';

/** The program workers' folder under dist/ (this module's own). */
const PROGRAM_WORKER_FOLDER = path.join('runtime', 'worker');

/**
 * Where the compiled worker script `file` (e.g. `worker.js`) is, given the directories that
 * may hold it. `folder` is the script's folder under dist/ (`runtime/worker` for the program
 * workers, `compile/worker` for the compile worker). `override` (the {@link WORKER_DIR_ENV}
 * value, the dist/runtime/worker directory of a copy of the package) replaces the default
 * places: `here` (the folder beside this module's build) and `packageRoot`/dist/`folder` (when
 * the sources run directly, as in tests); a script of another folder is looked up at the same
 * place relative to it. A place inside Electron's app.asar is looked up first in
 * app.asar.unpacked, where a worker thread can start from.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: the override holds no `file`.
 * @throws {InternalError} `E_INTERNAL`: no default place holds it (the package was not built).
 */
export function resolveWorkerScript(
  file: string,
  what: string,
  places: { here: string; packageRoot: string; override?: string | undefined; folder?: string },
  exists: (file: string) => boolean = fs.existsSync,
): string {
  const folder = places.folder ?? PROGRAM_WORKER_FOLDER;
  const dirs = places.override
    ? [path.resolve(places.override, path.relative(PROGRAM_WORKER_FOLDER, folder))]
    : [places.here, path.join(places.packageRoot, 'dist', folder)];
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
        `Point it at the dist/runtime/worker directory of a copy of tensorrt-node (all of dist/ and package.json), or unset it.`,
      { details: { tried: candidates } },
    );
  }
  throw new InternalError(`the ${what} script is missing (looked for ${candidates.join(', ')}); run \`npm run build\``);
}

/**
 * {@link resolveWorkerScript} for this module's location and environment; `folder` is the
 * script's folder under dist/ (this module's own by default).
 */
export function workerScript(file: string, what: string, folder: string = PROGRAM_WORKER_FOLDER): string {
  const here = path.resolve(__dirname, path.relative(PROGRAM_WORKER_FOLDER, folder));
  return resolveWorkerScript(file, what, { here, packageRoot: PACKAGE_ROOT, override: process.env[WORKER_DIR_ENV], folder });
}

/** How a WorkerClient starts its worker and reads its answers. */
export interface WorkerClientOptions<T> {
  /** The worker script's file name in dist/runtime/worker/ (e.g. `worker.js`). */
  script: string;
  /** Names the worker in errors, e.g. `program worker`. */
  what: string;
  /** The worker's workerData, read when the worker starts. */
  workerData: () => unknown;
  /**
   * Rebuilds a run's result from the worker's encoded outputs. A module-level function, not a
   * closure over the program: the worker's listeners hold it, and must not hold the program.
   */
  decode: (outputs: unknown) => T;
  /** The declared inputs runs are checked against. */
  inputs: ShapedInputs;
  /** What a run may allocate (inputs are checked here, the rest in the worker). */
  limits: RunLimits;
  /** The message of the `E_INVALID_ARGUMENT` error of calls after dispose(), e.g. `this program has been disposed`. */
  disposedMessage: string;
  /**
   * dispose() first asks the worker to release its executor and waits this long for it before
   * stopping the thread (default: stop it at once). For executors holding what thread teardown
   * does not release well, such as NCCL communicators.
   */
  gracefulDisposeMs?: number;
}

/** One answer of the worker: a run's decoded outputs and the time the worker's executor took, or what a load measured. */
export interface Answer<T> {
  outputs: T;
  runMs?: number;
  report?: PreloadReport;
  profile?: ProgramProfile;
}

interface Pending<T> {
  resolve: (answer: Answer<T>) => void;
  reject: (e: Error) => void;
}

/** A started worker and what its listeners may touch (see the top of this file). */
interface Channel<T> {
  readonly worker: Worker;
  readonly pending: Map<number, Pending<T>>;
  /** The client while a run is in flight (an awaited run keeps its program alive), else null. */
  holder: object | null;
  /** The worker has exited or is stopping after an error; the next run starts another. */
  exited: boolean;
}

const finalizer = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

/** After a run settles: an idle worker neither holds the process open nor keeps its program alive. */
function settled<T>(channel: Channel<T>): void {
  if (channel.pending.size > 0) return;
  channel.holder = null;
  if (!channel.exited) channel.worker.unref();
}

function failAll<T>(channel: Channel<T>, error: Error): void {
  const runs = [...channel.pending.values()];
  channel.pending.clear();
  settled(channel);
  for (const p of runs) p.reject(error);
}

/** A failure of the worker itself as a typed error: running out of memory is E_RESOURCE_LIMIT, anything else a bug. */
export function workerFailure(error: Error & { code?: unknown }, what: string): TensorRTNodeError {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new ResourceLimitError(`the ${what} ran out of memory and was stopped (${error.message}); the run failed, the program stays usable and its next run starts a new worker`, {
      cause: error,
      details: { workerRestarts: true },
    });
  }
  return createError('E_INTERNAL', `the ${what} failed: ${error.message}`);
}

/** Starts a worker; its listeners close over the channel and these arguments only. */
function openChannel<T>(file: string, what: string, workerData: unknown, decode: (outputs: unknown) => T): Channel<T> {
  const worker = new Worker(file, { workerData });
  const channel: Channel<T> = { worker, pending: new Map(), holder: null, exited: false };
  worker.on('message', (m: WorkerReply) => {
    const p = channel.pending.get(m.id);
    channel.pending.delete(m.id);
    settled(channel);
    if (!p) return;
    try {
      if (m.error) p.reject(createError(m.error.code, m.error.message, m.error.details));
      else if (m.disposed) p.resolve({ outputs: undefined as T });
      else if (m.loaded) p.resolve({ outputs: undefined as T, ...(m.report && { report: m.report }) });
      else if (m.profile) p.resolve({ outputs: undefined as T, profile: m.profile });
      else p.resolve({ outputs: decode(m.outputs), ...(m.runMs !== undefined && { runMs: m.runMs }) });
    } catch (error) {
      p.reject(asResourceLimitError(error) as Error);
    }
  });
  // A reply that cannot be received (its outputs cannot be allocated here): the worker answers
  // in order, so it is the oldest pending run's.
  worker.on('messageerror', (error) => {
    const [oldest] = channel.pending;
    if (oldest === undefined) return;
    channel.pending.delete(oldest[0]);
    settled(channel);
    const e = asResourceLimitError(error);
    oldest[1].reject(e instanceof TensorRTNodeError ? e : createError('E_INTERNAL', `the answer of the ${what} cannot be received: ${error.message}`));
  });
  // An 'error' event means the worker is stopping: later runs go to a new one.
  worker.on('error', (error) => {
    channel.exited = true;
    failAll(channel, workerFailure(error, what));
  });
  worker.on('exit', (code) => {
    channel.exited = true;
    failAll(channel, createError('E_INTERNAL', `the ${what} exited (code ${code}) during a run`));
  });
  worker.unref();
  return channel;
}

/** Why `message` could not be posted, as a typed error. */
function postFailure(error: unknown, what: string): TensorRTNodeError {
  const e = asResourceLimitError(error);
  if (e instanceof TensorRTNodeError) return e;
  const message = (error as Error)?.message ?? String(error);
  if ((error as Error)?.name === 'DataCloneError') return new BadInputError(`the inputs cannot be sent to the ${what}: ${message}`, { cause: error });
  return new InternalError(`the inputs cannot be sent to the ${what}: ${message}`, { cause: error });
}

/** Asks the worker to dispose its executor; resolves when it has, or after `ms` (or at once if it cannot be asked). */
async function askToDispose<T>(channel: Channel<T>, id: number, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    channel.pending.set(id, { resolve: () => resolve(), reject: () => resolve() });
    timer = setTimeout(resolve, ms);
  });
  try {
    channel.worker.ref();
    channel.worker.postMessage({ type: 'dispose', id } satisfies WorkerRequest);
    await done;
  } catch {
    // Nothing to wait for: the thread is stopped next either way.
  } finally {
    clearTimeout(timer);
    channel.pending.delete(id);
  }
}

/** Runs requests on one worker thread; see the top of this file. */
export class WorkerClient<T> {
  private channel: Channel<T> | null = null;
  private nextId = 0;
  private disposed = false;

  constructor(private readonly options: WorkerClientOptions<T>) {}

  /**
   * Checks `inputs` (in order or by name) and runs them on the worker; settles with its answer.
   * Bad inputs reject with E_BAD_INPUT (or E_SHAPE_OUT_OF_RANGE, E_RESOURCE_LIMIT) naming the
   * input, runs after dispose() with E_INVALID_ARGUMENT; a refused run changes nothing.
   */
  async run(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<T> {
    return (await this.runChecked(this.check(inputs))).outputs;
  }

  /**
   * `inputs` (in order or by name) in declared order, checked as {@link run} checks them.
   *
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: the client was disposed.
   */
  check(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Tensor[] {
    if (this.disposed) throw this.disposedError();
    return checkRunInputs(this.options.inputs, inputs, this.options.limits);
  }

  /** Runs inputs that passed {@link check} on the worker; settles with the outputs and the worker's run time. */
  async runChecked(ordered: readonly Tensor[]): Promise<Answer<T>> {
    const wire = this.wireOf(ordered);
    return this.request((id) => ({ type: 'run', id, inputs: wire }));
  }

  /** Profiles inputs that passed {@link check} on the worker (lib/runtime/profile.ts). */
  async profile(ordered: readonly Tensor[], options: ResolvedProfileOptions): Promise<ProgramProfile> {
    const wire = this.wireOf(ordered);
    const answer = await this.request((id) => ({ type: 'profile', id, inputs: wire, options }));
    if (answer.profile === undefined) throw new InternalError(`the ${this.options.what} answered a profile request without a profile`);
    return answer.profile;
  }

  /** Checked inputs as they cross to the worker; a tensor that cannot be posted fails naming this client. */
  private wireOf(ordered: readonly Tensor[]): ReturnType<typeof toWire>[] {
    if (this.disposed) throw this.disposedError();
    try {
      return ordered.map(toWire);
    } catch (error) {
      throw postFailure(error, this.options.what);
    }
  }

  /** Posts the request `make(id)` to the worker (started if need be); settles with its answer. */
  private request(make: (id: number) => WorkerRequest): Promise<Answer<T>> {
    const channel = this.open();
    const id = this.nextId++;
    const result = new Promise<Answer<T>>((resolve, reject) => channel.pending.set(id, { resolve, reject }));
    channel.holder = this;
    channel.worker.ref();
    try {
      channel.worker.postMessage(make(id));
    } catch (error) {
      channel.pending.delete(id);
      settled(channel);
      throw postFailure(error, this.options.what);
    }
    return result;
  }

  /**
   * Starts the worker now and has it load the engines (the program's first run then costs
   * what later ones do); settles when they are loaded, with what loading and a warm run (at
   * `shapes`, or the static input shapes) cost there, or rejects with the loading error.
   */
  async start(shapes?: number[][]): Promise<PreloadReport | undefined> {
    if (this.disposed) throw this.disposedError();
    return (await this.request((id) => ({ type: 'load', id, ...(shapes && { shapes }) }))).report;
  }

  /**
   * Stops the worker while it is idle (nothing in flight), freeing what it loaded; unlike
   * dispose() the client stays usable, and the next run starts a new worker. Resolves when
   * the thread has exited (never rejects): a caller that runs on this thread next may wait,
   * so that its runs do not share the CPU with the thread's teardown.
   */
  stop(): Promise<void> {
    const channel = this.channel;
    if (channel === null || channel.pending.size > 0) return Promise.resolve();
    this.channel = null;
    finalizer.unregister(this);
    channel.exited = true;
    return channel.worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Stops the worker (if started), failing every pending run; later runs are refused. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const channel = this.channel;
    this.channel = null;
    finalizer.unregister(this);
    if (channel === null) return;
    failAll(channel, this.disposedError());
    const graceMs = this.options.gracefulDisposeMs;
    if (graceMs !== undefined && !channel.exited) await askToDispose(channel, this.nextId++, graceMs);
    await channel.worker.terminate();
  }

  private disposedError(): TensorRTNodeError {
    return createError('E_INVALID_ARGUMENT', this.options.disposedMessage);
  }

  /** The running worker's channel; starts a worker on the first run and after one exited. */
  private open(): Channel<T> {
    if (this.channel !== null && !this.channel.exited) return this.channel;
    finalizer.unregister(this);
    const { what, script, decode } = this.options;
    let channel: Channel<T>;
    try {
      channel = openChannel(workerScript(script, what), what, this.options.workerData(), decode);
    } catch (error) {
      const e = asResourceLimitError(error);
      throw e instanceof TensorRTNodeError ? e : new InternalError(`the ${what} cannot be started: ${(error as Error).message}`, { cause: error });
    }
    finalizer.register(this, channel.worker, this);
    this.channel = channel;
    return channel;
  }
}
