// Kernel lab: times the kernels the cuda backend generates for its slowest memory-bound
// layers (cases.h, written by export.js) beside hand-written candidate forms on the same
// data, and reads each one's registers and occupancy. The generated kernels go through
// NVRTC with the addon's options (--gpu-architecture=sm_XY); the candidates are compiled
// here by nvcc. Every candidate's output is compared with the generated kernel's.
//
//   node bench/gpu/kernel-lab/export.js && nvcc -O3 -arch=sm_90 -std=c++17 \
//     bench/gpu/kernel-lab/lab.cu -o /tmp/lab -lcuda -lnvrtc && /tmp/lab
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cases.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = nullptr; cuGetErrorString(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)

static const int kReps = 200;
static double gCopyGBps = 0;
// Every timed launch goes to this stream, so that it can also be captured into a CUDA graph.
static cudaStream_t gS;

// ---------------------------------------------------------------- timing
// Two timings a kernel: back-to-back launches on a stream (what an uncaptured run pays: on
// this host a short kernel is bound by the CPU's launch rate, about 4 us) and the same launches
// replayed from one CUDA graph (the device time the backend's graph replay pays).
struct Timing { double stream, graph; };
// The device time between two events around what `enqueue` puts on the lab's stream, in µs.
template <typename F>
static double EventUs(F&& enqueue) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a, gS));
  enqueue();
  CK(cudaEventRecord(b, gS));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms * 1000.0;
}
template <typename F>
static double TimeStreamUs(F&& launch) {
  for (int i = 0; i < 20; ++i) launch();
  CK(cudaStreamSynchronize(gS));
  return EventUs([&] { for (int i = 0; i < kReps; ++i) launch(); }) / kReps;
}
template <typename F>
static double TimeGraphUs(F&& launch) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(gS, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kReps; ++i) launch();
  CK(cudaStreamEndCapture(gS, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, gS));
  CK(cudaStreamSynchronize(gS));
  const double us = EventUs([&] { CK(cudaGraphLaunch(exec, gS)); }) / kReps;
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  return us;
}
// LAB_ONCE=1 (for Nsight Compute): each kernel launched once, untimed, so that a profiler's
// launch count reaches every candidate.
static const bool kOnce = getenv("LAB_ONCE") != nullptr;
template <typename F>
static Timing TimeUs(F&& launch) {
  if (kOnce) {
    launch();
    CK(cudaStreamSynchronize(gS));
    return Timing{0, 0};
  }
  return Timing{TimeStreamUs(launch), TimeGraphUs(launch)};
}

static void Report(const char* what, Timing t, double bytes, int regs, int blocksPerSm, int threads, double maxDiff);
static double MaxDiff(const std::vector<float>& a, const void* p, uint64_t bytes);
// Times `launch`, then compares its output with the generated kernel's (in that order: the
// order in which a call's arguments are evaluated is unspecified).
template <typename F>
static void Candidate(const char* what, F&& launch, double bytes, int regs, int blocksPerSm, int threads,
                      const std::vector<float>& ref, const void* y, uint64_t outBytes) {
  Timing t = TimeUs(launch);
  Report(what, t, bytes, regs, blocksPerSm, threads, MaxDiff(ref, y, outBytes));
}
static void Report(const char* what, Timing t, double bytes, int regs, int blocksPerSm, int threads, double maxDiff) {
  // Bandwidth from the graph time: the device's own rate, free of the host's launch rate.
  double gbps = t.graph > 0 ? bytes / (t.graph * 1e-6) / 1e9 : 0.0;
  printf("{\"kernel\":\"%s\",\"us\":%.2f,\"graphUs\":%.2f,\"GBps\":%.0f,\"ofCopy\":%.3f,\"regs\":%d,\"occupancy\":%.2f,\"maxDiff\":%g}\n", what, t.stream, t.graph, gbps,
         gCopyGBps > 0 ? gbps / gCopyGBps : 0.0, regs, blocksPerSm * threads / 2048.0, maxDiff);
  fflush(stdout);
}

