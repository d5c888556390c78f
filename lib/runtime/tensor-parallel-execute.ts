/**
 * Runs the ranks of a tensor-parallel program in lockstep, in one thread, with an in-process
 * all-reduce: every rank runs its segments (engines and fallback graphs, as ProgramExecutor
 * does) up to its next collective segment; when all ranks are there, their tensors are
 * reduced and every rank goes on with the result. Pure and synchronous; the worker thread of
 * TensorParallelProgram (lib/runtime/tensor-parallel.ts) runs it.
 *
 * Everything else is what ProgramExecutor (lib/runtime/execute.ts) does for one program:
 * constants, complex inputs and outputs converted at the boundary (lib/runtime/complex-io.ts).
 *
 * A collective segment is a fallback segment whose graph is one `trt.all_reduce` node
 * (lib/compile/tensor-parallel.ts cuts the ranks' programs so). Run alone by a plain
 * ProgramExecutor it would be the identity, so every rank's ProgramData stays a valid program.
 */
import { getBackend } from '../backends';
import type { Runner } from '../backends/types';
import { InternalError } from '../errors';
import { dtypeInfo, isComplex } from '../ir/dtype';
import type { Graph } from '../ir/graph';
import { ALL_REDUCE } from '../ir/ops/collective';
import { deserializeGraphFromBuffer } from '../ir/serialize';
import { interpret } from '../interpreter';
import { fromNumbers, readNumbers } from '../kernels/access';
import { Tensor } from '../tensor';
import { fromCarrier, toCarrier } from './complex-io';
import type { ProgramData } from './segments';

type Step =
  | { kind: 'tensorrt'; runner: Runner; inputs: string[]; outputs: string[] }
  | { kind: 'fallback'; graph: Graph; inputs: string[]; outputs: string[] }
  | { kind: 'all_reduce'; op: string; input: string; output: string; node: string };

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

function load(data: ProgramData): Step[] {
  return data.segments.map((s): Step => {
    if (s.kind === 'tensorrt') return { kind: 'tensorrt', runner: getBackend(s.backend).createRunner(s.engine), inputs: s.inputs, outputs: s.outputs };
    const graph = deserializeGraphFromBuffer(s.graph);
    const collective = collectiveOf(graph);
    if (collective !== undefined) return { kind: 'all_reduce', ...collective, input: s.inputs[0]!, output: s.outputs[0]! };
    return { kind: 'fallback', graph, inputs: s.inputs, outputs: s.outputs };
  });
}

function constantsOf(data: ProgramData): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, c] of Object.entries(data.constants)) {
    const info = dtypeInfo(c.dtype);
    const copy = c.data.slice();
    out.set(name, new Tensor(c.dtype, c.shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes))));
  }
  return out;
}

/** Runs every rank of a tensor-parallel program, in lockstep at its collectives. */
export class TensorParallelExecutor {
  private readonly ranks: Step[][];
  private readonly constants: Array<Map<string, Tensor>>;

  constructor(private readonly data: readonly ProgramData[]) {
    this.ranks = data.map(load);
    this.constants = data.map(constantsOf);
  }

  /** Inputs in program input order (the same for every rank); returns each rank's outputs. */
  run(inputs: readonly Tensor[]): Tensor[][] {
    const envs = this.data.map((d, r) => {
      const env = new Map<string, Tensor>(this.constants[r]);
      d.inputs.forEach((io, i) => env.set(io.value, toCarrier(io, inputs[i]!)));
      return env;
    });
    const take = (r: number, name: string): Tensor => {
      const t = envs[r]!.get(name);
      if (t === undefined) throw new InternalError(`rank ${r}: value ${name} is needed before any segment computed it`);
      return t;
    };
    const pcs = this.ranks.map(() => 0);
    for (;;) {
      // Every rank runs up to its next collective (or its end).
      const waiting = this.ranks.map((steps, r) => {
        for (; pcs[r]! < steps.length; pcs[r]!++) {
          const s = steps[pcs[r]!]!;
          if (s.kind === 'all_reduce') return s;
          if (s.kind === 'tensorrt') {
            const feeds: Record<string, Tensor> = {};
            for (const name of s.inputs) feeds[name] = take(r, name);
            const out = s.runner.run(feeds);
            for (const name of s.outputs) envs[r]!.set(name, out[name] ?? take(r, name));
          } else {
            const out = interpret(s.graph, s.inputs.map((name) => take(r, name)));
            s.outputs.forEach((name, i) => envs[r]!.set(name, out[i]!));
          }
        }
        return undefined;
      });
      if (waiting.every((s) => s === undefined)) break;
      const first = waiting.find((s) => s !== undefined)!;
      if (waiting.some((s) => s === undefined || s.node !== first.node || s.op !== first.op)) {
        throw new InternalError(`tensor-parallel ranks diverged: they stopped at ${waiting.map((s, r) => `rank ${r}: ${s ? `${s.node} (${s.op})` : 'the end'}`).join(', ')}`);
      }
      const reduced = allReduce(
        waiting.map((s, r) => take(r, s!.input)),
        first.op,
      );
      waiting.forEach((s, r) => {
        // Each rank gets its own copy, as each device would.
        envs[r]!.set(s!.output, r === 0 ? reduced : new Tensor(reduced.dtype, reduced.shape, reduced.data.slice()));
        pcs[r]!++;
      });
    }
    return this.data.map((d, r) => d.outputs.map((io) => fromCarrier(io, take(r, io.value))));
  }

  /** Releases every rank's engine runners. */
  dispose(): void {
    for (const steps of this.ranks) for (const s of steps) if (s.kind === 'tensorrt') s.runner.dispose();
  }
}
