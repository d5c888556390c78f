/**
 * A whole attention in one kernel: softmax(Q·Kᵀ·scale + mask)·V (a matmul the attention pass
 * made, ../passes/fuse-attention.ts), in the way of FlashAttention-2. A block takes
 * 16·rowGroups query rows of one batch entry and walks the keys in tiles of 64; each row group
 * is walked by `streams` warps, each taking its share of every tile's keys, merged at the end
 * (AttentionTiling: 4 × 2 by default, eight warps over 64 rows, so an SM has two warps to
 * switch between where a 64-row block of a 16-head, 512-token attention gives it one). Each
 * tile of K and V goes through shared memory by asynchronous copies in two stages (the next
 * tile loads behind this tile's math); the warp multiplies with tensor cores (mma.sync
 * m16n8k16, fp16 or bf16 in, fp32 accumulators; V's fragments transposed by ldmatrix), keeps a
 * running row maximum and sum (base-2 exponentials), and rescales its output accumulators as
 * the maximum moves. Under a causal mask a block stops at its diagonal, and the blocks with
 * the most key tiles start first. Scores and probabilities never reach memory; Q, K, V, the
 * mask and the output are read and written at any strides (the transposes and GQA repeats
 * around an attention are views), with the head dim contiguous. The mask's values of a tile
 * are read before its products, so their loads overlap the tensor-core work (read behind each
 * score's test they serialized: BERT's attention 15.2 → 10.0 µs, H200, 2026-12-03).
 *
 * Nsight Compute (H200, 2026-12-03): the kernel issues an instruction about every 5 cycles
 * a warp, with two warps a scheduler, so it is bound by its instruction count, not by memory or
 * the tensor cores; more key streams (more warps, more merging) made it slower there. K's
 * fragments by ldmatrix and skipping the rescale when no maximum moved gave Llama's nothing and
 * cost BERT's its second block an SM (130 registers): not kept.
 *
 * The probabilities are rounded to the input dtype before P·V (the unfused graph rounds them
 * too, after normalizing); the scale, the mask and the softmax run in fp32 on the fp32 scores.
 * A row every key of which is masked gives NaN, as the softmax of −∞ everywhere does.
 *
 * The mma and ldmatrix fragments' lane layouts are PTX's (ISA, "Matrix fragments for
 * mma.m16n8k16", "ldmatrix"); the CPU emulator of the tests computes the same products from
 * shuffles of those fragments and of the row addresses.
 */
import type { AttentionParams, TrtDType } from '../../../network';
import { advance, checkRank, dims8, f32, i32, i64, input, kernelSource, output, paramsOf, ptr, unsupported, volume } from './kernel';
import { DTYPES } from './prelude';
import type { BoundTensor, KernelSource, LayerLowering, LoweredStep, LoweringContext } from './types';

/** Keys a tile holds. */
const BLOCK_N = 64;
/**
 * How a block's warps split the work: `rowGroups` groups of 16 query rows (the block takes
 * 16·rowGroups rows), each walked by `streams` warps, warp s taking keys [s·64/streams, (s+1)·64/streams)
 * of every tile; the streams merge their rows at the end. More streams shorten a block's walk over
 * a long key range (a causal attention's last rows) but add a longer merge and more work a key;
 * on the H200 (2026-12-03) neither 2 × 4 nor 2 × 2 beat 4 × 2 on Llama's attention
 * (docs/cuda-backend.md, "The attention's mask and Q/O accesses, norm row offsets, attention
 * tilings"), so every attention runs 4 × 2 and the others are there to be measured (the kernel lab).
 * At most 256 threads: the kernel's registers (up to 168) would not fit 512.
 */
