// NVRTC, opened on first use: CUDA C++ source → cubin for one SM architecture. Needs no CUDA
// context, so it runs on any worker thread. The disk cache is TypeScript's (lib/gpu/kernel-cache.ts).
#pragma once

#include <string>
#include <vector>

#include "../common/native_error.h"

namespace trtn::nvrtc {

struct NvrtcInfo {
  std::string libraryPath;
  int major = 0;
  int minor = 0;
};

bool Info(NvrtcInfo* out, NativeError* error);

// Compiles `source` with `--gpu-architecture=sm_<arch>` plus `options`. A compile error is
// E_NVRTC_COMPILE with the compiler's log in the message and in details.log.
bool Compile(const std::string& source, const std::string& name, int arch, const std::vector<std::string>& options,
             std::vector<char>* cubin, std::string* log, NativeError* error);

}  // namespace trtn::nvrtc
