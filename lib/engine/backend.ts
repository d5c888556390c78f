/**
 * The backend contract (docs/backends.md). A backend says whether it can work here
 * (available(), with the reasons when not), turns a Network (lib/network) into engine bytes
 * (build), and turns engine bytes into an Engine for one device (load). Engine bytes are
 * self-contained: an Engine can be created from them in another process or on a worker
 * thread, without the Network they came from.
 *
 * Names are a closed union and the registry (../backends/registry.ts) is a record over it, so
 * asking for a backend by name and getting another, or a name without a backend, cannot
 * happen.
 */
import type { DataDependentSizes, QuantizeDescription } from '../conversion/types';
import type { DType } from '../ir/dtype';
import type { LayerKind, Network, QuantizedDType } from '../network';
import type { EngineDevice } from './device-selection';
import type { RunLimits } from './resource-limits';
import type { Tensor } from '../ir/tensor';
import type { BuildConfig, BuildSettingKey } from './build-config';
import type { BuildContext } from './build-context';
import type { DeviceValue, RunValue } from './residency';
import type { EngineProfile } from './profile';

export type { BuildConfig } from './build-config';
export type { BuildContext, BuildPhaseEvent } from './build-context';
export type { DeviceValue, Residency, RunValue } from './residency';

/** Every backend, highest priority first: the order `auto` tries them in. */
export const BACKEND_NAMES = ['tensorrt', 'cuda', 'onnxruntime', 'reference'] as const;

export type BackendName = (typeof BACKEND_NAMES)[number];

export const isBackendName = (name: unknown): name is BackendName => (BACKEND_NAMES as readonly unknown[]).includes(name);

/** available()'s answer: usable, or every reason why not (missing library, no device, not implemented). */
export type Availability = { ok: true } | { ok: false; reasons: string[] };

/** The names of an engine's inputs and outputs, in network order. */
export interface EngineSignature {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
}

/** A loaded engine, ready to run on the device it was loaded for. */
export interface Engine extends EngineSignature {
  /**
   * Where the engine reads its inputs and leaves its outputs: `host` (a Tensor in this
   * thread's memory) or `device` (a value on the device it was loaded for). The executor
   * copies a value only when it crosses between places (lib/runtime/execute.ts).
   */
  readonly residency: 'host' | 'device';
  /** For a device engine: the CUDA ordinal it runs on (default 0). */
  readonly deviceOrdinal?: number;
  /**
   * Runs the engine on one set of inputs (by name; every input exactly once) and resolves
   * every output by name. An input may differ from the network's input dtype in float width
   * only (float64 where the network computes float32, truncateDouble): the engine converts
   * it, since only the backend knows what it computes in. Bad inputs (a missing or unknown
   * name, a wrong dtype or rank) reject with BadInputError, a dim outside every optimization
   * profile with ShapeOutOfRangeError, a tensor larger than `limits.maxTensorBytes` with
   * ResourceLimitError naming the layer. The results belong to the caller.
   *
   * `into` (a device engine may take it; others ignore it): the caller's own device values for
   * some outputs, by name; the engine writes those outputs there and resolves them as the same
   * objects. Whoever ignores it returns fresh values; the program copies them over
   * (lib/runtime/execute.ts), so the caller sees the same either way. A target that does not fit
   * its output rejects with InvalidArgumentError (lib/engine/output-targets.ts).
   */
  run(inputs: Readonly<Record<string, RunValue>>, limits?: RunLimits, into?: Readonly<Record<string, DeviceValue>>): Promise<Record<string, RunValue>>;
  /**
   * Optional, for host engines run on the calling thread: a run from host tensors of the
   * values `inputs` (in that order: every input of the engine) to host tensors of the values
   * `outputs`, prepared once. Undefined where the engine cannot: a dtype other than the
   * engine's (it would have to convert), or one it converts at its boundary. See {@link PreparedRun}.
   */
  prepareRun?(inputs: readonly PreparedValue[], outputs: readonly PreparedValue[], limits: RunLimits): PreparedRun | undefined;
  /** Copies a host tensor to where this engine keeps values (a device engine only). */
  upload?(tensor: Tensor): Promise<DeviceValue>;
  /** Releases what the engine holds; it must not be used afterwards. */
  dispose(): void;
}

/**
 * A run of an engine whose names, order and dtypes were settled once (Engine.prepareRun), in
 * two steps so that a caller can read the inputs at once and start the run later (runs on
 * one thread are queued): stage() checks the inputs as Engine.run() does (the same typed
 * errors) and copies them into memory of the run's own; start() runs what was staged, once,
 * and resolves the outputs in the prepared order (they may be memory the engine's library
 * allocated: not for posting to another thread); release() drops a staged run never started.
 */
export interface PreparedRun {
  stage(inputs: readonly Tensor[]): StagedRun;
  /** `settled`, where given, runs in the run's own continuation (see {@link RunSettled}). */
  start(staged: StagedRun, settled?: RunSettled): Promise<Tensor[]>;
  release(staged: StagedRun): void;
}

