// The RMSNorm warp kernel lowering/nn.ts wrote for [512, 2048] fp16 at 84362a7 (then named
// k_normalization_float16_float16_float16_rms_warp64v8; the case's entry now), with switches that each remove one
// difference from the hand-written LayerNormWarp<64, true> in lab.cu. Same parameters as the
// generated kernel, so the lab launches a variant with the generated kernel's packed arguments.
//   NO_INSIDE     every chunk inside the row (no per-chunk predicate)
//   VEC_SCALE     the scale in one 16-byte load a chunk, the bias once a row (not 16 scalar
//                 strided loads a chunk)
//   HOIST_SCALE   VEC_SCALE's loads issued before the reduction
//   DENSE_ROWS    row offsets o * inner in 32 bits (not strided() through Dims8)
//   RSQRT         rsqrtf (not 1 / sqrtf)
//   VEC_STORE     the output chunk stored through a uint4 (nvcc's PTX for the generated form
//                 has 8 scalar 2-byte stores a chunk; with DENSE_ROWS it has one 16-byte store)
#ifndef NO_INSIDE
#define NO_INSIDE 0
#endif
#ifndef VEC_SCALE
#define VEC_SCALE 0
#endif
#ifndef HOIST_SCALE
#define HOIST_SCALE 0
#endif
#ifndef DENSE_ROWS
#define DENSE_ROWS 0
#endif
#ifndef RSQRT
#define RSQRT 0
#endif
#ifndef VEC_STORE
#define VEC_STORE 0
#endif
__device__ __forceinline__ float v_sum(float v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}
extern "C" __global__ void ENTRY(u16* y, const u16* x, const u16* scale, const u16* bias, float eps, i64 outer, i32 orank, Dims8 odims, Dims8 o_x, Dims8 o_s, Dims8 o_b, i64 inner, i32 irank, Dims8 idims, Dims8 i_x, Dims8 i_s, Dims8 i_b) {
  const int lane = threadIdx.x & 31;
  for (i64 o = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < outer; o += ((i64)blockDim.x * gridDim.x) >> 5) {
#if DENSE_ROWS
    const u32 bx = (u32)o * (u32)inner;
    const u16* sr = scale;
    const u16* br = bias;
#else
    const i64 bx = strided(o, orank, odims, o_x);
    const u16* sr = scale + strided(o, orank, odims, o_s);
    const u16* br = bias + strided(o, orank, odims, o_b);
#endif
    const u16* xr = x + bx;
    u16* yr = y + bx;
    const int ss = (int)i_s.v[0], sb = (int)i_b.v[0];
    const u16* sl = sr + lane * 8 * ss;
    const u16* bl = br + lane * 8 * sb;
    (void)sl; (void)bl;
    float v[64];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int j0 = (c * 32 + lane) * 8;
      const bool inside = NO_INSIDE || j0 < (int)inner;
      VecN<u16, 8> q;
      if (inside) q = *reinterpret_cast<const VecN<u16, 8>*>(xr + j0);
#pragma unroll
      for (int t = 0; t < 8; ++t) v[c * 8 + t] = inside ? h2f(q.v[t]) : 0.0f;
    }
#if HOIST_SCALE
    VecN<u16, 8> qs[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) qs[c] = *reinterpret_cast<const VecN<u16, 8>*>(sr + (c * 32 + lane) * 8);
#endif
    float var = 0.0f;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int j0 = (c * 32 + lane) * 8;
      const bool inside = NO_INSIDE || j0 < (int)inner;
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        const float d = inside ? v[c * 8 + t] : 0.0f;
        var += d * d;
      }
    }
    var = v_sum(var);
#if RSQRT
    const float inv = rsqrtf(var / (float)inner + eps);
#else
    const float inv = 1.0f / sqrtf(var / (float)inner + eps);
#endif
#if VEC_SCALE || HOIST_SCALE
    const float b0 = h2f(br[0]);
#endif
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int j0 = (c * 32 + lane) * 8;
      const bool inside = NO_INSIDE || j0 < (int)inner;
      if (inside) {
#if HOIST_SCALE
        const VecN<u16, 8> s8 = qs[c];
#elif VEC_SCALE
        const VecN<u16, 8> s8 = *reinterpret_cast<const VecN<u16, 8>*>(sr + j0);
#endif
        VecN<u16, 8> q;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
#if VEC_SCALE || HOIST_SCALE
          q.v[t] = f2h(v[c * 8 + t] * inv * h2f(s8.v[t]) + b0);
#else
          q.v[t] = f2h(v[c * 8 + t] * inv * h2f(sl[(c * 256 + t) * ss]) + h2f(bl[(c * 256 + t) * sb]));
#endif
        }
#if VEC_STORE
        uint4 u;
        memcpy(&u, &q, 16);
        *reinterpret_cast<uint4*>(yr + j0) = u;
#else
        *reinterpret_cast<VecN<u16, 8>*>(yr + j0) = q;
#endif
      }
    }
  }
}
