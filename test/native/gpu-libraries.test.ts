/**
 * The loaders of NVRTC, cuBLASLt and cuDNN (native/nvrtc, native/cublaslt, native/cudnn)
 * against fake libraries (fixtures/fake_nvidia_libs.c), and the GPU runtime against the fake
 * CUDA driver: typed errors naming what was searched and how to install it, version checks,
 * NVRTC's compile path and log, and what `doctor` reports. Each scenario runs in its own node
 * process, because the addon opens each library once per process and keeps it.
 */
import * as path from 'node:path';

import { DIST_INDEX, makeTempDir, removeTempDir, requireBuild, runCli, runNode } from '../helpers/built-package';
import { buildFakeCudaLibraries, buildFakeLibrary } from '../helpers/fake-libs';

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;
const BINDING = path.join(path.dirname(DIST_INDEX), 'gpu', 'binding.js');

interface Outcome {
  ok: boolean;
  value?: unknown;
  error?: { name: string; code: string; message: string; details: Record<string, unknown> };
}

/** Runs `body` (an async function body with `b` = the GPU binding, `lib` = the package) in a child. */
function probe(body: string, env: Record<string, string>): Outcome {
  const script = `
    const b = require(${JSON.stringify(BINDING)}).gpuBinding();
    const lib = require(${JSON.stringify(DIST_INDEX)});
    (async () => { ${body} })().then(
      (value) => console.log(JSON.stringify({ ok: true, value })),
      (e) => console.log(JSON.stringify({ ok: false, error: { name: e.name, code: e.code, message: e.message, details: e.details } })));`;
  const result = runNode(['-e', script], env);
  if (result.status !== 0) throw new Error(`probe failed (${result.status}): ${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout) as Outcome;
}

let tmp: string | undefined;
const lib: Record<string, string> = {};

beforeAll(() => {
  requireBuild();
  tmp = makeTempDir('fake-nvidia');
  const build = (name: string, file: string, defines: string[]) => {
    lib[name] = buildFakeLibrary('fake_nvidia_libs.c', tmp!, file, defines);
  };
  build('nvrtc', 'libnvrtc.so.12', ['FAKE_NVRTC']);
  build('nvrtc11', 'libnvrtc11.so', ['FAKE_NVRTC', 'FAKE_VERSION=11080']);
  build('nvrtcNoLog', 'libnvrtc-nolog.so', ['FAKE_NVRTC', 'FAKE_OMIT_SYMBOL']);
  build('cublasLt', 'libcublasLt.so.13', ['FAKE_CUBLASLT']);
  build('cublasLt11', 'libcublasLt11.so', ['FAKE_CUBLASLT', 'FAKE_VERSION=110000']);
  build('cudnn', 'libcudnn.so.9', ['FAKE_CUDNN']);
  build('cudnn8', 'libcudnn8.so', ['FAKE_CUDNN', 'FAKE_VERSION=80900']);
  build('cudnnNoConv', 'libcudnn-noconv.so', ['FAKE_CUDNN', 'FAKE_OMIT_SYMBOL']);
  lib.cuda = buildFakeCudaLibraries(tmp).twoDevices;
}, 60_000);

afterAll(() => removeTempDir(tmp));

describeOnLinux('NVIDIA library loaders', () => {
  test('nothing installed: E_CUDA_LIBRARY_MISSING lists the sonames and toolkit paths tried, and how to install', () => {
    const outcome = probe('return await b.nvrtcInfo();', { CUDA_HOME: '/nonexistent-cuda' });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatchObject({ name: 'CudaLibraryMissingError', code: 'E_CUDA_LIBRARY_MISSING' });
    const tried = outcome.error!.details.tried as string[];
    expect(tried.map((t) => t.split(':')[0])).toEqual([
      'libnvrtc.so.13',
      'libnvrtc.so.12',
      '/nonexistent-cuda/lib64/libnvrtc.so.13',
      '/nonexistent-cuda/lib64/libnvrtc.so.12',
      '/usr/local/cuda/lib64/libnvrtc.so.13',
      '/usr/local/cuda/lib64/libnvrtc.so.12',
    ]);
    expect(outcome.error!.message).toMatch(/Install NVRTC from the CUDA toolkit/);
    expect(outcome.error!.message).toMatch(/TENSORRT_NODE_NVRTC_LIBRARY/);
  });

  test('an override is the only candidate', () => {
    const outcome = probe('return await b.cudnnInfo();', { TENSORRT_NODE_CUDNN_LIBRARY: '/no/such/libcudnn.so.9' });
    expect(outcome.error).toMatchObject({ code: 'E_CUDA_LIBRARY_MISSING', details: { library: 'cudnn' } });
    expect((outcome.error!.details.tried as string[]).map((t) => t.split(':')[0])).toEqual(['/no/such/libcudnn.so.9']);
  });

  test.each([
    ['nvrtc', 'nvrtcInfo', 'TENSORRT_NODE_NVRTC_LIBRARY', 12040],
    ['cublasLt', 'cublasLtInfo', 'TENSORRT_NODE_CUBLASLT_LIBRARY', 130100],
    ['cudnn', 'cudnnInfo', 'TENSORRT_NODE_CUDNN_LIBRARY', 91400],
  ])('%s loads and reports its version', (name, fn, envVar, version) => {
    const outcome = probe(`return await b.${fn}();`, { [envVar]: lib[name]! });
    expect(outcome).toEqual({ ok: true, value: { libraryPath: lib[name], version } });
  });

  test.each([
    ['nvrtc11', 'nvrtcInfo', 'TENSORRT_NODE_NVRTC_LIBRARY', /is NVRTC 11\.8, and 12\.0 or newer is needed/],
    ['cublasLt11', 'cublasLtInfo', 'TENSORRT_NODE_CUBLASLT_LIBRARY', /reports version 110000, and cuBLASLt 12\.x or 13\.x is needed/],
    ['cudnn8', 'cudnnInfo', 'TENSORRT_NODE_CUDNN_LIBRARY', /reports version 80900, and cuDNN 9 is needed/],
    ['nvrtcNoLog', 'nvrtcInfo', 'TENSORRT_NODE_NVRTC_LIBRARY', /lacks nvrtcGetProgramLog/],
    ['cudnnNoConv', 'cudnnInfo', 'TENSORRT_NODE_CUDNN_LIBRARY', /lacks cudnnConvolutionForward/],
  ])('%s is refused with the reason', (name, fn, envVar, message) => {
    const outcome = probe(`return await b.${fn}();`, { [envVar]: lib[name]! });
    expect(outcome.error).toMatchObject({ code: 'E_CUDA_LIBRARY_MISSING' });
    expect(outcome.error!.message).toMatch(message);
    expect(outcome.error!.message).toContain(lib[name]!);
  });

  test('NVRTC compiles for the architecture asked, and a compile error is E_NVRTC_COMPILE with the log', () => {
    const outcome = probe(
      `const ok = await b.nvrtcCompile('__global__ void k() {}', 'good.cu', 90, ['--minimal']);
       let failure;
       try { await b.nvrtcCompile('#error no', 'bad.cu', 90, []); } catch (e) { failure = { name: e.name, code: e.code, message: e.message, log: e.details.log, arch: e.details.arch }; }
       return { cubin: Buffer.from(ok.cubin).toString(), failure };`,
      { TENSORRT_NODE_NVRTC_LIBRARY: lib.nvrtc! },
    );
    expect(outcome.value).toEqual({
      cubin: 'FAKECUBIN sm_90',
      failure: {
        name: 'NvrtcCompileError',
        code: 'E_NVRTC_COMPILE',
        message: 'NVRTC could not compile bad.cu for sm_90:\nbad.cu(1): error: #error directive: fake failure\n',
        log: 'bad.cu(1): error: #error directive: fake failure\n',
        arch: 'sm_90',
      },
    });
  });

  test('a driver without the runtime entry points: device memory is E_CUDA_MISSING naming them', () => {
    const outcome = probe('return await lib.DeviceTensor.allocate("float32", [4], 0);', { TENSORRT_NODE_CUDA_LIBRARY: lib.cuda! });
    expect(outcome.error).toMatchObject({ code: 'E_CUDA_MISSING' });
    expect(outcome.error!.message).toMatch(/lacks cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemGetInfo_v2/);
    expect(outcome.error!.details.missingSymbols).toContain('cuGraphInstantiateWithFlags');
  });

  test('doctor lists each library: found with its version, or not found with the code', () => {
    const env = { TENSORRT_NODE_NVRTC_LIBRARY: lib.nvrtc!, TENSORRT_NODE_CUBLASLT_LIBRARY: lib.cublasLt11!, TENSORRT_NODE_CUDNN_LIBRARY: lib.cudnn! };
    const text = runCli(['doctor'], env);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(`nvrtc         12.4 (${lib.nvrtc})`);
    expect(text.stdout).toContain('cublasLt      not found [E_CUDA_LIBRARY_MISSING]');
    expect(text.stdout).toContain(`cudnn         9.14.0 (${lib.cudnn})`);
    const json = JSON.parse(runCli(['doctor', '--json'], env).stdout) as { gpu: { libraries: unknown[]; memory: unknown[] } };
    expect(json.gpu.libraries).toEqual([
      { name: 'nvrtc', found: true, path: lib.nvrtc, version: '12.4', error: null },
      expect.objectContaining({ name: 'cublasLt', found: false, path: null, version: null, error: expect.objectContaining({ code: 'E_CUDA_LIBRARY_MISSING' }) }),
      { name: 'cudnn', found: true, path: lib.cudnn, version: '9.14.0', error: null },
    ]);
    expect(json.gpu.memory).toEqual([]);
  });
});
