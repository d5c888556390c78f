/**
 * TensorRT's ILogger lines and IProgressMonitor calls during a build, as the addon delivers
 * them on the JS thread (native/trt/bindings.cc), turned into library log records and
 * BuildPhaseEvents; the handler's answer to a step is stepComplete's (false stops the build).
 */
import type { Logger, LogLevel } from '../../logger';
import type { BuildContext, BuildPhaseEvent } from '../../engine/build-context';

/** ILogger::Severity (kINTERNAL_ERROR 0 … kVERBOSE 4) → log level; the library has no error level, and a failed build's error is its rejection. */
const LEVEL: readonly LogLevel[] = ['warn', 'warn', 'warn', 'debug', 'debug'];
const SEVERITY_NAME = ['internal error', 'error', 'warning', 'info', 'verbose'];

/** The severities forwarded from native code: up to kINFO (kVERBOSE is long; filtered before it crosses threads). */
export const MAX_SEVERITY = 3;

/** What tensorrtBuild's onEvent receives: ('log', severity, message) or ('progress', kind 0 start | 1 step | 2 finish, phase, parent, step). */
export type NativeBuildEvent = (kind: 'log' | 'progress', a: number, text: string, parent: string, step: number) => boolean;

export interface BuildEventHandler {
  onEvent: NativeBuildEvent;
  /** An error the caller's progress callback threw (it stopped the build), to rethrow. */
  readonly failure: { error: unknown } | null;
}

export function logLevelOf(severity: number): LogLevel {
  return LEVEL[severity] ?? 'debug';
}

/** The log line of one TensorRT message. */
export const tensorrtLogLine = (severity: number, message: string): string => `TensorRT ${SEVERITY_NAME[severity] ?? `severity ${severity}`}: ${message}`;

/**
 * A handler for one build. Phase step counts come from phaseStart (stepComplete and
 * phaseFinish do not repeat them). Each event is also a debug line (phase starts at info).
 */
export function buildEventHandler(log: Logger, context: BuildContext | undefined): BuildEventHandler {
  const steps = new Map<string, { steps: number; parent?: string }>();
  let failure: { error: unknown } | null = null;
  const progress = (kind: number, phase: string, parent: string, step: number): BuildPhaseEvent => {
    if (kind === 0) {
      steps.set(phase, parent === '' ? { steps: step } : { steps: step, parent });
      log('info', `TensorRT: ${phase}${parent === '' ? '' : ` (in ${parent})`} started, ${step} steps`);
    }
    const known = steps.get(phase) ?? { steps: 0 };
    const where = known.parent === undefined ? {} : { parent: known.parent };
    if (kind === 0) return { state: 'start', phase, ...where, step: 0, steps: known.steps };
    if (kind === 1) {
      log('debug', `TensorRT: ${phase} step ${step + 1}/${known.steps} done`);
      return { state: 'step', phase, ...where, step: step + 1, steps: known.steps };
    }
    steps.delete(phase);
    log('debug', `TensorRT: ${phase} finished`);
    return { state: 'end', phase, ...where, step: known.steps, steps: known.steps };
  };
  return {
    get failure() {
      return failure;
    },
    onEvent(kind, a, text, parent, step) {
      if (kind === 'log') {
        log(logLevelOf(a), tensorrtLogLine(a, text));
        return true;
      }
      if (failure !== null) return false;
      try {
        const event = progress(a, text, parent, step);
        context?.progress?.(event);
      } catch (error) {
        // A throwing callback (the caller's bug, or its way to stop) ends the build; build() rethrows it.
        failure = { error };
        return false;
      }
      return context?.signal?.aborted !== true;
    },
  };
}
