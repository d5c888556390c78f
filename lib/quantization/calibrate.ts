/**
 * `calibrate()`: post-training quantization of a float ONNX model from Node, with no Python
 * tooling. It runs the float model over the caller's calibration batches, observing the
 * tensors that feed the chosen ops (./observe.ts), reads each one's clipping range by the
 * chosen method (./methods.ts), and writes the Q/DQ model TensorRT builds INT8 or FP8 engines
 * from (explicit quantization): activations behind QuantizeLinear → DequantizeLinear pairs,
 * weights stored quantized behind DequantizeLinear (./qdq.ts), the opset raised where the new
 * nodes need it (./opset.ts). docs/quantization.md describes it.
 */
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';

import { BackendUnavailableError, BadInputError, InvalidArgumentError } from '../errors';
import { abortedError, throwIfAborted } from '../engine/build-context';
import { Tensor } from '../ir/tensor';
import { resolveLogger, type Logger } from '../logger';
import { amaxOf, DEFAULT_PERCENTILE } from './methods';
import { InterpreterObserver, OrtObserver, ortModulePath, withObservedOutputs, type Observer } from './observe';
import { nodeLabel, openFloatModel, readModelBytes, Names, encodeModel, type FloatModel, type ModelInput } from './onnx-model';
import { checkRaisable, raiseOpset } from './opset';
import { insertQdq, scaleOf, type ActivationQdq } from './qdq';
import { TensorStatistics } from './statistics';
import { DEFAULT_QUANTIZED_OPS, planQuantization, type QuantizationPlan } from './targets';
import type { ActivationReport, CalibrateOptions, CalibrationBatch, CalibrationMethod, CalibrationPrecision, CalibrationReport, CalibrationResult, CalibrationRunner, SkippedReport } from './types';

const METHODS: readonly CalibrationMethod[] = ['minmax', 'entropy', 'percentile'];
const PRECISIONS: readonly CalibrationPrecision[] = ['int8', 'fp8'];
const RUNNERS: readonly CalibrationRunner[] = ['auto', 'onnxruntime', 'interpreter'];

interface Settings {
  method: CalibrationMethod;
  percentile: number;
  precision: CalibrationPrecision;
  perChannelWeights: boolean;
  ops: readonly string[];
  exclude: readonly string[];
  output: string | undefined;
  baseDir: string | undefined;
  runner: CalibrationRunner;
  onProgress: CalibrateOptions['onProgress'];
  signal: AbortSignal | undefined;
  log: Logger;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0);

/** @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the option. */
function resolveOptions(options: CalibrateOptions): Settings {
  const bad = (message: string): never => {
    throw new InvalidArgumentError(`calibrate options: ${message}`);
  };
  if (options === null || typeof options !== 'object') bad('expected an object');
  const o = options;
  if (o.method !== undefined && !METHODS.includes(o.method)) bad(`method must be one of ${METHODS.join(', ')}, got ${JSON.stringify(o.method)}`);
  if (o.percentile !== undefined && !(typeof o.percentile === 'number' && o.percentile > 0 && o.percentile <= 100)) bad(`percentile must be a number in (0, 100], got ${JSON.stringify(o.percentile)}`);
  if (o.precision !== undefined && !PRECISIONS.includes(o.precision)) bad(`precision must be one of ${PRECISIONS.join(', ')}, got ${JSON.stringify(o.precision)}`);
  if (o.perChannelWeights !== undefined && typeof o.perChannelWeights !== 'boolean') bad('perChannelWeights must be a boolean');
  if (o.ops !== undefined && !(isStringList(o.ops) && o.ops.length > 0)) bad('ops must be a non-empty list of ONNX op types (e.g. ["Conv", "MatMul"])');
  if (o.exclude !== undefined && !isStringList(o.exclude)) bad('exclude must be a list of node names');
  if (o.output !== undefined && !(typeof o.output === 'string' && o.output.length > 0)) bad('output must be a file path');
  if (o.baseDir !== undefined && !(typeof o.baseDir === 'string' && o.baseDir.length > 0)) bad('baseDir must be a folder path');
  if (o.runner !== undefined && !RUNNERS.includes(o.runner)) bad(`runner must be one of ${RUNNERS.join(', ')}, got ${JSON.stringify(o.runner)}`);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') bad('onProgress must be a function ({ batches }) => void');
  if (o.logger !== undefined && typeof o.logger !== 'function') bad('logger must be a function (level, message) => void');
  // Duck-typed: an AbortSignal of another realm (a vm context, jest) is still one.
  if (o.signal !== undefined && !(typeof o.signal === 'object' && o.signal !== null && typeof o.signal.aborted === 'boolean' && typeof o.signal.addEventListener === 'function')) {
    bad('signal must be an AbortSignal (new AbortController().signal)');
  }
  return {
    method: o.method ?? 'minmax',
    percentile: o.percentile ?? DEFAULT_PERCENTILE,
    precision: o.precision ?? 'int8',
    perChannelWeights: o.perChannelWeights ?? true,
    ops: o.ops ?? DEFAULT_QUANTIZED_OPS,
    exclude: o.exclude ?? [],
    output: o.output,
    baseDir: o.baseDir,
    runner: o.runner ?? 'auto',
    onProgress: o.onProgress,
    signal: o.signal,
    log: resolveLogger(o.logger),
  };
}

