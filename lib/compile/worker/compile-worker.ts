/**
 * The compile worker thread: runs compile()'s pipeline (lib/compile/pipeline.ts) so that the
 * caller's event loop keeps turning. Requests and replies: ./compile-protocol.ts. Compiles
 * run one after another, in the order they came.
 */
import { parentPort } from 'node:worker_threads';

import { loadModel } from '../load-model';
import { compileGraph } from '../pipeline';
import type { ResolvedSettings } from '../settings';
import { deserializeGraphFromBuffer } from '../../ir/serialize';
import type { CompileAbort, CompileReply, CompileRequest } from './compile-protocol';
import { asResourceLimitError } from '../../engine/resource-limits';
import { toWireError } from '../../runtime/worker/worker-protocol';

const port = parentPort;
if (port === null) throw new Error('compile-worker runs on a worker thread only');
let queue: Promise<void> = Promise.resolve();

/** The signal of each compile received and not yet answered, aborted by a CompileAbort. */
const controllers = new Map<number, AbortController>();

async function serve(request: CompileRequest, signal: AbortSignal | undefined): Promise<void> {
  const { id, model } = request;
  const post = (reply: CompileReply): void => port!.postMessage(reply);
  try {
    const settings: ResolvedSettings = { ...request.settings, logger: undefined, onProgress: undefined, signal };
    const graph = model.kind === 'graph' ? deserializeGraphFromBuffer(model.bytes) : loadModel(model.kind === 'path' ? model.path : model.bytes, { baseDir: settings.baseDir });
    const result = await compileGraph(
      graph,
      settings,
      (level, message) => post({ id, type: 'log', level, message }),
      (stage, state, message, extra) => post({ id, type: 'progress', stage, state, message, ...(extra === undefined ? {} : { extra }) }),
    );
    post({ id, type: 'done', result });
  } catch (error) {
    post({ id, type: 'error', error: toWireError(asResourceLimitError(error)) });
  } finally {
    controllers.delete(id);
  }
}

port.on('message', (message: CompileRequest | CompileAbort) => {
  if ('type' in message) {
    controllers.get(message.id)?.abort(message.reason === '' ? undefined : new Error(message.reason));
    return;
  }
  // Only a compile whose caller gave a signal gets one: with it, TensorRT's steps wait for this thread.
  const controller = message.abortable ? new AbortController() : undefined;
  if (controller !== undefined) controllers.set(message.id, controller);
  queue = queue.then(() => serve(message, controller?.signal));
});
