/**
 * A loaded cuda engine. At load the weights go to the device once. Per set of input shapes
 * the network is instantiated, lowered and assembled, and a GpuPlan is made over its own
 * arena, host-values buffer and input/output buffers: an `Instantiated` plan, kept in a
 * bounded LRU cache (plan-cache.ts). A kernel the engine bytes lack (a shape the profiles did
 * not foresee needs another one) is compiled through the NVRTC cache and logged.
 *
 * A run copies each input into its plan's input buffer (a host tensor is uploaded; a device
 * tensor on this device is copied device-to-device; one on another device goes through the
 * host, with a warning the first time), runs the plan, and hands out copies of the output
 * buffers as DeviceTensors on this device, which belong to the caller. The copies of one run
 * are issued together (one device stream orders them), not one awaited hop after another.
 *
 * CUDA graphs: a plan's buffers never move, so on its first run the plan is captured into a
 * CUDA graph, and every run replays it with one launch instead of one per step (a ResNet-50
 * plan has hundreds). A plan that cannot be captured runs step by step, logged once.
 *
 * The run path: once a plan is captured, a run whose inputs are DeviceTensors on this device
 * is one native call (GpuPlan.execute): the input copies, the replay and the output copies
 * (into fresh tensors allocated in stream order, or into the caller's own `into` tensors) are
 * enqueued on the plan's stream from the calling thread, and one Promise settles when the
 * device is done — no thread-pool hop per copy or allocation.
 *
 * Concurrency: a plan owns its arena and I/O buffers, so two runs of one plan must not execute
 * at once; the plan's stream orders them. Runs on the fast path are enqueued as they are called,
 * several in flight: each one's input copies queue behind the previous one's replay and output
 * copies, so the host's work for the next run overlaps the device's work for this one, and N
 * concurrent run() calls reach the graph's replay throughput. Any other run (the first of a
 * shape, host inputs, a plan that runs step by step) goes through a queue: it starts once every
 * earlier run has settled, and while it waits, later runs queue behind it too (a run that made
 * a plan or wrote its input buffers from another stream must not be overtaken).
 */
import { devices } from '../../../devices';
import { BadModelError, InternalError, InvalidArgumentError, NoCompatibleDeviceError } from '../../../errors';
import { gpuBinding } from '../../../gpu/binding';
import { DeviceTensor, toDevice } from '../../../gpu/device-tensor';
import { GpuPlan, type PlanExecution } from '../../../gpu/gpu-plan';
import { convOutputShape, type PlanSpec, type PlanStep } from '../../../gpu/plan';
import { loadModule, type GpuModule } from '../../../gpu/module';
import { resolveLogger, type Logger } from '../../../logger';
import type { Network } from '../../../network';
import { checkTensorBytes, DEFAULT_RUN_LIMITS, type RunLimits } from '../../../engine/resource-limits';
import { Tensor } from '../../../ir/tensor';
import { floatWidthAs } from '../../../engine/float-width';
import type { DeviceValue, RunValue } from '../../../engine/residency';
import type { Engine } from '../../../engine/backend';
import { outputTargetError } from '../../../engine/output-targets';
import { assemble, type PlanModule } from '../plan/assemble';
import { checkInputs } from '../plan/bind-inputs';
import { archOf, nvrtcCompiler, type KernelCompiler } from '../build';
import type { CudaEngineContents, EngineKernel } from '../engine-format';
import { instantiate } from '../plan/instantiate';
import { lowerInstance, type LayerLowerer, type StepLayer, type WeightLocator } from '../plan/lower-instance';
import { PlanCache, shapeKey } from './plan-cache';
import { runCheckError, type RunCheck } from '../plan/run-checks';
import { addToTimingCache, gemmsOf, readTimingCache, timingCacheFile, tuningBudgetFromEnv, type TimingScope } from './timing-cache';
import { layoutWeights, packWeights, weightLocator } from '../plan/weights';

/** One plan step's time in {@link CudaRunner.profile}. */
export interface StepProfile {
  readonly step: number;
  /** The network layer the step was lowered from, and its kind. */
  readonly layer: string;
  readonly kind: string;
  readonly stepKind: PlanStep['kind'];
  /**
   * Milliseconds per execution. `'launch'` mode: the launch included (the step run `repeats`
   * times in one call, averaged). `'graph'` mode: the device's time (see {@link ProfileOptions}).
   */
  readonly ms: number;
  /** Floating-point operations of a GEMM or convolution step (a multiply-add counts two). */
  readonly flops?: number;
  /** The bytes the step's layer must read and write at least, where the layer is this one step. */
  readonly bytes?: number;
}

