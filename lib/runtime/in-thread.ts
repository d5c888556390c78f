/**
 * Runs of short programs on the caller's thread. A program worker costs a thread
 * hop per run: two messages, two wake-ups and two structured clones, tens of microseconds on
 * an idle machine and milliseconds on an oversubscribed one, which is the whole cost of a
 * model that computes in 30 µs. onnxruntime-node computes synchronously inside a
 * setImmediate wherever its session lives, so a run on this thread blocks the event loop for
 * the run's own duration and no more: where that is within a budget
 * ({@link DEFAULT_IN_THREAD_BUDGET_MS}, or {@link IN_THREAD_BUDGET_ENV}), the program runs
 * here, and keeps its worker for runs predicted to take longer.
 *
 * Which programs: every segment an engine of a backend in {@link IN_THREAD_BACKENDS}. The
 * reference backend and fallback graphs compute in JavaScript for as long as the model
 * needs, so they always run on the worker.
 *
 * When: the worker loads the program first and times a warm run on zeros
 * (ProgramExecutor.preload), so a program that is slow to load or to run never touches this
 * thread. Where both fit, the engines are loaded here too (one stall of about the load time
 * the worker measured, at compile() or loadProgram(), capped by {@link maxInThreadLoadMs}),
 * checked by runs on zeros (a realm whose typed arrays onnxruntime rejects, such as a vm
 * context, keeps the worker), and the worker is stopped. Each run is then predicted from
 * the recent cost per input element (the median of the last runs, wherever they ran: the
 * worker reports its executor's time), and a run predicted over the budget goes to the
 * worker, started again if need be. Runs here that held the loop far longer than predicted
 * (a CPU shared with busier processes preempts them mid-run) send the runs of the next
 * second to the worker, started again in the background first.
 */
import { performance } from 'node:perf_hooks';

import { createError, InvalidArgumentError, TensorRTNodeError } from '../errors';
import { resolveLogger } from '../logger';
import type { PreparedRun, RunSettled, StagedRun } from '../engine/backend';
import { Tensor } from '../ir/tensor';
import { elementsOf, ProgramExecutor, type PreloadReport } from './execute';
import { asResourceLimitError, type RunLimits } from '../engine/resource-limits';
import type { ProgramData } from './segments';

/** Backends whose engines may run on the caller's thread: their run() blocks for its own duration only. */
export const IN_THREAD_BACKENDS: readonly string[] = ['onnxruntime'];

/** The most a run on the caller's thread may be predicted to take, in milliseconds; 0 keeps every run on the worker. */
export const IN_THREAD_BUDGET_ENV = 'TENSORRT_NODE_IN_THREAD_MS';
/**
 * 3 ms: a run this long on the caller's thread keeps the event loop's p99 delay under 5 ms,
 * with room for jitter, and takes in the small CNNs (mobilenet_v3_small:
 * about 2.1 ms on one core of the development machine), which at 2 ms went to the worker and
 * paid its hop on every run.
 */
export const DEFAULT_IN_THREAD_BUDGET_MS = 3;

/**
 * Loading engines on the caller's thread stalls its event loop once, for about as long as the
 * worker took (onnxruntime's session creation is one synchronous call): beyond
 * {@link maxInThreadLoadMs} the program keeps running on the worker. The worker's figure
 * includes loading onnxruntime itself on a fresh thread, 100+ ms on a busy machine.
 */
export const MAX_IN_THREAD_LOAD_MS = 500;

/** The longest load stall accepted for a run budget: one stall may be longer than the budget of every run, within reason. */
export const maxInThreadLoadMs = (budgetMs: number): number => Math.max(MAX_IN_THREAD_LOAD_MS, 250 * budgetMs);

/**
 * A run here that took longer than this (ms, or 2.5 × the budget where that is longer) held
 * the event loop past its goal: on a CPU shared with busier processes, a run is preempted
 * while it holds the loop. Two such runs within {@link STALL_BACKOFF_MS} make the program
 * "stalling" for as long again after the last: its runs then go to the worker (once that is
 * running again, so that no run waits for a worker to start).
 */
export const STALL_MS = 5;
export const STALL_BACKOFF_MS = 1000;

const log = resolveLogger();

/**
 * The in-thread budget from the environment.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the variable: not a number of milliseconds ≥ 0.
 */
export function inThreadBudget(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[IN_THREAD_BUDGET_ENV];
  if (raw === undefined || raw === '') return DEFAULT_IN_THREAD_BUDGET_MS;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(`${IN_THREAD_BUDGET_ENV} must be a number of milliseconds ≥ 0 (0: every run on the program's worker), got ${JSON.stringify(raw)}`, {
      details: { variable: IN_THREAD_BUDGET_ENV },
    });
  }
  return ms;
}

/** Whether every segment of `data` is an engine whose backend may run on the caller's thread. */
export const mayRunInThread = (data: ProgramData): boolean =>
  data.segments.length > 0 && data.segments.every((s) => s.kind === 'engine' && IN_THREAD_BACKENDS.includes(s.backend));

