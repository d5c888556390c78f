/**
 * trtexec's flags on `compile`, `run` and `bench`: `--fp16`, `--bf16`, `--tf32` and
 * `--precision a,b` become the `precisions` setting, `--device N` the `device` setting (or
 * loadProgram's device for a program file), `--verbose` prints the library's debug lines; and
 * `bench --profile` times each layer (program.profile()). Flag-to-setting mapping in-process,
 * the rest through the real binary (`node dist/cli/index.js`) in child processes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compileSettings, deviceOf, openSource, precisionsOf } from '../../lib/cli/program-source';
import { createProgress } from '../../lib/cli/progress';
import type { ProgramProfile } from '../../lib/engine/profile';
import { loadProgram } from '../../lib/runtime/program-file';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { loadFixture } from '../helpers/fixtures';

// openSource()'s call of loadProgram is what --device reaches for a program file.
jest.mock('../../lib/runtime/program-file', () => ({
  ...jest.requireActual('../../lib/runtime/program-file'),
  loadProgram: jest.fn(async () => ({ inputs: [] })),
}));

// DEBUG unset: without --verbose the library's debug lines must not show.
const cli = (args: string[]) => runCli(args, { DEBUG: '' }, 120_000);
const MLP_ONNX = path.join(loadFixture('mlp').dir, 'model.onnx');
const SHAPE = ['--shape', 'input0=4x32'];

let tmp: string;
beforeAll(() => {
  if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-cli-build-flags-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the flags reach the compile settings', () => {
  const quiet = createProgress({ quiet: true });
  const settingsOf = (options: Parameters<typeof compileSettings>[0]) => compileSettings(options, new Map(), quiet);

  test('precision flags: the precisions setting, fp32 first as resolveBuildConfig orders it', () => {
    expect(settingsOf({ fp16: true }).precisions).toEqual(['fp16']);
    expect(settingsOf({ bf16: true }).precisions).toEqual(['bf16']);
    expect(settingsOf({ tf32: true }).precisions).toEqual(['tf32']);
    expect(settingsOf({ fp16: true, tf32: true }).precisions).toEqual(['tf32', 'fp16']);
    expect(settingsOf({ precision: 'fp16,fp32', bf16: true }).precisions).toEqual(['fp32', 'fp16', 'bf16']);
    expect(settingsOf({}).precisions).toBeUndefined();
    expect(() => precisionsOf({ precision: 'fp16,int8' })).toThrow('--precision fp16,int8: unknown precision "int8"');
  });

  test('--device: device.gpuId', () => {
    expect(settingsOf({ device: '1' }).device).toEqual({ gpuId: 1 });
    expect(settingsOf({ device: 'cuda:0' }).device).toEqual({ gpuId: 0 });
    expect(settingsOf({}).device).toBeUndefined();
    expect(() => deviceOf({ device: '-1' })).toThrow('--device -1: expected a CUDA device ordinal');
  });

  test('--device with a program file: loadProgram\'s device, with the CLI\'s logger', async () => {
    await openSource('p.trtp', { device: 'cuda:1' }, quiet);
    expect(loadProgram).toHaveBeenLastCalledWith('p.trtp', { device: 1, logger: expect.any(Function) });
    await openSource('p.trtp', {}, quiet);
    expect(loadProgram).toHaveBeenLastCalledWith('p.trtp', { logger: expect.any(Function) });
  });

  test('--verbose: a logger that prints debug lines; without it, warnings only', () => {
    const lines: string[] = [];
    const stream = { write: (s: string) => lines.push(s) } as unknown as NodeJS.WritableStream;
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => stream.write(s)) as typeof process.stderr.write;
    try {
      settingsOf({ verbose: true }).logger!('debug', 'a');
      settingsOf({}).logger!('debug', 'b');
      settingsOf({}).logger!('warn', 'c');
    } finally {
      process.stderr.write = original;
    }
    expect(lines).toEqual(['tensorrt-node debug: a\n', 'tensorrt-node warn: c\n']);
  });
});

describe('through the binary', () => {
  test.each([
    [['--fp16'], 'precisions (fp16)'],
    [['--bf16'], 'precisions (bf16)'],
    [['--tf32'], 'precisions (tf32)'],
    [['--precision', 'fp16,tf32'], 'precisions (tf32, fp16)'],
  ])('compile %j on the reference backend warns that the precisions change nothing there', (flags, named) => {
    const r = cli(['compile', MLP_ONNX, ...SHAPE, '--backend', 'reference', ...flags, '-q']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`tensorrt-node warn: the setting ${named} has no effect on the reference backend, which builds the engine segments: it computes every layer in the network's own dtypes, with no workspace and no kernels to time (docs/backends.md, "Build configuration")\n`);
  });

  test('--device on run and bench of a model reaches the device setting (the reference backend warns it changes nothing)', () => {
    for (const command of ['run', 'bench']) {
      const extra = command === 'run' ? ['--output-dir', path.join(tmp, 'device-out')] : ['--iterations', '1', '--warmup', '0'];
      const r = cli([command, MLP_ONNX, ...SHAPE, '--random-inputs', '--backend', 'reference', '--device', '1', ...extra, '-q']);
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('tensorrt-node warn: the setting device has no effect on the reference backend, which runs on the CPU: the engines record that they need no GPU\n');
    }
  });

  test('--verbose prints the compile\'s debug and info lines on stderr; without it there are none', () => {
    const loud = cli(['compile', MLP_ONNX, ...SHAPE, '--backend', 'reference', '--verbose', '-q']);
    expect(loud.status).toBe(0);
    expect(loud.stderr).toMatch(/^tensorrt-node debug: building segment 0 \(\d+ ops\) with the reference backend$/m);
    expect(loud.stderr).toMatch(/^tensorrt-node debug: memory plan: /m);
    expect(loud.stderr).toMatch(/^tensorrt-node info: \d+\/\d+ ops converted/m);
    const plain = cli(['compile', MLP_ONNX, ...SHAPE, '--backend', 'reference', '-q']);
    expect(plain.status).toBe(0);
    expect(plain.stderr).toBe('');
  });

  test('precision flags with a program file are refused; --device loads it', () => {
    const file = path.join(tmp, 'mlp.trtp');
    expect(cli(['compile', MLP_ONNX, ...SHAPE, '--backend', 'reference', '-o', file, '-q']).status).toBe(0);
    for (const flags of [['--fp16'], ['--precision', 'bf16']]) {
      const r = cli(['run', file, '--random-inputs', ...flags, '-q']);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${flags[0]} applies when compiling a model; ${file} is a compiled program file`);
    }
    const r = cli(['run', file, '--random-inputs', '--device', '0', '--output-dir', path.join(tmp, 'file-out'), '-q']);
    expect(r.status).toBe(0);
  });

  test.each([
    [['--precision', 'fp8'], '--precision fp8: unknown precision "fp8"'],
    [['--device', 'gpu1'], '--device gpu1: expected a CUDA device ordinal'],
  ])('%j is a usage error', (flags, message) => {
    const r = cli(['compile', MLP_ONNX, ...SHAPE, ...flags, '--dry-run']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });
});

describe('bench --profile', () => {
  test('--json: an entry per layer with its share and source, shares adding up to 1', () => {
    const r = cli(['bench', MLP_ONNX, ...SHAPE, '--random-inputs', '--backend', 'reference', '--iterations', '3', '--warmup', '1', '--profile', '--json', '-q']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const b = JSON.parse(r.stdout) as { latencyMs: { runs: number }; profile: ProgramProfile };
    expect(b.latencyMs.runs).toBe(3);
    const p = b.profile;
    expect(p.runs).toBe(3);
    expect(p.segments).toEqual([expect.objectContaining({ index: 0, kind: 'engine', backend: 'reference', timing: 'host-wall-clock' })]);
    expect(p.entries.length).toBeGreaterThan(10);
    expect(p.entries.reduce((a, e) => a + e.share, 0)).toBeCloseTo(1, 6);
    expect(p.totalMs).toBeCloseTo(p.entries.reduce((a, e) => a + e.ms, 0), 6);
    const softmax = p.entries.find((e) => e.kind === 'softmax');
    expect(softmax).toMatchObject({ segment: 0, from: { target: 'aten._softmax.default' } });
    expect(p.entries.filter((e) => e.kind === 'matmul').map((e) => e.from?.target)).toEqual(['aten.linear.default', 'aten.linear.default', 'aten.linear.default']);
  });

  test('text: the table after the latency lines, a row per layer and the total', () => {
    const r = cli(['bench', MLP_ONNX, ...SHAPE, '--random-inputs', '--backend', 'reference', '--iterations', '2', '--warmup', '0', '--profile', '-q']);
    expect(r.status).toBe(0);
    const out = r.stdout;
    expect(out.indexOf('per-layer profile (mean of 2 run(s)):')).toBeGreaterThan(out.indexOf('throughput:'));
    expect(out).toContain('segment 0 (reference engine): ');
    expect(out).toMatch(/^layer +kind +ms +share +from$/m);
    expect(out).toMatch(/^\S+ +softmax +\d+\.\d{3} +\d+\.\d% +aten\._softmax\.default$/m);
    expect(out).toMatch(/^total +\d+\.\d{3} +100\.0% +\(a whole run: \d+\.\d{3} ms of wall clock\)$/m);
  });
});
