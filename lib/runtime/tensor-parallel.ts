/**
 * A tensor-parallel program: one compiled program per rank (from `compile(model,
 * {tensorParallel: n})`), run together. On the CPU reference backend all ranks run in
 * lockstep on one worker thread with an in-process all-reduce
 * (lib/runtime/tensor-parallel-execute.ts); run() never blocks the event loop.
 *
 * Devices: rank r is meant for CUDA device r (`targetDevice`), and its TensorRT engines are
 * built for it. Placing ranks on GPUs at load time and NCCL collectives (one rank per GPU)
 * are not built yet: on GPUs this program would still run its ranks one after another on
 * one thread, which only the reference backend supports today.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { createError, InternalError, TensorRTNodeError } from '../errors';
import { bindShapes, orderInputs } from '../interpreter/bind-inputs';
import { tensorType, type TensorType } from '../ir/graph';
import { formatShape, type SymbolRange } from '../ir/symbolic';
import type { BlockSharding } from '../lowering/sharding/shard';
import { PACKAGE_ROOT } from '../native';
import type { PartitionReport } from '../partitioning/partition';
import { Tensor } from '../tensor';
import type { ProgramData, ProgramIO } from './segments';

/** The device a rank needs: rank r on CUDA device `gpuId` (r, or r after the `device.gpuId` setting). */
export interface RankDevice {
  type: 'gpu';
  gpuId: number;
}

/** One rank of a tensor-parallel program: a program over its share of the weights (not runnable alone). */
export class TensorParallelRank {
  constructor(
    /** 0 … n-1. */
    readonly rank: number,
    /** @internal The rank's segments; its collective segments are single `trt.all_reduce` graphs. */
    readonly data: ProgramData,
    readonly report: PartitionReport,
    /** The backend its TensorRT segments were built for. */
    readonly backend: string,
    /** Where the rank is meant to run (see the top of this file). */
    readonly targetDevice: RankDevice,
    /** Indices of its collective segments (fallback segments holding one `trt.all_reduce`). */
    readonly collectiveSegments: readonly number[],
  ) {}

  /** The rank's inputs (every input of the model). */
  get inputs(): readonly ProgramIO[] {
    return this.data.inputs;
  }

  /** The rank's outputs (the model's). */
  get outputs(): readonly ProgramIO[] {
    return this.data.outputs;
  }

  /** How many all-reduce collectives one run of this rank takes part in. */
  get collectives(): number {
    return this.collectiveSegments.length;
  }

  /** The rank, its target GPU and its segments. */
  toString(): string {
    const segs = this.data.segments.map((s, i) => (s.kind === 'tensorrt' ? `tensorrt(${s.backend})` : this.collectiveSegments.includes(i) ? 'all_reduce' : 'fallback')).join(' → ');
    return `rank ${this.rank} (gpu ${this.targetDevice.gpuId}) [${segs}]`;
  }
}

/** Thrown by calls on a disposed program (`E_INVALID_ARGUMENT`). */
function disposedError(): TensorRTNodeError {
  return createError('E_INVALID_ARGUMENT', 'this tensor-parallel program has been disposed');
}

function workerScript(): string {
  const here = path.join(__dirname, 'tensor-parallel-worker.js');
  if (fs.existsSync(here)) return here;
  const built = path.join(PACKAGE_ROOT, 'dist', 'runtime', 'tensor-parallel-worker.js');
  if (fs.existsSync(built)) return built;
  throw new InternalError(`the tensor-parallel worker script is missing (looked for ${here} and ${built}); run \`npm run build\``);
}

interface WireTensor {
  dtype: Tensor['dtype'];
  shape: number[];
  data: Tensor['data'];
}

interface Pending {
  resolve: (t: Tensor[][]) => void;
  reject: (e: Error) => void;
}

const finalizer = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

/** What `compile(model, {tensorParallel: n})` returns: n ranks that run as one program. */
export class TensorParallelProgram {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private disposed = false;
  private readonly shaped: { inputs: Array<{ name: string; tensorType: TensorType }>; symbols: ReadonlyMap<string, SymbolRange> };

