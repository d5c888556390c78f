#include "bindings.h"

#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../common/promise_worker.h"
#include "../cublaslt/cublaslt.h"
#include "../cuda/runtime.h"
#include "../cudnn/cudnn.h"
#include "../nccl/bindings.h"
#include "../nvrtc/nvrtc.h"
#include "completion.h"
#include "plan.h"

namespace trtn::gpu {

namespace {

// Per-environment constructors, passed to every function as its data.
struct Classes {
  Napi::FunctionReference deviceBuffer;
  Napi::FunctionReference module;
  Napi::FunctionReference plan;
  std::shared_ptr<EnvLink> completions;  // created on the first pool-free run
};

// Process-wide counters for tests and doctor (atomics: no destructor does work at exit).
std::atomic<int64_t> gLiveBuffers{0};
std::atomic<int64_t> gLiveBytes{0};
std::atomic<int64_t> gFinalizedBuffers{0};
std::atomic<int64_t> gPinnedBytes{0};

// Pinned allocations handed to JS as ArrayBuffers: copies from or to them skip staging.
struct PinnedRegistry {
  std::mutex mutex;
  std::map<uintptr_t, std::pair<size_t, int>> ranges;  // start → (bytes, device ordinal)
};
PinnedRegistry& Pinned() {
  static auto* registry = new PinnedRegistry();  // leaked: no static destructors
  return *registry;
}
bool IsPinned(const void* ptr, size_t bytes) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(Pinned().mutex);
  auto it = Pinned().ranges.upper_bound(address);
  if (it == Pinned().ranges.begin()) return false;
  --it;
  return address + bytes <= it->first + it->second.first;
}

NativeError InvalidArgument(const std::string& message) { return NativeError{"E_INVALID_ARGUMENT", message, {}, {}, {}}; }

[[noreturn]] void ThrowInvalid(Napi::Env env, const std::string& message) { ThrowJsError(env, InvalidArgument(message)); }

int64_t Integer(const Napi::CallbackInfo& info, size_t index, const char* what, int64_t min = 0) {
  if (info.Length() <= index || !info[index].IsNumber()) ThrowInvalid(info.Env(), std::string(what) + " must be a number");
  double value = info[index].As<Napi::Number>().DoubleValue();
  if (!std::isfinite(value) || std::floor(value) != value || value < double(min) || value > 9007199254740991.0) {
    ThrowInvalid(info.Env(), std::string(what) + " must be an integer >= " + std::to_string(min) + ", got " +
                                 info[index].ToString().Utf8Value());
  }
  return static_cast<int64_t>(value);
}

cuda::Device* DeviceOrThrow(Napi::Env env, int ordinal) {
  // Set-up runs once per device; later calls are a map lookup. The first one may take a while
  // (cuInit), so callers that can wait for it go through a worker instead (DeviceWorker).
  NativeError error;
  cuda::Device* device = cuda::GetDevice(ordinal, &error);
  if (device == nullptr) ThrowJsError(env, error);
  return device;
}

// A host range (ArrayBuffer or view) kept alive while a worker reads or writes it.
struct HostRange {
  void* data = nullptr;
  size_t bytes = 0;
  Napi::ObjectReference keep;
};

HostRange GetHostRange(const Napi::CallbackInfo& info, size_t index, const char* what) {
  HostRange range;
  Napi::Value value = info.Length() > index ? info[index] : info.Env().Undefined();
  if (value.IsArrayBuffer()) {
    auto buffer = value.As<Napi::ArrayBuffer>();
    range.data = buffer.Data();
    range.bytes = buffer.ByteLength();
  } else if (value.IsTypedArray()) {
    auto array = value.As<Napi::TypedArray>();
    range.data = static_cast<uint8_t*>(array.ArrayBuffer().Data()) + array.ByteOffset();
    range.bytes = array.ByteLength();
  } else if (value.IsDataView()) {
    auto view = value.As<Napi::DataView>();
    range.data = static_cast<uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    range.bytes = view.ByteLength();
  } else {
    ThrowInvalid(info.Env(), std::string(what) + " must be an ArrayBuffer or a typed array");
  }
  range.keep = Napi::Persistent(value.As<Napi::Object>());
  return range;
}

// ---------------------------------------------------------------------------------------------
// DeviceBuffer: one allocation from a device's pool. dispose() frees it; the finalizer frees it
// if dispose() never ran. Jobs that use it hold it busy, and a free requested meanwhile waits.

class DeviceBuffer : public Napi::ObjectWrap<DeviceBuffer> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "DeviceBuffer",
                       {InstanceMethod("dispose", &DeviceBuffer::Dispose),
                        InstanceAccessor("byteLength", &DeviceBuffer::ByteLength, nullptr),
                        InstanceAccessor("device", &DeviceBuffer::DeviceOrdinal, nullptr),
                        InstanceAccessor("disposed", &DeviceBuffer::Disposed, nullptr),
                        InstanceAccessor("address", &DeviceBuffer::Address, nullptr)});
  }

  DeviceBuffer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DeviceBuffer>(info) {
    if (info.Length() != 3 || !info[0].IsExternal()) {
      throw Napi::TypeError::New(info.Env(), "DeviceBuffer is created by the GPU runtime, not with new");
    }
    device_ = info[0].As<Napi::External<cuda::Device>>().Data();
    ptr_ = static_cast<cuda::CUdeviceptr>(info[1].As<Napi::BigInt>().Uint64Value(&lossless_));
    bytes_ = static_cast<size_t>(info[2].As<Napi::Number>().Int64Value());
    Napi::MemoryManagement::AdjustExternalMemory(info.Env(), int64_t(bytes_));
    gLiveBuffers++;
    gLiveBytes += int64_t(bytes_);
  }

  void Finalize(Napi::Env env) override {
    if (!freed_) {
      gFinalizedBuffers++;
      busy_ = 0;  // nothing can be using it: every job holds a reference to this object
      Release(env);
    }
  }

  // Marks the buffer used by a job; false (with `error`) when it was disposed.
  bool Acquire(const char* role, NativeError* error) {
    if (freed_ || pendingFree_) {
      *error = InvalidArgument(std::string("The ") + role + " DeviceBuffer was disposed");
      return false;
    }
    ++busy_;
    return true;
  }
  void Unacquire(Napi::Env env) {
    if (--busy_ == 0 && pendingFree_) Release(env);
  }

  cuda::Device* device() const { return device_; }
  cuda::CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    if (!freed_) Release(info.Env());
    return info.Env().Undefined();
  }

  void Release(Napi::Env env) {
    if (busy_ > 0) {
      pendingFree_ = true;
      return;
    }
    if (freed_) return;
    freed_ = true;
    pendingFree_ = false;
    cuda::Free(*device_, ptr_);
    Napi::MemoryManagement::AdjustExternalMemory(env, -int64_t(bytes_));
    gLiveBuffers--;
    gLiveBytes -= int64_t(bytes_);
  }

  Napi::Value ByteLength(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), double(bytes_)); }
  Napi::Value DeviceOrdinal(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), device_->ordinal); }
  // The device address, for libraries that take raw pointers (TensorRT's setTensorAddress). A
  // disposed buffer has none: asking is an error rather than a dangling pointer.
  Napi::Value Address(const Napi::CallbackInfo& info) {
    if (freed_ || pendingFree_) ThrowInvalid(info.Env(), "This DeviceBuffer was disposed: it has no device address");
    return Napi::BigInt::New(info.Env(), uint64_t(ptr_));
  }
  Napi::Value Disposed(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), freed_ || pendingFree_);
  }

  cuda::Device* device_ = nullptr;
  cuda::CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
  int busy_ = 0;
  bool freed_ = false;
  bool pendingFree_ = false;
  bool lossless_ = true;
};

DeviceBuffer* UnwrapBuffer(Napi::Env env, Classes* classes, Napi::Value value, const char* what) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(classes->deviceBuffer.Value())) {
    ThrowInvalid(env, std::string(what) + " must be a DeviceBuffer");
  }
  return DeviceBuffer::Unwrap(value.As<Napi::Object>());
}

