// The CUDA runtime of the addon on top of the driver API: one retained primary context and one
// non-blocking stream per device, device memory from the device's stream-ordered pool, pinned
// staging, and synchronous-to-the-caller copies. Every function here may block on the GPU, so
// callers run it off the JS thread (AsyncWorker), except Free, which only enqueues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "../common/native_error.h"
#include "runtime_api.h"

namespace trtn::cuda {

// Loads the runtime entry points from the driver library (once; E_CUDA_MISSING names absent ones).
const RuntimeApi* LoadRuntime(NativeError* error);

// A pinned host chunk with the event that says when the GPU is done with it.
struct StagingChunk {
  void* host = nullptr;
  CUevent done = nullptr;
};

struct Device {
  int ordinal = 0;
  CUdevice handle = 0;
  CUcontext context = nullptr;  // primary context, retained once and never released (see GetDevice)
  CUstream stream = nullptr;    // copies, allocations and frees of DeviceTensors
  CUmemoryPool pool = nullptr;
  int ccMajor = 0;
  int ccMinor = 0;
  const RuntimeApi* api = nullptr;
  std::mutex stagingMutex;
  std::vector<StagingChunk> staging;  // free chunks of kStagingChunkBytes
  std::vector<uint32_t*> statusWords;  // free pinned words (under stagingMutex), see BorrowStatusWord
};

constexpr size_t kStagingChunkBytes = size_t(16) << 20;

// The device, set up on first use (primary context, stream, pool threshold). Devices are never
// torn down: a static destructor touching CUDA at exit races the driver's own teardown.
Device* GetDevice(int ordinal, NativeError* error);

// Makes the device's primary context current on the calling thread (each worker thread starts
// with none: gpu-execution.md §0.2).
bool MakeCurrent(const Device& device, NativeError* error);

// The ordinal of the device whose context is current on the calling thread (CUDA's current
// device), or -1 when none is (a thread starts with none) or the driver cannot say.
int CurrentOrdinal(const RuntimeApi& api);

bool Check(const Device& device, CUresult result, const char* call, NativeError* error, const std::string& context = "");

bool MemoryInfo(Device& device, size_t* freeBytes, size_t* totalBytes, NativeError* error);
bool SetReleaseThreshold(Device& device, uint64_t bytes, NativeError* error);
bool TrimPool(Device& device, size_t keepBytes, NativeError* error);

// Allocates from the pool on the device stream and waits for it, so that any stream may use the
// memory afterwards. Out of memory (after trimming the pool once) is E_OUT_OF_DEVICE_MEMORY.
bool Allocate(Device& device, size_t bytes, CUdeviceptr* out, NativeError* error);
// Enqueues the free on the device stream; never waits.
void Free(Device& device, CUdeviceptr ptr);
// Allocates from the pool in `stream`'s order, without waiting (the caller's thread enqueues and
// goes on): the memory is usable by work enqueued on `stream` after this call, and by any stream
// once that work is known done. Out of memory is E_OUT_OF_DEVICE_MEMORY, as for Allocate.
bool AllocateOnStream(Device& device, size_t bytes, CUstream stream, CUdeviceptr* out, NativeError* error);

bool AllocatePinned(Device& device, size_t bytes, void** out, NativeError* error);
void FreePinned(Device& device, void* ptr);

// A pinned 4-byte word a run copies its plan's status into (cuMemcpyDtoHAsync into pageable
// memory would wait for the device on the calling thread). Words come from pinned blocks of
// kStatusWordsPerBlock, allocated when the free list is empty and never freed (a device's
// blocks stay as many as the most runs ever in flight at once needed).
bool BorrowStatusWord(Device& device, uint32_t** out, NativeError* error);
void ReturnStatusWord(Device& device, uint32_t* word);
constexpr size_t kStatusWordsPerBlock = 1024;

// Copies and waits. `pinned` says the host range is page-locked (copied directly); otherwise it
// is staged through pinned chunks, double-buffered so memcpy and DMA overlap.
bool CopyHtoD(Device& device, CUdeviceptr dst, const void* src, size_t bytes, bool pinned, NativeError* error);
bool CopyDtoH(Device& device, void* dst, CUdeviceptr src, size_t bytes, bool pinned, NativeError* error);
bool CopyDtoD(Device& device, CUdeviceptr dst, CUdeviceptr src, size_t bytes, NativeError* error);
// A rectangle of one device's memory: `height` rows of `widthBytes`, rows `pitch` bytes apart.
struct Rect {
  CUdeviceptr dst = 0, src = 0;
  size_t dstPitch = 0, srcPitch = 0, widthBytes = 0, height = 0;
};
// A range of one device's memory to set to zero.
struct Fill {
  CUdeviceptr dst = 0;
  size_t bytes = 0;
};
// Zeroes each of `fills`, then copies each of `rects` (one strided copy each, in order, on the
// device stream), and waits once: what a KV cache's slot moves need per step.
bool FillAndCopyRects(Device& device, const std::vector<Fill>& fills, const std::vector<Rect>& rects, NativeError* error);
// Device `src` to device `dst` (cuMemcpyPeerAsync on dst's stream), and waits.
bool CopyPeer(Device& dst, CUdeviceptr dstPtr, Device& src, CUdeviceptr srcPtr, size_t bytes, NativeError* error);
bool Synchronize(Device& device, NativeError* error);

}  // namespace trtn::cuda
