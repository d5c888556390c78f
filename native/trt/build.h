// Building an engine: replay a program (program.h) into a strongly typed INetworkDefinition,
// configure the builder from the program's CONFIG op, build, serialize. Runs on any thread
// (bindings.cc runs it on the libuv pool); never touches JS.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/native_error.h"
#include "logger.h"

namespace trtn::trt {

struct BuildOutput {
  std::vector<uint8_t> plan;         // IHostMemory of buildSerializedNetwork
  std::vector<uint8_t> timingCache;  // the config's timing cache after the build, serialized
  int32_t libraryVersion = 0;        // getInferLibVersion() of the library that built it
  int32_t hardwareCompatibility = 0;  // HardwareCompatibilityLevel the plan was built with
};

// E_TENSORRT_MISSING (no usable libnvinfer), E_BAD_MODEL (malformed program), E_TENSORRT
// (TensorRT refused a call or the build; the message carries TensorRT's last logged error),
// E_ABORTED (the build was cancelled through BuildEvents::cancel).
bool BuildEngine(const uint8_t* program, size_t size, BuildEvents* events, BuildOutput* out, NativeError* error);

}  // namespace trtn::trt
