// Module entry: per-environment state, the typed-error bridge and the exported functions.
// The addon knows nothing of graphs; it opens NVIDIA libraries on demand and answers queries.
// Every call that may touch a driver runs on the libuv thread pool and settles a Promise.
#include <napi.h>

#include <functional>
#include <string>
#include <utility>

#include "common/native_error.h"
#include "common/promise_worker.h"
#include "gpu/bindings.h"
#include "cuda/driver.h"
#include "trt/bindings.h"
#include "nccl/bindings.h"
#include "trt/library.h"

namespace trtn {

// Bumped whenever the JS <-> native interface changes; lib/native.ts refuses a binary whose
// number differs, so a stale build/ never half-works after an upgrade.
constexpr int kBindingAbi = 1;

// Per-environment data (main thread, each worker_thread, each Electron context): nothing in
// the addon is process-global except the intentionally leaked library handles.
class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    DefineAddon(exports, {
                             InstanceMethod("setErrorFactory", &Addon::SetErrorFactory),
                             InstanceMethod("bindingInfo", &Addon::BindingInfo),
                             InstanceMethod("cudaDevices", &Addon::CudaDevices),
                             InstanceMethod("tensorrtLibrary", &Addon::TensorrtLibrary),
                         });
    gpu::Register(env, exports);
    trt::Register(env, exports);
    nccl::Register(env, exports);
  }

  // Builds the library's own JS error (lib/errors.ts) from a native error description.
  Napi::Value MakeError(Napi::Env env, const NativeError& error) {
    Napi::Object details = Napi::Object::New(env);
    for (const auto& [key, value] : error.details) details.Set(key, value);
    for (const auto& [key, value] : error.numbers) details.Set(key, value);
    for (const auto& [key, values] : error.lists) {
      Napi::Array array = Napi::Array::New(env, values.size());
      for (size_t i = 0; i < values.size(); ++i) array.Set(static_cast<uint32_t>(i), values[i]);
      details.Set(key, array);
    }
    if (!errorFactory_.IsEmpty()) {
      return errorFactory_.Call({Napi::String::New(env, error.code), Napi::String::New(env, error.message), details});
    }
    Napi::Error fallback = Napi::Error::New(env, error.message);
    fallback.Set("code", error.code);
    fallback.Set("details", details);
    return fallback.Value();
  }

 private:
  Napi::Value SetErrorFactory(const Napi::CallbackInfo& info) {
    if (info.Length() != 1 || !info[0].IsFunction()) {
      throw Napi::TypeError::New(info.Env(), "setErrorFactory expects one function");
    }
    errorFactory_ = Napi::Persistent(info[0].As<Napi::Function>());
    return info.Env().Undefined();
  }

  Napi::Value BindingInfo(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object result = Napi::Object::New(env);
    result.Set("bindingAbi", kBindingAbi);
    result.Set("napiVersion", static_cast<double>(Napi::VersionManagement::GetNapiVersion(env)));
    // The TensorRT backend (network replay, engine build and execution) needs TensorRT's
    // headers at build time (TRTN_WITH_TENSORRT); without them only the library probe is here.
    result.Set("tensorrtBackend", trt::BackendBuilt());
    return result;
  }

  Napi::Value CudaDevices(const Napi::CallbackInfo& info);
  Napi::Value TensorrtLibrary(const Napi::CallbackInfo& info);

  Napi::FunctionReference errorFactory_;
};

Napi::Value MakeJsError(Napi::Env env, const NativeError& error) {
  return env.GetInstanceData<Addon>()->MakeError(env, error);
}

class CudaDevicesWorker : public PromiseWorker {
 public:
  explicit CudaDevicesWorker(Napi::Env env) : PromiseWorker(env, "tensorrt-node:cudaDevices") {}

 protected:
  bool Run(NativeError* error) override { return cuda::QueryDevices(&query_, error); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("driverVersion", query_.driverVersion);
    result.Set("libraryPath", query_.libraryPath);
    Napi::Array devices = Napi::Array::New(env, query_.devices.size());
    for (size_t i = 0; i < query_.devices.size(); ++i) {
      const cuda::DeviceRecord& record = query_.devices[i];
      Napi::Object device = Napi::Object::New(env);
      device.Set("ordinal", record.ordinal);
      device.Set("name", record.name);
      static const char* kHex = "0123456789abcdef";
      std::string uuid;
      for (unsigned char byte : record.uuid) {
        uuid += kHex[byte >> 4];
        uuid += kHex[byte & 15];
      }
      device.Set("uuid", uuid);
      device.Set("pciBusId", record.pciBusId);
      device.Set("computeCapabilityMajor", record.computeCapabilityMajor);
      device.Set("computeCapabilityMinor", record.computeCapabilityMinor);
      // Exact as a double up to 2^53 bytes (8 PiB).
      device.Set("totalMemoryBytes", static_cast<double>(record.totalMemoryBytes));
      device.Set("multiprocessorCount", record.multiprocessorCount);
      devices.Set(static_cast<uint32_t>(i), device);
    }
    result.Set("devices", devices);
    return result;
  }

 private:
  cuda::DeviceQuery query_;
};

class TensorrtLibraryWorker : public PromiseWorker {
 public:
  explicit TensorrtLibraryWorker(Napi::Env env) : PromiseWorker(env, "tensorrt-node:tensorrtLibrary") {}

 protected:
  bool Run(NativeError* error) override { return trt::FindLibrary(&info_, error); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("libraryPath", info_.libraryPath);
    result.Set("version", info_.version);
    return result;
  }

 private:
  trt::LibraryInfo info_;
};

Napi::Value Addon::CudaDevices(const Napi::CallbackInfo& info) {
  return (new CudaDevicesWorker(info.Env()))->Start();
}

Napi::Value Addon::TensorrtLibrary(const Napi::CallbackInfo& info) {
  return (new TensorrtLibraryWorker(info.Env()))->Start();
}

}  // namespace trtn

using trtn::Addon;
NODE_API_ADDON(Addon)
