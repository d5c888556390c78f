/**
 * Products of at most {@link GEMV_MAX_ROWS} rows by a transposed B (a linear layer over one
 * image or token: y = x·Wᵀ, W stored [n, k]) as one generated kernel instead of a cuBLASLt
 * GEMM. cuBLASLt's heuristic tiles such a product for large M: ResNet-50's classifier at batch
 * 1 ([1, 2048] by [1000, 2048]ᵀ, 4 MB of weights) took 14 µs (H200, 2026-12-03), longer than
 * at batch 32 (7 µs), where reading the weights once takes about 1 µs. Here a warp takes one
 * column j of the output at a time: its lanes walk W's row j (16 bytes a load where K and the
 * tensors allow it, else one element), multiply it with each of the M rows of x, and sum over
 * the warp. Float16 and bfloat16, fp32 accumulation, rounded once on store (as the GEMM's
 * epilogue).
 */
import type { BufferSlice } from '../../../gpu/plan';
import type { TrtDType } from '../../../network';
import { i32, kernelSource, launch, ptr } from './kernel';
import { DTYPES } from './prelude';
import type { KernelLaunch } from './types';

/** The most rows of x the kernel takes (each a register accumulator). */
export const GEMV_MAX_ROWS = 4;
export const GEMV_DTYPES: ReadonlySet<TrtDType> = new Set<TrtDType>(['float16', 'bfloat16']);

function gemvKernel(dtype: TrtDType, vector: number) {
  const c = DTYPES[dtype];
  const chunk = vector === 8 ? 'VecN<u16, 8>' : 'u16';
  const at = (v: string, k: string): string => (vector === 8 ? c.load(`${v}.v[${k}]`) : c.load(v));
  return kernelSource(`gemv.${dtype}.v${vector}`, (entry) => `
typedef ${chunk} ${entry}_chunk;
extern "C" __global__ void ${entry}(u16* y, const u16* x, const u16* w, i32 M, i32 N, i32 K) {
  const int lane = threadIdx.x & 31;
  const i32 chunks = K / ${vector};
  const ${entry}_chunk* xs = reinterpret_cast<const ${entry}_chunk*>(x);
  const ${entry}_chunk* ws = reinterpret_cast<const ${entry}_chunk*>(w);
  const i32 warps = blockDim.x >> 5;
  for (i32 j = blockIdx.x * warps + (threadIdx.x >> 5); j < N; j += gridDim.x * warps) {
    float acc[${GEMV_MAX_ROWS}] = {};
    for (i32 q = lane; q < chunks; q += 32) {
      const ${entry}_chunk wv = ws[(i64)j * chunks + q];
#pragma unroll
      for (int r = 0; r < ${GEMV_MAX_ROWS}; ++r) {
        if (r < M) {
          const ${entry}_chunk xv = xs[(i64)r * chunks + q];
#pragma unroll
          for (int e = 0; e < ${vector}; ++e) acc[r] += ${at('xv', 'e')} * ${at('wv', 'e')};
        }
      }
    }
#pragma unroll
    for (int r = 0; r < ${GEMV_MAX_ROWS}; ++r) {
      float v = acc[r];
#pragma unroll
      for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
      if (lane == 0 && r < M) y[(i64)r * N + j] = ${c.store('v')};
    }
  }
}`);
}

/**
 * y [m, n] = x [m, k] · wᵀ (w stored [n, k]) for m ≤ {@link GEMV_MAX_ROWS}, as one launch; 16-byte
 * loads where k is a multiple of 8 and x and w start 16-byte aligned.
 */
export function gemvLaunch(dtype: TrtDType, y: BufferSlice, x: BufferSlice, w: BufferSlice, m: number, n: number, k: number): KernelLaunch[] {
  const aligned = k % 8 === 0 && [x, w].every((s) => (s.offset ?? 0) % 16 === 0);
  // A warp a column: blocks of whole warps (the shared launch's block is 256 threads, or 32·n).
  return launch(gemvKernel(dtype, aligned ? 8 : 1), 32 * n, [ptr(y), ptr(x), ptr(w), i32(m), i32(n), i32(k)]);
}
