/**
 * Progress on stderr: a bar (cli-progress) when stderr is a terminal, plain timestamped
 * lines when it is not (logs, CI), nothing with `--quiet`. stdout stays the command's output.
 * An engine build's own phases (TensorRT's IProgressMonitor: `Tactic selection 12/40`) show
 * in the bar's message on a terminal, and as lines with `--progress`; both throttled, since
 * TensorRT reports thousands of steps.
 */
import { SingleBar } from 'cli-progress';

import type { CompileProgressEvent } from '../compile/progress';

export interface Progress {
  /** For `compile()`'s `onProgress` setting. */
  onCompile(event: CompileProgressEvent): void;
  /** Starts a counted task (`bench` iterations); `tick()` advances it. */
  task(label: string, total: number): void;
  tick(): void;
  /** A one-off note (`running`, `wrote program.trtp`). */
  note(message: string): void;
  /**
   * Something the user should know about what runs (an input given its opt shape): a line of
   * its own, also on a terminal, where notes only replace the bar's message.
   */
  info(message: string): void;
  /** Ends any bar; call before printing results. */
  stop(): void;
}

const silent: Progress = { onCompile: () => undefined, task: () => undefined, tick: () => undefined, note: () => undefined, info: () => undefined, stop: () => undefined };

/** Stages before the engine builds: import, lowering, partitioning. */
const FIXED_STEPS = 3;

/** At most one bar message per this many ms for build phases (a terminal redraws fast). */
export const BAR_PHASE_MS = 100;
/** At most one `--progress` line per this many ms for steps of one phase (phase starts always print). */
export const LINE_PHASE_MS = 1000;

/**
 * Whether to show a build-phase event now: a phase start always; a step or end only when
 * `intervalMs` has passed since the last one shown.
 */
export function phaseThrottle(intervalMs: number, now: () => number): (e: CompileProgressEvent) => boolean {
  let last = -Infinity;
  return (e) => {
    const t = now();
    if (e.phase?.state !== 'start' && t - last < intervalMs) return false;
    last = t;
    return true;
  };
}

function lines(stream: NodeJS.WritableStream, phases: boolean, now: () => number): Progress {
  const started = now();
  const stamp = (): string => `${((now() - started) / 1000).toFixed(1)}s`;
  const write = (m: string): void => void stream.write(`tensorrt-node: [${stamp()}] ${m}\n`);
  const showPhase = phaseThrottle(LINE_PHASE_MS, now);
  let task: { label: string; total: number; done: number; nextReport: number } | undefined;
  return {
    onCompile: (e) => {
      if (e.state === 'start') write(e.message);
      else if (e.state === 'phase' && phases && e.phase?.state !== 'end' && showPhase(e)) write(e.message);
    },
    task: (label, total) => {
      task = { label, total, done: 0, nextReport: Math.ceil(total / 10) };
      write(`${label}: ${total} run(s)`);
    },
    tick: () => {
      if (task === undefined) return;
      task.done++;
      if (task.done >= task.nextReport && task.done < task.total) {
        write(`${task.label}: ${task.done}/${task.total}`);
        task.nextReport += Math.ceil(task.total / 10);
      }
    },
    note: write,
    info: write,
    stop: () => undefined,
  };
}

function bar(stream: NodeJS.WritableStream, now: () => number): Progress {
  const b = new SingleBar(
    { stream, format: '{bar} {value}/{total} {message} ({duration}s)', hideCursor: true, clearOnComplete: true, barsize: 24 },
  );
  let active = false;
  const showPhase = phaseThrottle(BAR_PHASE_MS, now);
  const start = (total: number, message: string): void => {
    if (active) b.stop();
    b.start(total, 0, { message });
    active = true;
  };
  return {
    onCompile: (e) => {
      if (e.state === 'phase') {
        if (active && showPhase(e)) b.update({ message: e.message });
        return;
      }
      if (!active) start(FIXED_STEPS, e.message);
      if (e.engines !== undefined) b.setTotal(FIXED_STEPS + e.engines);
      if (e.state === 'end') b.increment(1, { message: e.message });
      else b.update({ message: e.message });
    },
    task: (label, total) => start(total, label),
    tick: () => b.increment(),
    note: (message) => (active ? b.update({ message }) : undefined),
    // A line written under a live bar would be redrawn over: the bar's message then.
    info: (message) => (active ? b.update({ message }) : void stream.write(`tensorrt-node: ${message}\n`)),
    stop: () => {
      if (active) b.stop();
      active = false;
    },
  };
}

/**
 * The progress display for this process's stderr. `progress`: engine build phases as lines
 * too when stderr is not a terminal (a terminal's bar always shows them). `now` is for tests.
 */
export function createProgress(
  options: { quiet?: boolean; progress?: boolean },
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = () => performance.now(),
): Progress {
  if (options.quiet) return silent;
  return stream.isTTY ? bar(stream, now) : lines(stream, options.progress === true, now);
}
