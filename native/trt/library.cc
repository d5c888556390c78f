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
  for (const char* variable : {"TENSORRT_NODE_TENSORRT_LIBRARY", "TENSORRT_LIBRARY"}) {
    std::string override = GetEnv(variable);
    if (!override.empty()) return {override};
  }
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
  state->info.createInferBuilder = reinterpret_cast<CreateInferFn>(FindSymbol(lib.handle, "createInferBuilder_INTERNAL"));
  state->info.createInferRuntime = reinterpret_cast<CreateInferFn>(FindSymbol(lib.handle, "createInferRuntime_INTERNAL"));
  return state;
}

}  // namespace

std::string FormatVersion(int32_t version) {
  return std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." + std::to_string(version % 100);
}

bool FindApi(LibraryInfo* out, int32_t headerVersion, NativeError* error) {
  if (!FindLibrary(out, error)) return false;
  const std::string found = FormatVersion(out->version);
  const std::string built = FormatVersion(headerVersion);
  auto refuse = [&](const std::string& why) {
    *error = NativeError{"E_TENSORRT_MISSING",
                         "The TensorRT library " + out->libraryPath + " is TensorRT " + found + ", but " + why +
                             ". Install TensorRT " + built + " or a later 10.x (or rebuild tensorrt-node with "
                             "TENSORRT_ROOT naming the install you have).",
                         {{"library", out->libraryPath}, {"foundVersion", found}, {"headerVersion", built}},
                         {},
                         {}};
    return false;
  };
  if (out->version / 100 == 1008) return refuse("TensorRT 10.8 changed INetworkDefinition's layout (fixed in 10.9)");
  if (out->version / 10000 != headerVersion / 10000) {
    return refuse("this addon was compiled against TensorRT " + built + " headers, another major version");
  }
  if (out->version / 100 < headerVersion / 100) {
    return refuse("this addon was compiled against TensorRT " + built +
                  " headers and calls methods older libraries lack");
  }
  if (out->createInferBuilder == nullptr || out->createInferRuntime == nullptr) {
    return refuse("it does not export createInferBuilder_INTERNAL and createInferRuntime_INTERNAL");
  }
  return true;
}

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
