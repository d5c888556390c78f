/**
 * compile(model, {tensorParallel: n}): shard the model graph into n rank graphs
 * (lib/lowering/sharding), compile each through the ordinary pipeline (its `trt.all_reduce`
 * nodes have no converter, so they always land in fallback segments), then cut every
 * fallback segment at its all-reduces so that each collective is a segment of its own, and
 * return the ranks as one TensorParallelProgram.
 *
 * Devices: rank r targets CUDA device r (offset by `settings.device.gpuId` when given); for
 * GPU backends each rank's engines are built for that device. The reference backend needs
 * none and records so in its engines.
 */
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../ir/serialize';
import { symbolsOf } from '../ir/symbolic';
import { hasCollectives, shardGraph, splitAtCollectives } from '../lowering/sharding';
import type { Graph } from '../ir/graph';
import type { Program } from '../runtime/program';
import { runLimits } from '../engine/resource-limits';
import type { ProgramData, ProgramSegment } from '../runtime/segments';
import { TensorParallelProgram, TensorParallelRank } from '../runtime/tensor-parallel/program';
import { loadModel, type ModelSource } from './load-model';
import type { CompileSettings, TensorParallelSettings } from './settings';

/**
 * The rank's program with every fallback segment that holds `trt.all_reduce` nodes cut into
 * the pieces between them and one collective segment per all-reduce (a graph of that one
 * node). Returns the new data and the indices of the collective segments.
 */
export function separateCollectives(data: ProgramData): { data: ProgramData; collectives: number[] } {
  const segments: ProgramSegment[] = [];
  const collectives: number[] = [];
  for (const seg of data.segments) {
    if (seg.kind !== 'fallback') {
      segments.push(seg);
      continue;
    }
    const graph = deserializeGraphFromBuffer(seg.graph);
    if (!hasCollectives(graph)) {
      segments.push(seg);
      continue;
    }
    for (const step of splitAtCollectives(graph, { inputs: seg.inputs, outputs: seg.outputs })) {
      if (step.kind === 'graph') {
        segments.push({ kind: 'fallback', graph: serializeGraphToBuffer(step.graph), inputs: step.inputs, outputs: step.outputs });
      } else {
        collectives.push(segments.length);
        segments.push({ kind: 'fallback', graph: serializeGraphToBuffer(step.graph), inputs: [step.input], outputs: [step.output] });
      }
    }
  }
  return { data: { ...data, segments }, collectives };
}

/**
 * Compiles `model` split `settings.tensorParallel` ways; `compileOne` is compile() itself
 * (passed in to keep the modules acyclic).
 *
 * @throws {ShardingError} `E_SHARDING`: the model cannot be split (lib/lowering/sharding/shard.ts).
 * @throws everything compile() throws, for the first rank that fails.
 */
export async function compileTensorParallel(
  model: ModelSource,
  settings: TensorParallelSettings,
  compileOne: (graph: Graph, settings: CompileSettings) => Promise<Program>,
): Promise<TensorParallelProgram> {
  // The ranks compile Graphs, which have no external data: baseDir is used here, once.
  const { tensorParallel: n, baseDir, collectives, ...rest } = settings;
  const graph = loadModel(model, { baseDir });
  const symbols = new Map(graph.symbols);
  const sharded = shardGraph(graph, n);
  const baseGpu = rest.device?.gpuId ?? 0;
  const ranks: TensorParallelRank[] = [];
  for (let r = 0; r < n; r++) {
    const gpuId = baseGpu + r;
    // The reference backend ignores (and logs about) a device setting: only GPU backends get one per rank.
    const rankSettings: CompileSettings = rest.backend === 'reference' ? rest : { ...rest, device: { ...rest.device, gpuId } };
    const program = await compileOne(sharded.ranks[r]!, rankSettings);
    const { data, collectives } = separateCollectives(program.data);
    ranks.push(new TensorParallelRank(r, data, program.report, program.backend, { type: 'gpu', gpuId }, collectives));
    await program.dispose();
  }
  // Symbols the compiled inputs still carry (dynamic dims) keep their ranges for input checks.
  const open = new Set<string>();
  for (const io of ranks[0]!.inputs) for (const d of io.shape) symbolsOf(d, open);
  return new TensorParallelProgram(ranks, sharded.blocks, new Map([...symbols].filter(([s]) => open.has(s))), runLimits(settings.maxTensorBytes, 'compile settings'), collectives);
}