/** How {@link CudaRunner.profile} times each step. */
export interface ProfileOptions {
  /** Executions timed per step (default 20). */
  repeats?: number;
  /**
   * `'launch'` (default): the step alone, run `repeats` times in one native call; each
   * execution pays its launch from the host (about 4 µs on the H200's host), which hides the
   * device time of small kernels. `'graph'`: `repeats` copies of the step captured into one CUDA
   * graph and replayed, so the figure is the step's own device time, as in a replay of the
   * whole plan (consecutive kernels of a graph still cost about a microsecond each).
   */
  mode?: 'launch' | 'graph';
}

/** The arithmetic of a GEMM or convolution step, in floating-point operations. */
export function stepFlops(step: PlanStep): number | undefined {
  if (step.kind === 'gemm') return 2 * step.m * step.n * step.k * (step.batch ?? 1);
  if (step.kind !== 'conv') return undefined;
  // Forward: each output element is a dot product over one group's input channels (weight dim
  // 1) and the window. Transposed: each input element meets weight[1] = k / groups output
  // channels at every tap of the window.
  const elements = (step.transposed ? step.input : convOutputShape(step)).reduce((a, d) => a * d, 1);
  const window = step.weight.slice(2).reduce((a, d) => a * d, 1);
  return 2 * elements * step.weight[1]! * window;
}

/** How many instantiated plans (input shape sets) an engine keeps. */
export const DEFAULT_PLAN_CACHE_SIZE = 8;

export interface CudaRunnerOptions {
  logger?: Logger;
  planCacheSize?: number;
  lower?: LayerLowerer;
  compile?: KernelCompiler;
  /** Capture each plan into a CUDA graph and replay it (default true; `TENSORRT_NODE_CUDA_GRAPHS=0` turns it off). */
  cudaGraphs?: boolean;
  /**
   * The timing cache file GEMM algorithm choices are read from and written back to (timing-cache.ts);
   * null: none. Default: TENSORRT_NODE_TIMING_CACHE, else `cuda-timing.json` in
   * TENSORRT_NODE_ENGINE_CACHE's directory, else none.
   */
  timingCache?: string | null;
  /**
   * The most ms making one plan may spend timing GEMM candidates (GpuPlan.create checks it);
   * default TENSORRT_NODE_TUNING_BUDGET_MS (timing-cache.ts tuningBudgetFromEnv), else no limit.
   */
  tuningBudgetMs?: number;
}

/** A timing cache file and the scope of this runner's device in it. */
interface TimingCacheUse {
  file: string;
  scope: TimingScope;
}

/** Timing cache files already seeded into the native choices, per device (`ordinal\0file`). */
const seededTimingCaches = new Set<string>();

/** The driver's name of device `ordinal`. */
async function deviceName(ordinal: number): Promise<string> {
  const found = (await devices()).devices.find((d) => d.ordinal === ordinal);
  if (found === undefined) throw new InternalError(`device ${ordinal} is not among the devices the driver lists`);
  return found.name;
}

/** One instantiated plan and the device memory it owns. */
class Instantiated {
  /** Whether runs replay the plan's CUDA graph; null until the first run tried to capture it. */
  graph: boolean | null = null;

  constructor(
    readonly plan: GpuPlan,
    readonly owned: readonly DeviceTensor[],
    readonly inputs: ReadonlyMap<string, DeviceTensor>,
    readonly outputs: ReadonlyArray<[string, DeviceTensor]>,
    /** What the plan was made of, for profile(): its steps and their layers, buffers and modules. */
    readonly parts: { spec: PlanSpec; labels: readonly StepLayer[]; buffers: readonly DeviceTensor[]; modules: readonly GpuModule[] },
    /** The run-time checks of the plan and their status word (../plan/run-checks.ts); no word: no checks. */
    readonly checks: { readonly list: readonly RunCheck[]; readonly status: DeviceTensor | undefined },
  ) {}

  dispose(): void {
    this.plan.dispose();
    for (const t of this.owned) t.dispose();
  }
}

