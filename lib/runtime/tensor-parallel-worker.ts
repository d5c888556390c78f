/**
 * The worker thread of a TensorParallelProgram: it holds every rank and runs them in lockstep
 * (lib/runtime/tensor-parallel-execute.ts), so that run() never blocks the event loop.
 * Messages: {type: 'run', id, inputs} → {id, outputs: per rank} or {id, error: {code, message, details}}.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { TensorRTNodeError } from '../errors';
import type { DType } from '../ir/dtype';
import { Tensor } from '../tensor';
import type { ProgramData } from './segments';
import { TensorParallelExecutor } from './tensor-parallel-execute';

interface WireTensor {
  dtype: DType;
  shape: number[];
  data: Tensor['data'];
}

const executor = new TensorParallelExecutor((workerData as { ranks: ProgramData[] }).ranks);
const wire = (t: Tensor): WireTensor => ({ dtype: t.dtype, shape: [...t.shape], data: t.data });

parentPort!.on('message', (message: { type: 'run'; id: number; inputs: WireTensor[] } | { type: 'dispose' }) => {
  if (message.type === 'dispose') {
    executor.dispose();
    parentPort!.close();
    return;
  }
  try {
    const inputs = message.inputs.map((t) => new Tensor(t.dtype, t.shape, t.data));
    parentPort!.postMessage({ id: message.id, outputs: executor.run(inputs).map((ts) => ts.map(wire)) });
  } catch (error) {
    const e = error as Partial<TensorRTNodeError> & Error;
    parentPort!.postMessage({
      id: message.id,
      error: { code: e instanceof TensorRTNodeError ? e.code : 'E_INTERNAL', message: e.message ?? String(error), details: e.details ?? {} },
    });
  }
});
