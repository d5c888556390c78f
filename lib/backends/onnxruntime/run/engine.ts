/**
 * A loaded onnxruntime engine: one InferenceSession (CPU execution provider, every graph
 * optimization on but those DISABLED_OPTIMIZERS and SESSION_CONFIG name, the thread counts
 * the engine was built with), created when the engine is loaded, and warmed up there with
 * one run at the profile's opt shapes so that the program's first run() costs what later
 * ones do. Inputs cross into onnxruntime without copies (its tensors wrap our typed arrays),
 * except bfloat16, which crosses as float32; outputs are copied once out of onnxruntime's
 * buffers (see fromOrt). Runs execute in the thread that loaded the engine: a program's
 * worker thread.
 */
import { BadInputError, BadModelError, InvalidArgumentError, ShapeOutOfRangeError, TensorRTNodeError, UnsupportedOpError } from '../../../errors';
import type { DType } from '../../../ir/dtype';
import { cast as castKernel } from '../../../kernels/unary';
import { resolveLogger } from '../../../logger';
import { checkTensorBytes, DEFAULT_RUN_LIMITS, type RunLimits } from '../../../engine/resource-limits';
import { Tensor } from '../../../ir/tensor';
import { floatWidthAs } from '../../../engine/float-width';
import type { RunValue } from '../../../engine/residency';
import type { Engine, PreparedRun, PreparedValue } from '../../../engine/backend';
import type { OrtEngineDescription, OrtEngineInput } from '../engine-format';
import { boundaryDType } from '../layers/index';
import type { InferenceSession } from 'onnxruntime-node';
import type { OrtModule } from '../ort-module';
import { prepareOrtRun, type PreparedRunHost } from './prepared-run';
import { directSessionRun } from './session-handler';

type Session = Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;
type OrtTensor = InstanceType<OrtModule['Tensor']>;

const log = resolveLogger();
const fmt = (dtype: string, shape: readonly number[]): string => `${dtype}[${shape.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;

/** The layer an onnxruntime message names (its nodes are named `layer` or `layer#k`), if any. */
export function layerOfMessage(message: string): string | undefined {
  // "... node with name 'x'" and "(node:'x' ep:...)" (missing kernels) before the bare "node x"
  // form, whose pattern would take "with", or a word further on.
  const m =
    /Name:\s*'([^']*)'/.exec(message) ??
    /node with name\s+'([^']*)'/i.exec(message) ??
    /\(node:\s*'([^']*)'/.exec(message) ??
    /node\s+'?([^'\s]+)'?/i.exec(message);
  return m?.[1]?.replace(/#\d+$/, '');
}

/** Checks one input against its declaration; returns it in the network's dtype. */
export function checkInput(input: OrtEngineInput, given: unknown): Tensor {
  const want = (): string => fmt(input.dtype, input.shape);
  if (given === undefined) throw new BadInputError(`missing input "${input.name}" (${want()})`, { details: { input: input.name } });
  if (!(given instanceof Tensor)) throw new BadInputError(`input "${input.name}" must be a host Tensor (the onnxruntime backend runs on the CPU)`, { details: { input: input.name } });
  const t = floatWidthAs(given, input.dtype);
  if (t.dtype !== input.dtype) throw new BadInputError(`input "${input.name}" is ${t.dtype}, the engine takes ${want()}`, { details: { input: input.name, expected: input.dtype, actual: t.dtype } });
  if (t.rank !== input.shape.length || input.shape.some((d, i) => d >= 0 && d !== t.shape[i])) {
    throw new BadInputError(`input "${input.name}" has shape [${t.shape.join(', ')}], the engine takes ${want()}`, { details: { input: input.name, expected: input.shape, actual: t.shape } });
  }
  return t;
}

/** Dynamic dims must lie within one optimization profile (the first that fits every input). */
function checkProfiles(inputs: readonly OrtEngineInput[], bound: readonly Tensor[]): void {
  const count = Math.max(0, ...inputs.map((i) => i.profiles.length));
  let first: { input: string; dim: number; value: number; min: number; max: number } | undefined;
  for (let p = 0; p < count; p++) {
    const miss = inputs
      .map((input, k) => {
        const profile = input.profiles[p];
        const dim = profile === undefined ? -1 : bound[k]!.shape.findIndex((d, i) => d < profile.min[i]! || d > profile.max[i]!);
        return dim < 0 ? undefined : { input: input.name, dim, value: bound[k]!.shape[dim]!, min: profile!.min[dim]!, max: profile!.max[dim]! };
      })
      .find((v) => v !== undefined);
    if (miss === undefined) return;
    first ??= miss;
  }
  if (first !== undefined) {
    throw new ShapeOutOfRangeError(`input "${first.input}" dim ${first.dim} is ${first.value}, outside the optimization profile's range [${first.min}, ${first.max}]`, { details: { ...first } });
  }
}

