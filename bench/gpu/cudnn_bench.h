// What the standalone cuDNN benchmarks (conv_layouts.cc, pointwise_convs.cc) share: exit-on-error
// checks for the CUDA runtime and cuDNN, and a deterministic fp16 fill. Header-only; each program
// still builds with one g++ line.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)
#define DN(x)                                                                                     \
  do {                                                                                            \
    cudnnStatus_t s_ = (x);                                                                       \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudnnGetErrorString(s_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// n fp16 values in [-0.5, 0.5), a different sequence per seed, copied to device memory p.
inline void Fill(void* p, size_t n, unsigned seed = 0) {
  std::vector<__half> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = __float2half(float(((i + seed) * 2654435761u) % 1000) / 1000.0f - 0.5f);
  CK(cudaMemcpy(p, h.data(), n * 2, cudaMemcpyHostToDevice));
}
