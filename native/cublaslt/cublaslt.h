// cuBLASLt, opened on first use, with one handle per device; GEMMs (fp32, fp16, bf16; transposed,
// strided-batched) as plan steps.
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

enum class DType : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };
inline uint64_t ElementBytes(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

// Row-major D[m×n] = alpha · op(A) · op(B) + beta · D, `batch` times with element strides between
// the matrices (0 broadcasts one); fp32 accumulation, TF32 only when `tf32`.
struct GemmShape {
  uint32_t m = 0, n = 0, k = 0;
  DType dtype = DType::kFloat32;
  bool transA = false, transB = false, tf32 = false;
  uint32_t batch = 1;
  uint64_t strideA = 0, strideB = 0, strideD = 0;
  float alpha = 1.0f, beta = 0.0f;
  // Byte alignment every matrix of A, B and D has (its pointer and batch stride), for the
  // heuristic, which otherwise assumes 256-byte alignment.
  uint32_t alignA = 256, alignB = 256, alignD = 256;
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