export class CudaRunner implements Engine {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly residency = 'device' as const;
  private readonly log: Logger;
  private readonly plans: PlanCache<Instantiated>;
  private readonly modules = new Map<string, Promise<GpuModule>>();
  private readonly kernels: ReadonlyMap<string, EngineKernel>;
  private readonly warnedDevices = new Set<number>();
  /** Settles after every run so far has settled (runs settle in the order they were started). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Runs on the queued path not yet settled: while any is, later runs queue too. */
  private queuedRuns = 0;
  private timing: Promise<TimingCacheUse | null> | undefined;
  private disposed = false;

  private constructor(
    private readonly network: Network,
    readonly deviceOrdinal: number,
    private readonly arch: number,
    kernels: readonly EngineKernel[],
    private readonly weights: DeviceTensor,
    private readonly locateWeight: WeightLocator,
    /** float32 GEMMs and convolutions may use TF32 (the build's `precisions` include it). */
    private readonly tf32: boolean,
    private readonly options: CudaRunnerOptions,
  ) {
    this.inputNames = network.inputs.map((i) => i.name);
    this.outputNames = network.outputs.map((o) => o.name);
    this.log = resolveLogger(options.logger);
    this.plans = new PlanCache(options.planCacheSize ?? DEFAULT_PLAN_CACHE_SIZE);
    this.kernels = new Map(kernels.filter((k) => k.arch === arch).map((k) => [k.key, k]));
  }

  /**
   * Loads `contents` onto device `ordinal`: checks its compute capability against the
   * engine's and uploads the weights.
   *
   * @throws {NoCompatibleDeviceError} the device has another compute capability than the engine was built for.
   */
  static async load(contents: CudaEngineContents, ordinal: number, options: CudaRunnerOptions = {}): Promise<CudaRunner> {
    const info = await gpuBinding().gpuDevice(ordinal);
    const cc = { major: info.computeCapabilityMajor, minor: info.computeCapabilityMinor };
    const built = contents.target.computeCapability;
    if (cc.major !== built.major || cc.minor !== built.minor) {
      throw new NoCompatibleDeviceError(
        `Unable to deserialize cuda engine: it was built for compute capability ${built.major}.${built.minor} ("${contents.target.name}"), ` +
          `but device ${ordinal} has compute capability ${cc.major}.${cc.minor}`,
        { details: { device: ordinal, built: contents.target, found: cc } },
      );
    }
    const layout = layoutWeights(contents.network);
    const weights = await toDevice(new Tensor('uint8', [layout.bytes], packWeights(layout)), ordinal);
    const tf32 = contents.config.precisions.includes('tf32');
    return new CudaRunner(contents.network, ordinal, archOf(cc), contents.kernels, weights, weightLocator(layout), tf32, options);
  }

  /** The shape sets whose plans are cached, most recently used last (for tests and inspection). */
  get cachedShapes(): string[] {
    return this.plans.keys();
  }

  async upload(tensor: Tensor): Promise<DeviceValue> {
    this.checkLive();
    return toDevice(tensor, this.deviceOrdinal);
  }

  run(inputs: Readonly<Record<string, RunValue>>, limits: RunLimits = DEFAULT_RUN_LIMITS, into?: Readonly<Record<string, DeviceValue>>): Promise<Record<string, RunValue>> {
    if (this.disposed) return Promise.reject(new InvalidArgumentError('this cuda engine was disposed'));
    const fast = this.queuedRuns === 0 ? this.enqueueRun(inputs, into) : undefined;
    if (fast !== undefined) {
      this.queue = fast.catch(() => undefined);
      return fast;
    }
    this.queuedRuns++;
    const result = this.queue.then(() => this.runNow(inputs, limits, into));
    this.queue = result.then(
      () => void this.queuedRuns--,
      () => void this.queuedRuns--,
    );
    return result;
  }

