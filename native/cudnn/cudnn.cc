#include "cudnn.h"

#include <map>
#include <mutex>

#include "../common/nvidia_library.h"
#include "cudnn_api.h"

namespace trtn::cudnn {

namespace {

const NvidiaLibrarySpec kSpec{
    "cudnn", "TENSORRT_NODE_CUDNN_LIBRARY", {"libcudnn.so.9"}, true,
    "Install cuDNN 9 (e.g. `apt install libcudnn9-cuda-13`, or the pip package nvidia-cudnn-cu13), and make sure "
    "the loader finds libcudnn.so.9. Load only one cuDNN per process."};

void Resolve(void* handle, CudnnApi* api, std::vector<std::string>* missing) {
#define TRTN_RESOLVE(name) ResolveSymbol(handle, #name, &api->name, missing);
  TRTN_CUDNN_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
}

std::string CheckVersion(const CudnnApi& api, double* version) {
  size_t v = api.cudnnGetVersion();
  *version = double(v);
  if (v >= 90000 && v < 100000) return "";
  return "it reports version " + std::to_string(v) + ", and cuDNN 9 is needed";
}

// Handles per device, never destroyed. A handle's stream is state: set it and run under `mutex`.
struct Handles {
  std::mutex mutex;
  std::map<int, cudnnHandle_t> byDevice;
};
Handles& DeviceHandles() {
  static auto* handles = new Handles();
  return *handles;
}

const LoadedLibrary<CudnnApi>* Get(NativeError* error) { return GetNvidiaLibrary(kSpec, Resolve, CheckVersion, error); }

NativeError Failed(const CudnnApi& api, const char* call, cudnnStatus_t status, const std::string& context) {
  const char* text = api.cudnnGetErrorString(status);
  std::string name = text != nullptr ? text : ("cuDNN status " + std::to_string(status));
  return NativeError{"E_CUDA", std::string(call) + " failed with " + name + " " + context,
                     {{"call", call}, {"library", "cudnn"}, {"status", name}}, {{"statusCode", double(status)}}, {}};
}

}  // namespace

class Conv {
 public:
  const CudnnApi* api = nullptr;
  const cuda::Device* device = nullptr;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  // The fused call's activation: ReLU, or identity for a channels-last convolution with a bias
  // and no ReLU when the algorithm is the one cuDNN fuses identity with (null: no fused call).
  cudnnActivationDescriptor_t activation = nullptr;
  bool relu = false;
  int algo = 0;
  bool transposed = false;
  bool residual = false;
  // Set when cuDNN refused the fused call for this convolution: later runs take the steps one
  // by one straight away (written under the handle mutex).
  mutable bool unfused = false;
  // The zero-padded copy of x (asymmetric padding): where x lands in it, in cuDNN's dims
  // (2 or 3 spatial), and the bytes it takes at the start of the workspace (0: no copy).
  size_t padBytes = 0;
  int nd = 2;
  int64_t planes = 0;
  int64_t elem = 4;
  int64_t src[3] = {1, 1, 1}, dst[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  ~Conv() {
    if (x != nullptr) api->cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) api->cudnnDestroyTensorDescriptor(y);
    if (bias != nullptr) api->cudnnDestroyTensorDescriptor(bias);
    if (w != nullptr) api->cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) api->cudnnDestroyConvolutionDescriptor(conv);
    if (activation != nullptr) api->cudnnDestroyActivationDescriptor(activation);
  }
};

void ConvDeleter::operator()(Conv* conv) const { delete conv; }

bool Info(LibraryInfo* out, NativeError* error) {
  const LoadedLibrary<CudnnApi>* library = Get(error);
  if (library == nullptr) return false;
  out->libraryPath = library->path;
  out->version = library->version;
  return true;
}

namespace {

std::string Dims(const int* values, int count) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// Packed strides of `dims` (listed N, C, spatial...): NC[D]HW, or N[D]HWC with `channelsLast`.
void PackedStrides(const int* dims, int count, int* strides, bool channelsLast = false) {
  int64_t stride = 1;
  if (channelsLast) {
    strides[1] = 1;
    stride = dims[1];
  }
  for (int i = count - 1; i >= 0; --i) {
    if (channelsLast && i == 1) continue;
    strides[i] = int(stride);
    stride *= dims[i];
  }
}

}  // namespace

