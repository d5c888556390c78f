// Running TensorRT engines: deserialize a plan, pool execution contexts (one per concurrent
// run), set input shapes and tensor addresses, enqueueV3 on a caller's stream. No CUDA calls
// here: the stream, every address and the memory of outputs whose size the run decides come
// from the caller (native/cuda owns device memory), so this compiles and is tested against the
// recording double without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../common/native_error.h"
#include "logger.h"

namespace trtn::trt {

struct IOTensor {
  std::string name;
  bool input = false;
  int32_t dataType = 0;          // nvinfer1::DataType
  std::vector<int64_t> dims;     // -1 for a dimension fixed only at run time
};

using Shapes = std::map<std::string, std::vector<int64_t>>;

// Where the memory of an output whose size the run decides comes from (an output whose shape
// still has a -1 once every input shape is set: a nonzero's). TensorRT asks for it during
// enqueueV3 through an IOutputAllocator; `allocate` gives `bytes` usable in `stream`'s order
// (false with `error` set when it cannot), `free` gives it back in the same order.
struct OutputMemory {
  std::function<bool(uint64_t bytes, void* stream, uint64_t* address, NativeError* error)> allocate;
  std::function<void(uint64_t address)> free;
  uint64_t maxBytes = 0;  // the largest size granted (the program's maxTensorBytes); 0: no bound
};

// One such output after its run: its memory (owned by whoever took it) and the shape
// TensorRT notified.
struct DecidedOutput {
  std::string name;
  uint64_t address = 0;
  uint64_t bytes = 0;  // allocated, >= the tensor's bytes (TensorRT asks for 1 or more even when empty)
  std::vector<int64_t> dims;
};

class LoadedEngine {
 public:
  ~LoadedEngine();

  // E_TENSORRT_MISSING (no usable libnvinfer) or E_TENSORRT (TensorRT refused the plan, with
  // its logged message: another TensorRT version, another GPU architecture, ...).
  static std::unique_ptr<LoadedEngine> Load(const uint8_t* plan, size_t size, bool allowHostCode, NativeError* error);

  const std::vector<IOTensor>& io() const { return io_; }
  int32_t libraryVersion() const { return libraryVersion_; }

  // One run: takes an idle execution context (or creates one), sets every input's shape
  // (E_SHAPE_OUT_OF_RANGE with TensorRT's message when a profile refuses it) and reports
  // every output's shape (-1 where the run decides it); then Enqueue sets each I/O tensor's
  // address (E_BAD_INPUT for a missing one), gives each output the run sizes an
  // IOutputAllocator drawing on `memory` (no address needed for those), and calls enqueueV3
  // (E_TENSORRT on failure; the allocator's own error, naming the output, when it refused).
  // Once enqueueV3 returned, TakeDecided hands over those outputs' memory and notified shapes
  // (their bytes are written when the stream's work is done). The run returns its context to
  // the pool when destroyed, freeing memory of decided outputs nobody took.
  class Run {
   public:
    ~Run();
    bool SetShapes(const Shapes& inputs, Shapes* outputs, NativeError* error);
    bool Enqueue(const std::map<std::string, uint64_t>& addresses, void* stream, const OutputMemory& memory, NativeError* error);
    std::vector<DecidedOutput> TakeDecided();

   private:
    friend class LoadedEngine;
    class Allocator;
    Run(LoadedEngine* engine, void* context);  // out of line: Allocator is complete only in runtime.cc
    LoadedEngine* engine_;
    void* context_;  // nvinfer1::IExecutionContext*
    std::vector<std::string> decided_;  // outputs whose shape SetShapes found undecided
    std::vector<std::unique_ptr<Allocator>> allocators_;
  };
  std::unique_ptr<Run> StartRun(NativeError* error);

 private:
  LoadedEngine() : logger_(nullptr) {}
  bool Fail(const std::string& code, const std::string& what, NativeError* error) const;

  Logger logger_;
  void* runtime_ = nullptr;  // nvinfer1::IRuntime*
  void* engine_ = nullptr;   // nvinfer1::ICudaEngine*
  std::vector<IOTensor> io_;
  int32_t libraryVersion_ = 0;
  std::mutex mutex_;
  std::vector<void*> idle_;  // idle IExecutionContext*
};

}  // namespace trtn::trt
