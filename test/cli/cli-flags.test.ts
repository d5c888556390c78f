/**
 * The real binary (`node dist/cli/index.js`) in child processes: every flag of `compile`,
 * `run`, `bench` and `inspect`, and every error, with its exit code (0 ok, 1 runtime or model
 * error, 2 usage error) and the stderr text that says what to type. Numerics are checked
 * against the PyTorch fixtures and hand-computed values.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { readNpy, writeNpy } from '../../lib/kernels/npy';
import { Tensor } from '../../lib/ir/tensor';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';

const cli = (args: string[]) => runCli(args, {}, 120_000);
const mlp = loadFixture('mlp');
const encoder = loadFixture('encoder');
const MLP_PT2 = path.join(mlp.dir, 'model.pt2');
const MLP_ONNX = path.join(mlp.dir, 'model.onnx');
const ENC_ONNX = path.join(encoder.dir, 'model.onnx');

let tmp: string;
let mlpInput: string;
let encInput: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-cli-flags-'));
  mlpInput = path.join(tmp, 'mlp-x.npy');
  fs.writeFileSync(mlpInput, writeNpy(mlp.cases[0]!.inputs[0]!));
  encInput = path.join(tmp, 'enc-ids.npy');
  fs.writeFileSync(encInput, writeNpy(encoder.cases[0]!.inputs[0]!));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const mlpShape = (): string => `x=${mlp.cases[0]!.inputs[0]!.shape.join('x')}`;

describe('program files', () => {
  test('compile -o writes a program that run and inspect take, with the same segment names as the dry run', () => {
    const file = path.join(tmp, 'mlp.trtp');
    const flags = ['--torch-executed-ops', 'aten.relu.default', '--min-block-size', '1'];
    const c = cli(['compile', MLP_PT2, '--shape', mlpShape(), ...flags, '-o', file, '--quiet']);
    expect(c.stderr).toBe('');
    expect(c.status).toBe(0);
    expect(c.stdout).toContain(`wrote ${file}`);
    expect(fs.statSync(file).size).toBeGreaterThan(0);

    const r = cli(['run', file, '--input', `x=${mlpInput}`, '--output-dir', path.join(tmp, 'mlp-out'), '-q']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expectClose(readNpy(fs.readFileSync(path.join(tmp, 'mlp-out', 'softmax.npy'))), mlp.cases[0]!.outputs[0]!, FP32);

    const dry = cli(['compile', MLP_PT2, '--shape', mlpShape(), ...flags, '--dry-run', '-q']);
    const inspect = cli(['inspect', file]);
    expect(inspect.status).toBe(0);
    const drySegments = dry.stdout.split('\n').filter((l) => l.startsWith('segment ')).map((l) => l.slice(l.lastIndexOf(': ') + 2));
    const inspectSegments = inspect.stdout.split('\n').filter((l) => /^ {2}\d+: (engine|fallback)/.test(l)).map((l) => l.slice(l.lastIndexOf('): ') + 3));
    expect(drySegments).toEqual(['x -> linear', 'linear -> relu', 'relu -> softmax']);
    expect(inspectSegments).toEqual(drySegments);

    const json = JSON.parse(cli(['inspect', file, '--json']).stdout) as { inputs: Array<{ name: string; shape: string }> };
    expect(json.inputs).toEqual([expect.objectContaining({ name: 'x', shape: `[${mlp.cases[0]!.inputs[0]!.shape.join(', ')}]` })]);
  });

  test('inspect and run take a model too', () => {
    const inspect = cli(['inspect', MLP_ONNX, '--shape', 'input0=2x32', '-q']);
    expect(inspect.status).toBe(0);
    expect(inspect.stdout).toContain(`${MLP_ONNX} (compiled in memory)`);
    expect(inspect.stdout).toContain('input0: float32[2, 32]');
  });

  test('--shape min:opt:max compiles a range; the program runs any shape in it and refuses one outside', () => {
    const file = path.join(tmp, 'enc-range.trtp');
    const c = cli(['compile', ENC_ONNX, '--shape', 'input0=1x4:2x16:4x32', '-o', file, '--json', '-q']);
    expect(c.status).toBe(0);
    const compiled = JSON.parse(c.stdout) as { file: string; inputs: Array<{ name: string; shape: string; profiles?: unknown }> };
    expect(compiled.file).toBe(file);
    expect(compiled.inputs).toEqual([{ name: 'input0', dtype: 'int64', shape: '[batch, seq]', profiles: [{ min: [1, 4], opt: [2, 16], max: [4, 32] }] }]);
    const r = cli(['run', file, '--input', `input0=${encInput}`, '--output-dir', path.join(tmp, 'enc-out'), '--json', '-q']);
    expect(r.status).toBe(0);
    const ran = JSON.parse(r.stdout) as { outputs: Array<{ name: string; file: string }> };
    expect(ran.outputs.map((o) => o.name)).toEqual(['output0']);
    expectClose(readNpy(fs.readFileSync(ran.outputs[0]!.file)), encoder.cases[0]!.outputs[0]!, FP32);
    const outside = cli(['run', file, '--random-inputs', '--shape', 'input0=8x16', '-q']);
    expect(outside.status).toBe(1);
    expect(outside.stderr).toMatch(/\[E_SHAPE_OUT_OF_RANGE\].*input0/);
  });

  test('run --output-dir gives outputs whose names would collide distinct files, and prints the mapping', async () => {
    const g = new Graph('collide');
    const x = g.addInput('x', tensorType('float32', [2, 2]));
    const a = call(g, 'aten.relu.default', { self: x }, { name: 'r' }).output;
    const b = call(g, 'aten.neg.default', { self: x }, { name: 'n' }).output;
    g.setOutputs([a, b], ['a/b', 'a_b']);
    const program = await compile(g);
    const file = path.join(tmp, 'collide.trtp');
    await program.save(file);
    await program.dispose();
    const input = path.join(tmp, 'collide-x.npy');
    fs.writeFileSync(input, writeNpy(Tensor.from('float32', [2, 2], [1, -2, 3, -4])));
    const out = path.join(tmp, 'collide-out');
    const r = cli(['run', file, '--input', `x=${input}`, '--output-dir', out, '-q']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`a/b: float32[2, 2] → ${path.join(out, 'a_b.npy')}`);
    expect(r.stdout).toContain(`a_b: float32[2, 2] → ${path.join(out, 'a_b_2.npy')}`);
    expect([...readNpy(fs.readFileSync(path.join(out, 'a_b.npy'))).data]).toEqual([1, 0, 3, 0]);
    expect([...readNpy(fs.readFileSync(path.join(out, 'a_b_2.npy'))).data]).toEqual([-1, 2, -3, 4]);
  });
});

describe('inputs', () => {
  test('--random-inputs fills every input with seeded values: the same seed gives the same outputs', () => {
    const run = (seed: string, dir: string) => cli(['run', MLP_ONNX, '--shape', 'input0=3x32', '--random-inputs', seed, '--output-dir', path.join(tmp, dir), '-q']);
    expect(run('7', 'r7a').status).toBe(0);
    expect(run('7', 'r7b').status).toBe(0);
    expect(run('8', 'r8').status).toBe(0);
    const read = (dir: string) => readNpy(fs.readFileSync(path.join(tmp, dir, 'output0.npy')));
    expect(read('r7a').shape).toEqual([3, 10]);
    expect([...read('r7a').data]).toEqual([...read('r7b').data]);
    expect([...read('r7a').data]).not.toEqual([...read('r8').data]);
  });

  test('an input with no value says which flags to add', () => {
    const r = cli(['run', MLP_PT2, '--shape', mlpShape()]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('input "x" (float32[');
    expect(r.stderr).toContain('has no value: add --input x=file.npy, or --random-inputs');
  });

  test('--input errors name the flag, the input and the file', () => {
    const missing = cli(['run', MLP_PT2, '--input', `x=${path.join(tmp, 'nope.npy')}`]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`--input x=${path.join(tmp, 'nope.npy')}: cannot read ${path.join(tmp, 'nope.npy')} for input "x": no such file`);

    const bin = path.join(mlp.dir, 'input0.bin');
    const raw = cli(['run', MLP_PT2, '--input', `x=${bin}`]);
    expect(raw.status).toBe(2);
    expect(raw.stderr).toContain(`--input x=${bin}: ${bin} is not a .npy file`);

    const wrong = path.join(tmp, 'f64.npy');
    fs.writeFileSync(wrong, writeNpy(Tensor.from('float64', [2, 3], [1, 2, 3, 4, 5, 6])));
    const mismatch = cli(['run', MLP_PT2, '--input', `x=${wrong}`]);
    expect(mismatch.status).toBe(2);
    expect(mismatch.stderr).toMatch(new RegExp(`--input x=.*f64\\.npy: .*f64\\.npy holds float64\\[2, 3\\], but input "x" is float32\\[\\w+, 32\\]`));

    const unknown = cli(['run', MLP_PT2, '--input', `y=${mlpInput}`]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('the model has no input "y" (its inputs: x)');

    const form = cli(['run', MLP_PT2, '--input', 'x']);
    expect(form.status).toBe(2);
    expect(form.stderr).toContain('--input x: expected name=file.npy');
  });
});

describe('usage errors exit 2 and name the flag', () => {
  test.each([
    ['x=1e20', 'dim "1e20" is not a positive integer'],
    ['x=0x32', 'dim "0" is not a positive integer'],
    ['x=99999999999999999999x32', 'is not a positive integer'],
    ['x', 'expected name=DxDxD or name=MIN:OPT:MAX'],
    ['x=1x32:4x32x1', 'min, opt and max must have the same number of dims'],
  ])('--shape %s', (shape, message) => {
    const r = cli(['compile', MLP_PT2, '--shape', shape, '--dry-run']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--shape ${shape}`);
    expect(r.stderr).toContain(message);
  });

  test('a dynamic dim without a shape: the exact --shape to add', () => {
    const r = cli(['compile', MLP_ONNX, '--dry-run']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('input "input0" has dynamic dims [batch, 32] (batch unbounded in the model): add --shape input0=1x32');
    expect(r.stderr).not.toMatch(/settings\.inputs|\{ inputs/);
  });

  test('--shape for an input the model lacks', () => {
    const r = cli(['compile', MLP_ONNX, '--shape', 'input0=1x32', '--shape', 'nope=1x2', '--dry-run']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--shape nope=...: the model has no input "nope" (its inputs: input0)');
  });

  test('a --shape range the model refuses is told in flag terms', () => {
    const r = cli(['compile', MLP_ONNX, '--shape', 'input0=1x16:2x16:4x16', '--dry-run']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('[E_INVALID_ARGUMENT] --shape');
    expect(r.stderr).not.toContain('settings.inputs');
  });

  test('an unknown --torch-executed-ops name lists close matches', () => {
    const op = cli(['compile', MLP_PT2, '--shape', mlpShape(), '--dry-run', '--torch-executed-ops', 'aten.relu.defualt']);
    expect(op.status).toBe(2);
    expect(op.stderr).toContain('--torch-executed-ops: unknown op "aten.relu.defualt"; did you mean aten.relu.default');
    const node = cli(['compile', MLP_PT2, '--shape', mlpShape(), '--dry-run', '--torch-executed-ops', 'linaer']);
    expect(node.status).toBe(2);
    expect(node.stderr).toContain('no op target or node of the model is named "linaer"; did you mean linear');
    // An op target without its overload gets the overloads (edit distance alone finds none).
    const overload = cli(['compile', MLP_PT2, '--shape', mlpShape(), '--dry-run', '--torch-executed-ops', 'aten.gelu']);
    expect(overload.status).toBe(2);
    expect(overload.stderr).toContain('--torch-executed-ops: unknown op "aten.gelu"; did you mean aten.gelu.default?');
  });

  test('-o into directories that do not exist yet makes them (they were allowed before compiling, then the write failed with ENOENT)', () => {
    const file = path.join(tmp, 'not', 'yet', 'mlp.trtp');
    const c = cli(['compile', MLP_PT2, '--shape', mlpShape(), '-o', file, '-q']);
    expect(c.stderr).toBe('');
    expect(c.status).toBe(0);
    expect(fs.statSync(file).size).toBeGreaterThan(0);
  });

  test('unwritable -o and --output-dir are found before compiling, naming the path', () => {
    const aFile = path.join(tmp, 'plain-file');
    fs.writeFileSync(aFile, 'x');
    const o = cli(['compile', MLP_PT2, '--shape', mlpShape(), '-o', path.join(aFile, 'p.trtp')]);
    expect(o.status).toBe(2);
    expect(o.stderr).toContain(`-o ${path.join(aFile, 'p.trtp')}: ${aFile} is not a directory`);
    expect(o.stderr).not.toContain('importing');
    const d = cli(['run', MLP_PT2, '--random-inputs', '--shape', mlpShape(), '--output-dir', path.join(aFile, 'out')]);
    expect(d.status).toBe(2);
    expect(d.stderr).toContain(`--output-dir ${path.join(aFile, 'out')}: ${aFile} is not a directory`);
    expect(d.stderr).not.toContain('importing');
  });

  test.each([
    [['compile', MLP_PT2, '--no-such-flag'], "unknown option '--no-such-flag'"],
    [['run'], "missing required argument 'program-or-model'"],
    [['compile', MLP_PT2, '--backend', 'gpu'], 'Allowed choices are auto, tensorrt, cuda, onnxruntime, reference'],
    [['compile', MLP_PT2, '--shape', 'x=1x32', '--min-block-size', '0', '--dry-run'], '--min-block-size 0: expected an integer >= 1'],
    [['bench', MLP_PT2, '--random-inputs', '--shape', 'x=1x32', '--iterations', '0'], '--iterations 0: expected an integer >= 1'],
    [['bench', MLP_PT2, '--random-inputs', '--shape', 'x=1x32', '--duration', 'soon'], '--duration soon: expected a positive number of seconds'],
    [['run', MLP_PT2, '--random-inputs', 'abc'], '--random-inputs abc: expected an integer >= 0'],
    [['compile', MLP_PT2, '--dry-run', '-o', 'p.trtp'], '-o writes a compiled program; --dry-run builds none'],
  ])('%j', (args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });

  test('compile flags with a program file', () => {
    const file = path.join(tmp, 'flags.trtp');
    expect(cli(['compile', MLP_PT2, '--shape', mlpShape(), '-o', file, '-q']).status).toBe(0);
    const r = cli(['run', file, '--random-inputs', '--torch-executed-ops', 'aten.relu.default']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--torch-executed-ops applies when compiling a model; ${file} is a compiled program file`);
  });
});

describe('runtime errors exit 1 with their code', () => {
  test('a missing model and a corrupt program file', () => {
    const missing = cli(['run', path.join(tmp, 'nope.onnx'), '--random-inputs']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^tensorrt-node: \[E_BAD_MODEL\] cannot read ONNX model .*nope\.onnx/);
    const bad = path.join(tmp, 'bad.trtp');
    fs.writeFileSync(bad, 'not a zip');
    const corrupt = cli(['inspect', bad]);
    expect(corrupt.status).toBe(1);
    expect(corrupt.stderr).toMatch(/^tensorrt-node: \[E_BAD_PROGRAM\] .*bad\.trtp/);
  });
});

describe('bench', () => {
  test('--json: percentiles in order, the runs asked for, and throughput', () => {
    const r = cli(['bench', MLP_PT2, '--shape', mlpShape(), '--random-inputs', '--iterations', '6', '--warmup', '1', '--json', '-q']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const b = JSON.parse(r.stdout) as { warmupRuns: number; stoppedBy: string; totalMs: number; runsPerSecond: number; latencyMs: Record<string, number> };
    expect(b.warmupRuns).toBe(1);
    expect(b.latencyMs.runs).toBe(6);
    expect(b.stoppedBy).toBe('iterations');
    const l = b.latencyMs;
    expect(l.min).toBeLessThanOrEqual(l.p50!);
    expect(l.p50).toBeLessThanOrEqual(l.p90!);
    expect(l.p90).toBeLessThanOrEqual(l.p99!);
    expect(l.p99).toBeLessThanOrEqual(l.max!);
    expect(b.runsPerSecond).toBeCloseTo((6 * 1000) / b.totalMs, 6);
  });

  test('text output', () => {
    const r = cli(['bench', MLP_PT2, '--shape', mlpShape(), '--random-inputs', '--iterations', '3', '--warmup', '0']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/latency \(ms\): p50 [\d.]+ {2}p90 [\d.]+ {2}p99 [\d.]+/);
    expect(r.stdout).toMatch(/throughput: [\d.]+ runs\/s/);
    expect(r.stderr).toContain('warm-up: 0 run(s)');
    expect(r.stderr).toContain('measuring (until --iterations or --duration): 3 run(s)');
  });
});

describe('progress', () => {
  test('plain lines on stderr when it is not a terminal; --quiet silences them; stdout is only the report', () => {
    const file = path.join(tmp, 'progress.trtp');
    const loud = cli(['compile', MLP_PT2, '--shape', mlpShape(), '-o', file]);
    expect(loud.status).toBe(0);
    const stages = loud.stderr.trim().split('\n').map((l) => l.replace(/^tensorrt-node: \[\d+\.\ds\] /, ''));
    expect(stages).toEqual(['importing the model', 'binding input shapes and lowering', expect.stringMatching(/^partitioning into engine segments \((tensorrt|cuda|onnxruntime|reference)\) and fallback segments$/), expect.stringMatching(/^building engine 1\/1 \(segment 0, \d+ ops\)$/)]);
    expect(loud.stdout).not.toContain('importing');
    const quiet = cli(['compile', MLP_PT2, '--shape', mlpShape(), '-o', file, '--quiet']);
    expect(quiet.stderr).toBe('');
  });
});

describe('--max-program-bytes', () => {
  test('refuses at compile a program whose tensors exceed it, in CLI words, exit 1; a budget that fits compiles', () => {
    const refused = cli(['compile', MLP_ONNX, '--shape', 'input0=8x32', '--backend', 'reference', '--max-program-bytes', '100', '-o', path.join(tmp, 'never.trtp'), '-q']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/\[E_RESOURCE_LIMIT\] the program would hold [\d.]+ KiB of tensors at once at node \S+ .*more than --max-program-bytes: 100 bytes/);
    expect(refused.stderr).toContain('raise --max-program-bytes');
    expect(fs.existsSync(path.join(tmp, 'never.trtp'))).toBe(false);
    const fits = cli(['compile', MLP_ONNX, '--shape', 'input0=8x32', '--backend', 'reference', '--max-program-bytes', '1000000', '-o', path.join(tmp, 'fits.trtp'), '-q']);
    expect(fits.status).toBe(0);
  });

  test('is a usage error when not an integer', () => {
    const bad = cli(['compile', MLP_ONNX, '--shape', 'input0=8x32', '--max-program-bytes', '1e9', '-o', path.join(tmp, 'x.trtp')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--max-program-bytes 1e9: expected an integer >= 1');
  });
});
