/**
 * The cuda Backend object (lib/backends/cuda/index.ts) without a GPU: available()'s reasons
 * (injected probes, and the fake CUDA driver of test/native/fixtures in a child process),
 * build() refusals, inspect(), the run-time input checks and the plan cache.
 */
import * as path from 'node:path';

import { checkInputs } from '../../../lib/backends/cuda/plan/bind-inputs';
import { cudaAvailability, cudaBackend, engineTarget, type CudaProbes } from '../../../lib/backends/cuda';
import { buildCudaEngine } from '../../../lib/backends/cuda/build';
import { PlanCache, shapeKey } from '../../../lib/backends/cuda/run/plan-cache';
import { DEFAULT_BUILD_CONFIG } from '../../../lib/engine/build-config';
import type { CudaLibraryStatus } from '../../../lib/gpu/libraries';
import { BadInputError, BadModelError, InternalError, ShapeOutOfRangeError, UnsupportedOpError } from '../../../lib/errors';
import { Network } from '../../../lib/network';
import { DIST_INDEX, makeTempDir, removeTempDir, requireBuild, runNode } from '../../helpers/built-package';
import { TEST_H200 } from '../../helpers/devices';
import { buildFakeCudaLibraries } from '../../helpers/fake-libs';
import { dynamicBatchNetwork, fakeCompiler, fakeLowering, staticNetwork } from './helpers';

const found = (name: CudaLibraryStatus['name']): CudaLibraryStatus => ({ name, found: true, path: `/lib/${name}.so`, version: '1.0', error: null });
const missing = (name: CudaLibraryStatus['name'], message: string): CudaLibraryStatus => ({ name, found: false, path: null, version: null, error: { code: 'E_CUDA_LIBRARY_MISSING', message } });

function probes(over: Partial<CudaProbes> = {}): CudaProbes {
  return {
    devices: async () => ({ ok: true, driver: { version: '13.0', versionNumber: 13000, library: 'libcuda.so.1' }, devices: [TEST_H200], error: null }),
    runtime: async () => undefined,
    libraries: async () => [found('nvrtc'), found('cublasLt'), found('cudnn')],
    ...over,
  };
}

const noDevices = (code: string, message: string) => async () => ({ ok: false, driver: null, devices: [], error: { code, message } });

describe('cudaAvailability', () => {
  test('a driver, a device, the runtime and the three libraries: ok', async () => {
    expect(await cudaAvailability(probes())).toEqual({ ok: true });
  });

  test('no driver, no GPU, or a driver that fails: one reason each, nothing else probed', async () => {
    let asked = 0;
    const runtime = async (): Promise<void> => void asked++;
    expect(await cudaAvailability(probes({ devices: noDevices('E_CUDA_MISSING', 'libcuda.so.1 not found'), runtime }))).toEqual({ ok: false, reasons: ['no CUDA driver: libcuda.so.1 not found'] });
    expect(await cudaAvailability(probes({ devices: noDevices('E_NO_DEVICE', 'the driver reports no device'), runtime }))).toEqual({ ok: false, reasons: ['no GPU: the driver reports no device'] });
    expect(await cudaAvailability(probes({ devices: noDevices('E_CUDA', 'cuInit failed'), runtime }))).toEqual({ ok: false, reasons: ['the CUDA driver cannot be used [E_CUDA]: cuInit failed'] });
    expect(await cudaAvailability(probes({ devices: async () => ({ ok: false, driver: null, devices: [], error: null }), runtime }))).toEqual({ ok: false, reasons: ['no GPU: the CUDA driver lists no device'] });
    expect(asked).toBe(0);
  });

  test('missing libraries and a runtime that cannot start are all listed', async () => {
    const a = await cudaAvailability(
      probes({
        runtime: async () => {
          throw new Error('the driver lacks cuMemAllocAsync');
        },
        libraries: async () => [found('nvrtc'), missing('cublasLt', 'libcublasLt.so.13 not found'), missing('cudnn', 'libcudnn.so.9 not found')],
      }),
    );
    expect(a).toEqual({
      ok: false,
      reasons: ['the GPU runtime cannot use device 0: the driver lacks cuMemAllocAsync', 'cublasLt is missing: libcublasLt.so.13 not found', 'cudnn is missing: libcudnn.so.9 not found'],
    });
  });

  test('probes that throw are reasons, never rejections', async () => {
    const boom = async (): Promise<never> => {
      throw new Error('boom');
    };
    expect(await cudaAvailability(probes({ devices: boom }))).toEqual({ ok: false, reasons: ['the CUDA device probe failed: boom'] });
    expect(await cudaAvailability(probes({ libraries: boom }))).toEqual({ ok: false, reasons: ['the NVIDIA library probe failed: boom'] });
  });

  test('this machine (no libcuda): the real backend says there is no CUDA driver', async () => {
    const a = await cudaBackend.available();
    expect(a.ok).toBe(false);
    expect((a as { reasons: string[] }).reasons[0]).toMatch(/^no CUDA driver: The CUDA driver library could not be loaded/);
  });
});

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

