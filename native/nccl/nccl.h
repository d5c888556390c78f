// NCCL, opened on first use: communicators for one rank each (or all local devices at once) and
// all-reduce on the rank's device stream. Every wait polls instead of blocking inside NCCL, so a
// peer that dies or never joins turns into a typed timeout and ncclCommAbort, never a hang.
// Everything here may block, so callers run it off the JS thread, except DisableNvlsUnlessSet.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "../common/native_error.h"
#include "../cuda/runtime.h"
#include "nccl_api.h"

namespace trtn::nccl {

struct NcclInfo {
  std::string libraryPath;
  int version = 0;  // ncclGetVersion: 22803 for 2.28.3
};

bool Info(NcclInfo* out, NativeError* error);

// NVLink SHARP (multicast) stays off unless the user chose otherwise: sets NCCL_NVLS_ENABLE=0
// when it is unset. Call on the JS thread before the first NCCL call (setenv is not thread-safe).
void DisableNvlsUnlessSet();

bool NewUniqueId(UniqueId* out, NativeError* error);

enum class CommState { kReady, kAborted, kDestroyed };

// One rank of a communicator. `mutex` serializes the jobs that use it.
struct Communicator {
  ncclComm_t comm = nullptr;
  cuda::Device* device = nullptr;
  int rank = 0;
  int nranks = 0;
  CommState state = CommState::kReady;
  std::string abortReason;  // why it was aborted, for the errors of later calls
  std::mutex mutex;
};

// A non-blocking communicator for `rank` of `nranks` on `device`, polled until ready; after
// `timeoutMs` (or on any failure) the half-made communicator is aborted.
bool InitRank(cuda::Device& device, int nranks, int rank, const UniqueId& id, double timeoutMs, Communicator* out,
              NativeError* error);

// One communicator per device in `devices`, all in this process (ncclCommInitAll).
bool InitAll(const std::vector<cuda::Device*>& devices, std::vector<Communicator*>* out, NativeError* error);

struct AllReduceArgs {
  Communicator* comm = nullptr;
  cuda::CUdeviceptr send = 0;
  cuda::CUdeviceptr recv = 0;
};

// Enqueues the all-reduce of each entry on its device's stream (inside one NCCL group when there
// are several: one thread driving several devices must group them) and waits for all of them,
// polling the communicators' async errors. A failure or `timeoutMs` aborts the communicators.
bool AllReduce(const std::vector<AllReduceArgs>& ranks, size_t count, ncclDataType_t dtype, ncclRedOp_t op,
               double timeoutMs, NativeError* error);

// ncclCommFinalize (polled up to `timeoutMs`, then aborted) and ncclCommDestroy. Idempotent.
bool Destroy(Communicator& comm, double timeoutMs, NativeError* error);

// ncclCommAbort: frees the communicator without waiting for peers. Idempotent.
void Abort(Communicator& comm, const std::string& reason);

// Name of a communicator state, for JS.
const char* StateName(CommState state);

}  // namespace trtn::nccl
