/**
 * A compiled program: segments in order (engine segments, built by one backend, and fallback
 * graphs), its inputs and outputs, and the partition report. run() never blocks the event loop for long: it
 * executes on a worker thread; or, for a program whose every segment is a GPU engine, on the
 * calling thread through the engines' asynchronous native calls (./in-process.ts says why); or,
 * for a program of onnxruntime engines whose runs take less than a budget, on this thread
 * (./in-thread.ts). dispose() stops the worker (a finalizer does it too, as a backstop) and
 * releases the engines loaded here.
 */
import type { BackendRefusal } from '../backends';
import type { CudaDevice } from '../devices';
import type { SymbolRange } from '../ir/symbolic';
import type { PartitionReport } from '../partitioning/partition';
import { createError, InvalidArgumentError } from '../errors';
import { resolveLogger, type Logger } from '../logger';
import { DeviceTensor, toDevice } from '../gpu/device-tensor';
import { Tensor } from '../ir/tensor';
import { elementsOf, writeTarget } from './execute';
import { FastInputCheck } from './fast-input-check';
import { InProcessRunner, outputDeviceOf, runsInProcess } from './in-process';
import { inThreadBudget, InThreadRunner } from './in-thread';
import { saveProgram, saveProgramBuffer } from './program-file/write';
import { formatIO, printableIO, shapedInputs, type RunInput } from './program-io';
import { probeShapes } from './probe-shapes';
import { checkProfilable, resolveProfileOptions, traceToModel } from './profile';
import type { ProfileOptions, ProgramProfile } from '../engine/profile';
import { availableDevices, parseDeviceOption, placeOnDevice } from './placement';
import { planCrossings, totalCrossings, type CrossingPlan } from './residency-plan';
import { DEFAULT_RUN_LIMITS, type RunLimits } from '../engine/resource-limits';
import { withoutSources, type ProgramData, type ProgramIO } from './segments';
import { WorkerClient } from './worker/worker-client';
import { fromWire, type WireTensor, type WorkerSetup } from './worker/worker-protocol';

/** Backends whose engines a program loads when it is created rather than on its first run. */
const WARM_START_BACKENDS: readonly string[] = ['onnxruntime'];

const DISPOSED_MESSAGE = 'this program has been disposed';

/** Outside the class: the worker's listeners hold it, and must not hold a Program (lib/runtime/worker/worker-client.ts). */
const decodeOutputs = (outputs: unknown): Tensor[] => (outputs as WireTensor[]).map(fromWire);

/** Options of {@link Program.run}. */
export interface RunOptions {
  /**
   * Where the outputs are returned: `'host'` (default) as Tensors, or `'device'` as
   * DeviceTensors on the device of the program's last GPU engine (they belong to the caller:
   * dispose() them), or written into the caller's own DeviceTensors: an array with one per
   * output, in output order, each on that device with the output's dtype and shape; run()
   * resolves with the same array's tensors, and allocates nothing for the outputs. A tensor
   * that does not fit rejects with E_INVALID_ARGUMENT naming the output. Programs without a GPU
   * engine refuse `'device'` and arrays.
   */
  outputs?: 'host' | 'device' | readonly DeviceTensor[];
}

/**
 * A compiled program: its engine and fallback segments, run in order. Made by compile() and
 * loadProgram*() only; the constructor's parameters are the program's internal data, not API.
 *
 * @hideconstructor
 */
export class Program {
  private readonly client: WorkerClient<Tensor[]>;
  /** Set for programs that run on the calling thread (every segment a GPU engine). */
  private readonly inProcess: InProcessRunner | null;
  private readonly symbols: ReadonlyMap<string, SymbolRange>;
  private printable?: { inputs: readonly ProgramIO[]; outputs: readonly ProgramIO[] };
  /** Set by warmStart() when runs may happen on this thread (./in-thread.ts). */
  private inThread: InThreadRunner | undefined;
  /** The worker of an in-thread program, started again in the background when its runs here stall the event loop; true once it is loaded. */
  private workerStart: Promise<void> | undefined;
  private workerReady = false;
  /** run()'s one-pass input check, set with inThread. */
  private fastCheck: FastInputCheck | undefined;

