#include "nccl.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "../common/dynlib.h"
#include "../common/nvidia_library.h"
#include "../cuda/driver.h"

namespace trtn::nccl {

namespace {

using Clock = std::chrono::steady_clock;

const NvidiaLibrarySpec kSpec{
    "nccl", "TENSORRT_NODE_NCCL_LIBRARY", {"libnccl.so.2"}, false,
    "Install NCCL 2.17 or newer (e.g. `apt install libnccl2` from NVIDIA's CUDA repository, or the pip package "
    "nvidia-nccl-cu12 / nvidia-nccl-cu13), and make sure the loader finds it (LD_LIBRARY_PATH or ldconfig)."};

constexpr int kMinVersion = 21700;  // our ncclConfig_t layout (nccl_api.h) and ncclCommFinalize

void Resolve(void* handle, NcclApi* api, std::vector<std::string>* missing) {
#define TRTN_RESOLVE(name) ResolveSymbol(handle, #name, &api->name, missing);
  TRTN_NCCL_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
}

// NCCL_VERSION(X, Y, Z): X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
std::string VersionText(int version) {
  int major = version >= 10000 ? version / 10000 : version / 1000;
  int minor = version >= 10000 ? version % 10000 / 100 : version % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

std::string CheckVersion(const NcclApi& api, double* version) {
  int value = 0;
  if (api.ncclGetVersion(&value) != kSuccess) return "ncclGetVersion failed";
  *version = value;
  if (value >= kMinVersion) return "";
  return "it is NCCL " + VersionText(value) + " (ncclGetVersion " + std::to_string(value) +
         "), and 2.17 or newer is needed";
}

const LoadedLibrary<NcclApi>* Get(NativeError* error) { return GetNvidiaLibrary(kSpec, Resolve, CheckVersion, error); }

// NCCL's thread-safety rules forbid concurrent calls on one communicator and on communicators of
// the same device; one process-wide lock per call is the simple way to honour both. It is held
// for single calls only (never while waiting), so ranks in other threads still progress.
std::mutex& CallMutex() {
  static auto* mutex = new std::mutex();  // leaked: no static destructors
  return *mutex;
}

template <typename F>
auto Call(F f) {
  std::lock_guard<std::mutex> lock(CallMutex());
  return f();
}

const char* ResultName(ncclResult_t result) {
  switch (result) {
    case kSuccess: return "ncclSuccess";
    case kUnhandledCudaError: return "ncclUnhandledCudaError";
    case kSystemError: return "ncclSystemError";
    case kInternalError: return "ncclInternalError";
    case kInvalidArgument: return "ncclInvalidArgument";
    case kInvalidUsage: return "ncclInvalidUsage";
    case kRemoteError: return "ncclRemoteError";
    case kInProgress: return "ncclInProgress";
    default: return "ncclResult";
  }
}

std::string Where(const Communicator& comm) {
  return "rank " + std::to_string(comm.rank) + " of " + std::to_string(comm.nranks) + " on device " +
         std::to_string(comm.device != nullptr ? comm.device->ordinal : -1);
}

NativeError NcclError(const std::string& message, const std::string& call, const Communicator* comm) {
  NativeError error{"E_NCCL", message, {{"call", call}}, {}, {}};
  if (comm != nullptr) {
    error.numbers["rank"] = comm->rank;
    error.numbers["nranks"] = comm->nranks;
    if (comm->device != nullptr) error.numbers["device"] = comm->device->ordinal;
  }
  return error;
}

// E_NCCL for `call` returning `result`: NCCL's name and text for the code, and its last error.
NativeError Failed(const NcclApi& api, const char* call, ncclResult_t result, const Communicator* comm) {
  const char* text = Call([&] { return api.ncclGetErrorString(result); });
  const char* last = Call([&] { return api.ncclGetLastError(comm != nullptr ? comm->comm : nullptr); });
  std::string name = ResultName(result);
  std::string message = std::string(call) + " failed with " + name + " (" + (text != nullptr ? text : "") + ")";
  if (last != nullptr && last[0] != '\0') message += ": " + std::string(last);
  if (comm != nullptr) message += " [" + Where(*comm) + "]";
  NativeError error = NcclError(message, call, comm);
  error.details["ncclResult"] = name;
  error.numbers["ncclResultCode"] = result;
  if (last != nullptr) error.details["lastError"] = last;
  return error;
}

void AbortNow(const NcclApi& api, Communicator& comm, const std::string& reason) {
  if (comm.state != CommState::kReady) return;
  if (comm.comm != nullptr) Call([&] { return api.ncclCommAbort(comm.comm); });
  comm.comm = nullptr;
  comm.state = CommState::kAborted;
  comm.abortReason = reason;
}

NativeError TimedOut(Communicator& comm, const char* call, double timeoutMs) {
  NativeError error = NcclError(std::string(call) + " did not complete within " + std::to_string(int64_t(timeoutMs)) +
                                    " ms [" + Where(comm) +
                                    "]; the communicator was aborted (ncclCommAbort). A peer rank may have failed "
                                    "or never joined; raise timeoutMs if the ranks start far apart.",
                                call, &comm);
  error.details["reason"] = "timeout";
  error.numbers["timeoutMs"] = timeoutMs;
  return error;
}

// Sleeps a little longer each time, up to 1 ms: fast for quick collectives, cheap for long waits.
class Backoff {
 public:
  void Wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_));
    delay_ = std::min(delay_ * 2, 1000);
  }