// Holds buffers busy for the life of a job.
class BufferLease {
 public:
  void Add(Napi::Env env, DeviceBuffer* buffer, const char* role) {
    NativeError error;
    if (!buffer->Acquire(role, &error)) {
      Release(env);
      ThrowJsError(env, error);
    }
    buffers_.push_back(buffer);
    refs_.push_back(Napi::Persistent(buffer->Value()));
  }
  void Release(Napi::Env env) {
    for (DeviceBuffer* buffer : buffers_) buffer->Unacquire(env);
    buffers_.clear();
    refs_.clear();
  }
  // The environment is gone: forget the buffers without touching it (their finalizers free them).
  void Abandon() {
    for (auto& ref : refs_) ref.SuppressDestruct();
    refs_.clear();
    buffers_.clear();
  }

 private:
  std::vector<DeviceBuffer*> buffers_;
  std::vector<Napi::ObjectReference> refs_;
};

void CheckRange(Napi::Env env, const DeviceBuffer* buffer, uint64_t offset, uint64_t bytes, const char* what) {
  if (offset > buffer->bytes() || bytes > buffer->bytes() - offset) {
    ThrowInvalid(env, std::string(what) + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                          ") are outside the " + std::to_string(buffer->bytes()) + "-byte DeviceBuffer");
  }
}

// ---------------------------------------------------------------------------------------------
// Workers.

class DeviceWorker : public PromiseWorker {
 public:
  enum Op { kInfo, kMemInfo, kThreshold, kTrim, kSync, kSetCurrent };
  DeviceWorker(Napi::Env env, int ordinal, Op op, uint64_t value)
      : PromiseWorker(env, "tensorrt-node:gpuDevice"), ordinal_(ordinal), op_(op), value_(value) {}

 protected:
  bool Run(NativeError* error) override {
    device_ = cuda::GetDevice(ordinal_, error);
    if (device_ == nullptr) return false;
    switch (op_) {
      case kThreshold:
        return cuda::SetReleaseThreshold(*device_, value_, error);
      case kTrim:
        return cuda::TrimPool(*device_, value_, error);
      case kSync:
        return cuda::MakeCurrent(*device_, error) && cuda::Synchronize(*device_, error);
      case kSetCurrent:
        return true;  // the context exists now; Result makes it current on the JS thread
      default:
        return cuda::MemoryInfo(*device_, &free_, &total_, error);
    }
  }
  Napi::Value Result(Napi::Env env) override {
    if (op_ == kSetCurrent) return Napi::Boolean::New(env, device_->api->cuCtxSetCurrent(device_->context) == cuda::kSuccess);
    if (op_ != kInfo && op_ != kMemInfo) return env.Undefined();
    Napi::Object result = Napi::Object::New(env);
    result.Set("ordinal", ordinal_);
    result.Set("computeCapabilityMajor", device_->ccMajor);
    result.Set("computeCapabilityMinor", device_->ccMinor);
    result.Set("freeBytes", double(free_));
    result.Set("totalBytes", double(total_));
    return result;
  }

 private:
  int ordinal_;
  Op op_;
  uint64_t value_;
  cuda::Device* device_ = nullptr;
  size_t free_ = 0, total_ = 0;
};

class AllocWorker : public PromiseWorker {
 public:
  AllocWorker(Napi::Env env, Classes* classes, int ordinal, size_t bytes, bool pinned)
      : PromiseWorker(env, "tensorrt-node:gpuAlloc"), classes_(classes), ordinal_(ordinal), bytes_(bytes), pinned_(pinned) {}

 protected:
  bool Run(NativeError* error) override {
    device_ = cuda::GetDevice(ordinal_, error);
    if (device_ == nullptr) return false;
    if (pinned_) return cuda::AllocatePinned(*device_, bytes_, &host_, error);
    return cuda::Allocate(*device_, bytes_, &ptr_, error);
  }
  Napi::Value Result(Napi::Env env) override {
    if (pinned_) return PinnedArrayBuffer(env);
    return classes_->deviceBuffer.New({Napi::External<cuda::Device>::New(env, device_),
                                       Napi::BigInt::New(env, uint64_t(ptr_)), Napi::Number::New(env, double(bytes_))});
  }

 private:
  Napi::Value PinnedArrayBuffer(Napi::Env env) {
    {
      std::lock_guard<std::mutex> lock(Pinned().mutex);
      Pinned().ranges[reinterpret_cast<uintptr_t>(host_)] = {bytes_, ordinal_};
    }
    gPinnedBytes += int64_t(bytes_);
    // Freed when the ArrayBuffer is collected, unless gpuFreePinned freed it first.
    return Napi::ArrayBuffer::New(env, host_, bytes_, [](Napi::Env, void* data) {
      int ordinal = -1;
      size_t bytes = 0;
      {
        std::lock_guard<std::mutex> lock(Pinned().mutex);
        auto it = Pinned().ranges.find(reinterpret_cast<uintptr_t>(data));
        if (it == Pinned().ranges.end()) return;
        bytes = it->second.first;
        ordinal = it->second.second;
        Pinned().ranges.erase(it);
      }
      gPinnedBytes -= int64_t(bytes);
      NativeError ignored;
      cuda::Device* device = cuda::GetDevice(ordinal, &ignored);
      if (device != nullptr) cuda::FreePinned(*device, data);
    });
  }

  Classes* classes_;
  int ordinal_;
  size_t bytes_;
  bool pinned_;
  cuda::Device* device_ = nullptr;
  cuda::CUdeviceptr ptr_ = 0;
  void* host_ = nullptr;
};

class CopyWorker : public PromiseWorker {
 public:
  enum Direction { kHtoD, kDtoH, kDtoD, kPeer };
  CopyWorker(Napi::Env env, Direction direction) : PromiseWorker(env, "tensorrt-node:gpuCopy"), direction_(direction) {}

  BufferLease lease;
  HostRange host;
  cuda::Device* device = nullptr;
  cuda::Device* srcDevice = nullptr;  // kPeer: the source's device (`device` is the destination's)
  cuda::CUdeviceptr dst = 0, src = 0;
  size_t bytes = 0;

 protected:
  bool Run(NativeError* error) override {
    switch (direction_) {
      case kHtoD:
        return cuda::CopyHtoD(*device, dst, host.data, bytes, IsPinned(host.data, bytes), error);
      case kDtoH:
        return cuda::CopyDtoH(*device, host.data, src, bytes, IsPinned(host.data, bytes), error);
      case kPeer:
        return cuda::CopyPeer(*device, dst, *srcDevice, src, bytes, error);
      default:
        return cuda::CopyDtoD(*device, dst, src, bytes, error);
    }
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }
  void Finally(Napi::Env env) override {
    lease.Release(env);
    host.keep.Reset();
  }

 private:
  Direction direction_;
};

// Zero fills then strided copies, all on one device, one wait (cuda::FillAndCopyRects).
class RectsWorker : public PromiseWorker {
 public:
  explicit RectsWorker(Napi::Env env) : PromiseWorker(env, "tensorrt-node:gpuCopyRects") {}

  BufferLease lease;
  cuda::Device* device = nullptr;
  std::vector<cuda::Fill> fills;
  std::vector<cuda::Rect> rects;

 protected:
  bool Run(NativeError* error) override { return cuda::FillAndCopyRects(*device, fills, rects, error); }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }
  void Finally(Napi::Env env) override { lease.Release(env); }
};

class InfoWorker : public PromiseWorker {
 public:
  enum Library { kNvrtc, kCublasLt, kCudnn };
  InfoWorker(Napi::Env env, Library library) : PromiseWorker(env, "tensorrt-node:libraryInfo"), library_(library) {}

 protected:
  bool Run(NativeError* error) override {
    if (library_ == kNvrtc) {
      nvrtc::NvrtcInfo info;
      if (!nvrtc::Info(&info, error)) return false;
      path_ = info.libraryPath;
      version_ = info.major * 1000 + info.minor * 10;
      return true;
    }
    if (library_ == kCublasLt) {
      cublaslt::LibraryInfo info;
      if (!cublaslt::Info(&info, error)) return false;
      path_ = info.libraryPath;
      version_ = info.version;
      return true;
    }
    cudnn::LibraryInfo info;
    if (!cudnn::Info(&info, error)) return false;
    path_ = info.libraryPath;
    version_ = info.version;
    return true;
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("libraryPath", path_);
    result.Set("version", version_);
    return result;
  }

