/**
 * Progress of compile(): the `onProgress` setting receives one event as each stage starts
 * and ends, so that a caller (the CLI's progress bar) can show where a long compile is, and,
 * during an engine build, the backend's own phases and steps (TensorRT's IProgressMonitor).
 * Library code never prints; it only calls the callback.
 */
import type { BuildPhaseEvent } from '../engine/build-context';


/** The stages of compile(), in order; `build` repeats once per engine segment. */
export type CompileStage = 'import' | 'lowering' | 'partitioning' | 'build';

export interface CompileProgressEvent {
  stage: CompileStage;
  /**
   * `start` when the stage begins, `end` when it is done; `phase` (stage `build` only) for
   * each event of the backend's own progress inside the engine build, given in `phase`.
   */
  state: 'start' | 'end' | 'phase';
  /** For `build`: which engine (0-based) of `total`. */
  index?: number;
  /** For `build`: how many engines this compile builds. */
  total?: number;
  /** At the end of `partitioning`: how many engines the `build` stage will build (0 for a dry run). */
  engines?: number;
  /** With state `phase`: the backend's phase, its step and step count (e.g. TensorRT's `Tactic selection`, 12 of 40). */
  phase?: BuildPhaseEvent;
  /** Milliseconds since compile() started. */
  elapsedMs: number;
  /** In words, e.g. `building engine 2/3 (segment 4, 57 ops)`. */
  message: string;
}

export type ProgressCallback = (event: CompileProgressEvent) => void;

/** The optional fields of an event, as a reporter is given them. */
export type ProgressExtra = Pick<CompileProgressEvent, 'index' | 'total' | 'engines' | 'phase'>;

/** In words: `engine 1/2: Tactic selection 12/40 (in Building engine)`. */
export function describePhase(engine: string, p: BuildPhaseEvent): string {
  const where = p.parent === undefined ? '' : ` (in ${p.parent})`;
  if (p.state === 'start') return `${engine}: ${p.phase}${where} started, ${p.steps} step(s)`;
  if (p.state === 'end') return `${engine}: ${p.phase}${where} done`;
  return `${engine}: ${p.phase}${where} ${p.step}/${p.steps}`;
}

/**
 * A reporter bound to one compile: `report(stage, state, message, where?)` stamps the
 * elapsed time. An error thrown by the callback propagates (it is the caller's bug).
 */
export function progressReporter(callback: ProgressCallback | undefined): (stage: CompileStage, state: CompileProgressEvent['state'], message: string, extra?: ProgressExtra) => void {
  const started = performance.now();
  if (callback === undefined) return () => undefined;
  return (stage, state, message, extra) => {
    callback({ stage, state, elapsedMs: performance.now() - started, message, ...extra });
  };
}
