// Compiled only with TensorRT's headers (TRTN_WITH_TENSORRT; binding.gyp, CMakeLists.txt).
#ifdef TRTN_WITH_TENSORRT

#include "runtime.h"

#include "library.h"
#include "trt_headers.h"

namespace trtn::trt {

namespace nv = nvinfer1;

namespace {

nv::IRuntime* AsRuntime(void* p) { return static_cast<nv::IRuntime*>(p); }
nv::ICudaEngine* AsEngine(void* p) { return static_cast<nv::ICudaEngine*>(p); }
nv::IExecutionContext* AsContext(void* p) { return static_cast<nv::IExecutionContext*>(p); }

std::vector<int64_t> FromDims(const nv::Dims& d) {
  if (d.nbDims < 0) return {};
  return std::vector<int64_t>(d.d, d.d + d.nbDims);
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

bool LoadedEngine::Fail(const std::string& code, const std::string& what, NativeError* error) const {
  const std::string last = logger_.LastError();
  *error = NativeError{code, what + (last.empty() ? " (TensorRT logged no error)" : ": " + last), {{"tensorrtMessage", last}}, {}, {}};
  return false;
}

LoadedEngine::~LoadedEngine() {
  for (void* c : idle_) delete AsContext(c);
  delete AsEngine(engine_);    // engines before the runtime that made them (H:NvInferRuntime.h:1959)
  delete AsRuntime(runtime_);
}

std::unique_ptr<LoadedEngine> LoadedEngine::Load(const uint8_t* plan, size_t size, bool allowHostCode, NativeError* error) {
  LibraryInfo lib;
  if (!FindApi(&lib, NV_TENSORRT_VERSION, error)) return nullptr;
  std::unique_ptr<LoadedEngine> self(new LoadedEngine());
  self->libraryVersion_ = lib.version;
  self->runtime_ = lib.createInferRuntime(&self->logger_, NV_TENSORRT_VERSION);
  if (self->runtime_ == nullptr) {
    self->Fail("E_TENSORRT", "TensorRT could not create a runtime (createInferRuntime)", error);
    return nullptr;
  }
  // Version-compatible plans carry host code, which TensorRT loads only when allowed.
  if (allowHostCode) AsRuntime(self->runtime_)->setEngineHostCodeAllowed(true);
  self->engine_ = AsRuntime(self->runtime_)->deserializeCudaEngine(plan, size);
  if (self->engine_ == nullptr) {
    self->Fail("E_TENSORRT", "TensorRT could not deserialize the engine (" + std::to_string(size) + " bytes)", error);
    return nullptr;
  }
  nv::ICudaEngine* engine = AsEngine(self->engine_);
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    IOTensor t;
    const char* name = engine->getIOTensorName(i);
    t.name = name == nullptr ? "" : name;
    t.input = engine->getTensorIOMode(t.name.c_str()) == nv::TensorIOMode::kINPUT;
    t.dataType = static_cast<int32_t>(engine->getTensorDataType(t.name.c_str()));
    t.dims = FromDims(engine->getTensorShape(t.name.c_str()));
    self->io_.push_back(t);
  }
  return self;
}

std::unique_ptr<LoadedEngine::Run> LoadedEngine::StartRun(NativeError* error) {
  void* context = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      context = idle_.back();
      idle_.pop_back();
    }
  }
  if (context == nullptr) context = AsEngine(engine_)->createExecutionContext();
  if (context == nullptr) {
    Fail("E_TENSORRT", "TensorRT could not create an execution context", error);
    return nullptr;
  }
  return std::unique_ptr<Run>(new Run(this, context));
}

LoadedEngine::Run::~Run() {
  std::lock_guard<std::mutex> lock(engine_->mutex_);
  engine_->idle_.push_back(context_);
}

bool LoadedEngine::Run::SetShapes(const Shapes& inputs, Shapes* outputs, NativeError* error) {
  nv::IExecutionContext* ctx = AsContext(context_);
  for (const IOTensor& t : engine_->io_) {
    if (!t.input) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end()) {
      *error = NativeError{"E_BAD_INPUT", "the TensorRT engine needs input \"" + t.name + "\", which was not given", {{"input", t.name}}, {}, {}};
      return false;
    }
    nv::Dims d{};
    if (it->second.size() > static_cast<size_t>(nv::Dims::MAX_DIMS)) {
      *error = NativeError{"E_BAD_INPUT", "input \"" + t.name + "\" has rank " + std::to_string(it->second.size()) + "; TensorRT allows 8", {{"input", t.name}}, {}, {}};
      return false;
    }
    d.nbDims = static_cast<int32_t>(it->second.size());
    for (int i = 0; i < d.nbDims; ++i) d.d[i] = it->second[i];
    if (!ctx->setInputShape(t.name.c_str(), d)) {
      engine_->Fail("E_SHAPE_OUT_OF_RANGE", "TensorRT refused shape " + Join(it->second) + " for input \"" + t.name + "\"", error);
      error->details["input"] = t.name;
      return false;
    }
  }
  for (const IOTensor& t : engine_->io_) {
    if (!t.input) (*outputs)[t.name] = FromDims(ctx->getTensorShape(t.name.c_str()));
  }
  return true;
}

bool LoadedEngine::Run::Enqueue(const std::map<std::string, uint64_t>& addresses, void* stream, NativeError* error) {
  nv::IExecutionContext* ctx = AsContext(context_);
  for (const IOTensor& t : engine_->io_) {
    auto it = addresses.find(t.name);
    if (it == addresses.end()) {
      *error = NativeError{"E_BAD_INPUT", "no device address was given for TensorRT tensor \"" + t.name + "\"", {{"tensor", t.name}}, {}, {}};
      return false;
    }
    if (!ctx->setTensorAddress(t.name.c_str(), reinterpret_cast<void*>(static_cast<uintptr_t>(it->second)))) {
      return engine_->Fail("E_TENSORRT", "TensorRT refused the address of tensor \"" + t.name + "\"", error);
    }
  }
  if (!ctx->enqueueV3(static_cast<cudaStream_t>(stream))) return engine_->Fail("E_TENSORRT", "TensorRT enqueueV3 failed", error);
  return true;
}

}  // namespace trtn::trt

#endif  // TRTN_WITH_TENSORRT
