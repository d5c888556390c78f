#include "runtime.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "../common/dynlib.h"
#include "driver.h"

namespace trtn::cuda {

namespace {

struct RuntimeState {
  RuntimeApi api;
  NativeError error;
};

RuntimeState* LoadState() {
  auto* state = new RuntimeState();  // never freed: see GetDevice
  std::string path;
  if (LoadDriver(&path, &state->error) == nullptr) return state;
  // Opening the same file again returns the handle the driver loader already holds.
  std::vector<std::string> failures;
  OpenedLibrary lib = OpenFirstLibrary({path}, &failures);
  if (lib.handle == nullptr) {
    state->error = NativeError{"E_CUDA_MISSING", "The CUDA driver library " + path + " could not be reopened: " +
                                                     (failures.empty() ? std::string("unknown") : failures[0]),
                               {{"library", path}}, {}, {{"tried", failures}}};
    return state;
  }
  std::vector<std::string> missing;
  RuntimeApi& api = state->api;
#define TRTN_RESOLVE(member, symbol)                                             \
  api.member = reinterpret_cast<PFN_##member>(FindSymbol(lib.handle, symbol)); \
  if (api.member == nullptr) missing.push_back(symbol);
  TRTN_CUDA_RUNTIME_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
  api.cuFuncGetParamInfo = reinterpret_cast<PFN_cuFuncGetParamInfo>(FindSymbol(lib.handle, "cuFuncGetParamInfo"));
  api.cuCtxGetCurrent = reinterpret_cast<PFN_cuCtxGetCurrent>(FindSymbol(lib.handle, "cuCtxGetCurrent"));
  api.cuCtxGetDevice = reinterpret_cast<PFN_cuCtxGetDevice>(FindSymbol(lib.handle, "cuCtxGetDevice"));
  api.cuEventElapsedTime = reinterpret_cast<PFN_cuEventElapsedTime>(FindSymbol(lib.handle, "cuEventElapsedTime_v2"));
  if (api.cuEventElapsedTime == nullptr) {
    api.cuEventElapsedTime = reinterpret_cast<PFN_cuEventElapsedTime>(FindSymbol(lib.handle, "cuEventElapsedTime"));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& name : missing) list += (list.empty() ? "" : ", ") + name;
    state->error = NativeError{"E_CUDA_MISSING",
                               "The CUDA driver library " + path + " lacks " + list +
                                   ", which device memory and kernel launches need (CUDA 12.0 or newer). "
                                   "Update the NVIDIA driver.",
                               {{"library", path}}, {}, {{"missingSymbols", missing}}};
  }
  return state;
}

const DriverApi* Driver() { return LoadDriver(nullptr, nullptr); }

}  // namespace

const RuntimeApi* LoadRuntime(NativeError* error) {
  static std::once_flag once;
  static RuntimeState* state = nullptr;
  std::call_once(once, [] { state = LoadState(); });
  if (!state->error.ok()) {
    if (error != nullptr) *error = state->error;
    return nullptr;
  }
  return &state->api;
}

bool Check(const Device& device, CUresult result, const char* call, NativeError* error, const std::string& context) {
  if (result == kSuccess) return true;
  std::string where = "on device " + std::to_string(device.ordinal);
  *error = CallFailed(*Driver(), call, result, context.empty() ? where : context + " " + where);
  error->numbers["device"] = device.ordinal;
  return false;
}

