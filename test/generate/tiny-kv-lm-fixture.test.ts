/**
 * test/fixtures/tiny_kv_lm: the tiny KV-cache LM of test/helpers/tiny-kv-lm.ts written to a
 * file with the onnxruntime oracle's greedy tokens (generation.json, not meta.json: it is no
 * PyTorch fixture of inputs and outputs, which the fixture loaders read), for the GPU check of generation
 * (test/gpu/generate.check.js), which runs where neither the TypeScript helpers nor
 * onnxruntime's reference loop are at hand. This test keeps the file and the tokens what the
 * helper and the oracle give; `UPDATE_FIXTURES=1` rewrites them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { tinyKvLm } from '../helpers/tiny-kv-lm';
import { oracleGreedy } from './lm-oracle';

const DIR = path.join(__dirname, '..', 'fixtures', 'tiny_kv_lm');
const PROMPTS = [
  [3, 1, 4, 1, 5],
  [9, 2],
];
const STEPS = 16;

test('the fixture is the helper\'s model with the oracle\'s greedy tokens', async () => {
  const lm = tinyKvLm();
  const tokens = (await Promise.all(PROMPTS.map((p) => oracleGreedy(lm, p, STEPS)))).map((o) => o.tokens);
  const meta = {
    name: 'tiny_kv_lm',
    note: 'test/helpers/tiny-kv-lm.ts (GPT-2-shaped, 2 layers, 2 heads of 4, vocab 17, Optimum past layout); tokens: greedy, each prompt alone, by onnxruntime-node fed by test/generate/lm-oracle.ts',
    prompts: PROMPTS,
    steps: STEPS,
    tokens,
  };
  if (process.env.UPDATE_FIXTURES === '1') {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(path.join(DIR, 'model.onnx'), lm.model);
    fs.writeFileSync(path.join(DIR, 'generation.json'), `${JSON.stringify(meta, null, 2)}\n`);
  }
  const stale = 'test/fixtures/tiny_kv_lm is stale: rerun this test with UPDATE_FIXTURES=1';
  expect({ same: Buffer.compare(fs.readFileSync(path.join(DIR, 'model.onnx')), Buffer.from(lm.model)) === 0, stale }).toEqual({ same: true, stale });
  expect(JSON.parse(fs.readFileSync(path.join(DIR, 'generation.json'), 'utf8'))).toEqual(meta);
}, 60_000);
