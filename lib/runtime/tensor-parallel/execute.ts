/**
 * Runs the ranks of a tensor-parallel program in lockstep, in one thread: every rank runs its
 * segments (engines and fallback graphs, as ProgramExecutor does) up to its next collective
 * segment; when all ranks are there, their tensors are all-reduced and every rank goes on with
 * the result. The all-reduce runs through NCCL when the ranks' tensors are on GPUs of their own
 * (./collectives.ts decides, by the program's collectives policy), else on the host. In one
 * thread; the worker thread of TensorParallelProgram (lib/runtime/tensor-parallel/program.ts) runs it.
 *
 * Everything else is what ProgramExecutor (lib/runtime/execute.ts) does for one program, with
 * its pieces (ProgramRun): constants, complex inputs and outputs converted at the boundary
 * (lib/runtime/complex-io.ts), float widths kept at what each consumer expects.
 *
 * A collective segment is a fallback segment whose graph is one `trt.all_reduce` node
 * (lib/compile/tensor-parallel.ts cuts the ranks' programs so). Run alone by a plain
 * ProgramExecutor it would be the identity, so every rank's ProgramData stays a valid program.
 */
import type { ReduceOp } from '../../collectives/reduction';
import { InternalError } from '../../errors';
import type { DeviceTensor } from '../../gpu/device-tensor';
import { isComplex, type DType } from '../../ir/dtype';
import type { Graph } from '../../ir/graph';
import { ALL_REDUCE } from '../../ir/ops/collective';
import { fromNumbers, readNumbers } from '../../kernels/access';
import { Tensor } from '../../ir/tensor';
import { disposeSegments, loadConstants, loadSegment, ProgramRun, type LoadedSegment } from '../execute';
import { DEFAULT_RUN_LIMITS, type RunLimits } from '../../engine/resource-limits';
import type { ProgramData } from '../segments';
import { chooseCollectivePath, DeviceCollectives, placeOfValue } from './collectives';
import type { CollectivesPolicy } from './collectives-policy';

type Step = LoadedSegment | { kind: 'all_reduce'; op: string; input: string; output: string; node: string; dtype: DType };

/** The collective a fallback segment graph is, if it is one (a single `trt.all_reduce` node). */
export function collectiveOf(graph: Graph): { op: string; node: string } | undefined {
  const calls = graph.calls();
  if (calls.length !== 1 || calls[0]!.target !== ALL_REDUCE) return undefined;
  return { op: String(calls[0]!.args.op ?? 'sum'), node: calls[0]!.name };
}

/**
 * Reduces one tensor per rank elementwise: `sum` (accumulated in float64 in rank order and
 * rounded once, so every rank gets the same bits), `avg`, `prod`, `max`, `min`.
 *
 * @throws {InternalError} `E_INTERNAL`: tensors of different dtypes or shapes (ranks diverged).
 */
export function allReduce(tensors: readonly Tensor[], op: string): Tensor {
  const first = tensors[0];
  if (first === undefined) throw new InternalError('all-reduce of no tensors');
  for (const t of tensors) {
    if (t.dtype !== first.dtype || t.shape.length !== first.shape.length || t.shape.some((d, i) => d !== first.shape[i])) {
      throw new InternalError(`all-reduce of ${t.toString()} with ${first.toString()}: the ranks disagree`);
    }
  }
  if (isComplex(first.dtype) && op !== 'sum' && op !== 'avg') throw new InternalError(`all-reduce ${op} of complex tensors`);
  const acc = Float64Array.from(readNumbers(first));
  for (const t of tensors.slice(1)) {
    const x = readNumbers(t);
    for (let i = 0; i < acc.length; i++) {
      const a = acc[i]!;
      const b = x[i]!;
      acc[i] = op === 'sum' || op === 'avg' ? a + b : op === 'prod' ? a * b : op === 'max' ? (a >= b || Number.isNaN(a) ? a : b) : a <= b || Number.isNaN(a) ? a : b;
    }
  }
  if (op === 'avg') for (let i = 0; i < acc.length; i++) acc[i]! /= tensors.length;
  else if (!['sum', 'prod', 'max', 'min'].includes(op)) throw new InternalError(`unknown all-reduce op ${op}`);
  return fromNumbers(first.dtype, first.shape, acc);
}

