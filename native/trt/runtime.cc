// Compiled only with TensorRT's headers (TRTN_WITH_TENSORRT; binding.gyp, CMakeLists.txt).
#ifdef TRTN_WITH_TENSORRT

#include "runtime.h"

#include <algorithm>
#include <utility>

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

// Bytes of `dims` elements of TensorRT type `type` (INT4 and FP4 pack two a byte).
uint64_t TensorBytes(int32_t type, const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= d < 0 ? 0 : static_cast<uint64_t>(d);
  switch (static_cast<nv::DataType>(type)) {
    case nv::DataType::kFLOAT: case nv::DataType::kINT32: return n * 4;
    case nv::DataType::kHALF: case nv::DataType::kBF16: return n * 2;
    case nv::DataType::kINT64: return n * 8;
    case nv::DataType::kINT4: case nv::DataType::kFP4: return (n + 1) / 2;
    default: return n;
  }
}

}  // namespace

// The IOutputAllocator of one output of one run: memory from the caller's OutputMemory (held to
// its maxBytes), reused when TensorRT asks again for no more than it has, and the shape
// TensorRT notifies. A refusal is kept as the run's error (TensorRT sees nullptr and fails
// enqueueV3). TensorRT calls it on the thread that called enqueueV3, before enqueueV3 returns.
class LoadedEngine::Run::Allocator : public nv::IOutputAllocator {
 public:
  Allocator(std::string name, const OutputMemory& memory) : name_(std::move(name)), memory_(memory) {}
  ~Allocator() override { Release(); }

  void* reallocateOutputAsync(char const* tensorName, void* currentMemory, uint64_t size, uint64_t alignment, cudaStream_t stream) override {
    (void)tensorName;
    (void)currentMemory;  // no address is set for these outputs: the memory is always this allocator's
    if (!error_.ok()) return nullptr;
    if (memory_.maxBytes > 0 && size > memory_.maxBytes) {
      error_ = NativeError{"E_RESOURCE_LIMIT",
                           "output \"" + name_ + "\" of the TensorRT engine needs " + std::to_string(size) + " bytes this run, more than maxTensorBytes (" +
                               std::to_string(memory_.maxBytes) + ")",
                           {{"output", name_}}, {{"bytes", static_cast<double>(size)}, {"maxTensorBytes", static_cast<double>(memory_.maxBytes)}}, {}};
      return nullptr;
    }
    if (address_ != 0 && size <= bytes_) return reinterpret_cast<void*>(static_cast<uintptr_t>(address_));
    uint64_t address = 0;
    NativeError error;
    if (!memory_.allocate || !memory_.allocate(size, stream, &address, &error)) {
      if (error.ok()) error = NativeError{"E_INTERNAL", "no memory source was given for outputs whose size the run decides", {}, {}, {}};
      error.message = "output \"" + name_ + "\" of the TensorRT engine (" + std::to_string(size) + " bytes, sized by this run): " + error.message;
      error.details["output"] = name_;
      error_ = error;
      return nullptr;
    }
    if (alignment > 1 && address % alignment != 0) {
      if (memory_.free) memory_.free(address);
      error_ = NativeError{"E_INTERNAL", "output \"" + name_ + "\": the memory given is not aligned to the " + std::to_string(alignment) + " bytes TensorRT asks", {{"output", name_}}, {}, {}};
      return nullptr;
    }
    Release();
    address_ = address;
    bytes_ = size;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
  }

  void notifyShape(char const* tensorName, nv::Dims const& dims) noexcept override {
    (void)tensorName;
    dims_ = FromDims(dims);
    notified_ = true;
  }

  // Frees the memory unless it was handed over.
  void Release() {
    if (address_ != 0 && memory_.free) memory_.free(address_);
    address_ = 0;
    bytes_ = 0;
  }

  const std::string name_;
  const OutputMemory memory_;
  NativeError error_;
  uint64_t address_ = 0;
  uint64_t bytes_ = 0;
  std::vector<int64_t> dims_;
  bool notified_ = false;
};

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

LoadedEngine::Run::Run(LoadedEngine* engine, void* context) : engine_(engine), context_(context) {}

