// Compiled only by the test suite, never into the addon: proves that the hand-written
// declarations in driver_api.h agree with NVIDIA's cuda.h. cuda.h types CUresult and
// CUdevice_attribute as enums where we use int, so the check is in two steps: cuda.h's exact
// signatures equal ours with those enums substituted, and the enums are int-sized.
#include <cuda.h>

#include <type_traits>

#include "driver_api.h"

namespace c = trtn::cuda;

static_assert(sizeof(CUresult) == sizeof(c::CUresult), "CUresult is int-sized");
static_assert(sizeof(CUdevice_attribute) == sizeof(int), "CUdevice_attribute is int-sized");
static_assert(std::is_same_v<c::CUdevice, CUdevice>, "CUdevice");
static_assert(sizeof(c::CUuuid) == sizeof(CUuuid), "CUuuid");

static_assert(c::kSuccess == CUDA_SUCCESS, "CUDA_SUCCESS");
static_assert(c::kErrorNoDevice == CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE");
static_assert(c::kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
static_assert(c::kAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major");
static_assert(c::kAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor");

static_assert(std::is_same_v<decltype(&cuInit), CUresult (*)(unsigned int)>, "cuInit");
static_assert(std::is_same_v<decltype(&cuDriverGetVersion), CUresult (*)(int*)>, "cuDriverGetVersion");
static_assert(std::is_same_v<decltype(&cuDeviceGetCount), CUresult (*)(int*)>, "cuDeviceGetCount");
static_assert(std::is_same_v<decltype(&cuDeviceGet), CUresult (*)(CUdevice*, int)>, "cuDeviceGet");
static_assert(std::is_same_v<decltype(&cuDeviceGetName), CUresult (*)(char*, int, CUdevice)>, "cuDeviceGetName");
static_assert(std::is_same_v<decltype(&cuDeviceGetUuid_v2), CUresult (*)(CUuuid*, CUdevice)>, "cuDeviceGetUuid_v2");
static_assert(std::is_same_v<decltype(&cuDeviceTotalMem_v2), CUresult (*)(size_t*, CUdevice)>, "cuDeviceTotalMem_v2");
static_assert(std::is_same_v<decltype(&cuDeviceGetAttribute), CUresult (*)(int*, CUdevice_attribute, CUdevice)>,
              "cuDeviceGetAttribute");
static_assert(std::is_same_v<decltype(&cuDeviceGetPCIBusId), CUresult (*)(char*, int, CUdevice)>,
              "cuDeviceGetPCIBusId");
static_assert(std::is_same_v<decltype(&cuGetErrorName), CUresult (*)(CUresult, const char**)>, "cuGetErrorName");
static_assert(std::is_same_v<decltype(&cuGetErrorString), CUresult (*)(CUresult, const char**)>, "cuGetErrorString");

// Our pointer types, with the same substitution, are the same function types.
static_assert(std::is_same_v<c::PFN_cuInit, c::CUresult (*)(unsigned int)>, "ours: cuInit");
static_assert(std::is_same_v<c::PFN_cuDeviceGetAttribute, c::CUresult (*)(int*, int, c::CUdevice)>,
              "ours: cuDeviceGetAttribute");
static_assert(std::is_same_v<c::PFN_cuDeviceTotalMem_v2, c::CUresult (*)(size_t*, c::CUdevice)>,
              "ours: cuDeviceTotalMem_v2");
static_assert(std::is_same_v<c::PFN_cuDeviceGetUuid_v2, c::CUresult (*)(c::CUuuid*, c::CUdevice)>,
              "ours: cuDeviceGetUuid_v2");

int main() { return 0; }
