// Settling Promises for GPU work without the libuv thread pool: the JS thread enqueues the work
// (launches are asynchronous) and records an event; one completion thread per device waits for
// the events in order and hands each finished job to its environment's thread-safe function,
// which settles the Promise on that environment's JS thread (gpu-execution.md §3, option 1).
//
// Environments (main thread, worker threads) come and go; the completion threads are process-wide
// and never end. An environment that is torn down first waits for the GPU work it still has in
// flight (so finalizers that free buffers after it never free memory a kernel still uses), then
// stops receiving completions.
#pragma once

#include <napi.h>

#include <memory>

#include "../common/native_error.h"
#include "../cuda/runtime.h"

namespace trtn::gpu {

class EnvLink;

// One job: the Promise and what the job holds until it settles.
class Completion {
 public:
  virtual ~Completion() = default;
  // JS thread, before the Promise settles either way: release what the job held.
  virtual void Finally(Napi::Env env) = 0;
  // The environment is gone (its JS thread will not run again): drop JS references without
  // touching it. Buffers are then freed by their finalizers at the environment's teardown.
  virtual void Abandon() = 0;
  // JS thread, after Finally, when the work succeeded: the value the Promise resolves with
  // (default undefined). A JS exception thrown here rejects the Promise instead.
  virtual napi_value Result(Napi::Env env) { return env.Undefined(); }

  // Set by SettleWhenDone and the completion thread; JS thread: Settle runs Finally and settles.
  void Settle(Napi::Env env);
  napi_deferred deferred = nullptr;
  std::shared_ptr<EnvLink> link;
  cuda::CUevent event = nullptr;
  NativeError error;
};

// The environment's end of the completion threads, created on its first use (JS thread).
std::shared_ptr<EnvLink> CreateEnvLink(Napi::Env env);

// JS thread: records an event on `stream` after the work enqueued so far and returns a Promise
// that settles once that work is done: resolved with the job's Result(), or rejected with `failed` (an
// enqueue that failed part way: the Promise waits for what was queued before it) or with the
// CUDA error the wait returned. The device's context must be current on the calling thread.
//
// `pollMicros` > 0: when this environment has no other job out (so Promises still settle in
// submission order), the calling thread first polls the event for up to that long and, if the
// work is done by then, settles the Promise itself: tiny work then costs no thread hop and no
// event-loop wake-up (the round trip drops from ~23 to under 10 µs on the H200's host), and the
// JS thread is held for at most `pollMicros`. Otherwise the completion thread takes the job.
Napi::Value SettleWhenDone(Napi::Env env, const std::shared_ptr<EnvLink>& link, cuda::Device& device,
                           cuda::CUstream stream, std::unique_ptr<Completion> job, const NativeError* failed,
                           int pollMicros = 0);

// Microseconds a completion thread polls an event before it blocks on it, and polls its queue for
// the next job before it sleeps (lower latency for short work and back-to-back runs, one busy core
// meanwhile): TENSORRT_NODE_COMPLETION_SPIN_US, default 50; 0 never polls.
int CompletionSpinMicros();

}  // namespace trtn::gpu
