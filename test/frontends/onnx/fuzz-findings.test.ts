/**
 * The fuzzer's ONNX finding (fuzz/findings/README.md, onnx-bb2f0c771f5d): an initializer whose
 * dims ask for 2^31 float64 elements and whose data holds none was allocated before being
 * checked ("Array buffer allocation failed"); it is E_BAD_MODEL naming the initializer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { loadOnnx } from '../../../lib/frontends/onnx';
import { FIXTURES } from '../../helpers/fixtures';
import { thrownError } from '../../helpers/errors';

test('onnx-bb2f0c771f5d: a 2^31-element initializer without data is refused before allocating', () => {
  const bytes = new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'fuzz-findings', 'onnx-bb2f0c771f5d')));
  const e = thrownError(() => loadOnnx(bytes));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toContain('initializer "w": double_data holds 0 values, its shape [2147483648] needs 4294967296');
});
