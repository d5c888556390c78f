#include "bindings.h"

#ifndef TRTN_WITH_TENSORRT

// Built without TensorRT's headers: the library probe (library.cc) is all there is.
namespace trtn::trt {
bool BackendBuilt() { return false; }
void Register(Napi::Env, Napi::Object) {}
}  // namespace trtn::trt

#else

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../common/promise_worker.h"
#include "../cuda/runtime.h"
#include "build.h"
#include "library.h"
#include "runtime.h"

namespace trtn::trt {

namespace {

std::vector<uint8_t> BytesOf(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a Uint8Array");
  }
  auto bytes = value.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(bytes.Data(), bytes.Data() + bytes.ByteLength());
}

Napi::Uint8Array ToJs(Napi::Env env, const std::vector<uint8_t>& bytes) {
  auto out = Napi::Uint8Array::New(env, bytes.size());
  if (!bytes.empty()) std::memcpy(out.Data(), bytes.data(), bytes.size());
  return out;
}

Napi::Array DimsToJs(Napi::Env env, const std::vector<int64_t>& dims) {
  auto a = Napi::Array::New(env, dims.size());
  for (size_t i = 0; i < dims.size(); ++i) a.Set(static_cast<uint32_t>(i), static_cast<double>(dims[i]));
  return a;
}

// The JS thread's answers to the build thread: whether TensorRT may continue after a step, and
// that every event posted before a flush has been delivered. `closed` is set when the
// thread-safe function is torn down (the env is going away), so a waiter never waits forever.
struct Channel {
  std::mutex mutex;
  std::condition_variable changed;
  bool closed = false;
};

struct Answer {
  bool done = false;
  bool proceed = false;
};

// An event from a TensorRT thread, delivered on the JS thread.
struct Event {
  std::string kind;  // "log" | "progress" | "flush"
  int a = 0;         // severity | progress kind
  std::string text;  // message | phase
  std::string parent;
  int step = 0;
  // Set for an event whose sender waits for the JS answer (a cancellable step, a flush).
  std::shared_ptr<Channel> channel;
  std::shared_ptr<Answer> answer;
};

// tensorrtBuild(program, onEvent, maxSeverity, ordinal, cancellable): builds on the thread pool;
// ILogger lines at or below maxSeverity and IProgressMonitor events reach onEvent(kind, a,
// text, parent, step) through a thread-safe function (TensorRT calls them on its own threads).
// With `cancellable`, each stepComplete waits for onEvent's answer and a `false` stops the
// build (TensorRT's own contract for stepComplete); without, the build never waits for JS.
// Every event is delivered before the Promise settles (Run ends with a flush).
class BuildWorker : public PromiseWorker {
 public:
  BuildWorker(Napi::Env env, std::vector<uint8_t> program, Napi::Function onEvent, int maxSeverity, int ordinal, bool cancellable)
      : PromiseWorker(env, "tensorrt-node:tensorrtBuild"), program_(std::move(program)), ordinal_(ordinal), channel_(std::make_shared<Channel>()) {
    // The finalizer runs after the queue is drained: on Release, or when the env is torn down.
    tsfn_ = Napi::ThreadSafeFunction::New(env, onEvent, "tensorrt-node:tensorrtEvents", 0, 1, new std::shared_ptr<Channel>(channel_),
                                          [](Napi::Env, std::shared_ptr<Channel>* channel) {
                                            {
                                              std::lock_guard<std::mutex> lock((*channel)->mutex);
                                              (*channel)->closed = true;
                                            }
                                            (*channel)->changed.notify_all();
                                            delete channel;
                                          });
    events_.log = [this, maxSeverity](int severity, const std::string& message) {
      if (severity <= maxSeverity) Post(new Event{"log", severity, message, "", 0, nullptr, nullptr});
    };
    events_.progress = [this, cancellable](int kind, const std::string& phase, const std::string& parent, int step) {
      if (cancellable && kind == 1) {
        if (!Ask(new Event{"progress", kind, phase, parent, step, nullptr, nullptr})) events_.cancel = true;
      } else {
        Post(new Event{"progress", kind, phase, parent, step, nullptr, nullptr});
      }
    };
  }

