/**
 * examples/custom-converter: a user-registered dynamic-batch convolution converter with a
 * higher priority takes MobileNetV3's convolutions over from the built-in one (a narrower
 * one's refused grouped convolutions go to the built-in converter), and the program compiled once for
 * batch 1..8 matches PyTorch at batch 2 and 1 (checked by the example; the perturbed fixture
 * shows that check can fail).
 */
import * as path from 'node:path';

import { makeTempDir, removeTempDir, requireBuild, runNode } from '../helpers/built-package';
import { EXAMPLES, perturbedFixture } from './example-fixtures';

const SCRIPT = path.join(EXAMPLES, 'custom-converter', 'main.js');

describe('examples/custom-converter', () => {
  let tmp: string | undefined;
  beforeAll(() => {
    requireBuild();
    tmp = makeTempDir('example-conv');
  });
  afterAll(() => removeTempDir(tmp));

  it('reports the custom converter and matches PyTorch at two batch sizes', () => {
    const r = runNode([SCRIPT]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').slice(0, 7)).toEqual([
      'built-in converters only: 122/122 ops converted',
      '  first convolution converted by: aten.convolution.default (dynamic)',
      'with a groups = 1 converter: 41/52 convolutions by it',
      '  _features_features.1_block_block.0_block.0.0_Conv (grouped): aten.convolution.default (dynamic)',
      'with the custom converter, batch 1..8: 122/122 ops converted',
      '  first convolution converted by: example: 2-D convolution, run-time batch',
      'batch 2 and batch 1 match PyTorch (one compiled program)',
    ]);
  });

  it('exits 1 when the expected output is off by 0.1%', () => {
    const r = runNode([SCRIPT, perturbedFixture('mobilenet_v3_small', tmp!)]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('DO NOT match');
  });
});