// ---------------------------------------------------------------- data
__global__ void FillHalf(__half* p, uint64_t n, uint32_t seed, float lo, float hi) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)blockDim.x * gridDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    p[i] = __float2half(lo + (hi - lo) * (h & 0xffffff) / 16777216.0f);
  }
}
static void Fill(void* p, uint64_t bytes, uint32_t seed, float lo = -3, float hi = 3) {
  FillHalf<<<1024, 256>>>((__half*)p, bytes / 2, seed, lo, hi);
  CK(cudaGetLastError());
}
static std::vector<float> Read(const void* p, uint64_t bytes) {
  std::vector<__half> h(bytes / 2);
  CK(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost));
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = __half2float(h[i]);
  return f;
}
static double MaxDiff(const std::vector<float>& a, const void* p, uint64_t bytes) {
  std::vector<float> b = Read(p, bytes);
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs((double)a[i] - b[i]);
    if (std::isnan(d)) return NAN;
    if (d > m) m = d;
  }
  return m;
}

// ---------------------------------------------------------------- generated kernels through NVRTC
struct Generated {
  const LabCase* c;
  CUfunction fn;
  std::vector<void*> buffers;
  std::vector<uint8_t> params;
  int regs = 0, blocksPerSm = 0;
};

// `source`: the case's own kernel, or a hand-edited variant of it with the same entry and parameters.
static Generated Load(const LabCase& c, int arch, const char* source = nullptr) {
  Generated g{&c};
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, source ? source : c.source, c.entry, 0, nullptr, nullptr);
  std::string opt = "--gpu-architecture=sm_" + std::to_string(arch);
  const char* opts[] = {opt.c_str()};
  if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
    size_t n;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, 0);
    nvrtcGetProgramLog(prog, &log[0]);
    fprintf(stderr, "%s: %s\n", c.entry, log.c_str());
    exit(1);
  }
  size_t n;
  nvrtcGetCUBINSize(prog, &n);
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  CUmodule mod;
  CU(cuModuleLoadData(&mod, cubin.data()));
  CU(cuModuleGetFunction(&g.fn, mod, c.entry));
  CU(cuFuncGetAttribute(&g.regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g.fn));
  // Past 48 KiB of dynamic shared memory a kernel must opt in (as native/gpu/plan.cc does).
  if (c.shared > 48 * 1024) CU(cuFuncSetAttribute(g.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c.shared));
  CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&g.blocksPerSm, g.fn, c.block[0], c.shared));
  for (uint32_t b = 0; b < c.nbuffers; ++b) {
    void* p;
    CK(cudaMalloc(&p, c.buffers[b]));
    Fill(p, c.buffers[b], 17 + b);
    g.buffers.push_back(p);
  }
  g.params.assign(c.params, c.params + c.paramBytes);
  for (uint32_t k = 0; k < c.nptrs; ++k) {
    uint64_t v = (uint64_t)g.buffers[c.ptrs[k].buffer] + c.ptrs[k].offset;
    memcpy(&g.params[c.ptrs[k].at], &v, 8);
  }
  return g;
}

static void LaunchGenerated(Generated& g, uint32_t block = 0) {
  const LabCase& c = *g.c;
  size_t bytes = g.params.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, g.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  uint32_t bx = block ? block : c.block[0];
  uint32_t gx = c.grid[0];
  if (block) {  // maps are grid-stride loops: any geometry covers the box
    uint64_t n = c.buffers[0] / 2;
    gx = (uint32_t)std::min<uint64_t>((n + bx - 1) / bx, 1u << 16);
  }
  CU(cuLaunchKernel(g.fn, gx, c.grid[1], c.grid[2], bx, c.block[1], c.block[2], c.shared, (CUstream)gS, nullptr, extra));
}

static uint64_t TrafficBytes(const LabCase& c) {
  uint64_t t = 0;
  for (uint32_t b = 0; b < c.nbuffers; ++b) t += c.buffers[b];
  return t;
}

