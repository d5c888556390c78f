/**
 * Programs with cuda engine segments: the program file records each engine's device (compute
 * capability, name); a file saying 8.0 is refused on an H200 with the no-compatible-device
 * message (naming the devices found); the `device` load option and program.to() place the
 * engines, and the placement reaches the backend's load(); selection warnings reach the
 * logger. Devices are injected: nothing here needs a GPU.
 */
import { zipSync, unzipSync } from 'fflate';

import { cudaBackend } from '../../../lib/backends/cuda';
import { buildCudaEngine } from '../../../lib/backends/cuda/build';
import { DEFAULT_BUILD_CONFIG } from '../../../lib/engine/build-config';
import type { CudaDevice } from '../../../lib/devices';
import { NoCompatibleDeviceError } from '../../../lib/errors';
import type { LogLevel } from '../../../lib/logger';
import type { PartitionReport } from '../../../lib/partitioning/partition';
import { loadSegment } from '../../../lib/runtime/execute';
import { loadProgramBuffer, saveProgramBuffer } from '../../../lib/runtime/program-file';
import { Program } from '../../../lib/runtime/program';
import type { EngineSegment, ProgramData } from '../../../lib/runtime/segments';
import { h200EngineDevice, TEST_H200 } from '../../helpers/devices';
import { rejection } from '../../helpers/errors';
import { fakeCompiler, fakeLowering, staticNetwork } from './helpers';

const H200_RECORD = h200EngineDevice('cuda', cudaBackend.version);
const SECOND_H200: CudaDevice = { ...TEST_H200, ordinal: 1, uuid: 'GPU-11111111-0000-0000-0000-000000000000' };
const H100: CudaDevice = { ...TEST_H200, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-22222222-0000-0000-0000-000000000000' };

let programBytes: Uint8Array;
let programs: Program[] = [];

beforeAll(async () => {
  const engine = await buildCudaEngine(staticNetwork(), DEFAULT_BUILD_CONFIG, { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } }, { lower: fakeLowering(), compile: fakeCompiler() });
  const data: ProgramData = {
    inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [2, 3] }],
    outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [2, 3] }],
    segments: [{ kind: 'engine', backend: 'cuda', engine, inputs: ['x'], outputs: ['y'], device: H200_RECORD }],
    constants: {},
  };
  const report = { ops: [], segments: [] } as unknown as PartitionReport;
  programBytes = saveProgramBuffer({ data, report, backend: 'cuda', symbolRanges: new Map() });
});

afterEach(async () => {
  await Promise.all(programs.map((p) => p.dispose()));
  programs = [];
});

const keep = (p: Program): Program => (programs.push(p), p);

function withManifest(edit: (m: any) => void): Uint8Array {
  const files = unzipSync(programBytes);
  const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
  edit(manifest);
  files['manifest.json'] = new TextEncoder().encode(JSON.stringify(manifest));
  return zipSync(files);
}

describe('cuda engines in program files', () => {
  test('the manifest records the engine\'s device; on an H200 it loads and is placed there', async () => {
    const manifest = JSON.parse(new TextDecoder().decode(unzipSync(programBytes)['manifest.json']));
    expect(manifest.segments[0].device).toEqual(H200_RECORD);
    expect(manifest.backends).toEqual({ cuda: cudaBackend.version });
    const p = keep(await loadProgramBuffer(programBytes, { availableDevices: [TEST_H200] }));
    expect((p.data.segments[0] as EngineSegment).placement).toEqual({ ordinal: 0, name: 'NVIDIA H200', reason: 'the only compatible device' });
  });

  test('an engine that says compute capability 8.0 is refused on an H200 with the no-compatible-device message', async () => {
    const bytes = withManifest((m) => (m.segments[0].device.computeCapability = { major: 8, minor: 0 }));
    const e = await rejection(loadProgramBuffer(bytes, { availableDevices: [TEST_H200] }));
    expect(e).toBeInstanceOf(NoCompatibleDeviceError);
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 8.0, but no device with compute capability 8.0 is available (found: device 0 "NVIDIA H200" (compute capability 9.0))',
    );
  });

  test('the device option places the engine, and the placement is what the backend loads onto', async () => {
    const lines: Array<[LogLevel, string]> = [];
    const p = keep(await loadProgramBuffer(programBytes, { availableDevices: [TEST_H200, SECOND_H200], device: 'cuda:1', logger: (l, m) => lines.push([l, m]) }));
    const seg = p.data.segments[0] as EngineSegment;
    expect(seg.placement).toMatchObject({ ordinal: 1, reason: 'asked for explicitly (device 1)' });
    expect(lines).toEqual([['info', 'program buffer: segment 0 runs on device 1 "NVIDIA H200" (asked for explicitly (device 1))']]);
    const load = jest.spyOn(cudaBackend, 'load').mockRejectedValue(new Error('no GPU in this test'));
    try {
      await expect(loadSegment(seg)).rejects.toThrow('no GPU in this test');
      expect(load.mock.calls[0]![1]).toEqual({ ...H200_RECORD, gpuId: 1 });
    } finally {
      load.mockRestore();
    }
  });

  test('another model of the same compute capability loads, with the selection\'s warning at the logger', async () => {
    const lines: Array<[LogLevel, string]> = [];
    keep(await loadProgramBuffer(programBytes, { availableDevices: [H100], logger: (l, m) => lines.push([l, m]) }));
    expect(lines.filter(([l]) => l === 'warn').map(([, m]) => m)).toEqual([
      'program buffer: segment 0: the engines were built on "NVIDIA H200" and run on device 0 "NVIDIA H100 80GB HBM3" (compute capability 9.0): the same compute capability, but another model, which TensorRT supports with possibly different performance',
    ]);
    await expect(loadProgramBuffer(programBytes, { availableDevices: [H100], logger: 'loud' as never })).rejects.toThrow('load options: logger must be a function');
  });

  test('program.to(device) gives a new program on that device; an absent or incompatible device is refused', async () => {
    const p = keep(await loadProgramBuffer(programBytes, { availableDevices: [TEST_H200, SECOND_H200] }));
    const moved = keep(await p.to(1, { availableDevices: [TEST_H200, SECOND_H200] }));
    expect((moved.data.segments[0] as EngineSegment).placement).toMatchObject({ ordinal: 1 });
    expect((p.data.segments[0] as EngineSegment).placement).toMatchObject({ ordinal: 0 });
    const a100: CudaDevice = { ...TEST_H200, ordinal: 2, name: 'NVIDIA A100', computeCapability: { major: 8, minor: 0 } };
    const e = await rejection(p.to('cuda:2', { availableDevices: [TEST_H200, a100] }));
    expect(e).toBeInstanceOf(NoCompatibleDeviceError);
    expect(e.message).toContain('device 2 was asked for, but engines were built for compute capability 9.0 and device 2 "NVIDIA A100" (compute capability 8.0) cannot run them');
    await expect(p.to(7, { availableDevices: [TEST_H200] })).rejects.toThrow('there is no device 7');
    await expect(p.to('gpu' as never)).rejects.toThrow('program.to(): device must be a CUDA ordinal');
  });
});
