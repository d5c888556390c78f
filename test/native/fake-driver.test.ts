/**
 * The addon's CUDA driver and TensorRT probes against fake libraries (fixtures/fake_cuda.c,
 * fixtures/fake_nvinfer.c), so the whole path (dlopen, symbol resolution, driver calls on
 * the thread pool, typed errors, JS formatting, CLI exit codes) is covered on machines
 * without a GPU. Each scenario runs in its own `node` process: the addon opens the driver
 * once per process and keeps it (native/cuda/driver.cc LoadDriver).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import {
  makeTempDir,
  removeTempDir,
  requireBuild,
  runCli,
  runProbe,
  type ChildResult,
  type ProbeOutcome,
  type SerializedError,
} from '../helpers/built-package';
import { FAKE_A100, FAKE_H200 } from '../helpers/devices';
import { buildFakeCudaLibraries, buildFakeLibrary, type FakeCudaScenario } from '../helpers/fake-libs';
import type { DeviceProbe, DeviceReport } from '../../lib/devices';
import type { DoctorReport } from '../../lib/doctor';
import type { TensorRTStatus } from '../../lib/tensorrt';

// The fakes are ELF shared objects built with gcc and opened with dlopen.
const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

// Where a real driver would be found by the default search; the "no driver" cases only make
// sense where it is absent (CI, this development machine).
const SYSTEM_LIBCUDA = '/usr/lib/x86_64-linux-gnu/libcuda.so.1';
const noSystemDriver = !fs.existsSync(SYSTEM_LIBCUDA);
const testWithoutDriver = noSystemDriver ? test : test.skip;

let tmp: string | undefined;
let cuda: Record<FakeCudaScenario, string>;
let nvinfer: string;
let nvinfer8: string;
let notNvinfer: string;

beforeAll(() => {
  requireBuild();
  tmp = makeTempDir('fake-driver');
  cuda = buildFakeCudaLibraries(tmp);
  nvinfer = buildFakeLibrary('fake_nvinfer.c', tmp, 'libnvinfer.so.10');
  notNvinfer = buildFakeLibrary('fake_nvinfer.c', tmp, 'libnotnvinfer.so', ['FAKE_OMIT_VERSION']);
  nvinfer8 = buildFakeLibrary('fake_nvinfer.c', tmp, 'libnvinfer8.so', ['FAKE_INFER_VERSION=8601']);
}, 60_000);

afterAll(() => removeTempDir(tmp));

function devicesWith(library: string): ProbeOutcome<DeviceReport> {
  return runProbe<ProbeOutcome<DeviceReport>>('devices', { TENSORRT_NODE_CUDA_LIBRARY: library });
}

/** The error of an outcome that must have failed (fails the test with the value otherwise). */
function errorOf(outcome: ProbeOutcome): SerializedError {
  if (outcome.ok) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  return outcome.error;
}

function cli(args: string[], env: Record<string, string> = {}): ChildResult {
  return runCli(args, env);
}

function cliJson<T>(args: string[], env: Record<string, string> = {}): { status: number | null; json: T; stdout: string } {
  const result = cli([...args, '--json'], env);
  if (result.signal !== null) throw new Error(`CLI killed by ${result.signal}: ${result.stderr}`);
  return { status: result.status, json: JSON.parse(result.stdout) as T, stdout: result.stdout };
}

const DOCTOR_KEYS = ['addon', 'backends', 'cuda', 'defaultBackend', 'gpu', 'nccl', 'node', 'onnxruntimeNode', 'tensorrt', 'tensorrtNode'];