LoadedEngine::Run::~Run() {
  // The pooled context must not keep pointers to this run's allocators.
  for (const auto& a : allocators_) AsContext(context_)->setOutputAllocator(a->name_.c_str(), nullptr);
  allocators_.clear();
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
  decided_.clear();
  for (const IOTensor& t : engine_->io_) {
    if (t.input) continue;
    std::vector<int64_t> dims = FromDims(ctx->getTensorShape(t.name.c_str()));
    // TensorRT leaves -1 where only the run tells the size (H:NvInferRuntime.h setTensorAddress).
    for (int64_t d : dims) {
      if (d < 0) {
        decided_.push_back(t.name);
        break;
      }
    }
    (*outputs)[t.name] = std::move(dims);
  }
  return true;
}

bool LoadedEngine::Run::Enqueue(const std::map<std::string, uint64_t>& addresses, void* stream, const OutputMemory& memory, NativeError* error) {
  nv::IExecutionContext* ctx = AsContext(context_);
  for (const auto& a : allocators_) ctx->setOutputAllocator(a->name_.c_str(), nullptr);
  allocators_.clear();
  for (const IOTensor& t : engine_->io_) {
    const bool decided = std::find(decided_.begin(), decided_.end(), t.name) != decided_.end();
    auto it = addresses.find(t.name);
    if (decided) {
      // Sized by the run: TensorRT asks the allocator for the memory once it knows the size.
      allocators_.push_back(std::make_unique<Allocator>(t.name, memory));
      if (!ctx->setOutputAllocator(t.name.c_str(), allocators_.back().get())) {
        return engine_->Fail("E_TENSORRT", "TensorRT refused the output allocator of tensor \"" + t.name + "\"", error);
      }
      if (it == addresses.end()) continue;
    }
    if (it == addresses.end()) {
      *error = NativeError{"E_BAD_INPUT", "no device address was given for TensorRT tensor \"" + t.name + "\"", {{"tensor", t.name}}, {}, {}};
      return false;
    }
    if (!ctx->setTensorAddress(t.name.c_str(), reinterpret_cast<void*>(static_cast<uintptr_t>(it->second)))) {
      return engine_->Fail("E_TENSORRT", "TensorRT refused the address of tensor \"" + t.name + "\"", error);
    }
  }
  const bool enqueued = ctx->enqueueV3(static_cast<cudaStream_t>(stream));
  // An allocator's refusal is why enqueueV3 failed: say that, naming the output.
  for (const auto& a : allocators_) {
    if (!a->error_.ok()) {
      *error = a->error_;
      return false;
    }
  }
  if (!enqueued) return engine_->Fail("E_TENSORRT", "TensorRT enqueueV3 failed", error);
  for (const auto& a : allocators_) {
    const IOTensor* t = nullptr;
    for (const IOTensor& io : engine_->io_) {
      if (io.name == a->name_) t = &io;
    }
    bool known = a->notified_;
    for (int64_t d : a->dims_) known = known && d >= 0;
    if (!known) {
      *error = NativeError{"E_TENSORRT", "TensorRT notified no shape for output \"" + a->name_ + "\", whose size the run decides", {{"output", a->name_}}, {}, {}};
      return false;
    }
    const uint64_t needed = TensorBytes(t == nullptr ? 0 : t->dataType, a->dims_);
    if (needed > a->bytes_) {
      *error = NativeError{"E_TENSORRT",
                           "TensorRT notified shape " + Join(a->dims_) + " for output \"" + a->name_ + "\" (" + std::to_string(needed) + " bytes) but asked for " +
                               std::to_string(a->bytes_) + " bytes",
                           {{"output", a->name_}}, {}, {}};
      return false;
    }
  }
  return true;
}

std::vector<DecidedOutput> LoadedEngine::Run::TakeDecided() {
  std::vector<DecidedOutput> out;
  for (const auto& a : allocators_) {
    out.push_back(DecidedOutput{a->name_, a->address_, a->bytes_, a->dims_});
    a->address_ = 0;  // handed over: the allocator no longer frees it
    a->bytes_ = 0;
  }
  return out;
}

}  // namespace trtn::trt

#endif  // TRTN_WITH_TENSORRT
