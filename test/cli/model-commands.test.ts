/**
 * The main job from the command line: `tensorrt-node run` compiles a fixture model for the
 * shapes of its .npy inputs and writes outputs that match PyTorch's; `compile --dry-run`
 * prints the support report; failures exit 1 with the error code.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { readNpy, writeNpy } from '../../lib/kernels/npy';
import { parseShapeOption } from '../../lib/cli/usage';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';

const run = (args: string[]) => runCli(args, {}, 120_000);

let tmp: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-cli-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('run writes outputs that match PyTorch', () => {
  const fixture = loadFixture('squeezenet1_1');
  const input = path.join(tmp, 'x.npy');
  fs.writeFileSync(input, writeNpy(fixture.cases[0]!.inputs[0]!));
  const r = run(['run', path.join(fixture.dir, 'model.onnx'), '--input', `input0=${input}`, '--output-dir', path.join(tmp, 'out'), '-q']);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/output0: float32\[1, 10\] → .*output0\.npy/);
  // onnxruntime-node is a devDependency here, so `auto` takes the onnxruntime backend.
  expect(r.stdout).toMatch(/ran in [\d.]+ ms on the onnxruntime backend; \d+\/\d+ ops converted, in 1 engine segment \(onnxruntime\)\n/);
  expectClose(readNpy(fs.readFileSync(path.join(tmp, 'out', 'output0.npy'))), fixture.cases[0]!.outputs[0]!, FP32);
});

test('compile --dry-run prints the support report', () => {
  const r = run(['compile', path.join(loadFixture('mlp').dir, 'model.pt2'), '--shape', 'x=4x32', '--dry-run', '--torch-executed-ops', 'aten.relu.default']);
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('forced to a fallback segment by torchExecutedOps');
  // A dry run chooses no backend, so the counts name none.
  expect(r.stdout.split('\n')[0]).toMatch(/^\d+\/\d+ ops converted: no engine segment, 1 fallback segment$/);
});

test('errors exit 1 with their code', () => {
  const missing = run(['run', path.join(tmp, 'nope.onnx')]);
  expect(missing.status).toBe(1);
  expect(missing.stderr).toMatch(/^tensorrt-node: \[E_BAD_MODEL\] cannot read ONNX model .*nope\.onnx/);
  const dynamic = run(['compile', path.join(loadFixture('mlp').dir, 'model.onnx')]);
  expect(dynamic.status).toBe(2);
  expect(dynamic.stderr).toContain('[E_INVALID_ARGUMENT] input "input0" has dynamic dims [batch, 32]');
});

test('shape options parse and refuse junk', () => {
  expect(parseShapeOption('input0=1x3x224x224')).toEqual(['input0', { shape: [1, 3, 224, 224] }]);
  expect(parseShapeOption('t=scalar')).toEqual(['t', { shape: [] }]);
  expect(parseShapeOption('x=1x8:4x8:16x8')).toEqual(['x', { min: [1, 8], opt: [4, 8], max: [16, 8] }]);
  expect(parseShapeOption('x=1x8:16x8')).toEqual(['x', { min: [1, 8], max: [16, 8] }]);
  expect(() => parseShapeOption('input0=1,3')).toThrow(/--shape input0=1,3: dim "1,3" is not a positive integer/);
});