static bool SetUp(Device* device, NativeError* error) {
  const DriverApi* driver = LoadDriver(nullptr, error);
  const RuntimeApi* api = LoadRuntime(error);
  if (driver == nullptr || api == nullptr) return false;
  device->api = api;
  if (!Check(*device, driver->cuInit(0), "cuInit", error)) return false;
  int count = 0;
  if (!Check(*device, driver->cuDeviceGetCount(&count), "cuDeviceGetCount", error)) return false;
  if (device->ordinal < 0 || device->ordinal >= count) {
    *error = NativeError{"E_INVALID_ARGUMENT",
                         "There is no CUDA device " + std::to_string(device->ordinal) + ": this process sees " +
                             std::to_string(count) + " (ordinals 0.." + std::to_string(count - 1) +
                             ", after CUDA_VISIBLE_DEVICES).",
                         {}, {{"device", device->ordinal}, {"deviceCount", count}}, {}};
    return false;
  }
  if (!Check(*device, driver->cuDeviceGet(&device->handle, device->ordinal), "cuDeviceGet", error)) return false;
  driver->cuDeviceGetAttribute(&device->ccMajor, kAttrComputeCapabilityMajor, device->handle);
  driver->cuDeviceGetAttribute(&device->ccMinor, kAttrComputeCapabilityMinor, device->handle);
  int pools = 0;
  driver->cuDeviceGetAttribute(&pools, kAttrMemoryPoolsSupported, device->handle);
  if (pools == 0) {
    *error = NativeError{"E_CUDA",
                         "CUDA device " + std::to_string(device->ordinal) +
                             " does not support stream-ordered memory pools (cuMemAllocAsync), which tensorrt-node's "
                             "GPU runtime needs.",
                         {}, {{"device", device->ordinal}}, {}};
    return false;
  }
  if (!Check(*device, api->cuDevicePrimaryCtxRetain(&device->context, device->handle), "cuDevicePrimaryCtxRetain",
             error)) {
    return false;
  }
  if (!MakeCurrent(*device, error)) return false;
  if (!Check(*device, api->cuStreamCreate(&device->stream, kStreamNonBlocking), "cuStreamCreate", error)) return false;
  if (!Check(*device, api->cuDeviceGetDefaultMemPool(&device->pool, device->handle), "cuDeviceGetDefaultMemPool",
             error)) {
    return false;
  }
  // The default threshold (0) hands memory back to the OS at every synchronize, which makes each
  // allocation after a copy a fresh mapping. Keep up to 1 GiB unless told otherwise.
  uint64_t threshold = uint64_t(1) << 30;
  std::string fromEnv = GetEnv("TENSORRT_NODE_POOL_RELEASE_THRESHOLD");
  if (!fromEnv.empty()) threshold = std::strtoull(fromEnv.c_str(), nullptr, 10);
  return SetReleaseThreshold(*device, threshold, error);
}

Device* GetDevice(int ordinal, NativeError* error) {
  static std::mutex mutex;
  static auto* devices = new std::map<int, Device*>();  // leaked: no CUDA in static destructors
  std::lock_guard<std::mutex> lock(mutex);
  auto found = devices->find(ordinal);
  if (found != devices->end()) return found->second;
  auto* device = new Device();
  device->ordinal = ordinal;
  if (!SetUp(device, error)) {
    // Nothing retained is released here: a failed set-up retains at most the primary context,
    // which the next attempt reuses (retain is reference counted per process).
    delete device;
    return nullptr;
  }
  (*devices)[ordinal] = device;
  return device;
}

int CurrentOrdinal(const RuntimeApi& api) {
  if (api.cuCtxGetCurrent == nullptr || api.cuCtxGetDevice == nullptr) return -1;
  CUcontext context = nullptr;
  if (api.cuCtxGetCurrent(&context) != kSuccess || context == nullptr) return -1;
  CUdevice handle = 0;
  if (api.cuCtxGetDevice(&handle) != kSuccess) return -1;
  // A CUdevice is a handle, not an ordinal: find the ordinal cuDeviceGet maps to it.
  const DriverApi* driver = Driver();
  int count = 0;
  if (driver == nullptr || driver->cuDeviceGetCount(&count) != kSuccess) return -1;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice candidate = 0;
    if (driver->cuDeviceGet(&candidate, ordinal) == kSuccess && candidate == handle) return ordinal;
  }
  return -1;
}

bool MakeCurrent(const Device& device, NativeError* error) {
  return Check(device, device.api->cuCtxSetCurrent(device.context), "cuCtxSetCurrent", error);
}

bool MemoryInfo(Device& device, size_t* freeBytes, size_t* totalBytes, NativeError* error) {
  if (!MakeCurrent(device, error)) return false;
  return Check(device, device.api->cuMemGetInfo_v2(freeBytes, totalBytes), "cuMemGetInfo_v2", error);
}

bool SetReleaseThreshold(Device& device, uint64_t bytes, NativeError* error) {
  uint64_t value = bytes;
  return Check(device, device.api->cuMemPoolSetAttribute(device.pool, kMemPoolAttrReleaseThreshold, &value),
               "cuMemPoolSetAttribute", error, "(release threshold " + std::to_string(bytes) + ")");
}

bool TrimPool(Device& device, size_t keepBytes, NativeError* error) {
  if (!MakeCurrent(device, error)) return false;
  if (!Check(device, device.api->cuStreamSynchronize(device.stream), "cuStreamSynchronize", error)) return false;
  return Check(device, device.api->cuMemPoolTrimTo(device.pool, keepBytes), "cuMemPoolTrimTo", error);
}

