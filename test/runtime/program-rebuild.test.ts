/**
 * Programs that travel (lib/runtime/program-file/rebuild.ts): a program file keeps each
 * engine's Network and build settings (format 1.3), and loadProgram() builds an engine again
 * where the stored one cannot run here or another backend is asked for, with a warning naming
 * both; `rebuild: 'never'` refuses typed at load. Answers are compared with the program as it
 * was compiled (onnxruntime) and with the reference backend.
 */
import * as path from 'node:path';
import { unzipSync, zipSync } from 'fflate';

import { buildCudaEngine } from '../../lib/backends/cuda/build';
import { cudaBackend } from '../../lib/backends/cuda';
import { compile } from '../../lib/compile';
import { DEFAULT_BUILD_CONFIG } from '../../lib/engine/build-config';
import { Tensor } from '../../lib/ir/tensor';
import { serializeNetworkToBuffer } from '../../lib/network/serialize';
import type { PartitionReport } from '../../lib/partitioning/partition';
import { loadProgramBuffer, saveProgramBuffer } from '../../lib/runtime/program-file';
import type { Program } from '../../lib/runtime/program';
import type { ProgramData } from '../../lib/runtime/segments';
import { fakeCompiler, fakeLowering, staticNetwork } from '../backends/cuda/helpers';
import { rejection } from '../helpers/errors';
import { h200EngineDevice } from '../helpers/devices';
import { FIXTURES } from '../helpers/fixtures';

const MLP = path.join(FIXTURES, 'mlp', 'model.onnx');
const X = Tensor.from('float32', [2, 32], Array.from({ length: 64 }, (_, i) => Math.sin(i)));

let ortBytes: Uint8Array;
let ortAnswer: number[];
const programs: Program[] = [];
const keep = (p: Program): Program => (programs.push(p), p);

beforeAll(async () => {
  const program = await compile(MLP, { backend: 'onnxruntime', inputs: { input0: { shape: [2, 32] } } });
  try {
    ortBytes = saveProgramBuffer(program);
    ortAnswer = Array.from((await program.run([X]))[0]!.toArray() as number[]);
  } finally {
    await program.dispose();
  }
});

afterEach(async () => {
  await Promise.all(programs.splice(0).map((p) => p.dispose()));
});

/** The manifest of a program file, for looking into it. */
const manifestOf = (bytes: Uint8Array): Record<string, any> => JSON.parse(new TextDecoder().decode(unzipSync(bytes)['manifest.json']!));

function logged(): { log: (level: string, message: string) => void; warnings: string[] } {
  const warnings: string[] = [];
  return { log: (level, message) => void (level === 'warn' && warnings.push(message)), warnings };
}

