/**
 * The text every generated kernel starts with, and how each TensorRT dtype is stored and
 * computed in it. NVRTC runs without include paths, so nothing here includes a header:
 * fixed-width types are typedefs, half converts with inline PTX (bit manipulation in the
 * emulator) and bfloat16 by bit manipulation, and only
 * math functions NVRTC declares itself (and the C library has) are called. The CPU emulator
 * of the tests compiles the same text behind its own definitions of the CUDA built-ins.
 */
import { InternalError } from '../../../errors';
import type { TrtDType } from '../../../network';

export const PRELUDE = String.raw`
typedef signed char i8;
typedef unsigned char u8;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
/* Dims, strides and other per-axis values, passed by value (up to TensorRT's 8 dims). */
struct Dims8 { i64 v[8]; };
struct F64x8 { double v[8]; };
/* N neighbours of one storage type, aligned as one access (the vector form of a map). */
template <typename T, int N> struct alignas(sizeof(T) * N) VecN { T v[N]; };

/*
 * On the GPU the conversions are the hardware's (cvt, round to nearest even, subnormals kept):
 * measured on the H200, the bit-manipulation forms below made a bias+GELU map compute-bound,
 * at 1.7-2.6 times the time of the same kernel with cvt. The CPU emulator of the tests has no
 * __CUDA_ARCH__ and runs the bit-manipulation forms, which give the same bits for every
 * non-NaN value (a NaN stays a NaN; its payload may differ).
 */
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float h2f(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ u16 f2h(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ float h2f(u16 h) {
  u32 s = (u32)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float f = (float)m * 5.9604644775390625e-8f;
    return s ? -f : f;
  }
  if (e == 31) return __uint_as_float(s | 0x7f800000u | (m << 13));
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
/* Round to nearest even; overflow to infinity; NaN stays NaN. */
__device__ __forceinline__ u16 f2h(float f) {
  u32 x = __float_as_uint(f), s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (u16)(s | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return (u16)(s | 0x7c00u);
  if (a < 0x38800000u) return (u16)(s | (u32)rintf(__uint_as_float(a) * 16777216.0f));
  return (u16)(s | ((a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13));
}
#endif
__device__ __forceinline__ float bf2f(u16 h) { return __uint_as_float((u32)h << 16); }
__device__ __forceinline__ u16 f2bf(float f) {
  u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)((x >> 16) | 0x40u);
  return (u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ bool f_isnan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }
__device__ __forceinline__ bool f_isinf(float x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }
__device__ __forceinline__ float f_nan() { return __uint_as_float(0x7fc00000u); }
__device__ __forceinline__ float f_inf() { return __uint_as_float(0x7f800000u); }
/* Float to int8/uint8/int32: truncate toward zero, wrap to the width (the store truncates); NaN and infinities give 0. */
__device__ __forceinline__ i64 f2i_wrap(float x) {
  if (f_isnan(x) || f_isinf(x)) return 0;
  float t = truncf(x);
  return (t >= 9.2233720368547758e18f || t < -9.2233720368547758e18f) ? 0 : (i64)t;
}
/* Float to int64: truncate toward zero, saturate; NaN gives 0. */
__device__ __forceinline__ i64 f2i64_sat(float x) {
  if (f_isnan(x)) return 0;
  if (x >= 9.2233720368547758e18f) return (i64)0x7fffffffffffffffull;
  if (x < -9.2233720368547758e18f) return (i64)0x8000000000000000ull;
  return (i64)truncf(x);
}
/* The same two conversions from double (linspace and interpolations accumulate in double). */
__device__ __forceinline__ i64 f2i64_sat_d(double x) {
  if (x != x) return 0;
  if (x >= 9.2233720368547758e18) return (i64)0x7fffffffffffffffull;
  if (x < -9.2233720368547758e18) return (i64)0x8000000000000000ull;
  return (i64)trunc(x);
}
__device__ __forceinline__ i64 f2i_wrap_d(double x) {
  if (x != x || x - x != 0.0) return 0;
  double t = trunc(x);
  return (t >= 9.2233720368547758e18 || t < -9.2233720368547758e18) ? 0 : (i64)t;
}
/* Integer arithmetic wraps like the storage types (through unsigned: signed overflow is undefined in C++). */
__device__ __forceinline__ i64 i_add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ i64 i_sub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ __forceinline__ i64 i_mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
/*
 * Index helpers. Every loop over dims runs over all 8 slots, unrolled, guarded by d < rank:
 * with constant indices the Dims8 arguments are read in place and c[] stays in registers. A
 * loop indexed by the run-time rank makes the compiler copy each Dims8 argument to per-thread
 * local memory (64 bytes each, in every thread) and keep c[] there: that traffic, not the
 * arithmetic, was most of a row or slice kernel's time. Division runs in 32 bits when the
 * index fits (64-bit division costs several times more); a dim beyond 32 bits is clamped to
 * 0xffffffff there, which divides an index below 2^31 exactly as the true dim does (q 0, r i).
 */
__device__ __forceinline__ u32 dim32(i64 n) { return n > 0xffffffffLL ? 0xffffffffu : (u32)n; }
/* Splits flat index i into coordinates over dims (c[d] for d < rank). */
__device__ __forceinline__ void unflatten(i64 i, int rank, const Dims8& dims, i64* c) {
  if (i >= 0 && i <= 0x7fffffffLL) {
    u32 r = (u32)i;
#pragma unroll
    for (int d = 7; d >= 0; --d) {
      if (d < rank) {
        u32 n = dim32(dims.v[d]);
        c[d] = (i64)(r % n);
        r /= n;
      }
    }
  } else {
#pragma unroll
    for (int d = 7; d >= 0; --d) {
      if (d < rank) {
        c[d] = i % dims.v[d];
        i /= dims.v[d];
      }
    }
  }
}
__device__ __forceinline__ i64 dot8(const i64* c, int rank, const Dims8& st) {
  i64 o = 0;
#pragma unroll
  for (int d = 0; d < 8; ++d) if (d < rank) o += c[d] * st.v[d];
  return o;
}
/*
 * The offsets of flat row-major index i over dims through N tensors' strides (o[n] for st[n]):
 * unflatten's two paths, each summing its own offsets, the divisions once for all N.
 * Coordinates joined from both paths (unflatten, then dot8) made NVVM split every 16-byte store
 * after them into eight 2-byte ones (nvcc 13 PTX of the normalization and softmax warp forms);
 * summed apart, the stores stay whole.
 */
template <int N>
__device__ __forceinline__ void strided_n(i64 i, int rank, const Dims8& dims, const Dims8* const* st, i64* o) {
#pragma unroll
  for (int n = 0; n < N; ++n) o[n] = 0;
  if (i >= 0 && i <= 0x7fffffffLL) {
    u32 r = (u32)i;
#pragma unroll
    for (int d = 7; d >= 0; --d) {
      if (d < rank) {
        u32 m = dim32(dims.v[d]);
        const i64 c = (i64)(r % m);
#pragma unroll
        for (int n = 0; n < N; ++n) o[n] += c * st[n]->v[d];
        r /= m;
      }
    }
  } else {
#pragma unroll
    for (int d = 7; d >= 0; --d) {
      if (d < rank) {
        const i64 c = i % dims.v[d];
#pragma unroll
        for (int n = 0; n < N; ++n) o[n] += c * st[n]->v[d];
        i /= dims.v[d];
      }
    }
  }
}
/* The offset of flat row-major index i over dims, through one tensor's strides. */
__device__ __forceinline__ i64 strided(i64 i, int rank, const Dims8& dims, const Dims8& st) {
  const Dims8* const one[1] = {&st};
  i64 o[1];
  strided_n<1>(i, rank, dims, one, o);
  return o[0];
}
#define GRID_STRIDE(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)
`;