// ---------------------------------------------------------------- candidate forms
// Software half conversions exactly as the generated prelude writes them.
__device__ __forceinline__ float sw_h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }
  if (e == 31) return __uint_as_float(s | 0x7f800000u | (m << 13));
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ uint16_t sw_f2h(float f) {
  uint32_t x = __float_as_uint(f), s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (uint16_t)(s | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);
  if (a < 0x38800000u) return (uint16_t)(s | (uint32_t)rintf(__uint_as_float(a) * 16777216.0f));
  return (uint16_t)(s | ((a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13));
}
__device__ __forceinline__ float hw_h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t hw_f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }

__device__ __forceinline__ float Gelu(float a, float b, bool hw) {
  float x = hw ? hw_h2f(hw_f2h(a + b)) : sw_h2f(sw_f2h(a + b));
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

// One element a thread, 32-bit index, the bias column by a run-time modulo.
template <bool HW>
__global__ void GeluOne(uint16_t* y, const uint16_t* x, const uint16_t* b, uint32_t n, uint32_t cols) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = Gelu(HW ? hw_h2f(x[i]) : sw_h2f(x[i]), HW ? hw_h2f(b[i % cols]) : sw_h2f(b[i % cols]), HW);
    y[i] = HW ? hw_f2h(v) : sw_f2h(v);
  }
}

// V neighbours a thread through one vector load per operand (V = 8 halves: 16 bytes).
template <int V, bool HW>
__global__ void GeluVec(uint16_t* y, const uint16_t* x, const uint16_t* b, uint32_t n, uint32_t cols) {
  using Vec = typename std::conditional<V == 8, uint4, typename std::conditional<V == 4, uint2, uint32_t>::type>::type;
  for (uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * V; i < n; i += blockDim.x * gridDim.x * V) {
    Vec xv = *reinterpret_cast<const Vec*>(x + i);
    Vec bv = *reinterpret_cast<const Vec*>(b + i % cols);
    Vec yv;
    const uint16_t* xs = reinterpret_cast<const uint16_t*>(&xv);
    const uint16_t* bs = reinterpret_cast<const uint16_t*>(&bv);
    uint16_t* ys = reinterpret_cast<uint16_t*>(&yv);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float v = Gelu(HW ? hw_h2f(xs[k]) : sw_h2f(xs[k]), HW ? hw_h2f(bs[k]) : sw_h2f(bs[k]), HW);
      ys[k] = HW ? hw_f2h(v) : sw_f2h(v);
    }
    *reinterpret_cast<Vec*>(y + i) = yv;
  }
}

// U elements a thread, T apart (coalesced), all loads issued before any math.
template <int U>
__global__ void GeluIlp(uint16_t* y, const uint16_t* x, const uint16_t* b, uint32_t n, uint32_t cols) {
  uint32_t T = blockDim.x * gridDim.x;
  for (uint32_t i0 = blockIdx.x * blockDim.x + threadIdx.x; i0 < n; i0 += T * U) {
    uint16_t xs[U], bs[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      uint32_t i = i0 + k * T;
      if (i < n) { xs[k] = x[i]; bs[k] = b[i % cols]; }
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      uint32_t i = i0 + k * T;
      if (i < n) y[i] = sw_f2h(Gelu(sw_h2f(xs[k]), sw_h2f(bs[k]), false));
    }
  }
}

__device__ __forceinline__ float WarpSum(float v) {
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));
  return v;
}