static NativeError OutOfMemory(Device& device, size_t bytes) {
  size_t freeBytes = 0, totalBytes = 0;
  device.api->cuMemGetInfo_v2(&freeBytes, &totalBytes);
  auto mib = [](size_t b) { return std::to_string((b + (size_t(1) << 19)) >> 20) + " MiB"; };
  return NativeError{"E_OUT_OF_DEVICE_MEMORY",
                     "Out of device memory on CUDA device " + std::to_string(device.ordinal) + ": requested " +
                         std::to_string(bytes) + " bytes (" + mib(bytes) + "), " + std::to_string(freeBytes) +
                         " bytes (" + mib(freeBytes) + ") free of " + mib(totalBytes) +
                         ". Dispose DeviceTensors that are no longer needed, or use smaller batches.",
                     {{"call", "cuMemAllocAsync"}},
                     {{"device", device.ordinal},
                      {"requestedBytes", double(bytes)},
                      {"freeBytes", double(freeBytes)},
                      {"totalBytes", double(totalBytes)}},
                     {}};
}

bool Allocate(Device& device, size_t bytes, CUdeviceptr* out, NativeError* error) {
  *out = 0;
  if (bytes == 0) return true;
  if (!MakeCurrent(device, error)) return false;
  const RuntimeApi& api = *device.api;
  CUresult result = api.cuMemAllocAsync(out, bytes, device.stream);
  if (result == kErrorOutOfMemory) {
    // Memory the pool keeps (below the release threshold) is free to us but not to the pool's
    // other users; give it back and try once more before calling it out of memory.
    api.cuStreamSynchronize(device.stream);
    api.cuMemPoolTrimTo(device.pool, 0);
    result = api.cuMemAllocAsync(out, bytes, device.stream);
  }
  if (result != kSuccess) {
    // Sizes beyond what the device could ever hold come back as INVALID_VALUE, not OUT_OF_MEMORY.
    size_t freeBytes = 0, totalBytes = 0;
    api.cuMemGetInfo_v2(&freeBytes, &totalBytes);
    if (result == kErrorOutOfMemory || bytes > freeBytes) {
      *error = OutOfMemory(device, bytes);
      return false;
    }
  }
  if (!Check(device, result, "cuMemAllocAsync", error, "(" + std::to_string(bytes) + " bytes)")) return false;
  if (!Check(device, api.cuStreamSynchronize(device.stream), "cuStreamSynchronize", error)) {
    api.cuMemFreeAsync(*out, device.stream);
    return false;
  }
  return true;
}

bool AllocateOnStream(Device& device, size_t bytes, CUstream stream, CUdeviceptr* out, NativeError* error) {
  *out = 0;
  if (bytes == 0) return true;
  if (!MakeCurrent(device, error)) return false;
  const RuntimeApi& api = *device.api;
  CUresult result = api.cuMemAllocAsync(out, bytes, stream);
  if (result == kErrorOutOfMemory) {
    // As in Allocate: memory the pool keeps for reuse goes back to the device first (frees are
    // enqueued on the device stream, so that stream is waited for), then once more.
    api.cuStreamSynchronize(device.stream);
    api.cuMemPoolTrimTo(device.pool, 0);
    result = api.cuMemAllocAsync(out, bytes, stream);
  }
  if (result != kSuccess) {
    size_t freeBytes = 0, totalBytes = 0;
    api.cuMemGetInfo_v2(&freeBytes, &totalBytes);
    if (result == kErrorOutOfMemory || bytes > freeBytes) {
      *error = OutOfMemory(device, bytes);
      return false;
    }
  }
  return Check(device, result, "cuMemAllocAsync", error, "(" + std::to_string(bytes) + " bytes)");
}

void Free(Device& device, CUdeviceptr ptr) {
  if (ptr == 0) return;
  NativeError ignored;
  if (!MakeCurrent(device, &ignored)) return;
  device.api->cuMemFreeAsync(ptr, device.stream);
}

bool AllocatePinned(Device& device, size_t bytes, void** out, NativeError* error) {
  if (!MakeCurrent(device, error)) return false;
  CUresult result = device.api->cuMemHostAlloc(out, bytes == 0 ? 1 : bytes, kMemHostAllocPortable);
  return Check(device, result, "cuMemHostAlloc", error, "(" + std::to_string(bytes) + " bytes of pinned host memory)");
}

