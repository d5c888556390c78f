/**
 * `tensorrt-node generate`, run as the built command in a child process on the tiny KV-cache
 * LM (test/helpers/tiny-kv-lm.ts) written to a file: greedy tokens as the onnxruntime oracle
 * gives them (test/generate/lm-oracle.ts), one line per step; --json lines; a program saved
 * with -o and generated from; --sizes; sampling flags reproducible by --seed; --stop-ids; the refusals
 * (a model without a KV cache: exit 1 naming what is missing; flags that do not fit: exit 2).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { parseIds } from '../../lib/cli/generate-command';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { tinyKvLm, tinyLmWithoutCache } from '../helpers/tiny-kv-lm';
import { oracleGreedy } from '../generate/lm-oracle';

const run = (args: string[]) => runCli(args, {}, 120_000);
const lm = tinyKvLm();
const PROMPTS = [
  [3, 1, 4, 1, 5],
  [9, 2],
];

let tmp: string;
let model: string;
let oracle: number[][];
beforeAll(async () => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-generate-'));
  model = path.join(tmp, 'lm.onnx');
  fs.writeFileSync(model, lm.model);
  oracle = (await Promise.all(PROMPTS.map((p) => oracleGreedy(lm, p, 8)))).map((o) => o.tokens);
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test.each(['onnxruntime', 'reference'])('a model on the %s backend: the greedy tokens, one line per step, and a summary on stderr', (backend) => {
  const r = run(['generate', model, '--prompt-ids', PROMPTS[0]!.join(','), '--max-new-tokens', '8', '--backend', backend]);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(oracle[0]!.map((t) => `${t}\n`).join(''));
  expect(r.stderr).toMatch(new RegExp(`tensorrt-node: 8 tokens for 1 prompt in 8 steps, [\\d.]+ ms \\([\\d.]+ ms a step\\) on the ${backend} backend; finished: length\\n$`));
});

test('a batch with --json: a line per step, then the whole result', () => {
  const r = run(['generate', model, ...PROMPTS.flatMap((p) => ['--prompt-ids', p.join(',')]), '--max-new-tokens', '8', '--json', '-q']);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.slice(0, 8)).toEqual(oracle[0]!.map((_, i) => ({ step: i, tokens: [oracle[0]![i], oracle[1]![i]] })));
  expect(lines[8]).toEqual({ tokens: oracle, finishReasons: ['length', 'length'], steps: 8 });
});

test('-o saves a program compiled for generation; the program file generates the same tokens, and refuses a request beyond its sizes', () => {
  const file = path.join(tmp, 'lm.trtp');
  const saved = run(['generate', model, '-o', file, '--max-length', '12', '--max-batch', '2']);
  expect(saved.status).toBe(0);
  expect(saved.stdout).toBe('');
  expect(saved.stderr).toContain(`wrote ${file}; generate with it`);
  const r = run(['generate', file, '--prompt-ids', PROMPTS[1]!.join(','), '--max-new-tokens', '8', '-q', '--backend', 'onnxruntime']);
  expect(r.status).toBe(0);
  expect(r.stdout.trim().split('\n').map(Number)).toEqual(oracle[1]);
  const long = run(['generate', file, '--prompt-ids', PROMPTS[0]!.join(','), '--max-new-tokens', '9', '-q']);
  expect(long.status).toBe(2);
  expect(long.stderr).toContain('[E_INVALID_ARGUMENT] generate(): a prompt of 5 tokens and --max-new-tokens 9 reach 13 positions in the last run; this program takes at most 12');
  expect(long.stderr).toContain('ask for at most 8 new tokens');
  const sized = run(['generate', file, '--prompt-ids', '1', '--max-length', '40']);
  expect(sized.status).toBe(2);
  expect(sized.stderr).toContain('--max-length applies when compiling a model');
});

test('--sizes bucketed: the same tokens from padded runs; a model without position_ids refuses it (exit 2)', () => {
  const r = run(['generate', model, ...PROMPTS.flatMap((p) => ['--prompt-ids', p.join(',')]), '--max-new-tokens', '8', '--sizes', 'bucketed', '--json', '-q']);
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ tokens: oracle, finishReasons: ['length', 'length'], steps: 8 });
  const counted = path.join(tmp, 'counted.onnx');
  fs.writeFileSync(counted, tinyKvLm({ positionIds: false }).model);
  const refused = run(['generate', counted, '--prompt-ids', '1,2', '--sizes', 'bucketed', '-q']);
  expect(refused.status).toBe(2);
  expect(refused.stderr).toContain("createGenerator(): --sizes bucketed needs a model that takes position_ids");
  const unknown = run(['generate', model, '--prompt-ids', '1', '--sizes', 'padded']);
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toContain("argument 'padded' is invalid. Allowed choices are auto, exact, bucketed.");
});

test('sampling flags: --seed reproduces the tokens; --stop-ids ends early', () => {
  const args = ['generate', model, '--prompt-ids', '3,1,4', '--max-new-tokens', '10', '--temperature', '1.3', '--top-k', '4', '--top-p', '0.9', '-q'];
  const a = run([...args, '--seed', '42']);
  const b = run([...args, '--seed', '42']);
  expect(a.status).toBe(0);
  expect(a.stdout.trim().split('\n')).toHaveLength(10);
  expect(b.stdout).toBe(a.stdout);
  const stop = oracle[0]![2]!;
  const stopped = run(['generate', model, '--prompt-ids', PROMPTS[0]!.join(','), '--max-new-tokens', '8', '--stop-ids', String(stop), '--json', '-q']);
  expect(stopped.status).toBe(0);
  const last = JSON.parse(stopped.stdout.trim().split('\n').pop()!);
  const at = oracle[0]!.indexOf(stop);
  expect(last).toEqual({ tokens: [oracle[0]!.slice(0, at + 1)], finishReasons: ['stop'], steps: at + 1 });
});

test('refusals: a model without a KV cache exits 1 naming what is missing; bad flags exit 2', () => {
  const plain = path.join(tmp, 'plain.onnx');
  fs.writeFileSync(plain, tinyLmWithoutCache());
  const r = run(['generate', plain, '--prompt-ids', '1,2']);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^tensorrt-node: \[E_INVALID_ARGUMENT\] .*plain\.onnx is not a causal LM with a KV cache in the layout generate\(\) takes: no input attention_mask; no past_key_values\.N\.key/);
  const noPrompt = run(['generate', model]);
  expect(noPrompt.status).toBe(2);
  expect(noPrompt.stderr).toContain('give a prompt: --prompt-ids 1,2,3');
  const greedyTopK = run(['generate', model, '--prompt-ids', '1', '--top-k', '3', '--temperature', '0', '-q']);
  expect(greedyTopK.status).toBe(2);
  expect(greedyTopK.stderr).toContain('generate() options: --top-k applies when sampling, and --temperature 0 is greedy');
  const badId = run(['generate', model, '--prompt-ids', '1,,2']);
  expect(badId.status).toBe(2);
  expect(badId.stderr).toContain('--prompt-ids 1,,2: an empty entry');
});

test('parseIds reads comma-separated ids and refuses others', () => {
  expect(parseIds('--prompt-ids', '15496, 11,995')).toEqual([15496, 11, 995]);
  expect(() => parseIds('--stop-ids', '1,-2')).toThrow('--stop-ids -2: expected an integer >= 0');
});
