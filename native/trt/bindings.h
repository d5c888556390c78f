// The TensorRT backend's JS functions (tensorrtBuild, tensorrtLoad → TensorRTEngine), added to
// the addon's exports when it is built with TensorRT's headers (TRTN_WITH_TENSORRT).
// lib/backends/tensorrt/binding.ts declares what they take and return.
#pragma once

#include <napi.h>

namespace trtn::trt {

// True when this build carries the TensorRT backend.
bool BackendBuilt();

void Register(Napi::Env env, Napi::Object exports);

}  // namespace trtn::trt
