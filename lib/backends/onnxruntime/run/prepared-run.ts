/**
 * OrtEngine.prepareRun(): runs of one engine on the calling thread with the per-run work cut
 * to array steps (the mlp computes in ~15 µs, so every microsecond of JavaScript
 * around it shows). Settled once: which description entry each input and output is, and
 * that no dtype crosses the session boundary converted (bfloat16 does: such engines keep
 * OrtEngine.run()). Per run: the checks of OrtEngine.run() as comparisons, falling back to
 * its own check functions to throw the same typed errors; the inputs copied into staging
 * buffers whose onnxruntime tensors and feeds object are reused from run to run (the caller
 * may change its inputs as soon as run() returns, while onnxruntime reads them a
 * setImmediate later); the outputs wrapped as Tensors over onnxruntime's own buffers,
 * without a copy (the copy OrtEngine.run() makes is for posting them to another thread).
 */
import type { TypedArray } from '../../../ir/dtype';
import { dtypeInfo, type DTypeInfo } from '../../../ir/dtype';
import { checkTensorBytes, type RunLimits } from '../../../engine/resource-limits';
import { Tensor, trustedTensor, typedArrayName } from '../../../ir/tensor';
import type { PreparedRun, PreparedValue, RunSettled, StagedRun } from '../../../engine/backend';
import type { OrtEngineDescription, OrtEngineInput, OrtEngineIO } from '../engine-format';
import { boundaryDType } from '../layers/index';
import type { OrtModule } from '../ort-module';
import type { SessionRun } from './session-handler';

type OrtTensor = InstanceType<OrtModule['Tensor']>;

/** What OrtEngine lends a prepared run: its session (set to null when the engine is disposed: a field, not a call, on every run's path) and its own checks and error mapping. */
export interface PreparedRunHost {
  readonly ort: OrtModule;
  readonly description: OrtEngineDescription;
  session: SessionRun | null;
  /** Throws OrtEngine.run()'s error for inputs (in description order) that fail its checks. */
  checkInputs(inputs: readonly Tensor[]): void;
  /** OrtEngine.run()'s error for a disposed engine. */
  disposedError(): Error;
  runError(error: unknown): Error;
}

/** Staging buffers of one set of input shapes, with the onnxruntime tensors over them. */
interface Staging extends StagedRun {
  readonly shapes: readonly (readonly number[])[];
  readonly buffers: TypedArray[];
  readonly feeds: Record<string, OrtTensor>;
}

/** Free staging sets kept per prepared run: more than one is in use only when runs are queued, or input shapes vary. */
const MAX_FREE_STAGINGS = 4;

const sameShape = (a: readonly number[], b: readonly number[]): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

/** `settled.failed(error)`'s throw, as a value to reject with. */
function settleFailed(settled: RunSettled, error: unknown): unknown {
  try {
    return settled.failed(error);
  } catch (thrown) {
    return thrown;
  }
}

/** The prepared run of `inputs` → `outputs` (value names), or undefined where a name is not the engine's or a dtype is converted at the boundary. */
export function prepareOrtRun(host: PreparedRunHost, inputs: readonly PreparedValue[], outputs: readonly PreparedValue[], limits: RunLimits): PreparedRun | undefined {
  const { description } = host;
  const declared = description.inputs;
  if (inputs.length !== declared.length || new Set(inputs.map((v) => v.name)).size !== inputs.length) return undefined;
  const ins = inputs.map((v) => declared.find((d) => d.name === v.name));
  const outs = outputs.map((v) => description.outputs.find((d) => d.name === v.name));
  const usable = (d: OrtEngineIO | undefined, k: number, wanted: readonly PreparedValue[]): boolean => d !== undefined && d.dtype === wanted[k]!.dtype && boundaryDType(d.dtype) === d.dtype;
  if (!ins.every((d, k) => usable(d, k, inputs)) || !outs.every((d, k) => usable(d, k, outputs))) return undefined;
  // The caller's own check of every input against the engine's static shape implies fits().
  const prechecked = inputs.every((v, k) => v.checkedShape !== undefined && ins[k]!.shape.every((n) => n >= 0) && sameShape(v.checkedShape, ins[k]!.shape));
  return new OrtPreparedRun(host, ins as OrtEngineInput[], outs as OrtEngineIO[], limits, prechecked);
}