describe('engine sources in program files', () => {
  test('compile() keeps the network and build settings of an onnxruntime engine; the file says format 1.3', () => {
    const m = manifestOf(ortBytes);
    expect(m.formatVersion).toBe('1.3');
    expect(m.segments[0].source).toEqual({ network: 'networks/segment0.network', build: { precisions: ['fp32'], hardwareCompatibility: 'none', optimizationLevel: 3 } });
    expect(m.blobs['networks/segment0.network'].bytes).toBeGreaterThan(0);
  });

  test('backend asked by name: the engine is rebuilt for it, with a warning naming both, and gives the same answer', async () => {
    const { log, warnings } = logged();
    const program = keep(await loadProgramBuffer(ortBytes, { backend: 'reference', logger: log }, 'program file "mlp.trtp"'));
    expect(program.backend).toBe('reference');
    expect(program.report.backend).toBe('reference');
    expect(warnings).toEqual([
      expect.stringMatching(/^program file "mlp\.trtp": segment 0: the reference backend was asked for; rebuilt its onnxruntime engine for the reference backend from the network the file keeps \(\d+\.\d s, \d+ layers;/),
    ]);
    const got = (await program.run([X]))[0]!.toArray() as number[];
    got.forEach((v, i) => expect(v).toBeCloseTo(ortAnswer[i]!, 5));
    // Saved again, the file holds the rebuilt engine, and still its source.
    const again = manifestOf(saveProgramBuffer(program));
    expect(again.segments[0]).toMatchObject({ backend: 'reference', source: { network: 'networks/segment0.network' } });
    expect(again.backends).toEqual({ reference: expect.any(String) });
  });

  test('the stored engine where it runs: no rebuild, no warning', async () => {
    const { log, warnings } = logged();
    const program = keep(await loadProgramBuffer(ortBytes, { logger: log }));
    expect(program.backend).toBe('onnxruntime');
    expect(warnings).toEqual([]);
  });

  test('rebuild "never" refuses at load, typed, where a rebuild would be needed', async () => {
    const error = await rejection(loadProgramBuffer(ortBytes, { backend: 'reference', rebuild: 'never' }));
    expect(error).toMatchObject({ code: 'E_BACKEND_UNAVAILABLE', details: { backend: 'reference', segment: 0 } });
    expect(error.message).toBe('program buffer: segment 0: the reference backend was asked for, and rebuild is "never"');
  });

  test('bad load options are E_INVALID_ARGUMENT', async () => {
    await expect(loadProgramBuffer(ortBytes, { backend: 'bogus' as never })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('backend must be "auto" or a backend name') });
    await expect(loadProgramBuffer(ortBytes, { rebuild: 'sometimes' as never })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('rebuild must be "auto" or "never"') });
  });

  test('a source in a file that says format 1.2 is refused as malformed', async () => {
    const files = unzipSync(ortBytes);
    const m = JSON.parse(new TextDecoder().decode(files['manifest.json']!));
    m.formatVersion = '1.2';
    files['manifest.json'] = new TextEncoder().encode(JSON.stringify(m));
    const error = await rejection(loadProgramBuffer(zipSync(files)));
    expect(error).toMatchObject({ code: 'E_BAD_PROGRAM' });
    expect(error.message).toContain('segments[0].source: format 1.2 files have no engine sources (they came with format 1.3)');
  });

  test('a source whose build settings are bad is refused as malformed', async () => {
    const files = unzipSync(ortBytes);
    const m = JSON.parse(new TextDecoder().decode(files['manifest.json']!));
    m.segments[0].source.build.precisions = ['fp8'];
    files['manifest.json'] = new TextEncoder().encode(JSON.stringify(m));
    const error = await rejection(loadProgramBuffer(zipSync(files)));
    expect(error).toMatchObject({ code: 'E_BAD_PROGRAM' });
    expect(error.message).toContain('segments[0].source.build: precisions: unknown precision "fp8"');
  });
});

describe('a GPU program where no GPU can run it', () => {
  const H200_RECORD = h200EngineDevice('cuda', cudaBackend.version);

  async function cudaProgram(withSource: boolean): Promise<Uint8Array> {
    const engine = await buildCudaEngine(staticNetwork(), DEFAULT_BUILD_CONFIG, { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } }, { lower: fakeLowering(), compile: fakeCompiler() });
    const { timingCache: _unused, ...build } = DEFAULT_BUILD_CONFIG;
    const data: ProgramData = {
      inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [2, 3] }],
      outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [2, 3] }],
      segments: [{ kind: 'engine', backend: 'cuda', engine, inputs: ['x'], outputs: ['y'], device: H200_RECORD, ...(withSource ? { source: { network: serializeNetworkToBuffer(staticNetwork()), build } } : {}) }],
      constants: {},
    };
    return saveProgramBuffer({ data, report: { ops: [], segments: [] } as unknown as PartitionReport, backend: 'cuda', symbolRanges: new Map() });
  }

  test('no device here: rebuilt for the best CPU backend, with a warning; the answer is exp(x)', async () => {
    const { log, warnings } = logged();
    const program = keep(await loadProgramBuffer(await cudaProgram(true), { availableDevices: [], logger: log }));
    expect(['onnxruntime', 'reference']).toContain(program.backend);
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^program buffer: segment 0: .*no device.*; rebuilt its cuda engine for the ${program.backend} backend`))]);
    const x = Tensor.from('float32', [2, 3], [0, 1, -1, 0.5, 2, -2]);
    const got = (await program.run([x]))[0]!.toArray() as number[];
    got.forEach((v, i) => expect(v).toBeCloseTo(Math.exp(x.toArray()[i] as number), 5));
  });

  test('rebuild "never": E_NO_COMPATIBLE_DEVICE at load, naming the segment', async () => {
    const error = await rejection(loadProgramBuffer(await cudaProgram(true), { availableDevices: [], rebuild: 'never' }));
    expect(error).toMatchObject({ code: 'E_NO_COMPATIBLE_DEVICE', details: { segment: 0 } });
    expect(error.message).toMatch(/^program buffer: segment 0: .*, and rebuild is "never"$/);
  });

  test('a file without sources (before format 1.3) fails as it always has', async () => {
    const error = await rejection(loadProgramBuffer(await cudaProgram(false), { availableDevices: [] }));
    expect(error).toMatchObject({ code: 'E_NO_COMPATIBLE_DEVICE' });
    expect(error.message).toMatch(/^Unable to deserialize program: engines were built for compute capability 9\.0/);
  });
});
