/**
 * compile(): model → Graph → shape specialization and constant folding → partition →
 * TensorRT segments converted to Networks and built by a backend; fallback segments kept as
 * graphs → Program.
 */
import { resolveBackend, type BackendResolution } from '../backends';
import { convertSegment } from '../conversion/convert';
import '../conversion/converters';
import type { Graph, Value } from '../ir/graph';
import { serializeGraphToBuffer } from '../ir/serialize';
import { extractSubgraph } from '../ir/subgraph';
import { verifyGraph } from '../ir/verify';
import { resolveLogger, type Logger } from '../logger';
import { lowerComplex } from '../lowering/complex';
import { specializeShapes } from '../lowering/specialize';
import { formatPartitionReport, partition, type PartitionReport } from '../partitioning/partition';
import { Program } from '../runtime/program';
import type { ProgramData, ProgramIO, ProgramSegment } from '../runtime/segments';
import { engineDeviceForBackend } from './device-target';
import { loadModel, type ModelSource } from './load-model';
import { isDynamicPlan, planInputShapes } from './input-shapes';
import { applySymbolRanges, partitionDynamic, segmentProfiles } from '../legalization';
import { progressReporter } from './progress';
import { checkTorchExecutedOps, resolveSettings, type CompileSettings, type ResolvedSettings, type TensorParallelSettings } from './settings';
import { compileTensorParallel } from './tensor-parallel';
import type { TensorParallelProgram } from '../runtime/tensor-parallel/program';

export type { CompileSettings, InputSpec, TensorParallelSettings } from './settings';
export type { CompileProgressEvent, CompileStage, ProgressCallback } from './progress';
export type { ModelSource } from './load-model';

function io(values: readonly Value[], names: readonly string[]): ProgramIO[] {
  return values.map((v, i) => ({ name: names[i]!, value: v.name, dtype: v.tensorType.dtype, shape: [...v.tensorType.shape] }));
}

/** `settings.backend` resolved to a Backend (lib/backends/registry.ts); what `auto` passed over is logged and kept for the report. */
async function chooseBackend(settings: ResolvedSettings, log: Logger): Promise<BackendResolution> {
  const resolution = await resolveBackend(settings.backend);
  for (const r of resolution.refusals) log('info', `backend ${r.backend} is not usable here: ${r.reasons.join('; ')}`);
  if (resolution.refusals.length > 0) log('info', `engine segments run on the ${resolution.backend.name} backend (\`tensorrt-node doctor\` says why not the others)`);
  return resolution;
}

/**
 * Compiles a model into a Program; with `tensorParallel: n`, into a TensorParallelProgram of
 * n ranks (lib/compile/tensor-parallel.ts).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad settings, or a dynamic input without a shape.
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: with requireFullCompilation, every op TensorRT cannot run.
 * @throws {BadModelError} `E_BAD_MODEL`: the model cannot be read.
 * @throws {ShardingError} `E_SHARDING`: with tensorParallel, a model that cannot be split n ways.
 */