export interface AttentionTiling {
  readonly rowGroups: 2 | 4;
  readonly streams: 2 | 4;
}
export const DEFAULT_ATTENTION_TILING: AttentionTiling = { rowGroups: 4, streams: 2 };
const tilingName = (t: AttentionTiling): string => `r${t.rowGroups}s${t.streams}`;
const blockRows = (t: AttentionTiling): number => 16 * t.rowGroups;
const blockThreads = (t: AttentionTiling): number => 32 * t.rowGroups * t.streams;
/** The head dims the kernel takes: multiples of 16 up to 128 (two 64-key tiles of K and Vᵀ fit static shared memory). */
export const attentionHeadDimOk = (d: number): boolean => d > 0 && d <= 128 && d % 16 === 0;
export const ATTENTION_DTYPES: ReadonlySet<TrtDType> = new Set(['float16', 'bfloat16']);

type MaskKind = 'none' | 'bool' | 'add';

/** mma.sync m16n8k16 (row.col, fp32 accumulators), and its emulation for the CPU tests. */
function mmaCode(dtype: TrtDType, entry: string): string {
  const ab = dtype === 'bfloat16' ? 'bf16' : 'f16';
  const load = dtype === 'bfloat16' ? 'bf2f' : 'h2f';
  return String.raw`
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ void ${entry}_mma(float* c, const u32* a, u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.${ab}.${ab}.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#else
/* Lane l = 4g + t holds A(g, 2t..2t+1) in a[0], A(g+8, ·) in a[1], A(g, 2t+8..) in a[2], A(g+8, 2t+8..) in a[3];
   B(2t..2t+1, g) in b0 and B(2t+8.., g) in b1; C(g, 2t..2t+1) in c[0..1] and C(g+8, ·) in c[2..3]. */
__device__ __forceinline__ float ${entry}_half(u32 pair, int k) { return ${load}((u16)(k & 1 ? pair >> 16 : pair & 0xffffu)); }
__device__ void ${entry}_mma(float* c, const u32* a, u32 b0, u32 b1) {
  unsigned lane = threadIdx.x & 31u, g = lane >> 2, t = lane & 3u;
  for (int k = 0; k < 16; ++k) {
    int hi = k >= 8 ? 1 : 0;
    unsigned owner = (unsigned)((k & 7) >> 1);
    float a0 = ${entry}_half(__shfl_sync(0xffffffffu, a[hi * 2], (int)(g * 4 + owner)), k);
    float a1 = ${entry}_half(__shfl_sync(0xffffffffu, a[hi * 2 + 1], (int)(g * 4 + owner)), k);
    float bA = ${entry}_half(__shfl_sync(0xffffffffu, hi ? b1 : b0, (int)((2 * t) * 4 + owner)), k);
    float bB = ${entry}_half(__shfl_sync(0xffffffffu, hi ? b1 : b0, (int)((2 * t + 1) * 4 + owner)), k);
    c[0] += a0 * bA;
    c[1] += a0 * bB;
    c[2] += a1 * bA;
    c[3] += a1 * bB;
  }
}
#endif
`;
}

/**
 * ldmatrix.x4.trans (four 8×8 tiles of 16-bit elements, each lane giving one row's address:
 * lanes 8m..8m+7 the rows of tile m; lane 4g + t receives column g, rows 2t and 2t+1 of each
 * tile) and cp.async (16 bytes global → shared, zero-filled when `valid` is false), with their
 * emulations: a lane reads the rows other lanes address through shuffles of the addresses.
 */
const copyCode = (entry: string): string => String.raw`
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ u32 ${entry}_saddr(const void* p) {
  u32 a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
/* base is the same for every call of a thread (its shared address converts once); at counts elements past it. */
__device__ __forceinline__ void ${entry}_ldsm_t(u32* r, const u16* base, int at) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(${entry}_saddr(base) + 2u * (u32)at));
}
__device__ __forceinline__ void ${entry}_cp16(u16* dst, const u16* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(${entry}_saddr(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void ${entry}_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void ${entry}_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
__device__ __forceinline__ void ${entry}_wait0() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
__device__ void ${entry}_ldsm_t(u32* r, const u16* base, int at) {
  const u16* row = base + at;
  unsigned lane = threadIdx.x & 31u, g = lane >> 2, t = lane & 3u;
  for (unsigned m = 0; m < 4; ++m) {
    const u16* lo = __shfl_sync(0xffffffffu, row, (int)(m * 8 + 2 * t));
    const u16* hi = __shfl_sync(0xffffffffu, row, (int)(m * 8 + 2 * t + 1));
    r[m] = (u32)lo[g] | ((u32)hi[g] << 16);
  }
}
__device__ void ${entry}_cp16(u16* dst, const u16* src, bool valid) {
  for (int e = 0; e < 8; ++e) dst[e] = valid ? src[e] : (u16)0;
}
__device__ void ${entry}_commit() {}
__device__ void ${entry}_wait1() {}
__device__ void ${entry}_wait0() {}
#endif
`;