  /**
   * The run as one GpuPlan.execute() call, enqueued now, where it can be: the plan for these
   * shapes exists and replays a CUDA graph, every input is a live DeviceTensor on this device
   * with the plan's dtype and shape, and every `into` tensor fits its output. Undefined
   * otherwise (the queued path then checks, reports or handles it).
   */
  private enqueueRun(inputs: Readonly<Record<string, RunValue>>, into: Readonly<Record<string, DeviceValue>> | undefined): Promise<Record<string, RunValue>> | undefined {
    if (inputs === null || typeof inputs !== 'object') return undefined;
    const shapes: Record<string, readonly number[]> = Object.create(null);
    let count = 0;
    for (const name in inputs) {
      const v = inputs[name];
      if (!(v instanceof DeviceTensor) || v.device !== this.deviceOrdinal || v.disposed) return undefined;
      shapes[name] = v.shape;
      count++;
    }
    if (count !== this.inputNames.length || !this.inputNames.every((n) => Object.hasOwn(shapes, n))) return undefined;
    const instance = this.plans.get(shapeKey(this.inputNames, shapes));
    if (instance === undefined || instance.graph !== true) return undefined;
    const copies: Array<[DeviceTensor, DeviceTensor]> = [];
    for (const [name, buffer] of instance.inputs) {
      const v = inputs[name] as DeviceTensor;
      if (v.dtype !== buffer.dtype) return undefined;
      copies.push([buffer, v]);
    }
    const resolved = resolveOutputTargets(instance.outputs, into, this.deviceOrdinal);
    if ('error' in resolved) return undefined;
    return instance.plan.execute(copies, resolved.targets, { status: instance.checks.status }).then((done) => this.executed(instance, resolved.targets, done));
  }

  /**
   * The outputs of an execute() by name, or, when a run-time check reported bad data, the
   * E_BAD_INPUT of that check, with the fresh output tensors of the run freed.
   */
  private executed(instance: Instantiated, targets: ReadonlyArray<readonly [DeviceTensor, DeviceTensor | null]>, done: PlanExecution): Record<string, RunValue> {
    if (done.status !== 0) {
      done.outputs.forEach((t, i) => {
        if (targets[i]![1] === null) t.dispose();
      });
      throw runCheckError(this.network.name, instance.checks.list, done.status);
    }
    return byOutputName(instance.outputs, done.outputs);
  }

  /** After a run of the plan step by step: throws the E_BAD_INPUT of the check that reported bad data, if one did. */
  private async checkStatus(instance: Instantiated): Promise<void> {
    const word = instance.checks.status;
    if (word === undefined) return;
    const status = (await word.toHost()).data[0] as number;
    if (status !== 0) throw runCheckError(this.network.name, instance.checks.list, status >>> 0);
  }

  /** Frees the plans, weights and modules once the runs already queued are done; later runs reject. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.queue.then(() => {
      this.plans.clear();
      this.weights.dispose();
      for (const m of this.modules.values()) m.then((mod) => mod.dispose(), () => undefined);
      this.modules.clear();
    });
  }

  /**
   * Where a run's time goes: the plan for `inputs` is instantiated afresh, run once, then each
   * of its steps is timed on its own, as {@link ProfileOptions.mode} says. A diagnostic, not a
   * run: it allocates its own buffers and frees them, and is not queued behind runs.
   */
  async profile(inputs: Readonly<Record<string, RunValue>>, options: ProfileOptions = {}): Promise<StepProfile[]> {
    const repeats = options.repeats ?? 20;
    const mode = options.mode ?? 'launch';
    if (mode !== 'launch' && mode !== 'graph') throw new InvalidArgumentError(`profile(): mode must be 'launch' or 'graph', got ${String(mode)}`);
    const instance = await this.diagnosticInstance('profile()', inputs, repeats);
    try {
      await instance.plan.run();
      const { spec, labels, buffers, modules } = instance.parts;
      const out: StepProfile[] = [];
      for (const [i, step] of spec.steps.entries()) {
        const ms = await timeStep(step, mode, repeats, (steps) => GpuPlan.create({ steps }, buffers, modules, this.deviceOrdinal));
        const label = labels[i];
        const flops = stepFlops(step);
        out.push({
          step: i,
          layer: label?.name ?? '?',
          kind: label?.kind ?? '?',
          stepKind: step.kind,
          ms,
          ...(flops !== undefined ? { flops } : {}),
          ...(label?.bytes !== undefined ? { bytes: label.bytes } : {}),
        });
      }
      return out;
    } finally {
      instance.dispose();
    }
  }

  /**
   * The device's time for one run of the plan for `inputs`: the plan, instantiated afresh and
   * captured into a CUDA graph, replayed `repeats` times in one native call and waited for once,
   * in ms per replay (each replay's launch included, no host round trip per run: what a CUDA-event
   * timing of a graph replay measures). A diagnostic, not a run, like profile().
   */
  async timeGraph(inputs: Readonly<Record<string, RunValue>>, options: { repeats?: number } = {}): Promise<number> {
    const repeats = options.repeats ?? 100;
    const instance = await this.diagnosticInstance('timeGraph()', inputs, repeats);
    try {
      await instance.plan.capture();
      await instance.plan.replay(3);
      const t0 = process.hrtime.bigint();
      await instance.plan.replay(repeats);
      return Number(process.hrtime.bigint() - t0) / 1e6 / repeats;
    } finally {
      instance.dispose();
    }
  }