/** Whether what the worker measured at load time lets the program load and run here within `budgetMs`. */
export function fitsInThread(report: PreloadReport | undefined, budgetMs: number): boolean {
  return report?.runMs !== undefined && report.runMs <= budgetMs && report.loadMs <= maxInThreadLoadMs(budgetMs);
}

/**
 * A run's predicted time from the recent cost per input element: the median of the last
 * `window` observations, so one run slowed by a busy machine moves nothing.
 *
 * Both calls a run makes are a few steps (before V8 optimizes it, keeping a sorted window
 * costs about 1 µs a run, a twentieth of the mlp's run). observe() writes the window's
 * ring; fits() does not need the median itself, only whether it is within the budget, which
 * is whether more than half of the window is: a count that observe() keeps up to date for
 * the elements and budget fits() was last asked about (the same every run of a program of
 * static shapes), and that fits() counts again when asked about others.
 */
export class RunCost {
  private readonly perElement: Float64Array;
  private seen = 0;
  /** The elements (and max(1, elements)) and budget fits() was last asked about, and how many observations in the window fit them. */
  private countedElements = NaN;
  private countedScale = NaN;
  private countedBudgetMs = NaN;
  private fitting = 0;

  constructor(private readonly window = 8) {
    this.perElement = new Float64Array(window);
  }

  /** Records a run of `elements` input elements that took `ms`. */
  observe(ms: number, elements: number): void {
    const v = ms / Math.max(1, elements);
    const slot = this.seen % this.window;
    // (fitsCounted() written out: this runs once a run.)
    if (this.seen >= this.window && this.perElement[slot]! * this.countedScale <= this.countedBudgetMs) this.fitting--;
    this.perElement[slot] = v;
    if (v * this.countedScale <= this.countedBudgetMs) this.fitting++;
    this.seen++;
  }

  /**
   * Whether the predicted time of a run of `elements` input elements is within `budgetMs`:
   * predict(elements) <= budgetMs, without the median. (A product keeps the order of the
   * values it scales, so the median's product is the median of the products.)
   */
  fits(elements: number, budgetMs: number): boolean {
    if (elements !== this.countedElements || budgetMs !== this.countedBudgetMs) {
      this.countedElements = elements;
      this.countedScale = Math.max(1, elements);
      this.countedBudgetMs = budgetMs;
      this.fitting = 0;
      const n = Math.min(this.seen, this.window);
      for (let i = 0; i < n; i++) if (this.fitsCounted(this.perElement[i]!)) this.fitting++;
    }
    // The median is the value at index n >> 1 of the sorted window: within the budget when more values than that are.
    return this.fitting > Math.min(this.seen, this.window) >> 1;
  }

  /** Whether an observation `v` (ms per element) fits the elements and budget being counted. */
  private fitsCounted(v: number): boolean {
    return v * this.countedScale <= this.countedBudgetMs;
  }

  /** The predicted milliseconds of a run of `elements` input elements; Infinity before any observation. */
  predict(elements: number): number {
    const n = Math.min(this.seen, this.window);
    if (n === 0) return Infinity;
    const sorted = this.perElement.slice(0, n).sort();
    return sorted[n >> 1]! * Math.max(1, elements);
  }
}

/** A copy of `t` over bytes of its own: the run reads its inputs later than run() was called, and the caller may change them meanwhile. */
const snapshot = (t: Tensor): Tensor => new Tensor(t.dtype, t.shape, t.data.slice());

/** A thrown value as the worker would have answered it: typed errors as they are, a failed allocation as E_RESOURCE_LIMIT, anything else E_INTERNAL. */
function asRunError(error: unknown): TensorRTNodeError {
  const e = asResourceLimitError(error);
  return e instanceof TensorRTNodeError ? e : createError('E_INTERNAL', (e as Error)?.message ?? String(e));
}

const noop = (): void => undefined;

/** A program's engines loaded on this thread, its runs one at a time, and the cost model that routes runs between here and the worker. */
export class InThreadRunner {
  /** The last run queued, and how many are queued or running. */
  private queue: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private disposed = false;
  /** The engine's prepared run (lib/runtime/execute.ts preparedRun()), where one applies. */
  readonly prepared: PreparedRun | undefined;
  /** When the last two runs here that stalled the event loop ended (see STALL_MS). */
  private lastStallAt = -Infinity;
  private previousStallAt = -Infinity;
  private readonly stallMs: number;
  /** When the run started by runPrepared() without a queue began, and its elements (one such run at a time: see runPrepared()). */
  private directT0 = 0;
  private directElements = 0;

  private constructor(
    private readonly executor: ProgramExecutor,
    private readonly budgetMs: number,
    private readonly cost: RunCost,
    private readonly disposedError: () => Error,
  ) {
    this.stallMs = Math.max(STALL_MS, 2.5 * budgetMs);
    this.prepared = executor.prepared();
  }

