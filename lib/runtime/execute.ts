/**
 * Runs a program's segments in order. Used by the worker thread; the single place that
 * defines what running a program means. The tensor-parallel executor
 * (./tensor-parallel/execute.ts) runs each rank with the same pieces.
 *
 * Residency: every value stays where the segment that computed it left it (the host, or the
 * device an engine keeps values on); a segment reading a value from another place gets a
 * copy, made once per run and place, and counted (./residency-plan.ts plans the same count
 * at compile time). Float widths (truncateDouble) are each consumer's business: an engine
 * converts its inputs to what its backend computes in, a fallback graph gets its inputs'
 * dtypes, a program output its declared dtype (lib/engine/float-width.ts).
 */
import { getBackend } from '../backends';
import { floatWidthAs } from '../engine/float-width';
import { residencyOf, type DeviceValue, type RunValue } from '../engine/residency';
import type { Engine, PreparedRun, PreparedValue } from '../engine/backend';
import { InternalError, InvalidArgumentError } from '../errors';
import { DeviceTensor, toDevice } from '../gpu/device-tensor';
import { dtypeInfo, type DType } from '../ir/dtype';
import type { Graph, Node } from '../ir/graph';
import { deserializeGraphFromBuffer } from '../ir/serialize';
import { interpret } from '../interpreter';
// Fallback segments may hold ONNX nodes imported at run time (trt.deferred_node): loading the
// ONNX importer registers their runner, also in a worker thread that loads only this module.
import '../frontends/onnx';
import { bindShapes } from '../interpreter/bind-inputs';
import { Tensor } from '../ir/tensor';
import { fromCarrier, toCarrier } from './complex-io';
import { devicePlace, HOST_PLACE, type CrossingPlan, type Place } from './residency-plan';
import { checkPlannedTensors, checkTensorBytes, DEFAULT_RUN_LIMITS, plannedTensors, type RunLimits } from '../engine/resource-limits';
import type { EngineDevice } from '../engine/device-selection';
import { outputTargetError } from '../engine/output-targets';
import type { EngineSegment, ProgramData, ProgramIO, ProgramSegment } from './segments';
import { resolveLogger, type Logger } from '../logger';

export { floatWidthAs } from '../engine/float-width';

/**
 * A segment ready to run: a loaded engine, or a fallback graph with the dtypes its inputs
 * must have and the tensors it computes (checked against the run limits before it runs).
 */
export type LoadedSegment =
  | { kind: 'engine'; engine: Engine; inputs: string[]; outputs: string[] }
  | { kind: 'fallback'; graph: Graph; inputs: string[]; outputs: string[]; inputDTypes: DType[]; planned: ReturnType<typeof plannedTensors> };

/** The device record an engine is loaded with: its build record, on the device loadProgram() or program.to() placed it. */
const placedDevice = (s: EngineSegment): EngineDevice | null =>
  s.device === undefined ? null : s.placement === undefined ? s.device : { ...s.device, gpuId: s.placement.ordinal };

/** Loads one segment: its engine onto its device, or its fallback graph. */
export async function loadSegment(s: ProgramSegment): Promise<LoadedSegment> {
  if (s.kind === 'engine') return { kind: 'engine', engine: await getBackend(s.backend).load(s.engine, placedDevice(s)), inputs: s.inputs, outputs: s.outputs };
  const graph = deserializeGraphFromBuffer(s.graph);
  return { kind: 'fallback', graph, inputs: s.inputs, outputs: s.outputs, inputDTypes: graph.inputs.map((v) => v.tensorType.dtype), planned: plannedTensors(graph) };
}

/** Releases the engines of loaded segments (only engine segments have one). */
export function disposeSegments(segments: ReadonlyArray<{ kind: string; engine?: Engine }>): void {
  for (const s of segments) s.engine?.dispose();
}

/** The program's constant outputs as tensors over their own copies of the bytes. */
export function loadConstants(data: ProgramData): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, c] of Object.entries(data.constants)) {
    const info = dtypeInfo(c.dtype);
    const copy = c.data.slice();
    out.set(name, new Tensor(c.dtype, c.shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes))));
  }
  return out;
}

/** The dtype a program output's value has inside the program: its carrier's for a complex output. */
const innerDType = (io: ProgramIO): DType => io.complex?.carrier ?? io.dtype;

