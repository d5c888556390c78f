// Compiled only by the test suite and on the GPU machine, never into the addon: proves that
// runtime_api.h (the driver entry points of the GPU runtime) agrees with NVIDIA's cuda.h:
// every signature, every constant, and that each name we dlsym is the one cuda.h's macros map
// the plain API name to (the unversioned exports keep old ABIs: gpu-execution.md §0.1).
#include <cuda.h>

#include "../common/signature_check.h"
#include "runtime_api.h"

namespace c = trtn::cuda;
using trtn::check::kSameSignature;

// Our by-value struct stands for cuda.h's (its layout is asserted field by field below).
template <>
struct trtn::check::Norm<c::Memcpy3D> {
  using type = CUDA_MEMCPY3D;
};

// Handle types are cuda.h's own (same struct tags).
static_assert(std::is_same_v<c::CUcontext, CUcontext> && std::is_same_v<c::CUstream, CUstream> &&
                  std::is_same_v<c::CUevent, CUevent> && std::is_same_v<c::CUmodule, CUmodule> &&
                  std::is_same_v<c::CUfunction, CUfunction> && std::is_same_v<c::CUgraph, CUgraph> &&
                  std::is_same_v<c::CUgraphExec, CUgraphExec> && std::is_same_v<c::CUmemoryPool, CUmemoryPool>,
              "handle types");
static_assert(std::is_same_v<c::CUdeviceptr, CUdeviceptr>, "CUdeviceptr");