 private:
  int delay_ = 20;
};

Clock::time_point Deadline(double timeoutMs) {
  return Clock::now() + std::chrono::microseconds(int64_t(timeoutMs * 1000));
}

// Polls ncclCommGetAsyncError until the communicator leaves ncclInProgress. Any error or the
// deadline aborts it.
bool WaitReady(const NcclApi& api, Communicator& comm, const char* call, Clock::time_point deadline, double timeoutMs,
               NativeError* error) {
  Backoff backoff;
  for (;;) {
    ncclResult_t state = kInProgress;
    ncclResult_t result = Call([&] { return api.ncclCommGetAsyncError(comm.comm, &state); });
    if (result != kSuccess) state = result;
    if (state == kSuccess) return true;
    if (state != kInProgress) {
      *error = Failed(api, call, state, &comm);
      AbortNow(api, comm, error->message);
      return false;
    }
    if (Clock::now() >= deadline) {
      *error = TimedOut(comm, call, timeoutMs);
      AbortNow(api, comm, error->message);
      return false;
    }
    backoff.Wait();
  }
}

NativeError NotReady(const Communicator& comm, const char* call) {
  std::string why = comm.state == CommState::kAborted ? "was aborted" : "was destroyed";
  NativeError error = NcclError(std::string(call) + " on a communicator that " + why + " [" + Where(comm) + "]" +
                                    (comm.abortReason.empty() ? "" : ": " + comm.abortReason),
                                call, &comm);
  error.details["reason"] = comm.state == CommState::kAborted ? "aborted" : "destroyed";
  return error;
}

// cuStreamQuery lets a wait poll instead of blocking in cuStreamSynchronize, which would never
// return if a peer never launches its half of the collective.
using PFN_cuStreamQuery = cuda::CUresult (*)(cuda::CUstream stream);
constexpr cuda::CUresult kErrorNotReady = 600;  // CUDA_ERROR_NOT_READY

PFN_cuStreamQuery StreamQuery(NativeError* error) {
  static std::once_flag once;
  static PFN_cuStreamQuery query = nullptr;
  static NativeError* failure = new NativeError();  // leaked: no static destructors
  std::call_once(once, [] {
    std::string path;
    if (cuda::LoadDriver(&path, failure) == nullptr) return;
    std::vector<std::string> failures;
    OpenedLibrary lib = OpenFirstLibrary({path}, &failures);
    if (lib.handle != nullptr) query = reinterpret_cast<PFN_cuStreamQuery>(FindSymbol(lib.handle, "cuStreamQuery"));
    if (query == nullptr) {
      *failure = NativeError{"E_CUDA_MISSING", "The CUDA driver library " + path + " lacks cuStreamQuery. Update the NVIDIA driver.",
                             {{"library", path}}, {}, {{"missingSymbols", {"cuStreamQuery"}}}};
    }
  });
  if (query == nullptr) *error = *failure;
  return query;
}

}  // namespace

