#include "bindings.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../common/promise_worker.h"
#include "nccl.h"

namespace trtn::nccl {

namespace {

// Per-environment state, passed to every function as its data.
struct EnvState {
  Napi::FunctionReference commClass;
  BufferLeaser lease;
  bool tearingDown = false;
};

// Leasers may be set before or after Register in the same environment.
std::mutex& LeaserMutex() {
  static auto* mutex = new std::mutex();  // leaked: no static destructors
  return *mutex;
}
std::map<napi_env, BufferLeaser>& PendingLeasers() {
  static auto* leasers = new std::map<napi_env, BufferLeaser>();
  return *leasers;
}
std::map<napi_env, EnvState*>& States() {
  static auto* states = new std::map<napi_env, EnvState*>();
  return *states;
}

[[noreturn]] void ThrowInvalid(Napi::Env env, const std::string& message) {
  ThrowJsError(env, NativeError{"E_INVALID_ARGUMENT", message, {}, {}, {}});
}

double Number(const Napi::CallbackInfo& info, size_t index, const char* what, double min, double max) {
  double value = info.Length() > index && info[index].IsNumber() ? info[index].As<Napi::Number>().DoubleValue() : NAN;
  if (!(value >= min && value <= max) || std::floor(value) != value) {
    ThrowInvalid(info.Env(), std::string(what) + " must be an integer in [" + std::to_string(int64_t(min)) + ", " +
                                 std::to_string(int64_t(max)) + "]");
  }
  return value;
}

size_t ItemBytes(int dtype) {
  switch (dtype) {
    case kInt8: case kUint8: return 1;
    case kFloat16: case kBfloat16: return 2;
    case kInt32: case kUint32: case kFloat32: return 4;
    default: return 8;
  }
}

// ---------------------------------------------------------------------------------------------
// NcclComm: one rank's communicator. destroy() finalizes it, abort() tears it down without
// waiting; the finalizer aborts one that neither ran (never destroy: it could wait on peers).

class CommObject : public Napi::ObjectWrap<CommObject> {
 public:
  static Napi::Function Define(Napi::Env env);

  CommObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CommObject>(info) {
    if (info.Length() != 2 || !info[0].IsExternal() || !info[1].IsExternal()) {
      throw Napi::TypeError::New(info.Env(), "NcclComm is created by ncclCommInitRank, not with new");
    }
    comm_.reset(info[0].As<Napi::External<Communicator>>().Data());
    state_ = info[1].As<Napi::External<EnvState>>().Data();
  }

  void Finalize(Napi::Env) override {
    // At environment teardown the process (or worker) is exiting: leave NCCL alone then.
    if (!state_->tearingDown) Abort(*comm_, "the NcclComm was garbage-collected");
  }

  Communicator* comm() const { return comm_.get(); }
  EnvState* state() const { return state_; }

 private:
  Napi::Value AllReduceMethod(const Napi::CallbackInfo& info);
  Napi::Value AbortMethod(const Napi::CallbackInfo& info);
  Napi::Value DestroyMethod(const Napi::CallbackInfo& info);
  Napi::Value Rank(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), comm_->rank); }
  Napi::Value Size(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), comm_->nranks); }
  Napi::Value Device(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), comm_->device->ordinal); }
  Napi::Value State(const Napi::CallbackInfo& info) {
    std::lock_guard<std::mutex> lock(comm_->mutex);
    return Napi::String::New(info.Env(), StateName(comm_->state));
  }

  std::unique_ptr<Communicator> comm_;
  EnvState* state_ = nullptr;
};

// A job on communicators and buffers: keeps them alive and busy until it settles.
class CommWorker : public PromiseWorker {
 public:
  CommWorker(Napi::Env env, const char* name) : PromiseWorker(env, name) {}

  void Keep(Napi::Value object) { keep_.push_back(Napi::Persistent(object.As<Napi::Object>())); }
  // For a job whose arguments were refused before it started: releases what it held.
  void Discard(Napi::Env env) {
    Finally(env);
    delete this;
  }
  void Lease(LeasedBuffer buffer) { leases_.push_back(std::move(buffer)); }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }
  void Finally(Napi::Env env) override {
    for (LeasedBuffer& lease : leases_) {
      if (lease.release) lease.release(env);
    }
    leases_.clear();
    keep_.clear();
  }

 private:
  std::vector<Napi::ObjectReference> keep_;
  std::vector<LeasedBuffer> leases_;
};

