/**
 * The messages between compile() and the compile worker thread
 * (lib/compile/worker/compile-worker.ts): one request per compile, answered by any number of
 * log and progress messages (compile() hands them to the caller's logger and onProgress,
 * which cannot cross threads) and then one result or one error (a WireError, rebuilt into
 * the same typed error on the main thread). An abort message follows a request whose
 * caller's AbortSignal fired (the signal itself cannot cross).
 */
import type { CompiledProgram } from '../pipeline';
import type { CompileProgressEvent, CompileStage, ProgressExtra } from '../progress';
import type { ResolvedSettings } from '../settings';
import type { LogLevel } from '../../logger';
import type { WireError } from '../../runtime/worker/worker-protocol';

/** The model as it crosses: a file path, file bytes, or a serialized Graph. */
export type WireModel = { kind: 'path'; path: string } | { kind: 'bytes'; bytes: Uint8Array } | { kind: 'graph'; bytes: Uint8Array };

/** Resolved settings without the callbacks and the signal (they stay on the calling thread). */
export type WireSettings = Omit<ResolvedSettings, 'logger' | 'onProgress' | 'signal'>;

export interface CompileRequest {
  id: number;
  model: WireModel;
  settings: WireSettings;
  /** The caller gave a signal: the worker makes one for this compile (aborted by a CompileAbort). */
  abortable: boolean;
}

/** The caller's signal was aborted: the worker aborts that compile's own signal (with the reason's text). */
export interface CompileAbort {
  id: number;
  type: 'abort';
  reason: string;
}

export type CompileReply =
  | { id: number; type: 'log'; level: LogLevel; message: string }
  | { id: number; type: 'progress'; stage: CompileStage; state: CompileProgressEvent['state']; message: string; extra?: ProgressExtra }
  | { id: number; type: 'done'; result: CompiledProgram }
  | { id: number; type: 'error'; error: WireError };