describeOnLinux('cudaAvailability against the fake CUDA driver (two devices, no runtime entry points)', () => {
  let tmp: string | undefined;
  beforeAll(() => {
    requireBuild();
    tmp = makeTempDir('cuda-backend');
  }, 60_000);
  afterAll(() => removeTempDir(tmp));

  test('it names the runtime the driver lacks and every missing library', () => {
    const libcuda = buildFakeCudaLibraries(tmp!).twoDevices;
    const registry = path.join(path.dirname(DIST_INDEX), 'backends', 'registry.js');
    const script = `require(${JSON.stringify(registry)}).BACKENDS.cuda.available().then((a) => console.log(JSON.stringify(a)))`;
    const result = runNode(['-e', script], { TENSORRT_NODE_CUDA_LIBRARY: libcuda, CUDA_HOME: '/nonexistent-cuda', TENSORRT_NODE_NVRTC_LIBRARY: '/nonexistent/libnvrtc.so' });
    expect(result.status).toBe(0);
    const a = JSON.parse(result.stdout) as { ok: boolean; reasons: string[] };
    expect(a.ok).toBe(false);
    expect(a.reasons[0]).toMatch(/^the GPU runtime cannot use device 0: .*lacks cuDevicePrimaryCtxRetain/);
    expect(a.reasons.slice(1).map((r) => r.split(' ')[0])).toEqual(['nvrtc', 'cublasLt', 'cudnn']);
    expect(a.reasons[1]).toContain('/nonexistent/libnvrtc.so');
  });
});

describe('cudaBackend', () => {
  test('is the registry\'s cuda entry, priority 2, keeping values on the device', async () => {
    const { BACKENDS } = await import('../../../lib/backends');
    expect(BACKENDS.cuda).toBe(cudaBackend);
    expect([cudaBackend.priority, cudaBackend.residency, cudaBackend.implemented]).toEqual([2, 'device', true]);
  });

  test('build() refuses a broken network as InternalError before lowering anything', async () => {
    const device = { type: 'gpu', gpuId: 0, dlaCore: null, allowGpuFallback: false, computeCapability: { major: 9, minor: 0 }, deviceName: 'NVIDIA H200', hardwareCompatibility: 'none', backend: 'cuda', backendVersion: 'x' } as const;
    const net = staticNetwork();
    (net.tensors[1] as unknown as { shape: number[] }).shape = [3];
    await expect(cudaBackend.build(net, DEFAULT_BUILD_CONFIG, device)).rejects.toThrow(InternalError);
  });

  test('a layer the lowerings refuse stops the build with their UnsupportedOpError; nothing is compiled', async () => {
    const compiled: string[] = [];
    const lower = fakeLowering();
    const refuse = (ctx: Parameters<typeof lower>[0]) => {
      if (ctx.layer.params.kind === 'activation') throw new UnsupportedOpError(`no lowering for layer "${ctx.layer.name}"`);
      return lower(ctx);
    };
    const target = { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } };
    await expect(buildCudaEngine(dynamicBatchNetwork(), DEFAULT_BUILD_CONFIG, target, { lower: refuse, compile: fakeCompiler(compiled) })).rejects.toThrow('no lowering for layer "relu"');
    expect(compiled).toEqual([]);
  });

  test('the timingCache setting (TensorRT\'s) is not silently ignored: the build says where the cuda backend keeps its timings', async () => {
    const target = { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } };
    const logs: string[] = [];
    const logger = (level: string, message: string): void => void logs.push(`${level}: ${message}`);
    await buildCudaEngine(staticNetwork(), DEFAULT_BUILD_CONFIG, target, { lower: fakeLowering(), compile: fakeCompiler(), logger });
    expect(logs.filter((l) => l.includes('timingCache'))).toEqual([]);
    await buildCudaEngine(staticNetwork(), { ...DEFAULT_BUILD_CONFIG, timingCache: '/tmp/t.cache' }, target, { lower: fakeLowering(), compile: fakeCompiler(), logger });
    expect(logs).toContainEqual(expect.stringMatching(/^warn: cuda backend: the timingCache setting is TensorRT's and the cuda backend does not read it; its GEMM timings go to TENSORRT_NODE_TIMING_CACHE/));
  });

  test('engineTarget takes a GPU record; a CPU record is an InternalError', () => {
    const cpu = { type: 'cpu', gpuId: null, dlaCore: null, allowGpuFallback: false, computeCapability: null, deviceName: null, hardwareCompatibility: 'none', backend: 'cuda', backendVersion: 'x' } as const;
    expect(() => engineTarget(cpu)).toThrow(InternalError);
  });

  test('inspect() reads names without a device; other bytes are BadModelError', async () => {
    const bytes = await buildCudaEngine(staticNetwork(), DEFAULT_BUILD_CONFIG, { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } }, { lower: fakeLowering(), compile: fakeCompiler() });
    expect(cudaBackend.inspect(bytes)).toEqual({ inputNames: ['x'], outputNames: ['y'], precision: 'fp32 (fp32 only)' });
    expect(() => cudaBackend.inspect(new Uint8Array(30))).toThrow(BadModelError);
    await expect(cudaBackend.load(new Uint8Array(30), null)).rejects.toThrow(BadModelError);
  });
});