  /**
   * Loads `data` here when the worker's `report` fits `budgetMs` and a run on zeros succeeds
   * here (at `shapes`, the ones the worker measured with); otherwise (or on any failure,
   * logged) undefined, and the program stays on its worker.
   */
  static async start(
    data: ProgramData,
    limits: RunLimits,
    report: PreloadReport | undefined,
    options: { budgetMs: number; shapes?: number[][]; disposedError: () => Error },
  ): Promise<InThreadRunner | undefined> {
    if (!mayRunInThread(data) || !fitsInThread(report, options.budgetMs)) return undefined;
    const executor = new ProgramExecutor(data, limits);
    let here: PreloadReport;
    try {
      here = await executor.preload(options.shapes);
    } catch (error) {
      here = { loadMs: 0 };
      log('debug', `in-thread load failed (${(error as Error).message}); the program runs on its worker`);
    }
    if (here.runMs === undefined) {
      executor.dispose();
      log('debug', 'a run on zeros failed on this thread; the program runs on its worker');
      return undefined;
    }
    const cost = new RunCost();
    cost.observe(report!.runMs!, report!.inputElements ?? 0);
    cost.observe(here.runMs, here.inputElements ?? 0);
    return new InThreadRunner(executor, options.budgetMs, cost, options.disposedError);
  }

  /** Whether a run of `elements` input elements is predicted to fit the budget. */
  fits(elements: number): boolean {
    return !this.disposed && this.cost.fits(elements, this.budgetMs);
  }

  /** Whether runs here stalled the event loop lately (see `STALL_MS`). */
  get stalling(): boolean {
    return this.lastStallAt - this.previousStallAt < STALL_BACKOFF_MS && performance.now() - this.lastStallAt < STALL_BACKOFF_MS;
  }

  /** Forgets the stalls so far (those of the warm-up runs at load, when the machine is busiest). */
  forgetStalls(): void {
    this.lastStallAt = this.previousStallAt = -Infinity;
  }

  /** Records a run the worker made (its executor's time). */
  observe(ms: number, elements: number): void {
    this.cost.observe(ms, elements);
  }

  /** Runs checked inputs (in program input order; `elements` in all) here, after the runs before it; rejects as the worker would. */
  run(inputs: readonly Tensor[], elements: number = elementsOf(inputs)): Promise<Tensor[]> {
    if (this.disposed) return Promise.reject(this.disposedError());
    const own = inputs.map(snapshot);
    return this.enqueue(() => this.executor.run(own), elements);
  }

  /**
   * Like {@link run}, through the engine's prepared run (only where {@link prepared} is set),
   * for inputs that passed program.run()'s fast check (lib/runtime/fast-input-check.ts):
   * the engine checks what that check does not imply, copies them into its staging memory
   * now, and runs them after the runs before them.
   */
  runPrepared(inputs: readonly Tensor[], elements: number): Promise<Tensor[]> {
    const prepared = this.prepared!;
    if (this.disposed) return Promise.reject(this.disposedError());
    let staged: StagedRun;
    try {
      staged = prepared.stage(inputs);
    } catch (error) {
      return Promise.reject(asRunError(error));
    }
    if (this.inFlight === 0) {
      // The common case, without the closures and the promise of a queued run: the prepared
      // run calls `settled` from its own continuation. Nothing else starts while it is in
      // flight (inFlight > 0 queues), so its start time can live in fields.
      this.inFlight++;
      this.directElements = elements;
      this.directT0 = performance.now();
      return (this.queue = prepared.start(staged, this.settled));
    }
    return this.enqueue(() => prepared.start(staged), elements, () => prepared.release(staged));
  }

  /**
   * Starts `start` now when no run is in flight, else after the last one queued (one run per
   * turn of the event loop, each timed alone); `drop` undoes what was prepared for a run
   * that a dispose() cancels before it starts.
   */
  private enqueue(start: () => Promise<Tensor[]>, elements: number, drop?: () => void): Promise<Tensor[]> {
    const job = (): Promise<Tensor[]> => {
      const t0 = performance.now();
      let running: Promise<Tensor[]>;
      if (this.disposed) {
        drop?.();
        running = Promise.reject(this.disposedError());
      } else {
        running = start();
      }
      return running.then((outputs) => this.finished(t0, elements, outputs), this.failed);
    };
    const result = this.inFlight === 0 ? job() : this.queue.then(job, job);
    this.inFlight++;
    this.queue = result;
    return result;
  }

  /** A run here that ended: its time feeds the cost model and the stall guard. */
  private finished(t0: number, elements: number, outputs: Tensor[]): Tensor[] {
    this.inFlight--;
    const ms = performance.now() - t0;
    this.cost.observe(ms, elements);
    if (ms > this.stallMs) {
      this.previousStallAt = this.lastStallAt;
      this.lastStallAt = performance.now();
    }
    if (this.disposed) throw this.disposedError();
    return outputs;
  }

  private readonly failed = (error: unknown): never => {
    this.inFlight--;
    throw asRunError(error);
  };

  /** The end of the run runPrepared() started without a queue. */
  private readonly settled: RunSettled = {
    done: (outputs) => this.finished(this.directT0, this.directElements, outputs),
    failed: this.failed,
  };

  /** Fails the runs not yet started, waits for the one in progress, and releases the engines. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.queue.then(noop, noop);
    this.executor.dispose();
  }
}