 private:
  Library library_;
  std::string path_;
  double version_ = 0;
};

class CompileWorker : public PromiseWorker {
 public:
  CompileWorker(Napi::Env env, std::string source, std::string name, int arch, std::vector<std::string> options)
      : PromiseWorker(env, "tensorrt-node:nvrtcCompile"),
        source_(std::move(source)),
        name_(std::move(name)),
        arch_(arch),
        options_(std::move(options)) {}

 protected:
  bool Run(NativeError* error) override { return nvrtc::Compile(source_, name_, arch_, options_, &cubin_, &log_, error); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("cubin", Napi::Buffer<char>::Copy(env, cubin_.data(), cubin_.size()));
    result.Set("log", log_);
    return result;
  }

 private:
  std::string source_, name_;
  int arch_;
  std::vector<std::string> options_;
  std::vector<char> cubin_;
  std::string log_;
};

// ---------------------------------------------------------------------------------------------
// Module: a loaded cubin and the kernels resolved from it.

class Module : public Napi::ObjectWrap<Module> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Module",
                       {InstanceMethod("dispose", &Module::Dispose),
                        InstanceAccessor("kernels", &Module::Kernels, nullptr)});
  }
  Module(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Module>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) {
      throw Napi::TypeError::New(info.Env(), "Module is created by the GPU runtime, not with new");
    }
  }
  void Finalize(Napi::Env) override { Unload(); }

  void Adopt(cuda::Device* device, cuda::CUmodule module, std::vector<KernelRef> kernels) {
    device_ = device;
    module_ = module;
    kernels_ = std::move(kernels);
  }
  const std::vector<KernelRef>& kernels() const { return kernels_; }
  bool loaded() const { return module_ != nullptr; }
  cuda::Device* device() const { return device_; }
  int users = 0;  // plans built on this module

 private:
  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    if (users > 0) {
      ThrowInvalid(info.Env(), "This Module is used by " + std::to_string(users) + " GPU plan(s): dispose them first");
    }
    Unload();
    return info.Env().Undefined();
  }
  void Unload() {
    if (module_ == nullptr) return;
    NativeError ignored;
    if (cuda::MakeCurrent(*device_, &ignored)) device_->api->cuModuleUnload(module_);
    module_ = nullptr;
  }
  Napi::Value Kernels(const Napi::CallbackInfo& info) {
    Napi::Array names = Napi::Array::New(info.Env(), kernels_.size());
    for (size_t i = 0; i < kernels_.size(); ++i) names.Set(uint32_t(i), kernels_[i].name);
    return names;
  }

  cuda::Device* device_ = nullptr;
  cuda::CUmodule module_ = nullptr;
  std::vector<KernelRef> kernels_;
};

class LoadModuleWorker : public PromiseWorker {
 public:
  LoadModuleWorker(Napi::Env env, Classes* classes, int ordinal, std::vector<char> image, std::vector<std::string> names)
      : PromiseWorker(env, "tensorrt-node:gpuLoadModule"),
        classes_(classes),
        ordinal_(ordinal),
        image_(std::move(image)),
        names_(std::move(names)) {}

 protected:
  bool Run(NativeError* error) override {
    device_ = cuda::GetDevice(ordinal_, error);
    if (device_ == nullptr || !cuda::MakeCurrent(*device_, error)) return false;
    const cuda::RuntimeApi& api = *device_->api;
    if (!cuda::Check(*device_, api.cuModuleLoadData(&module_, image_.data()), "cuModuleLoadData", error)) return false;
    for (const auto& name : names_) {
      KernelRef kernel;
      kernel.name = name;
      if (!cuda::Check(*device_, api.cuModuleGetFunction(&kernel.function, module_, name.c_str()),
                       "cuModuleGetFunction", error, "for kernel " + name)) {
        api.cuModuleUnload(module_);
        module_ = nullptr;
        return false;
      }
      kernels_.push_back(kernel);
    }
    return true;
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object object = classes_->module.New({Napi::External<void>::New(env, nullptr)});
    Module::Unwrap(object)->Adopt(device_, module_, std::move(kernels_));
    return object;
  }

 private:
  Classes* classes_;
  int ordinal_;
  std::vector<char> image_;
  std::vector<std::string> names_;
  cuda::Device* device_ = nullptr;
  cuda::CUmodule module_ = nullptr;
  std::vector<KernelRef> kernels_;
};

// ---------------------------------------------------------------------------------------------
// Plan: gpu::Plan with the buffers and modules it points into held alive and busy.

class PlanObject : public Napi::ObjectWrap<PlanObject> {
 public:
  static Napi::Function Define(Napi::Env env, Classes* classes) {
    return DefineClass(env, "Plan",
                       {InstanceMethod("run", &PlanObject::RunMethod), InstanceMethod("capture", &PlanObject::CaptureMethod),
                        InstanceMethod("replay", &PlanObject::ReplayMethod),
                        InstanceMethod("submit", &PlanObject::SubmitMethod, napi_default, classes),
                        InstanceMethod("execute", &PlanObject::ExecuteMethod, napi_default, classes),
                        InstanceMethod("dispose", &PlanObject::DisposeMethod),
                        InstanceAccessor("steps", &PlanObject::Steps, nullptr),
                        InstanceAccessor("workspaceBytes", &PlanObject::WorkspaceBytes, nullptr),
                        InstanceAccessor("captured", &PlanObject::Captured, nullptr)});
  }
  PlanObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PlanObject>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) {
      throw Napi::TypeError::New(info.Env(), "Plan is created by the GPU runtime, not with new");
    }
  }
  void Finalize(Napi::Env env) override { Dispose(env); }

  std::unique_ptr<Plan> plan = std::make_unique<Plan>();
  std::vector<DeviceBuffer*> buffers;
  std::vector<Napi::ObjectReference> bufferRefs;
  std::vector<Module*> modules;
  std::vector<Napi::ObjectReference> moduleRefs;
  int inFlight = 0;
  bool capturing = false;
  bool disposed = false;

  void Dispose(Napi::Env) {
    if (disposed) return;
    disposed = true;
    plan->Release();
    for (Module* module : modules) module->users--;
    modules.clear();
    moduleRefs.clear();
    buffers.clear();
    bufferRefs.clear();
  }

 private:
  enum Op { kRun, kCapture, kReplay };
  Napi::Value Start(const Napi::CallbackInfo& info, Op op);
  Napi::Value RunMethod(const Napi::CallbackInfo& info) { return Start(info, kRun); }
  Napi::Value CaptureMethod(const Napi::CallbackInfo& info) { return Start(info, kCapture); }
  Napi::Value ReplayMethod(const Napi::CallbackInfo& info) { return Start(info, kReplay); }
  Napi::Value SubmitMethod(const Napi::CallbackInfo& info);
  Napi::Value ExecuteMethod(const Napi::CallbackInfo& info);
  // The checks every run, capture or replay passes first; returns the repetition count.
  int CheckStart(const Napi::CallbackInfo& info, Op op);
  // The state checks of CheckStart: not disposed, not capturing, captured for a replay, modules loaded.
  void CheckState(Napi::Env env, Op op);
  Napi::Value DisposeMethod(const Napi::CallbackInfo& info) {
    if (inFlight > 0) ThrowInvalid(info.Env(), "This GPU plan is running: await it before dispose()");
    Dispose(info.Env());
    return info.Env().Undefined();
  }
  Napi::Value Steps(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), double(plan->stepCount())); }
  Napi::Value WorkspaceBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), double(plan->workspaceBytes()));
  }
  Napi::Value Captured(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), plan->captured()); }
};

class PlanWorker : public PromiseWorker {
 public:
  enum Op { kPrepare, kRun, kCapture, kReplay };
  PlanWorker(Napi::Env env, PlanObject* owner, Op op, int times, cuda::Device* device)
      : PromiseWorker(env, "tensorrt-node:gpuPlan"), owner_(owner), op_(op), times_(times), device_(device) {
    ref_ = Napi::Persistent(owner->Value());
    owner_->inFlight++;
    if (op == kCapture) owner_->capturing = true;
  }
  BufferLease lease;

