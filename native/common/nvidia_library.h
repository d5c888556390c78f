// Finding one of NVIDIA's user-space libraries (NVRTC, cuBLASLt, cuDNN) at run time, with the
// typed error a caller gets when none of the candidates opens.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "dynlib.h"
#include "native_error.h"

namespace trtn {

struct NvidiaLibrarySpec {
  const char* name;        // "nvrtc", "cublasLt", "cudnn": details.library of the error
  const char* envVar;      // an explicit path that, when set, is the only candidate
  std::vector<std::string> sonames;  // in order of preference
  bool toolkitDirs;        // also try $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64
  const char* installHint;  // how to install it, for the error message
};

struct NvidiaLibrary {
  void* handle = nullptr;
  std::string path;
};

// Opens the first candidate; on failure fills `error` with E_CUDA_LIBRARY_MISSING listing every
// candidate and why it failed.
NvidiaLibrary OpenNvidiaLibrary(const NvidiaLibrarySpec& spec, NativeError* error);

// Resolves `symbol` into `slot`; a name that is absent is appended to `missing`.
template <typename T>
void ResolveSymbol(void* handle, const char* symbol, T* slot, std::vector<std::string>* missing) {
  *slot = reinterpret_cast<T>(FindSymbol(handle, symbol));
  if (*slot == nullptr) missing->push_back(symbol);
}

// E_CUDA_LIBRARY_MISSING for a library that opened but lacks symbols or has the wrong version.
NativeError LibraryUnusable(const NvidiaLibrarySpec& spec, const std::string& path, const std::string& why);

// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

// One library, loaded once per process and never unloaded (no static destructors at exit).
template <typename Api>
struct LoadedLibrary {
  Api api;
  std::string path;
  double version = 0;
  NativeError error;
};

// The library of `spec`, loaded on first call: `resolve(handle, &api, &missing)` looks up the
// entry points, then `check(api, &version)` returns "" or why this version cannot be used.
// Later calls return the same result (or fill `error` with the same failure).
template <typename Api>
const LoadedLibrary<Api>* GetNvidiaLibrary(const NvidiaLibrarySpec& spec,
                                           void (*resolve)(void*, Api*, std::vector<std::string>*),
                                           std::string (*check)(const Api&, double*), NativeError* error) {
  static std::once_flag once;
  static LoadedLibrary<Api>* library = nullptr;
  std::call_once(once, [&] {
    library = new LoadedLibrary<Api>();
    NvidiaLibrary lib = OpenNvidiaLibrary(spec, &library->error);
    if (lib.handle == nullptr) return;
    library->path = lib.path;
    std::vector<std::string> missing;
    resolve(lib.handle, &library->api, &missing);
    std::string why = missing.empty() ? check(library->api, &library->version) : "it lacks " + JoinNames(missing);
    if (!why.empty()) library->error = LibraryUnusable(spec, lib.path, why);
  });
  if (!library->error.ok()) {
    *error = library->error;
    return nullptr;
  }
  return library;
}

}  // namespace trtn