  constructor(
    /** @internal */ readonly data: ProgramData,
    readonly report: PartitionReport,
    /** The backend that built the engine segments. */
    readonly backend: string,
    symbols: ReadonlyMap<string, SymbolRange> = new Map(),
    /** What one run may allocate (`maxTensorBytes` of the compile or load options). */
    readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    /** The backends `auto` passed over at compile time, and why (empty for a loaded program). */
    readonly backendRefusals: readonly BackendRefusal[] = [],
    /** @internal Where run-time warnings go (the compile settings' or load options' logger). */
    private readonly log: Logger = resolveLogger(),
  ) {
    this.symbols = symbols;
    this.client = new WorkerClient<Tensor[]>({
      script: 'worker.js',
      what: 'program worker',
      workerData: (): WorkerSetup<ProgramData> => ({ data: withoutSources(this.data), limits: this.limits }),
      decode: decodeOutputs,
      inputs: shapedInputs(data.inputs, symbols),
      limits,
      disposedMessage: DISPOSED_MESSAGE,
    });
    this.inProcess = runsInProcess(data) ? new InProcessRunner(data, shapedInputs(data.inputs, symbols), limits, DISPOSED_MESSAGE, log) : null;
  }

  /** Where run() executes: `'calling thread'` (every segment a GPU engine) or `'worker'`. */
  get runsOn(): 'calling thread' | 'worker' {
    return this.inProcess === null ? 'worker' : 'calling thread';
  }

  /**
   * The copies between the host and devices one run makes (values crossing from an engine
   * that keeps them on a device to a fallback segment or output, and back), planned from the
   * segments (lib/runtime/residency-plan.ts); `total` is the host round trips per run.
   */
  get hostRoundTrips(): CrossingPlan & { total: number } {
    const plan = planCrossings(this.data);
    return { ...plan, total: totalCrossings(plan) };
  }

  /**
   * The inputs in order; their shapes print with symbols (`${p.inputs[0].shape}` is `[batch, 32]`).
   * An input with run-time dims has `profiles`: its min/opt/max shapes per optimization
   * profile, e.g. `[{ min: [1, 32], opt: [8, 32], max: [32, 32] }]` (absent when the program
   * was loaded from a file older than format 1.2).
   */
  get inputs(): readonly ProgramIO[] {
    return this.io().inputs;
  }

  /** The outputs in order, printable like {@link inputs}. */
  get outputs(): readonly ProgramIO[] {
    return this.io().outputs;
  }

  private io(): { inputs: readonly ProgramIO[]; outputs: readonly ProgramIO[] } {
    this.printable ??= { inputs: printableIO(this.data.inputs), outputs: printableIO(this.data.outputs) };
    return this.printable;
  }

  /** @internal The ranges of the symbols in the I/O shapes (saved in program files). */
  get symbolRanges(): ReadonlyMap<string, SymbolRange> {
    return this.symbols;
  }

  /** Writes the program to `file` as a `.trtp` program file (docs/program-format.md); `loadProgram(file)` reads it back. */
  async save(file: string): Promise<void> {
    await saveProgram(this, file);
  }

  /** The program as `.trtp` bytes; `loadProgramBuffer(bytes)` reads them back. */
  saveBuffer(): Uint8Array {
    return saveProgramBuffer(this);
  }

