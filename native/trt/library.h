// Finding the TensorRT runtime library (libnvinfer) without TensorRT's headers: only its
// C-linkage version function is used here. The TensorRT backend proper (not written yet; it
// will need TensorRT's headers at build time) is to build on this loader.
#pragma once

#include <string>

#include "../common/native_error.h"

namespace trtn::trt {

struct LibraryInfo {
  std::string libraryPath;
  int version = 0;  // getInferLibVersion(): major * 10000 + minor * 100 + patch for TensorRT 10
};

// Opens libnvinfer once per process (thread-safe; never closed). On failure returns false
// with E_TENSORRT_MISSING listing every name tried.
bool FindLibrary(LibraryInfo* out, NativeError* error);

}  // namespace trtn::trt
