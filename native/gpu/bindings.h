// The GPU runtime's JS functions and classes (DeviceBuffer, Module, Plan), added to the addon's
// exports. lib/gpu/binding.ts declares what they take and return.
#pragma once

#include <napi.h>

namespace trtn::gpu {

void Register(Napi::Env env, Napi::Object exports);

}  // namespace trtn::gpu
