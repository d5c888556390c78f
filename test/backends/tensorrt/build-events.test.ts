/**
 * TensorRT's log and progress events as the addon delivers them (lib/backends/tensorrt/
 * build-events.ts): severities → log levels, phase step counts carried from phaseStart to
 * its steps and end, the answer to a step (false once the signal is aborted or the callback
 * threw). The addon end to end: test/native/trt/backend.test.ts.
 */
import type { BuildPhaseEvent } from '../../../lib/engine/build-context';
import { buildEventHandler, logLevelOf, MAX_SEVERITY, tensorrtLogLine } from '../../../lib/backends/tensorrt/build-events';
import type { LogLevel } from '../../../lib/logger';

function setup(signal?: AbortSignal, progress?: (e: BuildPhaseEvent) => void) {
  const logs: Array<[LogLevel, string]> = [];
  const phases: BuildPhaseEvent[] = [];
  const handler = buildEventHandler((level, message) => logs.push([level, message]), {
    progress: progress ?? ((e) => phases.push(e)),
    ...(signal === undefined ? {} : { signal }),
  });
  return { logs, phases, handler };
}

test('ILogger severities: errors and warnings are warn, info and verbose are debug; verbose never crosses threads', () => {
  expect([0, 1, 2, 3, 4].map(logLevelOf)).toEqual(['warn', 'warn', 'warn', 'debug', 'debug']);
  expect(MAX_SEVERITY).toBe(3);
  const { logs, handler } = setup();
  expect(handler.onEvent('log', 1, 'Error Code 4: shape mismatch', '', 0)).toBe(true);
  expect(logs).toEqual([['warn', 'TensorRT error: Error Code 4: shape mismatch']]);
  expect(tensorrtLogLine(0, 'x')).toBe('TensorRT internal error: x');
});

test('a phase keeps its step count and parent from phaseStart; steps count from 1', () => {
  const { phases, handler, logs } = setup();
  expect(handler.onEvent('progress', 0, 'Tactic selection', 'Building engine', 3)).toBe(true);
  expect(handler.onEvent('progress', 1, 'Tactic selection', '', 0)).toBe(true);
  expect(handler.onEvent('progress', 2, 'Tactic selection', '', 0)).toBe(true);
  expect(phases).toEqual([
    { state: 'start', phase: 'Tactic selection', parent: 'Building engine', step: 0, steps: 3 },
    { state: 'step', phase: 'Tactic selection', parent: 'Building engine', step: 1, steps: 3 },
    { state: 'end', phase: 'Tactic selection', parent: 'Building engine', step: 3, steps: 3 },
  ]);
  expect(logs).toEqual([
    ['info', 'TensorRT: Tactic selection (in Building engine) started, 3 steps'],
    ['debug', 'TensorRT: Tactic selection step 1/3 done'],
    ['debug', 'TensorRT: Tactic selection finished'],
  ]);
});

test('a step answers false once the signal is aborted', () => {
  const controller = new AbortController();
  const { handler } = setup(controller.signal);
  handler.onEvent('progress', 0, 'p', '', 2);
  expect(handler.onEvent('progress', 1, 'p', '', 0)).toBe(true);
  controller.abort();
  expect(handler.onEvent('progress', 1, 'p', '', 1)).toBe(false);
  expect(handler.failure).toBeNull();
});

test('a throwing progress callback stops the build and is kept for build() to rethrow; later steps answer false', () => {
  const boom = new Error('boom');
  const { handler } = setup(undefined, () => {
    throw boom;
  });
  expect(handler.onEvent('progress', 0, 'p', '', 2)).toBe(false);
  expect(handler.failure).toEqual({ error: boom });
  expect(handler.onEvent('progress', 1, 'p', '', 0)).toBe(false);
  // Log lines still reach the logger.
  expect(handler.onEvent('log', 2, 'w', '', 0)).toBe(true);
});
