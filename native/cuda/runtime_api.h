// Our declarations of the driver entry points the GPU runtime uses (memory, streams, events,
// modules, launches, graphs). Like driver_api.h, cuda.h is not included: the addon builds and
// loads without the toolkit. native/cuda/check_runtime_declarations.cc proves on a machine with
// cuda.h that these signatures, constants and the versioned symbol names match it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "driver_api.h"

// The same opaque struct tags cuda.h uses, so our handle types are cuda.h's handle types.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUmemPoolHandle_st;
struct CUarray_st;

namespace trtn::cuda {

using CUcontext = ::CUctx_st*;
using CUstream = ::CUstream_st*;
using CUevent = ::CUevent_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUgraph = ::CUgraph_st*;
using CUgraphExec = ::CUgraphExec_st*;
using CUmemoryPool = ::CUmemPoolHandle_st*;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit platforms

constexpr CUresult kErrorInvalidValue = 1;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNotReady = 600;

constexpr unsigned kStreamNonBlocking = 1;            // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventBlockingSync = 1;            // CU_EVENT_BLOCKING_SYNC
constexpr unsigned kEventDisableTiming = 2;           // CU_EVENT_DISABLE_TIMING
constexpr int kMemoryTypeDevice = 2;                  // CU_MEMORYTYPE_DEVICE
constexpr unsigned kMemHostAllocPortable = 1;         // CU_MEMHOSTALLOC_PORTABLE
constexpr int kMemPoolAttrReleaseThreshold = 4;       // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
constexpr int kStreamCaptureModeThreadLocal = 1;      // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr int kFuncAttrMaxDynamicSharedSize = 8;      // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kAttrMemoryPoolsSupported = 115;        // CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED
// cuLaunchKernel's `extra` markers (CU_LAUNCH_PARAM_*).
constexpr uintptr_t kLaunchParamEnd = 0;
constexpr uintptr_t kLaunchParamBufferPointer = 1;
constexpr uintptr_t kLaunchParamBufferSize = 2;

// CUDA_MEMCPY3D (the _v2 layout cuMemcpy3DAsync_v2 takes): a strided 3-D box copy.
struct Memcpy3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  ::CUarray_st* srcArray;
  void* reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  ::CUarray_st* dstArray;
  void* reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};

using PFN_cuDevicePrimaryCtxRetain = CUresult(TRTN_CUDAAPI*)(CUcontext* ctx, CUdevice device);
using PFN_cuCtxSetCurrent = CUresult(TRTN_CUDAAPI*)(CUcontext ctx);
using PFN_cuCtxGetCurrent = CUresult(TRTN_CUDAAPI*)(CUcontext* ctx);
using PFN_cuCtxGetDevice = CUresult(TRTN_CUDAAPI*)(CUdevice* device);
using PFN_cuMemGetInfo_v2 = CUresult(TRTN_CUDAAPI*)(size_t* free, size_t* total);
using PFN_cuStreamCreate = CUresult(TRTN_CUDAAPI*)(CUstream* stream, unsigned int flags);
using PFN_cuStreamDestroy_v2 = CUresult(TRTN_CUDAAPI*)(CUstream stream);
using PFN_cuStreamSynchronize = CUresult(TRTN_CUDAAPI*)(CUstream stream);
using PFN_cuEventCreate = CUresult(TRTN_CUDAAPI*)(CUevent* event, unsigned int flags);
using PFN_cuEventDestroy_v2 = CUresult(TRTN_CUDAAPI*)(CUevent event);
using PFN_cuEventRecord = CUresult(TRTN_CUDAAPI*)(CUevent event, CUstream stream);
using PFN_cuEventSynchronize = CUresult(TRTN_CUDAAPI*)(CUevent event);
using PFN_cuEventQuery = CUresult(TRTN_CUDAAPI*)(CUevent event);
using PFN_cuEventElapsedTime = CUresult(TRTN_CUDAAPI*)(float* milliseconds, CUevent start, CUevent end);
using PFN_cuMemAllocAsync = CUresult(TRTN_CUDAAPI*)(CUdeviceptr* ptr, size_t bytes, CUstream stream);
using PFN_cuMemFreeAsync = CUresult(TRTN_CUDAAPI*)(CUdeviceptr ptr, CUstream stream);
using PFN_cuDeviceGetDefaultMemPool = CUresult(TRTN_CUDAAPI*)(CUmemoryPool* pool, CUdevice device);
using PFN_cuMemPoolSetAttribute = CUresult(TRTN_CUDAAPI*)(CUmemoryPool pool, int attribute, void* value);
using PFN_cuMemPoolTrimTo = CUresult(TRTN_CUDAAPI*)(CUmemoryPool pool, size_t keep);
using PFN_cuMemHostAlloc = CUresult(TRTN_CUDAAPI*)(void** ptr, size_t bytes, unsigned int flags);
using PFN_cuMemFreeHost = CUresult(TRTN_CUDAAPI*)(void* ptr);
using PFN_cuMemcpyHtoDAsync_v2 = CUresult(TRTN_CUDAAPI*)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoHAsync_v2 = CUresult(TRTN_CUDAAPI*)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoDAsync_v2 = CUresult(TRTN_CUDAAPI*)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
using PFN_cuMemcpyPeerAsync = CUresult(TRTN_CUDAAPI*)(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src,
                                                       CUcontext srcContext, size_t bytes, CUstream stream);
