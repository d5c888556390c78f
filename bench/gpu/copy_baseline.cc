// The floor the addon's copies are measured against: a plain C++ loop of cuMemcpy*Async +
// cuStreamSynchronize on pinned memory, the same sizes and repetitions as runtime.bench.js; and
// the floor of a round trip (one tiny device op, then wait for it) that no binding can go under.
// Built on the GPU machine: g++ -O2 -I/usr/local/cuda/include copy_baseline.cc -lcuda
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                   \
  do {                                                                \
    CUresult r = (call);                                              \
    if (r != CUDA_SUCCESS) {                                          \
      std::fprintf(stderr, "%s failed: %d\n", #call, static_cast<int>(r)); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

template <typename F>
double MedianMs(int reps, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const size_t bytes = size_t(256) << 20;
  const int reps = 20;
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUstream s;
  CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  void* host;
  CHECK(cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_PORTABLE));
  CUdeviceptr a, b;
  CHECK(cuMemAlloc(&a, bytes));
  CHECK(cuMemAlloc(&b, bytes));
  double h2d = MedianMs(reps, [&] { CHECK(cuMemcpyHtoDAsync(a, host, bytes, s)); CHECK(cuStreamSynchronize(s)); });
  double d2h = MedianMs(reps, [&] { CHECK(cuMemcpyDtoHAsync(host, a, bytes, s)); CHECK(cuStreamSynchronize(s)); });
  double d2d = MedianMs(reps, [&] { CHECK(cuMemcpyDtoDAsync(b, a, bytes, s)); CHECK(cuStreamSynchronize(s)); });
  // The same D2D from stream-ordered pool memory (what the addon allocates), and 20 copies
  // enqueued before one synchronize (what a plan step list does).
  CUdeviceptr pa, pb;
  CHECK(cuMemAllocAsync(&pa, bytes, s));
  CHECK(cuMemAllocAsync(&pb, bytes, s));
  CHECK(cuStreamSynchronize(s));
  double d2dPool = MedianMs(reps, [&] { CHECK(cuMemcpyDtoDAsync(pb, pa, bytes, s)); CHECK(cuStreamSynchronize(s)); });
  double d2dBatch = MedianMs(reps, [&] {
    for (int i = 0; i < 20; ++i) CHECK(cuMemcpyDtoDAsync(pb, pa, bytes, s));
    CHECK(cuStreamSynchronize(s));
  }) / 20;
  // 100 copies per wait: the rate with the wait's fixed cost (and, for the addon, its Promise's)
  // spread thin, which is what "copy bandwidth" means on a host whose wake-ups are slow.
  double d2dBatch100 = MedianMs(reps, [&] {
    for (int i = 0; i < 100; ++i) CHECK(cuMemcpyDtoDAsync(pb, pa, bytes, s));
    CHECK(cuStreamSynchronize(s));
  }) / 100;
  // A 4-byte memset (a one-thread device op, like the benchmark's tiny kernel) and a spinning
  // wait for it: the driver's and the device's share of a round trip.
  double tiny = MedianMs(2000, [&] { CHECK(cuMemsetD32Async(pb, 1, 1, s)); CHECK(cuStreamSynchronize(s)); }) * 1e3;
  auto gbps = [&](double ms) { return bytes / (ms * 1e6); };
  std::printf(
      "{\"bytes\":%zu,\"h2dMs\":%.4f,\"d2hMs\":%.4f,\"d2dMs\":%.4f,\"d2dPoolMs\":%.4f,\"d2dBatchPerCopyMs\":%.4f,\"d2dBatch100PerCopyMs\":%.4f,"
      "\"h2dGBs\":%.2f,\"d2hGBs\":%.2f,\"d2dGBs\":%.2f,\"tinyOpRoundTripUs\":%.2f}\n",
      bytes, h2d, d2h, d2d, d2dPool, d2dBatch, d2dBatch100, gbps(h2d), gbps(d2h), gbps(d2d), tiny);
  return 0;
}