  /**
   * @internal Starts the worker and loads the engines now, for programs whose engines are
   * costly to load (onnxruntime sessions: created and warmed up at load), so that the first
   * run() costs what later ones do; where the worker's measurements allow, loads them on this
   * thread too and stops the worker (./in-thread.ts). compile() and loadProgram() call it
   * (through warmStarted()). A loading error is not thrown here: the first run() loads again
   * and rejects with it, as it would without the warm start.
   *
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: a bad TENSORRT_NODE_IN_THREAD_MS.
   */
  async warmStart(): Promise<void> {
    // A loading error is the first run()'s to report, as for the other programs.
    if (this.inProcess !== null) return this.inProcess.start().catch(() => undefined);
    if (!this.data.segments.some((s) => s.kind === 'engine' && WARM_START_BACKENDS.includes(s.backend))) return;
    const budgetMs = inThreadBudget();
    const shapes = probeShapes(this.data.inputs, this.symbols);
    const report = await this.client.start(shapes).catch(() => undefined);
    if (this.client.isDisposed) return;
    const runner = budgetMs > 0 ? await InThreadRunner.start(this.data, this.limits, report, { budgetMs, shapes, disposedError: this.disposedError }) : undefined;
    if (runner !== undefined) {
      if (this.client.isDisposed) return void (await runner.dispose());
      this.fastCheck = runner.prepared === undefined ? undefined : FastInputCheck.of(shapedInputs(this.data.inputs, this.symbols), this.limits);
      this.inThread = runner;
      // Waited for: the worker's teardown (its sessions released) would otherwise share the
      // CPU with the warm runs below and the caller's first runs (on 2 cores, first runs of a
      // 20 µs model took 4× a warm one while it went on).
      await this.client.stop();
    }
    // Through the whole of run() on zeros a few times (where a run is short), so that the
    // first real run finds its code compiled: V8 optimizes a function after it has run a
    // while, not on its first call.
    if (shapes !== undefined && report?.runMs !== undefined && report.runMs <= WARM_RUNS_MS) {
      await warmRuns(() => this.run(this.data.inputs.map((io, i) => new Tensor(io.dtype, shapes[i]!))));
    }
    this.inThread?.forgetStalls();
  }

  private readonly disposedError = (): Error => createError('E_INVALID_ARGUMENT', DISPOSED_MESSAGE);

  /**
   * Runs the program; inputs in order or by name. Bad inputs reject with E_BAD_INPUT naming
   * the input; a tensor larger than `maxTensorBytes` (or memory the process cannot allocate)
   * with E_RESOURCE_LIMIT naming the input, node or layer, and the program stays usable.
   */
  run(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options?: RunOptions & { outputs?: 'host' }): Promise<Tensor[]>;
  run(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options: RunOptions & { outputs: 'device' | readonly DeviceTensor[] }): Promise<DeviceTensor[]>;
  run(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options?: RunOptions): Promise<Tensor[] | DeviceTensor[]> {
    // The fast path of a short program on this thread: tables built at load, one
    // pass over the inputs, the engine's prepared run, no await. Whatever it does not accept
    // (bad inputs included: their errors come from the general checks) takes the general path.
    const here = this.inThread;
    const check = this.fastCheck;
    if (here !== undefined && check !== undefined && (options?.outputs ?? 'host') === 'host') {
      const ordered = check.check(inputs);
      if (ordered !== undefined) {
        const elements = check.elements;
        if (here.fits(elements) && !(here.stalling && this.workerLoaded())) return here.runPrepared(ordered, elements);
      }
    }
    return this.runGeneral(inputs, options ?? {});
  }

  private async runGeneral(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options: RunOptions): Promise<Tensor[] | DeviceTensor[]> {
    const option = options.outputs ?? 'host';
    const targets = Array.isArray(option) ? this.checkTargets(option) : undefined;
    const outputs = targets !== undefined ? 'device' : option;
    if (outputs !== 'host' && outputs !== 'device') throw new InvalidArgumentError(`run(): outputs must be 'host', 'device' or an array of DeviceTensors, got ${String(outputs)}`);
    if (this.inProcess !== null) return (await this.inProcess.run(inputs, outputs, targets)) as Tensor[] | DeviceTensor[];
    const device = outputDeviceOf(this.data);
    if (outputs === 'device' && device === null) {
      throw new InvalidArgumentError(`run(): outputs: ${targets !== undefined ? 'DeviceTensors' : "'device'"} needs a program with a GPU engine; this one runs on the CPU`, { details: { backend: this.backend } });
    }
    // The worker cannot take DeviceTensors (they belong to this thread): they go through the
    // host. Without any, the inputs are checked and read before run() returns, so a caller may
    // reuse their buffers at once.
    const out = await (hasLiveDeviceTensor(inputs) ? onHost(inputs).then((host) => this.runOnHost(host)) : this.runOnHost(inputs as Readonly<Record<string, Tensor>>));
    if (outputs === 'host') return out;
    if (targets === undefined) return Promise.all(out.map((t) => toDevice(t, device!)));
    return Promise.all(out.map((t, i) => writeTarget(targets[i]!, this.data.outputs[i]!.name, t.dtype, t, device!, async () => t)));
  }