/** A host value `name` at `dtype` (see floatWidthAs); a float64 copy of a float32 value is held to the run limits. */
function hostValueAs(t: Tensor, name: string, dtype: DType, limits: RunLimits, where: string): Tensor {
  if (t.dtype === 'float32' && dtype === 'float64') checkTensorBytes(limits, dtype, t.shape, `${where}: value "${name}" as float64`, { value: name });
  return floatWidthAs(t, dtype);
}

/** The engine of a program of one engine (where `residency` says) that reads every program input and computes every output (no constants, no complex boundary). */
function directEngine(data: ProgramData, segments: readonly LoadedSegment[], residency: Engine['residency'] = 'host'): Engine | undefined {
  const [s] = segments;
  if (segments.length !== 1 || s?.kind !== 'engine' || s.engine.residency !== residency) return undefined;
  if ([...data.inputs, ...data.outputs].some((io) => io.complex !== undefined)) return undefined;
  const inputValues = data.inputs.map((io) => io.value);
  if (new Set(inputValues).size !== inputValues.length || s.inputs.length !== inputValues.length || !s.inputs.every((v) => inputValues.includes(v))) return undefined;
  if (!data.outputs.every((io) => s.outputs.includes(io.value))) return undefined;
  return s.engine;
}

/**
 * A run of a direct program (see directEngine) prepared by its engine (Engine.prepareRun),
 * for runs on the calling thread; undefined where the engine has none, or where a program
 * input or output has another dtype than the engine's (the prepared run converts nothing
 * on the way out, and takes inputs at the program's dtypes).
 */
export function preparedRun(data: ProgramData, segments: readonly LoadedSegment[], limits: RunLimits): PreparedRun | undefined {
  const engine = directEngine(data, segments);
  const named = (io: ProgramIO): PreparedValue => ({ name: io.value, dtype: io.dtype });
  // Static input shapes are the ones program.run()'s fast check holds every input to before it stages a run (lib/runtime/program.ts).
  const input = (io: ProgramIO): PreparedValue => (io.shape.every((d) => typeof d === 'number') ? { ...named(io), checkedShape: io.shape as number[] } : named(io));
  return engine?.prepareRun?.(data.inputs.map(input), data.outputs.map(named), limits);
}

/**
 * A run that skips ProgramRun's bookkeeping, for the common program of one host engine
 * that reads every program input and computes every output (no constants, no complex
 * boundary): what ProgramRun would do, without its maps, copies cache and awaits per value.
 * Undefined for any other program. Worth it for models that compute in microseconds.
 */
export function directRun(data: ProgramData, segments: readonly LoadedSegment[], limits: RunLimits): ((inputs: readonly Tensor[]) => Promise<Tensor[]>) | undefined {
  const engine = directEngine(data, segments);
  if (engine === undefined) return undefined;
  const inputValues = data.inputs.map((io) => io.value);
  return async (inputs) => {
    // Null prototype: a value named "__proto__" or "constructor" is an ordinary key.
    const feeds: Record<string, RunValue> = Object.create(null);
    for (let i = 0; i < inputValues.length; i++) feeds[inputValues[i]!] = inputs[i]!;
    const out = await engine.run(feeds, limits);
    return data.outputs.map((io) => {
      const t = Object.hasOwn(out, io.value) ? out[io.value] : undefined;
      if (!(t instanceof Tensor)) throw new InternalError(`program: the engine of a host segment left output value ${io.value} ${t === undefined ? 'unset' : 'off the host'}`);
      return hostValueAs(t, io.value, io.dtype, limits, 'program');
    });
  };
}

/** A run to device outputs: inputs in program input order, optional targets in output order (see ProgramRun.deviceOutputs). */
export type DeviceRun = (inputs: readonly RunValue[], targets?: readonly DeviceTensor[]) => Promise<DeviceValue[]>;

/**
 * A run to device outputs without ProgramRun's bookkeeping, for a program of one device engine
 * that reads every program input and computes every output (no constants, no complex
 * boundary, each output its own value), given inputs already on that engine's device: the feeds and `into` targets by
 * name, one engine call, the outputs in program order. What deviceOutputs() does with an output
 * the engine left at another dtype, or fresh where a target was given, it does here too.
 * Undefined for any other program.
 */
