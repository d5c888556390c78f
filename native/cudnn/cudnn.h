// cuDNN 9, opened on first use, with one handle per device; fp32 NCHW forward convolution
// (with optional per-channel bias) as a plan step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../common/native_error.h"
#include "../cuda/runtime.h"

namespace trtn::cudnn {

struct LibraryInfo {
  std::string libraryPath;
  double version = 0;  // cudnnGetVersion(), e.g. 91400 for 9.14.0
};

bool Info(LibraryInfo* out, NativeError* error);

struct ConvShape {
  int32_t n = 0, c = 0, h = 0, w = 0;  // input, NCHW
  int32_t k = 0, r = 0, s = 0;         // filters K×(C/groups)×R×S
  int32_t padH = 0, padW = 0, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, groups = 1;
  int32_t outH = 0, outW = 0;  // what the caller expects; checked against cuDNN's answer
};

class Conv;
struct ConvDeleter {
  void operator()(Conv* conv) const;
};
using ConvPtr = std::unique_ptr<Conv, ConvDeleter>;

// Builds descriptors and picks an algorithm that does not use TF32 (the device must be current).
bool PrepareConv(cuda::Device& device, const ConvShape& shape, bool bias, ConvPtr* out, size_t* workspaceBytes,
                 NativeError* error);

bool EnqueueConv(const Conv& conv, cuda::CUstream stream, cuda::CUdeviceptr x, cuda::CUdeviceptr w,
                 cuda::CUdeviceptr bias, cuda::CUdeviceptr y, cuda::CUdeviceptr workspace, size_t workspaceBytes,
                 NativeError* error);

}  // namespace trtn::cudnn
