/**
 * The CLI's progress display of engine build phases (lib/cli/progress.ts): lines with
 * `--progress` when stderr is not a terminal, throttled per LINE_PHASE_MS; none without the
 * flag; the throttle itself (phase starts always pass). The clock is the test's.
 */
import type { BuildPhaseEvent } from '../../lib/engine/build-context';
import { createProgress, LINE_PHASE_MS, phaseThrottle } from '../../lib/cli/progress';
import { describePhase, type CompileProgressEvent } from '../../lib/compile/progress';

function phase(p: BuildPhaseEvent): CompileProgressEvent {
  return { stage: 'build', state: 'phase', index: 0, total: 1, phase: p, elapsedMs: 0, message: describePhase('engine 1/1', p) };
}

/** A phase of `steps` steps, one step every `every` ms of the fake clock. */
function run(options: { progress?: boolean }, steps: number, every: number): string[] {
  let t = 0;
  const out: string[] = [];
  const stream = { isTTY: false, write: (s: string) => out.push(s) } as unknown as NodeJS.WriteStream;
  const p = createProgress(options, stream, () => t);
  p.onCompile({ stage: 'build', state: 'start', index: 0, total: 1, elapsedMs: 0, message: 'building engine 1/1 (segment 0, 3 ops)' });
  p.onCompile(phase({ state: 'start', phase: 'Building engine', step: 0, steps: 1 }));
  p.onCompile(phase({ state: 'start', phase: 'Tactic selection', parent: 'Building engine', step: 0, steps }));
  for (let i = 1; i <= steps; i++) {
    t += every;
    p.onCompile(phase({ state: 'step', phase: 'Tactic selection', parent: 'Building engine', step: i, steps }));
  }
  p.onCompile(phase({ state: 'end', phase: 'Tactic selection', parent: 'Building engine', step: steps, steps }));
  return out.map((l) => l.replace(/^tensorrt-node: \[[\d.]+s\] /, '').trimEnd());
}

test('--progress: each phase start, then at most one step line per second', () => {
  // 50 steps, one each 100 ms: 5 s in all, so five step lines (every tenth step).
  expect(run({ progress: true }, 50, 100)).toEqual([
    'building engine 1/1 (segment 0, 3 ops)',
    'engine 1/1: Building engine started, 1 step(s)',
    'engine 1/1: Tactic selection (in Building engine) started, 50 step(s)',
    'engine 1/1: Tactic selection (in Building engine) 10/50',
    'engine 1/1: Tactic selection (in Building engine) 20/50',
    'engine 1/1: Tactic selection (in Building engine) 30/50',
    'engine 1/1: Tactic selection (in Building engine) 40/50',
    'engine 1/1: Tactic selection (in Building engine) 50/50',
  ]);
  expect(LINE_PHASE_MS).toBe(1000);
});

test('without --progress, a stderr that is not a terminal gets the stage lines only', () => {
  expect(run({}, 50, 100)).toEqual(['building engine 1/1 (segment 0, 3 ops)']);
});

test('the throttle passes phase starts always, and other events once per interval', () => {
  let t = 0;
  const show = phaseThrottle(100, () => t);
  const step = phase({ state: 'step', phase: 'p', step: 1, steps: 9 });
  const start = phase({ state: 'start', phase: 'q', step: 0, steps: 9 });
  const seen = [show(step), show(step), show(start), show(step)];
  t = 99;
  seen.push(show(step));
  t = 100;
  seen.push(show(step), show(step));
  expect(seen).toEqual([true, false, true, false, false, true, false]);
});