/** `promise`, or an AbortedError as soon as `signal` aborts (a batch source that never answers cannot hold an abort up). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(signal, 'calibrate()'));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

type AnyIterator = Iterator<unknown> | AsyncIterator<unknown>;

function iteratorOf(batches: unknown): AnyIterator {
  const b = batches as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown>; [Symbol.iterator]?: () => Iterator<unknown> } | null;
  if (b !== null && typeof b === 'object' && typeof b[Symbol.asyncIterator] === 'function') return b[Symbol.asyncIterator]!();
  if (b !== null && (typeof b === 'object' || typeof b === 'function') && typeof b[Symbol.iterator] === 'function') return b[Symbol.iterator]!();
  throw new InvalidArgumentError('calibrate expects the calibration batches as an iterable or async iterable of input records ({ inputName: Tensor })');
}

/** Calls the source's return(), ignoring what it throws or rejects with. */
function stopSource(iterator: AnyIterator): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  } catch {
    // A generator whose finally block throws: the calibration's own error is the one to report.
  }
}

const describe = (d: ModelInput): string => `${d.dtype ?? '?'}[${d.dims === undefined ? '…' : d.dims.join(', ')}]`;

/**
 * Checks one batch against the model's inputs.
 *
 * @throws {BadInputError} `E_BAD_INPUT` naming the batch (0-based) and the input.
 */
function checkBatch(batch: unknown, index: number, inputs: readonly ModelInput[]): CalibrationBatch {
  const where = `calibration batch ${index}`;
  if (batch === null || typeof batch !== 'object' || Array.isArray(batch) || batch instanceof Tensor) {
    throw new BadInputError(`${where} is not an input record ({ inputName: Tensor }, one entry per model input: ${inputs.map((i) => i.name).join(', ')})`, { details: { batch: index } });
  }
  const record = batch as Record<string, unknown>;
  const names = new Set(inputs.map((i) => i.name));
  for (const key of Object.keys(record)) {
    if (!names.has(key)) throw new BadInputError(`${where} has "${key}", which is not an input of the model (its inputs: ${[...names].join(', ')})`, { details: { batch: index, input: key } });
  }
  for (const input of inputs) {
    const t = record[input.name];
    if (t === undefined) {
      throw new BadInputError(`${where} is missing input "${input.name}" (${describe(input)}); every batch needs all of: ${[...names].join(', ')}`, { details: { batch: index, input: input.name } });
    }
    if (!(t instanceof Tensor)) throw new BadInputError(`${where}: input "${input.name}" must be a Tensor`, { details: { batch: index, input: input.name } });
    if (input.dtype !== undefined && t.dtype !== input.dtype) {
      throw new BadInputError(`${where}: input "${input.name}" is ${t.dtype}, the model takes ${describe(input)}`, { details: { batch: index, input: input.name, expected: input.dtype, actual: t.dtype } });
    }
    if (input.dims !== undefined && (t.rank !== input.dims.length || input.dims.some((d, i) => typeof d === 'number' && d !== t.shape[i]))) {
      throw new BadInputError(`${where}: input "${input.name}" has shape [${t.shape.join(', ')}], the model takes ${describe(input)}`, { details: { batch: index, input: input.name, expected: input.dims, actual: t.shape } });
    }
  }
  return record as CalibrationBatch;
}