export function directDeviceRun(data: ProgramData, segments: readonly LoadedSegment[], limits: RunLimits): DeviceRun | undefined {
  const engine = directEngine(data, segments, 'device');
  // Two outputs of one value would hand the caller one tensor twice: ProgramRun copies the second.
  if (engine === undefined || new Set(data.outputs.map((io) => io.value)).size !== data.outputs.length) return undefined;
  const ordinal = engine.deviceOrdinal ?? 0;
  const inputValues = data.inputs.map((io) => io.value);
  return async (inputs, targets) => {
    const feeds: Record<string, RunValue> = Object.create(null);
    for (let i = 0; i < inputValues.length; i++) feeds[inputValues[i]!] = inputs[i]!;
    let into: Record<string, DeviceValue> | undefined;
    if (targets !== undefined) {
      into = Object.create(null) as Record<string, DeviceValue>;
      data.outputs.forEach((io, i) => (into![io.value] = targets[i]!));
    }
    const out = await engine.run(feeds, limits, into);
    const results: DeviceValue[] = [];
    try {
      for (const [i, io] of data.outputs.entries()) {
        const v = Object.hasOwn(out, io.value) ? out[io.value] : undefined;
        if (v === undefined || v instanceof Tensor) throw new InternalError(`program: the device engine left output value ${io.value} ${v === undefined ? 'unset' : 'on the host'}`);
        results.push(await handOver(v, io, ordinal, limits, targets?.[i]));
      }
    } catch (error) {
      for (const v of new Set([...Object.values(out), ...results])) if (!targets?.includes(v as DeviceTensor)) (v as { dispose?: () => void }).dispose?.();
      throw error;
    }
    return results;
  };
}

/**
 * Writes program output `name` into the caller's `target` (run(inputs, { outputs: [...] })):
 * checked against the output's dtype `dtype` and the value's shape on device `ordinal`; a
 * device value already there at that dtype by a device-to-device copy, anything else from the
 * host at that dtype (`onHost`). The one place every run path writes a target.
 *
 * @throws {InvalidArgumentError} the target does not fit the output (lib/engine/output-targets.ts).
 */
export async function writeTarget(target: DeviceTensor, name: string, dtype: DType, value: RunValue, ordinal: number, onHost: () => Promise<Tensor>): Promise<DeviceTensor> {
  const error = outputTargetError(name, target, { dtype, shape: value.shape, device: ordinal });
  if (error !== undefined) throw error;
  if (value instanceof DeviceTensor && value.device === ordinal && value.dtype === dtype) await target.copyFrom(value);
  else await target.write(await onHost());
  return target;
}

/**
 * Output `io` as the caller receives it on device `ordinal`: `v` itself where it already is
 * what was asked for, else a copy at the declared dtype (into `target` where one was given; `v`
 * is then disposed). The copy of a value at another dtype goes through the host.
 */
async function handOver(v: DeviceValue, io: ProgramIO, ordinal: number, limits: RunLimits, target: DeviceTensor | undefined): Promise<DeviceValue> {
  if (target !== undefined && v === target) return v;
  if (target === undefined && v.residency.ordinal === ordinal && v.dtype === io.dtype) return v;
  const onHost = async (): Promise<Tensor> => hostValueAs(await v.toHost(), io.value, io.dtype, limits, 'program');
  const copy = target !== undefined ? await writeTarget(target, io.name, io.dtype, v, ordinal, onHost) : await toDevice(await onHost(), ordinal);
  (v as { dispose?: () => void }).dispose?.();
  return copy;
}

/** What a profile hooks into a segment's run (ProgramRun.runSegment). */
export interface SegmentHooks {
  /** Runs an engine segment's engine on the feeds it was given, instead of engine.run(). */
  engineRun?: (engine: Engine, feeds: Readonly<Record<string, RunValue>>, limits: RunLimits) => Promise<Record<string, RunValue>>;
  /** Told each node of a fallback segment and its wall-clock time in ms. */
  onNode?: (node: Node, ms: number) => void;
}

const placeOf = (v: RunValue): Place => {
  const r = residencyOf(v);
  return r.kind === 'host' ? HOST_PLACE : devicePlace(r.ordinal);
};

