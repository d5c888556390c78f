#include "library.h"

#include <cstdint>
#include <mutex>
#include <vector>

#include "../common/dynlib.h"

namespace trtn::trt {

namespace {

using PFN_getInferLibVersion = int32_t (*)();

struct State {
  LibraryInfo info;
  NativeError error;
};

std::vector<std::string> CandidateNames() {
  std::string override = GetEnv("TENSORRT_NODE_TENSORRT_LIBRARY");
  if (!override.empty()) return {override};
#ifdef _WIN32
  return {"nvinfer_10.dll", "nvinfer.dll"};
#else
  return {"libnvinfer.so.10", "libnvinfer.so"};
#endif
}

State* Load() {
  auto* state = new State();  // never freed: unloading TensorRT at exit is unsafe
  std::vector<std::string> failures;
  OpenedLibrary lib = OpenFirstLibrary(CandidateNames(), &failures);
  if (lib.handle == nullptr) {
    std::string message = "The TensorRT library (libnvinfer) could not be loaded. Tried:";
    for (const auto& failure : failures) message += "\n  - " + failure;
    message +=
        "\nInstall TensorRT 10 and add its lib directory to LD_LIBRARY_PATH, or set TENSORRT_NODE_TENSORRT_LIBRARY to "
        "the full path of libnvinfer.so.10. Without it, programs run on the CPU reference backend.";
    state->error = NativeError{"E_TENSORRT_MISSING", message, {}, {}, {{"tried", failures}}};
    return state;
  }
  auto version = reinterpret_cast<PFN_getInferLibVersion>(FindSymbol(lib.handle, "getInferLibVersion"));
  std::string path = LibraryPathOf(reinterpret_cast<void*>(version));
  state->info.libraryPath = path.empty() ? lib.name : path;
  if (version == nullptr) {
    state->error = NativeError{"E_TENSORRT_MISSING",
                               "The library " + state->info.libraryPath +
                                   " does not export getInferLibVersion: it is not a TensorRT runtime library.",
                               {{"library", state->info.libraryPath}},
                               {},
                               {}};
    return state;
  }
  const int32_t number = version();
  // TensorRT 10 encodes major*10000 + minor*100 + patch; TensorRT 8 and older major*1000 + ...
  if (number < 100000) {
    const std::string old = std::to_string(number / 1000) + "." + std::to_string((number % 1000) / 100) + "." +
                            std::to_string(number % 100);
    state->error = NativeError{"E_TENSORRT_MISSING",
                               "The TensorRT library " + state->info.libraryPath + " is TensorRT " + old +
                                   "; tensorrt-node needs TensorRT 10. Install TensorRT 10, or set "
                                   "TENSORRT_NODE_TENSORRT_LIBRARY to its libnvinfer.so.10.",
                               {{"library", state->info.libraryPath}, {"foundVersion", old}},
                               {},
                               {}};
    return state;
  }
  state->info.version = number;
  return state;
}

}  // namespace

bool FindLibrary(LibraryInfo* out, NativeError* error) {
  static std::once_flag once;
  static State* state = nullptr;
  std::call_once(once, [] { state = Load(); });
  if (!state->error.ok()) {
    *error = state->error;
    return false;
  }
  *out = state->info;
  return true;
}

}  // namespace trtn::trt