/** A host tensor as onnxruntime's, over the same memory (bfloat16 crosses as float32). */
export function toOrt(ort: OrtModule, t: Tensor): OrtTensor {
  const outside = boundaryDType(t.dtype);
  const data = outside === t.dtype ? t.data : castKernel(t, outside).data;
  return new ort.Tensor(outside as never, data as never, [...t.shape]);
}

/**
 * An output as a Tensor over memory of its own. onnxruntime-node's output buffers are
 * external ArrayBuffers, and posting one to another thread (the program's reply) costs
 * milliseconds however small it is; one memcpy here costs microseconds.
 */
function fromOrt(t: OrtTensor, dtype: DType): Tensor {
  const shape = [...t.dims];
  const outside = boundaryDType(dtype);
  const got = new Tensor(outside, shape, (t.data as Tensor['data']).slice());
  return outside === dtype ? got : castKernel(got, dtype);
}

/** An onnxruntime failure as a typed error naming the layer of the node it names. */
export function ortRunError(error: unknown, network: string): TensorRTNodeError {
  if (error instanceof TensorRTNodeError) return error;
  const message = (error as Error)?.message ?? String(error);
  const layer = layerOfMessage(message);
  const where = layer === undefined ? `network "${network}"` : `layer "${layer}"`;
  return new BadInputError(`onnxruntime refused a run of ${where}: ${message}`, { cause: error, details: layer === undefined ? {} : { layer } });
}

/** A session-creation failure: a node onnxruntime has no kernel for is an unsupported layer; anything else, bad engine bytes. */
export function ortLoadError(error: unknown, network: string): TensorRTNodeError {
  const message = (error as Error)?.message ?? String(error);
  const layer = layerOfMessage(message);
  if (layer !== undefined && /NOT_IMPLEMENTED|Could not find an implementation|not supported/i.test(message)) {
    return new UnsupportedOpError(`the onnxruntime backend cannot run layer "${layer}" of network "${network}": ${message}`, { cause: error, details: { layer } });
  }
  return new BadModelError(`onnxruntime cannot load the engine of network "${network}": ${message}`, { cause: error, details: layer === undefined ? {} : { layer } });
}

/**
 * onnxruntime graph optimizers this backend turns off. MatmulTransposeFusion folds the
 * Transposes that shuffle layers leave around attention MatMuls into FusedMatMul nodes with
 * transposed batch dims, which onnxruntime's CPU kernel computes slowly: the encoder fixture
 * ran 227 µs with it and 175 µs without (onnxruntime-node on its own .onnx: 173 µs), and
 * mlp, mobilenet_v3_small, squeezenet1_1 and the llama fixtures the same either way
 * (single thread, 2-core machine).
 * ReluQuantRewrite removes a Relu that feeds a QuantizeLinear, taking the quantization's
 * clipping at its zero point to do the Relu's work. onnxruntime 1.30 rules it out only for an
 * int8 zero point other than -128 and a uint8 one other than 0, so it also removes the Relu
 * in front of a float8e4m3fn or int4 quantization, whose range goes below zero: the FP8
 * calibration of test/quantization/models.ts's MLP came out up to 1.2 off onnxruntime's own
 * unoptimized run of it.
 */
export const DISABLED_OPTIMIZERS: readonly string[] = ['MatmulTransposeFusion', 'ReluQuantRewrite'];

/**
 * onnxruntime's Q/DQ rewrites, off for every session (they only match QuantizeLinear and
 * DequantizeLinear nodes, which the backend writes for quantize and dequantize layers alone).
 * Each changes what a Q/DQ network computes, or makes a model onnxruntime cannot run
 * (onnxruntime-node 1.30, CPU):
 * - session.disable_quant_qdq turns off QDQ propagation, which moves a float8 QuantizeLinear
 *   up through a Reshape (a Flatten's) that then holds float8e4m3fn, for which onnxruntime has
 *   no Reshape-19 kernel ("Failed to find kernel for Reshape(19)"); WeightBiasQuantization,
 *   which rounds a Gemm or Conv bias to int32 steps of input scale × weight scale; the fusions
 *   into QLinearConv and QGemm, which take no float8 and refuse the model; and the one of a
 *   blocked DequantizeLinear and MatMul into MatMulNBits, which quantizes the activations to
 *   int8 (int8 and uint8 blocked weights: 0.09 and 0.15 off). With it off, constant folding
 *   dequantizes constant weights once, at session creation, with the same kernel.
 * - session.disable_double_qdq_remover keeps a Q/DQ pair followed by another of other
 *   parameters (a requantization), which the remover merges into one pair with a scale and
 *   zero point of its own (int8 and uint8: 0.017 off).
 */
export const SESSION_CONFIG: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  session: { disable_quant_qdq: '1', disable_double_qdq_remover: '1' },
};