void FreePinned(Device& device, void* ptr) {
  NativeError ignored;
  if (ptr != nullptr && MakeCurrent(device, &ignored)) device.api->cuMemFreeHost(ptr);
}

bool BorrowStatusWord(Device& device, uint32_t** out, NativeError* error) {
  std::lock_guard<std::mutex> lock(device.stagingMutex);
  if (device.statusWords.empty()) {
    void* block = nullptr;
    if (!AllocatePinned(device, kStatusWordsPerBlock * sizeof(uint32_t), &block, error)) return false;
    auto* words = static_cast<uint32_t*>(block);
    for (size_t i = 0; i < kStatusWordsPerBlock; ++i) device.statusWords.push_back(words + i);
  }
  *out = device.statusWords.back();
  device.statusWords.pop_back();
  **out = 0;
  return true;
}

void ReturnStatusWord(Device& device, uint32_t* word) {
  if (word == nullptr) return;
  std::lock_guard<std::mutex> lock(device.stagingMutex);
  device.statusWords.push_back(word);
}

namespace {

// Two pinned chunks borrowed from the device's free list for one copy.
class StagingPair {
 public:
  explicit StagingPair(Device& device) : device_(device) {}
  ~StagingPair() {
    std::lock_guard<std::mutex> lock(device_.stagingMutex);
    for (auto& chunk : chunks_) device_.staging.push_back(chunk);
  }
  bool Acquire(NativeError* error) {
    {
      std::lock_guard<std::mutex> lock(device_.stagingMutex);
      while (chunks_.size() < 2 && !device_.staging.empty()) {
        chunks_.push_back(device_.staging.back());
        device_.staging.pop_back();
      }
    }
    while (chunks_.size() < 2) {
      StagingChunk chunk;
      if (!AllocatePinned(device_, kStagingChunkBytes, &chunk.host, error)) return false;
      if (!Check(device_, device_.api->cuEventCreate(&chunk.done, kEventDisableTiming), "cuEventCreate", error)) {
        FreePinned(device_, chunk.host);
        return false;
      }
      chunks_.push_back(chunk);
    }
    return true;
  }
  StagingChunk& operator[](size_t i) { return chunks_[i % 2]; }

 private:
  Device& device_;
  std::vector<StagingChunk> chunks_;
};

}  // namespace

bool Synchronize(Device& device, NativeError* error) {
  return Check(device, device.api->cuStreamSynchronize(device.stream), "cuStreamSynchronize", error);
}

bool CopyHtoD(Device& device, CUdeviceptr dst, const void* src, size_t bytes, bool pinned, NativeError* error) {
  if (bytes == 0) return true;
  if (!MakeCurrent(device, error)) return false;
  const RuntimeApi& api = *device.api;
  if (pinned) {
    if (!Check(device, api.cuMemcpyHtoDAsync_v2(dst, src, bytes, device.stream), "cuMemcpyHtoDAsync_v2", error)) {
      return false;
    }
    return Synchronize(device, error);
  }
  StagingPair staging(device);
  if (!staging.Acquire(error)) return false;
  const auto* from = static_cast<const unsigned char*>(src);
  size_t index = 0;
  for (size_t offset = 0; offset < bytes; offset += kStagingChunkBytes, ++index) {
    size_t n = std::min(kStagingChunkBytes, bytes - offset);
    StagingChunk& chunk = staging[index];
    // The chunk's previous copy (two chunks ago) must have left it before we overwrite it.
    if (index >= 2 && !Check(device, api.cuEventSynchronize(chunk.done), "cuEventSynchronize", error)) return false;
    std::memcpy(chunk.host, from + offset, n);
    if (!Check(device, api.cuMemcpyHtoDAsync_v2(dst + offset, chunk.host, n, device.stream), "cuMemcpyHtoDAsync_v2",
               error) ||
        !Check(device, api.cuEventRecord(chunk.done, device.stream), "cuEventRecord", error)) {
      Synchronize(device, error);
      return false;
    }
  }
  return Synchronize(device, error);
}