// Softmax: a warp a row of 32·E elements held in registers, E/4 8-byte loads a lane.
template <int E>
__global__ void SoftmaxWarp(uint16_t* y, const uint16_t* x, uint32_t rows) {
  const int lane = threadIdx.x & 31;
  for (uint32_t r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += (blockDim.x * gridDim.x) >> 5) {
    const uint16_t* xr = x + (uint64_t)r * 32 * E;
    float v[E];
#pragma unroll
    for (int k = 0; k < E / 4; ++k) {
      uint2 q = *reinterpret_cast<const uint2*>(xr + (k * 32 + lane) * 4);
      const uint16_t* h = reinterpret_cast<const uint16_t*>(&q);
#pragma unroll
      for (int j = 0; j < 4; ++j) v[k * 4 + j] = hw_h2f(h[j]);
    }
    float m = v[0];
#pragma unroll
    for (int k = 1; k < E; ++k) m = fmaxf(m, v[k]);
    m = WarpMax(m);
    float s = 0;
#pragma unroll
    for (int k = 0; k < E; ++k) { v[k] = expf(v[k] - m); s += v[k]; }
    s = WarpSum(s);
    float inv = 1.0f / s;
    uint16_t* yr = y + (uint64_t)r * 32 * E;
#pragma unroll
    for (int k = 0; k < E / 4; ++k) {
      uint2 q;
      uint16_t* h = reinterpret_cast<uint16_t*>(&q);
#pragma unroll
      for (int j = 0; j < 4; ++j) h[j] = hw_f2h(v[k * 4 + j] * inv);
      *reinterpret_cast<uint2*>(yr + (k * 32 + lane) * 4) = q;
    }
  }
}

// LayerNorm: a warp a row of 32·E elements in registers (E/8 16-byte loads a lane), two-pass
// variance; RMS: no mean subtracted and one bias value b[0] for every element (Llama's RMSNorm
// as fuse-rmsnorm writes it, with its [1, 1, 1] bias).
template <int E, bool RMS = false>
__global__ void LayerNormWarp(uint16_t* y, const uint16_t* x, const uint16_t* g, const uint16_t* b, float eps, uint32_t rows) {
  const int lane = threadIdx.x & 31;
  const int C = 32 * E;
  for (uint32_t r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += (blockDim.x * gridDim.x) >> 5) {
    const uint16_t* xr = x + (uint64_t)r * C;
    float v[E];
#pragma unroll
    for (int k = 0; k < E / 8; ++k) {
      uint4 q = *reinterpret_cast<const uint4*>(xr + (k * 32 + lane) * 8);
      const uint16_t* h = reinterpret_cast<const uint16_t*>(&q);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[k * 8 + j] = hw_h2f(h[j]);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < E; ++k) s += v[k];
    float mean = RMS ? 0.0f : WarpSum(s) / C;
    float q2 = 0;
#pragma unroll
    for (int k = 0; k < E; ++k) { float d = v[k] - mean; q2 += d * d; }
    float inv = rsqrtf(WarpSum(q2) / C + eps);
    const float b0 = RMS ? hw_h2f(b[0]) : 0.0f;
    uint16_t* yr = y + (uint64_t)r * C;
#pragma unroll
    for (int k = 0; k < E / 8; ++k) {
      int c0 = (k * 32 + lane) * 8;
      uint4 gq = *reinterpret_cast<const uint4*>(g + c0), bq = RMS ? make_uint4(0, 0, 0, 0) : *reinterpret_cast<const uint4*>(b + c0), o;
      const uint16_t* gh = reinterpret_cast<const uint16_t*>(&gq);
      const uint16_t* bh = reinterpret_cast<const uint16_t*>(&bq);
      uint16_t* oh = reinterpret_cast<uint16_t*>(&o);
#pragma unroll
      for (int j = 0; j < 8; ++j) oh[j] = hw_f2h((v[k * 8 + j] - mean) * inv * hw_h2f(gh[j]) + (RMS ? b0 : hw_h2f(bh[j])));
      *reinterpret_cast<uint4*>(yr + c0) = o;
    }
  }
}

// The hardware conversions (cvt) against the prelude's bit manipulation: every half, and 2^26
// float32 bit patterns spread over all 2^32; NaNs only need to stay NaN.
__global__ void ConversionCheck(unsigned long long* mismatches) {
  uint64_t T = (uint64_t)blockDim.x * gridDim.x;
  for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < (1ull << 26); k += T) {
    if (k < 65536) {
      float a = sw_h2f((uint16_t)k), b = hw_h2f((uint16_t)k);
      if (!(isnan(a) && isnan(b)) && __float_as_uint(a) != __float_as_uint(b)) atomicAdd(&mismatches[0], 1ull);
    }
    float f = __uint_as_float((uint32_t)(k * 64 + (k % 64)));
    uint16_t a = sw_f2h(f), b = hw_f2h(f);
    bool na = (a & 0x7c00) == 0x7c00 && (a & 0x3ff), nb = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    if (!(na && nb) && a != b) atomicAdd(&mismatches[1], 1ull);
  }
}

