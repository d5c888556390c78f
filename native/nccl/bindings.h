// NCCL's JS functions and the NcclComm class, added to the addon's exports. lib/collectives/
// binding.ts declares what they take and return.
#pragma once

#include <napi.h>

#include <cstddef>
#include <functional>

#include "../cuda/runtime.h"

namespace trtn::nccl {

void Register(Napi::Env env, Napi::Object exports);

// A DeviceBuffer held busy (not freed) until `release` runs on the JS thread.
struct LeasedBuffer {
  cuda::Device* device = nullptr;
  cuda::CUdeviceptr ptr = 0;
  size_t bytes = 0;
  std::function<void(Napi::Env)> release;
};

// DeviceBuffer is the GPU runtime's class (native/gpu/bindings.cc), so that side leases them to
// NCCL through this hook: `lease` throws a JS error when `value` is not a live DeviceBuffer.
// Until it is set for an environment, all-reduce there is E_INTERNAL naming the missing hook.
using BufferLeaser = std::function<LeasedBuffer(Napi::Env env, Napi::Value value, const char* role)>;
void SetBufferLeaser(Napi::Env env, BufferLeaser lease);

}  // namespace trtn::nccl