  constructor(
    /** The ranks, rank r at index r. */
    readonly ranks: readonly TensorParallelRank[],
    /** What was split, per block (layer): heads, key/value heads and how, MLP columns. */
    readonly blocks: readonly BlockSharding[],
    symbols: ReadonlyMap<string, SymbolRange> = new Map(),
  ) {
    if (ranks.length === 0) throw new InternalError('a tensor-parallel program needs at least one rank');
    this.shaped = { inputs: ranks[0]!.inputs.map((io) => ({ name: io.name, tensorType: tensorType(io.dtype, io.shape) })), symbols };
  }

  /** The number of ranks. */
  get size(): number {
    return this.ranks.length;
  }

  /** The program inputs (the same for every rank: every rank gets every input, `freqs_cis` too). */
  get inputs(): readonly ProgramIO[] {
    return this.ranks[0]!.inputs;
  }

  /** The program outputs (rank 0's; every rank has the same). */
  get outputs(): readonly ProgramIO[] {
    return this.ranks[0]!.outputs;
  }

  /** Rank 0's partition report (every rank has the same structure). */
  get report(): PartitionReport {
    return this.ranks[0]!.report;
  }

  /** The backend the ranks' TensorRT segments were built for. */
  get backend(): string {
    return this.ranks[0]!.backend;
  }

  /**
   * Runs every rank and returns rank 0's outputs (after the last all-reduce every rank holds
   * the same values). Inputs in order or by name; bad inputs reject with E_BAD_INPUT.
   */
  async run(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<Tensor[]> {
    return (await this.runAllRanks(inputs))[0]!;
  }

  /** Runs every rank and returns every rank's outputs (index r: rank r). */
  async runAllRanks(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<Tensor[][]> {
    if (this.disposed) throw disposedError();
    const ordered = orderInputs(
      this.inputs.map((io) => io.name),
      inputs,
    );
    ordered.forEach((t, i) => {
      if (!(t instanceof Tensor)) throw createError('E_BAD_INPUT', `input "${this.inputs[i]!.name}" must be a Tensor`);
    });
    bindShapes(this.shaped, ordered);
    const worker = this.start();
    const id = this.nextId++;
    const result = new Promise<Tensor[][]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ type: 'run', id, inputs: ordered.map((t) => ({ dtype: t.dtype, shape: [...t.shape], data: t.data })) });
    return result;
  }

  private start(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(workerScript(), { workerData: { ranks: this.ranks.map((r) => r.data) } });
    worker.on('message', (m: { id: number; outputs?: WireTensor[][]; error?: { code: string; message: string; details: Record<string, unknown> } }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (!p) return;
      try {
        if (m.error) p.reject(createError(m.error.code, m.error.message, m.error.details));
        else p.resolve(m.outputs!.map((ts) => ts.map((t) => new Tensor(t.dtype, t.shape, t.data))));
      } catch (error) {
        p.reject(error as Error);
      }
    });
    worker.on('error', (error) => this.failAll(createError('E_INTERNAL', `the tensor-parallel worker failed: ${error.message}`)));
    worker.on('exit', (code) => {
      if (this.pending.size > 0) this.failAll(createError('E_INTERNAL', `the tensor-parallel worker exited (code ${code}) during a run`));
      this.worker = null;
    });
    worker.unref();
    finalizer.register(this, worker, this);
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  /** Stops the worker and releases every rank's engines. Idempotent; later run() calls reject. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const w = this.worker;
    this.worker = null;
    finalizer.unregister(this);
    this.failAll(disposedError());
    if (w !== null) await w.terminate();
  }

  /** `await using` support: dispose(). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** One line: inputs, outputs, and each rank's segments. */
  toString(): string {
    const io = (x: readonly ProgramIO[]): string => x.map((i) => `${i.name}: ${i.dtype}${formatShape(i.shape)}`).join(', ');
    return `TensorParallelProgram(${io(this.inputs)}) -> (${io(this.outputs)}) x${this.size} ranks [${this.ranks.map(String).join('; ')}]`;
  }
}
