/**
 * The CLI writing to a reader that has gone (`tensorrt-node compile … | head -1`): output is
 * dropped, the command finishes its work and exits with its own code, with no unhandled EPIPE
 * stack trace. The child's stdout (and, in the second case, stderr) is a pipe closed before
 * anything is written.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { DIST_CLI } from '../helpers/built-package';

const MODEL = path.join(__dirname, '..', 'fixtures', 'mlp', 'model.onnx');

/** Runs the CLI with its stdout (and `stderr` too when asked) closed at once; resolves with the exit code and whatever stderr said. */
function runClosed(args: string[], closeStderr: boolean): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DIST_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    if (closeStderr) child.stderr.destroy();
    else child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

let dir: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-pipe-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test.each([
  ['stdout closed', false],
  ['stdout and stderr closed', true],
])('compile with %s still writes its program and exits 0', async (_what, closeStderr) => {
  const out = path.join(dir, `mlp-${String(closeStderr)}.trtp`);
  const r = await runClosed(['compile', MODEL, '--shape', 'input0=2x32', '--backend', 'reference', '-o', out], closeStderr);
  expect(r.stderr).not.toContain('EPIPE');
  expect(r.code).toBe(0);
  expect(fs.statSync(out).size).toBeGreaterThan(0);
}, 60000);

test('a failing command keeps its own exit code', async () => {
  const r = await runClosed(['compile', MODEL, '-o', path.join(dir, 'never.trtp')], true);
  // No --shape for a dynamic input: the usage error's code, not a crash.
  expect(r.code).toBe(2);
});
