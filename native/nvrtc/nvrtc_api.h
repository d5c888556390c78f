// Our declarations of the NVRTC entry points (nvrtc.h is not included: the addon builds without
// the toolkit). native/nvrtc/check_declarations.cc proves them against the real nvrtc.h.
#pragma once

#include <cstddef>

struct _nvrtcProgram;

namespace trtn::nvrtc {

using nvrtcResult = int;
using nvrtcProgram = ::_nvrtcProgram*;

constexpr nvrtcResult kSuccess = 0;
constexpr nvrtcResult kErrorCompilation = 6;

using PFN_nvrtcGetErrorString = const char* (*)(nvrtcResult result);
using PFN_nvrtcVersion = nvrtcResult (*)(int* major, int* minor);
using PFN_nvrtcCreateProgram = nvrtcResult (*)(nvrtcProgram* program, const char* source, const char* name,
                                               int numHeaders, const char* const* headers,
                                               const char* const* includeNames);
using PFN_nvrtcDestroyProgram = nvrtcResult (*)(nvrtcProgram* program);
using PFN_nvrtcCompileProgram = nvrtcResult (*)(nvrtcProgram program, int numOptions, const char* const* options);
using PFN_nvrtcGetCUBINSize = nvrtcResult (*)(nvrtcProgram program, size_t* size);
using PFN_nvrtcGetCUBIN = nvrtcResult (*)(nvrtcProgram program, char* cubin);
using PFN_nvrtcGetProgramLogSize = nvrtcResult (*)(nvrtcProgram program, size_t* size);
using PFN_nvrtcGetProgramLog = nvrtcResult (*)(nvrtcProgram program, char* log);

#define TRTN_NVRTC_ENTRY_POINTS(X) \
  X(nvrtcGetErrorString)           \
  X(nvrtcVersion)                  \
  X(nvrtcCreateProgram)            \
  X(nvrtcDestroyProgram)           \
  X(nvrtcCompileProgram)           \
  X(nvrtcGetCUBINSize)             \
  X(nvrtcGetCUBIN)                 \
  X(nvrtcGetProgramLogSize)        \
  X(nvrtcGetProgramLog)

struct NvrtcApi {
#define TRTN_MEMBER(name) PFN_##name name = nullptr;
  TRTN_NVRTC_ENTRY_POINTS(TRTN_MEMBER)
#undef TRTN_MEMBER
};

}  // namespace trtn::nvrtc
