/**
 * The doctor's text report: every fact once. The CLI runs (test/native/loader.test.ts,
 * test/native/fake-driver.test.ts) cover the data; here the formatting of hand-built reports.
 */
import { formatDoctorReport, type DoctorReport } from '../lib/doctor';

const ADDON_REASON = 'The tensorrt-node native addon was not found at /nowhere/x.node, the path TENSORRT_NODE_BINARY names.';
const NODE = { version: '20.17.0', napiVersion: 9, platform: 'linux', arch: 'x64', electron: null };

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('formatDoctorReport', () => {
  test('an addon that did not load is explained once; CUDA and TensorRT say they were not checked', () => {
    const failure = { code: 'E_ADDON_LOAD', message: ADDON_REASON };
    const report: DoctorReport = {
      tensorrtNode: { version: '0.1.0' },
      node: NODE,
      addon: { loaded: false, code: 'E_ADDON_LOAD', reason: ADDON_REASON },
      cuda: { ok: false, driver: null, devices: [], error: failure },
      tensorrt: { error: failure },
      gpu: { libraries: [{ name: 'nvrtc', found: false, path: null, version: null, error: failure }], memory: [] },
      defaultBackend: 'reference',
    };
    const text = formatDoctorReport(report);
    expect(occurrences(text, ADDON_REASON)).toBe(1);
    expect(text).toContain('Native addon  not loaded [E_ADDON_LOAD]');
    expect(text).toContain('CUDA driver   not checked (it needs the native addon, which did not load)');
    expect(text).toContain('TensorRT      not checked (it needs the native addon, which did not load)');
    expect(text).toContain('TRT backend   built without TensorRT');
    expect(text).toContain('nvrtc         not checked (it needs the native addon, which did not load)');
    expect(text).toContain('Default       reference backend (CPU)');
  });

  test('with the addon loaded, each probe prints its own failure once, and how to build the TensorRT backend', () => {
    const cudaMessage = 'The CUDA driver library could not be loaded, so no GPU can be used.';
    const trtReason = 'The TensorRT library (libnvinfer) could not be loaded.';
    const report: DoctorReport = {
      tensorrtNode: { version: '0.1.0' },
      node: NODE,
      addon: { loaded: true, path: '/pkg/build/Release/tensorrt_node.node', source: 'build/Release', napiVersion: 9 },
      cuda: { ok: false, driver: null, devices: [], error: { code: 'E_CUDA_MISSING', message: cudaMessage } },
      tensorrt: { library: { found: false, code: 'E_TENSORRT_MISSING', reason: trtReason }, backendBuilt: false, available: false },
      gpu: { libraries: [], memory: [] },
      defaultBackend: 'reference',
    };
    const text = formatDoctorReport(report);
    expect(occurrences(text, cudaMessage)).toBe(1);
    expect(occurrences(text, trtReason)).toBe(1);
    expect(text).toContain('CUDA driver   not available [E_CUDA_MISSING]');
    expect(text).toContain(`TensorRT      none (${trtReason}) [E_TENSORRT_MISSING]`);
    expect(text).toContain('TRT backend   built without TensorRT: rebuild the addon with TENSORRT_ROOT naming a TensorRT 10 install (docs/tensorrt.md)');
    expect(text.split('\n').filter((line) => line.startsWith('TRT backend'))).toHaveLength(1);
  });

  test('a probe failing for its own reason while the addon loaded is still printed', () => {
    const report: DoctorReport = {
      tensorrtNode: { version: '0.1.0' },
      node: NODE,
      addon: { loaded: true, path: '/pkg/x.node', source: 'prebuilds', napiVersion: 9 },
      cuda: { ok: false, driver: null, devices: [], error: { code: 'E_ADDON_LOAD', message: 'worker could not load it' } },
      tensorrt: { error: { code: 'E_INTERNAL', message: 'boom' } },
      gpu: { libraries: [], memory: [] },
      defaultBackend: 'reference',
    };
    const text = formatDoctorReport(report);
    expect(text).toContain('worker could not load it');
    expect(text).toContain('TensorRT      unknown [E_INTERNAL]');
  });

  test('onnxruntime-node: its version when found; missing, the cost and the install line; any other problem, its reason', () => {
    const base: DoctorReport = {
      tensorrtNode: { version: '0.1.0' },
      node: NODE,
      addon: { loaded: true, path: '/pkg/x.node', source: 'prebuilds', napiVersion: 9 },
      cuda: { ok: false, driver: null, devices: [], error: { code: 'E_CUDA_MISSING', message: 'no driver' } },
      tensorrt: { error: { code: 'E_INTERNAL', message: 'boom' } },
      gpu: { libraries: [], memory: [] },
      defaultBackend: 'reference',
    };
    const ortLines = (report: DoctorReport): string[] => formatDoctorReport(report).split('\n').filter((l) => l.startsWith('onnxruntime') || l.includes('install it:'));
    expect(ortLines(base)).toEqual([]); // a report of an older version has no such field
    expect(ortLines({ ...base, onnxruntimeNode: { found: true, version: '1.31.1' } })).toEqual(['onnxruntime   1.31.1 (onnxruntime-node)']);
    const install = 'ONNXRUNTIME_NODE_INSTALL=skip npm install "onnxruntime-node@>=1.30.0 <1.32.0"';
    expect(ortLines({ ...base, onnxruntimeNode: { found: false, problem: 'missing', reason: 'not installed', install } })).toEqual([
      'onnxruntime   onnxruntime-node is not installed: where no GPU backend is usable, `auto` runs engine segments on the reference backend, ' +
        'which computes in JavaScript, 50–100× slower (mobilenet_v3_small at 1×3×96×96, median run: 25–45 ms against 0.25–0.7 ms)',
      `                install it: ${install}`,
    ]);
    const failed = 'onnxruntime-node is installed but failed to load: libonnxruntime.so.1: cannot open shared object file';
    expect(ortLines({ ...base, onnxruntimeNode: { found: false, problem: 'load-failed', reason: failed, install } })).toEqual([`onnxruntime   not usable: ${failed}`]);
  });
});
