/**
 * A tensor-parallel program: one compiled program per rank (from `compile(model,
 * {tensorParallel: n})`), run together. On the CPU reference backend all ranks run in
 * lockstep on one worker thread with an in-process all-reduce
 * (lib/runtime/tensor-parallel/execute.ts); run() never blocks the event loop.
 *
 * Saved as one `.trtp` file with every rank (save(), saveBuffer(); file-write.ts) and read
 * back by loadTensorParallelProgram() (file-load.ts).
 *
 * Devices: rank r is meant for CUDA device r (`targetDevice`), and its engines are built for
 * it; a loaded file places each rank's engines on a device of its own (file-load.ts). On GPUs
 * the all-reduces run through NCCL, one communicator per rank's device, driven from the same
 * worker thread (./collectives.ts: the `collectives` policy, and why one thread).
 */
import { InternalError } from '../../errors';
import type { SymbolRange } from '../../ir/symbolic';
import type { BlockSharding } from '../../lowering/sharding/shard';
import type { PartitionReport } from '../../partitioning/partition';
import type { Tensor } from '../../ir/tensor';
import { formatIO, printableIO, shapedInputs } from '../program-io';
import { DEFAULT_RUN_LIMITS, type RunLimits } from '../../engine/resource-limits';
import type { CollectivesPolicy } from './collectives-policy';
import type { ProgramData, ProgramIO } from '../segments';
import { saveTensorParallel, saveTensorParallelBuffer } from './file-write';
import { WorkerClient } from '../worker/worker-client';
import { fromWire, type WireTensor, type WorkerSetup } from '../worker/worker-protocol';

/** Outside the class: the worker's listeners hold it, and must not hold the program (lib/runtime/worker/worker-client.ts). */
const decodeRankOutputs = (outputs: unknown): Tensor[][] => (outputs as WireTensor[][]).map((ts) => ts.map(fromWire));

/** The device a rank needs: rank r on CUDA device `gpuId` (r, or r after the `device.gpuId` setting). */
export interface RankDevice {
  type: 'gpu';
  gpuId: number;
}

/**
 * One rank of a tensor-parallel program: a program over its share of the weights (not runnable alone).
 *
 * @hideconstructor
 */
export class TensorParallelRank {
  constructor(
    /** 0 … n-1. */
    readonly rank: number,
    /** @internal The rank's segments; its collective segments are single `trt.all_reduce` graphs. */
    readonly data: ProgramData,
    readonly report: PartitionReport,
    /** The backend that built its engine segments. */
    readonly backend: string,
    /** Where the rank is meant to run (see the top of this file). */
    readonly targetDevice: RankDevice,
    /** Indices of its collective segments (fallback segments holding one `trt.all_reduce`). */
    readonly collectiveSegments: readonly number[],
  ) {}

  /** The rank's inputs (every input of the model); shapes print with symbols. */
  get inputs(): readonly ProgramIO[] {
    return printableIO(this.data.inputs);
  }

  /** The rank's outputs (the model's); shapes print with symbols. */
  get outputs(): readonly ProgramIO[] {
    return printableIO(this.data.outputs);
  }

  /** How many all-reduce collectives one run of this rank takes part in. */
  get collectives(): number {
    return this.collectiveSegments.length;
  }

  /** The rank, its target GPU and its segments. */
  toString(): string {
    const segs = this.data.segments.map((s, i) => (s.kind === 'engine' ? `engine(${s.backend})` : this.collectiveSegments.includes(i) ? 'all_reduce' : 'fallback')).join(' → ');
    return `rank ${this.rank} (gpu ${this.targetDevice.gpuId}) [${segs}]`;
  }
}

/**
 * What `compile(model, {tensorParallel: n})` returns: n ranks that run as one program.
 *
 * @hideconstructor
 */
export class TensorParallelProgram {
  private readonly client: WorkerClient<Tensor[][]>;

  constructor(
    /** The ranks, rank r at index r. */
    readonly ranks: readonly TensorParallelRank[],
    /** What was split, per block (layer): heads, key/value heads and how, MLP columns. */
    readonly blocks: readonly BlockSharding[],
    /** @internal The ranges of the symbols in the I/O shapes (saved in program files). */
    readonly symbolRanges: ReadonlyMap<string, SymbolRange> = new Map(),
    /** What one run may allocate (`maxTensorBytes` of the compile settings). */
    readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    /** Where the all-reduces run: `auto` (NCCL when every rank is on a GPU of its own), `nccl` or `host` (./collectives.ts). */
    readonly collectives: CollectivesPolicy = 'auto',
  ) {
    if (ranks.length === 0) throw new InternalError('a tensor-parallel program needs at least one rank');
    this.client = new WorkerClient<Tensor[][]>({
      script: 'tensor-parallel-worker.js',
      what: 'tensor-parallel worker',
      workerData: (): WorkerSetup<ProgramData[]> => ({ data: this.ranks.map((r) => r.data), limits: this.limits, collectives: this.collectives }),
      decode: decodeRankOutputs,
      inputs: shapedInputs(ranks[0]!.inputs, symbolRanges),
      limits,
      disposedMessage: 'this tensor-parallel program has been disposed',
      // NCCL communicators are destroyed by the worker (ncclCommFinalize/Destroy), not left to thread teardown.
      gracefulDisposeMs: 15_000,
    });
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

  /** The backend that built the ranks' engine segments. */
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
    return this.client.run(inputs);
  }

  /**
   * Writes the program, every rank, to `file` as one tensor-parallel `.trtp` file
   * (docs/program-format.md); `loadTensorParallelProgram(file)` reads it back.
   */
  async save(file: string): Promise<void> {
    await saveTensorParallel(this, file);
  }

  /** The program as tensor-parallel `.trtp` bytes; `loadTensorParallelProgramBuffer()` reads them. */
  saveBuffer(): Uint8Array {
    return saveTensorParallelBuffer(this);
  }

  /** Stops the worker and releases every rank's engines. Idempotent; later run() calls reject. */
  async dispose(): Promise<void> {
    await this.client.dispose();
  }

  /** `await using` support: dispose(). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** One line: inputs, outputs, and each rank's segments. */
  toString(): string {
    return `TensorParallelProgram(${formatIO(this.inputs)}) -> (${formatIO(this.outputs)}) x${this.size} ranks [${this.ranks.map(String).join('; ')}]`;
  }
}