 protected:
  bool Run(NativeError* error) override {
    Plan& plan = *owner_->plan;
    switch (op_) {
      case kPrepare:
        return plan.Prepare(*device_, error);
      case kRun:
        return plan.Run(times_, error);
      case kCapture:
        return plan.Capture(error);
      default:
        return plan.Replay(times_, error);
    }
  }
  Napi::Value Result(Napi::Env env) override { return op_ == kPrepare ? owner_->Value() : env.Undefined(); }
  void Finally(Napi::Env env) override {
    owner_->inFlight--;
    owner_->capturing = false;
    lease.Release(env);
    // A plan that failed to prepare never reaches JS: release its modules now, not at GC,
    // so that module.dispose() right after a refused create() is not refused in turn.
    if (op_ == kPrepare && failed()) owner_->Dispose(env);
  }

 private:
  PlanObject* owner_;
  Op op_;
  int times_;
  cuda::Device* device_;
  Napi::ObjectReference ref_;
};

void PlanObject::CheckState(Napi::Env env, Op op) {
  if (disposed) ThrowInvalid(env, "This GPU plan was disposed");
  if (capturing) ThrowInvalid(env, "This GPU plan is being captured into a CUDA graph: await capture() first");
  if (op == kCapture && inFlight > 0) ThrowInvalid(env, "This GPU plan is running: await it before capture()");
  if (op == kReplay && !plan->captured()) ThrowInvalid(env, "This GPU plan has no CUDA graph: call capture() first");
  for (Module* module : modules) {
    if (!module->loaded()) ThrowInvalid(env, "A Module this GPU plan launches was disposed");
  }
}

int PlanObject::CheckStart(const Napi::CallbackInfo& info, Op op) {
  Napi::Env env = info.Env();
  int times = 1;
  if (op != kCapture && info.Length() > 0 && !info[0].IsUndefined()) times = int(Integer(info, 0, "times", 1));
  CheckState(env, op);
  return times;
}

Napi::Value PlanObject::Start(const Napi::CallbackInfo& info, Op op) {
  Napi::Env env = info.Env();
  int times = CheckStart(info, op);
  auto* worker = new PlanWorker(env, this, op == kRun ? PlanWorker::kRun : op == kCapture ? PlanWorker::kCapture
                                                                                          : PlanWorker::kReplay,
                                times, nullptr);
  try {
    for (DeviceBuffer* buffer : buffers) worker->lease.Add(env, buffer, "plan's");
  } catch (...) {
    inFlight--;
    capturing = false;
    delete worker;
    throw;
  }
  return worker->Start();
}

// A run or replay settled by the device's completion thread (completion.h) instead of a pool thread.
class PlanCompletion : public Completion {
 public:
  explicit PlanCompletion(PlanObject* owner) : owner_(owner), ref_(Napi::Persistent(owner->Value())) { owner_->inFlight++; }
  BufferLease lease;
  void Finally(Napi::Env env) override {
    owner_->inFlight--;
    lease.Release(env);
  }
  void Abandon() override {
    lease.Abandon();
    ref_.SuppressDestruct();
  }

 private:
  PlanObject* owner_;
  Napi::ObjectReference ref_;
};

// submit(times, replay, pollMicros): enqueues on this (JS) thread; the Promise settles from the
// completion thread, or on this thread when the work is done within pollMicros (completion.h).
Napi::Value PlanObject::SubmitMethod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool replay = info.Length() > 1 && info[1].ToBoolean();
  int times = CheckStart(info, replay ? kReplay : kRun);
  int pollMicros = info.Length() > 2 && !info[2].IsUndefined() ? int(Integer(info, 2, "pollMicros", 0)) : 0;
  if (pollMicros > 1000) ThrowInvalid(env, "pollMicros must be at most 1000");
  auto job = std::make_unique<PlanCompletion>(this);
  try {
    for (DeviceBuffer* buffer : buffers) job->lease.Add(env, buffer, "plan's");
  } catch (...) {
    job->Finally(env);
    throw;
  }
  auto* classes = static_cast<Classes*>(info.Data());
  if (!classes->completions) {
    try {
      classes->completions = CreateEnvLink(env);
    } catch (...) {
      job->Finally(env);
      throw;
    }
  }
  NativeError error;
  bool submitted = plan->Submit(times, replay, &error);
  return SettleWhenDone(env, classes->completions, *plan->device(), plan->stream(), std::move(job),
                        submitted ? nullptr : &error, pollMicros);
}

// One execute(): the plan's buffers and the caller's inputs held busy, and the outputs: fresh
// allocations (handed to JS as new DeviceBuffers once the work is done, freed if it failed) or
// the caller's own buffers.
class ExecuteCompletion : public PlanCompletion {
 public:
  ExecuteCompletion(PlanObject* owner, Classes* classes, cuda::Device* device)
      : PlanCompletion(owner), classes_(classes), device_(device) {}
  // Any thread, once the work enqueued with the job is done (or nothing was enqueued): fresh
  // outputs that never reached JS go back to the pool.
  ~ExecuteCompletion() override {
    for (Output& out : outputs) {
      if (out.fresh != 0) cuda::Free(*device_, out.fresh);
    }
    cuda::ReturnStatusWord(*device_, status);
  }
  struct Output {
    cuda::CUdeviceptr fresh = 0;  // allocated for this run; 0 once handed to JS
    size_t bytes = 0;
    Napi::ObjectReference given;  // the caller's DeviceBuffer, when it gave one
  };
  std::vector<Output> outputs;
  // Where the plan's status word is copied after the replay (pinned; null: the call gave none).
  uint32_t* status = nullptr;

  void Abandon() override {
    PlanCompletion::Abandon();
    for (Output& out : outputs) out.given.SuppressDestruct();
  }
  napi_value Result(Napi::Env env) override {
    Napi::Array array = Napi::Array::New(env, outputs.size());
    for (uint32_t i = 0; i < outputs.size(); ++i) {
      Output& out = outputs[i];
      if (out.given.IsEmpty()) {
        array[i] = classes_->deviceBuffer.New({Napi::External<cuda::Device>::New(env, device_),
                                               Napi::BigInt::New(env, uint64_t(out.fresh)), Napi::Number::New(env, double(out.bytes))});
        out.fresh = 0;  // the DeviceBuffer owns it now
      } else {
        array[i] = out.given.Value();
      }
    }
    if (status != nullptr) array.Set("status", Napi::Number::New(env, double(*status)));
    return array;
  }

 private:
  Classes* classes_;
  cuda::Device* device_;
};