 protected:
  // TensorRT builds for the device whose context is current on the building thread.
  bool Run(NativeError* error) override {
    bool ok = true;
    if (ordinal_ >= 0) {
      cuda::Device* device = cuda::GetDevice(ordinal_, error);
      ok = device != nullptr && cuda::MakeCurrent(*device, error);
    }
    if (ok) ok = BuildEngine(program_.data(), program_.size(), &events_, &out_, error);
    Ask(new Event{"flush", 0, "", "", 0, nullptr, nullptr});
    return ok;
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    r.Set("plan", ToJs(env, out_.plan));
    r.Set("timingCache", ToJs(env, out_.timingCache));
    r.Set("libraryVersion", out_.libraryVersion);
    r.Set("hardwareCompatibility", out_.hardwareCompatibility);
    return r;
  }

  void Finally(Napi::Env) override { tsfn_.Release(); }

 private:
  static void Deliver(Napi::Env env, Napi::Function fn, Event* e) {
    std::unique_ptr<Event> owned(e);
    bool proceed = false;  // a throwing or vanished callback stops the build
    if (env != nullptr && !fn.IsEmpty() && owned->kind != "flush") {
      try {
        Napi::Value r = fn.Call({Napi::String::New(env, owned->kind), Napi::Number::New(env, owned->a), Napi::String::New(env, owned->text),
                                 Napi::String::New(env, owned->parent), Napi::Number::New(env, owned->step)});
        proceed = !(r.IsBoolean() && !r.As<Napi::Boolean>().Value());
      } catch (const Napi::Error&) {
        proceed = false;
      }
    }
    if (owned->answer != nullptr) {
      {
        std::lock_guard<std::mutex> lock(owned->channel->mutex);
        owned->answer->done = true;
        owned->answer->proceed = proceed;
      }
      owned->channel->changed.notify_all();
    }
  }

  void Post(Event* event) {
    if (tsfn_.NonBlockingCall(event, Deliver) != napi_ok) delete event;
  }

  // Delivers `event` and waits for the JS thread's answer; false when it said stop or is gone.
  bool Ask(Event* event) {
    auto answer = std::make_shared<Answer>();
    event->channel = channel_;
    event->answer = answer;
    if (tsfn_.BlockingCall(event, Deliver) != napi_ok) {
      delete event;
      return false;
    }
    std::unique_lock<std::mutex> lock(channel_->mutex);
    channel_->changed.wait(lock, [&] { return answer->done || channel_->closed; });
    return answer->done && answer->proceed;
  }

  std::vector<uint8_t> program_;
  int ordinal_;
  std::shared_ptr<Channel> channel_;
  Napi::ThreadSafeFunction tsfn_;
  BuildEvents events_;
  BuildOutput out_;
};

Napi::Value TensorrtBuild(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 5 || !info[1].IsFunction() || !info[2].IsNumber() || !info[3].IsNumber() || !info[4].IsBoolean()) {
    throw Napi::TypeError::New(env,
                               "tensorrtBuild(program: Uint8Array, onEvent: Function, maxSeverity: number, deviceOrdinal: number, cancellable: boolean)");
  }
  auto* worker = new BuildWorker(env, BytesOf(info[0], "program"), info[1].As<Napi::Function>(), info[2].As<Napi::Number>().Int32Value(),
                                 info[3].As<Napi::Number>().Int32Value(), info[4].As<Napi::Boolean>().Value());
  return worker->Start();
}

// Outputs a run sized (IOutputAllocator), their memory from the device's pool, until JS has a
// DeviceTensor of each: `shapes` holds what TensorRT notified; moveInto({name: [address,
// bytes]}) copies each output's bytes into the caller's buffers and frees this memory;
// dispose() frees it uncopied. The GPU runtime's DeviceBuffers are made only by native/gpu,
// so the hand-over is a device-to-device copy rather than an adoption.
struct DecidedOutputs {
  cuda::Device* device = nullptr;
  std::vector<DecidedOutput> outputs;
  void FreeAll() {
    for (const DecidedOutput& o : outputs) cuda::Free(*device, static_cast<cuda::CUdeviceptr>(o.address));
    outputs.clear();
  }
};