describeOnLinux('devices() with a fake CUDA driver', () => {
  test('two devices: driver version, library path and every device field', () => {
    const outcome = devicesWith(cuda.twoDevices);
    if (!outcome.ok) throw new Error(`devices() rejected: ${JSON.stringify(outcome.error)}`);
    expect(outcome.value).toEqual({
      driver: { version: '13.0', versionNumber: 13000, library: cuda.twoDevices },
      devices: [FAKE_H200, FAKE_A100],
    });
  });

  test('cuInit returning CUDA_ERROR_NO_DEVICE is E_NO_DEVICE naming the library', () => {
    const error = errorOf(devicesWith(cuda.initNoDevice));
    expect(error).toMatchObject({ name: 'NoDeviceError', code: 'E_NO_DEVICE', isTensorRTNodeError: true });
    expect(error.message).toContain(cuda.initNoDevice);
    expect(error.message).toContain('CUDA 13.0');
    expect(error.message).toContain('found no CUDA-capable device');
    // probeDevices() rebuilds the driver description from these two details.
    expect(error.details).toEqual({ library: cuda.initNoDevice, driverVersion: 13000 });
  });

  test('a device count of zero is E_NO_DEVICE naming the library', () => {
    const error = errorOf(devicesWith(cuda.zeroDevices));
    expect(error).toMatchObject({ name: 'NoDeviceError', code: 'E_NO_DEVICE', isTensorRTNodeError: true });
    expect(error.message).toContain(cuda.zeroDevices);
    expect(error.message).toContain('reports zero devices');
    expect(error.details).toEqual({ library: cuda.zeroDevices, driverVersion: 13000 });
  });

  test('a failing driver call is E_CUDA naming the call, the CUDA error and the device', () => {
    const error = errorOf(devicesWith(cuda.nameFails));
    expect(error).toMatchObject({ name: 'CudaError', code: 'E_CUDA', isTensorRTNodeError: true });
    // The driver answered its version before the call failed, so the error still names it.
    expect(error.details).toEqual({
      call: 'cuDeviceGetName',
      cudaError: 'CUDA_ERROR_UNKNOWN',
      cudaErrorCode: 999,
      library: cuda.nameFails,
      driverVersion: 13000,
    });
    expect(error.message).toContain('cuDeviceGetName failed with CUDA_ERROR_UNKNOWN (unknown error)');
    expect(error.message).toContain('device 0');
  });

  test('a driver without cuDeviceGetUuid_v2 is E_CUDA_MISSING naming the symbol', () => {
    const error = errorOf(devicesWith(cuda.noUuidV2));
    expect(error).toMatchObject({ name: 'CudaMissingError', code: 'E_CUDA_MISSING', isTensorRTNodeError: true });
    expect(error.details).toEqual({ library: cuda.noUuidV2, missingSymbols: ['cuDeviceGetUuid_v2'] });
    expect(error.message).toContain(cuda.noUuidV2);
    expect(error.message).toContain('cuDeviceGetUuid_v2');
    expect(error.message).toContain('Update the NVIDIA driver');
  });

  test('an override naming a file that does not exist is E_CUDA_MISSING and tries nothing else', () => {
    const missing = path.join(tmp!, 'no-such-libcuda.so.1');
    const error = errorOf(devicesWith(missing));
    expect(error).toMatchObject({ name: 'CudaMissingError', code: 'E_CUDA_MISSING' });
    const tried = error.details?.tried as string[];
    expect(tried).toHaveLength(1);
    expect(tried[0]).toMatch(new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
  });

  testWithoutDriver('with no override and no libcuda installed: E_CUDA_MISSING listing libcuda.so.1', () => {
    const error = errorOf(runProbe<ProbeOutcome>('devices'));
    expect(error).toMatchObject({ name: 'CudaMissingError', code: 'E_CUDA_MISSING', isTensorRTNodeError: true });
    const tried = error.details?.tried as string[];
    expect(tried.map((t) => t.split(':')[0])).toEqual(['libcuda.so.1', 'libcuda.so']);
    expect(error.message).toContain('libcuda.so.1');
    expect(error.message).toContain('TENSORRT_NODE_CUDA_LIBRARY');
  });
});

describeOnLinux('tensorrt-node devices (CLI) with a fake CUDA driver', () => {
  test('--json lists both devices and exits 0', () => {
    const { status, json } = cliJson<DeviceProbe>(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.twoDevices });
    expect(status).toBe(0);
    expect(Object.keys(json).sort()).toEqual(['devices', 'driver', 'error', 'memory', 'ok']);
    // This driver has no runtime entry points: no device can report free memory.
    expect(json).toEqual({
      ok: true,
      driver: { version: '13.0', versionNumber: 13000, library: cuda.twoDevices },
      devices: [FAKE_H200, FAKE_A100],
      error: null,
      memory: [],
    });
  });

  test('the table lists both devices and exits 0', () => {
    const result = cli(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.twoDevices });
    expect(result.status).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`CUDA driver 13.0 (${cuda.twoDevices})`);
    expect(lines[1]).toMatch(/^#\s+name\s+cc\s+memory\s+free\s+SMs\s+PCI bus\s+UUID$/);
    expect(lines[2]!.split(/\s{2,}/)).toEqual(['0', 'NVIDIA H200', '9.0', '140.4 GiB', '?', '132', '0000:19:00.0', FAKE_H200.uuid]);
    expect(lines[3]!.split(/\s{2,}/)).toEqual(['1', 'NVIDIA A100-SXM4-80GB', '8.0', '79.3 GiB', '?', '108', '0000:3B:00.0', FAKE_A100.uuid]);
    expect(lines).toHaveLength(4);
  });

  test('a driver with the runtime entry points: free and total memory per device (cuMemGetInfo in each primary context)', () => {
    // The fake reports free = total - (ordinal + 1) × 2 GiB.
    const { status, json } = cliJson<DeviceProbe & { memory: unknown[] }>(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.withRuntime });
    expect(status).toBe(0);
    expect(json.memory).toEqual([
      { device: 0, freeBytes: 150754820096 - 2 * 2 ** 30, totalBytes: 150754820096 },
      { device: 1, freeBytes: 85100068864 - 4 * 2 ** 30, totalBytes: 85100068864 },
    ]);
    const lines = cli(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.withRuntime }).stdout.trimEnd().split('\n');
    // 148607336448 B = 138.4 GiB; 80805101568 B = 75.3 GiB.
    expect(lines[2]!.split(/\s{2,}/).slice(3, 5)).toEqual(['140.4 GiB', '138.4 GiB']);
    expect(lines[3]!.split(/\s{2,}/).slice(3, 5)).toEqual(['79.3 GiB', '75.3 GiB']);
  });

  test('no device: --json reports the driver and the error, exit 2', () => {
    const { status, json } = cliJson<DeviceProbe>(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.initNoDevice });
    expect(status).toBe(2);
    expect(Object.keys(json).sort()).toEqual(['devices', 'driver', 'error', 'memory', 'ok']);
    expect(json).toMatchObject({
      ok: false,
      driver: { version: '13.0', versionNumber: 13000, library: cuda.initNoDevice },
      devices: [],
      error: { code: 'E_NO_DEVICE' },
    });
  });

  test('no device: the text names the code and exits 2', () => {
    const result = cli(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.initNoDevice });
    expect(result.status).toBe(2);
    expect(result.stdout).toContain('No CUDA device available [E_NO_DEVICE]');
  });

  test('a failing driver call exits 1', () => {
    const { status, json } = cliJson<DeviceProbe>(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.nameFails });
    expect(status).toBe(1);
    expect(json).toMatchObject({
      ok: false,
      driver: { version: '13.0', versionNumber: 13000, library: cuda.nameFails },
      devices: [],
      error: { code: 'E_CUDA' },
    });
    expect(cli(['devices'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.nameFails }).status).toBe(1);
  });

  testWithoutDriver('no driver at all: --json and text exit 2', () => {
    const { status, json } = cliJson<DeviceProbe>(['devices']);
    expect(status).toBe(2);
    expect(Object.keys(json).sort()).toEqual(['devices', 'driver', 'error', 'memory', 'ok']);
    expect(json).toMatchObject({ ok: false, driver: null, devices: [], error: { code: 'E_CUDA_MISSING' } });
    const text = cli(['devices']);
    expect(text.status).toBe(2);
    expect(text.stdout).toContain('No CUDA device available [E_CUDA_MISSING]');
  });
});

