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

// TENSORRT_LIBRARY is the older name, still read; the package's own variable wins when both are set.
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

// One line, as `doctor` and tensorrtStatus() show it: what was searched, where, and what to do.
std::string MissingMessage(const std::vector<std::string>& names, const std::vector<std::string>& failures) {
  bool absent = true;
  for (const auto& f : failures) absent = absent && (f.find("No such file") != std::string::npos || f.find("not find") != std::string::npos);
  std::string message = names.front() + (absent ? " not found" : " could not be loaded") + "; searched ";
#ifdef _WIN32
  message += "the DLL search path for ";
#else
  const std::string ldPath = GetEnv("LD_LIBRARY_PATH");
  if (names.front().find('/') == std::string::npos) {
    message += "the dynamic loader's path (LD_LIBRARY_PATH " + (ldPath.empty() ? std::string("unset") : "= " + ldPath) +
               ", the ld.so cache, /lib, /usr/lib) for ";
  }
#endif
  for (size_t i = 0; i < failures.size(); ++i) {
    // A failure reads "NAME: REASON", and dlerror's REASON repeats "NAME: ".
    std::string reason = failures[i];
    for (int k = 0; k < 2 && i < names.size() && reason.rfind(names[i] + ": ", 0) == 0; ++k) reason = reason.substr(names[i].size() + 2);
    message += (i == 0 ? "" : ", ") + (i < names.size() ? names[i] : std::string("?")) + " (" + reason + ")";
  }
  return message +
         "; set TENSORRT_NODE_TENSORRT_LIBRARY to the path of libnvinfer.so.10, or install TensorRT 10 (apt install libnvinfer10, or the "
         "TensorRT tar from developer.nvidia.com/tensorrt with its lib folder on LD_LIBRARY_PATH). Until then, `auto` "
         "takes the next backend.";
}

State* Load() {
  auto* state = new State();  // never freed: unloading TensorRT at exit is unsafe
  std::vector<std::string> failures;
  const std::vector<std::string> names = CandidateNames();
  OpenedLibrary lib = OpenFirstLibrary(names, &failures);
  if (lib.handle == nullptr) {
    state->error = NativeError{"E_TENSORRT_MISSING", MissingMessage(names, failures), {}, {}, {{"tried", failures}}};
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