class OrtPreparedRun implements PreparedRun {
  private readonly free: Staging[] = [];
  /** Whether any input has a dim decided at run time (then the optimization profiles are checked). */
  private readonly dynamic: boolean;
  /** The position in the prepared order of each input of the description. */
  private readonly positions: number[];
  private readonly outputInfo: DTypeInfo[];
  /**
   * The run in flight started without closures of its own (see start()), and its caller's
   * RunSettled: runs on one thread are queued, so one at a time is the rule; a second start()
   * while one is in flight takes closures instead.
   */
  private current: Staging | undefined;
  private currentSettled: RunSettled | undefined;

  constructor(
    private readonly host: PreparedRunHost,
    private readonly inputs: readonly OrtEngineInput[],
    private readonly outputs: readonly OrtEngineIO[],
    private readonly limits: RunLimits,
    /** Whether the caller checks every input against the engine's static shapes before stage() (PreparedValue.checkedShape). */
    private readonly prechecked: boolean,
  ) {
    this.dynamic = inputs.some((d) => d.shape.some((n) => n < 0));
    this.positions = host.description.inputs.map((d) => inputs.indexOf(d));
    this.outputInfo = outputs.map((o) => dtypeInfo(o.dtype));
  }

  stage(given: readonly Tensor[]): StagedRun {
    if (this.host.session === null) throw this.host.disposedError();
    if (!this.prechecked && !this.fits(given)) this.host.checkInputs(this.positions.map((k) => given[k]!));
    const staging = this.staging(given);
    for (let k = 0; k < given.length; k++) staging.buffers[k]!.set(given[k]!.data as never);
    return staging;
  }

  start(staged: StagedRun, settled?: RunSettled): Promise<Tensor[]> {
    const staging = staged as Staging;
    const session = this.host.session;
    if (session === null) {
      this.release(staging);
      const error = this.host.disposedError();
      return Promise.reject(settled === undefined ? error : settleFailed(settled, error));
    }
    let running: Promise<Record<string, unknown>>;
    try {
      running = session.run(staging.feeds);
    } catch (error) {
      // Not the handler's way (it is async), but a throw here must still end the run through `settled`.
      running = Promise.reject(error);
    }
    if (this.current === undefined) {
      this.current = staging;
      this.currentSettled = settled;
      return running.then(this.onResults, this.onError);
    }
    return running.then(
      (results) => this.finish(staging, settled, results),
      (error: unknown) => this.fail(staging, settled, error),
    );
  }

  /** The continuations of the run in flight without closures of its own (see current). */
  private readonly onResults = (results: Record<string, unknown>): Tensor[] => {
    const staging = this.current!;
    const settled = this.currentSettled;
    this.current = this.currentSettled = undefined;
    return this.finish(staging, settled, results);
  };

  private readonly onError = (error: unknown): never => {
    const staging = this.current!;
    const settled = this.currentSettled;
    this.current = this.currentSettled = undefined;
    return this.fail(staging, settled, error);
  };

  private finish(staging: Staging, settled: RunSettled | undefined, results: Record<string, unknown>): Tensor[] {
    this.release(staging);
    if (settled === undefined) return this.wrap(results);
    let outputs: Tensor[];
    try {
      outputs = this.wrap(results);
    } catch (error) {
      return settled.failed(error);
    }
    return settled.done(outputs);
  }

  private fail(staging: Staging, settled: RunSettled | undefined, error: unknown): never {
    this.release(staging);
    const typed = this.host.runError(error);
    if (settled === undefined) throw typed;
    return settled.failed(typed);
  }

  release(staged: StagedRun): void {
    // The oldest goes first: with run-time dims, the shapes of the latest runs are the likeliest next.
    if (this.free.length >= MAX_FREE_STAGINGS) this.free.shift();
    this.free.push(staged as Staging);
  }