/** A rank's segments, its collective segments as all-reduce steps. */
async function load(data: ProgramData): Promise<Step[]> {
  const steps: Step[] = [];
  for (const s of data.segments) {
    const loaded = await loadSegment(s);
    const collective = loaded.kind === 'fallback' ? collectiveOf(loaded.graph) : undefined;
    steps.push(collective === undefined || loaded.kind !== 'fallback' ? loaded : { kind: 'all_reduce', ...collective, input: s.inputs[0]!, output: s.outputs[0]!, dtype: loaded.inputDTypes[0]! });
  }
  return steps;
}

/** Runs every rank of a tensor-parallel program, in lockstep at its collectives. */
export class TensorParallelExecutor {
  private ranks: Step[][] = [];
  private loading: Promise<Step[][]> | undefined;
  private readonly constants: Array<Map<string, Tensor>>;
  private readonly device = new DeviceCollectives();

  constructor(
    private readonly data: readonly ProgramData[],
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    private readonly policy: CollectivesPolicy = 'auto',
  ) {
    this.constants = data.map(loadConstants);
  }

  /** Inputs in program input order (the same for every rank); resolves each rank's outputs. */
  async run(inputs: readonly Tensor[]): Promise<Tensor[][]> {
    this.loading ??= (async () => {
      const ranks: Step[][] = [];
      for (const d of this.data) ranks.push(await load(d));
      return ranks;
    })();
    this.ranks = await this.loading;
    const runs = this.data.map((d, r) => new ProgramRun(d, this.constants[r]!, inputs, `rank ${r}`, this.limits));
    try {
      const pcs = this.ranks.map(() => 0);
      for (;;) {
        // Every rank runs up to its next collective (or its end), all at once: ranks on GPUs
        // overlap; CPU segments run one after another anyway. Every rank is settled before an
        // error is thrown, so release() never frees what a rank still uses.
        const settled = await Promise.allSettled(
          this.ranks.map(async (steps, r) => {
            for (; pcs[r]! < steps.length; pcs[r]!++) {
              const s = steps[pcs[r]!]!;
              if (s.kind === 'all_reduce') return s;
              await runs[r]!.runSegment(s);
            }
            return undefined;
          }),
        );
        const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
        if (failed !== undefined) throw failed.reason;
        const waiting = settled.map((x) => (x as PromiseFulfilledResult<Extract<Step, { kind: 'all_reduce' }> | undefined>).value);
        if (waiting.every((s) => s === undefined)) break;
        const first = waiting.find((s) => s !== undefined)!;
        if (waiting.some((s) => s === undefined || s.node !== first.node || s.op !== first.op)) {
          throw new InternalError(`tensor-parallel ranks diverged: they stopped at ${waiting.map((s, r) => `rank ${r}: ${s ? `${s.node} (${s.op})` : 'the end'}`).join(', ')}`);
        }
        const steps = waiting as Array<Extract<Step, { kind: 'all_reduce' }>>;
        const values = steps.map((s, r) => runs[r]!.peek(s.input));
        const places = values.map(placeOfValue);
        // NCCL is loaded only when it could be used: never for ranks that run on the CPU.
        const nccl = this.policy !== 'host' && places.every((p) => p.kind === 'device') ? await DeviceCollectives.ncclAvailable() : 'not asked';
        const path = chooseCollectivePath(this.policy, places, first.dtype, nccl, first.node);
        if (path.path === 'nccl') {
          const reduced = await this.device.allReduce(values as DeviceTensor[], path.devices, first.op as ReduceOp, first.node);
          steps.forEach((s, r) => runs[r]!.set(s.output, reduced[r]!));
        } else {
          const reduced = allReduce(await Promise.all(steps.map((s, r) => runs[r]!.takeAs(s.input, s.dtype))), first.op);
          // Each rank gets its own copy, as each device would.
          steps.forEach((s, r) => runs[r]!.set(s.output, r === 0 ? reduced : new Tensor(reduced.dtype, reduced.shape, reduced.data.slice())));
        }
        for (let r = 0; r < pcs.length; r++) pcs[r]!++;
      }
      return await Promise.all(runs.map((run) => run.outputs()));
    } finally {
      // Device values (engine outputs, NCCL results) are freed now, not by their finalizers.
      for (const run of runs) run.release();
    }
  }

  /** Releases every rank's engine runners and destroys the NCCL communicators. */
  async dispose(): Promise<void> {
    for (const steps of this.ranks) disposeSegments(steps);
    await this.device.dispose();
  }
}
