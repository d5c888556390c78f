/**
 * compile(): model → Graph → shape specialization and constant folding → partition →
 * TensorRT segments converted to Networks and built by a backend; fallback segments kept as
 * graphs → Program.
 */
import { getBackend } from '../backends';
import { convertSegment } from '../conversion/convert';
import '../conversion/converters';
import { BadInputError, InvalidArgumentError, TensorRTMissingError } from '../errors';
import { bindShapes, orderInputs, type InputShape } from '../interpreter/bind-inputs';
import type { Graph, Value } from '../ir/graph';
import { serializeGraphToBuffer } from '../ir/serialize';
import { extractSubgraph } from '../ir/subgraph';
import { formatShape, isStaticShape } from '../ir/symbolic';
import { verifyGraph } from '../ir/verify';
import { resolveLogger, type Logger } from '../logger';
import { specializeShapes } from '../lowering/specialize';
import { formatPartitionReport, partition } from '../partitioning/partition';
import { Program } from '../runtime/program';
import type { ProgramData, ProgramIO, ProgramSegment } from '../runtime/segments';
import { isTensorRTAvailable } from '../tensorrt';
import { loadModel, type ModelSource } from './load-model';
import { resolveSettings, type CompileSettings, type InputSpec, type ResolvedSettings } from './settings';

export type { CompileSettings, InputSpec } from './settings';
export type { ModelSource } from './load-model';

/** The static input shapes to compile for, from the settings or the graph's own static dims. */
function inputShapes(graph: Graph, settings: ResolvedSettings): InputShape[] {
  const names = graph.inputs.map((v) => v.name);
  let specs: Array<Omit<InputSpec, 'name'> | undefined>;
  if (settings.inputs === undefined) specs = names.map(() => undefined);
  else if (Array.isArray(settings.inputs)) {
    const named = settings.inputs.some((s) => s.name !== undefined);
    specs = named ? orderInputs(names, Object.fromEntries(settings.inputs.map((s) => [s.name ?? '', s]))) : orderInputs(names, settings.inputs);
  } else specs = orderInputs(names, settings.inputs);
  return graph.inputs.map((v, i) => {
    const type = v.tensorType;
    const spec = specs[i];
    if (spec === undefined) {
      if (!isStaticShape(type.shape)) {
        throw new InvalidArgumentError(
          `input "${v.name}" has dynamic dims ${formatShape(type.shape)}: give its shape in settings.inputs, e.g. ` +
            `{ inputs: { ${JSON.stringify(v.name)}: { shape: [${type.shape.map((d) => (typeof d === 'number' ? d : 1)).join(', ')}] } } }`,
        );
      }
      return { dtype: type.dtype, shape: type.shape as number[] };
    }
    if (spec.dtype !== undefined && spec.dtype !== type.dtype) {
      throw new InvalidArgumentError(`settings.inputs: input "${v.name}" is ${type.dtype} in the model, not ${spec.dtype}`);
    }
    return { dtype: type.dtype, shape: spec.shape };
  });
}

function io(values: readonly Value[], names: readonly string[]): ProgramIO[] {
  return values.map((v, i) => ({ name: names[i]!, value: v.name, dtype: v.tensorType.dtype, shape: [...v.tensorType.shape] }));
}

async function chooseBackend(settings: ResolvedSettings, log: Logger): Promise<string> {
  if (settings.backend === 'reference') return 'reference';
  const available = await isTensorRTAvailable();
  if (settings.backend === 'tensorrt') {
    if (!available) {
      throw new TensorRTMissingError('backend "tensorrt" was asked for, but TensorRT is not usable here; `tensorrt-node doctor` says why');
    }
    return 'tensorrt';
  }
  if (available) return 'tensorrt';
  log('info', 'TensorRT is not usable here; TensorRT segments run on the CPU reference backend (`tensorrt-node doctor` says why)');
  return 'reference';
}

/**
 * Compiles a model into a Program.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad settings, or a dynamic input without a shape.
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP`: with requireFullCompilation, every op TensorRT cannot run.
 * @throws {BadModelError} `E_BAD_MODEL`: the model cannot be read.
 */
export async function compile(model: ModelSource, settings: CompileSettings = {}): Promise<Program> {
  const resolved = resolveSettings(settings);
  const log = resolveLogger(resolved.logger);
  const graph = loadModel(model);
  const ranges = new Map(graph.symbols);
  let symbols: Map<string, number>;
  try {
    symbols = bindShapes(graph, inputShapes(graph, resolved));
  } catch (error) {
    if (error instanceof BadInputError) throw new InvalidArgumentError(`settings.inputs: ${error.message}`, { cause: error });
    throw error;
  }
  specializeShapes(graph, symbols);
  verifyGraph(graph, 'specialized graph');
  const backendName = await chooseBackend(resolved, log);
  const backend = getBackend(backendName);
  const { segments, report } = partition(graph, resolved);
  log('info', formatPartitionReport(report));

  const programSegments: ProgramSegment[] = [];
  for (const s of segments) {
    const inputs = s.inputs.map((v) => v.name);
    const outputs = s.outputs.map((v) => v.name);
    if (s.kind === 'tensorrt') {
      log('debug', `building segment ${s.index} (${s.nodes.length} ops) with the ${backendName} backend`);
      const network = convertSegment({ name: `${graph.name}_segment${s.index}`, nodes: s.nodes, inputs: s.inputs, outputs: s.outputs }, resolved);
      programSegments.push({ kind: 'tensorrt', backend: backendName, engine: await backend.build(network, {}), inputs, outputs });
    } else {
      const sub = extractSubgraph(graph, `${graph.name}_segment${s.index}`, s.nodes, s.inputs, s.outputs);
      programSegments.push({ kind: 'fallback', graph: serializeGraphToBuffer(sub), inputs, outputs });
    }
  }
  const constants: ProgramData['constants'] = {};
  for (const v of graph.outputs) {
    if (v.producer.kind !== 'constant') continue;
    const t = v.producer.tensor!;
    constants[v.name] = { dtype: t.dtype, shape: [...t.shape], data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice() };
  }
  const data: ProgramData = {
    inputs: io(graph.inputs, graph.inputs.map((v) => v.name)),
    outputs: io(graph.outputs, graph.outputNames),
    segments: programSegments,
    constants,
  };
  // Symbols bound at compile time are gone from the graph; the program keeps their ranges for messages.
  return new Program(data, report, backendName, new Map([...ranges].filter(([s]) => graph.symbols.has(s))));
}

/**
 * The support report without building anything: per op, whether it would run in TensorRT
 * and why not, and the segments (what `tensorrt-node compile --dry-run` prints).
 */
export async function dryRun(model: ModelSource, settings: CompileSettings = {}): Promise<import('../partitioning/partition').PartitionReport> {
  const resolved = resolveSettings(settings);
  const graph = loadModel(model);
  specializeShapes(graph, bindShapes(graph, inputShapes(graph, resolved)));
  return partition(graph, resolved).report;
}