bool CopyDtoH(Device& device, void* dst, CUdeviceptr src, size_t bytes, bool pinned, NativeError* error) {
  if (bytes == 0) return true;
  if (!MakeCurrent(device, error)) return false;
  const RuntimeApi& api = *device.api;
  if (pinned) {
    if (!Check(device, api.cuMemcpyDtoHAsync_v2(dst, src, bytes, device.stream), "cuMemcpyDtoHAsync_v2", error)) {
      return false;
    }
    return Synchronize(device, error);
  }
  StagingPair staging(device);
  if (!staging.Acquire(error)) return false;
  auto* to = static_cast<unsigned char*>(dst);
  size_t chunks = (bytes + kStagingChunkBytes - 1) / kStagingChunkBytes;
  auto drain = [&](size_t index) {
    StagingChunk& chunk = staging[index];
    if (!Check(device, api.cuEventSynchronize(chunk.done), "cuEventSynchronize", error)) return false;
    size_t offset = index * kStagingChunkBytes;
    std::memcpy(to + offset, chunk.host, std::min(kStagingChunkBytes, bytes - offset));
    return true;
  };
  for (size_t index = 0; index < chunks; ++index) {
    // Empty the chunk this copy reuses before enqueueing into it; the other one keeps the DMA busy.
    if (index >= 2 && !drain(index - 2)) return false;
    size_t offset = index * kStagingChunkBytes;
    size_t n = std::min(kStagingChunkBytes, bytes - offset);
    StagingChunk& chunk = staging[index];
    if (!Check(device, api.cuMemcpyDtoHAsync_v2(chunk.host, src + offset, n, device.stream), "cuMemcpyDtoHAsync_v2",
               error) ||
        !Check(device, api.cuEventRecord(chunk.done, device.stream), "cuEventRecord", error)) {
      Synchronize(device, error);
      return false;
    }
  }
  for (size_t index = chunks >= 2 ? chunks - 2 : 0; index < chunks; ++index) {
    if (!drain(index)) return false;
  }
  return true;
}

bool CopyDtoD(Device& device, CUdeviceptr dst, CUdeviceptr src, size_t bytes, NativeError* error) {
  if (bytes == 0) return true;
  if (!MakeCurrent(device, error)) return false;
  if (!Check(device, device.api->cuMemcpyDtoDAsync_v2(dst, src, bytes, device.stream), "cuMemcpyDtoDAsync_v2",
             error)) {
    return false;
  }
  return Synchronize(device, error);
}

bool FillAndCopyRects(Device& device, const std::vector<Fill>& fills, const std::vector<Rect>& rects, NativeError* error) {
  if (fills.empty() && rects.empty()) return true;
  if (!MakeCurrent(device, error)) return false;
  for (const Fill& fill : fills) {
    if (fill.bytes == 0) continue;
    if (!Check(device, device.api->cuMemsetD8Async(fill.dst, 0, fill.bytes, device.stream), "cuMemsetD8Async", error)) return false;
  }
  for (const Rect& rect : rects) {
    if (rect.widthBytes == 0 || rect.height == 0) continue;
    Memcpy3D copy{};
    copy.srcMemoryType = kMemoryTypeDevice;
    copy.srcDevice = rect.src;
    copy.srcPitch = rect.srcPitch;
    copy.srcHeight = rect.height;
    copy.dstMemoryType = kMemoryTypeDevice;
    copy.dstDevice = rect.dst;
    copy.dstPitch = rect.dstPitch;
    copy.dstHeight = rect.height;
    copy.WidthInBytes = rect.widthBytes;
    copy.Height = rect.height;
    copy.Depth = 1;
    if (!Check(device, device.api->cuMemcpy3DAsync_v2(&copy, device.stream), "cuMemcpy3DAsync_v2", error,
               "(" + std::to_string(rect.height) + " rows of " + std::to_string(rect.widthBytes) + " bytes)")) {
      return false;
    }
  }
  return Synchronize(device, error);
}

bool CopyPeer(Device& dst, CUdeviceptr dstPtr, Device& src, CUdeviceptr srcPtr, size_t bytes, NativeError* error) {
  if (bytes == 0) return true;
  if (!MakeCurrent(dst, error)) return false;
  CUresult result = dst.api->cuMemcpyPeerAsync(dstPtr, dst.context, srcPtr, src.context, bytes, dst.stream);
  if (!Check(dst, result, "cuMemcpyPeerAsync", error,
             "(" + std::to_string(bytes) + " bytes from device " + std::to_string(src.ordinal) + ")")) {
    return false;
  }
  return Synchronize(dst, error);
}

}  // namespace trtn::cuda
