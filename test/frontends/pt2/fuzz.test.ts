/**
 * Random mutations of a real .pt2 archive: loading (and, when that succeeds, running) ends in
 * success or a typed TensorRTNodeError, never another exception, a crash or a hang.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { TensorRTNodeError } from '../../../lib/errors';
import { loadPt2 } from '../../../lib/frontends/pt2';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { FIXTURES } from '../../helpers/fixtures';
import { Random } from '../../helpers/random';

const original = fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2'));
const input = Tensor.from('float32', [2, 32], new Array(64).fill(0.25));
// Offsets of model.json's text inside the (stored, uncompressed) zip: mutating there
// exercises the JSON reader rather than only the zip reader.
const jsonStart = original.indexOf(Buffer.from('{"graph_module"'));

function mutate(rng: Random): Uint8Array {
  const bytes = Uint8Array.from(original);
  const kind = rng.int(0, 3);
  if (kind === 0) {
    for (let i = rng.int(1, 8); i > 0; i--) bytes[rng.int(0, bytes.length - 1)] = rng.int(0, 255);
    return bytes;
  }
  if (kind === 1) return bytes.subarray(0, rng.int(0, bytes.length - 1));
  // Inside model.json: swap in JSON-significant characters or digits.
  const base = jsonStart >= 0 ? jsonStart : 0;
  for (let i = rng.int(1, 4); i > 0; i--) {
    const at = base + rng.int(0, Math.min(20000, bytes.length - base - 1));
    bytes[at] = '{}[]":,0123456789-'.charCodeAt(rng.int(0, 17));
  }
  return bytes;
}

test('2000 mutations of mlp/model.pt2 end in success or a typed error', () => {
  expect(jsonStart).toBeGreaterThan(0);
  const rng = new Random(11);
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < 2000; i++) {
    let outcome = 'ran';
    try {
      const graph = loadPt2(mutate(rng));
      interpret(graph, [input]);
    } catch (error) {
      if (!(error instanceof TensorRTNodeError)) {
        throw new Error(`mutation ${i} raised a non-typed error: ${(error as Error)?.stack ?? String(error)}`);
      }
      outcome = error.code;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  expect(outcomes.E_BAD_MODEL ?? 0).toBeGreaterThan(200);
}, 180_000);
