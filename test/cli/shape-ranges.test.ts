/**
 * A program compiled for a range (`--shape name=MIN:OPT:MAX`) keeps it: `inspect` shows each
 * run-time dim's range and opt, and `run` / `bench --random-inputs` without `--shape` run the
 * dynamic inputs at their opt shape, saying so once on stderr. A file that does not record
 * the opt (format 1.1) still asks for `--shape`. The real binary (dist/) in child processes,
 * and runInputs() itself for the choices between profiles.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { runInputs, type DeclaredInput } from '../../lib/cli/inputs';
import { sym, symMul } from '../../lib/ir/symbolic';
import { readNpy } from '../../lib/kernels/npy';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { asFormat11ProgramFile } from '../helpers/legacy-program-file';
import { loadFixture } from '../helpers/fixtures';

const cli = (args: string[]) => runCli(args, {}, 120_000);
const MLP_ONNX = path.join(loadFixture('mlp').dir, 'model.onnx');
const NOTE = '--random-inputs: no --shape for a dynamic input: using the compiled opt shape input0=8x32';

let tmp: string;
let file: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-cli-ranges-'));
  file = path.join(tmp, 'p.trtp');
  const c = cli(['compile', MLP_ONNX, '--shape', 'input0=1x32:8x32:32x32', '--backend', 'reference', '-o', file, '-q']);
  expect(c.stderr).toBe('');
  expect(c.status).toBe(0);
  expect(c.stdout).toContain(`run it with \`tensorrt-node run ${file} --random-inputs\``);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const count = (text: string, part: string): number => text.split(part).length - 1;

test('inspect shows the range and the opt, in text and JSON', () => {
  const text = cli(['inspect', file]);
  expect(text.status).toBe(0);
  expect(text.stdout).toContain('\n  input0: float32[batch, 32]  batch: 1..32 (opt 8)\n');
  const json = cli(['inspect', file, '--json']);
  expect(json.status).toBe(0);
  const report = JSON.parse(json.stdout) as { inputs: unknown[] };
  expect(report.inputs).toEqual([
    {
      name: 'input0',
      value: 'input0',
      dtype: 'float32',
      shape: '[batch, 32]',
      profiles: [{ min: [1, 32], opt: [8, 32], max: [32, 32] }],
      ranges: [{ dim: 'batch', axes: [0], profiles: [{ min: 1, opt: 8, max: 32 }] }],
    },
  ]);
});

test('run --random-inputs without --shape runs at the opt shape and says so once', () => {
  const out = path.join(tmp, 'opt-out');
  const r = cli(['run', file, '--random-inputs', '--output-dir', out]);
  expect(r.status).toBe(0);
  expect(count(r.stderr, NOTE)).toBe(1);
  expect(r.stdout).toContain(`output0: float32[8, 10] → ${path.join(out, 'output0.npy')}`);
  expect(readNpy(fs.readFileSync(path.join(out, 'output0.npy'))).shape).toEqual([8, 10]);
  // --quiet silences the note with the progress; a --shape is taken as given, with no note.
  const quiet = cli(['run', file, '--random-inputs', '--output-dir', out, '-q']);
  expect(quiet.status).toBe(0);
  expect(quiet.stderr).toBe('');
  const shaped = cli(['run', file, '--random-inputs', '--shape', 'input0=3x32', '--output-dir', out]);
  expect(shaped.status).toBe(0);
  expect(shaped.stderr).not.toContain('opt shape');
  expect(shaped.stdout).toContain('output0: float32[3, 10]');
});

test('bench --random-inputs without --shape runs at the opt shape and says so once', () => {
  const r = cli(['bench', file, '--random-inputs', '--iterations', '2', '--warmup', '1']);
  expect(r.status).toBe(0);
  expect(count(r.stderr, NOTE)).toBe(1);
  expect(r.stdout).toMatch(/throughput: [\d.]+ runs\/s/);
});

test('a file that does not record the opt (format 1.1) still asks for --shape', () => {
  const old = path.join(tmp, 'old.trtp');
  fs.writeFileSync(old, asFormat11ProgramFile(fs.readFileSync(file)));
  const r = cli(['run', old, '--random-inputs', '--output-dir', path.join(tmp, 'old-out')]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('--random-inputs: input "input0" has dynamic dims [batch, 32]: add --shape input0=1x32');
  const inspect = cli(['inspect', old]);
  expect(inspect.status).toBe(0);
  expect(inspect.stdout).toContain('\n  input0: float32[batch, 32]  batch: 1..32\n');
});

describe('runInputs: which opt a dynamic input takes', () => {
  const profiles = [
    { min: [1, 4], opt: [2, 8], max: [4, 8] },
    { min: [5, 4], opt: [16, 8], max: [32, 8] },
  ];
  // x and mask share the batch symbol b; mask is [b, 2*s].
  const declared: DeclaredInput[] = [
    { name: 'x', dtype: 'float32', shape: [sym('b'), 8], profiles },
    {
      name: 'mask',
      dtype: 'bool',
      shape: [sym('b'), symMul(sym('s'), 2)],
      profiles: [
        { min: [1, 2], opt: [2, 6], max: [4, 8] },
        { min: [5, 2], opt: [16, 6], max: [32, 8] },
      ],
    },
  ];
  const shapesOf = (inputs: Record<string, { shape: readonly number[] }>): Record<string, number[]> =>
    Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, [...t.shape]]));

  test('profile 0\'s opts, with one note naming every input it sized', () => {
    const notes: string[] = [];
    const inputs = runInputs(declared, new Map(), new Map(), 0, (m) => notes.push(m));
    expect(shapesOf(inputs)).toEqual({ x: [2, 8], mask: [2, 6] });
    expect(notes).toEqual(['--random-inputs: no --shape for dynamic inputs: using the compiled opt shape x=2x8 (profile 0 of 2), mask=2x6 (profile 0 of 2)']);
  });

  test('a size bound by --shape picks the profile that holds it, and the other dims take that profile\'s opt', () => {
    const notes: string[] = [];
    const inputs = runInputs(declared, new Map(), new Map([['x', { shape: [20, 8] }]]), 0, (m) => notes.push(m));
    expect(shapesOf(inputs)).toEqual({ x: [20, 8], mask: [20, 6] });
    expect(notes).toEqual(['--random-inputs: no --shape for a dynamic input: using the compiled opt shape mask=20x6 (profile 1 of 2)']);
  });

  test('without profiles, a dynamic input still needs --shape', () => {
    const bare = declared.map(({ profiles: _p, ...d }) => d);
    expect(() => runInputs(bare, new Map(), new Map(), 0)).toThrow('--random-inputs: input "x" has dynamic dims [b, 8]: add --shape x=1x8');
  });
});
