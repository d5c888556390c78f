/**
 * examples/typescript-esm, as a user outside this repository builds and runs it: the repo's
 * own TypeScript compiles main.mts into a temporary project whose node_modules/tensorrt-node
 * links to this package (as `npm install` would place it), then `node main.mjs FIXTURE_DIR`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { makeTempDir, REPO_ROOT, removeTempDir, requireBuild, runNode } from '../helpers/built-package';
import { FIXTURES } from '../helpers/fixtures';
import { EXAMPLES, perturbedFixture } from './example-fixtures';

const TSC = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

describe('examples/typescript-esm', () => {
  let tmp: string | undefined;
  let script = '';
  beforeAll(() => {
    requireBuild();
    tmp = makeTempDir('example-ts');
    fs.mkdirSync(path.join(tmp, 'node_modules'));
    fs.symlinkSync(REPO_ROOT, path.join(tmp, 'node_modules', 'tensorrt-node'), 'dir');
    const build = runNode([TSC, '-p', path.join(EXAMPLES, 'typescript-esm'), '--outDir', tmp], {}, 60_000);
    if (build.status !== 0) throw new Error(`tsc failed:\n${build.stdout}${build.stderr}`);
    script = path.join(tmp, 'main.mjs');
  }, 60_000);
  afterAll(() => removeTempDir(tmp));

  it('type-checks, compiles the dynamic-batch MLP, and matches PyTorch before and after reload', () => {
    const r = runNode([script, path.join(FIXTURES, 'mlp')], {}, 60_000);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('x: float32[s77, 32]');
    expect(r.stdout).toContain('compiled: matches PyTorch; reloaded from mlp.trtp: matches PyTorch');
  });

  it('exits 1 when the expected output is off by 0.1%', () => {
    const r = runNode([script, perturbedFixture('mlp', tmp!)], {}, 60_000);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('DOES NOT match');
  });
});
