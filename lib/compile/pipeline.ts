/**
 * The compile pipeline, model to program data: import → lowering → partition → conversion →
 * build. It runs on the compile worker thread (lib/compile/worker/compile-worker.ts), or
 * in-process when compile() must (./index.ts says when); the caller turns the result into a
 * Program. Logging and progress go through the hooks, which cross threads as messages.
 */
import { resolveBackend, type BackendName, type BackendRefusal, type BackendResolution } from '../backends';
import { convertSegment } from '../conversion/convert';
import type { SelectionSettings } from '../conversion/types';
import type { Backend } from '../engine/backend';
import '../conversion/converters';
import { UnsupportedOpError } from '../errors';
import { formatType, type Graph, type Value } from '../ir/graph';
import { serializeGraphToBuffer } from '../ir/serialize';
import { extractSubgraph } from '../ir/subgraph';
import type { SymbolRange } from '../ir/symbolic';
import { verifyGraph } from '../ir/verify';
import { serializeNetworkToBuffer } from '../network/serialize';
import type { Logger } from '../logger';
import { lowerComplex } from '../lowering/complex';
import { recognizeAttention } from '../lowering/exported-forms';
import { specializeShapes } from '../lowering/specialize';
import { partition, type PartitionReport } from '../partitioning/partition';
import { formatPartitionReport } from '../partitioning/report-format';
import type { ProgramData, ProgramIO, ProgramSegment } from '../runtime/segments';
import { engineDeviceForBackend } from './device-target';
import { warnIneffectiveSettings } from './ineffective-settings';
import { checkMemoryPlan, defaultMaxProgramBytes, planMemory } from './memory-plan';
import { applySymbolRanges, isDynamicPlan, planInputShapes, profilesForShape, segmentProfiles } from './input-shapes';
import { partitionDynamic } from '../legalization';
import { describePhase, type CompileStage, type CompileProgressEvent, type ProgressExtra } from './progress';
import { throwIfAborted, type BuildContext } from '../engine/build-context';
import { checkTorchExecutedOps, type ResolvedSettings } from './settings';

/** Reports one stage boundary (progressReporter()'s signature). */
export type ProgressHook = (stage: CompileStage, state: CompileProgressEvent['state'], message: string, extra?: ProgressExtra) => void;

/** What a compile produces: everything a Program is made of, as data that crosses threads. */
export interface CompiledProgram {
  data: ProgramData;
  report: PartitionReport;
  backend: BackendName;
  symbols: Array<[string, SymbolRange]>;
  refusals: BackendRefusal[];
}

function io(values: readonly Value[], names: readonly string[]): ProgramIO[] {
  return values.map((v, i) => ({ name: names[i]!, value: v.name, dtype: v.tensorType.dtype, shape: [...v.tensorType.shape] }));
}

/**
 * @throws {AbortedError} when `signal` is aborted. On the compile worker the caller's abort
 * arrives as a message, so the check first lets the event loop turn once to receive it.
 */
async function checkAborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return;
  await new Promise((resolve) => setImmediate(resolve));
  throwIfAborted(signal, 'compile()');
}

/**
 * `settings.backend` resolved to a Backend (lib/backends/registry.ts); what `auto` passed over
 * is logged and kept for the report, and build settings the backend does not use are warned
 * about (./ineffective-settings.ts).
 */
/**
 * What converter selection takes from a backend: the sizes only a run tells that its engines
 * hold, the layers and quantize forms its build refuses, the quantized types it holds over
 * run-time values. `null` (under `auto`, before a backend is chosen): none of it, so sizes only
 * a run tells stay out of engines and nothing else is refused.
 */
export function backendSelection(backend: Backend | null): Pick<SelectionSettings, 'dataDependentSizes' | 'refusedLayers' | 'activationQuantizedTypes' | 'quantizeRefusal'> {
  return {
    dataDependentSizes: backend?.dataDependentSizes ?? 'none',
    refusedLayers: backend?.refusedLayers,
    activationQuantizedTypes: backend?.activationQuantizedTypes,
    quantizeRefusal: backend?.quantizeRefusal,
  };
}