// execute(inputs, outputs, pollMicros): one run of the captured graph with its copies, enqueued
// on this (JS) thread on the plan's stream, and one Promise for all of it.
//   inputs: [[planBuffer, source], ...]: each source copied into the plan's buffer first (same
//     byte length, same device);
//   outputs: [[planBuffer, destination | null], ...]: after the replay each plan buffer is copied
//     into the destination, or into a fresh allocation from the pool (in stream order: no wait);
//   status (optional): a plan buffer of at least 4 bytes whose first word is copied to the host
//     after the output copies: the resolved array's `status` property (the plan's kernels
//     report bad data there, an index out of range; the plan zeroes it first);
// resolves with the destinations in order. Stream order makes back-to-back calls safe without
// waiting in between: the next call's input copies queue behind this call's replay and output
// copies. Every buffer is held busy until the Promise settles.
Napi::Value PlanObject::ExecuteMethod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* classes = static_cast<Classes*>(info.Data());
  CheckState(env, kReplay);
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsArray()) {
    ThrowInvalid(env, "execute(inputs, outputs): inputs and outputs must be arrays of [planBuffer, buffer] pairs");
  }
  int pollMicros = info.Length() > 2 && !info[2].IsUndefined() ? int(Integer(info, 2, "pollMicros", 0)) : 0;
  if (pollMicros > 1000) ThrowInvalid(env, "pollMicros must be at most 1000");
  cuda::Device* device = plan->device();
  DeviceBuffer* statusBuffer = nullptr;
  if (info.Length() > 3 && !info[3].IsUndefined() && !info[3].IsNull()) {
    statusBuffer = UnwrapBuffer(env, classes, info[3], "the status buffer");
    if (statusBuffer->device() != device) ThrowInvalid(env, "execute(): the status buffer must be on the plan's device " + std::to_string(device->ordinal));
    if (statusBuffer->bytes() < sizeof(uint32_t)) ThrowInvalid(env, "execute(): the status buffer must hold at least 4 bytes");
  }
  auto pairOf = [&](Napi::Array list, uint32_t i, const char* what, bool nullable) -> std::pair<DeviceBuffer*, DeviceBuffer*> {
    Napi::Value entry = list.Get(i);
    if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 2) ThrowInvalid(env, std::string(what) + " must be [planBuffer, buffer] pairs");
    Napi::Array pair = entry.As<Napi::Array>();
    DeviceBuffer* ours = UnwrapBuffer(env, classes, pair.Get(uint32_t(0)), "a plan buffer");
    Napi::Value other = pair.Get(uint32_t(1));
    DeviceBuffer* theirs = nullable && other.IsNull() ? nullptr : UnwrapBuffer(env, classes, other, what);
    if (ours->device() != device || (theirs != nullptr && theirs->device() != device)) {
      ThrowInvalid(env, std::string(what) + ": every buffer must be on the plan's device " + std::to_string(device->ordinal));
    }
    if (theirs != nullptr && theirs->bytes() != ours->bytes()) {
      ThrowInvalid(env, std::string(what) + " " + std::to_string(i) + ": " + std::to_string(theirs->bytes()) +
                            " bytes where the plan's buffer has " + std::to_string(ours->bytes()));
    }
    return {ours, theirs};
  };
  Napi::Array inputList = info[0].As<Napi::Array>();
  Napi::Array outputList = info[1].As<Napi::Array>();
  auto job = std::make_unique<ExecuteCompletion>(this, classes, device);
  std::vector<std::pair<DeviceBuffer*, DeviceBuffer*>> inputs, outputs;
  try {
    for (uint32_t i = 0; i < inputList.Length(); ++i) inputs.push_back(pairOf(inputList, i, "an input", false));
    for (uint32_t i = 0; i < outputList.Length(); ++i) outputs.push_back(pairOf(outputList, i, "an output", true));
    for (DeviceBuffer* buffer : buffers) job->lease.Add(env, buffer, "plan's");
    for (auto& [ours, source] : inputs) {
      job->lease.Add(env, ours, "plan's");
      job->lease.Add(env, source, "input");
    }
    for (auto& [ours, destination] : outputs) {
      job->lease.Add(env, ours, "plan's");
      ExecuteCompletion::Output out;
      out.bytes = ours->bytes();
      if (destination != nullptr) {
        job->lease.Add(env, destination, "output");
        out.given = Napi::Persistent(destination->Value());
      }
      job->outputs.push_back(std::move(out));
    }
    if (statusBuffer != nullptr) job->lease.Add(env, statusBuffer, "plan's");
    if (!classes->completions) classes->completions = CreateEnvLink(env);
  } catch (...) {
    job->Finally(env);
    throw;
  }
  // The outputs are allocated before anything is enqueued: out of memory then fails the call
  // with nothing queued.
  NativeError error;
  bool ok = cuda::MakeCurrent(*device, &error);
  for (size_t i = 0; ok && i < outputs.size(); ++i) {
    ExecuteCompletion::Output& out = job->outputs[i];
    if (out.given.IsEmpty()) ok = cuda::AllocateOnStream(*device, out.bytes, plan->stream(), &out.fresh, &error);
  }
  const cuda::RuntimeApi& api = *device->api;
  auto copy = [&](cuda::CUdeviceptr to, cuda::CUdeviceptr from, size_t bytes, const char* what) {
    if (ok && bytes > 0) ok = cuda::Check(*device, api.cuMemcpyDtoDAsync_v2(to, from, bytes, plan->stream()), "cuMemcpyDtoDAsync_v2", &error, what);
  };
  for (auto& [ours, source] : inputs) copy(ours->ptr(), source->ptr(), ours->bytes(), "(copying a plan input in)");
  if (ok) ok = plan->Submit(1, true, &error);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ExecuteCompletion::Output& out = job->outputs[i];
    cuda::CUdeviceptr to = out.given.IsEmpty() ? out.fresh : outputs[i].second->ptr();
    copy(to, outputs[i].first->ptr(), out.bytes, "(copying a plan output out)");
  }
  if (ok && statusBuffer != nullptr && cuda::BorrowStatusWord(*device, &job->status, &error)) {
    ok = cuda::Check(*device, api.cuMemcpyDtoHAsync_v2(job->status, statusBuffer->ptr(), sizeof(uint32_t), plan->stream()),
                     "cuMemcpyDtoHAsync_v2", &error, "(copying the plan's status word out)");
  } else if (statusBuffer != nullptr) {
    ok = false;
  }
  return SettleWhenDone(env, classes->completions, *device, plan->stream(), std::move(job), ok ? nullptr : &error, pollMicros);
}

// ---------------------------------------------------------------------------------------------
// Exported functions. `info.Data()` is the environment's Classes.

Classes* ClassesOf(const Napi::CallbackInfo& info) { return static_cast<Classes*>(info.Data()); }

Napi::Value GpuDevice(const Napi::CallbackInfo& info) {
  return (new DeviceWorker(info.Env(), int(Integer(info, 0, "device")), DeviceWorker::kInfo, 0))->Start();
}
Napi::Value GpuMemoryInfo(const Napi::CallbackInfo& info) {
  return (new DeviceWorker(info.Env(), int(Integer(info, 0, "device")), DeviceWorker::kMemInfo, 0))->Start();
}
// CUDA's current device on the JS thread: the ordinal of the context current there, or -1.
Napi::Value GpuCurrentDevice(const Napi::CallbackInfo& info) {
  NativeError error;
  const cuda::RuntimeApi* api = cuda::LoadRuntime(&error);
  if (api == nullptr) ThrowJsError(info.Env(), error);
  return Napi::Number::New(info.Env(), cuda::CurrentOrdinal(*api));
}
// Sets the device up off the JS thread, then makes its primary context current on the JS thread
// (what cudaSetDevice does); resolves to whether cuCtxSetCurrent succeeded.
Napi::Value GpuSetCurrentDevice(const Napi::CallbackInfo& info) {
  return (new DeviceWorker(info.Env(), int(Integer(info, 0, "device")), DeviceWorker::kSetCurrent, 0))->Start();
}
Napi::Value GpuSynchronize(const Napi::CallbackInfo& info) {
  return (new DeviceWorker(info.Env(), int(Integer(info, 0, "device")), DeviceWorker::kSync, 0))->Start();
}
Napi::Value GpuSetPoolReleaseThreshold(const Napi::CallbackInfo& info) {
  int ordinal = int(Integer(info, 0, "device"));
  uint64_t bytes = UINT64_MAX;  // Infinity: keep everything
  if (!(info.Length() > 1 && info[1].IsNumber() && std::isinf(info[1].As<Napi::Number>().DoubleValue()))) {
    bytes = uint64_t(Integer(info, 1, "release threshold"));
  }
  return (new DeviceWorker(info.Env(), ordinal, DeviceWorker::kThreshold, bytes))->Start();
}
Napi::Value GpuTrimPool(const Napi::CallbackInfo& info) {
  int ordinal = int(Integer(info, 0, "device"));
  return (new DeviceWorker(info.Env(), ordinal, DeviceWorker::kTrim, uint64_t(Integer(info, 1, "bytes to keep"))))->Start();
}

Napi::Value GpuAlloc(const Napi::CallbackInfo& info) {
  int ordinal = int(Integer(info, 0, "device"));
  size_t bytes = size_t(Integer(info, 1, "byte length"));
  return (new AllocWorker(info.Env(), ClassesOf(info), ordinal, bytes, false))->Start();
}

Napi::Value GpuAllocPinned(const Napi::CallbackInfo& info) {
  int ordinal = int(Integer(info, 0, "device"));
  size_t bytes = size_t(Integer(info, 1, "byte length"));
  return (new AllocWorker(info.Env(), ClassesOf(info), ordinal, bytes, true))->Start();
}