  /** The `outputs` array of run(): one DeviceTensor per program output, each given once. */
  private checkTargets(targets: readonly unknown[]): DeviceTensor[] {
    if (targets.length !== this.data.outputs.length) {
      throw new InvalidArgumentError(`run(): outputs has ${targets.length} DeviceTensors; the program has ${this.data.outputs.length} outputs (${this.data.outputs.map((o) => `"${o.name}"`).join(', ')})`);
    }
    targets.forEach((t, i) => {
      const output = this.data.outputs[i]!.name;
      if (!(t instanceof DeviceTensor)) throw new InvalidArgumentError(`run(): outputs[${i}] (output "${output}") must be a DeviceTensor`, { details: { output } });
      if (targets.indexOf(t) !== i) throw new InvalidArgumentError(`run(): outputs[${i}] (output "${output}") is the same DeviceTensor as outputs[${targets.indexOf(t)}]`, { details: { output } });
    });
    return targets as DeviceTensor[];
  }

  /** A run of host tensors on this thread (./in-thread.ts) when it fits its budget, else on the worker. */
  private async runOnHost(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<Tensor[]> {
    const ordered = this.client.check(inputs);
    const here = this.inThread;
    if (here === undefined) return (await this.client.runChecked(ordered)).outputs;
    const elements = elementsOf(ordered);
    if (here.fits(elements) && !(here.stalling && this.workerLoaded())) return here.run(ordered, elements);
    const answer = await this.client.runChecked(ordered);
    if (answer.runMs !== undefined) here.observe(answer.runMs, elements);
    return answer.outputs;
  }

  /**
   * Where a run of the program spends its time: every layer of each engine segment (or plan
   * step, or onnxruntime node) and every node of each fallback segment, with its time per run
   * in ms, its share of the total, its segment, and the model node it came from where the
   * partition report traces it. `options.runs` timed runs (default 10) after
   * `options.warmup` untimed ones (default 1), on `inputs` as run() takes them, where run()
   * runs (the worker, or this thread for programs of GPU engines). How each backend times its
   * layers: lib/engine/profile.ts (`ProfileTiming`). A diagnostic: it runs the program more
   * than `runs` times, and the cuda and onnxruntime backends make a plan or session of their own.
   *
   * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: an engine whose backend cannot time its
   *   layers (tensorrt: the addon does not bind TensorRT's IProfiler), before anything runs.
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad options, or a disposed program.
   * @throws {BadInputError} `E_BAD_INPUT`: bad inputs, as run() says.
   */
  async profile(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>, options?: ProfileOptions): Promise<ProgramProfile> {
    const resolved = resolveProfileOptions(options);
    checkProfilable(this.data);
    let profile: ProgramProfile;
    if (this.inProcess !== null) {
      profile = await this.inProcess.profile(inputs, resolved);
    } else {
      const host = hasLiveDeviceTensor(inputs) ? await onHost(inputs) : (inputs as Readonly<Record<string, Tensor>>);
      profile = await this.client.profile(this.client.check(host), resolved);
      // A program whose runs happen on this thread had stopped its worker: the profile's must
      // not keep a second copy of the engines loaded (unless runs asked for the worker meanwhile).
      if (this.inThread !== undefined && this.workerStart === undefined) await this.client.stop();
    }
    return traceToModel(profile, this.report);
  }

  /** Whether the worker is loaded; if not, starts loading it in the background (runs stay here meanwhile). */
  private workerLoaded(): boolean {
    if (this.workerReady) return true;
    this.workerStart ??= this.client.start().then(
      () => void (this.workerReady = true),
      () => void (this.workerStart = undefined),
    );
    return false;
  }

  /** @internal Whether runs may happen on this thread (warmStart() found them short enough). */
  get runsInThread(): boolean {
    return this.inThread !== undefined;
  }

  /**
   * This program with its GPU engines on `device` (a CUDA ordinal or `"cuda:N"`), as a new
   * Program with its own worker; this one is unchanged. Every engine must be able to run
   * there (the selection rules of docs/program-format.md); CPU engines and fallback segments
   * stay where they are. `availableDevices` replaces asking the driver (tools and tests).
   *
   * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: no such device, or one that cannot run an engine.
   */
  async to(device: number | string, options: { availableDevices?: readonly CudaDevice[] } = {}): Promise<Program> {
    const ordinal = parseDeviceOption(device ?? null, 'program.to()')!;
    const data = placeOnDevice(this.data, ordinal, options.availableDevices ?? (await availableDevices()));
    return new Program(data, this.report, this.backend, this.symbols, this.limits, this.backendRefusals, this.log);
  }

  /** Stops the worker and releases engines. Idempotent; later run() calls reject. */
  async dispose(): Promise<void> {
    this.inProcess?.dispose();
    const here = this.inThread;
    await Promise.all([this.client.dispose(), here?.dispose()]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  toString(): string {
    const segs = this.data.segments.map((s) => (s.kind === 'engine' ? `engine(${s.backend})` : 'fallback')).join(' → ');
    return `Program(${formatIO(this.data.inputs)}) -> (${formatIO(this.data.outputs)}) [${segs}]`;
  }
}

/** How many warm-up runs warmStart() makes at most, and for how long in all (ms). */
const WARM_RUNS = 50;
const WARM_RUNS_MS = 25;

/** Runs `run` up to WARM_RUNS times or WARM_RUNS_MS, dropping results and errors. */
async function warmRuns(run: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  for (let k = 0; k < WARM_RUNS && performance.now() - t0 < WARM_RUNS_MS; k++) await run().catch(() => undefined);
}

const isLive = (v: unknown): v is DeviceTensor => v instanceof DeviceTensor && !v.disposed;

/** Whether `inputs` (an input list or record, or anything a caller passed) holds a live DeviceTensor. */
function hasLiveDeviceTensor(inputs: unknown): boolean {
  if (inputs === null || typeof inputs !== 'object') return false;
  if (Array.isArray(inputs)) return inputs.some(isLive);
  const named = inputs as Readonly<Record<string, unknown>>;
  return Object.keys(named).some((k) => isLive(named[k]));
}

/** `inputs` with every live DeviceTensor read back to the host, the rest as they are (the worker client checks them). */
async function onHost(inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>): Promise<Tensor[] | Readonly<Record<string, Tensor>>> {
  if (Array.isArray(inputs)) return Promise.all((inputs as readonly unknown[]).map((v) => (isLive(v) ? v.toHost() : (v as Tensor))));
  const named = inputs as Readonly<Record<string, unknown>>;
  const out: Record<string, Tensor> = Object.create(null);
  for (const k of Object.keys(named)) out[k] = isLive(named[k]) ? await named[k].toHost() : (named[k] as Tensor);
  return out;
}

/**
 * `program` after its {@link Program.warmStart}. A loading error is not thrown here: the
 * first run() loads again and rejects with it, as it would without the warm start (so
 * compile() and loadProgram() keep failing only for what they check themselves, and a bad
 * TENSORRT_NODE_IN_THREAD_MS).
 */
export async function warmStarted(program: Program): Promise<Program> {
  await program.warmStart();
  return program;
}