class AllReduceWorker : public CommWorker {
 public:
  explicit AllReduceWorker(Napi::Env env) : CommWorker(env, "tensorrt-node:ncclAllReduce") {}
  std::vector<AllReduceArgs> ranks;
  size_t count = 0;
  int dtype = 0, op = 0;
  double timeoutMs = 0;

 protected:
  bool Run(NativeError* error) override { return AllReduce(ranks, count, dtype, op, timeoutMs, error); }
};

class DestroyWorker : public CommWorker {
 public:
  DestroyWorker(Napi::Env env, Communicator* comm, bool abort, double timeoutMs)
      : CommWorker(env, "tensorrt-node:ncclCommDestroy"), comm_(comm), abort_(abort), timeoutMs_(timeoutMs) {}

 protected:
  bool Run(NativeError* error) override {
    if (!abort_) return nccl::Destroy(*comm_, timeoutMs_, error);
    nccl::Abort(*comm_, "abort() was called");
    return true;
  }

 private:
  Communicator* comm_;
  bool abort_;
  double timeoutMs_;
};

class InitWorker : public PromiseWorker {
 public:
  InitWorker(Napi::Env env, EnvState* state, std::vector<int> ordinals)
      : PromiseWorker(env, "tensorrt-node:ncclCommInit"), state_(state), ordinals_(std::move(ordinals)) {}
  // One rank (InitRank) when `all` is false; else one communicator per device (InitAll).
  bool all = false;
  int nranks = 0, rank = 0;
  UniqueId id{};
  double timeoutMs = 0;

  ~InitWorker() override {
    for (Communicator* comm : made_) delete comm;
  }

 protected:
  bool Run(NativeError* error) override {
    std::vector<cuda::Device*> devices;
    for (int ordinal : ordinals_) {
      devices.push_back(cuda::GetDevice(ordinal, error));
      if (devices.back() == nullptr) return false;
    }
    if (all) return InitAll(devices, &made_, error);
    auto* comm = new Communicator();
    made_.push_back(comm);
    return InitRank(*devices[0], nranks, rank, id, timeoutMs, comm, error);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Array comms = Napi::Array::New(env, made_.size());
    for (size_t i = 0; i < made_.size(); ++i) {
      comms.Set(uint32_t(i), state_->commClass.New({Napi::External<Communicator>::New(env, made_[i]),
                                                    Napi::External<EnvState>::New(env, state_)}));
      made_[i] = nullptr;  // owned by the JS object now
    }
    made_.clear();
    return all ? Napi::Value(comms) : comms.Get(uint32_t(0));
  }

 private:
  EnvState* state_;
  std::vector<int> ordinals_;
  std::vector<Communicator*> made_;
};

class InfoWorker : public PromiseWorker {
 public:
  InfoWorker(Napi::Env env, bool uniqueId) : PromiseWorker(env, "tensorrt-node:ncclInfo"), uniqueId_(uniqueId) {}

 protected:
  bool Run(NativeError* error) override { return uniqueId_ ? NewUniqueId(&id_, error) : Info(&info_, error); }
  Napi::Value Result(Napi::Env env) override {
    if (uniqueId_) return Napi::Buffer<char>::Copy(env, id_.internal, kUniqueIdBytes);
    Napi::Object result = Napi::Object::New(env);
    result.Set("libraryPath", info_.libraryPath);
    result.Set("version", info_.version);
    return result;
  }

 private:
  bool uniqueId_;
  UniqueId id_{};
  NcclInfo info_;
};

EnvState* StateOf(const Napi::CallbackInfo& info) { return static_cast<EnvState*>(info.Data()); }

// Argument parsing shared by allReduce and allReduceGroup: (count, dtype, op, timeoutMs) at `first`.
void ParseReduction(const Napi::CallbackInfo& info, size_t first, AllReduceWorker* worker) {
  worker->count = size_t(Number(info, first, "count", 0, 9007199254740991.0));
  worker->dtype = int(Number(info, first + 1, "NCCL data type", 0, 255));
  worker->op = int(Number(info, first + 2, "NCCL reduction op", 0, 255));
  worker->timeoutMs = Number(info, first + 3, "timeoutMs", 1, 9007199254740991.0);
}

CommObject* UnwrapComm(Napi::Env env, EnvState* state, Napi::Value value) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(state->commClass.Value())) {
    ThrowInvalid(env, "expected an NcclComm");
  }
  return CommObject::Unwrap(value.As<Napi::Object>());
}