  /** A fresh plan for `inputs` with the inputs copied in, outside the plan cache (the caller disposes it): what the diagnostics time. */
  private async diagnosticInstance(what: string, inputs: Readonly<Record<string, RunValue>>, repeats: number): Promise<Instantiated> {
    this.checkLive();
    if (!Number.isInteger(repeats) || repeats < 1) throw new InvalidArgumentError(`${what}: repeats must be an integer >= 1, got ${repeats}`);
    const shapes = checkInputs(this.network, inputs, (name) => inputs[name] instanceof Tensor);
    const instance = await this.instantiate(shapes, DEFAULT_RUN_LIMITS);
    try {
      await Promise.all([...instance.inputs].map(([name, buffer]) => this.copyIn(name, inputs[name]!, buffer)));
    } catch (error) {
      instance.dispose();
      throw error;
    }
    return instance;
  }

  private checkLive(): void {
    if (this.disposed) throw new InvalidArgumentError('this cuda engine was disposed');
  }

  private async runNow(inputs: Readonly<Record<string, RunValue>>, limits: RunLimits, into: Readonly<Record<string, DeviceValue>> | undefined): Promise<Record<string, RunValue>> {
    const shapes = checkInputs(this.network, inputs, (name) => inputs[name] instanceof Tensor);
    const key = shapeKey(this.inputNames, shapes);
    let instance = this.plans.get(key);
    if (instance === undefined) {
      instance = await this.instantiate(shapes, limits);
      this.plans.set(key, instance);
    }
    const resolved = resolveOutputTargets(instance.outputs, into, this.deviceOrdinal);
    if ('error' in resolved) throw resolved.error;
    if (instance.graph === null) {
      // The capture runs the plan once: on the real inputs, so that no kernel reads an index
      // from uninitialised memory.
      await Promise.all([...instance.inputs].map(([name, buffer]) => this.copyIn(name, inputs[name]!, buffer)));
      await this.capture(instance);
    }
    if (instance.graph) {
      // Inputs the plan cannot copy itself (host tensors, another device's) are written into its
      // buffers first; the rest travel with the one execute() call.
      const copies: Array<[DeviceTensor, DeviceTensor]> = [];
      await Promise.all(
        [...instance.inputs].map(async ([name, buffer]) => {
          const v = inputs[name]!;
          if (v instanceof DeviceTensor && v.device === this.deviceOrdinal && v.dtype === buffer.dtype) copies.push([buffer, v]);
          else await this.copyIn(name, v, buffer);
        }),
      );
      return this.executed(instance, resolved.targets, await instance.plan.execute(copies, resolved.targets, { status: instance.checks.status }));
    }
    if (into !== undefined) {
      await Promise.all([...instance.inputs].map(([name, buffer]) => this.copyIn(name, inputs[name]!, buffer)));
      await instance.plan.run();
      await this.checkStatus(instance);
      const written = await Promise.all(resolved.targets.map(async ([buffer, target]) => {
        if (target === null) return buffer.clone();
        await target.copyFrom(buffer);
        return target;
      }));
      return byOutputName(instance.outputs, written);
    }
    // The caller's output tensors are allocated while the inputs are copied in and the plan
    // runs (each allocation is a round trip to a pool thread: cloning the outputs, allocation
    // then copy, took 130-190 µs of a run on the H200, 2026-12-02). If anything fails (out of
    // memory), what was allocated is freed, not leaked.
    const allocating = Promise.allSettled(instance.outputs.map(([, buffer]) => DeviceTensor.allocate(buffer.dtype, buffer.shape, this.deviceOrdinal)));
    const freeAll = async (): Promise<void> => {
      for (const r of await allocating) if (r.status === 'fulfilled') r.value.dispose();
    };
    try {
      await Promise.all([...instance.inputs].map(([name, buffer]) => this.copyIn(name, inputs[name]!, buffer)));
      await instance.plan.run();
      await this.checkStatus(instance);
    } catch (error) {
      await freeAll();
      throw error;
    }
    const allocated = await allocating;
    const failed = allocated.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      await freeAll();
      throw failed.reason;
    }
    const outputs = allocated.map((r) => (r as PromiseFulfilledResult<DeviceTensor>).value);
    try {
      await Promise.all(instance.outputs.map(([, buffer], i) => outputs[i]!.copyFrom(buffer)));
    } catch (error) {
      await freeAll();
      throw error;
    }
    return byOutputName(instance.outputs, outputs);
  }

  /**
   * Captures the plan into a CUDA graph on its first run (unless graphs are turned off); a plan
   * that cannot be captured runs step by step from then on, logged once. The capture runs the
   * plan once first, on whatever its input buffers hold: runNow writes the inputs before.
   */
  private async capture(instance: Instantiated): Promise<void> {
    instance.graph = false;
    if (!(this.options.cudaGraphs ?? process.env.TENSORRT_NODE_CUDA_GRAPHS !== '0')) return;
    try {
      await instance.plan.capture();
      instance.graph = true;
    } catch (error) {
      this.log('info', `cuda engine: "${this.network.name}" runs step by step: its plan could not be captured into a CUDA graph (${(error as Error).message})`);
    }
  }

  /** Runs the plan and waits: its CUDA graph when it has one (captured on the first run), else step by step (run-breakdown.js times it). */
  private async execute(instance: Instantiated): Promise<void> {
    if (instance.graph === null) await this.capture(instance);
    await (instance.graph ? instance.plan.replay() : instance.plan.run());
  }

  /** Copies one input into its plan buffer. */
  private async copyIn(name: string, value: RunValue, into: DeviceTensor): Promise<void> {
    const binding = gpuBinding();
    if (into.byteLength === 0) return;
    if (value instanceof Tensor) {
      await binding.gpuCopyHtoD(into.buffer, 0, floatWidthAs(value, into.dtype).data);
      return;
    }
    if (value instanceof DeviceTensor && value.device === this.deviceOrdinal) {
      await into.copyFrom(value);
      return;
    }
    const from = value instanceof DeviceTensor ? value.device : value.residency.ordinal;
    if (from !== this.deviceOrdinal && !this.warnedDevices.has(from)) {
      this.warnedDevices.add(from);
      this.log('warn', `cuda engine on device ${this.deviceOrdinal}: input "${name}" is on device ${from}; copying it (and every later input from device ${from}) through the host`);
    }
    await binding.gpuCopyHtoD(into.buffer, 0, (await value.toHost()).data);
  }

  /** Instantiates, lowers and assembles the network at `shapes`, and prepares its plan. */
  private async instantiate(shapes: Record<string, number[]>, limits: RunLimits): Promise<Instantiated> {
    const network = this.network;
    const instance = instantiate(network, shapes);
    instance.tensors.forEach((t, id) => {
      if (t !== undefined) checkTensorBytes(limits, t.dtype, t.shape, `cuda backend: tensor "${network.tensors[id]!.name}"`, { tensor: network.tensors[id]!.name });
    });
    const lowered = lowerInstance(network, instance, this.locateWeight, this.options.lower, { tf32: this.tf32 });
    const assembled = assemble(lowered.steps, lowered.stepLayers);
    const modules: GpuModule[] = [];
    for (const m of assembled.modules) modules.push(await this.module(m));
    const owned: DeviceTensor[] = [];
    try {
      const alloc = async (dtype: Tensor['dtype'], shape: readonly number[]): Promise<DeviceTensor> => {
        const t = await DeviceTensor.allocate(dtype, shape, this.deviceOrdinal);
        owned.push(t);
        return t;
      };
      const arena = await alloc('uint8', [Math.max(lowered.arenaBytes, 256)]);
      const values = await alloc('uint8', [Math.max(lowered.values.byteLength, 256)]);
      if (lowered.values.byteLength > 0) await gpuBinding().gpuCopyHtoD(values.buffer, 0, lowered.values);
      const io: DeviceTensor[] = [];
      const inputs = new Map<string, DeviceTensor>();
      for (const input of network.inputs) {
        const t = await alloc(network.tensors[input.tensor]!.dtype, shapes[input.name]!);
        inputs.set(input.name, t);
        io.push(t);
      }
      const outputs: Array<[string, DeviceTensor]> = [];
      for (const output of network.outputs) {
        const info = instance.tensors[output.tensor]!;
        const t = await alloc(info.dtype, info.shape);
        outputs.push([output.name, t]);
        io.push(t);
      }
      // The status word of the run-time checks comes right after the I/O buffers (lower-instance.ts).
      const status = lowered.checks.length > 0 ? await alloc('int32', [1]) : undefined;
      const buffers = [arena, this.weights, values, ...io, ...(status === undefined ? [] : [status])];
      if (status !== undefined && lowered.statusBuffer !== buffers.length - 1) {
        throw new InternalError(`cuda engine: the status word is buffer ${buffers.length - 1}, the lowering put it at ${lowered.statusBuffer}`);
      }
      const timed = assembled.spec.steps.some((step) => step.kind === 'gemm' && (step.tune ?? 0) > 1);
      const timing = timed ? await this.timingCache() : null;
      // The counts are the process's: another engine's plan made meanwhile may be counted here too,
      // which at worst writes the file once more or says the budget was spent once too often.
      const before = timed ? gpuBinding().gpuTuningCounts() : null;
      const plan = await GpuPlan.create(assembled.spec, buffers, modules, this.deviceOrdinal, { tuningBudgetMs: this.options.tuningBudgetMs ?? tuningBudgetFromEnv() });
      try {
        if (before !== null) {
          const after = gpuBinding().gpuTuningCounts();
          const untimed = after.overBudget - before.overBudget;
          if (untimed > 0) this.log('info', `cuda engine: the GEMM timing budget of "${network.name}" was spent: ${untimed} GEMMs keep cuBLASLt's first choice`);
          if (timing !== null && after.timed > before.timed) this.saveTimings(timing);
        }
      } catch (error) {
        plan.dispose();
        throw error;
      }
      this.log('debug', `cuda engine: planned "${network.name}" for ${shapeKey(this.inputNames, shapes)}: ${assembled.spec.steps.length} steps, ${lowered.arenaBytes} arena bytes, ${modules.length} modules`);
      return new Instantiated(plan, owned, inputs, outputs, { spec: assembled.spec, labels: assembled.stepLabels, buffers, modules }, { list: lowered.checks, status });
    } catch (error) {
      for (const t of owned) t.dispose();
      throw error;
    }
  }

  /**
   * The timing cache in effect and this device's scope in it, its choices seeded into the
   * process once per file and device; null when there is none.
   *
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the file: it cannot be read or is malformed.
   */
  private timingCache(): Promise<TimingCacheUse | null> {
    const resolving = (this.timing ??= (async () => {
      const file = timingCacheFile(this.options.timingCache);
      if (file === null) return null;
      const [{ version }, name] = await Promise.all([gpuBinding().cublasLtInfo(), deviceName(this.deviceOrdinal)]);
      const scope: TimingScope = { device: name, computeCapability: `${Math.floor(this.arch / 10)}.${this.arch % 10}`, cublasLt: version };
      const key = `${this.deviceOrdinal}\0${file}`;
      if (!seededTimingCaches.has(key)) {
        const taken = gpuBinding().gpuSeedTunedGemms(this.deviceOrdinal, gemmsOf(readTimingCache(file), scope));
        seededTimingCaches.add(key);
        this.log('debug', `cuda engine: ${taken} GEMM algorithm choices read from the timing cache ${file}`);
      }
      return { file, scope };
    })());
    // A failure is not kept: the next plan tries again (the file may have been mended).
    resolving.catch(() => {
      if (this.timing === resolving) this.timing = undefined;
    });
    return resolving;
  }

  /**
   * Writes this process's choices on the device into the timing cache.
   *
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the file: it cannot be written.
   */
  private saveTimings(timing: TimingCacheUse): void {
    const added = addToTimingCache(timing.file, timing.scope, gpuBinding().gpuTunedGemms(this.deviceOrdinal));
    if (added > 0) this.log('debug', `cuda engine: ${added} GEMM algorithm choices written to the timing cache ${timing.file}`);
  }

  /** The loaded module of one kernel source: from the engine's cubins, else compiled now through the cache. */
  private module(m: PlanModule): Promise<GpuModule> {
    let loading = this.modules.get(m.key);
    if (loading === undefined) {
      loading = (async () => {
        const stored = this.kernels.get(m.key);
        let cubin: Uint8Array;
        if (stored !== undefined && stored.sourceHash === m.sourceHash) {
          if (stored.entry !== m.entry) throw new BadModelError(`cuda engine: kernel "${m.key}" is stored with entry "${stored.entry}", the lowering asks for "${m.entry}"`);
          cubin = stored.cubin;
        } else {
          const why = stored === undefined ? 'is not in the engine (a shape the profiles did not foresee)' : 'in the engine was compiled from other source (another tensorrt-node version)';
          this.log('info', `cuda engine: kernel "${m.key}" ${why}; compiling it for sm_${this.arch} through the kernel cache`);
          cubin = await (this.options.compile ?? nvrtcCompiler(this.options.logger))(m, this.arch);
        }
        return loadModule(cubin, [m.entry], this.deviceOrdinal);
      })();
      loading.catch(() => this.modules.delete(m.key));
      this.modules.set(m.key, loading);
    }
    return loading.then((mod) => {
      if (mod.kernels.length !== 1) throw new InternalError(`cuda engine: module of "${m.key}" resolved ${mod.kernels.length} kernels`);
      return mod;
    });
  }
}

