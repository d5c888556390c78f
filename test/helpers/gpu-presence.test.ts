/**
 * The GPU checks' skip decision (./gpu-presence.ts): no GPU here is a skip; a driver that is
 * present but fails, or any sign of NVIDIA hardware the driver cannot reach, is a failure.
 * The pure decision first, then the real probe against fake CUDA drivers (gcc-built, Linux).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { childEnv, makeTempDir, removeTempDir, requireBuild, type ProbeOutcome } from './built-package';
import { buildFakeCudaLibraries, type FakeCudaScenario } from './fake-libs';
import { decideGpuPresence, gpuPresence, type GpuEvidence } from './gpu-presence';

const NOT_FOUND = 'libcuda.so.1: libcuda.so.1: cannot open shared object file: No such file or directory';
const failed = (code: string, message: string, details?: Record<string, unknown>): ProbeOutcome<{ devices: unknown[] }> => ({
  ok: false,
  error: { name: 'Error', code, message, details, isTensorRTNodeError: true, hasCause: false },
});
const evidence = (probe: GpuEvidence['probe'], more: Partial<GpuEvidence> = {}): GpuEvidence => ({
  probe,
  hardware: [],
  driverOverride: false,
  requireGpu: false,
  ...more,
});
const missing = failed('E_CUDA_MISSING', 'The CUDA driver library could not be loaded, so no GPU can be used. Tried:\n  - x', {
  tried: [NOT_FOUND, 'libcuda.so: libcuda.so: cannot open shared object file: No such file or directory'],
});
const noDevice = failed('E_NO_DEVICE', 'The CUDA driver (libcuda.so.1, CUDA 13.0) found no CUDA-capable device.');

describe('decideGpuPresence', () => {
  test('devices found: present', () => {
    expect(decideGpuPresence(evidence({ ok: true, value: { devices: [{}, {}] } }))).toEqual({ kind: 'present', devices: 2 });
  });

  test('no libcuda anywhere and no NVIDIA hardware: absent, with the reason', () => {
    expect(decideGpuPresence(evidence(missing))).toEqual({ kind: 'absent', reason: 'no CUDA driver library (libcuda.so.1) here' });
  });

  test('a driver reporting no device on a machine with no NVIDIA hardware: absent', () => {
    expect(decideGpuPresence(evidence(noDevice))).toEqual({ kind: 'absent', reason: 'the CUDA driver reports no device' });
  });

  test('libcuda present but failing to load is broken, not absent', () => {
    const wrongElf = failed('E_CUDA_MISSING', 'could not be loaded', { tried: ['libcuda.so.1: libcuda.so.1: invalid ELF header', NOT_FOUND] });
    const p = decideGpuPresence(evidence(wrongElf));
    expect(p.kind).toBe('broken');
    expect(p.kind === 'broken' && p.reason).toBe('the CUDA driver library is present but cannot be used (E_CUDA_MISSING: could not be loaded)');
    const tooOld = failed('E_CUDA_MISSING', 'lacks cuDeviceGetUuid_v2', { library: '/usr/lib/libcuda.so.1', missingSymbols: ['cuDeviceGetUuid_v2'] });
    expect(decideGpuPresence(evidence(tooOld)).kind).toBe('broken');
  });

  test('a failing driver call, the addon failing, or the probe crashing is broken', () => {
    for (const code of ['E_CUDA', 'E_ADDON_LOAD', 'E_PROBE']) expect(decideGpuPresence(evidence(failed(code, 'x'))).kind).toBe('broken');
    expect(decideGpuPresence(evidence({ ok: true, value: { devices: [] } })).kind).toBe('broken');
  });

  test('NVIDIA hardware that the driver cannot reach is broken, naming the hardware', () => {
    for (const probe of [missing, noDevice]) {
      const p = decideGpuPresence(evidence(probe, { hardware: ['/dev/nvidia0'] }));
      expect(p).toMatchObject({ kind: 'broken' });
      expect(p.kind === 'broken' && p.reason).toMatch(/although \/dev\/nvidia0 exist/);
    }
  });

  test('a named driver that cannot be opened is broken even when the file is missing', () => {
    expect(decideGpuPresence(evidence(missing, { driverOverride: true })).kind).toBe('broken');
  });

  test('TENSORRT_NODE_REQUIRE_GPU=1 turns absent into a failure', () => {
    const p = decideGpuPresence(evidence(noDevice, { requireGpu: true }));
    expect(p.kind === 'broken' && p.reason).toMatch(/^the CUDA driver reports no device, and TENSORRT_NODE_REQUIRE_GPU=1/);
  });
});

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

describeOnLinux('gpuPresence() with fake CUDA drivers (the real probe, in a child process)', () => {
  let tmp: string | undefined;
  let cuda: Record<FakeCudaScenario, string>;
  beforeAll(() => {
    requireBuild();
    tmp = makeTempDir('gpu-presence');
    cuda = buildFakeCudaLibraries(tmp);
  }, 60_000);
  afterAll(() => removeTempDir(tmp));
  const withDriver = (library: string): ReturnType<typeof gpuPresence> => gpuPresence(childEnv({ TENSORRT_NODE_CUDA_LIBRARY: library }));

  test('a working driver with two devices: present', () => {
    expect(withDriver(cuda.twoDevices)).toEqual({ kind: 'present', devices: 2 });
  });

  test('a driver whose calls fail (libcuda present but failing): broken, naming the failed call', () => {
    const p = withDriver(cuda.nameFails);
    expect(p.kind).toBe('broken');
    expect(p.kind === 'broken' && p.reason).toMatch(/E_CUDA: cuDeviceGetName failed with CUDA_ERROR_UNKNOWN/);
  });

  test('a libcuda.so.1 on the search path that is not a shared library: broken, not skipped', () => {
    const dir = path.join(tmp!, 'bogus');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'libcuda.so.1'), 'not an ELF file');
    const p = gpuPresence(childEnv({ LD_LIBRARY_PATH: dir }));
    expect(p.kind).toBe('broken');
    expect(p.kind === 'broken' && p.reason).toMatch(/^the CUDA driver library is present but cannot be used \(E_CUDA_MISSING: /);
  });

  test('the same file named by TENSORRT_NODE_CUDA_LIBRARY: broken', () => {
    expect(withDriver(path.join(tmp!, 'bogus', 'libcuda.so.1')).kind).toBe('broken');
  });

  test('a driver with no device: absent only where no NVIDIA hardware is visible', () => {
    const p = withDriver(cuda.initNoDevice);
    const hardware = fs.existsSync('/dev/nvidia0');
    expect(p.kind).toBe(hardware ? 'broken' : 'absent');
  });
});
