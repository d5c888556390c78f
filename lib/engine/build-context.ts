/**
 * What an engine build may report while it runs, and how a caller stops it: the optional last
 * argument of Backend.build(). compile() passes one to every build; a backend that has nothing
 * to report ignores `log` and `progress`.
 */
import { AbortedError } from '../errors';
import type { Logger } from '../logger';

/** One event of a backend's own progress inside an engine build (TensorRT's IProgressMonitor). */
export interface BuildPhaseEvent {
  /** A phase starts (its step count known), one of its steps is done, or it ends. */
  state: 'start' | 'step' | 'end';
  /** The phase, as the backend names it (TensorRT's, e.g. `Building engine`). */
  phase: string;
  /** The phase this one runs inside, when any. */
  parent?: string;
  /** Steps of the phase done so far (0 at `start`). */
  step: number;
  /** Steps the phase has (TensorRT's nbSteps). */
  steps: number;
}

export interface BuildContext {
  /** Where the build's log records go (lib/logger.ts); default: the library's default logger. */
  readonly log?: Logger;
  /** Receives the backend's phases and steps; called on the building thread's event loop. */
  readonly progress?: (event: BuildPhaseEvent) => void;
  /**
   * Aborting stops the build as soon as the backend can (TensorRT: at its next step, whose
   * stepComplete then answers false); the build then rejects with AbortedError (`E_ABORTED`).
   */
  readonly signal?: AbortSignal;
}

/** @throws {AbortedError} `E_ABORTED` naming `what`, when `signal` is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw abortedError(signal, what);
}

/**
 * The abort reason in words: its message (an Error or DOMException of any realm), a string
 * as is; empty for none, or for the default reason of abort() without one.
 */
export function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  const message = (reason as { message?: unknown } | null | undefined)?.message;
  const text = typeof reason === 'string' ? reason : typeof message === 'string' ? message : '';
  return (reason as { name?: unknown } | null | undefined)?.name === 'AbortError' ? '' : text;
}

/** The AbortedError for `what`, quoting the abort reason. */
export function abortedError(signal: AbortSignal | undefined, what: string, cause?: unknown): AbortedError {
  const why = abortReason(signal);
  return new AbortedError(`${what} was aborted${why === '' ? '' : `: ${why}`}`, cause === undefined ? {} : { cause });
}
