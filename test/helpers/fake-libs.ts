/**
 * Builds the fake NVIDIA libraries of test/native/fixtures/ into shared objects, so that the
 * addon's dlopen paths can be exercised on machines without a GPU, libcuda or TensorRT.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

import { makeTempDir, removeTempDir, requireBuild } from './built-package';

export const FIXTURES = path.join(__dirname, '..', 'native', 'fixtures');

/**
 * Compiles `fixtures/<source>` with `-D<define>` for each define into `<dir>/<name>`.
 * -Werror so a fixture that drifts into undefined behaviour fails loudly instead of lying.
 */
export function buildFakeLibrary(source: string, dir: string, name: string, defines: string[] = []): string {
  const out = path.join(dir, name);
  execFileSync(
    'gcc',
    ['-shared', '-fPIC', '-std=c11', '-Wall', '-Wextra', '-Werror', ...defines.map((d) => `-D${d}`), '-o', out, path.join(FIXTURES, source)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return out;
}

/** The fake CUDA driver scenarios of fixtures/fake_cuda.c. */
export const FAKE_CUDA_SCENARIOS = {
  /** Two devices (H200, A100), driver 13.0. */
  twoDevices: [] as string[],
  /** cuInit fails with CUDA_ERROR_NO_DEVICE. */
  initNoDevice: ['FAKE_CUINIT_RESULT=100'],
  /** cuInit succeeds, cuDeviceGetCount reports 0. */
  zeroDevices: ['FAKE_DEVICE_COUNT=0'],
  /** cuDeviceGetName fails with CUDA_ERROR_UNKNOWN. */
  nameFails: ['FAKE_NAME_RESULT=999'],
  /** A pre-11.4 driver: no cuDeviceGetUuid_v2. */
  noUuidV2: ['FAKE_OMIT_UUID_V2'],
  /** Two devices with the GPU runtime's entry points: contexts and free memory work, nothing else. */
  withRuntime: ['FAKE_RUNTIME'],
};

export type FakeCudaScenario = keyof typeof FAKE_CUDA_SCENARIOS;

/** Builds every fake CUDA scenario into `dir`; returns each library's path. */
export function buildFakeCudaLibraries(dir: string): Record<FakeCudaScenario, string> {
  const out = {} as Record<FakeCudaScenario, string>;
  for (const [scenario, defines] of Object.entries(FAKE_CUDA_SCENARIOS) as [FakeCudaScenario, string[]][]) {
    out[scenario] = buildFakeLibrary('fake_cuda.c', dir, `libcuda-${scenario}.so.1`, defines);
  }
  return out;
}

/**
 * The fake CUDA driver with runtime entry points (fixtures/fake_cuda.c, FAKE_RUNTIME), built in
 * a temporary directory before the calling test file's tests and removed after them (registers
 * beforeAll/afterAll). `driver` is its path, `dir` the directory (for the test's own files).
 */
export function useFakeRuntimeDriver(label: string): { readonly dir: string; readonly driver: string } {
  const state = { dir: '', driver: '' };
  beforeAll(() => {
    requireBuild();
    state.dir = makeTempDir(label);
    state.driver = buildFakeLibrary('fake_cuda.c', state.dir, `libcuda-${label}.so.1`, ['FAKE_RUNTIME']);
  }, 60_000);
  afterAll(() => removeTempDir(state.dir === '' ? undefined : state.dir));
  return state;
}
