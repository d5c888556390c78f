/**
 * Builds the fake libnccl.so.2 scenarios (fixtures/fake_nccl.c) and a fake libcuda.so.1 whose
 * runtime entry points keep "device" memory in host memory (fixtures/fake_cuda_runtime.c linked
 * with test/native/fixtures/fake_cuda.c), so communicators can be created on any Linux machine.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

import { FIXTURES as NATIVE_FIXTURES } from '../helpers/fake-libs';

const FIXTURES = path.join(__dirname, 'fixtures');
const CFLAGS = ['-fPIC', '-std=c11', '-Wall', '-Wextra', '-Werror'];

function gcc(args: string[]): void {
  execFileSync('gcc', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export const FAKE_NCCL_SCENARIOS = {
  ok: [] as string[],
  old: ['FAKE_NCCL_VERSION=21500'],
  duplicateGpu: ['FAKE_INIT_RESULT=5'],
  initHangs: ['FAKE_INIT_HANGS'],
  peerDies: ['FAKE_ALLREDUCE_ASYNC=6'],
  noAsyncError: ['FAKE_OMIT_SYMBOL'],
};
export type FakeNcclScenario = keyof typeof FAKE_NCCL_SCENARIOS;

export function buildFakeNccl(dir: string): Record<FakeNcclScenario, string> {
  const out = {} as Record<FakeNcclScenario, string>;
  for (const [name, defines] of Object.entries(FAKE_NCCL_SCENARIOS) as [FakeNcclScenario, string[]][]) {
    out[name] = path.join(dir, `libnccl-${name}.so.2`);
    gcc(['-shared', ...CFLAGS, ...defines.map((d) => `-D${d}`), '-o', out[name], path.join(FIXTURES, 'fake_nccl.c')]);
  }
  return out;
}

/** A fake driver with pooled "device" memory on the host: two devices, as fake_cuda.c has. */
export function buildFakeCudaWithMemory(dir: string): string {
  const base = path.join(dir, 'fake_cuda.o');
  const runtime = path.join(dir, 'fake_cuda_runtime.o');
  gcc(['-c', ...CFLAGS, '-DcuDeviceGetAttribute=fakeDeviceGetAttribute', '-o', base, path.join(NATIVE_FIXTURES, 'fake_cuda.c')]);
  gcc(['-c', ...CFLAGS, '-o', runtime, path.join(FIXTURES, 'fake_cuda_runtime.c')]);
  const out = path.join(dir, 'libcuda-memory.so.1');
  gcc(['-shared', '-o', out, base, runtime]);
  return out;
}
