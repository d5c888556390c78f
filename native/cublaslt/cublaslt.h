// cuBLASLt, opened on first use, with one handle per device; fp32 GEMMs as plan steps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../common/native_error.h"
#include "../cuda/runtime.h"

namespace trtn::cublaslt {

struct LibraryInfo {
  std::string libraryPath;
  double version = 0;  // cublasLtGetVersion(), e.g. 130100 for 13.1.0
};

bool Info(LibraryInfo* out, NativeError* error);

// Row-major D[m×n] = A[m×k] · B[k×n] in fp32 with fp32 compute (no TF32).
struct GemmShape {
  uint32_t m = 0, n = 0, k = 0;
};

class Gemm;
struct GemmDeleter {
  void operator()(Gemm* gemm) const;
};
using GemmPtr = std::unique_ptr<Gemm, GemmDeleter>;

// Builds the descriptors and picks an algorithm (host work; the device's context must be current).
bool PrepareGemm(cuda::Device& device, const GemmShape& shape, GemmPtr* out, size_t* workspaceBytes,
                 NativeError* error);

bool EnqueueGemm(const Gemm& gemm, cuda::CUstream stream, cuda::CUdeviceptr a, cuda::CUdeviceptr b,
                 cuda::CUdeviceptr d, cuda::CUdeviceptr workspace, size_t workspaceBytes, NativeError* error);

}  // namespace trtn::cublaslt
