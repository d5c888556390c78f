/**
 * The worker thread that runs a program, so that program.run() never blocks the event loop.
 * Messages (lib/runtime/worker/worker-protocol.ts): {type: 'run', id, inputs} → {id, outputs} or
 * {id, error: {code, message, details}}; {type: 'profile', ...} → {id, profile}.
 */
import { workerData } from 'node:worker_threads';

import { ProgramExecutor } from '../execute';
import { profileProgram } from '../profile';
import type { ProgramData } from '../segments';
import { serveRuns, toWire, type WorkerSetup } from './worker-protocol';

const setup = workerData as WorkerSetup<ProgramData>;
const executor = new ProgramExecutor(setup.data, setup.limits);
serveRuns(
  {
    run: (inputs) => executor.run(inputs),
    preload: (shapes) => executor.preload(shapes),
    profile: (inputs, options) => profileProgram(setup.data, executor, inputs, options),
    dispose: () => executor.dispose(),
  },
  (outputs) => outputs.map(toWire),
);
