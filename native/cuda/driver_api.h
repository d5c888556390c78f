// Our own declarations of the few CUDA driver API entry points the addon uses. cuda.h is
// deliberately not included: the addon must build and load without the CUDA toolkit, and it
// resolves these functions from libcuda at run time. test/native/cuda-declarations.test.ts
// compiles native/cuda/check_declarations.cc against the real cuda.h to prove they match.
#pragma once

#include <cstddef>

#ifdef _WIN32
#define TRTN_CUDAAPI __stdcall
#else
#define TRTN_CUDAAPI
#endif

namespace trtn::cuda {

using CUresult = int;
using CUdevice = int;

struct CUuuid {
  char bytes[16];
};

// CUresult values the addon treats specially.
constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorNoDevice = 100;

// CUdevice_attribute values.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

using PFN_cuInit = CUresult(TRTN_CUDAAPI*)(unsigned int flags);
using PFN_cuDriverGetVersion = CUresult(TRTN_CUDAAPI*)(int* version);
using PFN_cuDeviceGetCount = CUresult(TRTN_CUDAAPI*)(int* count);
using PFN_cuDeviceGet = CUresult(TRTN_CUDAAPI*)(CUdevice* device, int ordinal);
using PFN_cuDeviceGetName = CUresult(TRTN_CUDAAPI*)(char* name, int length, CUdevice device);
using PFN_cuDeviceGetUuid_v2 = CUresult(TRTN_CUDAAPI*)(CUuuid* uuid, CUdevice device);
using PFN_cuDeviceTotalMem_v2 = CUresult(TRTN_CUDAAPI*)(size_t* bytes, CUdevice device);
using PFN_cuDeviceGetAttribute = CUresult(TRTN_CUDAAPI*)(int* value, int attribute, CUdevice device);
using PFN_cuDeviceGetPCIBusId = CUresult(TRTN_CUDAAPI*)(char* busId, int length, CUdevice device);
using PFN_cuGetErrorName = CUresult(TRTN_CUDAAPI*)(CUresult error, const char** name);
using PFN_cuGetErrorString = CUresult(TRTN_CUDAAPI*)(CUresult error, const char** text);

// The resolved entry points. Every member is non-null once the driver has loaded.
struct DriverApi {
  PFN_cuInit cuInit = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetName cuDeviceGetName = nullptr;
  PFN_cuDeviceGetUuid_v2 cuDeviceGetUuid_v2 = nullptr;
  PFN_cuDeviceTotalMem_v2 cuDeviceTotalMem_v2 = nullptr;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceGetPCIBusId cuDeviceGetPCIBusId = nullptr;
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;
};

}  // namespace trtn::cuda
