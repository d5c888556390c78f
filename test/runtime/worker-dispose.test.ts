/**
 * WorkerClient's graceful dispose (gracefulDisposeMs, used by tensor-parallel programs so that
 * their NCCL communicators are destroyed rather than left to thread teardown): the worker's
 * executor is disposed before the thread stops; one that does not finish in time is cut off.
 * The worker scripts here are written to a temporary folder (TENSORRT_NODE_WORKER_DIR) and serve
 * requests through the built dist/runtime/worker/worker-protocol.js. Needs dist/.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { DEFAULT_RUN_LIMITS } from '../../lib/engine/resource-limits';
import { WORKER_DIR_ENV, WorkerClient } from '../../lib/runtime/worker/worker-client';
import { REPO_ROOT } from '../helpers/built-package';

const protocol = path.join(REPO_ROOT, 'dist', 'runtime', 'worker', 'worker-protocol.js');
let dir: string;
let saved: string | undefined;

/** A worker whose executor's dispose() waits `ms` and then writes `marker`. */
const script = (ms: number) => `'use strict';
const fs = require('node:fs');
const { workerData } = require('node:worker_threads');
const { serveRuns } = require(${JSON.stringify(protocol)});
serveRuns({
  run: async () => [],
  preload: async () => undefined,
  dispose: () => new Promise((resolve) => setTimeout(() => { fs.writeFileSync(workerData.marker, 'disposed'); resolve(); }, ${ms})),
}, (outputs) => outputs);
`;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-dispose-'));
  fs.writeFileSync(path.join(dir, 'quick.js'), script(50));
  fs.writeFileSync(path.join(dir, 'slow.js'), script(60_000));
  saved = process.env[WORKER_DIR_ENV];
  process.env[WORKER_DIR_ENV] = dir;
});

afterAll(() => {
  if (saved === undefined) delete process.env[WORKER_DIR_ENV];
  else process.env[WORKER_DIR_ENV] = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

function client(scriptName: string, marker: string, gracefulDisposeMs?: number): WorkerClient<unknown> {
  return new WorkerClient<unknown>({
    script: scriptName,
    what: 'test worker',
    workerData: () => ({ marker }),
    decode: (x) => x,
    inputs: { specs: [], symbolRanges: new Map() } as never,
    limits: DEFAULT_RUN_LIMITS,
    disposedMessage: 'disposed',
    ...(gracefulDisposeMs !== undefined && { gracefulDisposeMs }),
  });
}

test('with gracefulDisposeMs, dispose() waits for the executor to be disposed', async () => {
  const marker = path.join(dir, 'graceful');
  const c = client('quick.js', marker, 5_000);
  await c.start();
  await c.dispose();
  expect(fs.readFileSync(marker, 'utf8')).toBe('disposed');
});

test('without it, the thread is stopped at once and the executor is never disposed', async () => {
  const marker = path.join(dir, 'abrupt');
  const c = client('quick.js', marker);
  await c.start();
  await c.dispose();
  await new Promise((r) => setTimeout(r, 200));
  expect(fs.existsSync(marker)).toBe(false);
});

test('an executor that does not finish in time is cut off after gracefulDisposeMs', async () => {
  const marker = path.join(dir, 'slow');
  const c = client('slow.js', marker, 300);
  await c.start();
  const t0 = Date.now();
  await c.dispose();
  const waited = Date.now() - t0;
  expect(waited).toBeGreaterThanOrEqual(250);
  expect(waited).toBeLessThan(10_000);
  expect(fs.existsSync(marker)).toBe(false);
});