describeOnLinux('tensorrt-node doctor (CLI) with fake libraries', () => {
  // doctor reports, it does not judge: it exits 0 whatever is missing.
  test('two devices: exit 0, every section present, onnxruntime backend (a devDependency here)', () => {
    const { status, json } = cliJson<DoctorReport>(['doctor'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.twoDevices });
    expect(status).toBe(0);
    expect(Object.keys(json).sort()).toEqual(DOCTOR_KEYS);
    expect(json.cuda).toEqual({
      ok: true,
      driver: { version: '13.0', versionNumber: 13000, library: cuda.twoDevices },
      devices: [FAKE_H200, FAKE_A100],
      error: null,
    });
    expect(json.addon).toMatchObject({ loaded: true, source: 'build/Release' });
    expect(json.defaultBackend).toBe('onnxruntime');
  });

  test('two devices: the text report lists the driver and each GPU, exit 0', () => {
    const result = cli(['doctor'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.twoDevices });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`CUDA driver   CUDA 13.0 (${cuda.twoDevices})`);
    expect(result.stdout).toContain('GPU 0         NVIDIA H200, compute capability 9.0, 140.4 GiB, 132 SMs');
    expect(result.stdout).toContain('GPU 1         NVIDIA A100-SXM4-80GB, compute capability 8.0');
    expect(result.stdout).toContain('Default       onnxruntime backend');
  });

  test('no device: exit 0, the driver is reported, cuda.error is E_NO_DEVICE', () => {
    const { status, json } = cliJson<DoctorReport>(['doctor'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.initNoDevice });
    expect(status).toBe(0);
    expect(Object.keys(json).sort()).toEqual(DOCTOR_KEYS);
    expect(json.cuda).toMatchObject({ ok: false, driver: { library: cuda.initNoDevice }, error: { code: 'E_NO_DEVICE' } });
    expect(json.defaultBackend).toBe('onnxruntime');
    const text = cli(['doctor'], { TENSORRT_NODE_CUDA_LIBRARY: cuda.initNoDevice });
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('GPUs          none [E_NO_DEVICE]');
  });

  testWithoutDriver('no driver: exit 0, cuda.error is E_CUDA_MISSING', () => {
    const { status, json } = cliJson<DoctorReport>(['doctor']);
    expect(status).toBe(0);
    expect(Object.keys(json).sort()).toEqual(DOCTOR_KEYS);
    expect(json.cuda).toMatchObject({ ok: false, driver: null, error: { code: 'E_CUDA_MISSING' } });
    expect(json.defaultBackend).toBe('onnxruntime');
    const text = cli(['doctor']);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('CUDA driver   not available [E_CUDA_MISSING]');
  });

  test('a fake libnvinfer is found with its version; the backend is not built, so not available', () => {
    const { status, json } = cliJson<DoctorReport>(['doctor'], {
      TENSORRT_NODE_CUDA_LIBRARY: cuda.twoDevices,
      TENSORRT_NODE_TENSORRT_LIBRARY: nvinfer,
    });
    expect(status).toBe(0);
    const tensorrt = json.tensorrt as TensorRTStatus;
    expect(tensorrt).toEqual({ library: { found: true, path: nvinfer, version: '10.16.0' }, backendBuilt: false, available: false });
    // A GPU and libnvinfer are not enough: without the compiled backend compile() stays on the CPU (onnxruntime, a devDependency here).
    expect(json.defaultBackend).toBe('onnxruntime');
  });

  test('findTensorRTLibrary() reads the fake libnvinfer', () => {
    const outcome = runProbe<ProbeOutcome>('tensorrt', { TENSORRT_NODE_TENSORRT_LIBRARY: nvinfer });
    expect(outcome).toEqual({ ok: true, value: { path: nvinfer, version: '10.16.0' } });
  });

  test('a library without getInferLibVersion is reported as not found, E_TENSORRT_MISSING', () => {
    const { status, json } = cliJson<DoctorReport>(['doctor'], { TENSORRT_NODE_TENSORRT_LIBRARY: notNvinfer });
    expect(status).toBe(0);
    const tensorrt = json.tensorrt as TensorRTStatus;
    expect(tensorrt.library).toMatchObject({ found: false, code: 'E_TENSORRT_MISSING' });
    if (tensorrt.library.found) throw new Error('unreachable');
    expect(tensorrt.library.reason).toContain(notNvinfer);
    expect(tensorrt.library.reason).toContain('getInferLibVersion');
    expect(tensorrt.available).toBe(false);

    const error = errorOf(runProbe<ProbeOutcome>('tensorrt', { TENSORRT_NODE_TENSORRT_LIBRARY: notNvinfer }));
    expect(error).toMatchObject({ name: 'TensorRTMissingError', code: 'E_TENSORRT_MISSING', details: { library: notNvinfer } });
  });

  test('TensorRT 8 (version 8601, the old encoding) is refused by name: tensorrt-node needs TensorRT 10', () => {
    const error = errorOf(runProbe<ProbeOutcome>('tensorrt', { TENSORRT_NODE_TENSORRT_LIBRARY: nvinfer8 }));
    expect(error).toMatchObject({ code: 'E_TENSORRT_MISSING', details: { library: nvinfer8, foundVersion: '8.6.1' } });
    expect(error.message).toContain('TensorRT 8.6.1');
    expect(error.message).toContain('needs TensorRT 10');
  });
});