template <typename K>
static int Occ(K kernel, int threads) {
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return blocks;
}
template <typename K>
static int Regs(K kernel) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs;
}

static uint32_t Grid(uint64_t items, int threads) { return (uint32_t)std::min<uint64_t>((items + threads - 1) / threads, 1u << 16); }

int main() {
  CK(cudaFree(0));
  // Blocking: ordered with the fills and resets on the legacy stream.
  CK(cudaStreamCreate(&gS));
  int dev = 0, major = 0, minor = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int arch = major * 10 + minor;

  // Device-to-device copy of 256 MiB: the bandwidth every figure is a fraction of.
  {
    const size_t bytes = 256ull << 20;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    double us = TimeStreamUs([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, gS)); });
    gCopyGBps = 2.0 * bytes / (us * 1e-6) / 1e9;
    printf("{\"copy256MiB_us\":%.1f,\"copyGBps\":%.0f,\"arch\":%d,\"sms\":%d}\n", us, gCopyGBps, arch, sms);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }

  {
    unsigned long long* m;
    CK(cudaMalloc(&m, 16));
    CK(cudaMemset(m, 0, 16));
    ConversionCheck<<<1024, 256>>>(m);
    unsigned long long h[2];
    CK(cudaMemcpy(h, m, 16, cudaMemcpyDeviceToHost));
    printf("{\"conversionMismatches\":{\"h2f\":%llu,\"f2h\":%llu}}\n", h[0], h[1]);
    CK(cudaFree(m));
  }

  for (int ci = 0; ci < kNumCases; ++ci) {
    const LabCase& c = kCases[ci];
    // LAB_ONLY=<text>: only the cases whose name contains it.
    if (getenv("LAB_ONLY") && !strstr(c.name, getenv("LAB_ONLY"))) continue;
    Generated g = Load(c, arch);
    const double traffic = (double)TrafficBytes(c);
    printf("== %s (%s)\n", c.name, c.entry);
    Report("generated", TimeUs([&] { LaunchGenerated(g); }), traffic, g.regs, g.blocksPerSm, c.block[0], 0);
    const uint64_t outBytes = c.buffers[0];
    const std::vector<float> ref = Read(g.buffers[0], outBytes);
    uint16_t* y = (uint16_t*)g.buffers[0];
    const uint16_t* x = (const uint16_t*)g.buffers[1];
    auto reset = [&] { CK(cudaMemset(y, 0xff, outBytes)); };
    for (int vi = 0; vi < kNumVariants; ++vi) {
      if (kVariants[vi].at != ci) continue;
      Generated gv = Load(c, arch, kVariants[vi].source);
      const std::string name = std::string("variant: ") + kVariants[vi].name;
      Candidate(name.c_str(), [&] { LaunchGenerated(gv); }, traffic, gv.regs, gv.blocksPerSm, c.block[0], ref, gv.buffers[0], outBytes);
      for (void* p : gv.buffers) CK(cudaFree(p));
    }
    const std::string key = c.key;
    const bool isMap = key.rfind("lab.", 0) == 0 || key.rfind("copy.", 0) == 0;
    if (isMap) {
      for (uint32_t block : {128u, 512u, 1024u}) {
        int occ = 0;
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, g.fn, block, 0));
        std::string name = "generated, block " + std::to_string(block);
        reset();
        Candidate(name.c_str(), [&] { LaunchGenerated(g, block); }, traffic, g.regs, occ, block, ref, y, outBytes);
      }
    }
    if (key.rfind("lab.bias_gelu.float16", 0) == 0) {
      const uint16_t* b = (const uint16_t*)g.buffers[2];
      const uint32_t n = (uint32_t)(outBytes / 2), cols = 3072;
      reset();
      Candidate("one a thread, sw half", [&] { GeluOne<false><<<Grid(n, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluOne<false>), Occ(GeluOne<false>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("one a thread, hw half", [&] { GeluOne<true><<<Grid(n, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluOne<true>), Occ(GeluOne<true>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("ilp 4, sw half", [&] { GeluIlp<4><<<Grid(n / 4, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluIlp<4>), Occ(GeluIlp<4>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("vec 2, sw half", [&] { GeluVec<2, false><<<Grid(n / 2, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluVec<2, false>), Occ(GeluVec<2, false>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("vec 4, sw half", [&] { GeluVec<4, false><<<Grid(n / 4, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluVec<4, false>), Occ(GeluVec<4, false>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("vec 8, sw half", [&] { GeluVec<8, false><<<Grid(n / 8, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluVec<8, false>), Occ(GeluVec<8, false>, 256), 256, ref, y, outBytes);
      reset();
      Candidate("vec 8, hw half", [&] { GeluVec<8, true><<<Grid(n / 8, 256), 256, 0, gS>>>(y, x, b, n, cols); }, traffic, Regs(GeluVec<8, true>), Occ(GeluVec<8, true>, 256), 256, ref, y, outBytes);
      reset();
      Report("device copy of the input", TimeUs([&] { CK(cudaMemcpyAsync(y, x, outBytes, cudaMemcpyDeviceToDevice, gS)); }), 2.0 * outBytes, 0, 0, 0, -1);
    } else if (key.rfind("softmax.float16", 0) == 0) {
      const uint32_t inner = c.buffers[0] == 8ull * 12 * 128 * 128 * 2 ? 128 : 512;
      const uint32_t rows = (uint32_t)(outBytes / 2 / inner);
      reset();
      if (inner == 128) Candidate("warp a row, registers", [&] { SoftmaxWarp<4><<<Grid(rows * 32ull, 256), 256, 0, gS>>>(y, x, rows); }, traffic, Regs(SoftmaxWarp<4>), Occ(SoftmaxWarp<4>, 256), 256, ref, y, outBytes);
      else Candidate("warp a row, registers", [&] { SoftmaxWarp<16><<<Grid(rows * 32ull, 256), 256, 0, gS>>>(y, x, rows); }, traffic, Regs(SoftmaxWarp<16>), Occ(SoftmaxWarp<16>, 256), 256, ref, y, outBytes);
    } else if (key.rfind("normalization.", 0) == 0 && key.find(".rms") != std::string::npos) {
      const uint32_t rows = (uint32_t)(outBytes / 2 / 2048);
      const uint16_t* gm = (const uint16_t*)g.buffers[2];
      const uint16_t* b1 = (const uint16_t*)g.buffers[3];
      reset();
      Candidate("warp a row, registers", [&] { LayerNormWarp<64, true><<<Grid(rows * 32ull, 128), 128, 0, gS>>>(y, x, gm, b1, 1e-5f, rows); }, traffic, Regs(LayerNormWarp<64, true>), Occ((LayerNormWarp<64, true>), 128), 128, ref, y, outBytes);
      Candidate("warp a row, registers, 8 rows a block", [&] { LayerNormWarp<64, true><<<Grid(rows * 32ull, 256), 256, 0, gS>>>(y, x, gm, b1, 1e-5f, rows); }, traffic, Regs(LayerNormWarp<64, true>), Occ((LayerNormWarp<64, true>), 256), 256, ref, y, outBytes);
    } else if (key.rfind("normalization.", 0) == 0) {
      const uint32_t rows = (uint32_t)(outBytes / 2 / 768);
      const uint16_t* gm = (const uint16_t*)g.buffers[2];
      const uint16_t* bt = (const uint16_t*)g.buffers[3];
      reset();
      Candidate("warp a row, registers", [&] { LayerNormWarp<24><<<Grid(rows * 32ull, 128), 128, 0, gS>>>(y, x, gm, bt, 1e-12f, rows); }, traffic, Regs(LayerNormWarp<24>), Occ(LayerNormWarp<24>, 128), 128, ref, y, outBytes);
    }
    for (void* p : g.buffers) CK(cudaFree(p));
  }
  return 0;
}