// Signatures, and that the member name is the symbol we look up.
#define TRTN_CHECK_ENTRY(member, symbol)                                               \
  static_assert(kSameSignature<c::PFN_##member, decltype(&::member)>, #member);      \
  static_assert(std::string_view(#member) == std::string_view(symbol), "symbol " #member);
TRTN_CUDA_RUNTIME_ENTRY_POINTS(TRTN_CHECK_ENTRY)
#undef TRTN_CHECK_ENTRY
static_assert(kSameSignature<c::PFN_cuFuncGetParamInfo, decltype(&::cuFuncGetParamInfo)>, "cuFuncGetParamInfo");
static_assert(kSameSignature<c::PFN_cuCtxGetCurrent, decltype(&::cuCtxGetCurrent)>, "cuCtxGetCurrent");
static_assert(kSameSignature<c::PFN_cuCtxGetDevice, decltype(&::cuCtxGetDevice)>, "cuCtxGetDevice");
static_assert(TRTN_EXPANDED_NAME(cuCtxGetCurrent) == "cuCtxGetCurrent", "cuCtxGetCurrent");
static_assert(TRTN_EXPANDED_NAME(cuCtxGetDevice) == "cuCtxGetDevice", "cuCtxGetDevice");
static_assert(kSameSignature<c::PFN_cuEventElapsedTime, decltype(&::cuEventElapsedTime)>, "cuEventElapsedTime");
static_assert(TRTN_EXPANDED_NAME(cuEventElapsedTime) == "cuEventElapsedTime_v2", "cuEventElapsedTime");

// The plain API names map to the symbols we look up.
static_assert(TRTN_EXPANDED_NAME(cuMemGetInfo) == "cuMemGetInfo_v2", "cuMemGetInfo");
static_assert(TRTN_EXPANDED_NAME(cuStreamDestroy) == "cuStreamDestroy_v2", "cuStreamDestroy");
static_assert(TRTN_EXPANDED_NAME(cuEventDestroy) == "cuEventDestroy_v2", "cuEventDestroy");
static_assert(TRTN_EXPANDED_NAME(cuMemcpyHtoDAsync) == "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync");
static_assert(TRTN_EXPANDED_NAME(cuMemcpyDtoHAsync) == "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync");
static_assert(TRTN_EXPANDED_NAME(cuMemcpyDtoDAsync) == "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync");
static_assert(TRTN_EXPANDED_NAME(cuStreamBeginCapture) == "cuStreamBeginCapture_v2", "cuStreamBeginCapture");
static_assert(TRTN_EXPANDED_NAME(cuGraphInstantiate) == "cuGraphInstantiateWithFlags", "cuGraphInstantiate");
static_assert(TRTN_EXPANDED_NAME(cuDevicePrimaryCtxRetain) == "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
static_assert(TRTN_EXPANDED_NAME(cuCtxSetCurrent) == "cuCtxSetCurrent", "cuCtxSetCurrent");
static_assert(TRTN_EXPANDED_NAME(cuStreamCreate) == "cuStreamCreate", "cuStreamCreate");
static_assert(TRTN_EXPANDED_NAME(cuStreamSynchronize) == "cuStreamSynchronize", "cuStreamSynchronize");
static_assert(TRTN_EXPANDED_NAME(cuEventCreate) == "cuEventCreate", "cuEventCreate");
static_assert(TRTN_EXPANDED_NAME(cuEventRecord) == "cuEventRecord", "cuEventRecord");
static_assert(TRTN_EXPANDED_NAME(cuEventSynchronize) == "cuEventSynchronize", "cuEventSynchronize");
static_assert(TRTN_EXPANDED_NAME(cuMemAllocAsync) == "cuMemAllocAsync", "cuMemAllocAsync");
static_assert(TRTN_EXPANDED_NAME(cuMemFreeAsync) == "cuMemFreeAsync", "cuMemFreeAsync");
static_assert(TRTN_EXPANDED_NAME(cuMemHostAlloc) == "cuMemHostAlloc", "cuMemHostAlloc");
static_assert(TRTN_EXPANDED_NAME(cuMemFreeHost) == "cuMemFreeHost", "cuMemFreeHost");
static_assert(TRTN_EXPANDED_NAME(cuMemsetD8Async) == "cuMemsetD8Async", "cuMemsetD8Async");
static_assert(TRTN_EXPANDED_NAME(cuModuleLoadData) == "cuModuleLoadData", "cuModuleLoadData");
static_assert(TRTN_EXPANDED_NAME(cuLaunchKernel) == "cuLaunchKernel", "cuLaunchKernel");
static_assert(TRTN_EXPANDED_NAME(cuStreamEndCapture) == "cuStreamEndCapture", "cuStreamEndCapture");
static_assert(TRTN_EXPANDED_NAME(cuGraphLaunch) == "cuGraphLaunch", "cuGraphLaunch");

static_assert(TRTN_EXPANDED_NAME(cuEventQuery) == "cuEventQuery", "cuEventQuery");
static_assert(TRTN_EXPANDED_NAME(cuMemcpyPeerAsync) == "cuMemcpyPeerAsync", "cuMemcpyPeerAsync");
static_assert(TRTN_EXPANDED_NAME(cuMemcpy3DAsync) == "cuMemcpy3DAsync_v2", "cuMemcpy3DAsync");

// Memcpy3D is CUDA_MEMCPY3D field for field.
#define TRTN_SAME_FIELD(f) static_assert(offsetof(c::Memcpy3D, f) == offsetof(CUDA_MEMCPY3D, f), "CUDA_MEMCPY3D." #f);
TRTN_SAME_FIELD(srcXInBytes) TRTN_SAME_FIELD(srcY) TRTN_SAME_FIELD(srcZ) TRTN_SAME_FIELD(srcLOD)
TRTN_SAME_FIELD(srcMemoryType) TRTN_SAME_FIELD(srcHost) TRTN_SAME_FIELD(srcDevice) TRTN_SAME_FIELD(srcArray)
TRTN_SAME_FIELD(reserved0) TRTN_SAME_FIELD(srcPitch) TRTN_SAME_FIELD(srcHeight) TRTN_SAME_FIELD(dstXInBytes)
TRTN_SAME_FIELD(dstY) TRTN_SAME_FIELD(dstZ) TRTN_SAME_FIELD(dstLOD) TRTN_SAME_FIELD(dstMemoryType)
TRTN_SAME_FIELD(dstHost) TRTN_SAME_FIELD(dstDevice) TRTN_SAME_FIELD(dstArray) TRTN_SAME_FIELD(reserved1)
TRTN_SAME_FIELD(dstPitch) TRTN_SAME_FIELD(dstHeight) TRTN_SAME_FIELD(WidthInBytes) TRTN_SAME_FIELD(Height)
TRTN_SAME_FIELD(Depth)
#undef TRTN_SAME_FIELD
static_assert(sizeof(c::Memcpy3D) == sizeof(CUDA_MEMCPY3D) && sizeof(CUmemorytype) == sizeof(int), "CUDA_MEMCPY3D size");

// Constants.
static_assert(c::kErrorInvalidValue == CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE");
static_assert(c::kErrorOutOfMemory == CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY");
static_assert(c::kErrorNotReady == CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY");
static_assert(c::kStreamNonBlocking == CU_STREAM_NON_BLOCKING, "CU_STREAM_NON_BLOCKING");
static_assert(c::kEventDisableTiming == CU_EVENT_DISABLE_TIMING, "CU_EVENT_DISABLE_TIMING");
static_assert(c::kEventBlockingSync == CU_EVENT_BLOCKING_SYNC, "CU_EVENT_BLOCKING_SYNC");
static_assert(c::kMemoryTypeDevice == CU_MEMORYTYPE_DEVICE, "CU_MEMORYTYPE_DEVICE");
static_assert(c::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE, "CU_MEMHOSTALLOC_PORTABLE");
static_assert(c::kMemPoolAttrReleaseThreshold == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "release threshold");
static_assert(c::kStreamCaptureModeThreadLocal == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "capture mode");
static_assert(c::kFuncAttrMaxDynamicSharedSize == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic smem");
static_assert(c::kAttrMemoryPoolsSupported == CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "memory pools");
static_assert(sizeof(CUstreamCaptureMode) == sizeof(int) && sizeof(CUmemPool_attribute) == sizeof(int) &&
                  sizeof(CUfunction_attribute) == sizeof(int),
              "enums passed as int are int-sized");

int main() {
  // CU_LAUNCH_PARAM_* are pointer casts, so they are compared at run time by the GPU script.
  return (c::kLaunchParamEnd == reinterpret_cast<uintptr_t>(CU_LAUNCH_PARAM_END) &&
          c::kLaunchParamBufferPointer == reinterpret_cast<uintptr_t>(CU_LAUNCH_PARAM_BUFFER_POINTER) &&
          c::kLaunchParamBufferSize == reinterpret_cast<uintptr_t>(CU_LAUNCH_PARAM_BUFFER_SIZE))
             ? 0
             : 1;
}