/** The values of one run of one program (one rank): constants, inputs, and what segments compute. */
export class ProgramRun {
  /** Each value where the segment that computed it left it. */
  private readonly env: Map<string, RunValue>;
  /** Copies of values made for segments in another place, by value and place. */
  private readonly copies = new Map<string, Map<Place, RunValue>>();
  /** The crossings this run made so far. */
  readonly crossings: CrossingPlan = { hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 };
  /** Values release() must leave alone: the caller's inputs, and device outputs handed to the caller. */
  private readonly kept = new Set<RunValue>();
  /** Program input names by the value they bind (for onInputMoved). */
  private readonly inputNames = new Map<string, string>();

  /**
   * @param constants the program's constants (loadConstants()).
   * @param inputs in program input order: host tensors, or device values (not for complex inputs: see hostComplexInputs()).
   * @param where names the program in errors (`program`, `rank 1`).
   * @param limits what one run may allocate.
   * @param onInputMoved told when a program input given on one device is copied to an engine on another.
   */
  constructor(
    private readonly data: ProgramData,
    constants: ReadonlyMap<string, Tensor>,
    inputs: readonly RunValue[],
    private readonly where: string,
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    private readonly onInputMoved?: (input: string, from: number, to: number) => void,
  ) {
    this.env = new Map<string, RunValue>(constants);
    data.inputs.forEach((io, i) => {
      this.inputNames.set(io.value, io.name);
      const v = inputs[i]!;
      if (v instanceof Tensor) {
        this.env.set(io.value, toCarrier(io, v));
        return;
      }
      // The caller's, and a view of the caller's memory: release() leaves both alone.
      const carried = viewableAsCarrier(io, v) ? DeviceTensor.reinterpret(v, io.complex!.carrier, [...v.shape, 2]) : v;
      this.kept.add(v).add(carried);
      this.env.set(io.value, carried);
    });
  }

  /** The value `name`, where some earlier segment (or the inputs) left it. */
  private value(name: string): RunValue {
    const v = this.env.get(name);
    if (v === undefined) throw new InternalError(`${this.where}: value ${name} is needed before any segment computed it`);
    return v;
  }

  /** The value `name` where it is now (no copy): a host Tensor or a device value. */
  peek(name: string): RunValue {
    return this.value(name);
  }

  /** The value `name` on the host (copied there once if a device holds it). */
  async take(name: string): Promise<Tensor> {
    return (await this.at(name, HOST_PLACE)) as Tensor;
  }

  /** The value `name` in `place`; `upload` copies a host tensor to the device of `place`. */
  private async at(name: string, place: Place, upload?: (t: Tensor) => Promise<RunValue>): Promise<RunValue> {
    const v = this.value(name);
    const from = placeOf(v);
    if (from === place) return v;
    const cached = this.copies.get(name)?.get(place);
    if (cached !== undefined) return cached;
    let copy: RunValue;
    if (place === HOST_PLACE) {
      copy = await (v as Exclude<RunValue, Tensor>).toHost();
      this.crossings.deviceToHost++;
    } else {
      if (upload === undefined) throw new InternalError(`${this.where}: value ${name} is needed on ${place}, but nothing can copy it there`);
      const host = v instanceof Tensor ? v : await v.toHost();
      copy = await upload(host);
      if (v instanceof Tensor) this.crossings.hostToDevice++;
      else this.crossings.deviceToDevice++;
    }
    const byPlace = this.copies.get(name) ?? new Map<Place, RunValue>();
    byPlace.set(place, copy);
    this.copies.set(name, byPlace);
    return copy;
  }

  /** Sets the value `name` (computed in the place `value` says). */
  set(name: string, value: RunValue): void {
    this.env.set(name, value);
    this.copies.delete(name);
  }

  /** The value `name` on the host at `dtype` (see floatWidthAs); a float64 copy of a float32 value is held to the run limits. */
  async takeAs(name: string, dtype: DType): Promise<Tensor> {
    return hostValueAs(await this.take(name), name, dtype, this.limits, this.where);
  }

