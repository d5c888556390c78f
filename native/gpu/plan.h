// A plan: an ordered list of steps (kernel launches, copies, memsets, cuBLASLt GEMMs, cuDNN
// convolutions) over device buffers, decoded from the compact binary lib/gpu/plan.ts writes.
// The native side knows plans, not graphs. A plan owns its stream (so a capture records only its
// own work) and a workspace for its library steps; it runs as one call, or is captured once into
// a CUDA graph (THREAD_LOCAL mode) and replayed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common/native_error.h"
#include "../cublaslt/cublaslt.h"
#include "../cuda/runtime.h"
#include "../cudnn/cudnn.h"

namespace trtn::gpu {

struct BufferRef {
  cuda::CUdeviceptr ptr = 0;
  size_t bytes = 0;
};

struct KernelRef {
  cuda::CUfunction function = nullptr;
  std::string name;
};

enum StepKind : uint32_t { kLaunch = 1, kCopy = 2, kMemset = 3, kGemm = 4, kConv = 5 };

struct PlanStep {
  StepKind kind = kLaunch;
  // launch
  KernelRef kernel;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<uint64_t> params;  // 8-byte aligned storage for the packed argument buffer
  size_t paramBytes = 0;
  // copy / memset / library operands
  cuda::CUdeviceptr ptrs[5] = {0, 0, 0, 0, 0};
  uint64_t bytes = 0;
  uint8_t value = 0;
  cublaslt::GemmShape gemm;
  cudnn::ConvShape conv;
  bool hasBias = false;
  cublaslt::GemmPtr gemmOp;
  cudnn::ConvPtr convOp;
};

class Plan {
 public:
  // Decodes and bounds-checks the binary against the buffers and kernels it names (JS thread;
  // touches no GPU). Malformed input is E_INVALID_ARGUMENT naming the step and the byte offset.
  static bool Decode(const uint8_t* data, size_t size, const std::vector<BufferRef>& buffers,
                     const std::vector<std::vector<KernelRef>>& modules, Plan* out, NativeError* error);

  // Worker thread: stream, library descriptors and algorithms, workspace, kernel parameter checks.
  bool Prepare(cuda::Device& device, NativeError* error);
  // JS thread, before Prepare: the most milliseconds Prepare may spend timing GEMM candidates
  // (negative: no limit). Once spent, the remaining GEMMs keep the heuristic's first choice.
  void SetTuningBudget(double ms) { tuningBudgetMs_ = ms; }
  // Worker thread: enqueue every step and wait.
  bool Run(int times, NativeError* error);
  // Any thread (the JS thread for the pool-free path): enqueue `times` runs of the steps, or
  // launches of the captured graph, on the plan's stream without waiting. The caller waits for
  // the stream (also after a failure: work queued before it is still running).
  bool Submit(int times, bool replay, NativeError* error);
  // Worker thread: record the steps into a CUDA graph and instantiate it (replacing any earlier one).
  bool Capture(NativeError* error);
  bool Replay(int times, NativeError* error);
  // JS thread: enqueue the release of the stream, graph and workspace; never waits.
  void Release();

  size_t stepCount() const { return steps_.size(); }
  const std::vector<PlanStep>& steps() const { return steps_; }
  size_t workspaceBytes() const { return workspaceBytes_; }
  bool captured() const { return exec_ != nullptr; }
  cuda::Device* device() const { return device_; }
  cuda::CUstream stream() const { return stream_; }

 private:
  bool Enqueue(NativeError* error);

  cuda::Device* device_ = nullptr;
  cuda::CUstream stream_ = nullptr;
  cuda::CUgraphExec exec_ = nullptr;
  cuda::CUdeviceptr workspace_ = 0;
  size_t workspaceBytes_ = 0;
  double tuningBudgetMs_ = -1;
  std::vector<PlanStep> steps_;
};

}  // namespace trtn::gpu
