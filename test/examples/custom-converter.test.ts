/**
 * examples/custom-converter: a user-registered dynamic-batch convolution converter takes
 * MobileNetV3 from 6 to 122 ops in TensorRT segments (a narrower one's checkArgs refusal
 * shows in the report), and the program compiled once for
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
      'built-in converters only: 6/122 ops in TensorRT segments',
      '  first convolution: the 1 converter(s) for aten.convolution.default support only static shapes',
      'with a groups = 1 converter: 105/122 ops in TensorRT segments',
      '  _features_features.1_block_block.0_block.0.0_Conv: example: 2-D convolution, run-time batch, groups = 1: grouped convolutions are not handled',
      'with the custom converter, batch 1..8: 122/122 ops in TensorRT segments',
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
