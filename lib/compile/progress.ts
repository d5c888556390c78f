/**
 * Progress of compile(): the `onProgress` setting receives one event as each stage starts
 * and ends, so that a caller (the CLI's progress bar) can show where a long compile is.
 * Library code never prints; it only calls the callback.
 */

/** The stages of compile(), in order; `build` repeats once per TensorRT engine. */
export type CompileStage = 'import' | 'lowering' | 'partitioning' | 'build';

export interface CompileProgressEvent {
  stage: CompileStage;
  /** `start` when the stage begins, `end` when it is done. */
  state: 'start' | 'end';
  /** For `build`: which engine (0-based) of `total`. */
  index?: number;
  /** For `build`: how many engines this compile builds. */
  total?: number;
  /** At the end of `partitioning`: how many engines the `build` stage will build (0 for a dry run). */
  engines?: number;
  /** Milliseconds since compile() started. */
  elapsedMs: number;
  /** In words, e.g. `building engine 2/3 (segment 4, 57 ops)`. */
  message: string;
}

export type ProgressCallback = (event: CompileProgressEvent) => void;

/** The stage order, for a caller that shows steps out of a total. */
export const COMPILE_STAGES: readonly CompileStage[] = ['import', 'lowering', 'partitioning', 'build'];

/**
 * A reporter bound to one compile: `report(stage, state, message, where?)` stamps the
 * elapsed time. An error thrown by the callback propagates (it is the caller's bug).
 */
export function progressReporter(callback: ProgressCallback | undefined): (stage: CompileStage, state: 'start' | 'end', message: string, extra?: Pick<CompileProgressEvent, 'index' | 'total' | 'engines'>) => void {
  const started = performance.now();
  if (callback === undefined) return () => undefined;
  return (stage, state, message, extra) => {
    callback({ stage, state, elapsedMs: performance.now() - started, message, ...extra });
  };
}
