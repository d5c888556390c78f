/**
 * The worker thread that runs a program, so that program.run() never blocks the event loop.
 * Messages (lib/runtime/worker/worker-protocol.ts): {type: 'run', id, inputs} → {id, outputs} or
 * {id, error: {code, message, details}}.
 */
import { workerData } from 'node:worker_threads';

import { ProgramExecutor } from '../execute';
import type { ProgramData } from '../segments';
import { serveRuns, toWire, type WorkerSetup } from './worker-protocol';

const setup = workerData as WorkerSetup<ProgramData>;
serveRuns(new ProgramExecutor(setup.data, setup.limits), (outputs) => outputs.map(toWire));