class DecidedOutputsObject : public Napi::ObjectWrap<DecidedOutputsObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "TensorRTDecidedOutputs",
                       {InstanceMethod("moveInto", &DecidedOutputsObject::MoveInto), InstanceMethod("dispose", &DecidedOutputsObject::Dispose)});
  }

  DecidedOutputsObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DecidedOutputsObject>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "TensorRTDecidedOutputs is created by a TensorRT run");
    held_.reset(info[0].As<Napi::External<DecidedOutputs>>().Data());
    Napi::Object shapes = Napi::Object::New(info.Env());
    Napi::Object bytes = Napi::Object::New(info.Env());
    for (const DecidedOutput& o : held_->outputs) {
      shapes.Set(o.name, DimsToJs(info.Env(), o.dims));
      bytes.Set(o.name, static_cast<double>(o.bytes));
    }
    info.This().As<Napi::Object>().Set("shapes", shapes);
    info.This().As<Napi::Object>().Set("allocatedBytes", bytes);
  }

  ~DecidedOutputsObject() override {
    if (held_ != nullptr) held_->FreeAll();
  }

 private:
  class MoveWorker : public PromiseWorker {
   public:
    MoveWorker(Napi::Env env, std::unique_ptr<DecidedOutputs> held, std::map<std::string, std::pair<uint64_t, uint64_t>> into)
        : PromiseWorker(env, "tensorrt-node:tensorrtMoveOutputs"), held_(std::move(held)), into_(std::move(into)) {}
    ~MoveWorker() override { held_->FreeAll(); }

   protected:
    bool Run(NativeError* error) override {
      for (const DecidedOutput& o : held_->outputs) {
        auto it = into_.find(o.name);
        if (it == into_.end()) continue;
        if (it->second.second > o.bytes) {
          *error = NativeError{"E_INTERNAL", "TensorRT output \"" + o.name + "\" holds " + std::to_string(o.bytes) + " bytes; " + std::to_string(it->second.second) + " were asked", {{"output", o.name}}, {}, {}};
          return false;
        }
        if (!cuda::CopyDtoD(*held_->device, static_cast<cuda::CUdeviceptr>(it->second.first), static_cast<cuda::CUdeviceptr>(o.address),
                            static_cast<size_t>(it->second.second), error)) {
          return false;
        }
      }
      return true;
    }
    Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

   private:
    std::unique_ptr<DecidedOutputs> held_;
    std::map<std::string, std::pair<uint64_t, uint64_t>> into_;
  };

  Napi::Value MoveInto(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() != 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "moveInto({name: [address: bigint, bytes: number]})");
    if (held_ == nullptr) ThrowJsError(env, NativeError{"E_INVALID_ARGUMENT", "the outputs of this TensorRT run were already moved or disposed", {}, {}, {}});
    std::map<std::string, std::pair<uint64_t, uint64_t>> into;
    Napi::Object o = info[0].As<Napi::Object>();
    Napi::Array names = o.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      const std::string name = names.Get(i).As<Napi::String>();
      Napi::Array pair = o.Get(name).As<Napi::Array>();
      bool lossless = false;
      into[name] = {pair.Get(0u).As<Napi::BigInt>().Uint64Value(&lossless), static_cast<uint64_t>(pair.Get(1u).As<Napi::Number>().Int64Value())};
    }
    // The worker owns the memory from now on and frees it when done, copied or not.
    return (new MoveWorker(env, std::move(held_), std::move(into)))->Start();
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    if (held_ != nullptr) held_->FreeAll();
    held_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<DecidedOutputs> held_;
};

