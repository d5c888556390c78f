#include "completion.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "../common/dynlib.h"
#include "../common/promise_worker.h"

namespace trtn::gpu {

class EnvLink {
 public:
  std::mutex mutex;
  std::condition_variable idle;
  bool alive = true;
  int pending = 0;  // jobs a completion thread holds, not yet handed to the thread-safe function
  napi_threadsafe_function tsfn = nullptr;
  int outstanding = 0;  // JS thread only: jobs not yet settled; the tsfn keeps the loop alive while > 0

  // Completion thread: hands the finished job to the JS thread, or drops it if the environment is gone.
  void Deliver(Completion* job) {
    std::lock_guard<std::mutex> lock(mutex);
    // Holding `mutex`: the teardown hook cannot mark us dead (and the tsfn be freed) mid-call.
    if (!alive || napi_call_threadsafe_function(tsfn, job, napi_tsfn_nonblocking) != napi_ok) {
      job->Abandon();
      delete job;
    }
    --pending;
    idle.notify_all();
  }
};

// The completion thread of one device and its queue; process-wide, never destroyed.
struct DeviceQueue {
  cuda::Device* device = nullptr;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Completion*> jobs;
  std::atomic<size_t> queued{0};  // jobs.size(), readable without the mutex while spinning
  std::vector<cuda::CUevent> freeEvents;
};

int CompletionSpinMicros() {
  static const int micros = [] {
    std::string value = GetEnv("TENSORRT_NODE_COMPLETION_SPIN_US");
    if (value.empty()) return 50;
    long parsed = std::strtol(value.c_str(), nullptr, 10);
    return parsed < 0 ? 0 : parsed > 1000000 ? 1000000 : int(parsed);
  }();
  return micros;
}

namespace {

// Polls for up to `spinMicros` (short work finishes within it and the wake-up of a blocking wait
// is saved), then blocks (the event is BLOCKING_SYNC: the thread sleeps instead of spinning).
cuda::CUresult Wait(const cuda::RuntimeApi& api, cuda::CUevent event, int spinMicros) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spinMicros);
  for (;;) {
    cuda::CUresult result = api.cuEventQuery(event);
    if (result != cuda::kErrorNotReady) return result;
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  return api.cuEventSynchronize(event);
}

void CallJs(napi_env env, napi_value, void*, void* data) {
  auto* job = static_cast<Completion*>(data);
  if (env == nullptr) {  // the tsfn is closing with the environment
    job->Abandon();
    delete job;
    return;
  }
  Napi::Env e(env);
  try {
    Napi::HandleScope scope(e);
    job->Settle(e);
  } catch (const Napi::Error& error) {
    error.ThrowAsJavaScriptException();
  }
  delete job;
}

}  // namespace

static void RunCompletionThread(DeviceQueue* queue) {
  const cuda::RuntimeApi& api = *queue->device->api;
  NativeError contextError;
  // Once: the context stays current on this thread. If it cannot be made current, every wait
  // fails and each job reports it.
  bool current = cuda::MakeCurrent(*queue->device, &contextError);
  const int spin = CompletionSpinMicros();
  for (;;) {
    // A caller awaiting runs one after another submits the next within microseconds of the last
    // settling: look for it for a while before sleeping, which saves the condition variable's wake-up.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin);
    while (queue->queued.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < deadline) {
    }
    Completion* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(queue->mutex);
      queue->ready.wait(lock, [&] { return !queue->jobs.empty(); });
      job = queue->jobs.front();
      queue->jobs.pop_front();
      queue->queued.store(queue->jobs.size(), std::memory_order_release);
    }
    if (!current) {
      if (job->error.ok()) job->error = contextError;
    } else {
      cuda::CUresult result = Wait(api, job->event, spin);
      NativeError waitError;
      if (!cuda::Check(*queue->device, result, "cuEventSynchronize", &waitError, "(waiting for GPU work)") &&
          job->error.ok()) {
        job->error = waitError;
      }
    }
    {
      std::lock_guard<std::mutex> lock(queue->mutex);
      queue->freeEvents.push_back(job->event);
    }
    std::shared_ptr<EnvLink> link = job->link;  // outlives the job, which Deliver may delete
    link->Deliver(job);
  }
}

namespace {

DeviceQueue* QueueFor(cuda::Device& device) {
  static std::mutex mutex;
  static auto* queues = new std::map<int, DeviceQueue*>();  // leaked: the threads never end
  std::lock_guard<std::mutex> lock(mutex);
  auto found = queues->find(device.ordinal);
  if (found != queues->end()) return found->second;
  auto* queue = new DeviceQueue();
  queue->device = &device;
  std::thread(RunCompletionThread, queue).detach();
  (*queues)[device.ordinal] = queue;
  return queue;
}

}  // namespace