Napi::Value GpuFreePinned(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) ThrowInvalid(env, "freePinned expects the pinned ArrayBuffer");
  auto buffer = info[0].As<Napi::ArrayBuffer>();
  void* data = buffer.Data();
  int ordinal = -1;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(Pinned().mutex);
    auto it = Pinned().ranges.find(reinterpret_cast<uintptr_t>(data));
    if (it == Pinned().ranges.end()) return Napi::Boolean::New(env, false);
    bytes = it->second.first;
    ordinal = it->second.second;
    Pinned().ranges.erase(it);
  }
  gPinnedBytes -= int64_t(bytes);
  buffer.Detach();
  cuda::Device* device = DeviceOrThrow(env, ordinal);
  cuda::FreePinned(*device, data);
  return Napi::Boolean::New(env, true);
}

Napi::Value GpuCopyHtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DeviceBuffer* dst = UnwrapBuffer(env, ClassesOf(info), info[0], "copy destination");
  uint64_t offset = uint64_t(Integer(info, 1, "destination offset"));
  auto* worker = new CopyWorker(env, CopyWorker::kHtoD);
  try {
    worker->host = GetHostRange(info, 2, "copy source");
    CheckRange(env, dst, offset, worker->host.bytes, "host-to-device copy");
    worker->lease.Add(env, dst, "destination");
  } catch (...) {
    delete worker;
    throw;
  }
  worker->device = dst->device();
  worker->dst = dst->ptr() + offset;
  worker->bytes = worker->host.bytes;
  return worker->Start();
}

Napi::Value GpuCopyDtoH(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DeviceBuffer* src = UnwrapBuffer(env, ClassesOf(info), info[0], "copy source");
  uint64_t offset = uint64_t(Integer(info, 1, "source offset"));
  auto* worker = new CopyWorker(env, CopyWorker::kDtoH);
  try {
    worker->host = GetHostRange(info, 2, "copy destination");
    CheckRange(env, src, offset, worker->host.bytes, "device-to-host copy");
    worker->lease.Add(env, src, "source");
  } catch (...) {
    delete worker;
    throw;
  }
  worker->device = src->device();
  worker->src = src->ptr() + offset;
  worker->bytes = worker->host.bytes;
  return worker->Start();
}

Napi::Value GpuCopyDtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DeviceBuffer* dst = UnwrapBuffer(env, ClassesOf(info), info[0], "copy destination");
  uint64_t dstOffset = uint64_t(Integer(info, 1, "destination offset"));
  DeviceBuffer* src = UnwrapBuffer(env, ClassesOf(info), info[2], "copy source");
  uint64_t srcOffset = uint64_t(Integer(info, 3, "source offset"));
  uint64_t bytes = uint64_t(Integer(info, 4, "byte count"));
  CheckRange(env, dst, dstOffset, bytes, "device-to-device copy destination");
  CheckRange(env, src, srcOffset, bytes, "device-to-device copy source");
  auto* worker = new CopyWorker(env, dst->device() == src->device() ? CopyWorker::kDtoD : CopyWorker::kPeer);
  try {
    worker->lease.Add(env, dst, "destination");
    worker->lease.Add(env, src, "source");
  } catch (...) {
    delete worker;
    throw;
  }
  worker->device = dst->device();
  worker->srcDevice = src->device();
  worker->dst = dst->ptr() + dstOffset;
  worker->src = src->ptr() + srcOffset;
  worker->bytes = bytes;
  return worker->Start();
}

// gpuCopyRects(fills, rects): fills are [buffer, offset, bytes] ranges to zero; rects are
// [dst, dstOffset, dstPitch, src, srcOffset, srcPitch, widthBytes, height] copies of `height`
// rows. Every buffer on one device; every row of every rect inside its buffer, checked here.
Napi::Value GpuCopyRects(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsArray()) ThrowInvalid(env, "copyRects(fills, rects): both must be arrays");
  Classes* classes = ClassesOf(info);
  auto worker = std::make_unique<RectsWorker>(env);
  auto number = [&](Napi::Array entry, uint32_t i, const char* what) -> uint64_t {
    Napi::Value v = entry.Get(i);
    double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (!std::isfinite(d) || d < 0 || std::floor(d) != d || d > 9007199254740991.0) {
      ThrowInvalid(env, std::string("copyRects(): ") + what + " must be an integer >= 0");
    }
    return uint64_t(d);
  };
  auto buffer = [&](Napi::Value v, const char* role) -> DeviceBuffer* {
    DeviceBuffer* b = UnwrapBuffer(env, classes, v, role);
    if (worker->device == nullptr) worker->device = b->device();
    if (b->device() != worker->device) ThrowInvalid(env, "copyRects(): every buffer must be on one device");
    worker->lease.Add(env, b, role);
    return b;
  };
  auto entries = [&](Napi::Value list, uint32_t length, const char* what) {
    Napi::Array array = list.As<Napi::Array>();
    std::vector<Napi::Array> out;
    for (uint32_t i = 0; i < array.Length(); ++i) {
      Napi::Value e = array.Get(i);
      if (!e.IsArray() || e.As<Napi::Array>().Length() != length) {
        ThrowInvalid(env, std::string("copyRects(): each of ") + what + " must be an array of " + std::to_string(length));
      }
      out.push_back(e.As<Napi::Array>());
    }
    return out;
  };
  try {
    for (Napi::Array e : entries(info[0], 3, "fills")) {
      DeviceBuffer* b = buffer(e.Get(uint32_t(0)), "fill");
      uint64_t offset = number(e, 1, "a fill's offset"), bytes = number(e, 2, "a fill's byte count");
      CheckRange(env, b, offset, bytes, "copyRects() fill");
      worker->fills.push_back({b->ptr() + offset, size_t(bytes)});
    }
    for (Napi::Array e : entries(info[1], 8, "rects")) {
      DeviceBuffer* dst = buffer(e.Get(uint32_t(0)), "rect destination");
      DeviceBuffer* src = buffer(e.Get(uint32_t(3)), "rect source");
      uint64_t dstOffset = number(e, 1, "dstOffset"), dstPitch = number(e, 2, "dstPitch");
      uint64_t srcOffset = number(e, 4, "srcOffset"), srcPitch = number(e, 5, "srcPitch");
      uint64_t width = number(e, 6, "widthBytes"), height = number(e, 7, "height");
      if (width > dstPitch || width > srcPitch) ThrowInvalid(env, "copyRects(): a rect's width is larger than its pitch");
      if (height > 0 && width > 0) {
        // The last row ends at offset + (height - 1) * pitch + width; pitches and heights are
        // below 2^53, and a product past a buffer's size is caught before it can overflow.
        auto span = [&](uint64_t pitch) -> uint64_t {
          if (height - 1 > 0 && pitch > (uint64_t(1) << 52) / (height - 1)) ThrowInvalid(env, "copyRects(): a rect spans more bytes than any buffer has");
          return (height - 1) * pitch + width;
        };
        CheckRange(env, dst, dstOffset, span(dstPitch), "copyRects() destination");
        CheckRange(env, src, srcOffset, span(srcPitch), "copyRects() source");
      }
      worker->rects.push_back({dst->ptr() + dstOffset, src->ptr() + srcOffset, size_t(dstPitch), size_t(srcPitch), size_t(width), size_t(height)});
    }
  } catch (...) {
    worker->lease.Release(env);
    throw;
  }
  if (worker->device == nullptr) {
    Napi::Promise::Deferred done = Napi::Promise::Deferred::New(env);
    done.Resolve(env.Undefined());
    return done.Promise();
  }
  return worker.release()->Start();
}

Napi::Value GpuStats(const Napi::CallbackInfo& info) {
  Napi::Object result = Napi::Object::New(info.Env());
  result.Set("liveBuffers", double(gLiveBuffers.load()));
  result.Set("liveBytes", double(gLiveBytes.load()));
  result.Set("finalizedBuffers", double(gFinalizedBuffers.load()));
  result.Set("pinnedBytes", double(gPinnedBytes.load()));
  // This environment's isolate: the external memory V8 counts (what DeviceBuffers added to it).
  result.Set("isolateExternalBytes", double(Napi::MemoryManagement::AdjustExternalMemory(info.Env(), 0)));
  return result;
}

