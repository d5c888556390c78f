/**
 * A compiled program: segments in order (TensorRT engines and fallback graphs), its inputs
 * and outputs, and the partition report. run() executes on a worker thread and never blocks
 * the event loop; dispose() stops the worker (a finalizer does it too, as a backstop).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { createError, InternalError, TensorRTNodeError } from '../errors';
import { orderInputs, bindShapes } from '../interpreter/bind-inputs';
import { tensorType, type TensorType } from '../ir/graph';
import { formatShape, type SymbolRange } from '../ir/symbolic';
import { PACKAGE_ROOT } from '../native';
import type { PartitionReport } from '../partitioning/partition';
import { Tensor } from '../tensor';
import { saveProgram, saveProgramBuffer } from './program-file';
import type { ProgramData, ProgramIO } from './segments';

/** Thrown by calls on a disposed program (`E_INVALID_ARGUMENT`). */
function disposedError(): TensorRTNodeError {
  return createError('E_INVALID_ARGUMENT', 'this program has been disposed');
}

/**
 * The compiled worker script. From dist/ it sits beside this file; when the sources run
 * directly (tests with ts transpilation), the built copy in dist/ is used.
 */
function workerScript(): string {
  const here = path.join(__dirname, 'worker.js');
  if (fs.existsSync(here)) return here;
  const built = path.join(PACKAGE_ROOT, 'dist', 'runtime', 'worker.js');
  if (fs.existsSync(built)) return built;
  throw new InternalError(`the program worker script is missing (looked for ${here} and ${built}); run \`npm run build\``);
}

interface Pending {
  resolve: (t: Tensor[]) => void;
  reject: (e: Error) => void;
}

const finalizer = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

export class Program {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private disposed = false;
  private readonly shaped: { inputs: Array<{ name: string; tensorType: TensorType }>; symbols: ReadonlyMap<string, SymbolRange> };

  constructor(
    /** @internal */ readonly data: ProgramData,
    readonly report: PartitionReport,
    /** The backend the TensorRT segments were built for. */
    readonly backend: string,
    symbols: ReadonlyMap<string, SymbolRange> = new Map(),
  ) {
    this.shaped = { inputs: data.inputs.map((io) => ({ name: io.name, tensorType: tensorType(io.dtype, io.shape) })), symbols };
  }

  get inputs(): readonly ProgramIO[] {
    return this.data.inputs;
  }

  get outputs(): readonly ProgramIO[] {
    return this.data.outputs;
  }

  /** @internal The ranges of the symbols in the I/O shapes (saved in program files). */
  get symbolRanges(): ReadonlyMap<string, SymbolRange> {
    return this.shaped.symbols;
  }

  /** Writes the program to `file` as a `.trtp` program file (docs/program-format.md); `loadProgram(file)` reads it back. */
  async save(file: string): Promise<void> {
    await saveProgram(this, file);
  }

  /** The program as `.trtp` bytes; `loadProgramBuffer(bytes)` reads them back. */
  saveBuffer(): Uint8Array {
    return saveProgramBuffer(this);
  }

  /** Runs the program; inputs in order or by name. Bad inputs reject with E_BAD_INPUT naming the input. */
  async run(inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Promise<Tensor[]> {
    if (this.disposed) throw disposedError();
    const ordered = orderInputs(
      this.data.inputs.map((io) => io.name),
      inputs,
    );
    ordered.forEach((t, i) => {
      if (!(t instanceof Tensor)) throw createError('E_BAD_INPUT', `input "${this.data.inputs[i]!.name}" must be a Tensor`);
    });
    bindShapes(this.shaped, ordered);
    const worker = this.start();
    const id = this.nextId++;
    const result = new Promise<Tensor[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ type: 'run', id, inputs: ordered.map((t) => ({ dtype: t.dtype, shape: [...t.shape], data: t.data })) });
    return result;
  }

  private start(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(workerScript(), { workerData: this.data });
    worker.on('message', (m: { id: number; outputs?: Array<{ dtype: Tensor['dtype']; shape: number[]; data: Tensor['data'] }>; error?: { code: string; message: string; details: Record<string, unknown> } }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (!p) return;
      try {
        if (m.error) p.reject(createError(m.error.code, m.error.message, m.error.details));
        else p.resolve(m.outputs!.map((t) => new Tensor(t.dtype, t.shape, t.data)));
      } catch (error) {
        p.reject(error as Error);
      }
    });
    worker.on('error', (error) => this.failAll(createError('E_INTERNAL', `the program worker failed: ${error.message}`)));
    worker.on('exit', (code) => {
      if (this.pending.size > 0) this.failAll(createError('E_INTERNAL', `the program worker exited (code ${code}) during a run`));
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

  /** Stops the worker and releases engines. Idempotent; later run() calls reject. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const w = this.worker;
    this.worker = null;
    finalizer.unregister(this);
    this.failAll(disposedError());
    if (w !== null) await w.terminate();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  toString(): string {
    const io = (x: readonly ProgramIO[]): string => x.map((i) => `${i.name}: ${i.dtype}${formatShape(i.shape)}`).join(', ');
    const segs = this.data.segments.map((s) => (s.kind === 'tensorrt' ? `tensorrt(${s.backend})` : 'fallback')).join(' → ');
    return `Program(${io(this.data.inputs)}) -> (${io(this.data.outputs)}) [${segs}]`;
  }
}