  /**
   * Runs one segment on the values it reads and records what it computes. `hooks` (a
   * profile's, ./profile.ts) may run the engine itself, and is told each fallback node's time.
   */
  async runSegment(s: LoadedSegment, hooks?: SegmentHooks): Promise<void> {
    if (s.kind === 'engine') {
      const { engine } = s;
      const place = engine.residency === 'host' ? HOST_PLACE : undefined;
      // Null prototype: a value named "__proto__" or "constructor" is an ordinary key.
      const feeds: Record<string, RunValue> = Object.create(null);
      for (const name of s.inputs) {
        feeds[name] = place === HOST_PLACE ? await this.take(name) : await this.onDevice(name, engine);
      }
      const out = hooks?.engineRun !== undefined ? await hooks.engineRun(engine, feeds, this.limits) : await engine.run(feeds, this.limits);
      for (const name of s.outputs) if (Object.hasOwn(out, name)) this.set(name, out[name]!);
    } else {
      const inputs: Tensor[] = [];
      for (let i = 0; i < s.inputs.length; i++) inputs.push(await this.takeAs(s.inputs[i]!, s.inputDTypes[i]!));
      checkPlannedTensors(this.limits, s.planned, bindShapes(s.graph, inputs), this.where);
      // Loops in the segment are held to the program's tensor limit as they grow.
      const limits = { maxTensorBytes: this.limits.maxTensorBytes };
      const out = interpret(s.graph, inputs, hooks?.onNode === undefined ? { limits } : { onNode: hooks.onNode, limits });
      s.outputs.forEach((name, i) => this.set(name, out[i]!));
    }
  }

  /** The value `name` on the device of a device engine (its upload() copies host values there). */
  private async onDevice(name: string, engine: Engine): Promise<RunValue> {
    const upload = engine.upload?.bind(engine);
    if (upload === undefined) throw new InternalError(`${this.where}: an engine that keeps values on a device has no upload()`);
    const ordinal = engine.deviceOrdinal ?? 0;
    const r = residencyOf(this.value(name));
    const input = this.inputNames.get(name);
    if (r.kind === 'device' && r.ordinal !== ordinal && input !== undefined) this.onInputMoved?.(input, r.ordinal, ordinal);
    return this.at(name, devicePlace(ordinal), upload);
  }

  /**
   * Frees what the run holds on devices (engine outputs, uploaded copies) now rather than at
   * their finalizers: a program run many times would otherwise hold device memory until the
   * collector runs. Host values are left to the collector.
   */
  release(): void {
    const values = [...this.env.values(), ...[...this.copies.values()].flatMap((m) => [...m.values()])];
    for (const v of new Set(values)) if (!(v instanceof Tensor) && !this.kept.has(v)) (v as { dispose?: () => void }).dispose?.();
    this.env.clear();
    this.copies.clear();
  }

  /** The program outputs in declared order, at their declared dtypes, on the host. */
  async outputs(): Promise<Tensor[]> {
    const out: Tensor[] = [];
    for (const io of this.data.outputs) out.push(fromCarrier(io, await this.takeAs(io.value, innerDType(io))));
    return out;
  }

  /**
   * The program outputs in declared order, at their declared dtypes, on device `ordinal`: a
   * value an engine left there is handed over as it is (release() then leaves it alone); any
   * other is copied there. With `targets` (one per output), each output is written into its
   * target instead. Complex outputs are refused: their complex form exists on the host only.
   */
  async deviceOutputs(ordinal: number, targets?: readonly DeviceTensor[]): Promise<DeviceValue[]> {
    const out: DeviceValue[] = [];
    for (const [i, io] of this.data.outputs.entries()) {
      if (io.complex !== undefined) {
        throw new InvalidArgumentError(`program output "${io.name}" is ${io.dtype}: complex outputs are returned on the host only; run without outputs: 'device'`, { details: { output: io.name } });
      }
      const v = this.value(io.value);
      const target = targets?.[i];
      if (target !== undefined) {
        out.push(await writeTarget(target, io.name, io.dtype, v, ordinal, () => this.takeAs(io.value, io.dtype)));
      } else if (!(v instanceof Tensor) && v.residency.ordinal === ordinal && v.dtype === io.dtype && !this.kept.has(v)) {
        this.kept.add(v);
        out.push(v);
      } else {
        out.push(await toDevice(await this.takeAs(io.value, io.dtype), ordinal));
      }
    }
    return out;
  }
}

/**
 * Whether complex input `v` for `io` can be seen as its carrier where it is: the same device
 * memory as [..., 2] reals (complex64 as float32, complex128 as float64: zero copy, as
 * toCarrier() on the host). Not so for a complex128 carried as float32 (a truncating copy,
 * made on the host) or a device value that is not a DeviceTensor.
 */