bool PrepareConv(cuda::Device& device, const ConvShape& s, bool bias, ConvPtr* out, size_t* workspaceBytes,
                 NativeError* error) {
  const LoadedLibrary<CudnnApi>* library = Get(error);
  if (library == nullptr) return false;
  const CudnnApi& api = library->api;
  static const char* kTypes[] = {"fp32", "fp16", "bf16"};
  const int dataType = s.dtype == 1 ? kDataHalf : s.dtype == 2 ? kDataBFloat16 : kDataFloat;
  // cuDNN wants 4-D or 5-D tensors: a 1-D convolution is a 2-D one over a height of 1.
  const int lead = s.spatial == 1 ? 1 : 0;
  const int nd = s.spatial + lead;
  int in[3], kernel[3], pad[3], post[3], stride[3], dilation[3], outDims[3];
  for (int i = 0; i < nd; ++i) {
    const int j = i - lead;
    const bool unit = j < 0;
    in[i] = unit ? 1 : s.in[j];
    kernel[i] = unit ? 1 : s.kernel[j];
    pad[i] = unit ? 0 : s.pad[j];
    post[i] = unit ? 0 : s.postPad[j];
    stride[i] = unit ? 1 : s.stride[j];
    dilation[i] = unit ? 1 : s.dilation[j];
    outDims[i] = unit ? 1 : s.out[j];
  }
  ConvPtr conv(new Conv());
  conv->api = &api;
  conv->device = &device;
  conv->transposed = s.transposed;
  conv->residual = s.residual;
  conv->nd = nd;
  conv->elem = s.dtype == 0 ? 4 : 2;
  bool asymmetric = false;
  for (int i = 0; i < nd; ++i) asymmetric = asymmetric || pad[i] != post[i];
  // Forward with asymmetric padding: convolve a copy padded on both sides, without padding.
  int xDims[5] = {s.n, s.c}, convPads[3];
  for (int i = 0; i < nd; ++i) {
    const bool copy = asymmetric && !s.transposed;
    xDims[2 + i] = copy ? in[i] + pad[i] + post[i] : in[i];
    convPads[i] = copy ? 0 : pad[i];
    conv->src[i] = in[i];
    conv->dst[i] = xDims[2 + i];
    conv->offset[i] = pad[i];
  }
  if (asymmetric && !s.transposed) {
    conv->planes = int64_t(s.n) * s.c;
    uint64_t bytes = uint64_t(conv->planes) * conv->elem;
    for (int i = 0; i < nd; ++i) bytes *= uint64_t(xDims[2 + i]);
    conv->padBytes = size_t((bytes + 255) / 256 * 256);
  }
  int yDims[5] = {s.n, s.k};
  for (int i = 0; i < nd; ++i) yDims[2 + i] = outDims[i];
  // Forward: filters [k, c/g, ...]; transposed: [c, k/g, ...], the forward convolution whose
  // data gradient it is takes y (k channels) to x (c channels).
  int wDims[5] = {s.transposed ? s.c : s.k, s.transposed ? s.k / s.groups : s.c / s.groups};
  for (int i = 0; i < nd; ++i) wDims[2 + i] = kernel[i];
  const std::string what = std::string("for a ") + kTypes[s.dtype] + (s.transposed ? " transposed" : "") +
                           " convolution of " + Dims(xDims, nd + 2) + " by " + Dims(wDims, nd + 2) + " to " +
                           Dims(yDims, nd + 2);
  // A handle is not safe to use from two threads at once (plans prepare on pool threads).
  std::lock_guard<std::mutex> lock(DeviceHandles().mutex);
  {
    Handles& handles = DeviceHandles();
    auto found = handles.byDevice.find(device.ordinal);
    if (found == handles.byDevice.end()) {
      cudnnHandle_t handle = nullptr;
      cudnnStatus_t status = api.cudnnCreate(&handle);
      if (status != kSuccess) {
        *error = Failed(api, "cudnnCreate", status, "on device " + std::to_string(device.ordinal));
        return false;
      }
      found = handles.byDevice.emplace(device.ordinal, handle).first;
    }
    conv->handle = found->second;
  }
  cudnnStatus_t st = kSuccess;
#define TRTN_CUDNN(call, ...)                               \
  if ((st = api.call(__VA_ARGS__)) != kSuccess) {           \
    *error = Failed(api, #call, st, what);                  \
    return false;                                           \
  }
  int xStrides[5], yStrides[5];
  PackedStrides(xDims, nd + 2, xStrides, s.channelsLast);
  PackedStrides(yDims, nd + 2, yStrides, s.channelsLast);
  TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->x);
  TRTN_CUDNN(cudnnSetTensorNdDescriptor, conv->x, dataType, nd + 2, xDims, xStrides);
  TRTN_CUDNN(cudnnCreateFilterDescriptor, &conv->w);
  TRTN_CUDNN(cudnnSetFilterNdDescriptor, conv->w, dataType, s.channelsLast ? kTensorNHWC : kTensorNCHW, nd + 2, wDims);
  conv->relu = s.relu;
  TRTN_CUDNN(cudnnCreateConvolutionDescriptor, &conv->conv);
  // fp32 accumulation for every data type.
  TRTN_CUDNN(cudnnSetConvolutionNdDescriptor, conv->conv, nd, convPads, stride, dilation, kCrossCorrelation, kDataFloat);
  TRTN_CUDNN(cudnnSetConvolutionGroupCount, conv->conv, s.groups);
  // DEFAULT math lets cuDNN use TF32 tensor cores for fp32 on Ampere and newer; FMA keeps fp32
  // unless the build allowed TF32. fp16/bf16 take tensor cores (fp32 accumulation either way).
  const bool strictFp32 = s.dtype == 0 && !s.tf32;
  TRTN_CUDNN(cudnnSetConvolutionMathType, conv->conv, strictFp32 ? kFmaMath : s.dtype == 0 ? kDefaultMath : kTensorOpMath);
  TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->y);
  TRTN_CUDNN(cudnnSetTensorNdDescriptor, conv->y, dataType, nd + 2, yDims, yStrides);
  if (bias) {
    int bDims[5] = {1, s.k, 1, 1, 1}, bStrides[5];
    PackedStrides(bDims, nd + 2, bStrides, s.channelsLast);
    TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->bias);
    TRTN_CUDNN(cudnnSetTensorNdDescriptor, conv->bias, dataType, nd + 2, bDims, bStrides);
  }
  // The fastest algorithm cuDNN ranks usable (strict fp32: one that does not use TF32).
  bool found = false;
  auto pick = [&](const auto* perf, int returned) {
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != kSuccess || (strictFp32 && perf[i].mathType != kFmaMath && perf[i].mathType != kDefaultMath)) {
        continue;
      }
      conv->algo = perf[i].algo;
      found = true;
    }
  };
  size_t libraryBytes = 0;
  int returned = 0;
  if (s.transposed) {
    ConvolutionBwdDataAlgoPerf perf[kConvBwdDataAlgoCount] = {};
    // Backward data: dy is our x, dx our y.
    TRTN_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7, conv->handle, conv->w, conv->x, conv->conv, conv->y,
               kConvBwdDataAlgoCount, &returned, perf);
    pick(perf, returned);
    if (found) {
      TRTN_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize, conv->handle, conv->w, conv->x, conv->conv, conv->y,
                 conv->algo, &libraryBytes);
    }
  } else {
    ConvolutionFwdAlgoPerf perf[kConvFwdAlgoCount] = {};
    TRTN_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7, conv->handle, conv->x, conv->w, conv->conv, conv->y,
               kConvFwdAlgoCount, &returned, perf);
    pick(perf, returned);
    if (found) {
      TRTN_CUDNN(cudnnGetConvolutionForwardWorkspaceSize, conv->handle, conv->x, conv->w, conv->conv, conv->y,
                 conv->algo, &libraryBytes);
    }
  }
  // A bias-only channels-last convolution fuses its bias too (cuDNN's separate bias pass over an
  // NHWC tensor is slow); identity is fused with IMPLICIT_PRECOMP_GEMM only.
  const bool identity = !s.relu && bias && s.channelsLast && found && conv->algo == kConvFwdImplicitPrecompGemm;
  if (!s.transposed && (s.relu || identity)) {
    TRTN_CUDNN(cudnnCreateActivationDescriptor, &conv->activation);
    TRTN_CUDNN(cudnnSetActivationDescriptor, conv->activation, s.relu ? kActivationRelu : kActivationIdentity, kPropagateNan, 0.0);
  }