/** How one dtype lives in a kernel: its storage type, the type arithmetic runs in, and the conversions between them. */
export interface DTypeCode {
  readonly storage: string;
  /** float for every float dtype (fp16/bf16 compute in fp32), i64 for every integer, bool. */
  readonly compute: 'float' | 'i64' | 'bool';
  load(expr: string): string;
  store(expr: string): string;
}

const int = (storage: string): DTypeCode => ({ storage, compute: 'i64', load: (e) => `(i64)(${e})`, store: (e) => `(${storage})(${e})` });

/**
 * float8e4m3fn and int4 live only between quantize and dequantize layers, which a build spells
 * out or refuses (the spell-out-quantization pass; build.ts refuses any tensor left of these
 * types), so no kernel ever loads or stores them.
 */
const unheld = (dtype: TrtDType): DTypeCode => {
  const refuse = (): never => {
    throw new InternalError(`cuda backend: a kernel was asked to load or store ${dtype}, which the build refuses before lowering`);
  };
  return { storage: 'u8', compute: dtype === 'int4' ? 'i64' : 'float', load: refuse, store: refuse };
};

export const DTYPES: Record<TrtDType, DTypeCode> = {
  float32: { storage: 'float', compute: 'float', load: (e) => e, store: (e) => `(float)(${e})` },
  float16: { storage: 'u16', compute: 'float', load: (e) => `h2f(${e})`, store: (e) => `f2h(${e})` },
  bfloat16: { storage: 'u16', compute: 'float', load: (e) => `bf2f(${e})`, store: (e) => `f2bf(${e})` },
  int8: int('i8'),
  uint8: int('u8'),
  int32: int('i32'),
  int64: { storage: 'i64', compute: 'i64', load: (e) => e, store: (e) => e },
  bool: { storage: 'u8', compute: 'bool', load: (e) => `(${e} != 0)`, store: (e) => `(u8)((${e}) ? 1 : 0)` },
  float8e4m3fn: unheld('float8e4m3fn'),
  int4: unheld('int4'),
};

export const BYTES: Record<TrtDType, number> = { float32: 4, float16: 2, bfloat16: 2, int8: 1, uint8: 1, int32: 4, int64: 8, bool: 1, float8e4m3fn: 1, int4: 1 };

/** Stores a double into `dtype` (rounded once for floats; truncated, wrapped or saturated for integers). */
export function storeDouble(dtype: TrtDType, expr: string): string {
  if (dtype === 'int64') return `f2i64_sat_d(${expr})`;
  if (dtype === 'bool') return DTYPES.bool.store(`(${expr}) != 0.0`);
  if (DTYPES[dtype].compute === 'i64') return DTYPES[dtype].store(`f2i_wrap_d(${expr})`);
  return DTYPES[dtype].store(`(float)(${expr})`);
}

export const isFloatDType = (d: TrtDType): boolean => DTYPES[d].compute === 'float';

/** Converts a value of `from`'s compute type to `to`'s, with ICastLayer's rules (truncation, wrapping, int64 saturation, != 0 for bool). */
export function convert(from: TrtDType, to: TrtDType, expr: string): string {
  const a = DTYPES[from].compute;
  const b = DTYPES[to].compute;
  if (a === b) return expr;
  if (b === 'bool') return a === 'float' ? `((${expr}) != 0.0f && !f_isnan(${expr}))` : `((${expr}) != 0)`;
  if (a === 'bool') return b === 'float' ? `((${expr}) ? 1.0f : 0.0f)` : `(i64)((${expr}) ? 1 : 0)`;
  if (b === 'float') return `(float)(${expr})`;
  return to === 'int64' ? `f2i64_sat(${expr})` : `f2i_wrap(${expr})`;
}
