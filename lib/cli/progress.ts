/**
 * Progress on stderr: a bar (cli-progress) when stderr is a terminal, plain timestamped
 * lines when it is not (logs, CI), nothing with `--quiet`. stdout stays the command's output.
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
  /** Ends any bar; call before printing results. */
  stop(): void;
}

const silent: Progress = { onCompile: () => undefined, task: () => undefined, tick: () => undefined, note: () => undefined, stop: () => undefined };

/** Stages before the engine builds: import, lowering, partitioning. */
const FIXED_STEPS = 3;

function lines(stream: NodeJS.WritableStream): Progress {
  const started = performance.now();
  const stamp = (): string => `${((performance.now() - started) / 1000).toFixed(1)}s`;
  const write = (m: string): void => void stream.write(`tensorrt-node: [${stamp()}] ${m}\n`);
  let task: { label: string; total: number; done: number; nextReport: number } | undefined;
  return {
    onCompile: (e) => {
      if (e.state === 'start') write(e.message);
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
    stop: () => undefined,
  };
}

function bar(stream: NodeJS.WritableStream): Progress {
  const b = new SingleBar(
    { stream, format: '{bar} {value}/{total} {message} ({duration}s)', hideCursor: true, clearOnComplete: true, barsize: 24 },
  );
  let active = false;
  const start = (total: number, message: string): void => {
    if (active) b.stop();
    b.start(total, 0, { message });
    active = true;
  };
  return {
    onCompile: (e) => {
      if (!active) start(FIXED_STEPS, e.message);
      if (e.engines !== undefined) b.setTotal(FIXED_STEPS + e.engines);
      if (e.state === 'end') b.increment(1, { message: e.message });
      else b.update({ message: e.message });
    },
    task: (label, total) => start(total, label),
    tick: () => b.increment(),
    note: (message) => (active ? b.update({ message }) : undefined),
    stop: () => {
      if (active) b.stop();
      active = false;
    },
  };
}

/** The progress display for this process's stderr. */
export function createProgress(options: { quiet?: boolean }, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (options.quiet) return silent;
  return stream.isTTY ? bar(stream) : lines(stream);
}