function attentionKernel(dtype: TrtDType, headDim: number, mask: MaskKind, maskDtype: TrtDType | null, causal: boolean, tiling: AttentionTiling): KernelSource {
  const c = DTYPES[dtype];
  const BLOCK_M = blockRows(tiling);
  const THREADS = blockThreads(tiling);
  const STREAM_ROWS = 32 * tiling.rowGroups;
  /** Keys a warp takes of each tile. */
  const KS = BLOCK_N / tiling.streams;
  const plain = tiling.rowGroups === DEFAULT_ATTENTION_TILING.rowGroups && tiling.streams === DEFAULT_ATTENTION_TILING.streams;
  const key = `attention.${dtype}.d${headDim}.${mask === 'none' ? 'nomask' : `${mask}.${maskDtype}`}${causal ? '.causal' : ''}${plain ? '' : `.${tilingName(tiling)}`}`;
  const m = maskDtype === null ? null : DTYPES[maskDtype];
  const maskParam = m === null ? 'const u8* mask' : `const ${m.storage}* __restrict__ mask`;
  // The mask's value for each score of this warp's n-tiles, read before the tile's products so its
  // loads overlap them (a load behind each score's test serialized them): in base 2 for an additive
  // mask, 0 or −∞ for a boolean one. Rows and keys past the ends read the last row's and key's
  // (never written out, or masked again by the tile's bounds test), so every load is in bounds.
  const maskRead = mask === 'none'
    ? ''
    : `float mv[${KS / 8}][4];
#pragma unroll
    for (int nt = 0; nt < ${KS / 8}; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e < 2 ? (int)r0 : (int)r1, j = n0 + (int)stream * ${KS} + nt * 8 + 2 * (int)t + (e & 1);
        const i64 at = mo + (i64)(i < nq ? i : nq - 1) * mr + (i64)(j < nk ? j : nk - 1) * mc;
        mv[nt][e] = ${mask === 'bool' ? 'mask[at] != 0 ? 0.0f : -f_inf()' : `${m!.compute === 'float' ? m!.load('mask[at]') : `(float)(${m!.load('mask[at]')})`} * 1.4426950408889634f`};
      }
    }`;
  const masked = mask === 'none' ? '' : 'x += mv[nt][e];';
  // Each score of this warp's n-tiles: i its query row, j its key; the test masks x (scaled to base 2) in place.
  const scoreLoop = (test: string): string => `#pragma unroll
      for (int nt = 0; nt < ${KS / 8}; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = e < 2 ? (int)r0 : (int)r1, j = n0 + (int)stream * ${KS} + nt * 8 + 2 * (int)t + (e & 1);
          float x = s[nt][e] * scaleLog2;
          ${test}
          s[nt][e] = x;
          if (e < 2) tile0 = fmaxf(tile0, x); else tile1 = fmaxf(tile1, x);
        }
      }`;
  return kernelSource(key, (entry) => String.raw`
${mmaCode(dtype, entry)}
${copyCode(entry)}
#define ATT_D ${headDim}
#define ATT_P (ATT_D + 8)
/* Two stages of K and V tiles; at the end, the other key streams' row statistics and accumulators. */
union alignas(16) ${entry}_tiles {
  struct { u16 k[2][${BLOCK_N} * ATT_P]; u16 v[2][${BLOCK_N} * ATT_P]; } t;
  float x[${(tiling.streams - 1) * STREAM_ROWS} * (ATT_D / 2 + 4)];
};
__device__ __forceinline__ u32 ${entry}_pack(float lo, float hi) { return (u32)${c.store('lo')} | ((u32)${c.store('hi')} << 16); }
/* Two neighbouring elements as one fragment register: one 4-byte load where aligned (vec). */
__device__ __forceinline__ u32 ${entry}_pair(const u16* p, bool vec) { return vec ? *(const u32*)p : (u32)p[0] | ((u32)p[1] << 16); }
/* One 64-row tile of K or V into shared memory: 16-byte asynchronous copies where aligned (vec), else element by element. */
__device__ __forceinline__ void ${entry}_tile(u16* dst, const u16* src, i64 rowStride, int n0, int skv, int vec) {
  for (int ch = (int)threadIdx.x; ch < ${BLOCK_N} * (ATT_D / 8); ch += ${THREADS}) {
    const int row = ch / (ATT_D / 8), col = (ch % (ATT_D / 8)) * 8;
    const bool valid = n0 + row < skv;
    const u16* from = src + (valid ? (i64)(n0 + row) * rowStride + col : 0);
    u16* to = dst + row * ATT_P + col;
    if (vec) ${entry}_cp16(to, from, valid);
    else for (int e = 0; e < 8; ++e) to[e] = valid ? from[e] : (u16)0;
  }
}
extern "C" __global__ void ${entry}(u16* __restrict__ o, const u16* __restrict__ q, const u16* __restrict__ k, const u16* __restrict__ v, ${maskParam},
    int rank, Dims8 dims, Dims8 qb, Dims8 kb, Dims8 vb, Dims8 mb, Dims8 ob,
    i64 sq, i64 skv, i64 qr, i64 kr, i64 vr, i64 mr, i64 mc, i64 orow, i64 mTiles, float scaleLog2, int vec) {
  /* Dynamic shared memory (69,632 bytes at D = 128, past the 48 KiB static limit); the emulator's is static. */
#if defined(__CUDA_ARCH__)
  extern __shared__ unsigned char ${entry}_smem[];
  ${entry}_tiles& sm = *reinterpret_cast<${entry}_tiles*>(${entry}_smem);
#else
  __shared__ ${entry}_tiles sm;
#endif
  /* Warp w takes query rows 16·(w mod ${tiling.rowGroups}) of the block and, of each key tile, the part w / ${tiling.rowGroups} (the streams merge at the end). */
  const unsigned tid = threadIdx.x, warp = (tid >> 5) % ${tiling.rowGroups}u, stream = tid / ${STREAM_ROWS}u, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
  /* The query tiles with the most keys first (under a causal mask, the last rows). */
  const i64 b = (i64)blockIdx.x / mTiles, m0 = (mTiles - 1 - (i64)blockIdx.x % mTiles) * ${BLOCK_M};
  i64 cb[8];
  unflatten(b, rank, dims, cb);
  const u16* qp = q + dot8(cb, rank, qb);
  const u16* kp = k + dot8(cb, rank, kb);
  const u16* vp = v + dot8(cb, rank, vb);
  const i64 mo = dot8(cb, rank, mb);
  u16* op = o + dot8(cb, rank, ob);
  (void)mo; (void)mr; (void)mc; (void)mask;
  /* vec: bit 0, K and V rows 16-byte aligned (asynchronous copies); bit 1, Q and bit 2, O 4-byte aligned (paired loads, stores). */
  const int kvv = vec & 1;
  const bool qv = (vec & 2) != 0, ov = (vec & 4) != 0;
  /* Sequence positions fit 32 bits (the lowering checks): the per-element index arithmetic stays in 32. */
  const int nq = (int)sq, nk = (int)skv, first = (int)m0 + (int)warp * 16;
  (void)nq; (void)first;
  const int end = ${causal ? `((int)m0 + ${BLOCK_M} < nk ? (int)m0 + ${BLOCK_M} : nk)` : 'nk'};
  /* The first two tiles in flight (a copy group each) while the query fragments load. */
  ${entry}_tile(sm.t.k[0], kp, kr, 0, nk, kvv);
  ${entry}_tile(sm.t.v[0], vp, vr, 0, nk, kvv);
  ${entry}_commit();
  if (${BLOCK_N} < end) {
    ${entry}_tile(sm.t.k[1], kp, kr, ${BLOCK_N}, nk, kvv);
    ${entry}_tile(sm.t.v[1], vp, vr, ${BLOCK_N}, nk, kvv);
  }
  ${entry}_commit();
  const i64 r0 = m0 + warp * 16 + g, r1 = r0 + 8;
  /* This warp's 16 query rows as A fragments, one per 16 of the head dim. */
  u32 qf[ATT_D / 16][4];
#pragma unroll
  for (int kk = 0; kk < ATT_D / 16; ++kk) {
    const int col = kk * 16 + 2 * (int)t;
    qf[kk][0] = r0 < sq ? ${entry}_pair(qp + r0 * qr + col, qv) : 0u;
    qf[kk][1] = r1 < sq ? ${entry}_pair(qp + r1 * qr + col, qv) : 0u;
    qf[kk][2] = r0 < sq ? ${entry}_pair(qp + r0 * qr + col + 8, qv) : 0u;
    qf[kk][3] = r1 < sq ? ${entry}_pair(qp + r1 * qr + col + 8, qv) : 0u;
  }
  float acc[ATT_D / 8][4];
#pragma unroll
  for (int d = 0; d < ATT_D / 8; ++d) acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
  float max0 = -f_inf(), max1 = -f_inf(), sum0 = 0.0f, sum1 = 0.0f;
  /* This lane's row of V's ldmatrix tiles, and of its K fragments. */
  const int vlane = (stream * ${KS} + (lane & 7u) + ((lane >> 3) & 1u) * 8) * ATT_P + (lane >> 4) * 8;
  const int klane = (stream * ${KS} + g) * ATT_P + 2 * t;
  for (int n0 = 0, stage = 0; n0 < end; n0 += ${BLOCK_N}, stage ^= 1) {
    /* This tile's K and V have landed (the next tile's may still be in flight). */
    ${entry}_wait1();
    __syncthreads();
    const u16* krow = sm.t.k[stage] + klane;
    const u16* vrow = sm.t.v[stage] + vlane;
    ${maskRead}
    float s[${KS / 8}][4];
#pragma unroll
    for (int nt = 0; nt < ${KS / 8}; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < ATT_D / 16; ++kk) {
        const u16* kr0 = krow + nt * 8 * ATT_P + kk * 16;
        ${entry}_mma(s[nt], qf[kk], *(const u32*)kr0, *(const u32*)(kr0 + 8));
      }
    }
    /* Scale (to base 2), mask, and this tile's row maxima. */
    float tile0 = -f_inf(), tile1 = -f_inf();
    /* A tile inside the keys (and, causal, left of this warp's diagonal) needs no per-element test. */
    const bool inside = n0 + ${BLOCK_N} <= nk${causal ? ` && n0 + ${BLOCK_N} - 1 <= first` : ''};
    if (inside) {
${scoreLoop(`(void)i; (void)j; ${masked}`)}
    } else {
${scoreLoop(`(void)i;
          if (j >= nk${causal ? ' || j > i' : ''}) x = -f_inf();
          ${masked ? `else ${masked}` : ''}`)}
    }
    tile0 = fmaxf(tile0, __shfl_xor_sync(0xffffffffu, tile0, 1));
    tile0 = fmaxf(tile0, __shfl_xor_sync(0xffffffffu, tile0, 2));
    tile1 = fmaxf(tile1, __shfl_xor_sync(0xffffffffu, tile1, 1));
    tile1 = fmaxf(tile1, __shfl_xor_sync(0xffffffffu, tile1, 2));
    const float new0 = fmaxf(max0, tile0), new1 = fmaxf(max1, tile1);
    /* Rows masked so far keep a finite base, so exp2(−∞ − base) is 0 and never NaN. */
    const float base0 = new0 == -f_inf() ? 0.0f : new0, base1 = new1 == -f_inf() ? 0.0f : new1;
    const float keep0 = exp2f(max0 - base0), keep1 = exp2f(max1 - base1);
    max0 = new0;
    max1 = new1;
    sum0 *= keep0;
    sum1 *= keep1;
#pragma unroll
    for (int d = 0; d < ATT_D / 8; ++d) {
      acc[d][0] *= keep0;
      acc[d][1] *= keep0;
      acc[d][2] *= keep1;
      acc[d][3] *= keep1;
    }
    /* P·V: the score accumulators of two n-tiles are the A fragment of 16 keys; V's B fragments come transposed by ldmatrix. */
#pragma unroll
    for (int kk = 0; kk < ${KS / 16}; ++kk) {
      float p[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        p[h][0] = exp2f(s[2 * kk + h][0] - base0);
        p[h][1] = exp2f(s[2 * kk + h][1] - base0);
        p[h][2] = exp2f(s[2 * kk + h][2] - base1);
        p[h][3] = exp2f(s[2 * kk + h][3] - base1);
        sum0 += p[h][0] + p[h][1];
        sum1 += p[h][2] + p[h][3];
      }
      u32 a[4] = {${entry}_pack(p[0][0], p[0][1]), ${entry}_pack(p[0][2], p[0][3]), ${entry}_pack(p[1][0], p[1][1]), ${entry}_pack(p[1][2], p[1][3])};
#pragma unroll
      for (int d = 0; d < ATT_D / 8; d += 2) {
        u32 bv[4];
        ${entry}_ldsm_t(bv, vrow, kk * 16 * ATT_P + d * 8);
        ${entry}_mma(acc[d], a, bv[0], bv[1]);
        ${entry}_mma(acc[d + 1], a, bv[2], bv[3]);
      }
    }
    /* Every warp is done with this stage: the tile after next streams into it behind the next tile's math. */
    __syncthreads();
    if (n0 + ${2 * BLOCK_N} < end) {
      ${entry}_tile(sm.t.k[stage], kp, kr, n0 + ${2 * BLOCK_N}, nk, kvv);
      ${entry}_tile(sm.t.v[stage], vp, vr, n0 + ${2 * BLOCK_N}, nk, kvv);
    }
    ${entry}_commit();
  }
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 1);
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 2);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 1);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 2);
  /* The other streams hand their maxima, sums and accumulators to the first, which merges and writes. */
  ${entry}_wait0();
  __syncthreads();
  if (stream) {
    float* mine = sm.x + ((stream - 1u) * ${STREAM_ROWS}u + tid % ${STREAM_ROWS}u) * (ATT_D / 2 + 4);
    mine[0] = max0;
    mine[1] = max1;
    mine[2] = sum0;
    mine[3] = sum1;
#pragma unroll
    for (int d = 0; d < ATT_D / 8; ++d) for (int e = 0; e < 4; ++e) mine[4 + d * 4 + e] = acc[d][e];
  }
  __syncthreads();
  if (stream) return;
#pragma unroll
  for (int from = 0; from < ${tiling.streams - 1}; ++from) {
    const float* mine = sm.x + (from * ${STREAM_ROWS} + (int)tid) * (ATT_D / 2 + 4);
    const float other0 = mine[0], other1 = mine[1];
    const float top0 = fmaxf(max0, other0), top1 = fmaxf(max1, other1);
    const float base0 = top0 == -f_inf() ? 0.0f : top0, base1 = top1 == -f_inf() ? 0.0f : top1;
    const float a0 = exp2f(max0 - base0), b0 = exp2f(other0 - base0), a1 = exp2f(max1 - base1), b1 = exp2f(other1 - base1);
    sum0 = sum0 * a0 + mine[2] * b0;
    sum1 = sum1 * a1 + mine[3] * b1;
    max0 = top0;
    max1 = top1;
#pragma unroll
    for (int d = 0; d < ATT_D / 8; ++d) {
      acc[d][0] = acc[d][0] * a0 + mine[4 + d * 4 + 0] * b0;
      acc[d][1] = acc[d][1] * a0 + mine[4 + d * 4 + 1] * b0;
      acc[d][2] = acc[d][2] * a1 + mine[4 + d * 4 + 2] * b1;
      acc[d][3] = acc[d][3] * a1 + mine[4 + d * 4 + 3] * b1;
    }
  }
  const float inv0 = 1.0f / sum0, inv1 = 1.0f / sum1;
#pragma unroll
  for (int d = 0; d < ATT_D / 8; ++d) {
    const int col = d * 8 + 2 * (int)t;
    if (r0 < sq) {
      u16* at = op + r0 * orow + col;
      const u32 two = ${entry}_pack(acc[d][0] * inv0, acc[d][1] * inv0);
      if (ov) *(u32*)at = two;
      else { at[0] = (u16)two; at[1] = (u16)(two >> 16); }
    }
    if (r1 < sq) {
      u16* at = op + r1 * orow + col;
      const u32 two = ${entry}_pack(acc[d][2] * inv1, acc[d][3] * inv1);
      if (ov) *(u32*)at = two;
      else { at[0] = (u16)two; at[1] = (u16)(two >> 16); }
    }
  }
}
/* Other kernels of the module may define their own. */
#undef ATT_D
#undef ATT_P
`);
}