// Adds one rank to `worker`: its communicator, and its send and receive buffers leased.
void AddRank(Napi::Env env, EnvState* state, AllReduceWorker* worker, Napi::Value comm, Napi::Value send,
             Napi::Value recv) {
  if (!state->lease) {
    ThrowJsError(env, NativeError{"E_INTERNAL",
                                  "This build of the addon cannot hand DeviceBuffers to NCCL (the GPU runtime did not "
                                  "install nccl::SetBufferLeaser); rebuild tensorrt-node.",
                                  {{"call", "ncclAllReduce"}}, {}, {}});
  }
  CommObject* object = UnwrapComm(env, state, comm);
  worker->Keep(comm);
  AllReduceArgs args;
  args.comm = object->comm();
  LeasedBuffer in = state->lease(env, send, "send");
  args.send = in.ptr;
  cuda::Device* sendDevice = in.device;
  size_t sendBytes = in.bytes;
  worker->Lease(std::move(in));
  LeasedBuffer out = state->lease(env, recv, "receive");
  args.recv = out.ptr;
  cuda::Device* recvDevice = out.device;
  size_t recvBytes = out.bytes;
  worker->Lease(std::move(out));
  int ordinal = args.comm->device->ordinal;
  size_t bytes = worker->count * ItemBytes(worker->dtype);
  if (bytes > sendBytes || bytes > recvBytes) {
    ThrowInvalid(env, "all-reduce of " + std::to_string(worker->count) + " elements needs " + std::to_string(bytes) +
                          " bytes, and the send and receive DeviceBuffers of rank " + std::to_string(args.comm->rank) +
                          " hold " + std::to_string(sendBytes) + " and " + std::to_string(recvBytes));
  }
  if (sendDevice != args.comm->device || recvDevice != args.comm->device) {
    ThrowInvalid(env, "the send and receive DeviceBuffers of rank " + std::to_string(args.comm->rank) +
                          " must be on the communicator's device " + std::to_string(ordinal) + " (they are on " +
                          std::to_string(sendDevice->ordinal) + " and " + std::to_string(recvDevice->ordinal) + ")");
  }
  worker->ranks.push_back(args);
}

Napi::Value CommObject::AllReduceMethod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* worker = new AllReduceWorker(env);
  try {
    ParseReduction(info, 2, worker);
    AddRank(env, state_, worker, Value(), info[0], info[1]);
  } catch (...) {
    worker->Discard(env);
    throw;
  }
  return worker->Start();
}

Napi::Value CommObject::AbortMethod(const Napi::CallbackInfo& info) {
  auto* worker = new DestroyWorker(info.Env(), comm_.get(), true, 0);
  worker->Keep(Value());
  return worker->Start();
}

Napi::Value CommObject::DestroyMethod(const Napi::CallbackInfo& info) {
  double timeoutMs = Number(info, 0, "timeoutMs", 1, 9007199254740991.0);
  auto* worker = new DestroyWorker(info.Env(), comm_.get(), false, timeoutMs);
  worker->Keep(Value());
  return worker->Start();
}

Napi::Function CommObject::Define(Napi::Env env) {
  return DefineClass(env, "NcclComm",
                     {InstanceMethod("allReduce", &CommObject::AllReduceMethod),
                      InstanceMethod("abort", &CommObject::AbortMethod),
                      InstanceMethod("destroy", &CommObject::DestroyMethod),
                      InstanceAccessor("rank", &CommObject::Rank, nullptr),
                      InstanceAccessor("size", &CommObject::Size, nullptr),
                      InstanceAccessor("device", &CommObject::Device, nullptr),
                      InstanceAccessor("state", &CommObject::State, nullptr)});
}

Napi::Value NcclInfoFn(const Napi::CallbackInfo& info) {
  DisableNvlsUnlessSet();
  return (new InfoWorker(info.Env(), false))->Start();
}

Napi::Value NcclUniqueIdFn(const Napi::CallbackInfo& info) {
  DisableNvlsUnlessSet();
  return (new InfoWorker(info.Env(), true))->Start();
}

// (device, nranks, rank, uniqueId: Uint8Array(128), timeoutMs) → Promise<NcclComm>
Napi::Value NcclCommInitRankFn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DisableNvlsUnlessSet();
  int ordinal = int(Number(info, 0, "device", 0, 1 << 20));
  int nranks = int(Number(info, 1, "nranks", 1, 1 << 30));
  int rank = int(Number(info, 2, "rank", 0, nranks - 1));
  if (info.Length() < 4 || !info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().ByteLength() != kUniqueIdBytes) {
    ThrowInvalid(env, "the NCCL unique id must be a Uint8Array of " + std::to_string(kUniqueIdBytes) + " bytes");
  }
  double timeoutMs = Number(info, 4, "timeoutMs", 1, 9007199254740991.0);
  auto array = info[3].As<Napi::TypedArray>();
  auto* worker = new InitWorker(env, StateOf(info), {ordinal});
  std::memcpy(worker->id.internal, static_cast<uint8_t*>(array.ArrayBuffer().Data()) + array.ByteOffset(),
              kUniqueIdBytes);
  worker->nranks = nranks;
  worker->rank = rank;
  worker->timeoutMs = timeoutMs;
  return worker->Start();
}