export async function chooseBackend(settings: ResolvedSettings, log: Logger): Promise<BackendResolution> {
  const resolution = await resolveBackend(settings.backend);
  for (const r of resolution.refusals) log('info', `backend ${r.backend} is not usable here: ${r.reasons.join('; ')}`);
  if (resolution.refusals.length > 0) log('info', `engine segments run on the ${resolution.backend.name} backend (\`tensorrt-node doctor\` says why not the others)`);
  warnIneffectiveSettings(settings.build, resolution.backend, log);
  return resolution;
}

/** The ops an attention written out by an exporter is made of (lib/lowering/exported-forms.ts). */
const WRITTEN_ATTENTION_OPS = ['aten.matmul.default', 'aten._softmax.default', 'aten.softmax.int', 'aten.add.Tensor', 'aten.mul.Tensor', 'aten.div.Tensor', 'aten.mul.Scalar', 'aten.div.Scalar'];

/**
 * `graph` with every attention its exporter wrote out as one scaled_dot_product_attention node
 * (lib/lowering/exported-forms.ts), so that it converts into one attention layer, as a model
 * that called SDPA does. Not when the caller keeps one of those ops out of engine segments
 * (`torchExecutedOps`, by target or node name): the rewrite would hide it. A copy when
 * something changes.
 */
export function recognizeExportedForms(graph: Graph, resolved: Pick<ResolvedSettings, 'torchExecutedOps'>, log: Logger): Graph {
  const forced = resolved.torchExecutedOps;
  if (WRITTEN_ATTENTION_OPS.some((op) => forced.has(op))) return graph;
  if (forced.size > 0 && graph.calls().some((n) => forced.has(n.name) && WRITTEN_ATTENTION_OPS.includes(n.target))) return graph;
  const { graph: out, attentions } = recognizeAttention(graph);
  if (attentions > 0) log('debug', `${attentions} attention(s) written out by the exporter taken as scaled_dot_product_attention`);
  return out;
}

/**
 * A program's inputs and outputs are tensors: a model that takes or gives ONNX's string
 * tensors, sequences or optionals is refused, naming the value (such values may flow inside
 * the model: they then run in fallback segments).
 */
function checkTensorInterface(graph: Graph): void {
  const names = graph.outputNames;
  const io = [...graph.inputs.map((v) => ({ v, what: `input "${v.name}"` })), ...graph.outputs.map((v, i) => ({ v, what: `output "${names[i] ?? v.name}"` }))];
  for (const { v, what } of io) {
    if (v.type.kind !== 'tensor' && v.type.kind !== 'symint') {
      throw new UnsupportedOpError(`compile(): ${what} is a ${formatType(v.type)}; a program's inputs and outputs are tensors (run such a model with interpretValues from tensorrt-node/ir)`, {
        details: { value: v.name },
      });
    }
  }
}

