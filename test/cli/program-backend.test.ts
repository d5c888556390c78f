/**
 * `--backend` and `--rebuild` with a program file: the engines of a program compiled for
 * onnxruntime run on the reference backend when asked, rebuilt from the networks the file
 * keeps (a warning on stderr), with the same outputs; `--rebuild never` refuses instead, and
 * `--rebuild` with a model is a usage error. The real binary (dist/) in child processes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { readNpy } from '../../lib/kernels/npy';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { loadFixture } from '../helpers/fixtures';

const cli = (args: string[]) => runCli(args, {}, 120_000);
const MLP_ONNX = path.join(loadFixture('mlp').dir, 'model.onnx');

let tmp: string;
let file: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-cli-backend-'));
  file = path.join(tmp, 'p.trtp');
  const c = cli(['compile', MLP_ONNX, '--shape', 'input0=2x32', '--backend', 'onnxruntime', '-o', file, '-q']);
  expect(c.status).toBe(0);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const outputOf = (dir: string): number[] => {
  const [name] = fs.readdirSync(dir).filter((f) => f.endsWith('.npy'));
  return Array.from(readNpy(fs.readFileSync(path.join(dir, name!))).toArray() as number[]);
};

test('run --backend reference: rebuilt with a warning on stderr, the same outputs as the stored onnxruntime engine', () => {
  const stored = cli(['run', file, '--random-inputs', '3', '--output-dir', path.join(tmp, 'stored'), '-q']);
  expect(stored.status).toBe(0);
  expect(stored.stderr).not.toContain('rebuilt');
  const rebuilt = cli(['run', file, '--backend', 'reference', '--random-inputs', '3', '--output-dir', path.join(tmp, 'rebuilt'), '-q']);
  expect(rebuilt.status).toBe(0);
  expect(rebuilt.stderr).toMatch(/segment 0: the reference backend was asked for; rebuilt its onnxruntime engine for the reference backend/);
  const a = outputOf(path.join(tmp, 'stored'));
  const b = outputOf(path.join(tmp, 'rebuilt'));
  expect(b).toHaveLength(a.length);
  b.forEach((v, i) => expect(v).toBeCloseTo(a[i]!, 5));
});

test('--rebuild never refuses with E_BACKEND_UNAVAILABLE; --rebuild with a model is a usage error', () => {
  const never = cli(['run', file, '--backend', 'reference', '--rebuild', 'never', '--random-inputs', '-q']);
  expect(never.status).not.toBe(0);
  expect(never.stderr).toContain('E_BACKEND_UNAVAILABLE');
  expect(never.stderr).toContain('segment 0: the reference backend was asked for, and rebuild is "never"');
  const model = cli(['run', MLP_ONNX, '--shape', 'input0=2x32', '--rebuild', 'never', '--random-inputs', '-q']);
  expect(model.status).toBe(2);
  expect(model.stderr).toContain('--rebuild applies to program files (.trtp)');
});