bool Info(NcclInfo* out, NativeError* error) {
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  out->libraryPath = library->path;
  out->version = int(library->version);
  return true;
}

void DisableNvlsUnlessSet() { setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0); }

bool NewUniqueId(UniqueId* out, NativeError* error) {
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  ncclResult_t result = Call([&] { return library->api.ncclGetUniqueId(out); });
  if (result == kSuccess) return true;
  *error = Failed(library->api, "ncclGetUniqueId", result, nullptr);
  return false;
}

bool InitRank(cuda::Device& device, int nranks, int rank, const UniqueId& id, double timeoutMs, Communicator* out,
              NativeError* error) {
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  const NcclApi& api = library->api;
  out->device = &device;
  out->rank = rank;
  out->nranks = nranks;
  // NCCL takes the device from the calling thread's current context (as cudaSetDevice would).
  if (!cuda::MakeCurrent(device, error)) return false;
  Config config{sizeof(Config), kConfigMagic,     kConfigVersion,   /*blocking=*/0, kConfigUndefInt,
                kConfigUndefInt, kConfigUndefInt, /*netName=*/nullptr, kConfigUndefInt};
  Clock::time_point deadline = Deadline(timeoutMs);
  std::lock_guard<std::mutex> lock(out->mutex);
  ncclResult_t result =
      Call([&] { return api.ncclCommInitRankConfig(&out->comm, nranks, id, rank, &config); });
  if (result != kSuccess && result != kInProgress) {
    *error = Failed(api, "ncclCommInitRankConfig", result, out);
    AbortNow(api, *out, error->message);
    return false;
  }
  return WaitReady(api, *out, "ncclCommInitRankConfig", deadline, timeoutMs, error);
}

bool InitAll(const std::vector<cuda::Device*>& devices, std::vector<Communicator*>* out, NativeError* error) {
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  const NcclApi& api = library->api;
  std::vector<int> ordinals;
  for (cuda::Device* device : devices) ordinals.push_back(device->ordinal);
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  ncclResult_t result =
      Call([&] { return api.ncclCommInitAll(comms.data(), int(comms.size()), ordinals.data()); });
  for (size_t i = 0; i < devices.size(); ++i) {
    auto* comm = new Communicator();
    comm->comm = comms[i];
    comm->device = devices[i];
    comm->rank = int(i);
    comm->nranks = int(devices.size());
    out->push_back(comm);
  }
  if (result == kSuccess) return true;
  *error = Failed(api, "ncclCommInitAll", result, nullptr);
  for (Communicator* comm : *out) {
    AbortNow(api, *comm, error->message);
    delete comm;
  }
  out->clear();
  return false;
}

