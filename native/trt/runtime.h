// Running TensorRT engines: deserialize a plan, pool execution contexts (one per concurrent
// run), set input shapes and tensor addresses, enqueueV3 on a caller's stream. No CUDA calls
// here: the stream and every address come from the caller (native/cuda owns device memory),
// so this compiles and is tested against the recording double without a GPU.
#pragma once

#include <cstdint>
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
  // every output's shape; then Enqueue sets each I/O tensor's address (E_BAD_INPUT for a
  // missing one) and calls enqueueV3 (E_TENSORRT on failure). The run returns its context
  // to the pool when destroyed.
  class Run {
   public:
    ~Run();
    bool SetShapes(const Shapes& inputs, Shapes* outputs, NativeError* error);
    bool Enqueue(const std::map<std::string, uint64_t>& addresses, void* stream, NativeError* error);

   private:
    friend class LoadedEngine;
    Run(LoadedEngine* engine, void* context) : engine_(engine), context_(context) {}
    LoadedEngine* engine_;
    void* context_;  // nvinfer1::IExecutionContext*
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
