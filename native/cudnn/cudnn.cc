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

struct State {
  CudnnApi api;
  LibraryInfo info;
  NativeError error;
  std::mutex mutex;  // a handle's stream is state: set it and run under this lock
  std::map<int, cudnnHandle_t> handles;
};

State* Load() {
  auto* state = new State();  // leaked on purpose
  NvidiaLibrary lib = OpenNvidiaLibrary(kSpec, &state->error);
  if (lib.handle == nullptr) return state;
  state->info.libraryPath = lib.path;
  std::vector<std::string> missing;
#define TRTN_RESOLVE(name) ResolveSymbol(lib.handle, #name, &state->api.name, &missing);
  TRTN_CUDNN_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
  if (!missing.empty()) {
    std::string list;
    for (const auto& name : missing) list += (list.empty() ? "" : ", ") + name;
    state->error = LibraryUnusable(kSpec, lib.path, "it lacks " + list);
    return state;
  }
  size_t version = state->api.cudnnGetVersion();
  state->info.version = double(version);
  if (version < 90000 || version >= 100000) {
    state->error = LibraryUnusable(kSpec, lib.path, "it reports version " + std::to_string(version) + ", and cuDNN 9 is needed");
  }
  return state;
}

State* Get(NativeError* error) {
  static std::once_flag once;
  static State* state = nullptr;
  std::call_once(once, [] { state = Load(); });
  if (!state->error.ok()) {
    *error = state->error;
    return nullptr;
  }
  return state;
}

NativeError Failed(const CudnnApi& api, const char* call, cudnnStatus_t status, const std::string& context) {
  const char* text = api.cudnnGetErrorString(status);
  std::string name = text != nullptr ? text : ("cuDNN status " + std::to_string(status));
  return NativeError{"E_CUDA", std::string(call) + " failed with " + name + " " + context,
                     {{"call", call}, {"library", "cudnn"}, {"status", name}}, {{"statusCode", double(status)}}, {}};
}

}  // namespace

class Conv {
 public:
  State* state = nullptr;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  ~Conv() {
    const CudnnApi& api = state->api;
    if (x != nullptr) api.cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) api.cudnnDestroyTensorDescriptor(y);
    if (bias != nullptr) api.cudnnDestroyTensorDescriptor(bias);
    if (w != nullptr) api.cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) api.cudnnDestroyConvolutionDescriptor(conv);
  }
};

void ConvDeleter::operator()(Conv* conv) const { delete conv; }

bool Info(LibraryInfo* out, NativeError* error) {
  State* state = Get(error);
  if (state == nullptr) return false;
  *out = state->info;
  return true;
}

bool PrepareConv(cuda::Device& device, const ConvShape& s, bool bias, ConvPtr* out, size_t* workspaceBytes,
                 NativeError* error) {
  State* state = Get(error);
  if (state == nullptr) return false;
  const CudnnApi& api = state->api;
  const std::string what = "for a convolution of [" + std::to_string(s.n) + "," + std::to_string(s.c) + "," +
                           std::to_string(s.h) + "," + std::to_string(s.w) + "] by [" + std::to_string(s.k) + "," +
                           std::to_string(s.c / (s.groups > 0 ? s.groups : 1)) + "," + std::to_string(s.r) + "," +
                           std::to_string(s.s) + "]";
  ConvPtr conv(new Conv());
  conv->state = state;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto found = state->handles.find(device.ordinal);
    if (found == state->handles.end()) {
      cudnnHandle_t handle = nullptr;
      cudnnStatus_t status = api.cudnnCreate(&handle);
      if (status != kSuccess) {
        *error = Failed(api, "cudnnCreate", status, "on device " + std::to_string(device.ordinal));
        return false;
      }
      found = state->handles.emplace(device.ordinal, handle).first;
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
  const CudnnApi& api = conv.state->api;
  auto ptr = [](cuda::CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  const float zero = 0.0f, one = 1.0f;
  std::lock_guard<std::mutex> lock(conv.state->mutex);
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