#undef TRTN_CUDNN
  if (!found) {
    *error = NativeError{"E_CUDA",
                         std::string("cuDNN offers no ") + (strictFp32 ? "fp32 (non-TF32) " : "") +
                             (s.transposed ? "backward-data" : "forward") + " algorithm " + what,
                         {{"call", s.transposed ? "cudnnGetConvolutionBackwardDataAlgorithm_v7"
                                                : "cudnnGetConvolutionForwardAlgorithm_v7"},
                          {"library", "cudnn"}},
                         {},
                         {}};
    return false;
  }
  *workspaceBytes = conv->padBytes + libraryBytes;
  *out = std::move(conv);
  return true;
}

namespace {

// Writes x, zero-padded, into `to` (asymmetric padding): one strided 3-D copy for 2 spatial dims
// (the planes are its depth), one per plane for 3.
bool PadInput(const Conv& conv, cuda::CUstream stream, cuda::CUdeviceptr x, cuda::CUdeviceptr to, NativeError* error) {
  const cuda::Device& device = *conv.device;
  const cuda::RuntimeApi& rt = *device.api;
  cuda::CUresult result = rt.cuMemsetD8Async(to, 0, conv.padBytes, stream);
  if (result != cuda::kSuccess) return cuda::Check(device, result, "cuMemsetD8Async", error, "(padding a convolution input)");
  const int64_t e = conv.elem;
  const int64_t* src = conv.src;
  const int64_t* dst = conv.dst;
  const int64_t* off = conv.offset;
  cuda::Memcpy3D copy{};
  copy.srcMemoryType = cuda::kMemoryTypeDevice;
  copy.dstMemoryType = cuda::kMemoryTypeDevice;
  if (conv.nd == 2) {
    copy.srcDevice = x;
    copy.srcPitch = size_t(src[1] * e);
    copy.srcHeight = size_t(src[0]);
    copy.dstDevice = to;
    copy.dstPitch = size_t(dst[1] * e);
    copy.dstHeight = size_t(dst[0]);
    copy.dstXInBytes = size_t(off[1] * e);
    copy.dstY = size_t(off[0]);
    copy.WidthInBytes = size_t(src[1] * e);
    copy.Height = size_t(src[0]);
    copy.Depth = size_t(conv.planes);
    result = rt.cuMemcpy3DAsync_v2(&copy, stream);
    return result == cuda::kSuccess || cuda::Check(device, result, "cuMemcpy3DAsync_v2", error, "(padding a convolution input)");
  }
  const int64_t srcPlane = src[0] * src[1] * src[2] * e, dstPlane = dst[0] * dst[1] * dst[2] * e;
  for (int64_t p = 0; p < conv.planes; ++p) {
    copy.srcDevice = x + cuda::CUdeviceptr(p * srcPlane);
    copy.srcPitch = size_t(src[2] * e);
    copy.srcHeight = size_t(src[1]);
    copy.dstDevice = to + cuda::CUdeviceptr(p * dstPlane);
    copy.dstPitch = size_t(dst[2] * e);
    copy.dstHeight = size_t(dst[1]);
    copy.dstXInBytes = size_t(off[2] * e);
    copy.dstY = size_t(off[1]);
    copy.dstZ = size_t(off[0]);
    copy.WidthInBytes = size_t(src[2] * e);
    copy.Height = size_t(src[1]);
    copy.Depth = size_t(src[0]);
    result = rt.cuMemcpy3DAsync_v2(&copy, stream);
    if (result != cuda::kSuccess) return cuda::Check(device, result, "cuMemcpy3DAsync_v2", error, "(padding a convolution input)");
  }
  return true;
}

}  // namespace

