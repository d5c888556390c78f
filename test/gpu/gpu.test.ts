/**
 * GPU checks (`npm run test:gpu`). Each check is a plain Node script in test/gpu/ so that it
 * also runs on the GPU machine without jest; here each runs in a child process.
 *
 * Whether a GPU is here is decided when this file loads (test/helpers/gpu-presence.ts):
 * without one, every check is registered as skipped with the reason in its title, so the
 * summary says "skipped", never "passed". With a GPU, or with a CUDA driver that is present
 * but fails, the checks run, and a check that finds no usable device fails.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { gpuPresence } from '../helpers/gpu-presence';

const checks = fs.readdirSync(__dirname).filter((f) => f.endsWith('.check.js'));
const presence = gpuPresence();

if (presence.kind === 'absent') {
  describe.skip(`GPU checks (skipped: ${presence.reason})`, () => {
    test.each(checks)(`%s (skipped: ${presence.reason})`, () => undefined);
  });
} else {
  describe('GPU checks', () => {
    if (presence.kind === 'broken') {
      test('the CUDA driver loads and reports a device', () => {
        throw new Error(`GPU checks cannot run: ${presence.reason}`);
      });
    }

    test.each(checks)('%s', (check) => {
      const result = spawnSync(process.execPath, [path.join(__dirname, check)], { encoding: 'utf8', timeout: 300_000 });
      // Exit 3 is the check's "no usable CUDA device": a failure once a GPU was found here.
      expect({ status: result.status, signal: result.signal, stderr: result.stderr, stdout: result.status === 0 ? '' : result.stdout }).toEqual({
        status: 0,
        signal: null,
        stderr: '',
        stdout: '',
      });
    });
  });
}
