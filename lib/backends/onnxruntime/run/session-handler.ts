/**
 * A prepared run's way into onnxruntime without onnxruntime-common's InferenceSession.run().
 * That method checks its arguments, builds the fetches object, awaits the session handler
 * and copies the handler's results into a new object: several microseconds a run before
 * V8 optimizes it (about 2,500 runs), a sixth of a 15 µs mlp run. A prepared
 * run's feeds are built once at load from the engine's own inputs and it reads only the
 * outputs it was prepared for, so every one of those steps is settled in advance: it calls
 * the handler that run() calls, with the arguments run() would pass it (every output
 * fetched, no run options), and reads the same tensors from its answer.
 *
 * The handler is the `handler` field of onnxruntime-common's InferenceSession: private in
 * its typings, but the same in every release this backend supports (1.17 to 1.31, the
 * InferenceSessionHandler interface onnxruntime-common declares for its backends; 1.31's
 * run() adds the active LoRA adapters as a fourth argument, which onnxruntime-node's handler
 * does not take, so a run without adapters calls it as before). Where a
 * session has none that looks like it (another release, a wrapped session), undefined: the
 * prepared run then calls session.run() as before.
 */
import type { OrtModule } from '../ort-module';

type OrtTensor = InstanceType<OrtModule['Tensor']>;

/** What a prepared run calls to run its feeds: session.run(), or the handler through directSessionRun(). */
export interface SessionRun {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, unknown>>;
}

interface Handler {
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>, fetches: Record<string, null>, options: object): Promise<Record<string, unknown>>;
}

/** The arguments session.run(feeds) passes its handler besides the feeds: every output fetched (as null: onnxruntime allocates it), no options. */
class HandlerRun implements SessionRun {
  private readonly fetches: Readonly<Record<string, null>>;
  private readonly options: object = Object.freeze({});

  constructor(private readonly handler: Handler) {
    const fetches: Record<string, null> = {};
    for (const name of handler.outputNames) fetches[name] = null;
    this.fetches = Object.freeze(fetches);
  }

  run(feeds: Record<string, OrtTensor>): Promise<Record<string, unknown>> {
    return this.handler.run(feeds, this.fetches, this.options);
  }
}

/** `session`'s handler as a SessionRun, where it has the shape every supported release gives it; else undefined. */
export function directSessionRun(session: { readonly outputNames: readonly string[] }): SessionRun | undefined {
  const handler = (session as { handler?: unknown }).handler as Partial<Handler> | null | undefined;
  if (handler === null || typeof handler !== 'object' || typeof handler.run !== 'function' || handler.run.length !== 3) return undefined;
  const names = handler.outputNames;
  if (!Array.isArray(names) || names.length !== session.outputNames.length || !names.every((n, i) => n === session.outputNames[i])) return undefined;
  return new HandlerRun(handler as Handler);
}
