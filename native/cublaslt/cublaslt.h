// cuBLASLt, opened on first use, with one handle per device; GEMMs (fp32, fp16, bf16; transposed,
// strided-batched) as plan steps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// Row-major D[m×n] = act(alpha · op(A) · op(B) + beta · C + bias), `batch` times with element
// strides between the matrices (0 broadcasts one); fp32 accumulation, TF32 only when `tf32`.
// C is D itself unless `hasC` (then a dense m×n matrix of its own, batch 1); bias, when
// `hasBias`, is n elements (one per output column, batch 1); act is ReLU with `relu`.
struct GemmShape {
  uint32_t m = 0, n = 0, k = 0;
  DType dtype = DType::kFloat32;
  bool transA = false, transB = false, tf32 = false;
  bool relu = false, hasC = false, hasBias = false;
  uint32_t batch = 1;
  uint64_t strideA = 0, strideB = 0, strideD = 0;
  float alpha = 1.0f, beta = 0.0f;
  // Byte alignment every matrix of A, B, C and D has (its pointer and batch stride), for the
  // heuristic, which otherwise assumes 256-byte alignment.
  uint32_t alignA = 256, alignB = 256, alignC = 256, alignD = 256;
  // How many of the heuristic's candidates TuneGemm times (at most 1: its first is taken).
  uint32_t tune = 0;
};

class Gemm;
struct GemmDeleter {
  void operator()(Gemm* gemm) const;
};
using GemmPtr = std::unique_ptr<Gemm, GemmDeleter>;

// Builds the descriptors and asks the heuristic for up to `shape.tune` candidates, the first of
// them chosen (host work; the device's context must be current). `bias` is the bias vector's
// address, which the heuristic reads for its alignment. `workspaceBytes`: what the largest
// candidate needs.
bool PrepareGemm(cuda::Device& device, const GemmShape& shape, cuda::CUdeviceptr bias, GemmPtr* out,
                 size_t* workspaceBytes, NativeError* error);

// Times each candidate on the plan's own operands and keeps the fastest (a no-op with one
// candidate, or when the driver lacks event timing). Writes D; reads A, B, C and the bias. The
// choice is remembered per device and problem for the life of the process, so a plan with the
// same GEMM several times (a ResNet's repeated blocks) times it once. With `mayTime` false (the
// plan's timing budget is spent) a remembered choice is still taken, but nothing is timed: the
// heuristic's first candidate stays.
bool TuneGemm(Gemm& gemm, const cuda::Device& device, cuda::CUstream stream, cuda::CUdeviceptr a, cuda::CUdeviceptr b,
              cuda::CUdeviceptr c, cuda::CUdeviceptr d, cuda::CUdeviceptr workspace, size_t workspaceBytes,
              bool mayTime, NativeError* error);

// The choices TuneGemm made or was seeded with on `device`, as plain data for a timing cache file:
// the problem (every shape field that decides the candidates and their speed, as text) and the
// algorithm's bytes (cublasLtMatmulAlgo_t, which cuBLASLt documents as serializable for use with
// the same library version).
constexpr size_t kAlgorithmBytes = 64;
struct TunedGemm {
  std::string problem;
  std::vector<uint8_t> algo;
};
std::vector<TunedGemm> TunedGemms(int device);

// Seeds choices for `device` (from a file); entries of the wrong size are skipped, and what the
// process already chose is kept. A seeded algorithm is used only while it is among a problem's
// candidates; otherwise the problem is timed again. Returns how many entries were taken.
size_t SeedTunedGemms(int device, const std::vector<TunedGemm>& entries);

// How many GEMM problems this process timed, how many plan GEMMs took a remembered choice
// instead, and how many kept the heuristic's first because their plan's timing budget was spent.
struct TuningCounts {
  uint64_t timed = 0, reused = 0, overBudget = 0;
};
TuningCounts CountTuning();

// `c` is read only when the shape has its own C (0 otherwise).
bool EnqueueGemm(const Gemm& gemm, cuda::CUstream stream, cuda::CUdeviceptr a, cuda::CUdeviceptr b,
                 cuda::CUdeviceptr c, cuda::CUdeviceptr d, cuda::CUdeviceptr workspace, size_t workspaceBytes,
                 NativeError* error);

}  // namespace trtn::cublaslt
