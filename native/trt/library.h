// Finding the TensorRT runtime library (libnvinfer) with dlopen, never linking it: its version
// function and the two factories (C linkage) are all that is resolved by name. The rest of
// TensorRT's API is reached through the objects the factories return (build.cc, runtime.cc),
// which needs TensorRT's headers at build time; this file does not.
#pragma once

#include <cstdint>
#include <string>

#include "../common/native_error.h"

namespace trtn::trt {

// createInferBuilder_INTERNAL / createInferRuntime_INTERNAL: (ILogger*, NV_TENSORRT_VERSION) -> object.
using CreateInferFn = void* (*)(void* logger, int32_t version);

struct LibraryInfo {
  std::string libraryPath;
  int version = 0;  // getInferLibVersion(): major * 10000 + minor * 100 + patch for TensorRT 10
  CreateInferFn createInferBuilder = nullptr;  // null when the library does not export it
  CreateInferFn createInferRuntime = nullptr;
};

// Opens libnvinfer once per process (thread-safe; never closed): TENSORRT_NODE_TENSORRT_LIBRARY
// (a path) when set, else TENSORRT_LIBRARY (the older name) when set, else libnvinfer.so.10. On failure returns false with
// E_TENSORRT_MISSING listing every name tried.
bool FindLibrary(LibraryInfo* out, NativeError* error);

// FindLibrary, then checks that the library can serve code compiled against headers of
// `headerVersion` (NV_TENSORRT_VERSION): same major, not older than the headers, not 10.8
// (which moved a method inside INetworkDefinition's vtable), both factories exported.
// A mismatch is E_TENSORRT_MISSING naming both versions.
bool FindApi(LibraryInfo* out, int32_t headerVersion, NativeError* error);

// `major.minor.patch` of a TensorRT 10 version number.
std::string FormatVersion(int32_t version);

}  // namespace trtn::trt