export function compile(model: ModelSource, settings: TensorParallelSettings): Promise<TensorParallelProgram>;
export function compile(model: ModelSource, settings?: CompileSettings): Promise<Program>;
export async function compile(model: ModelSource, settings: CompileSettings = {}): Promise<Program | TensorParallelProgram> {
  const resolved = resolveSettings(settings);
  if (resolved.tensorParallel !== undefined) return compileTensorParallel(model, settings as TensorParallelSettings, (g, s) => compile(g, s));
  const log = resolveLogger(resolved.logger);
  const progress = progressReporter(resolved.onProgress);
  progress('import', 'start', 'importing the model');
  const graph = loadModel(model);
  const modelOps = graph.calls().length;
  checkTorchExecutedOps(resolved.torchExecutedOps, graph);
  progress('import', 'end', `imported ${modelOps} ops`);
  progress('lowering', 'start', 'binding input shapes and lowering');
  // Input shapes: static specs fix symbols; ranges and profiles keep them dynamic (./input-shapes.ts).
  const shapes = planInputShapes(graph, resolved.inputs, log);
  // Complex values become real carriers [..., 2] before shapes are bound (lib/lowering/complex/).
  const complex = lowerComplex(graph, { truncateDouble: resolved.truncateDouble, fallback: resolved.complexFallback });
  if (complex.changed) log('info', complex.describe());
  specializeShapes(graph, shapes.staticSymbols);
  applySymbolRanges(graph, shapes);
  verifyGraph(graph, 'specialized graph');
  progress('lowering', 'end', `${graph.calls().length} ops after shape specialization`);
  const resolution = await chooseBackend(resolved, log);
  const backend = resolution.backend;
  const backendName = backend.name;
  const device = await engineDeviceForBackend(resolved.device, backend, log);
  progress('partitioning', 'start', 'partitioning into TensorRT and fallback segments');
  // Dynamic shapes: `_dyn`-aware partitioning, then shape-tensor legalization (lib/legalization/).
  const dynamic = isDynamicPlan(shapes);
  const { segments, report } = dynamic ? partitionDynamic(graph, resolved) : partition(graph, resolved);
  describeModel(report, graph, modelOps);
  const engines = segments.filter((s) => s.kind === 'tensorrt').length;
  progress('partitioning', 'end', `${segments.length} segment(s), ${engines} engine(s) to build`, { engines });
  log('info', formatPartitionReport(report));

  const programSegments: ProgramSegment[] = [];
  let built = 0;
  for (const s of segments) {
    const inputs = s.inputs.map((v) => v.name);
    const outputs = s.outputs.map((v) => v.name);
    if (s.kind === 'tensorrt') {
      log('debug', `building segment ${s.index} (${s.nodes.length} ops) with the ${backendName} backend`);
      const profiles = dynamic ? segmentProfiles(s, shapes) : undefined;
      const where = { index: built, total: engines };
      const what = `engine ${built + 1}/${engines} (segment ${s.index}, ${s.nodes.length} ops)`;
      progress('build', 'start', `building ${what}`, where);
      const network = convertSegment({ name: `${graph.name}_segment${s.index}`, nodes: s.nodes, inputs: s.inputs, outputs: s.outputs, profiles }, resolved);
      programSegments.push({ kind: 'tensorrt', backend: backendName, engine: await backend.build(network, resolved.build, device), inputs, outputs, device: structuredClone(device) });
      progress('build', 'end', `built ${what}`, where);
      built++;
    } else {
      const sub = extractSubgraph(graph, `${graph.name}_segment${s.index}`, s.nodes, s.inputs, s.outputs);
      programSegments.push({ kind: 'fallback', graph: serializeGraphToBuffer(sub), inputs, outputs });
    }
  }
  // Null prototype: an output named "__proto__" is an ordinary key.
  const constants: ProgramData['constants'] = Object.create(null);
  for (const v of graph.outputs) {
    if (v.producer.kind !== 'constant') continue;
    const t = v.producer.tensor!;
    constants[v.name] = { dtype: t.dtype, shape: [...t.shape], data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice() };
  }
  const data: ProgramData = {
    inputs: complex.present(io(graph.inputs, graph.inputs.map((v) => v.name)), 'inputs'),
    outputs: complex.present(io(graph.outputs, graph.outputNames), 'outputs'),
    segments: programSegments,
    constants,
  };
  // Symbols bound at compile time are gone from the graph; the dynamic ones keep their compiled ranges (run-time checks).
  return new Program(data, report, backendName, new Map(graph.symbols), resolved.limits, resolution.refusals);
}

/**
 * The support report without building anything: per op, whether it would run in TensorRT
 * and why not, and the segments (what `tensorrt-node compile --dry-run` prints).
 */
export async function dryRun(model: ModelSource, settings: CompileSettings = {}): Promise<PartitionReport> {
  const resolved = resolveSettings(settings);
  const progress = progressReporter(resolved.onProgress);
  progress('import', 'start', 'importing the model');
  const graph = loadModel(model);
  const modelOps = graph.calls().length;
  checkTorchExecutedOps(resolved.torchExecutedOps, graph);
  progress('import', 'end', `imported ${modelOps} ops`);
  progress('lowering', 'start', 'binding input shapes and lowering');
  const shapes = planInputShapes(graph, resolved.inputs, resolveLogger(resolved.logger));
  lowerComplex(graph, { truncateDouble: resolved.truncateDouble, fallback: resolved.complexFallback });
  specializeShapes(graph, shapes.staticSymbols);
  applySymbolRanges(graph, shapes);
  progress('lowering', 'end', `${graph.calls().length} ops after shape specialization`);
  progress('partitioning', 'start', 'partitioning into TensorRT and fallback segments');
  const { report } = isDynamicPlan(shapes) ? partitionDynamic(graph, resolved) : partition(graph, resolved);
  describeModel(report, graph, modelOps);
  progress('partitioning', 'end', `${report.segments.length} segment(s)`, { engines: 0 });
  return report;
}

/** What the report's counts are relative to: the model's op count at import, and its I/O names (values a segment reads or writes). */
function describeModel(report: PartitionReport, graph: Graph, modelOps: number): void {
  report.modelOps = modelOps;
  report.io = {
    inputs: graph.inputs.map((v) => ({ name: v.name, value: v.name })),
    outputs: graph.outputs.map((v, i) => ({ name: graph.outputNames[i]!, value: v.name })),
  };
}