// (devices: number[]) → Promise<NcclComm[]>, rank i on devices[i].
Napi::Value NcclCommInitAllFn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DisableNvlsUnlessSet();
  if (info.Length() < 1 || !info[0].IsArray() || info[0].As<Napi::Array>().Length() == 0) {
    ThrowInvalid(env, "ncclCommInitAll expects a non-empty list of device ordinals");
  }
  auto list = info[0].As<Napi::Array>();
  std::vector<int> ordinals;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value value = list.Get(i);
    double ordinal = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : -1;
    if (!(ordinal >= 0 && ordinal <= (1 << 20)) || std::floor(ordinal) != ordinal) {
      ThrowInvalid(env, "every device must be an ordinal >= 0");
    }
    ordinals.push_back(int(ordinal));
  }
  auto* worker = new InitWorker(env, StateOf(info), std::move(ordinals));
  worker->all = true;
  return worker->Start();
}

// (comms, sends, recvs, count, dtype, op, timeoutMs): one grouped all-reduce over communicators
// driven from this thread (those of ncclCommInitAll).
Napi::Value NcclAllReduceGroupFn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  EnvState* state = StateOf(info);
  if (info.Length() < 3 || !info[0].IsArray() || !info[1].IsArray() || !info[2].IsArray()) {
    ThrowInvalid(env, "ncclAllReduceGroup expects arrays of communicators, send and receive buffers");
  }
  auto comms = info[0].As<Napi::Array>();
  auto sends = info[1].As<Napi::Array>();
  auto recvs = info[2].As<Napi::Array>();
  if (comms.Length() == 0 || sends.Length() != comms.Length() || recvs.Length() != comms.Length()) {
    ThrowInvalid(env, "ncclAllReduceGroup needs one send and one receive buffer per communicator");
  }
  auto* worker = new AllReduceWorker(env);
  try {
    ParseReduction(info, 3, worker);
    for (uint32_t i = 0; i < comms.Length(); ++i) AddRank(env, state, worker, comms.Get(i), sends.Get(i), recvs.Get(i));
  } catch (...) {
    worker->Discard(env);
    throw;
  }
  return worker->Start();
}

}  // namespace

void SetBufferLeaser(Napi::Env env, BufferLeaser lease) {
  std::lock_guard<std::mutex> lock(LeaserMutex());
  auto found = States().find(napi_env(env));
  if (found != States().end()) {
    found->second->lease = std::move(lease);
  } else {
    PendingLeasers()[napi_env(env)] = std::move(lease);
  }
}

void Register(Napi::Env env, Napi::Object exports) {
  auto* state = new EnvState();
  state->commClass = Napi::Persistent(CommObject::Define(env));
  {
    std::lock_guard<std::mutex> lock(LeaserMutex());
    auto pending = PendingLeasers().find(napi_env(env));
    if (pending != PendingLeasers().end()) {
      state->lease = std::move(pending->second);
      PendingLeasers().erase(pending);
    }
    States()[napi_env(env)] = state;
  }
  napi_env key = env;
  // `state` is never freed: NcclComm finalizers that run after this hook still read it.
  env.AddCleanupHook([state, key]() {
    {
      std::lock_guard<std::mutex> lock(LeaserMutex());
      States().erase(key);
    }
    // Communicators still alive are finalized after this; see CommObject::Finalize.
    state->tearingDown = true;
    state->commClass.Reset();
  });
  struct Entry {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  };
  const Entry entries[] = {
      {"ncclInfo", NcclInfoFn},
      {"ncclUniqueId", NcclUniqueIdFn},
      {"ncclCommInitRank", NcclCommInitRankFn},
      {"ncclCommInitAll", NcclCommInitAllFn},
      {"ncclAllReduceGroup", NcclAllReduceGroupFn},
  };
  for (const Entry& entry : entries) {
    exports.Set(entry.name, Napi::Function::New(env, entry.fn, entry.name, state));
  }
}

}  // namespace trtn::nccl