bool EnqueueConv(const Conv& conv, cuda::CUstream stream, cuda::CUdeviceptr x, cuda::CUdeviceptr w,
                 cuda::CUdeviceptr bias, cuda::CUdeviceptr z, cuda::CUdeviceptr y, cuda::CUdeviceptr workspace,
                 size_t workspaceBytes, NativeError* error) {
  const CudnnApi& api = *conv.api;
  auto ptr = [](cuda::CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  if (conv.padBytes > 0) {
    if (!PadInput(conv, stream, x, workspace, error)) return false;
    x = workspace;
    workspace += conv.padBytes;
    workspaceBytes -= conv.padBytes;
  }
  // alpha and beta are float for every data type but double.
  const float zero = 0.0f, one = 1.0f;
  std::lock_guard<std::mutex> lock(DeviceHandles().mutex);
  cudnnStatus_t status = api.cudnnSetStream(conv.handle, stream);
  if (status != kSuccess) {
    *error = Failed(api, "cudnnSetStream", status, "");
    return false;
  }
  if (conv.transposed) {
    status = api.cudnnConvolutionBackwardData(conv.handle, &one, conv.w, ptr(w), conv.x, ptr(x), conv.conv, conv.algo,
                                              ptr(workspace), workspaceBytes, &zero, conv.y, ptr(y));
    if (status != kSuccess) {
      *error = Failed(api, "cudnnConvolutionBackwardData", status, "");
      return false;
    }
    if (conv.bias != nullptr) {
      status = api.cudnnAddTensor(conv.handle, &one, conv.bias, ptr(bias), &one, conv.y, ptr(y));
      if (status != kSuccess) {
        *error = Failed(api, "cudnnAddTensor", status, "");
        return false;
      }
    }
    return true;
  }
  // One call for conv + bias (+ z) + ReLU. cuDNN may refuse a configuration (it documents the
  // fused call for fewer algorithms and layouts than the plain one): then, and from then on,
  // the same arithmetic runs as separate calls. A refusal is a host-side check, so it queues
  // nothing (also while a graph is being captured).
  if (conv.activation != nullptr && conv.bias != nullptr && !conv.unfused) {
    const float alpha2 = conv.residual ? 1.0f : 0.0f;
    status = api.cudnnConvolutionBiasActivationForward(conv.handle, &one, conv.x, ptr(x), conv.w, ptr(w), conv.conv,
                                                       conv.algo, ptr(workspace), workspaceBytes, &alpha2, conv.y,
                                                       ptr(conv.residual ? z : y), conv.bias, ptr(bias), conv.activation,
                                                       conv.y, ptr(y));
    if (status == kSuccess) return true;
    conv.unfused = true;
  }
  status = api.cudnnConvolutionForward(conv.handle, &one, conv.x, ptr(x), conv.w, ptr(w), conv.conv, conv.algo,
                                       ptr(workspace), workspaceBytes, &zero, conv.y, ptr(y));
  if (status != kSuccess) {
    *error = Failed(api, "cudnnConvolutionForward", status, "");
    return false;
  }
  if (conv.bias != nullptr) {
    status = api.cudnnAddTensor(conv.handle, &one, conv.bias, ptr(bias), &one, conv.y, ptr(y));
    if (status != kSuccess) {
      *error = Failed(api, "cudnnAddTensor", status, "");
      return false;
    }
  }
  if (conv.residual) {
    status = api.cudnnAddTensor(conv.handle, &one, conv.y, ptr(z), &one, conv.y, ptr(y));
    if (status != kSuccess) {
      *error = Failed(api, "cudnnAddTensor", status, "(the residual)");
      return false;
    }
  }
  if (conv.relu) {
    status = api.cudnnActivationForward(conv.handle, conv.activation, &one, conv.y, ptr(y), &zero, conv.y, ptr(y));
    if (status != kSuccess) {
      *error = Failed(api, "cudnnActivationForward", status, "(ReLU)");
      return false;
    }
  }
  return true;
}

}  // namespace trtn::cudnn
