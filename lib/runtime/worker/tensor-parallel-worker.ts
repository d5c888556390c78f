/**
 * The worker thread of a TensorParallelProgram: it holds every rank and runs them in lockstep
 * (lib/runtime/tensor-parallel/execute.ts), so that run() never blocks the event loop.
 * Messages (lib/runtime/worker/worker-protocol.ts): {type: 'run', id, inputs} → {id, outputs: per
 * rank} or {id, error: {code, message, details}}.
 */
import { workerData } from 'node:worker_threads';

import type { ProgramData } from '../segments';
import { TensorParallelExecutor } from '../tensor-parallel/execute';
import { serveRuns, toWire, type WorkerSetup } from './worker-protocol';

const setup = workerData as WorkerSetup<ProgramData[]>;
serveRuns(new TensorParallelExecutor(setup.data, setup.limits, setup.collectives), (outputs) => outputs.map((ts) => ts.map(toWire)));