/** Dynamic shared memory of the kernel: two stages of a K and a V tile of 64 rows of D + 8 halves, or the streams' merge if larger. */
export const attentionSharedBytes = (headDim: number, tiling: AttentionTiling = DEFAULT_ATTENTION_TILING): number =>
  Math.max(2 * 2 * BLOCK_N * (headDim + 8) * 2, (tiling.streams - 1) * 32 * tiling.rowGroups * (headDim / 2 + 4) * 4);

/** Input `i` (query, key or value) from the element where the attention reads it (`offsets`), its last read inside the tensor. */
function startingAt(ctx: LoweringContext, t: BoundTensor, p: AttentionParams, i: number): BoundTensor {
  const names = ['query', 'key', 'value'];
  const strides = [p.query, p.key, p.value][i]!;
  const offset = p.offsets?.[i] ?? 0;
  const rows = i === 0 ? p.seqQ : p.seqKV;
  if (!Number.isInteger(offset) || offset < 0) unsupported(ctx, `attention ${names[i]} offset ${offset} is not a whole number of elements ≥ 0`);
  const reach = (pick: (s: number) => number): number => [...p.batch, rows].reduce((sum, n, d) => sum + (n - 1) * pick(strides[d] ?? 0), 0);
  const first = offset + reach((s) => Math.min(s, 0));
  const last = offset + p.headDim - 1 + reach((s) => Math.max(s, 0));
  if (volume(p.batch) * rows > 0 && (first < 0 || last >= volume(t.shape))) {
    unsupported(ctx, `attention reads ${names[i]} elements ${first} to ${last} of its ${volume(t.shape)} (offset ${offset}, strides [${strides.join(', ')}])`);
  }
  return offset === 0 ? t : { ...t, at: advance(t.at, t.dtype, offset) };
}