/** The observer `runner` asks for: onnxruntime on a worker where it can be (auto), else the interpreter. */
async function openObserver(model: FloatModel, fetch: readonly string[], s: Settings, warn: (m: string) => void): Promise<Observer> {
  const bytes = withObservedOutputs(model, fetch);
  const interpreter = (): Observer => {
    const outputs = (model.graph.output ?? []).map((o) => o.name ?? '');
    const seen = new Set(outputs);
    return InterpreterObserver.open(bytes, [...outputs, ...fetch.filter((n) => !seen.has(n))]);
  };
  if (s.runner === 'interpreter') return interpreter();
  const ortPath = ortModulePath();
  if (ortPath === undefined) {
    if (s.runner === 'onnxruntime') throw new BackendUnavailableError('calibrate: runner "onnxruntime" was asked for, but onnxruntime-node is not installed', { details: { backend: 'onnxruntime' } });
    warn('calibrate: onnxruntime-node is not installed; the float model runs in the JavaScript interpreter, 50-100× slower');
    return interpreter();
  }
  try {
    return await OrtObserver.open(ortPath, bytes, model.source, s.signal);
  } catch (error) {
    if (!(error instanceof BackendUnavailableError) || s.runner === 'onnxruntime') throw error;
    warn(`${error.message}; the float model runs in the JavaScript interpreter instead`);
    return interpreter();
  }
}

/** The opset the Q/DQ nodes need, and what needs it. */
function neededOpset(plan: QuantizationPlan, s: Settings): { opset: number; why: string } {
  if (s.precision === 'fp8') return { opset: 19, why: 'float8e4m3fn quantization' };
  if ([...plan.weights.values()].some((w) => w.axis !== null)) return { opset: 13, why: 'per-channel weight scales (perChannelWeights)' };
  return { opset: 10, why: 'QuantizeLinear/DequantizeLinear' };
}

/**
 * Calibrates a float ONNX model on `batches` and returns its Q/DQ model (written to `output`
 * too when given) with a report of every scale.
 *
 * @param model an ONNX file path, or the file's bytes.
 * @param batches an iterable or async iterable of input records (input name → Tensor), each a
 *   batch of calibration data; read once, in order.
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: a bad option, no batches, or `output` cannot be written.
 * @throws {BadModelError} `E_BAD_MODEL`: the model file is missing, unreadable or malformed (named).
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: the opset must be raised from below 11.
 * @throws {BadInputError} `E_BAD_INPUT`: a batch lacks an input, has one the model does not take, or a wrong dtype or shape (batch and input named).
 * @throws {BackendUnavailableError} `E_BACKEND_UNAVAILABLE`: runner `onnxruntime` without onnxruntime-node.
 * @throws {AbortedError} `E_ABORTED`: `signal` aborted.
 */
