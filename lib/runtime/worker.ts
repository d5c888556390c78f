/**
 * The worker thread that runs a program, so that program.run() never blocks the event loop.
 * Messages: {type: 'run', id, inputs} → {id, outputs} or {id, error: {code, message, details}}.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { TensorRTNodeError } from '../errors';
import type { DType } from '../ir/dtype';
import { Tensor } from '../tensor';
import { ProgramExecutor } from './execute';
import type { ProgramData } from './segments';

interface WireTensor {
  dtype: DType;
  shape: number[];
  data: Tensor['data'];
}

const executor = new ProgramExecutor(workerData as ProgramData);

parentPort!.on('message', (message: { type: 'run'; id: number; inputs: WireTensor[] } | { type: 'dispose' }) => {
  if (message.type === 'dispose') {
    executor.dispose();
    parentPort!.close();
    return;
  }
  try {
    const inputs = message.inputs.map((t) => new Tensor(t.dtype, t.shape, t.data));
    const outputs = executor.run(inputs).map((t) => ({ dtype: t.dtype, shape: [...t.shape], data: t.data }));
    parentPort!.postMessage({ id: message.id, outputs });
  } catch (error) {
    const e = error as Partial<TensorRTNodeError> & Error;
    parentPort!.postMessage({
      id: message.id,
      error: { code: e instanceof TensorRTNodeError ? e.code : 'E_INTERNAL', message: e.message ?? String(error), details: e.details ?? {} },
    });
  }
});
