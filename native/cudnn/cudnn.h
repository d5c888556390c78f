// cuDNN 9, opened on first use, with one handle per device; NC[D]HW and N[D]HWC convolutions and
// transposed convolutions (1 to 3 spatial dims, fp32/fp16/bf16, optional per-channel bias, a
// residual and a ReLU) as plan steps.
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

// x [n, c, in...] → y [n, k, out...]. Forward: weight [k, c / groups, kernel...], out =
// floor((in + pad + postPad - dilation·(kernel - 1) - 1) / stride) + 1. Transposed (cuDNN's
// backward data): weight [c, k / groups, kernel...], out = (in - 1)·stride - pad - postPad +
// dilation·(kernel - 1) + 1, with 0 <= pad - postPad < stride. Dims past `spatial` are unused.
struct ConvShape {
  int32_t spatial = 2;  // 1..3
  int32_t dtype = 0;    // cublaslt::DType numbering: 0 fp32, 1 fp16, 2 bf16
  bool transposed = false;
  bool tf32 = false;  // fp32 only: let cuDNN use TF32 tensor cores (the build allowed the tf32 precision)
  // Forward only. channelsLast: x, y and z stored N[D]HWC, the weight K[T]RSC (dims stay listed
  // channels-first); relu and residual: y = relu(conv(x) + bias + z), one cuDNN call when there
  // is a bias (cudnnConvolutionBiasActivationForward), else the same steps one by one.
  bool channelsLast = false;
  bool relu = false;
  bool residual = false;
  int32_t n = 0, c = 0, k = 0, groups = 1;
  int32_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, postPad[3] = {0, 0, 0};
  int32_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, out[3] = {1, 1, 1};
};

class Conv;
struct ConvDeleter {
  void operator()(Conv* conv) const;
};
using ConvPtr = std::unique_ptr<Conv, ConvDeleter>;

// Builds descriptors and picks an algorithm (fp32 without `tf32`: one that does not use TF32); the device must be
// current. A forward convolution with asymmetric padding convolves a zero-padded copy of x that
// EnqueueConv writes at the start of the workspace: `workspaceBytes` counts it.
bool PrepareConv(cuda::Device& device, const ConvShape& shape, bool bias, ConvPtr* out, size_t* workspaceBytes,
                 NativeError* error);

// `z` is 0 unless the shape has a residual.
bool EnqueueConv(const Conv& conv, cuda::CUstream stream, cuda::CUdeviceptr x, cuda::CUdeviceptr w,
                 cuda::CUdeviceptr bias, cuda::CUdeviceptr z, cuda::CUdeviceptr y, cuda::CUdeviceptr workspace,
                 size_t workspaceBytes, NativeError* error);

}  // namespace trtn::cudnn
