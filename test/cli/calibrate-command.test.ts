/**
 * `tensorrt-node calibrate`, run in this process through the command line's `main()`: each
 * layout of --data (a folder of .npz files, of .npy files, of batch folders; one .npz file)
 * gives the Q/DQ model calibrate() gives on the same batches, written to -o, with the report
 * printed (a table, or JSON); layouts that do not fit the model and bad flags are usage errors
 * (exit 2) naming the flag; a model error exits 1 with its code.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { main } from '../../lib/cli';
import { writeNpy } from '../../lib/kernels/npy';
import { Tensor } from '../../lib/ir/tensor';
import { calibrate } from '../../lib/quantization';
import { buildSymbolicModel } from '../helpers/onnx-symbolic-model';
import { batchesFor, convNet } from '../quantization/models';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { zipFiles } = require('../../fuzz/zip-writer.js') as { zipFiles(files: Record<string, Uint8Array>, method?: number): Uint8Array };

// Calibrations with the entropy search, and onnxruntime sessions, take seconds in jest's sandbox (its loops run far slower than in plain Node).
jest.setTimeout(60_000);

let tmp: string;
const net = convNet();
const batches = batchesFor(net, 3, 2, 21);
let modelFile: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-calibrate-cli-'));
  modelFile = path.join(tmp, 'net.onnx');
  fs.writeFileSync(modelFile, net.model);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the command line; returns the exit code and what it printed. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const saved = process.exitCode;
  try {
    const code = await main(['node', 'tensorrt-node', 'calibrate', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = saved;
  }
}

function folder(name: string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const npz = (batch: Record<string, Tensor>): Uint8Array => zipFiles(Object.fromEntries(Object.entries(batch).map(([k, t]) => [`${k}.npy`, writeNpy(t)])), 8);

describe('each --data layout gives the model calibrate() gives on the same batches', () => {
  let expected: Uint8Array;
  beforeAll(async () => {
    expected = (await calibrate(net.model, batches, { method: 'entropy' })).model;
  });

  const layouts: [string, () => string][] = [
    [
      'a folder of .npz files (names in numeric order)',
      () => {
        const dir = folder('npz');
        // batch_10 after batch_2: numbers in names compare as numbers.
        ['batch_1', 'batch_2', 'batch_10'].forEach((n, i) => fs.writeFileSync(path.join(dir, `${n}.npz`), npz(batches[i]!)));
        return dir;
      },
    ],
    [
      'a folder of .npy files (one input)',
      () => {
        const dir = folder('npy');
        batches.forEach((b, i) => fs.writeFileSync(path.join(dir, `${i}.npy`), writeNpy(b.x!)));
        return dir;
      },
    ],
    [
      'a folder of batch folders',
      () => {
        const dir = folder('dirs');
        batches.forEach((b, i) => {
          fs.mkdirSync(path.join(dir, `b${i}`));
          fs.writeFileSync(path.join(dir, `b${i}`, 'x.npy'), writeNpy(b.x!));
        });
        return dir;
      },
    ],
  ];

  test.each(layouts)('%s', async (_, make) => {
    const output = path.join(tmp, `out-${Math.random().toString(36).slice(2)}.onnx`);
    const r = await cli(modelFile, '--data', make(), '--method', 'entropy', '-o', output, '-q');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(new Uint8Array(fs.readFileSync(output))).toEqual(expected);
    expect(r.stdout).toMatch(/^calibrated 4 node\(s\) from 3 batch\(es\) with onnxruntime: entropy, int8, per-channel weights, opset 17\n/);
    expect(r.stdout).toMatch(/\nactivation +amax +max \|x\| +scale +read by\nx +[\d.]+ +[\d.]+ +[\d.e-]+ +conv1\nr1 /);
  });
});

test('one .npz file is one batch; --json prints the report', async () => {
  const file = path.join(tmp, 'one.npz');
  fs.writeFileSync(file, npz(batches[0]!));
  const output = path.join(tmp, 'one.qdq.onnx');
  const r = await cli(modelFile, '--data', file, '--precision', 'fp8', '--method', 'percentile', '--percentile', '99.9', '--per-tensor-weights', '--exclude', 'fc', '--json', '-o', output, '-q');
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout);
  expect(report).toMatchObject({ batches: 1, precision: 'fp8', method: 'percentile', percentile: 99.9, perChannelWeights: false, opset: { from: 17, to: 19 }, quantizedNodes: 3 });
  expect(report.skipped).toEqual([{ what: 'fc', reason: 'excluded' }]);
  const direct = await calibrate(net.model, [batches[0]!], { precision: 'fp8', method: 'percentile', percentile: 99.9, perChannelWeights: false, exclude: ['fc'] });
  expect(new Uint8Array(fs.readFileSync(output))).toEqual(direct.model);
});

describe('refusals', () => {
  const out = (): string => path.join(tmp, 'refused.onnx');

  test.each([
    ['no --data', () => [modelFile, '-o', out()], 'give the calibration data: --data'],
    ['no -o', () => [modelFile, '--data', tmp], 'give the output file: -o'],
    ['--data that does not exist', () => [modelFile, '--data', path.join(tmp, 'nothing'), '-o', out()], 'no such file or folder'],
    ['a single file that is not .npz', () => [modelFile, '--data', modelFile, '-o', out()], 'a single file must be an .npz'],
    ['an empty folder', () => [modelFile, '--data', folder('empty'), '-o', out()], 'has no .npz files, .npy files or batch folders'],
    [
      'a folder mixing layouts',
      () => {
        const dir = folder('mixed');
        fs.writeFileSync(path.join(dir, 'a.npy'), writeNpy(batches[0]!.x!));
        fs.writeFileSync(path.join(dir, 'b.npz'), npz(batches[0]!));
        return [modelFile, '--data', dir, '-o', out()];
      },
      'mixes .npz files, .npy files and folders',
    ],
    ['--percentile without --method percentile', () => [modelFile, '--data', tmp, '--percentile', '99', '-o', out()], '--percentile applies to --method percentile'],
    ['--percentile out of range', () => [modelFile, '--data', tmp, '--method', 'percentile', '--percentile', '120', '-o', out()], 'expected a number in (0, 100]'],
    ['an empty --ops entry', () => [modelFile, '--data', path.join(tmp, 'npy'), '--ops', 'Conv,,Gemm', '-o', out()], '--ops Conv,,Gemm: an empty entry'],
    [
      'a corrupt .npz',
      () => {
        const dir = folder('corrupt');
        fs.writeFileSync(path.join(dir, 'a.npz'), new Uint8Array([80, 75, 3, 4, 0, 0]));
        return [modelFile, '--data', dir, '-o', out()];
      },
      'is not a readable .npz file',
    ],
  ])('%s: exit 2 naming the flag', async (_, args, message) => {
    const r = await cli(...(args as () => string[])());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  test('an unknown --method: commander refuses it (exit 2)', async () => {
    const r = await cli(modelFile, '--data', tmp, '--method', 'kl', '-o', out());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("argument 'kl' is invalid");
  });

  test('a folder of .npy files for a model with two inputs: exit 2 saying which layouts fit', async () => {
    const two = path.join(tmp, 'two.onnx');
    fs.writeFileSync(
      two,
      buildSymbolicModel({
        inputs: { a: { dtype: 'float32', dims: [2, 4] }, b: { dtype: 'float32', dims: [4, 3] } },
        nodes: [{ op: 'MatMul', name: 'mm', inputs: ['a', 'b'], outputs: ['y'] }],
        outputs: ['y'],
      }),
    );
    const dir = folder('npy-two');
    fs.writeFileSync(path.join(dir, '0.npy'), writeNpy(new Tensor('float32', [2, 4])));
    const r = await cli(two, '--data', dir, '-o', out());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the model has 2 inputs (a, b)');
  });

  test('a batch missing an input: exit 1 with E_BAD_INPUT naming it', async () => {
    const dir = folder('wrong-name');
    fs.writeFileSync(path.join(dir, 'a.npz'), npz({ image: batches[0]!.x! }));
    const r = await cli(modelFile, '--data', dir, '-o', out(), '-q');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tensorrt-node: \[E_BAD_INPUT\] calibration batch 0 has "image", which is not an input of the model/);
  });

  test('a model that does not exist: exit 1 with E_BAD_MODEL', async () => {
    const r = await cli(path.join(tmp, 'nope.onnx'), '--data', tmp, '-o', out());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tensorrt-node: \[E_BAD_MODEL\] cannot read ONNX model .*nope\.onnx/);
  });
});