Napi::Value NvrtcInfo(const Napi::CallbackInfo& info) { return (new InfoWorker(info.Env(), InfoWorker::kNvrtc))->Start(); }
Napi::Value CublasLtInfo(const Napi::CallbackInfo& info) {
  return (new InfoWorker(info.Env(), InfoWorker::kCublasLt))->Start();
}
Napi::Value CudnnInfo(const Napi::CallbackInfo& info) { return (new InfoWorker(info.Env(), InfoWorker::kCudnn))->Start(); }

// The GEMM choices of the process on a device, for a timing cache file (no CUDA call: the choices
// are plain data, kept by native/cublaslt).
Napi::Value GpuTunedGemms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int ordinal = int(Integer(info, 0, "device"));
  const std::vector<cublaslt::TunedGemm> tuned = cublaslt::TunedGemms(ordinal);
  Napi::Array out = Napi::Array::New(env, tuned.size());
  for (size_t i = 0; i < tuned.size(); ++i) {
    Napi::Object entry = Napi::Object::New(env);
    entry.Set("problem", tuned[i].problem);
    entry.Set("algo", Napi::Buffer<uint8_t>::Copy(env, tuned[i].algo.data(), tuned[i].algo.size()));
    out.Set(uint32_t(i), entry);
  }
  return out;
}

// Seeds the choices of a device from a file's entries ({problem, algo}); returns how many were taken.
Napi::Value GpuSeedTunedGemms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int ordinal = int(Integer(info, 0, "device"));
  if (info.Length() < 2 || !info[1].IsArray()) ThrowInvalid(env, "seedTunedGemms expects (device, entries[])");
  auto array = info[1].As<Napi::Array>();
  std::vector<cublaslt::TunedGemm> entries;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    Napi::Value item = array.Get(i);
    if (!item.IsObject()) ThrowInvalid(env, "seedTunedGemms: entry " + std::to_string(i) + " must be an object");
    Napi::Object o = item.As<Napi::Object>();
    if (!o.Get("problem").IsString() || !o.Get("algo").IsTypedArray()) {
      ThrowInvalid(env, "seedTunedGemms: entry " + std::to_string(i) + " needs a string problem and a Uint8Array algo");
    }
    auto algo = o.Get("algo").As<Napi::TypedArray>();
    if (algo.TypedArrayType() != napi_uint8_array || algo.ByteLength() != cublaslt::kAlgorithmBytes) {
      ThrowInvalid(env, "seedTunedGemms: entry " + std::to_string(i) + "'s algo must be " +
                            std::to_string(cublaslt::kAlgorithmBytes) + " bytes (a Uint8Array)");
    }
    const auto* bytes = static_cast<const uint8_t*>(algo.ArrayBuffer().Data()) + algo.ByteOffset();
    entries.push_back({o.Get("problem").As<Napi::String>().Utf8Value(), std::vector<uint8_t>(bytes, bytes + algo.ByteLength())});
  }
  return Napi::Number::New(env, double(cublaslt::SeedTunedGemms(ordinal, entries)));
}

Napi::Value GpuTuningCounts(const Napi::CallbackInfo& info) {
  const cublaslt::TuningCounts counts = cublaslt::CountTuning();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("timed", double(counts.timed));
  out.Set("reused", double(counts.reused));
  out.Set("overBudget", double(counts.overBudget));
  return out;
}

std::vector<std::string> StringList(const Napi::CallbackInfo& info, size_t index, const char* what) {
  if (info.Length() <= index || !info[index].IsArray()) ThrowInvalid(info.Env(), std::string(what) + " must be an array of strings");
  auto array = info[index].As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    Napi::Value item = array.Get(i);
    if (!item.IsString()) ThrowInvalid(info.Env(), std::string(what) + " must be an array of strings");
    out.push_back(item.As<Napi::String>().Utf8Value());
  }
  return out;
}

Napi::Value NvrtcCompile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    ThrowInvalid(env, "nvrtcCompile expects (source, name, arch, options)");
  }
  int arch = int(Integer(info, 2, "architecture", 10));
  return (new CompileWorker(env, info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::String>().Utf8Value(), arch,
                            StringList(info, 3, "options")))
      ->Start();
}

Napi::Value GpuLoadModule(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int ordinal = int(Integer(info, 0, "device"));
  HostRange image = GetHostRange(info, 1, "module image");
  std::vector<std::string> names = StringList(info, 2, "kernel names");
  std::vector<char> copy(static_cast<char*>(image.data), static_cast<char*>(image.data) + image.bytes);
  if (copy.empty()) ThrowInvalid(env, "The module image is empty");
  return (new LoadModuleWorker(env, ClassesOf(info), ordinal, std::move(copy), std::move(names)))->Start();
}

Napi::Value GpuCreatePlan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Classes* classes = ClassesOf(info);
  int ordinal = int(Integer(info, 0, "device"));
  HostRange encoded = GetHostRange(info, 1, "encoded plan");
  if (info.Length() < 4 || !info[2].IsArray() || !info[3].IsArray()) {
    ThrowInvalid(env, "createPlan expects (device, encoded, buffers[], modules[], tuningBudgetMs?)");
  }
  // Milliseconds the plan may spend timing GEMM candidates; absent or undefined: no limit.
  double tuningBudgetMs = -1;
  if (info.Length() > 4 && !info[4].IsUndefined()) tuningBudgetMs = double(Integer(info, 4, "tuningBudgetMs"));
  cuda::Device* device = DeviceOrThrow(env, ordinal);
  Napi::Object object = classes->plan.New({Napi::External<void>::New(env, nullptr)});
  PlanObject* owner = PlanObject::Unwrap(object);
  std::vector<BufferRef> refs;
  std::vector<std::vector<KernelRef>> kernels;
  // Any refusal below releases what was taken so far (module users), not only at GC.
  try {
    auto bufferArray = info[2].As<Napi::Array>();
    for (uint32_t i = 0; i < bufferArray.Length(); ++i) {
      DeviceBuffer* buffer = UnwrapBuffer(env, classes, bufferArray.Get(i), "every plan buffer");
      if (buffer->device() != device) ThrowInvalid(env, "plan buffer " + std::to_string(i) + " is on another device");
      if (buffer->Value().Get("disposed").ToBoolean()) ThrowInvalid(env, "plan buffer " + std::to_string(i) + " was disposed");
      owner->buffers.push_back(buffer);
      owner->bufferRefs.push_back(Napi::Persistent(buffer->Value()));
      refs.push_back(BufferRef{buffer->ptr(), buffer->bytes()});
    }
    auto moduleArray = info[3].As<Napi::Array>();
    for (uint32_t i = 0; i < moduleArray.Length(); ++i) {
      Napi::Value value = moduleArray.Get(i);
      if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(classes->module.Value())) {
        ThrowInvalid(env, "every plan module must be a Module");
      }
      Module* module = Module::Unwrap(value.As<Napi::Object>());
      if (!module->loaded()) ThrowInvalid(env, "plan module " + std::to_string(i) + " was disposed");
      if (module->device() != device) ThrowInvalid(env, "plan module " + std::to_string(i) + " is on another device");
      module->users++;
      owner->modules.push_back(module);
      owner->moduleRefs.push_back(Napi::Persistent(value.As<Napi::Object>()));
      kernels.push_back(module->kernels());
    }
  } catch (...) {
    owner->Dispose(env);
    throw;
  }
  NativeError error;
  if (!Plan::Decode(static_cast<const uint8_t*>(encoded.data), encoded.bytes, refs, kernels, owner->plan.get(), &error)) {
    owner->Dispose(env);
    ThrowJsError(env, error);
  }
  owner->plan->SetTuningBudget(tuningBudgetMs);
  auto* worker = new PlanWorker(env, owner, PlanWorker::kPrepare, 1, device);
  try {
    for (DeviceBuffer* buffer : owner->buffers) worker->lease.Add(env, buffer, "plan's");
  } catch (...) {
    owner->inFlight--;
    delete worker;
    owner->Dispose(env);
    throw;
  }
  return worker->Start();
}