/**
 * What the caller of PreparedRun.start() does when the run ends, called from the run's own
 * continuation rather than from a `then` of the caller's: a run of a model that computes in
 * microseconds pays for every promise and closure, most of all before V8 optimizes the code.
 * `done` takes the outputs and returns what start() resolves; `failed` takes the error
 * (already typed) and throws what start() rejects with. Exactly one of them is called.
 */
export interface RunSettled {
  done(outputs: Tensor[]): Tensor[];
  failed(error: unknown): never;
}

/** A value of a prepared run: its name in the engine, and the dtype the caller gives or takes. */
export interface PreparedValue {
  readonly name: string;
  readonly dtype: DType;
  /**
   * For an input: its shape, where every dim is static and the caller checks each input's
   * dtype, shape and length against it before stage() (program.run()'s one-pass check,
   * lib/runtime/fast-input-check.ts). stage() then skips the checks this implies.
   */
  readonly checkedShape?: readonly number[];
}

/** Inputs a PreparedRun has staged (opaque to the caller). */
export interface StagedRun {
  readonly staged: true;
}

/** An execution backend. */
export interface Backend<N extends BackendName = BackendName> {
  readonly name: N;
  /** Higher is tried first by `auto` (BACKEND_NAMES is the same order). */
  readonly priority: number;
  /** The backend's version (TensorRT's for the TensorRT one, this package's for the reference one). */
  readonly version: string;
  /** False for a backend declared but not written in this version: it refuses every build and load. */
  readonly implemented: boolean;
  /** Where its engines keep values (see Engine.residency); known before any engine exists, so compile() can plan copies. */
  readonly residency: 'host' | 'device';
  /**
   * Where its engines can hold a size that only a run tells (a nonzero layer's output):
   * `anywhere`, `inside` an engine only (never at its outputs), or `none` (default). compile()
   * partitions by it (lib/conversion/types.ts), so a node that the backend cannot take runs in
   * a fallback segment and the program gives the same answer on every backend.
   */
  readonly dataDependentSizes?: DataDependentSizes;
  /**
   * Layer kinds its build refuses, each with why (the tensorrt backend's nms: TensorRT orders
   * the selected boxes differently from ONNX). compile() passes them to converter selection
   * (SelectionSettings.refusedLayers), so the nodes that would need one run in fallback segments.
   */
  readonly refusedLayers?: Readonly<Partial<Record<LayerKind, string>>>;
  /**
   * The quantized types its engines compute with over run-time values (default: all the
   * quantize layer takes). The cuda backend spells Q/DQ out in float arithmetic and holds
   * int8/uint8 only; a float8/int4 dequantize of constant weights it computes at build. compile()
   * passes it to converter selection (SelectionSettings.activationQuantizedTypes), so the other
   * nodes run in fallback segments, with the same values as on every other backend.
   */
  readonly activationQuantizedTypes?: readonly QuantizedDType[];
  /**
   * Why its build cannot take a quantize or dequantize of this form at all, or null (the
   * tensorrt backend: FP8 and INT4 forms TensorRT takes neither whole nor spelled out).
   * compile() passes it to converter selection (SelectionSettings.quantizeRefusal), so such
   * nodes run in fallback segments instead of failing the build.
   */
  readonly quantizeRefusal?: (d: QuantizeDescription) => string | null;
  /**
   * The build settings (BuildConfig keys) its build() reads, and what it does instead of the
   * others: compile() warns, naming them, when a caller sets one this backend ignores
   * (lib/compile/ineffective-settings.ts).
   */
  readonly buildSettings: { readonly uses: readonly BuildSettingKey[]; readonly instead: string };
  /** Whether this backend can build and run here; never rejects (a failed probe is a reason). */
  available(): Promise<Availability>;
  /**
   * Validates `network` and builds an engine from it for `device` with `config`. A network
   * that breaks a layer's rules is a converter bug (InternalError); a layer the backend
   * cannot run is UnsupportedOpError. `context` (optional; compile() always passes one)
   * carries the compile's logger, a progress sink for the backend's own build phases and an
   * AbortSignal (./build-context.ts); a backend without phases may ignore it.
   */
  build(network: Network, config: BuildConfig, device: EngineDevice, context?: BuildContext): Promise<Uint8Array>;
  /** Loads engine bytes from build() onto `device` (malformed bytes: BadModelError). */
  load(engine: Uint8Array, device: EngineDevice | null): Promise<Engine>;
  /** The inputs and outputs of engine bytes, without loading them onto a device (malformed bytes: BadModelError). */
  inspect(engine: Uint8Array): EngineSignature;
  /**
   * Optional: where a run of `engine` (one this backend loaded) on `inputs` spends its time,
   * per layer, plan step or node, as the mean over `options.runs` runs (./profile.ts says what
   * each backend measures). A diagnostic: it may run the engine more times, or make its own
   * session or plan. A backend without it cannot time its layers; program.profile() refuses
   * its engines.
   */
  profileEngine?(engine: Engine, inputs: Readonly<Record<string, RunValue>>, options: { runs: number; limits?: RunLimits }): Promise<EngineProfile>;
}

/** Backward-compatible name of {@link Engine}. */