bool AllReduce(const std::vector<AllReduceArgs>& ranks, size_t count, ncclDataType_t dtype, ncclRedOp_t op,
               double timeoutMs, NativeError* error) {
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  const NcclApi& api = library->api;
  PFN_cuStreamQuery query = StreamQuery(error);
  if (query == nullptr) return false;
  // Lock in address order so two grouped calls over the same communicators cannot deadlock.
  std::vector<Communicator*> comms;
  for (const AllReduceArgs& args : ranks) comms.push_back(args.comm);
  std::sort(comms.begin(), comms.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (Communicator* comm : comms) locks.emplace_back(comm->mutex);
  for (Communicator* comm : comms) {
    if (comm->state != CommState::kReady) {
      *error = NotReady(*comm, "ncclAllReduce");
      return false;
    }
  }
  auto abortAll = [&](const std::string& reason) {
    for (Communicator* comm : comms) AbortNow(api, *comm, reason);
  };
  Clock::time_point deadline = Deadline(timeoutMs);
  bool grouped = ranks.size() > 1;
  const char* failedCall = nullptr;
  ncclResult_t failedResult = kSuccess;
  {
    // One lock for the whole group: the calls between ncclGroupStart and ncclGroupEnd belong together.
    std::lock_guard<std::mutex> lock(CallMutex());
    if (grouped) api.ncclGroupStart();
    for (const AllReduceArgs& args : ranks) {
      if (!cuda::MakeCurrent(*args.comm->device, error)) {
        if (grouped) api.ncclGroupEnd();
        return false;
      }
      ncclResult_t result = api.ncclAllReduce(reinterpret_cast<const void*>(args.send), reinterpret_cast<void*>(args.recv),
                                              count, dtype, op, args.comm->comm, args.comm->device->stream);
      if (result != kSuccess && result != kInProgress) {
        failedCall = "ncclAllReduce";
        failedResult = result;
        break;
      }
    }
    if (grouped) {
      ncclResult_t result = api.ncclGroupEnd();
      if (failedCall == nullptr && result != kSuccess && result != kInProgress) {
        failedCall = "ncclGroupEnd";
        failedResult = result;
      }
    }
  }
  if (failedCall != nullptr) {
    // Formatted outside the group lock: Failed() takes the call lock itself.
    *error = Failed(api, failedCall, failedResult, grouped ? nullptr : ranks[0].comm);
    abortAll(error->message);
    return false;
  }
  // Enqueued (or still being enqueued by NCCL, for a non-blocking communicator): wait for the
  // communicators to settle, then for each stream, checking for peer errors all along.
  for (Communicator* comm : comms) {
    if (!WaitReady(api, *comm, "ncclAllReduce", deadline, timeoutMs, error)) {
      abortAll(error->message);
      return false;
    }
  }
  Backoff backoff;
  for (const AllReduceArgs& args : ranks) {
    Communicator& comm = *args.comm;
    for (;;) {
      cuda::CUresult status = Call([&] { return query(comm.device->stream); });
      if (status == cuda::kSuccess) break;
      if (status != kErrorNotReady) {
        cuda::Check(*comm.device, status, "cuStreamQuery", error, "(waiting for ncclAllReduce)");
        abortAll(error->message);
        return false;
      }
      ncclResult_t state = kSuccess;
      Call([&] { return api.ncclCommGetAsyncError(comm.comm, &state); });
      if (state != kSuccess && state != kInProgress) {
        *error = Failed(api, "ncclAllReduce", state, &comm);
        abortAll(error->message);
        return false;
      }
      if (Clock::now() >= deadline) {
        *error = TimedOut(comm, "ncclAllReduce", timeoutMs);
        abortAll(error->message);
        return false;
      }
      backoff.Wait();
    }
  }
  return true;
}

bool Destroy(Communicator& comm, double timeoutMs, NativeError* error) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  if (comm.state != CommState::kReady) {
    comm.state = CommState::kDestroyed;
    return true;
  }
  const LoadedLibrary<NcclApi>* library = Get(error);
  if (library == nullptr) return false;
  const NcclApi& api = library->api;
  if (!cuda::MakeCurrent(*comm.device, error)) return false;
  Clock::time_point deadline = Deadline(timeoutMs);
  ncclResult_t result = Call([&] { return api.ncclCommFinalize(comm.comm); });
  if (result != kSuccess && result != kInProgress) {
    *error = Failed(api, "ncclCommFinalize", result, &comm);
    AbortNow(api, comm, error->message);
    comm.state = CommState::kDestroyed;
    return false;
  }
  if (!WaitReady(api, comm, "ncclCommFinalize", deadline, timeoutMs, error)) {
    comm.state = CommState::kDestroyed;
    return false;
  }
  result = Call([&] { return api.ncclCommDestroy(comm.comm); });
  comm.comm = nullptr;
  comm.state = CommState::kDestroyed;
  if (result == kSuccess) return true;
  *error = Failed(api, "ncclCommDestroy", result, &comm);
  return false;
}

void Abort(Communicator& comm, const std::string& reason) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  NativeError ignored;
  const LoadedLibrary<NcclApi>* library = Get(&ignored);
  if (library == nullptr) return;
  AbortNow(library->api, comm, reason);
}

const char* StateName(CommState state) {
  switch (state) {
    case CommState::kReady: return "ready";
    case CommState::kAborted: return "aborted";
    default: return "destroyed";
  }
}

}  // namespace trtn::nccl