  /** Whether `given` passes OrtEngine.run()'s checks (dtypes, ranks, static dims, one optimization profile): comparisons only. */
  private fits(given: readonly Tensor[]): boolean {
    if (given.length !== this.inputs.length) return false;
    for (let k = 0; k < given.length; k++) {
      const t = given[k];
      const d = this.inputs[k]!;
      if (!(t instanceof Tensor) || t.dtype !== d.dtype || t.shape.length !== d.shape.length) return false;
      for (let i = 0; i < d.shape.length; i++) if (d.shape[i]! >= 0 && d.shape[i] !== t.shape[i]) return false;
    }
    return !this.dynamic || this.inAProfile(given);
  }

  /** Whether every dim lies within one optimization profile (the inputs without profiles count as fitting, as in checkProfiles). */
  private inAProfile(given: readonly Tensor[]): boolean {
    let count = 0;
    for (const d of this.inputs) count = Math.max(count, d.profiles.length);
    if (count === 0) return true;
    for (let p = 0; p < count; p++) {
      let fits = true;
      for (let k = 0; k < given.length && fits; k++) {
        const profile = this.inputs[k]!.profiles[p];
        if (profile === undefined) continue;
        const shape = given[k]!.shape;
        for (let i = 0; i < shape.length; i++) {
          if (shape[i]! < profile.min[i]! || shape[i]! > profile.max[i]!) {
            fits = false;
            break;
          }
        }
      }
      if (fits) return true;
    }
    return false;
  }

  /** A free staging set of the shapes of `given`, or a new one. */
  private staging(given: readonly Tensor[]): Staging {
    // Prechecked inputs have the engine's static shapes, as every staging set has.
    if (this.prechecked && this.free.length > 0) return this.free.pop()!;
    for (let s = 0; s < this.free.length; s++) {
      const candidate = this.free[s]!;
      let same = true;
      for (let k = 0; k < given.length && same; k++) same = sameShape(candidate.shapes[k]!, given[k]!.shape);
      if (same) {
        this.free[s] = this.free[this.free.length - 1]!;
        this.free.pop();
        return candidate;
      }
    }
    const buffers = given.map((t, k) => new (dtypeInfo(this.inputs[k]!.dtype).storage)(t.data.length) as TypedArray);
    const feeds: Record<string, OrtTensor> = Object.create(null);
    this.inputs.forEach((d, k) => (feeds[d.name] = new this.host.ort.Tensor(d.dtype as never, buffers[k] as never, [...given[k]!.shape])));
    return { staged: true, shapes: given.map((t) => [...t.shape]), buffers, feeds };
  }

  /** The outputs in prepared order, over onnxruntime's buffers. */
  private wrap(results: Record<string, unknown>): Tensor[] {
    const out = new Array<Tensor>(this.outputs.length);
    for (let k = 0; k < this.outputs.length; k++) {
      const o = this.outputs[k]!;
      const t = results[o.name] as OrtTensor | undefined;
      if (t === undefined) throw this.host.runError(new Error(`output "${o.name}" is missing from onnxruntime's results`));
      const { dims } = t;
      const data = t.data as TypedArray;
      const info = this.outputInfo[k]!;
      let count = 1;
      for (let i = 0; i < dims.length; i++) count *= dims[i]!;
      if (count * info.itemBytes > this.limits.maxTensorBytes) checkTensorBytes(this.limits, o.dtype, dims, `onnxruntime backend: output "${o.name}"`, { output: o.name });
      // The checks of the Tensor constructor that onnxruntime's output could fail (its dims
      // are sizes); where they fail, the constructor throws its error.
      // (The constructor comparison first: this realm's arrays, onnxruntime's case, pass it without the two builtin calls of typedArrayName.)
      const storageOk = data.constructor === info.storage || typedArrayName(data) === info.storage.name;
      out[k] = storageOk && data.length === count * info.lanes ? trustedTensor(o.dtype, dims, data) : new Tensor(o.dtype, dims, data);
    }
    return out;
  }
}
