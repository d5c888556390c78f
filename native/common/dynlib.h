// Opening shared libraries at run time. The addon never links libcuda, libcudart or libnvinfer:
// it opens them on first use so that it loads on machines that have none of them.
#pragma once

#include <string>
#include <vector>

namespace trtn {

struct OpenedLibrary {
  void* handle = nullptr;
  std::string name;  // the name that opened (as given to the loader)
  std::string path;  // the file the loader resolved it to, when it can tell
};

// Tries each name in order and returns the first that opens. Every failure is appended to
// `failures` as "name: reason" so that the caller can report all of them at once.
OpenedLibrary OpenFirstLibrary(const std::vector<std::string>& names, std::vector<std::string>* failures);

// Looks a symbol up in an opened library; nullptr when absent.
void* FindSymbol(void* handle, const char* name);

// The file that holds `address` (a symbol of a loaded library), or "" when unknown.
std::string LibraryPathOf(void* address);

// Reads an environment variable; "" when unset.
std::string GetEnv(const char* name);

}  // namespace trtn
