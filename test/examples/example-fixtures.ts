/**
 * What the example smoke tests share: where the examples are, and a copy of a fixture whose
 * expected output is perturbed (so a test can show that an example's own check can fail).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from '../helpers/built-package';
import { FIXTURES } from '../helpers/fixtures';

export const EXAMPLES = path.join(REPO_ROOT, 'examples');

/**
 * Copies fixture `name` into `dir` with every value of output0.bin scaled by 1.001: ten
 * times the float32 test tolerance (rtol 1e-4), so a correct model no longer matches it.
 */
export function perturbedFixture(name: string, dir: string): string {
  const target = path.join(dir, name);
  fs.cpSync(path.join(FIXTURES, name), target, { recursive: true });
  const file = path.join(target, 'output0.bin');
  const bytes = fs.readFileSync(file);
  const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  fs.writeFileSync(file, new Uint8Array(values.map((v) => v * 1.001).buffer));
  return target;
}
