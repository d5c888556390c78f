/**
 * compile(): model → Graph → shape specialization and constant folding → partition →
 * engine segments converted to Networks and built by a backend; fallback segments kept as
 * graphs (./pipeline.ts, on the compile worker thread) → Program.
 */
import { getBackend } from '../backends';
import type { Backend } from '../engine/backend';
import { throwIfAborted } from '../engine/build-context';
import { registeredCandidates } from '../conversion/registry';
import { resolveLogger } from '../logger';
import { partition, type PartitionReport } from '../partitioning/partition';
import { lowerComplex } from '../lowering/complex';
import { specializeShapes } from '../lowering/specialize';
import { Program, warmStarted } from '../runtime/program';
import { partitionDynamic } from '../legalization';
import { warnReferenceFallback } from './backend-fallback';
import { compileOnWorker, compileWorkerMissing } from './compile-thread';
import { applySymbolRanges, isDynamicPlan, planInputShapes } from './input-shapes';
import { loadModel, type ModelSource } from './load-model';
import { backendSelection, compileGraph, describeModel, recognizeExportedForms, type CompiledProgram } from './pipeline';
import { progressReporter } from './progress';
import { checkTorchExecutedOps, resolveSettings, type CompileSettings, type TensorParallelSettings } from './settings';
import { compileTensorParallel } from './tensor-parallel';
import type { TensorParallelProgram } from '../runtime/tensor-parallel/program';

export type { CompileSettings, InputSpec, TensorParallelSettings } from './settings';
export type { CompileProgressEvent, CompileStage, ProgressCallback } from './progress';
export type { ModelSource } from './load-model';

/** The converters registered at import (the built-in ones, which the compile worker has too). */
const BUILTIN_CONVERTERS = registeredCandidates();

/** Whether a converter was added or a built-in one removed since import (functions of this thread the worker cannot see). */
function convertersChanged(): boolean {
  const now = registeredCandidates();
  return now.size !== BUILTIN_CONVERTERS.size || [...now].some((c) => !BUILTIN_CONVERTERS.has(c));
}

/**
 * Compiles a model into a Program; with `tensorParallel: n`, into a TensorParallelProgram of
 * n ranks (lib/compile/tensor-parallel.ts).
 *
 * The pipeline runs on a worker thread (./compile-thread.ts), so the event loop keeps
 * turning while a model compiles; `logger` and `onProgress` are called on this thread as the
 * worker reports. It runs in-process instead when a converter was registered or removed
 * with registerConverter()/unregisterConverter(): converters are functions of this thread,
 * which the worker cannot see (the logger says so at `debug`), and when the compile worker
 * script is missing from the package (the logger says so at `warn`).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad settings, or a dynamic input without a shape.
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: with requireFullCompilation, every op that cannot be converted.
 * @throws {BadModelError} `E_BAD_MODEL`: the model cannot be read.
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: `backend: 'tensorrt'` is not usable here (the reasons listed).
 * @throws {BackendUnavailableError} `E_BACKEND_UNAVAILABLE`: another named backend is not usable here (`details.backend`, `details.reasons`).
 * @throws {ShardingError} `E_SHARDING`: with tensorParallel, a model that cannot be split n ways.
 * @throws {AbortedError} `E_ABORTED`: `signal` was aborted (a TensorRT build stops at its next step).
 */
export function compile(model: ModelSource, settings: TensorParallelSettings): Promise<TensorParallelProgram>;
export function compile(model: ModelSource, settings?: CompileSettings): Promise<Program>;
export async function compile(model: ModelSource, settings: CompileSettings = {}): Promise<Program | TensorParallelProgram> {
  const resolved = resolveSettings(settings);
  if (resolved.tensorParallel !== undefined) return compileTensorParallel(model, settings as TensorParallelSettings, (g, s) => compile(g, s));
  throwIfAborted(resolved.signal, 'compile()');
  const log = resolveLogger(resolved.logger);
  const progress = progressReporter(resolved.onProgress);
  progress('import', 'start', 'importing the model');
  let result: CompiledProgram;
  const missing = compileWorkerMissing();
  if (convertersChanged()) {
    log('debug', 'user converters are registered: compiling on this thread (the compile worker cannot run functions of this thread)');
    result = await compileGraph(loadModel(model, { baseDir: resolved.baseDir }), resolved, log, progress);
  } else if (missing !== null) {
    // A bundle that ships only the run worker still compiles, blocking the event loop while it does.
    log('warn', `compiling on this thread: ${missing}`);
    result = await compileGraph(loadModel(model, { baseDir: resolved.baseDir }), resolved, log, progress);
  } else {
    result = await compileOnWorker(model, resolved, log, progress);
  }
  // Aborted after the worker's last check: the caller no longer wants the program.
  throwIfAborted(resolved.signal, 'compile()');
  warnReferenceFallback(resolved.backend, result.backend, result.refusals, log);
  // Symbols bound at compile time are gone from the graph; the dynamic ones keep their compiled ranges (run-time checks).
  return warmStarted(new Program(result.data, result.report, result.backend, new Map(result.symbols), resolved.limits, result.refusals, log));
}

/**
 * The support report without building anything: per op, whether it would be converted (run
 * in an engine segment) and why not, and the segments (what `tensorrt-node compile --dry-run`
 * prints). No backend is chosen, so the report names none.
 */
export async function dryRun(model: ModelSource, settings: CompileSettings = {}): Promise<PartitionReport> {
  const resolved = resolveSettings(settings);
  const progress = progressReporter(resolved.onProgress);
  progress('import', 'start', 'importing the model');
  const imported = loadModel(model, { baseDir: resolved.baseDir });
  const modelOps = imported.calls().length;
  checkTorchExecutedOps(resolved.torchExecutedOps, imported);
  progress('import', 'end', `imported ${modelOps} ops`);
  progress('lowering', 'start', 'binding input shapes and lowering');
  const graph = recognizeExportedForms(imported, resolved, resolveLogger(resolved.logger));
  const shapes = planInputShapes(graph, resolved.inputs, resolveLogger(resolved.logger));
  lowerComplex(graph, { truncateDouble: resolved.truncateDouble, fallback: resolved.complexFallback });
  specializeShapes(graph, shapes.staticSymbols);
  applySymbolRanges(graph, shapes);
  progress('lowering', 'end', `${graph.calls().length} ops after shape specialization`);
  progress('partitioning', 'start', 'partitioning into engine and fallback segments');
  // No backend is chosen: a named one's hold on sizes only a run tells applies; under `auto`, none (what every backend can take).
  const named: Backend | null = resolved.backend === 'auto' ? null : getBackend(resolved.backend);
  const selection = { ...resolved, ...backendSelection(named) };
  const { report } = isDynamicPlan(shapes) ? partitionDynamic(graph, selection) : partition(graph, selection);
  describeModel(report, graph, modelOps);
  progress('partitioning', 'end', `${report.segments.length} segment(s)`, { engines: 0 });
  return report;
}