export async function calibrate(
  model: string | Uint8Array,
  batches: Iterable<CalibrationBatch> | AsyncIterable<CalibrationBatch>,
  options: CalibrateOptions = {},
): Promise<CalibrationResult> {
  const start = performance.now();
  const s = resolveOptions(options);
  throwIfAborted(s.signal, 'calibrate()');
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    s.log('warn', message);
  };
  if (options.percentile !== undefined && s.method !== 'percentile') warn(`calibrate: percentile applies to method "percentile"; the ${s.method} method ignores it`);
  const source = readModelBytes(model);
  const float = openFloatModel(source.bytes, source.name, s.baseDir ?? source.baseDir);
  const iterator = iteratorOf(batches);
  const names = new Names(float.graph);
  const plan = planQuantization(float, s.ops, s.exclude, s.perChannelWeights, options.ops !== undefined);
  plan.warnings.forEach(warn);
  const needed = neededOpset(plan, s);
  checkRaisable(float, needed.opset, needed.why);
  if (plan.activations.size === 0 && plan.weights.size === 0) warn(`calibrate: ${float.source} has no input of a ${s.ops.join('/')} node to quantize; the model is written unchanged but for its opset`);

  // What to observe: graph inputs are read from the batches; the rest are fetched from runs.
  const inputNames = new Set(float.inputs.map((i) => i.name));
  const observed = [...plan.activations.keys()];
  const fetch = observed.filter((n) => !inputNames.has(n));
  const stats = new Map(observed.map((n) => [n, new TensorStatistics(s.method !== 'minmax')]));
  const skippedTensors = new Map<string, string>();

  const observeStart = performance.now();
  let count = 0;
  let finished = false;
  let observer: Observer | undefined;
  let runner: CalibrationReport['runner'] = 'none';
  try {
    observer = fetch.length > 0 ? await openObserver(float, fetch, s, warn) : undefined;
    runner = observer?.kind ?? 'none';
    s.log('info', `calibrate: observing ${observed.length} tensor(s) of ${float.source}${observer === undefined ? '' : ` with ${observer.kind}`}`);
    for (;;) {
      throwIfAborted(s.signal, 'calibrate()');
      const next = await raceAbort(Promise.resolve(iterator.next()), s.signal);
      if (next.done === true) {
        finished = true;
        break;
      }
      const batch = checkBatch(next.value, count, float.inputs);
      const values = observer === undefined ? new Map() : await observer.run(batch, fetch, s.signal);
      for (const name of observed) {
        if (skippedTensors.has(name)) continue;
        const v = inputNames.has(name) ? { dtype: batch[name]!.dtype, data: batch[name]!.dtype === 'float32' ? (batch[name]!.data as Float32Array) : undefined } : values.get(name)!;
        if (v.data === undefined) {
          skippedTensors.set(name, `its values are ${v.dtype}; only float32 tensors are quantized`);
          continue;
        }
        stats.get(name)!.add(v.data);
      }
      count++;
      s.onProgress?.({ batches: count });
    }
  } catch (error) {
    if (error instanceof BadInputError && error.details.batch === undefined) {
      throw new BadInputError(`calibration batch ${count}: ${error.message}`, { cause: error, details: { ...error.details, batch: count } });
    }
    throw error;
  } finally {
    await observer?.close();
    // A source left midway (an error, an abort) is told, so a generator can release what it holds.
    // Not awaited: an async generator still inside a next() that never settles would hold the rejection up.
    if (!finished) stopSource(iterator);
  }
  const observeSeconds = (performance.now() - observeStart) / 1000;
  if (count === 0) throw new InvalidArgumentError('calibrate: the calibration batches were empty; calibration needs at least one batch of inputs');

  const nodes = float.graph.node ?? [];
  const activations: ActivationQdq[] = [];
  const activationReports: ActivationReport[] = [];
  const skipped: SkippedReport[] = [...plan.skipped];
  for (const [name, uses] of plan.activations) {
    const why = skippedTensors.get(name);
    if (why !== undefined) {
      skipped.push({ what: `tensor "${name}"`, reason: why });
      continue;
    }
    const st = stats.get(name)!;
    if (st.nonFinite > 0) warn(`calibrate: tensor "${name}" was NaN or infinite ${st.nonFinite} time(s) over the batches; those values were left out of its range`);
    const amax = amaxOf(st, s.method, s.percentile);
    if (amax === 0) warn(`calibrate: tensor "${name}" was 0 throughout the batches; it gets scale 1`);
    const scale = scaleOf(amax, s.precision);
    activations.push({ tensor: name, scale, uses });
    activationReports.push({ tensor: name, consumers: uses.map((u) => nodeLabel(nodes[u.node]!, u.node)), amax, max: st.max, scale, method: s.method, count: st.count });
  }
  const labels = nodes.map((n, i) => nodeLabel(n, i));
  const { weights, quantizedNodes } = insertQdq(float, names, s.precision, activations, [...plan.weights.values()]);
  raiseOpset(float, needed.opset, names, needed.why);
  const bytes = encodeModel(float.model);
  if (s.output !== undefined) {
    try {
      await fs.promises.writeFile(s.output, bytes);
    } catch (cause) {
      throw new InvalidArgumentError(`calibrate: cannot write the Q/DQ model to ${s.output}: ${(cause as Error).message}`, { cause, details: { file: s.output } });
    }
  }
  const report: CalibrationReport = {
    method: s.method,
    ...(s.method === 'percentile' ? { percentile: s.percentile } : {}),
    precision: s.precision,
    perChannelWeights: s.perChannelWeights,
    batches: count,
    runner,
    opset: { from: float.opset, to: Math.max(float.opset, needed.opset) },
    activations: activationReports,
    weights,
    quantizedNodes: quantizedNodes.size,
    quantizedNodeNames: [...quantizedNodes].sort((a, b) => a - b).map((i) => labels[i]!),
    skipped,
    warnings,
    seconds: { observe: observeSeconds, total: (performance.now() - start) / 1000 },
  };
  s.log('info', `calibrate: ${report.quantizedNodes} node(s) quantized (${activations.length} activation(s), ${weights.length} weight(s)) from ${count} batch(es)`);
  return { model: bytes, report };
}
