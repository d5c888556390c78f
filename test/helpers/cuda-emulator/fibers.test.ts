/**
 * The emulator's cooperative threads (fibers.ts): __syncthreads and warp shuffles on kernels
 * whose answers are known by hand and are wrong without the synchronization, and the errors a
 * divergent barrier, a partial shuffle mask and an out-of-bounds store inside a fiber give.
 */
import { kernelSource } from '../../../lib/backends/cuda/layers/kernel';
import type { KernelLaunch } from '../../../lib/backends/cuda/layers/types';
import type { KernelArg } from '../../../lib/gpu/plan';
import { runSteps } from './index';

const ptr = (buffer: number): KernelArg => ({ pointer: { buffer } });
const i32 = (value: number): KernelArg => ({ scalar: 'i32', value });

function run(key: string, body: string, grid: number, block: number, x: Int32Array, yLength: number): Int32Array {
  const kernel = kernelSource(`emulator.${key}`, (entry) => body.replace('ENTRY', entry));
  const step: KernelLaunch = { kind: 'launch', kernel, grid: [grid], block: [block], args: [ptr(0), ptr(1), i32(x.length)] };
  const buffers = [new Uint8Array(new Int32Array(yLength).fill(-1).buffer), new Uint8Array(x.buffer.slice(0))];
  runSteps([step], buffers);
  return new Int32Array(buffers[0]!.buffer);
}

const iota = (n: number, from = 1): Int32Array => Int32Array.from({ length: n }, (_, i) => i + from);

/** Each thread stores its element, then reads its right neighbour's: correct only if every store precedes every read. */
const rotate = (sync: boolean): string => `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  ${sync ? '__syncthreads();' : ''}
  y[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}`;

describe('__syncthreads', () => {
  test('orders every store of the block before any read after it', () => {
    const x = iota(3 * 96, 7);
    const y = run('rotate', rotate(true), 3, 96, x, x.length);
    const expected = Int32Array.from(x, (_, i) => x[Math.floor(i / 96) * 96 + ((i % 96) + 1) % 96]!);
    expect(Array.from(y)).toEqual(Array.from(expected));
  });

  test('without the barrier the same kernel reads stale shared memory (the test above can fail)', () => {
    const x = iota(96, 7);
    const y = run('rotate.nosync', rotate(false), 1, 96, x, x.length);
    // Thread t runs to completion before thread t + 1 stores: it reads the never-written zero.
    expect(y[0]).toBe(0);
    expect(y[95]).toBe(x[0]);
  });

  test('a shared-memory tree reduction with a barrier per level sums each block', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  __shared__ int s[1024];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t == 0) y[blockIdx.x] = s[0];
}`;
    const x = Int32Array.from({ length: 4 * 1024 }, (_, i) => ((i * 7919) % 1000) - 500);
    const y = run('tree', body, 4, 1024, x, 4);
    const sums = [0, 1, 2, 3].map((b) => x.subarray(b * 1024, (b + 1) * 1024).reduce((a, v) => a + v, 0));
    expect(Array.from(y)).toEqual(sums);
  });

  test('a warp that finished after its shuffles does not hold the others at a __syncthreads', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  int t = threadIdx.x;
  if (t < 32) { y[t] = __shfl_xor_sync(0xffffffffu, x[t], 1); return; }
  __syncthreads();
  y[t] = x[t];
}`;
    const x = iota(64);
    const y = run('warp-exits', body, 1, 64, x, 64);
    expect(Array.from(y)).toEqual(Array.from(x, (v, i) => (i < 32 ? x[i ^ 1]! : v)));
  });

  test('threads that returned early count as arrived', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = x[t];
  __syncthreads();
  y[t] = s[n - 1 - t];
}`;
    const x = iota(40);
    const y = run('early-exit', body, 1, 64, x, 40);
    expect(Array.from(y)).toEqual(Array.from(x).reverse());
  });
});

describe('warp shuffles', () => {
  test('__shfl_xor_sync butterflies give every lane its warp sum', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  int t = threadIdx.x, v = x[t];
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  y[t] = v;
}`;
    const x = iota(64, 1);
    const y = run('xor', body, 1, 64, x, 64);
    const warp0 = (32 * 33) / 2;
    const warp1 = (64 * 65) / 2 - warp0;
    expect(Array.from(y)).toEqual([...new Array<number>(32).fill(warp0), ...new Array<number>(32).fill(warp1)]);
  });

  test('__shfl_down_sync shifts within the warp and keeps the value past its end', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  int t = threadIdx.x;
  y[t] = __shfl_down_sync(0xffffffffu, x[t], 3);
}`;
    const x = iota(32, 100);
    const y = run('down', body, 1, 32, x, 32);
    expect(Array.from(y)).toEqual(Array.from(x, (v, i) => (i + 3 < 32 ? x[i + 3]! : v)));
  });

  test('a 64-bit value survives a shuffle', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  int t = threadIdx.x;
  long long v = ((long long)x[t] << 32) | 5;
  long long w = __shfl_xor_sync(0xffffffffu, v, 1);
  y[t] = (int)(w >> 32) + (int)(w & 0xffffffff);
}`;
    const x = iota(32, 1000);
    const y = run('wide', body, 1, 32, x, 32);
    expect(Array.from(y)).toEqual(Array.from(x, (_, i) => x[i ^ 1]! + 5));
  });
});

describe('synchronization errors', () => {
  test('lanes of one warp at a __syncthreads and at a shuffle at once fail the launch, naming the block', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  int t = threadIdx.x;
  if (t < 16) y[t] = __shfl_xor_sync(0xffffffffu, x[t], 1);
  else __syncthreads();
}`;
    expect(() => run('divergent', body, 1, 32, iota(32), 32)).toThrow(/block \(0,0,0\).*divergent synchronization/);
  });

  test('a partial shuffle mask fails the launch', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  y[threadIdx.x] = __shfl_xor_sync(0xffffu, x[threadIdx.x], 1);
}`;
    expect(() => run('mask', body, 1, 32, iota(32), 32)).toThrow(/partial mask/);
  });

  test('AddressSanitizer still reports an out-of-bounds store from a fiber', () => {
    const body = `
extern "C" __global__ void ENTRY(int* y, const int* x, int n) {
  __syncthreads();
  y[threadIdx.x + 1] = x[threadIdx.x];
}`;
    expect(() => run('oob', body, 1, 32, iota(32), 32)).toThrow(/AddressSanitizer: heap-buffer-overflow/);
  });
});
