/**
 * examples/compile-run-save (CommonJS), run as a user runs it: `node main.js` in a child
 * process resolving `tensorrt-node` by name. The example compares its results with the
 * outputs PyTorch stored in the fixture; the perturbed-fixture case shows that comparison fails
 * when the expectation is wrong.
 */
import * as path from 'node:path';

import { makeTempDir, removeTempDir, requireBuild, runNode } from '../helpers/built-package';
import { EXAMPLES, perturbedFixture } from './example-fixtures';

const SCRIPT = path.join(EXAMPLES, 'compile-run-save', 'main.js');

describe('examples/compile-run-save', () => {
  let tmp: string | undefined;
  beforeAll(() => {
    requireBuild();
    tmp = makeTempDir('example-crs');
  });
  afterAll(() => removeTempDir(tmp));

  it('compiles MobileNetV3, matches PyTorch, saves, reloads and matches again', () => {
    const r = runNode([SCRIPT]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('compiled: 122/122 ops converted, in engine segments built by the ');
    expect(r.stdout).toContain('run: output [2, 100]');
    expect(r.stdout).toMatch(/saved mobilenet_v3_small\.trtp \(\d+ bytes\)/);
    expect(r.stdout).toContain('reloaded: max |diff| vs the first run = 0');
    expect(r.stdout).toContain('OK: matches PyTorch, before and after save/load');
  });

  it('exits 1 when the expected output is off by 0.1%', () => {
    const r = runNode([SCRIPT, perturbedFixture('mobilenet_v3_small', tmp!)]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('MISMATCH');
  });
});