function viewableAsCarrier(io: ProgramIO, v: RunValue): v is DeviceTensor {
  const carrier = io.complex?.carrier;
  if (carrier === undefined || !(v instanceof DeviceTensor) || v.disposed) return false;
  return (v.dtype === 'complex64' && carrier === 'float32') || (v.dtype === 'complex128' && carrier === 'float64');
}

/**
 * Complex program inputs given on a device that cannot be seen as their carrier there
 * (viewableAsCarrier()), read back to the host (the complex form is turned into its real
 * carrier there); every other input as it is.
 */
async function hostComplexInputs(data: ProgramData, inputs: readonly RunValue[]): Promise<RunValue[]> {
  return Promise.all(
    inputs.map((v, i) => {
      const io = data.inputs[i]!;
      return io.complex !== undefined && !(v instanceof Tensor) && !viewableAsCarrier(io, v) ? v.toHost() : v;
    }),
  );
}

/** What {@link ProgramExecutor.preload} measured: loading the engines, and a warm run on zeros (when shapes were known and it succeeded). */
export interface PreloadReport {
  loadMs: number;
  runMs?: number;
  /** The elements of the timed run's inputs, all inputs together. */
  inputElements?: number;
}

/** The elements of `tensors`, all together. */
export const elementsOf = (tensors: readonly { shape: readonly number[] }[]): number => tensors.reduce((n, t) => n + t.shape.reduce((a, d) => a * d, 1), 0);

/** How many warm runs preload() times at most, and for how long in all. */
const TIMED_RUNS = 10;
const PRELOAD_TIMING_MS = 50;

/** The input shapes, when every dim is a number. */
function staticShapes(inputs: readonly ProgramIO[]): number[][] | undefined {
  const shapes = inputs.map((io) => io.shape);
  return shapes.every((shape) => shape.every((d) => typeof d === 'number')) ? (shapes as number[][]) : undefined;
}

/** Runs one program: its segments loaded once, then run in order for each set of inputs. */
export class ProgramExecutor {
  private segments: LoadedSegment[] | undefined;
  private loading: Promise<LoadedSegment[]> | undefined;
  /** directRun() of the loaded segments, where it applies. */
  private direct: ((inputs: readonly Tensor[]) => Promise<Tensor[]>) | undefined;
  /** directDeviceRun() of the loaded segments, where it applies. */
  private directDevice: DeviceRun | undefined;
  /** prepared()'s answer once asked (null: not yet). */
  private preparedRun: PreparedRun | undefined | null = null;
  private readonly constants: Map<string, Tensor>;
  /** The crossings of the last run (the same every run: ./residency-plan.ts plans them). */
  lastCrossings: CrossingPlan | undefined;
  /** Inputs already warned about arriving on another device than their engine's. */
  private readonly movedInputs = new Set<string>();

  /** @param log receives the warning when the caller's device input must move to an engine's device (once per input). */
  constructor(
    private readonly data: ProgramData,
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    private readonly log: Logger = resolveLogger(),
  ) {
    this.constants = loadConstants(data);
  }

  /** Warns, once per program input, that the caller's tensor is on another device than the engine that reads it. */
  private readonly inputMoved = (input: string, from: number, to: number): void => {
    if (this.movedInputs.has(input)) return;
    this.movedInputs.add(input);
    this.log(
      'warn',
      `program input "${input}" is on device ${from}, but the engine that reads it runs on device ${to}: it is copied there (through the host) on every run; give it on device ${to}, or move the program with program.to(${from})`,
    );
  };

  /** Loads every engine once (the first run waits for it). */
  private async loaded(): Promise<LoadedSegment[]> {
    if (this.segments !== undefined) return this.segments;
    this.loading ??= (async () => {
      const loaded: LoadedSegment[] = [];
      try {
        for (const s of this.data.segments) loaded.push(await loadSegment(s));
      } catch (error) {
        disposeSegments(loaded);
        this.loading = undefined;
        throw error;
      }
      return loaded;
    })();
    const segments = await this.loading;
    this.direct = directRun(this.data, segments, this.limits);
    this.directDevice = directDeviceRun(this.data, segments, this.limits);
    this.segments = segments;
    return segments;
  }