/**
 * Where each output of a run goes: `[planBuffer, target]`, the target the caller's `into`
 * tensor for that output, or null for a fresh tensor; or the InvalidArgumentError for an `into`
 * entry that names no output of the engine, or is not a live DeviceTensor on this device with
 * its output's dtype and shape (naming the output). The fast path falls back to the queue on an
 * error; the queued path throws it.
 */
function resolveOutputTargets(
  outputs: ReadonlyArray<readonly [string, DeviceTensor]>,
  into: Readonly<Record<string, DeviceValue>> | undefined,
  ordinal: number,
): { targets: Array<[DeviceTensor, DeviceTensor | null]> } | { error: InvalidArgumentError } {
  if (into === undefined) return { targets: outputs.map(([, buffer]) => [buffer, null]) };
  const names = outputs.map(([name]) => name);
  const unknown = Object.keys(into).find((name) => !names.includes(name));
  if (unknown !== undefined) {
    return { error: new InvalidArgumentError(`run(): "${unknown}" is not an output of this engine; its outputs are ${names.map((n) => `"${n}"`).join(', ')}`, { details: { output: unknown } }) };
  }
  const targets: Array<[DeviceTensor, DeviceTensor | null]> = [];
  for (const [name, buffer] of outputs) {
    const target = Object.hasOwn(into, name) ? into[name] : undefined;
    if (target === undefined) {
      targets.push([buffer, null]);
      continue;
    }
    const error = outputTargetError(name, target, { dtype: buffer.dtype, shape: buffer.shape, device: ordinal });
    if (error !== undefined) return { error };
    if (!(target instanceof DeviceTensor)) return { error: new InvalidArgumentError(`run(): the value given for output "${name}" is not a DeviceTensor`, { details: { output: name } }) };
    targets.push([buffer, target]);
  }
  return { targets };
}