/** The options of an engine's session (a profiling session adds onnxruntime's profiler to the same ones). */
export function sessionOptions(description: OrtEngineDescription): InferenceSession.SessionOptions {
  return {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    enableCpuMemArena: description.session.memoryArena !== false,
    executionMode: 'sequential',
    intraOpNumThreads: description.session.intraOpThreads,
    interOpNumThreads: description.session.interOpThreads,
    // Fatal only: library code never writes to the console (lib/logger.ts); failures come back as errors.
    logSeverityLevel: 4,
    // onnxruntime splits its list of optimizers to disable at semicolons: a comma-joined list
    // names one optimizer that does not exist, and disables none.
    extra: { ...SESSION_CONFIG, optimization: { disable_specified_optimizers: DISABLED_OPTIMIZERS.join(';') } },
  };
}

const disposedEngine = (): Error => new InvalidArgumentError('this onnxruntime engine was disposed');

export class OrtEngine implements Engine {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly residency = 'host' as const;
  private session: Session | null;
  /** The hosts of the prepared runs made so far: dispose() takes their session too. */
  private readonly preparedHosts: PreparedRunHost[] = [];

  private constructor(
    private readonly ort: OrtModule,
    session: Session,
    private readonly description: OrtEngineDescription,
  ) {
    this.session = session;
    this.inputNames = description.inputs.map((i) => i.name);
    this.outputNames = description.outputs.map((o) => o.name);
  }

  /** Creates the session and warms it up (a failed warm-up is logged: real inputs may still run). */
  static async create(ort: OrtModule, model: Uint8Array, description: OrtEngineDescription): Promise<OrtEngine> {
    let session: Session;
    try {
      session = await ort.InferenceSession.create(model, sessionOptions(description));
    } catch (error) {
      throw ortLoadError(error, description.network);
    }
    const engine = new OrtEngine(ort, session, description);
    await engine.warmUp();
    return engine;
  }

  private async warmUp(): Promise<void> {
    const inputs: Record<string, Tensor> = Object.create(null);
    for (const input of this.description.inputs) {
      const opt = input.profiles[0]?.opt;
      const shape = input.shape.map((d, i) => (d >= 0 ? d : (opt?.[i] ?? 1)));
      inputs[input.name] = new Tensor(input.dtype, shape);
    }
    try {
      await this.run(inputs);
    } catch (error) {
      log('debug', `warm-up run of ${this.description.network} failed (${(error as Error).message}); the first run will set up what it needs`);
    }
  }

  /** Runs on the calling thread without per-run lookups, copies out or awaits (./prepared-run.ts). */
  prepareRun(inputs: readonly PreparedValue[], outputs: readonly PreparedValue[], limits: RunLimits = DEFAULT_RUN_LIMITS): PreparedRun | undefined {
    const host: PreparedRunHost = {
      ort: this.ort,
      description: this.description,
      session: this.session === null ? null : (directSessionRun(this.session) ?? this.session),
      checkInputs: (given) => checkProfiles(this.description.inputs, this.description.inputs.map((input, k) => checkInput(input, given[k]))),
      disposedError: disposedEngine,
      runError: (error) => ortRunError(error, this.description.network),
    };
    const prepared = prepareOrtRun(host, inputs, outputs, limits);
    if (prepared !== undefined) this.preparedHosts.push(host);
    return prepared;
  }

  async run(inputs: Readonly<Record<string, RunValue>>, limits: RunLimits = DEFAULT_RUN_LIMITS): Promise<Record<string, RunValue>> {
    const session = this.session;
    if (session === null) throw disposedEngine();
    if (inputs === null || typeof inputs !== 'object') throw new BadInputError('run() takes an object of input tensors keyed by input name');
    for (const name of Object.keys(inputs)) {
      if (!this.inputNames.includes(name)) throw new BadInputError(`unknown input "${name}"; the engine's inputs are ${this.inputNames.map((n) => `"${n}"`).join(', ')}`, { details: { input: name } });
    }
    const inputsList = this.description.inputs;
    const bound = inputsList.map((input) => checkInput(input, Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined));
    checkProfiles(inputsList, bound);
    const feeds: Record<string, OrtTensor> = Object.create(null);
    inputsList.forEach((input, k) => (feeds[input.name] = toOrt(this.ort, bound[k]!)));
    let results: Record<string, OrtTensor>;
    try {
      results = (await session.run(feeds)) as Record<string, OrtTensor>;
    } catch (error) {
      throw ortRunError(error, this.description.network);
    }
    const out: Record<string, RunValue> = {};
    for (const o of this.description.outputs) {
      const t = results[o.name];
      if (t === undefined) throw ortRunError(new Error(`output "${o.name}" is missing from onnxruntime's results`), this.description.network);
      checkTensorBytes(limits, o.dtype, [...t.dims], `onnxruntime backend: output "${o.name}"`, { output: o.name });
      Object.defineProperty(out, o.name, { value: fromOrt(t, o.dtype), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  dispose(): void {
    const session = this.session;
    this.session = null;
    for (const host of this.preparedHosts) host.session = null;
    void session?.release().catch(() => undefined);
  }
}