/**
 * An attention layer as the attention pass leaves it (`strided`, ../passes/fuse-attention.ts),
 * as one launch. A plain attention layer never reaches the lowerings: the pass fuses it or
 * spells it out.
 */
export const attention: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'attention');
  if (p.strided === undefined) unsupported(ctx, 'a plain attention layer reached the lowering: the attention pass fuses or spells out every one');
  return attentionLaunch(ctx, p.strided);
};

/** The strided attention `p` over the layer's inputs, as one launch. */
export function attentionLaunch(ctx: LoweringContext, p: AttentionParams, tiling: AttentionTiling = DEFAULT_ATTENTION_TILING): LoweredStep[] {
  const [q, k, v] = [0, 1, 2].map((i) => startingAt(ctx, input(ctx, i), p, i)) as [BoundTensor, BoundTensor, BoundTensor];
  const mask = ctx.inputs[3] ?? null;
  const out = output(ctx);
  const dtype = q.dtype;
  if (!ATTENTION_DTYPES.has(dtype) || k.dtype !== dtype || v.dtype !== dtype || out.dtype !== dtype) {
    unsupported(ctx, `attention takes float16 or bfloat16 query, key, value and output, not ${q.dtype}, ${k.dtype}, ${v.dtype}, ${out.dtype}`);
  }
  if (!attentionHeadDimOk(p.headDim)) unsupported(ctx, `attention takes head dims of multiples of 16 up to 128, not ${p.headDim}`);
  const rank = p.batch.length;
  checkRank(ctx, rank, 'attention batch');
  const lists = [p.query, p.key, p.value, p.output, ...(p.mask ? [p.mask] : [])];
  const rows = p.mask ? [rank + 1, rank + 1, rank + 1, rank + 1, rank + 2] : [rank + 1, rank + 1, rank + 1, rank + 1];
  if (lists.some((l, i) => l.length !== rows[i])) unsupported(ctx, `attention strides do not cover batch [${p.batch.join(', ')}]`);
  if ((mask === null) !== (p.mask === undefined)) unsupported(ctx, 'the attention mask and its strides must come together');
  const batch = volume(p.batch);
  if (batch * p.seqQ === 0) return [];
  if (blockThreads(tiling) > 256) unsupported(ctx, `attention tiling ${tilingName(tiling)} runs ${blockThreads(tiling)} threads a block, more than the kernel's registers allow`);
  const BLOCK_M = blockRows(tiling);
  if (p.seqQ >= 2 ** 31 - BLOCK_M || p.seqKV >= 2 ** 31 - BLOCK_N) unsupported(ctx, `attention over ${p.seqQ} queries and ${p.seqKV} keys exceeds 32-bit positions`);
  if (volume(out.shape) !== batch * p.seqQ * p.headDim) unsupported(ctx, `output [${out.shape.join(', ')}] does not hold the attention's ${batch}×${p.seqQ}×${p.headDim}`);
  const kind: MaskKind = mask === null ? 'none' : mask.dtype === 'bool' ? 'bool' : 'add';
  if (mask !== null && kind === 'add' && DTYPES[mask.dtype].compute !== 'float') unsupported(ctx, `an attention mask of ${mask.dtype} is neither bool nor float`);
  const aligned = (t: { at: { offset?: number } }, strides: readonly number[]): boolean => ((t.at.offset ?? 0) % 16 === 0) && strides.every((s) => s % 8 === 0);
  const paired = (t: { at: { offset?: number } }, strides: readonly number[]): boolean => ((t.at.offset ?? 0) % 4 === 0) && strides.every((s) => s % 2 === 0);
  const vec = (aligned(k, p.key) && aligned(v, p.value) ? 1 : 0) | (paired(q, p.query) ? 2 : 0) | (paired(out, p.output) ? 4 : 0);
  const mTiles = Math.ceil(p.seqQ / BLOCK_M);
  const batchOf = (l: readonly number[]): number[] => l.slice(0, rank);
  const maskStrides = p.mask ?? new Array<number>(rank + 2).fill(0);
  const kernel = attentionKernel(dtype, p.headDim, kind, mask?.dtype ?? null, p.causal, tiling);
  const noMask = { buffer: q.at.buffer, offset: q.at.offset ?? 0 };
  return [
    {
      kind: 'launch',
      kernel,
      grid: [batch * mTiles],
      block: [blockThreads(tiling)],
      sharedBytes: attentionSharedBytes(p.headDim, tiling),
      args: [
        ptr(out.at),
        ptr(q.at),
        ptr(k.at),
        ptr(v.at),
        ptr(mask === null ? noMask : mask.at),
        i32(rank),
        dims8(p.batch),
        dims8(batchOf(p.query)),
        dims8(batchOf(p.key)),
        dims8(batchOf(p.value)),
        dims8(batchOf(maskStrides)),
        dims8(batchOf(p.output)),
        i64(p.seqQ),
        i64(p.seqKV),
        i64(p.query[rank]!),
        i64(p.key[rank]!),
        i64(p.value[rank]!),
        i64(maskStrides[rank]!),
        i64(maskStrides[rank + 1]!),
        i64(p.output[rank]!),
        i64(mTiles),
        f32(p.scale * Math.LOG2E),
        i32(vec),
      ],
    },
  ];
}