/** Runs the pipeline on an imported graph (a copy: the pipeline changes it), from the end of the import stage. */
export async function compileGraph(imported: Graph, resolved: ResolvedSettings, log: Logger, progress: ProgressHook): Promise<CompiledProgram> {
  await checkAborted(resolved.signal);
  checkTensorInterface(imported);
  const modelOps = imported.calls().length;
  checkTorchExecutedOps(resolved.torchExecutedOps, imported);
  progress('import', 'end', `imported ${modelOps} ops`);
  progress('lowering', 'start', 'binding input shapes and lowering');
  const graph = recognizeExportedForms(imported, resolved, log);
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
  const { device, memoryBytes } = await engineDeviceForBackend(resolved.device, backend, log);
  checkProgramMemory(graph, resolved, memoryBytes, log);
  progress('partitioning', 'start', `partitioning into engine segments (${backendName}) and fallback segments`);
  // Dynamic shapes: `_dyn`-aware partitioning, then shape-tensor legalization (lib/legalization/).
  const dynamic = isDynamicPlan(shapes);
  // Selection knows what the backend's engines hold of sizes only a run tells (a NonZero's count).
  const selection = { ...resolved, ...backendSelection(backend) };
  const { segments, report } = dynamic ? partitionDynamic(graph, selection) : partition(graph, selection);
  describeModel(report, graph, modelOps);
  report.backend = backendName;
  const engines = segments.filter((s) => s.kind === 'engine').length;
  progress('partitioning', 'end', `${segments.length} segment(s), ${engines} engine(s) to build`, { engines });
  log('info', formatPartitionReport(report));

  const programSegments: ProgramSegment[] = [];
  let built = 0;
  for (const s of segments) {
    const inputs = s.inputs.map((v) => v.name);
    const outputs = s.outputs.map((v) => v.name);
    if (s.kind === 'engine') {
      log('debug', `building segment ${s.index} (${s.nodes.length} ops) with the ${backendName} backend`);
      const profiles = dynamic ? segmentProfiles(s, shapes) : undefined;
      const where = { index: built, total: engines };
      const what = `engine ${built + 1}/${engines} (segment ${s.index}, ${s.nodes.length} ops)`;
      await checkAborted(resolved.signal);
      progress('build', 'start', `building ${what}`, where);
      const network = convertSegment({ name: `${graph.name}_segment${s.index}`, nodes: s.nodes, inputs: s.inputs, outputs: s.outputs, profiles }, selection);
      const context: BuildContext = {
        log,
        progress: (phase) => progress('build', 'phase', describePhase(`engine ${built + 1}/${engines}`, phase), { ...where, phase }),
        ...(resolved.signal === undefined ? {} : { signal: resolved.signal }),
      };
      // What the engine is built from, kept so that a program file can be rebuilt for another
      // backend where this one cannot run (loadProgram's rebuild); a reference engine is its
      // Network already, and runs everywhere.
      const { timingCache: _cache, ...build } = resolved.build;
      const source = backendName === 'reference' ? undefined : { network: serializeNetworkToBuffer(network), build };
      const engine = await backend.build(network, resolved.build, device, context);
      programSegments.push({ kind: 'engine', backend: backendName, engine, inputs, outputs, device: structuredClone(device), ...(source === undefined ? {} : { source }) });
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
  // The opt shapes live only inside the engines otherwise: kept on the inputs, they survive
  // into program files, where `run --random-inputs` and `inspect` read them.
  const inputs = complex.present(io(graph.inputs, graph.inputs.map((v) => v.name)), 'inputs').map((x) => {
    const profiles = dynamic ? profilesForShape(x.shape, shapes) : [];
    return profiles.length === 0 ? x : { ...x, profiles };
  });
  const data: ProgramData = {
    inputs,
    outputs: complex.present(io(graph.outputs, graph.outputNames), 'outputs'),
    segments: programSegments,
    constants,
  };
  // Symbols bound at compile time are gone from the graph; the dynamic ones keep their compiled ranges (run-time checks).
  return { data, report, backend: backendName, symbols: [...graph.symbols], refusals: resolution.refusals };
}

/**
 * Refuses, before anything is built, a program whose tensors would not fit at once
 * (./memory-plan.ts): the caller's maxProgramBytes, or the memory of the device the tensors
 * live on.
 */
function checkProgramMemory(graph: Graph, resolved: ResolvedSettings, deviceMemoryBytes: number | undefined, log: Logger): void {
  const plan = planMemory(graph);
  const budget = resolved.maxProgramBytes ?? defaultMaxProgramBytes(deviceMemoryBytes);
  log('debug', `memory plan: ${plan.peakBytes} bytes of tensors at the peak (${plan.constantBytes} of constants), budget ${budget}`);
  if (plan.unbounded.length > 0) log('debug', `memory plan: ${plan.unbounded.length} value(s) have a dim without an upper bound and are not counted (${plan.unbounded.slice(0, 3).join(', ')})`);
  checkMemoryPlan(plan, budget, resolved.maxProgramBytes !== undefined);
}

/** What the report's counts are relative to: the model's op count at import, and its I/O names (values a segment reads or writes). */
export function describeModel(report: PartitionReport, graph: Graph, modelOps: number): void {
  report.modelOps = modelOps;
  report.io = {
    inputs: graph.inputs.map((v) => ({ name: v.name, value: v.name })),
    outputs: graph.outputs.map((v, i) => ({ name: graph.outputNames[i]!, value: v.name })),
  };
}
