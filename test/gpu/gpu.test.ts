/**
 * GPU checks (`npm run test:gpu`). Each check is a plain Node script in test/gpu/ so that it
 * also runs on the GPU machine without jest; here each runs in a child process. Without a
 * CUDA device every check reports "skipped" and the test passes with that reason printed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const checks = fs.readdirSync(__dirname).filter((f) => f.endsWith('.check.js'));

describe('GPU checks', () => {
  it.each(checks)('%s', (check) => {
    if (!fs.existsSync(path.join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    const result = spawnSync(process.execPath, [path.join(__dirname, check)], { encoding: 'utf8', timeout: 300_000 });
    if (result.status === 3) {
      const why = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as { code?: string };
      process.stdout.write(`skipped ${check}: no CUDA device here (${why.code ?? 'unknown'})\n`);
      return;
    }
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