// A loaded engine. run() takes a context from the engine's pool, so concurrent runs each get
// their own; addresses are device pointers (BigInt) of the caller's DeviceTensors.
class EngineObject : public Napi::ObjectWrap<EngineObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "TensorRTEngine",
                       {InstanceMethod("io", &EngineObject::Io), InstanceMethod("outputShapes", &EngineObject::OutputShapes),
                        InstanceMethod("run", &EngineObject::RunJs), InstanceMethod("dispose", &EngineObject::Dispose)});
  }

  EngineObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineObject>(info) {
    if (info.Length() != 2 || !info[0].IsExternal() || !info[1].IsExternal()) throw Napi::TypeError::New(info.Env(), "TensorRTEngine is created by tensorrtLoad");
    engine_.reset(info[0].As<Napi::External<LoadedEngine>>().Data());
    decidedClass_ = info[1].As<Napi::External<Napi::FunctionReference>>().Data();
  }

  LoadedEngine* engine(Napi::Env env) {
    if (engine_ == nullptr) ThrowJsError(env, NativeError{"E_INVALID_ARGUMENT", "the TensorRT engine was disposed", {}, {}, {}});
    return engine_.get();
  }

 private:
  static Shapes ShapesOf(const Napi::Value& value) {
    Shapes shapes;
    Napi::Object o = value.As<Napi::Object>();
    Napi::Array names = o.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      const std::string name = names.Get(i).As<Napi::String>();
      Napi::Array dims = o.Get(name).As<Napi::Array>();
      std::vector<int64_t> d(dims.Length());
      for (uint32_t k = 0; k < dims.Length(); ++k) d[k] = dims.Get(k).As<Napi::Number>().Int64Value();
      shapes[name] = d;
    }
    return shapes;
  }

  Napi::Value Io(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto& io = engine(env)->io();
    Napi::Array out = Napi::Array::New(env, io.size());
    for (size_t i = 0; i < io.size(); ++i) {
      Napi::Object t = Napi::Object::New(env);
      t.Set("name", io[i].name);
      t.Set("input", io[i].input);
      t.Set("dataType", io[i].dataType);
      t.Set("dims", DimsToJs(env, io[i].dims));
      out.Set(static_cast<uint32_t>(i), t);
    }
    return out;
  }

  // outputShapes(inputShapes): what the outputs will be for these input shapes (no GPU work).
  Napi::Value OutputShapes(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    NativeError error;
    auto run = engine(env)->StartRun(&error);
    Shapes outputs;
    if (run == nullptr || !run->SetShapes(ShapesOf(info[0]), &outputs, &error)) ThrowJsError(env, error);
    Napi::Object out = Napi::Object::New(env);
    for (const auto& [name, dims] : outputs) out.Set(name, DimsToJs(env, dims));
    return out;
  }

  class RunWorker : public PromiseWorker {
   public:
    RunWorker(Napi::Env env, Napi::Object owner, LoadedEngine* engine, Shapes shapes, std::map<std::string, uint64_t> addresses, int ordinal, uint64_t maxBytes,
              Napi::FunctionReference* decidedClass)
        : PromiseWorker(env, "tensorrt-node:tensorrtRun"),
          engine_(engine),
          shapes_(std::move(shapes)),
          addresses_(std::move(addresses)),
          ordinal_(ordinal),
          maxBytes_(maxBytes),
          decidedClass_(decidedClass) {
      owner_ = Napi::Persistent(owner);  // keeps the engine alive while the run is in flight
    }
    // Memory of decided outputs that never reached JS (the env went away first).
    ~RunWorker() override {
      for (const DecidedOutput& o : decided_) cuda::Free(*device_, static_cast<cuda::CUdeviceptr>(o.address));
    }

   protected:
    // Settles when the work enqueued on the device stream is done, so the outputs are ready.
    bool Run(NativeError* error) override {
      device_ = cuda::GetDevice(ordinal_, error);
      if (device_ == nullptr || !cuda::MakeCurrent(*device_, error)) return false;
      auto run = engine_->StartRun(error);
      Shapes outputs;
      if (run == nullptr || !run->SetShapes(shapes_, &outputs, error)) return false;
      // Outputs sized by the run get memory from the device's pool, in the order of the stream
      // TensorRT enqueues on (the device stream), and go back to it the same way.
      cuda::Device* device = device_;
      OutputMemory memory;
      memory.maxBytes = maxBytes_;
      memory.allocate = [device](uint64_t bytes, void* stream, uint64_t* address, NativeError* e) {
        cuda::CUdeviceptr ptr = 0;
        if (!cuda::AllocateOnStream(*device, static_cast<size_t>(bytes), static_cast<cuda::CUstream>(stream), &ptr, e)) return false;
        *address = static_cast<uint64_t>(ptr);
        return true;
      };
      memory.free = [device](uint64_t address) { cuda::Free(*device, static_cast<cuda::CUdeviceptr>(address)); };
      if (!run->Enqueue(addresses_, device_->stream, memory, error)) return false;
      if (!cuda::Synchronize(*device_, error)) return false;
      decided_ = run->TakeDecided();
      return true;
    }
    // undefined, or the outputs the run sized (a TensorRTDecidedOutputs owning their memory).
    Napi::Value Result(Napi::Env env) override {
      if (decided_.empty()) return env.Undefined();
      auto* held = new DecidedOutputs{device_, std::move(decided_)};
      decided_.clear();
      return decidedClass_->New({Napi::External<DecidedOutputs>::New(env, held)});
    }
    void Finally(Napi::Env) override { owner_.Reset(); }

   private:
    LoadedEngine* engine_;
    Shapes shapes_;
    std::map<std::string, uint64_t> addresses_;
    int ordinal_;
    uint64_t maxBytes_;
    Napi::FunctionReference* decidedClass_;
    cuda::Device* device_ = nullptr;
    std::vector<DecidedOutput> decided_;
    Napi::ObjectReference owner_;
  };

  // run(inputShapes, addresses: {name: bigint}, deviceOrdinal, maxTensorBytes): Promise of
  // undefined, or of a TensorRTDecidedOutputs when some outputs were sized by the run.
  Napi::Value RunJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() != 4 || !info[0].IsObject() || !info[1].IsObject() || !info[2].IsNumber() || !info[3].IsNumber()) {
      throw Napi::TypeError::New(env, "run(inputShapes, addresses, deviceOrdinal, maxTensorBytes)");
    }
    std::map<std::string, uint64_t> addresses;
    Napi::Object a = info[1].As<Napi::Object>();
    Napi::Array names = a.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      const std::string name = names.Get(i).As<Napi::String>();
      bool lossless = false;
      addresses[name] = a.Get(name).As<Napi::BigInt>().Uint64Value(&lossless);
    }
    const double maxBytes = info[3].As<Napi::Number>().DoubleValue();
    auto* worker = new RunWorker(env, Value(), engine(env), ShapesOf(info[0]), std::move(addresses), info[2].As<Napi::Number>().Int32Value(),
                                 maxBytes > 0 ? static_cast<uint64_t>(maxBytes) : 0, decidedClass_);
    return worker->Start();
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    engine_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<LoadedEngine> engine_;
  Napi::FunctionReference* decidedClass_ = nullptr;  // the env's TensorRTDecidedOutputs (Classes)
};

