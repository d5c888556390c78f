/**
 * Programs nobody disposes, in child processes of the built
 * package: a forgotten Program or TensorParallelProgram releases its worker thread once it is
 * garbage-collected (bench/forgotten-programs.js counts /proc/self/task), and a refused run
 * (a detached input) leaves no worker referenced, so the process exits by itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DIST_INDEX, REPO_ROOT, requireBuild, runNode } from '../helpers/built-package';

const linux = fs.existsSync('/proc/self/task');
const SCRIPT = path.join(REPO_ROOT, 'bench', 'forgotten-programs.js');

beforeAll(requireBuild);

(linux ? test.each : test.skip.each)([
  ['program', 8],
  ['tensor-parallel', 3],
])('forgotten %s objects release their worker threads after GC', (kind, n) => {
  const r = runNode(['--expose-gc', SCRIPT, String(n), kind], {}, 120_000);
  expect(r.stderr).toBe('');
  const result = JSON.parse(r.stdout) as { baseline: number; peak: number; after: number };
  // Each run started a worker (the peak shows them), and every one is gone after GC.
  expect(result.peak).toBeGreaterThanOrEqual(result.baseline + n);
  expect(result.after).toBeLessThanOrEqual(result.baseline);
  expect(r.status).toBe(0);
}, 130_000);

test('a run refused for a detached input leaves nothing that keeps the process alive', () => {
  const script = `
    const { compile, Tensor } = require(${JSON.stringify(DIST_INDEX)});
    (async () => {
      const p = await compile(${JSON.stringify(path.join(REPO_ROOT, 'test', 'fixtures', 'mlp', 'model.onnx'))}, { backend: 'reference', inputs: [{ shape: [1, 32] }] });
      await p.run([new Tensor('float32', [1, 32])]);
      const x = new Tensor('float32', [1, 32]);
      structuredClone(x.data.buffer, { transfer: [x.data.buffer] });
      try { await p.run([x]); } catch (e) { console.log(e.code); }
      // No dispose(): the idle worker must not hold the process open.
    })();`;
  const r = runNode(['-e', script], {}, 60_000);
  expect(r.signal).toBeNull();
  expect(r.stdout.trim()).toBe('E_BAD_INPUT');
  expect(r.status).toBe(0);
}, 70_000);
