// Finding one of NVIDIA's user-space libraries (NVRTC, cuBLASLt, cuDNN) at run time, with the
// typed error a caller gets when none of the candidates opens.
#pragma once

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

}  // namespace trtn