namespace {

// Finally, then the Promise settled with the job's Result or its error.
napi_status SettleJob(Napi::Env env, Completion& job) {
  job.Finally(env);
  if (!job.error.ok()) return napi_reject_deferred(env, job.deferred, MakeJsError(env, job.error));
  napi_value value = nullptr;
  try {
    value = job.Result(env);
  } catch (const Napi::Error& thrown) {
    return napi_reject_deferred(env, job.deferred, thrown.Value());
  }
  return napi_resolve_deferred(env, job.deferred, value);
}

}  // namespace

void Completion::Settle(Napi::Env env) {
  if (--link->outstanding == 0) napi_unref_threadsafe_function(env, link->tsfn);
  NAPI_THROW_IF_FAILED_VOID(env, SettleJob(env, *this));
}

std::shared_ptr<EnvLink> CreateEnvLink(Napi::Env env) {
  auto link = std::make_shared<EnvLink>();
  napi_status status = napi_create_threadsafe_function(env, nullptr, nullptr,
                                                       Napi::String::New(env, "tensorrt-node:gpuCompletion"), 0, 1,
                                                       nullptr, nullptr, nullptr, CallJs, &link->tsfn);
  NAPI_THROW_IF_FAILED(env, status, link);
  // Idle, it must not keep the process alive; SettleWhenDone refs it while jobs are out.
  napi_unref_threadsafe_function(env, link->tsfn);
  // Registered after the tsfn (cleanup hooks run in reverse order), so this runs before the tsfn
  // is torn down, and before the environment's finalizers free buffers the GPU may still use.
  auto* keep = new std::shared_ptr<EnvLink>(link);
  status = napi_add_env_cleanup_hook(
      env,
      [](void* arg) {
        auto* held = static_cast<std::shared_ptr<EnvLink>*>(arg);
        EnvLink& l = **held;
        {
          std::unique_lock<std::mutex> lock(l.mutex);
          l.idle.wait(lock, [&] { return l.pending == 0; });
          l.alive = false;
        }
        delete held;
      },
      keep);
  if (status != napi_ok) {
    delete keep;
    NAPI_THROW_IF_FAILED(env, status, link);
  }
  return link;
}

Napi::Value SettleWhenDone(Napi::Env env, const std::shared_ptr<EnvLink>& link, cuda::Device& device,
                           cuda::CUstream stream, std::unique_ptr<Completion> job, const NativeError* failed,
                           int pollMicros) {
  napi_value promise = nullptr;
  NAPI_THROW_IF_FAILED(env, napi_create_promise(env, &job->deferred, &promise), Napi::Value());
  DeviceQueue* queue = QueueFor(device);
  const cuda::RuntimeApi& api = *device.api;
  cuda::CUevent event = nullptr;
  {
    std::lock_guard<std::mutex> lock(queue->mutex);
    if (!queue->freeEvents.empty()) {
      event = queue->freeEvents.back();
      queue->freeEvents.pop_back();
    }
  }
  NativeError error;
  bool recorded =
      (event != nullptr || cuda::Check(device, api.cuEventCreate(&event, cuda::kEventBlockingSync | cuda::kEventDisableTiming),
                                       "cuEventCreate", &error)) &&
      cuda::Check(device, api.cuEventRecord(event, stream), "cuEventRecord", &error);
  if (!recorded) {
    // Nothing will signal this job: wait here (rare) so that the buffers it holds can move.
    api.cuStreamSynchronize(stream);
    if (event != nullptr) {
      std::lock_guard<std::mutex> lock(queue->mutex);
      queue->freeEvents.push_back(event);
    }
    job->error = failed != nullptr ? *failed : error;
    SettleJob(env, *job);
    return Napi::Value(env, promise);
  }
  if (pollMicros > 0 && failed == nullptr && link->outstanding == 0) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(pollMicros);
    cuda::CUresult result = api.cuEventQuery(event);
    while (result == cuda::kErrorNotReady && std::chrono::steady_clock::now() < deadline) result = api.cuEventQuery(event);
    if (result != cuda::kErrorNotReady) {
      NativeError waitError;
      bool ok = cuda::Check(device, result, "cuEventQuery", &waitError, "(waiting for GPU work)");
      {
        std::lock_guard<std::mutex> lock(queue->mutex);
        queue->freeEvents.push_back(event);
      }
      if (!ok) job->error = waitError;
      NAPI_THROW_IF_FAILED(env, SettleJob(env, *job), Napi::Value());
      return Napi::Value(env, promise);
    }
  }
  job->link = link;
  job->event = event;
  if (failed != nullptr) job->error = *failed;
  {
    std::lock_guard<std::mutex> lock(link->mutex);
    ++link->pending;
  }
  if (link->outstanding++ == 0) napi_ref_threadsafe_function(env, link->tsfn);
  {
    std::lock_guard<std::mutex> lock(queue->mutex);
    queue->jobs.push_back(job.release());
    queue->queued.store(queue->jobs.size(), std::memory_order_release);
  }
  queue->ready.notify_one();
  return Napi::Value(env, promise);
}

}  // namespace trtn::gpu
