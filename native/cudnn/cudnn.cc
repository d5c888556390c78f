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
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  ~Conv() {
    if (x != nullptr) api->cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) api->cudnnDestroyTensorDescriptor(y);
    if (bias != nullptr) api->cudnnDestroyTensorDescriptor(bias);
    if (w != nullptr) api->cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) api->cudnnDestroyConvolutionDescriptor(conv);
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

bool PrepareConv(cuda::Device& device, const ConvShape& s, bool bias, ConvPtr* out, size_t* workspaceBytes,
                 NativeError* error) {
  const LoadedLibrary<CudnnApi>* library = Get(error);
  if (library == nullptr) return false;
  const CudnnApi& api = library->api;
  const std::string what = "for a convolution of [" + std::to_string(s.n) + "," + std::to_string(s.c) + "," +
                           std::to_string(s.h) + "," + std::to_string(s.w) + "] by [" + std::to_string(s.k) + "," +
                           std::to_string(s.c / (s.groups > 0 ? s.groups : 1)) + "," + std::to_string(s.r) + "," +
                           std::to_string(s.s) + "]";
  ConvPtr conv(new Conv());
  conv->api = &api;
  {
    Handles& handles = DeviceHandles();
    std::lock_guard<std::mutex> lock(handles.mutex);
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
  TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->x);
  TRTN_CUDNN(cudnnSetTensor4dDescriptor, conv->x, kTensorNCHW, kDataFloat, s.n, s.c, s.h, s.w);
  TRTN_CUDNN(cudnnCreateFilterDescriptor, &conv->w);
  TRTN_CUDNN(cudnnSetFilter4dDescriptor, conv->w, kDataFloat, kTensorNCHW, s.k, s.c / s.groups, s.r, s.s);
  TRTN_CUDNN(cudnnCreateConvolutionDescriptor, &conv->conv);
  TRTN_CUDNN(cudnnSetConvolution2dDescriptor, conv->conv, s.padH, s.padW, s.strideH, s.strideW, s.dilationH,
             s.dilationW, kCrossCorrelation, kDataFloat);
  TRTN_CUDNN(cudnnSetConvolutionGroupCount, conv->conv, s.groups);
  // DEFAULT math lets cuDNN use TF32 tensor cores for fp32 on Ampere and newer; FMA keeps fp32.
  TRTN_CUDNN(cudnnSetConvolutionMathType, conv->conv, kFmaMath);
  TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->y);
  TRTN_CUDNN(cudnnSetTensor4dDescriptor, conv->y, kTensorNCHW, kDataFloat, s.n, s.k, s.outH, s.outW);
  if (bias) {
    TRTN_CUDNN(cudnnCreateTensorDescriptor, &conv->bias);
    TRTN_CUDNN(cudnnSetTensor4dDescriptor, conv->bias, kTensorNCHW, kDataFloat, 1, s.k, 1, 1);
  }
  ConvolutionFwdAlgoPerf perf[kConvFwdAlgoCount] = {};
  int returned = 0;
  TRTN_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7, conv->handle, conv->x, conv->w, conv->conv, conv->y,
             kConvFwdAlgoCount, &returned, perf);
  bool found = false;
  for (int i = 0; i < returned && !found; ++i) {
    if (perf[i].status != kSuccess || (perf[i].mathType != kFmaMath && perf[i].mathType != kDefaultMath)) continue;
    conv->algo = perf[i].algo;
    found = true;
  }
  if (!found) {
    *error = NativeError{"E_CUDA", "cuDNN offers no fp32 (non-TF32) forward algorithm " + what,
                         {{"call", "cudnnGetConvolutionForwardAlgorithm_v7"}, {"library", "cudnn"}}, {}, {}};
    return false;
  }
  TRTN_CUDNN(cudnnGetConvolutionForwardWorkspaceSize, conv->handle, conv->x, conv->w, conv->conv, conv->y, conv->algo,
             workspaceBytes);
#undef TRTN_CUDNN
  *out = std::move(conv);
  return true;
}

bool EnqueueConv(const Conv& conv, cuda::CUstream stream, cuda::CUdeviceptr x, cuda::CUdeviceptr w,
                 cuda::CUdeviceptr bias, cuda::CUdeviceptr y, cuda::CUdeviceptr workspace, size_t workspaceBytes,
                 NativeError* error) {
  const CudnnApi& api = *conv.api;
  auto ptr = [](cuda::CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  const float zero = 0.0f, one = 1.0f;
  std::lock_guard<std::mutex> lock(DeviceHandles().mutex);
  cudnnStatus_t status = api.cudnnSetStream(conv.handle, stream);
  if (status != kSuccess) {
    *error = Failed(api, "cudnnSetStream", status, "");
    return false;
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
  return true;
}

}  // namespace trtn::cudnn
