/**
 * `tensorrt-node inspect file.trtp`: manifest, device requirements, I/O and segments, as text
 * and as JSON, from a saved mlp program and from a GPU-bound program file; the CLI itself
 * (built dist/) exits 0, and 1 with the typed error for a damaged file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { formatInspectReport, inspectProgramFile } from '../../lib/cli/inspect-command';
import { compile } from '../../lib/compile';
import { BadProgramError } from '../../lib/errors';
import { packProgramFile, readProgramFile } from '../../lib/runtime/program-file';
import { DIST_CLI, runCli } from '../helpers/built-package';
import { TEST_H200 } from '../helpers/devices';
import { loadFixture } from '../helpers/fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtp-inspect-'));
const file = path.join(tmp, 'mlp.trtp');
const gpuFile = path.join(tmp, 'gpu.trtp');
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

beforeAll(async () => {
  const fixture = loadFixture('mlp');
  const program = await compile(path.join(fixture.dir, fixture.files.onnx!), {
    backend: 'reference',
    inputs: [{ shape: [4, 32] }],
    torchExecutedOps: ['aten.relu.default'],
    minBlockSize: 1,
  });
  await program.save(file);
  await program.dispose();
  const { manifest, blobs } = readProgramFile(fs.readFileSync(file));
  const m = structuredClone(manifest);
  const seg = m.segments[0] as unknown as { backend: string; device: Record<string, unknown> };
  seg.backend = 'tensorrt';
  Object.assign(seg.device, { type: 'gpu', gpuId: 0, computeCapability: { major: 9, minor: 0 }, deviceName: 'NVIDIA H200', backend: 'tensorrt', backendVersion: '10.16.0' });
  m.backends = { ...m.backends, tensorrt: '10.16.0' };
  fs.writeFileSync(gpuFile, packProgramFile(m, blobs));
}, 60_000);

test('a reference program: no device requirement, its I/O and segments', async () => {
  const report = await inspectProgramFile(file, []);
  expect(report).toMatchObject({
    format: 'tensorrt-node program',
    formatVersion: '1.3',
    backend: 'reference',
    needsGpu: false,
    inputs: [{ name: 'input0', dtype: 'float32', shape: '[4, 32]' }],
    outputs: [{ name: 'output0', dtype: 'float32', shape: '[4, 10]' }],
    checksumsVerified: true,
  });
  expect(report.segments.map((s) => [s.index, s.kind, s.blob])).toEqual([
    [0, 'engine', 'engines/segment0.engine'],
    [1, 'fallback', 'graphs/segment1.graph'],
    [2, 'engine', 'engines/segment2.engine'],
  ]);
  expect(report.engines.map((e) => [e.segment, e.device.type, e.here])).toEqual([
    [0, 'cpu', undefined],
    [2, 'cpu', undefined],
  ]);
  const text = formatInspectReport(report);
  expect(text).toContain(`${file}: tensorrt-node program, format version 1.3, written by tensorrt-node`);
  expect(text).toContain('device requirements: none (every engine runs on the CPU)');
  expect(text).toContain('  input0: float32[4, 32]');
  expect(text).toContain('  0: engine (reference), engines/segment0.engine');
  expect(text).toContain('  1: fallback graph, graphs/segment1.graph');
  expect(text).toContain('blobs: 3, SHA-256 verified');
});

test('a GPU-bound program: what it needs, and what this machine would do', async () => {
  const none = await inspectProgramFile(gpuFile, []);
  expect(none.needsGpu).toBe(true);
  expect(none.engines[0]).toMatchObject({
    segment: 0,
    needs: 'a GPU with compute capability 9.0 (hardware compatibility "none"; built on device 0 "NVIDIA H200" with tensorrt 10.16.0)',
    here: {
      error: 'Unable to deserialize program: engines were built for compute capability 9.0, but no device with compute capability 9.0 is available (found: no CUDA device)',
    },
  });
  expect(formatInspectReport(none)).toContain('    here: cannot run: Unable to deserialize program: engines were built for compute capability 9.0');
  const h = await inspectProgramFile(gpuFile, [TEST_H200]);
  expect(h.engines[0]!.here).toEqual({ device: 0, name: 'NVIDIA H200', reason: 'the only compatible device', warnings: [] });
  expect(formatInspectReport(h)).toContain('    here: device 0 "NVIDIA H200" (the only compatible device)');
  // Without an injected list, the real (empty, GPU-less) device list is used.
  expect((await inspectProgramFile(gpuFile)).engines[0]!.here).toHaveProperty('error');
});

test('a damaged file is E_BAD_PROGRAM', async () => {
  const bad = path.join(tmp, 'bad.trtp');
  fs.writeFileSync(bad, fs.readFileSync(file).subarray(0, 1000));
  await expect(inspectProgramFile(bad)).rejects.toThrow(BadProgramError);
});

describe('the CLI (dist/)', () => {
  const run = (...args: string[]) => runCli(args);

  test('inspect prints text, --json prints the report', () => {
    if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build:ts` first');
    const text = run('inspect', gpuFile);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('device requirements: a GPU');
    expect(text.stdout).toContain('segments:');
    const json = run('inspect', file, '--json');
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as { manifest: { formatVersion: string }; segments: Array<{ kind: string; backend?: string }>; inputs: unknown[] };
    expect(report.manifest.formatVersion).toBe('1.3');
    expect(report.segments.map((s) => [s.kind, s.backend])).toEqual([['engine', 'reference'], ['fallback', undefined], ['engine', 'reference']]);
    expect(report.inputs).toEqual([{ name: 'input0', value: 'input0', dtype: 'float32', shape: '[4, 32]' }]);
  });

  test('a damaged file: exit 1 with the typed error', () => {
    const bad = path.join(tmp, 'bad2.trtp');
    fs.writeFileSync(bad, fs.readFileSync(file).subarray(0, 1000));
    const r = run('inspect', bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tensorrt-node: \[E_BAD_PROGRAM\] program file ".*bad2\.trtp": not a program file/);
  });
});