  /**
   * Loads every engine now (a failure leaves the next run to try again and report it), then,
   * where every input shape is known (or `shapes` gives them), runs once on zeros (its result
   * and any error dropped), so that the first real run finds this thread's code compiled and
   * its buffers allocated, and once more timed: what a warm run costs here, for the choice of
   * the thread that runs the program (lib/runtime/in-thread.ts).
   */
  async preload(shapes?: readonly (readonly number[])[]): Promise<PreloadReport> {
    const t0 = performance.now();
    await this.loaded();
    const loadMs = performance.now() - t0;
    const probe = shapes ?? staticShapes(this.data.inputs);
    if (probe === undefined) return { loadMs };
    const zeros = (): Tensor[] => this.data.inputs.map((io, i) => new Tensor(io.dtype, [...probe[i]!]));
    try {
      await this.run(zeros());
      // The fastest of a few warm runs (up to TIMED_RUNS, or PRELOAD_TIMING_MS in all): one
      // run slowed by a busy machine would misstate what a run costs.
      let runMs = Infinity;
      for (let k = 0, spent = 0; k < TIMED_RUNS && spent < PRELOAD_TIMING_MS; k++) {
        const t1 = performance.now();
        await this.run(zeros());
        const ms = performance.now() - t1;
        runMs = Math.min(runMs, ms);
        spent += ms;
      }
      return { loadMs, runMs, inputElements: elementsOf(probe.map((shape) => ({ shape }))) };
    } catch {
      return { loadMs };
    }
  }

  /**
   * The loaded segments (loading them first if need be) and a fresh ProgramRun over `inputs`
   * (in program input order): what a profile (./profile.ts) runs segment by segment.
   */
  async segmentRun(inputs: readonly RunValue[]): Promise<{ segments: readonly LoadedSegment[]; run: ProgramRun }> {
    const segments = this.segments ?? (await this.loaded());
    return { segments, run: new ProgramRun(this.data, this.constants, await hostComplexInputs(this.data, inputs), 'program', this.limits, this.inputMoved) };
  }

  /** preparedRun() of the loaded segments, for runs on the calling thread (lib/runtime/in-thread.ts); undefined before they are loaded, or where none applies. */
  prepared(): PreparedRun | undefined {
    if (this.segments === undefined) return undefined;
    if (this.preparedRun === null) this.preparedRun = preparedRun(this.data, this.segments, this.limits);
    return this.preparedRun;
  }

  /** Inputs in program input order; resolves outputs in program output order, on the host. */
  async run(inputs: readonly RunValue[]): Promise<Tensor[]> {
    if (this.segments === undefined) await this.loaded();
    if (this.direct !== undefined && inputs.every((v) => v instanceof Tensor)) {
      const outputs = await this.direct(inputs as readonly Tensor[]);
      this.lastCrossings = { hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 };
      return outputs;
    }
    return this.runWith(inputs, (run) => run.outputs());
  }

  /**
   * Like run(), with the outputs on device `ordinal`, or written into `targets` (see
   * ProgramRun.deviceOutputs()). A program of one device engine given its inputs on that device
   * runs directly (directDeviceRun()).
   */
  async runToDevice(inputs: readonly RunValue[], ordinal: number, targets?: readonly DeviceTensor[]): Promise<DeviceValue[]> {
    if (this.segments === undefined) await this.loaded();
    const direct = this.directDevice;
    if (direct !== undefined && inputs.every((v) => v instanceof DeviceTensor && v.device === ordinal)) {
      const outputs = await direct(inputs, targets);
      this.lastCrossings = { hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 };
      return outputs;
    }
    return this.runWith(inputs, (run) => run.deviceOutputs(ordinal, targets));
  }

  private async runWith<T>(inputs: readonly RunValue[], collect: (run: ProgramRun) => Promise<T>): Promise<T> {
    const segments = this.segments ?? (await this.loaded());
    const run = new ProgramRun(this.data, this.constants, await hostComplexInputs(this.data, inputs), 'program', this.limits, this.inputMoved);
    try {
      for (const s of segments) await run.runSegment(s);
      const outputs = await collect(run);
      this.lastCrossings = run.crossings;
      return outputs;
    } finally {
      run.release();
    }
  }

  /** Releases the engines. */
  dispose(): void {
    if (this.segments !== undefined) disposeSegments(this.segments);
  }
}
