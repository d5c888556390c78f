/**
 * How the addon is found and loaded (lib/native.ts) and that it behaves as a per-environment
 * Node-API addon. Every case runs in a child process: a loaded .node file cannot be unloaded,
 * and getAddon() remembers the first outcome for the life of the process.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  BUILT_ADDON,
  makeTempDir,
  removeTempDir,
  requireBuild,
  runCli,
  runProbe,
  type ProbeOutcome,
  type SerializedError,
} from '../helpers/built-package';
import { buildFakeLibrary } from '../helpers/fake-libs';
import type { DeviceReport } from '../../lib/devices';
import type { DoctorReport } from '../../lib/doctor';

interface Loaded {
  path: string;
  source: string;
  info: { bindingAbi: number; napiVersion: number; tensorrtBackend: boolean };
}

interface LazyOutcome {
  imported: ProbeOutcome<number>;
  first: SerializedError | null;
  sameErrorObject: boolean;
}

interface WorkersOutcome {
  before: ProbeOutcome<DeviceReport>;
  workers: { exitCode: number; result: ProbeOutcome<DeviceReport> | undefined }[];
  after: ProbeOutcome<DeviceReport>;
}

function errorOf(outcome: ProbeOutcome): SerializedError {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  return outcome.error;
}

let tmp: string | undefined;

beforeAll(() => {
  requireBuild();
  tmp = makeTempDir('loader');
});

afterAll(() => removeTempDir(tmp));

describe('loadAddon', () => {
  test('finds the node-gyp build in build/Release and checks its binding ABI', () => {
    const outcome = runProbe<ProbeOutcome<Loaded>>('load-addon');
    if (!outcome.ok) throw new Error(`loadAddon failed: ${JSON.stringify(outcome.error)}`);
    expect(outcome.value.source).toBe('build/Release');
    expect(outcome.value.path).toBe(BUILT_ADDON);
    // BINDING_ABI in lib/native.ts must equal kBindingAbi in native/addon.cc.
    expect(outcome.value.info.bindingAbi).toBe(1);
    expect(outcome.value.info.napiVersion).toBeGreaterThanOrEqual(8);
    expect(outcome.value.info.tensorrtBackend).toBe(false);
  });

  test('TENSORRT_NODE_BINARY naming the built addon is used and reported as the source', () => {
    const copy = path.join(tmp!, 'copied.node');
    fs.copyFileSync(BUILT_ADDON, copy);
    const outcome = runProbe<ProbeOutcome<Loaded>>('load-addon', { TENSORRT_NODE_BINARY: copy });
    expect(outcome).toMatchObject({ ok: true, value: { path: copy, source: 'TENSORRT_NODE_BINARY' } });
  });

  test('TENSORRT_NODE_BINARY naming a missing file is E_ADDON_LOAD naming the path', () => {
    const missing = path.join(tmp!, 'missing', 'tensorrt_node.node');
    const error = errorOf(runProbe<ProbeOutcome>('load-addon', { TENSORRT_NODE_BINARY: missing }));
    expect(error).toMatchObject({ name: 'NativeAddonLoadError', code: 'E_ADDON_LOAD', isTensorRTNodeError: true });
    expect(error.message).toContain(missing);
    expect(error.message).toContain('TENSORRT_NODE_BINARY');
    expect(error.details?.tried).toEqual([missing]);
  });

  test('a file that is not a shared object is E_ADDON_LOAD "failed to load", with the cause chained', () => {
    const garbage = path.join(tmp!, 'x.node');
    fs.writeFileSync(garbage, randomBytes(4096));
    const error = errorOf(runProbe<ProbeOutcome>('load-addon', { TENSORRT_NODE_BINARY: garbage }));
    expect(error).toMatchObject({ name: 'NativeAddonLoadError', code: 'E_ADDON_LOAD', hasCause: true });
    expect(error.message).toContain(`${garbage} (found via TENSORRT_NODE_BINARY) failed to load`);
    expect(error.message).toContain('npm run build:native');
    expect(error.details?.tried).toEqual([garbage]);
  });

  test('a shared object that is not a Node-API module is E_ADDON_LOAD "failed to load"', () => {
    // dlopen succeeds here, unlike for random bytes; Node then finds no module registration.
    const notAddon = buildFakeLibrary('fake_nvinfer.c', tmp!, 'not-an-addon.node');
    const error = errorOf(runProbe<ProbeOutcome>('load-addon', { TENSORRT_NODE_BINARY: notAddon }));
    expect(error).toMatchObject({ code: 'E_ADDON_LOAD', hasCause: true });
    expect(error.message).toContain(`${notAddon} (found via TENSORRT_NODE_BINARY) failed to load`);
  });

  test.each([
    ['speaks another binding ABI', 'module.exports = { bindingInfo: () => ({ bindingAbi: 2, napiVersion: 8, tensorrtBackend: false }) };', 'ABI 2'],
    ['has no bindingInfo', 'module.exports = {};', 'ABI unknown'],
  ])('a binary that %s is refused as stale', (_what, source, expected) => {
    // require() also loads .js, which makes a stand-in for a stale binary without a compiler.
    const stale = path.join(tmp!, `stale-${expected.replace(' ', '-')}.js`);
    fs.writeFileSync(stale, source);
    const error = errorOf(runProbe<ProbeOutcome>('load-addon', { TENSORRT_NODE_BINARY: stale }));
    expect(error).toMatchObject({ name: 'NativeAddonLoadError', code: 'E_ADDON_LOAD' });
    expect(error.message).toContain(`speaks binding ${expected}`);
    expect(error.message).toContain('needs 1');
    expect(error.message).toContain('npm run build:native');
  });

  test('TENSORRT_NODE_PREBUILD names the directory searched instead of the package (prebuilds/<platform>-<arch>/)', () => {
    const root = makeTempDir('prebuild-root');
    try {
      const dir = path.join(root, 'prebuilds', `${os.platform()}-${os.arch()}`);
      fs.mkdirSync(dir, { recursive: true });
      const copy = path.join(dir, 'tensorrt-node.napi.node');
      fs.copyFileSync(BUILT_ADDON, copy);
      const outcome = runProbe<ProbeOutcome<Loaded>>('load-addon', { TENSORRT_NODE_PREBUILD: root });
      expect(outcome).toMatchObject({ ok: true, value: { path: copy, source: 'prebuilds' } });
      // An empty directory is searched too (and reported), not silently replaced by the package.
      fs.rmSync(copy);
      const error = errorOf(runProbe<ProbeOutcome>('load-addon', { TENSORRT_NODE_PREBUILD: root }));
      expect(error.message).toContain(`  - ${dir} (no .node file)`);
    } finally {
      removeTempDir(root);
    }
  });

  test('a package root without any binary is E_ADDON_LOAD listing every place and the fix', () => {
    const root = makeTempDir('empty-root');
    try {
      const error = errorOf(runProbe<ProbeOutcome>('load-addon', {}, [root]));
      expect(error).toMatchObject({ name: 'NativeAddonLoadError', code: 'E_ADDON_LOAD', hasCause: true });
      const tuple = `${os.platform()}-${os.arch()}`;
      for (const place of [path.join(root, 'build', 'Release'), path.join(root, 'build', 'Debug'), path.join(root, 'prebuilds', tuple)]) {
        expect(error.message).toContain(`  - ${place} (does not exist)`);
      }
      expect(error.message).toContain(path.join(path.dirname(process.execPath), 'prebuilds', tuple));
      expect(error.message).toContain('npm run build:native');
      expect(error.message).toContain(`platform=${process.platform} arch=${process.arch}`);
      expect(error.details?.tried).toHaveLength(4);
    } finally {
      removeTempDir(root);
    }
  });
});

describe('lazy loading', () => {
  test('importing the package with a broken TENSORRT_NODE_BINARY does not throw; devices() rejects', () => {
    const missing = path.join(tmp!, 'absent.node');
    const outcome = runProbe<LazyOutcome>('lazy-devices', { TENSORRT_NODE_BINARY: missing });
    expect(outcome.imported.ok).toBe(true);
    expect(outcome.first).toMatchObject({ name: 'NativeAddonLoadError', code: 'E_ADDON_LOAD', isTensorRTNodeError: true });
    expect(outcome.first?.message).toContain(missing);
    // The failure is remembered, not retried on every call.
    expect(outcome.sameErrorObject).toBe(true);
  });

  test('the CLI still answers when the addon cannot load: devices exits 1, doctor exits 0', () => {
    const env = { TENSORRT_NODE_BINARY: path.join(tmp!, 'absent.node') };
    const devices = runCli(['devices', '--json'], env);
    expect(devices.status).toBe(1);
    expect(JSON.parse(devices.stdout)).toMatchObject({ ok: false, error: { code: 'E_ADDON_LOAD' } });

    const doctor = runCli(['doctor', '--json'], env);
    expect(doctor.status).toBe(0);
    const report = JSON.parse(doctor.stdout) as DoctorReport;
    expect(report.addon).toMatchObject({ loaded: false, code: 'E_ADDON_LOAD' });
    expect(report.tensorrt).toMatchObject({ error: { code: 'E_ADDON_LOAD' } });
    expect(report.defaultBackend).toBe('onnxruntime');
  });
});

// Napi::Addon keeps per-environment instance data (the error factory among it); each worker
// thread is its own environment that loads the same .node file.
const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

describeOnLinux('worker threads', () => {
  test('devices() answers on the main thread, in two workers at once, and on the main thread after they exit', () => {
    const driver = buildFakeLibrary('fake_cuda.c', tmp!, 'libcuda-workers.so.1');
    const outcome = runProbe<WorkersOutcome>('workers', { TENSORRT_NODE_CUDA_LIBRARY: driver });
    const expectTwoDevices = (result: ProbeOutcome<DeviceReport> | undefined): void => {
      expect(result).toMatchObject({ ok: true, value: { driver: { library: driver } } });
      if (result?.ok) expect(result.value.devices.map((d) => d.name)).toEqual(['NVIDIA H200', 'NVIDIA A100-SXM4-80GB']);
    };
    expectTwoDevices(outcome.before);
    expect(outcome.workers).toHaveLength(2);
    for (const worker of outcome.workers) {
      expect(worker.exitCode).toBe(0);
      expectTwoDevices(worker.result);
    }
    expectTwoDevices(outcome.after);
  });

  test('errors are built by each thread\'s own error classes, also after workers have exited', () => {
    // A process-global error factory would build a worker's error with the main thread's
    // classes (failing instanceof there) or call into a torn-down environment afterwards.
    const outcome = runProbe<WorkersOutcome>('workers', { TENSORRT_NODE_CUDA_LIBRARY: path.join(tmp!, 'no-libcuda.so') });
    const expected = { ok: false, error: { name: 'CudaMissingError', code: 'E_CUDA_MISSING', isTensorRTNodeError: true } };
    expect(outcome.before).toMatchObject(expected);
    for (const worker of outcome.workers) {
      expect(worker.exitCode).toBe(0);
      expect(worker.result).toMatchObject(expected);
    }
    expect(outcome.after).toMatchObject(expected);
  });
});

describeOnLinux('TensorRT absent', () => {
  test('doctor says `TensorRT none`, what was searched and how to install TensorRT (TENSORRT_NODE_TENSORRT_LIBRARY names a missing file)', () => {
    const missing = path.join(tmp!, 'no-such', 'libnvinfer.so.10');
    const text = runCli(['doctor'], { TENSORRT_NODE_TENSORRT_LIBRARY: missing });
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(
      `TensorRT      none (${missing} not found; searched ${missing} (cannot open shared object file: No such file or directory); ` +
        'set TENSORRT_NODE_TENSORRT_LIBRARY to the path of libnvinfer.so.10, or install TensorRT 10 (apt install libnvinfer10, or the TensorRT tar from ' +
        'developer.nvidia.com/tensorrt with its lib folder on LD_LIBRARY_PATH). Until then, `auto` takes the next backend.) [E_TENSORRT_MISSING]',
    );
  });

  test('TENSORRT_LIBRARY, the older name, is still read; TENSORRT_NODE_TENSORRT_LIBRARY wins when both are set', () => {
    const older = path.join(tmp!, 'older', 'libnvinfer.so.10');
    const newer = path.join(tmp!, 'newer', 'libnvinfer.so.10');
    const reason = (env: Record<string, string>): string | undefined => {
      const { status, stdout } = runCli(['doctor', '--json'], env);
      expect(status).toBe(0);
      return (JSON.parse(stdout) as { tensorrt: { library: { reason?: string } } }).tensorrt.library.reason;
    };
    expect(reason({ TENSORRT_LIBRARY: older })).toMatch(new RegExp(`^${older.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} not found; searched `));
    const both = reason({ TENSORRT_LIBRARY: older, TENSORRT_NODE_TENSORRT_LIBRARY: newer });
    expect(both).toContain(`${newer} not found`);
    expect(both).not.toContain(older);
  });

  test('without an override, the reason names the loader path searched (or, on a machine with TensorRT, the library found)', () => {
    const empty = makeTempDir('loader-ld');
    try {
      const { status, stdout } = runCli(['doctor', '--json'], { TENSORRT_LIBRARY: '', LD_LIBRARY_PATH: empty });
      expect(status).toBe(0);
      const library = (JSON.parse(stdout) as DoctorReport & { tensorrt: { library: { found: boolean; reason?: string; path?: string } } }).tensorrt.library;
      if (library.found) {
        expect(library.path).toMatch(/libnvinfer\.so(\.10)?$/);
      } else {
        expect(library.reason).toMatch(
          new RegExp(`^libnvinfer\\.so\\.10 not found; searched the dynamic loader's path \\(LD_LIBRARY_PATH = ${empty.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, the ld\\.so cache, /lib, /usr/lib\\) for libnvinfer\\.so\\.10 \\(.+\\), libnvinfer\\.so \\(.+\\); set TENSORRT_NODE_TENSORRT_LIBRARY to the path`),
        );
      }
    } finally {
      removeTempDir(empty);
    }
  });
});
