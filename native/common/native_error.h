// An error raised on a worker thread, carried back to the JS thread as plain data and turned
// into the library's typed JS error there (lib/errors.ts owns the classes; see addon.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trtn {

struct NativeError {
  std::string code;     // stable code, e.g. E_CUDA_MISSING
  std::string message;  // complete, human-readable message
  std::map<std::string, std::string> details;        // string details (call, cudaError, ...)
  std::map<std::string, double> numbers;             // numeric details (cudaErrorCode, ...)
  std::map<std::string, std::vector<std::string>> lists;  // list details (tried, ...)

  bool ok() const { return code.empty(); }
};

}  // namespace trtn
