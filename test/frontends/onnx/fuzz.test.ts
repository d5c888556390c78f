/**
 * Random mutations of a real ONNX file: loading (and, when that succeeds, running) must end
 * in success or a typed TensorRTNodeError, never another exception, a crash or a hang.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { TensorRTNodeError } from '../../../lib/errors';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { FIXTURES } from '../../helpers/fixtures';
import { Random } from '../../helpers/random';

const original = fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.onnx'));
const input = Tensor.from('float32', [2, 32], new Array(64).fill(0.25));

function mutate(rng: Random): Uint8Array {
  const bytes = Uint8Array.from(original);
  switch (rng.int(0, 3)) {
    case 0: // flip a few bytes
      for (let i = rng.int(1, 8); i > 0; i--) bytes[rng.int(0, bytes.length - 1)] = rng.int(0, 255);
      return bytes;
    case 1: // truncate
      return bytes.subarray(0, rng.int(0, bytes.length - 1));
    case 2: {
      // splice in a run of random bytes
      const at = rng.int(0, bytes.length);
      const junk = Uint8Array.from({ length: rng.int(1, 32) }, () => rng.int(0, 255));
      return Uint8Array.from([...bytes.subarray(0, at), ...junk, ...bytes.subarray(at)]);
    }
    default: {
      // corrupt the protobuf structure: bytes near the start hold tags and lengths
      const at = rng.int(0, Math.min(400, bytes.length - 1));
      bytes[at] = [0x00, 0x7f, 0x80, 0xff, 0x08, 0x12][rng.int(0, 5)]!;
      return bytes;
    }
  }
}

test('3000 mutations of mlp/model.onnx end in success or a typed error', () => {
  const rng = new Random(7);
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < 3000; i++) {
    const bytes = mutate(rng);
    let outcome = 'loaded';
    try {
      const graph = loadOnnx(bytes);
      interpret(graph, graph.inputs.length === 1 && graph.inputs[0]!.tensorType.dtype === 'float32' ? [input] : []);
      outcome = 'ran';
    } catch (error) {
      if (!(error instanceof TensorRTNodeError)) {
        throw new Error(`mutation ${i} raised a non-typed error: ${(error as Error)?.stack ?? String(error)}`);
      }
      outcome = error.code;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  // Most mutations must be caught as bad models; some flips land in weights and still run.
  expect(outcomes.E_BAD_MODEL ?? 0).toBeGreaterThan(300);
  expect(Object.keys(outcomes).every((k) => k === 'ran' || k.startsWith('E_'))).toBe(true);
}, 120_000);