// tensorrtCheckApi(): whether the libnvinfer found can serve this build's headers (FindApi).
class CheckApiWorker : public PromiseWorker {
 public:
  explicit CheckApiWorker(Napi::Env env) : PromiseWorker(env, "tensorrt-node:tensorrtCheckApi") {}

 protected:
  bool Run(NativeError* error) override { return FindApi(&info_, NV_TENSORRT_VERSION, error); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    r.Set("libraryVersion", info_.version);
    r.Set("headerVersion", NV_TENSORRT_VERSION);
    return r;
  }

 private:
  LibraryInfo info_;
};

struct Classes {
  Napi::FunctionReference engine;
  Napi::FunctionReference decided;
};

class LoadWorker : public PromiseWorker {
 public:
  LoadWorker(Napi::Env env, Classes* classes, std::vector<uint8_t> plan, bool allowHostCode, int ordinal)
      : PromiseWorker(env, "tensorrt-node:tensorrtLoad"), classes_(classes), plan_(std::move(plan)), allowHostCode_(allowHostCode), ordinal_(ordinal) {}

 protected:
  // Deserialized with the device's context current: TensorRT puts the engine on that device.
  bool Run(NativeError* error) override {
    if (ordinal_ >= 0) {
      cuda::Device* device = cuda::GetDevice(ordinal_, error);
      if (device == nullptr || !cuda::MakeCurrent(*device, error)) return false;
    }
    engine_ = LoadedEngine::Load(plan_.data(), plan_.size(), allowHostCode_, error);
    return engine_ != nullptr;
  }
  Napi::Value Result(Napi::Env env) override {
    return classes_->engine.New({Napi::External<LoadedEngine>::New(env, engine_.release()), Napi::External<Napi::FunctionReference>::New(env, &classes_->decided)});
  }

 private:
  Classes* classes_;
  std::vector<uint8_t> plan_;
  bool allowHostCode_;
  int ordinal_;
  std::unique_ptr<LoadedEngine> engine_;
};

}  // namespace

bool BackendBuilt() { return true; }

void Register(Napi::Env env, Napi::Object exports) {
  auto* classes = new Classes();
  classes->engine = Napi::Persistent(EngineObject::Define(env));
  classes->decided = Napi::Persistent(DecidedOutputsObject::Define(env));
  env.AddCleanupHook([classes]() { delete classes; });
  exports.Set("tensorrtBuild", Napi::Function::New(env, TensorrtBuild, "tensorrtBuild"));
  exports.Set("tensorrtCheckApi", Napi::Function::New(
                                      env, [](const Napi::CallbackInfo& info) -> Napi::Value { return (new CheckApiWorker(info.Env()))->Start(); },
                                      "tensorrtCheckApi"));
  exports.Set("tensorrtLoad", Napi::Function::New(
                                  env,
                                  [classes](const Napi::CallbackInfo& info) -> Napi::Value {
                                    if (info.Length() != 3 || !info[1].IsBoolean() || !info[2].IsNumber()) {
                                      throw Napi::TypeError::New(info.Env(), "tensorrtLoad(plan: Uint8Array, allowHostCode: boolean, deviceOrdinal: number)");
                                    }
                                    auto* worker = new LoadWorker(info.Env(), classes, BytesOf(info[0], "plan"), info[1].As<Napi::Boolean>(),
                                                                  info[2].As<Napi::Number>().Int32Value());
                                    return worker->Start();
                                  },
                                  "tensorrtLoad"));
}

}  // namespace trtn::trt

#endif  // TRTN_WITH_TENSORRT