/** The engine's outputs by name, from the values in the plan's output order. */
function byOutputName(outputs: ReadonlyArray<readonly [string, DeviceTensor]>, values: readonly RunValue[]): Record<string, RunValue> {
  const out: Record<string, RunValue> = Object.create(null);
  outputs.forEach(([name], i) => (out[name] = values[i]!));
  return out;
}

/**
 * One step's time in ms per execution: in `'launch'` mode the one-step plan run `repeats` times
 * in one call; in `'graph'` mode a plan of `repeats` copies of the step, captured and replayed.
 */
async function timeStep(step: PlanStep, mode: 'launch' | 'graph', repeats: number, create: (steps: PlanStep[]) => Promise<GpuPlan>): Promise<number> {
  if (mode === 'launch') {
    const one = await create([step]);
    try {
      await one.run(1, { completion: 'pool' });
      const t0 = process.hrtime.bigint();
      await one.run(repeats, { completion: 'pool' });
      return Number(process.hrtime.bigint() - t0) / 1e6 / repeats;
    } finally {
      one.dispose();
    }
  }
  const copies = await create(new Array<PlanStep>(repeats).fill(step));
  try {
    await copies.capture();
    await copies.replay(1);
    // Enough replays that the one wait at the end is noise against the device's work.
    const replays = 5;
    const t0 = process.hrtime.bigint();
    await copies.replay(replays);
    return Number(process.hrtime.bigint() - t0) / 1e6 / (replays * repeats);
  } finally {
    copies.dispose();
  }
}