using PFN_cuMemcpy3DAsync_v2 = CUresult(TRTN_CUDAAPI*)(const Memcpy3D* copy, CUstream stream);
using PFN_cuMemsetD8Async = CUresult(TRTN_CUDAAPI*)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
using PFN_cuModuleLoadData = CUresult(TRTN_CUDAAPI*)(CUmodule* module, const void* image);
using PFN_cuModuleUnload = CUresult(TRTN_CUDAAPI*)(CUmodule module);
using PFN_cuModuleGetFunction = CUresult(TRTN_CUDAAPI*)(CUfunction* function, CUmodule module, const char* name);
using PFN_cuFuncSetAttribute = CUresult(TRTN_CUDAAPI*)(CUfunction function, int attribute, int value);
using PFN_cuFuncGetParamInfo = CUresult(TRTN_CUDAAPI*)(CUfunction function, size_t index, size_t* offset, size_t* size);
using PFN_cuLaunchKernel = CUresult(TRTN_CUDAAPI*)(CUfunction f, unsigned int gridX, unsigned int gridY,
                                                   unsigned int gridZ, unsigned int blockX, unsigned int blockY,
                                                   unsigned int blockZ, unsigned int sharedMemBytes, CUstream stream,
                                                   void** kernelParams, void** extra);
using PFN_cuStreamBeginCapture_v2 = CUresult(TRTN_CUDAAPI*)(CUstream stream, int mode);
using PFN_cuStreamEndCapture = CUresult(TRTN_CUDAAPI*)(CUstream stream, CUgraph* graph);
using PFN_cuGraphInstantiateWithFlags = CUresult(TRTN_CUDAAPI*)(CUgraphExec* exec, CUgraph graph,
                                                                unsigned long long flags);
using PFN_cuGraphLaunch = CUresult(TRTN_CUDAAPI*)(CUgraphExec exec, CUstream stream);
using PFN_cuGraphDestroy = CUresult(TRTN_CUDAAPI*)(CUgraph graph);
using PFN_cuGraphExecDestroy = CUresult(TRTN_CUDAAPI*)(CUgraphExec exec);

// X-macro of (member, symbol looked up with dlsym). The symbol is the name cuda.h's macros map
// the plain API name to (reference: gpu-execution.md §1.3); the check file asserts each one.
#define TRTN_CUDA_RUNTIME_ENTRY_POINTS(X)                         \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")         \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                           \
  X(cuMemGetInfo_v2, "cuMemGetInfo_v2")                           \
  X(cuStreamCreate, "cuStreamCreate")                             \
  X(cuStreamDestroy_v2, "cuStreamDestroy_v2")                     \
  X(cuStreamSynchronize, "cuStreamSynchronize")                   \
  X(cuEventCreate, "cuEventCreate")                               \
  X(cuEventDestroy_v2, "cuEventDestroy_v2")                       \
  X(cuEventRecord, "cuEventRecord")                               \
  X(cuEventSynchronize, "cuEventSynchronize")                     \
  X(cuEventQuery, "cuEventQuery")                                 \
  X(cuMemAllocAsync, "cuMemAllocAsync")                           \
  X(cuMemFreeAsync, "cuMemFreeAsync")                             \
  X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool")       \
  X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute")               \
  X(cuMemPoolTrimTo, "cuMemPoolTrimTo")                           \
  X(cuMemHostAlloc, "cuMemHostAlloc")                             \
  X(cuMemFreeHost, "cuMemFreeHost")                               \
  X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2")                 \
  X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2")                 \
  X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2")                 \
  X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync")                       \
  X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync_v2")                     \
  X(cuMemsetD8Async, "cuMemsetD8Async")                           \
  X(cuModuleLoadData, "cuModuleLoadData")                         \
  X(cuModuleUnload, "cuModuleUnload")                             \
  X(cuModuleGetFunction, "cuModuleGetFunction")                   \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                     \
  X(cuLaunchKernel, "cuLaunchKernel")                             \
  X(cuStreamBeginCapture_v2, "cuStreamBeginCapture_v2")           \
  X(cuStreamEndCapture, "cuStreamEndCapture")                     \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")   \
  X(cuGraphLaunch, "cuGraphLaunch")                               \
  X(cuGraphDestroy, "cuGraphDestroy")                             \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")

struct RuntimeApi {
#define TRTN_MEMBER(member, symbol) PFN_##member member = nullptr;
  TRTN_CUDA_RUNTIME_ENTRY_POINTS(TRTN_MEMBER)
#undef TRTN_MEMBER
  // Optional (driver >= 12.4): lets plans check a kernel's parameter layout before launching.
  PFN_cuFuncGetParamInfo cuFuncGetParamInfo = nullptr;
  // Optional (every real driver has them; test doubles may not): which device's context is
  // current on the calling thread, i.e. CUDA's "current device".
  PFN_cuCtxGetCurrent cuCtxGetCurrent = nullptr;
  PFN_cuCtxGetDevice cuCtxGetDevice = nullptr;
  // Optional: cuEventElapsedTime_v2 (CUDA 12.8+; what cuda.h 13 maps the name to), else the
  // original symbol. Without either, plans keep cuBLASLt's first-ranked algorithm untimed.
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
};

}  // namespace trtn::cuda
