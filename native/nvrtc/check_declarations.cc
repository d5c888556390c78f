// Compiled only by the test suite and on the GPU machine: proves nvrtc_api.h agrees with nvrtc.h.
#include <nvrtc.h>

#include "../common/signature_check.h"
#include "nvrtc_api.h"

namespace n = trtn::nvrtc;
using trtn::check::kSameSignature;

static_assert(std::is_same_v<n::nvrtcProgram, nvrtcProgram>, "nvrtcProgram");
static_assert(sizeof(nvrtcResult) == sizeof(int), "nvrtcResult is int-sized");
static_assert(n::kSuccess == NVRTC_SUCCESS, "NVRTC_SUCCESS");
static_assert(n::kErrorCompilation == NVRTC_ERROR_COMPILATION, "NVRTC_ERROR_COMPILATION");

#define TRTN_CHECK_ENTRY(name) static_assert(kSameSignature<n::PFN_##name, decltype(&::name)>, #name);
TRTN_NVRTC_ENTRY_POINTS(TRTN_CHECK_ENTRY)
#undef TRTN_CHECK_ENTRY

int main() { return 0; }