// Decodes a plan against fake buffers (buffer i at address (i + 1) << 40, of the given sizes)
// and kernels, touching no GPU: lets CPU tests check the TypeScript encoder against the decoder.
Napi::Value GpuDescribePlan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostRange encoded = GetHostRange(info, 0, "encoded plan");
  if (info.Length() < 3 || !info[1].IsArray() || !info[2].IsArray()) {
    ThrowInvalid(env, "describePlan expects (encoded, bufferSizes[], kernelCounts[])");
  }
  std::vector<BufferRef> buffers;
  auto sizes = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < sizes.Length(); ++i) {
    buffers.push_back(BufferRef{(cuda::CUdeviceptr(i) + 1) << 40, size_t(sizes.Get(i).As<Napi::Number>().Int64Value())});
  }
  std::vector<std::vector<KernelRef>> modules;
  auto counts = info[2].As<Napi::Array>();
  for (uint32_t m = 0; m < counts.Length(); ++m) {
    std::vector<KernelRef> kernels(counts.Get(m).As<Napi::Number>().Uint32Value());
    for (size_t k = 0; k < kernels.size(); ++k) kernels[k].name = std::to_string(m) + ":" + std::to_string(k);
    modules.push_back(std::move(kernels));
  }
  Plan plan;
  NativeError error;
  if (!Plan::Decode(static_cast<const uint8_t*>(encoded.data), encoded.bytes, buffers, modules, &plan, &error)) {
    ThrowJsError(env, error);
  }
  static const char* kKinds[] = {"", "launch", "copy", "memset", "gemm", "conv"};
  Napi::Array out = Napi::Array::New(env, plan.stepCount());
  for (size_t i = 0; i < plan.stepCount(); ++i) {
    const PlanStep& step = plan.steps()[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("kind", kKinds[step.kind]);
    Napi::Array ptrs = Napi::Array::New(env, 5);
    for (uint32_t j = 0; j < 5; ++j) ptrs.Set(j, Napi::BigInt::New(env, uint64_t(step.ptrs[j])));
    o.Set("ptrs", ptrs);
    o.Set("bytes", double(step.bytes));
    o.Set("value", step.value);
    if (step.kind == kLaunch) {
      o.Set("kernel", step.kernel.name);
      Napi::Array grid = Napi::Array::New(env, 3), block = Napi::Array::New(env, 3);
      for (uint32_t j = 0; j < 3; ++j) {
        grid.Set(j, step.grid[j]);
        block.Set(j, step.block[j]);
      }
      o.Set("grid", grid);
      o.Set("block", block);
      o.Set("sharedBytes", step.sharedBytes);
      o.Set("params", Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(step.params.data()), step.paramBytes));
    }
    static const char* kDTypes[] = {"float32", "float16", "bfloat16"};
    if (step.kind == kGemm) {
      const cublaslt::GemmShape& g = step.gemm;
      Napi::Object gemm = Napi::Object::New(env);
      gemm.Set("m", g.m);
      gemm.Set("n", g.n);
      gemm.Set("k", g.k);
      gemm.Set("dtype", kDTypes[int(g.dtype)]);
      gemm.Set("transA", g.transA);
      gemm.Set("transB", g.transB);
      gemm.Set("tf32", g.tf32);
      gemm.Set("relu", g.relu);
      gemm.Set("hasC", g.hasC);
      gemm.Set("hasBias", g.hasBias);
      gemm.Set("tune", g.tune);
      gemm.Set("batch", g.batch);
      gemm.Set("strideA", double(g.strideA));
      gemm.Set("strideB", double(g.strideB));
      gemm.Set("strideD", double(g.strideD));
      gemm.Set("alpha", g.alpha);
      gemm.Set("beta", g.beta);
      o.Set("gemm", gemm);
    }
    if (step.kind == kConv) {
      const cudnn::ConvShape& c = step.conv;
      Napi::Object conv = Napi::Object::New(env);
      conv.Set("spatial", c.spatial);
      conv.Set("dtype", kDTypes[c.dtype]);
      conv.Set("transposed", c.transposed);
      conv.Set("channelsLast", c.channelsLast);
      conv.Set("relu", c.relu);
      conv.Set("residual", c.residual);
      conv.Set("tf32", c.tf32);
      for (const auto& [name, value] : {std::pair<const char*, int32_t>{"n", c.n}, {"c", c.c}, {"k", c.k}, {"groups", c.groups}}) {
        conv.Set(name, value);
      }
      const std::pair<const char*, const int32_t*> lists[] = {{"input", c.in},     {"kernel", c.kernel},
                                                              {"pads", c.pad},     {"postPads", c.postPad},
                                                              {"strides", c.stride}, {"dilations", c.dilation},
                                                              {"output", c.out}};
      for (const auto& [name, values] : lists) {
        Napi::Array array = Napi::Array::New(env, c.spatial);
        for (int j = 0; j < c.spatial; ++j) array.Set(uint32_t(j), values[j]);
        conv.Set(name, array);
      }
      o.Set("conv", conv);
      o.Set("hasBias", step.hasBias);
    }
    out.Set(uint32_t(i), o);
  }
  return out;
}

}  // namespace

void Register(Napi::Env env, Napi::Object exports) {
  auto* classes = new Classes();
  classes->deviceBuffer = Napi::Persistent(DeviceBuffer::Define(env));
  classes->module = Napi::Persistent(Module::Define(env));
  classes->plan = Napi::Persistent(PlanObject::Define(env, classes));
  env.AddCleanupHook([classes]() { delete classes; });
  // NCCL reduces DeviceBuffers where they are: lease them to it (native/nccl/bindings.h).
  nccl::SetBufferLeaser(env, [classes](Napi::Env env, Napi::Value value, const char* role) {
    DeviceBuffer* buffer = UnwrapBuffer(env, classes, value, role);
    NativeError error;
    if (!buffer->Acquire(role, &error)) ThrowJsError(env, error);
    auto keep = std::make_shared<Napi::ObjectReference>(Napi::Persistent(value.As<Napi::Object>()));
    nccl::LeasedBuffer lease{buffer->device(), buffer->ptr(), buffer->bytes(), nullptr};
    lease.release = [buffer, keep](Napi::Env env) {
      buffer->Unacquire(env);
      keep->Reset();
    };
    return lease;
  });
  struct Entry {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  };
  const Entry entries[] = {
      {"gpuDevice", GpuDevice},
      {"gpuCurrentDevice", GpuCurrentDevice},
      {"gpuSetCurrentDevice", GpuSetCurrentDevice},
      {"gpuMemoryInfo", GpuMemoryInfo},
      {"gpuSynchronize", GpuSynchronize},
      {"gpuSetPoolReleaseThreshold", GpuSetPoolReleaseThreshold},
      {"gpuTrimPool", GpuTrimPool},
      {"gpuAlloc", GpuAlloc},
      {"gpuAllocPinned", GpuAllocPinned},
      {"gpuFreePinned", GpuFreePinned},
      {"gpuCopyHtoD", GpuCopyHtoD},
      {"gpuCopyDtoH", GpuCopyDtoH},
      {"gpuCopyDtoD", GpuCopyDtoD},
      {"gpuCopyRects", GpuCopyRects},
      {"gpuStats", GpuStats},
      {"gpuLoadModule", GpuLoadModule},
      {"gpuCreatePlan", GpuCreatePlan},
      {"gpuDescribePlan", GpuDescribePlan},
      {"gpuTunedGemms", GpuTunedGemms},
      {"gpuSeedTunedGemms", GpuSeedTunedGemms},
      {"gpuTuningCounts", GpuTuningCounts},
      {"nvrtcInfo", NvrtcInfo},
      {"nvrtcCompile", NvrtcCompile},
      {"cublasLtInfo", CublasLtInfo},
      {"cudnnInfo", CudnnInfo},
  };
  for (const Entry& entry : entries) {
    exports.Set(entry.name, Napi::Function::New(env, entry.fn, entry.name, classes));
  }
}

}  // namespace trtn::gpu