describe('checkInputs', () => {
  const net = dynamicBatchNetwork();
  const host = () => true;
  test('gives each input\'s shape; float64 stands for float32 from the host only', () => {
    expect(checkInputs(net, { x: { dtype: 'float32', shape: [3, 4] } }, host)).toEqual({ x: [3, 4] });
    expect(checkInputs(net, { x: { dtype: 'float64', shape: [3, 4] } }, host)).toEqual({ x: [3, 4] });
    expect(() => checkInputs(net, { x: { dtype: 'float64', shape: [3, 4] } }, () => false)).toThrow('input "x" is float64, the engine takes float32[?, 4]');
  });
  test.each([
    [{}, BadInputError, 'missing input "x" (float32[?, 4])'],
    [{ x: { dtype: 'float32', shape: [3, 4] }, z: { dtype: 'float32', shape: [1] } }, BadInputError, 'unknown input "z"; the engine\'s inputs are "x"'],
    [{ x: { dtype: 'int32', shape: [3, 4] } }, BadInputError, 'input "x" is int32'],
    [{ x: { dtype: 'float32', shape: [3] } }, BadInputError, 'has shape [3] (rank 1)'],
    [{ x: { dtype: 'float32', shape: [3, 5] } }, BadInputError, 'input "x" dim 1 is 5, the engine was built for 4'],
    [{ x: { dtype: 'float32', shape: [9, 4] } }, ShapeOutOfRangeError, 'input "x" dim 0 is 9, outside the optimization profile\'s range [1, 8]'],
  ])('refuses %j', (inputs, type, message) => {
    expect(() => checkInputs(net, inputs as never, host)).toThrow(type);
    expect(() => checkInputs(net, inputs as never, host)).toThrow(message);
  });
});

describe('PlanCache', () => {
  test('keeps the most recently used plans and disposes what it evicts or clears', () => {
    const disposed: string[] = [];
    const entry = (name: string) => ({ dispose: () => void disposed.push(name) });
    const cache = new PlanCache<ReturnType<typeof entry>>(2);
    cache.set('a', entry('a'));
    cache.set('b', entry('b'));
    cache.get('a');
    cache.set('c', entry('c'));
    expect(disposed).toEqual(['b']);
    expect(cache.keys()).toEqual(['a', 'c']);
    cache.set('a', entry('a2'));
    expect(disposed).toEqual(['b', 'a']);
    cache.clear();
    expect(disposed.sort()).toEqual(['a', 'a2', 'b', 'c']);
    expect(cache.size).toBe(0);
    expect(() => new PlanCache(0)).toThrow(RangeError);
  });

  test('shape keys tell shape sets apart', () => {
    expect(shapeKey(['x', 'y'], { x: [2, 3], y: [] })).toBe('2x3;');
    expect(shapeKey(['x', 'y'], { x: [23], y: [] })).not.toBe(shapeKey(['x', 'y'], { x: [2, 3], y: [] }));
  });
});
