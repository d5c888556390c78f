#include "dynlib.h"

#include <cstdlib>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace trtn {

#ifdef _WIN32

static std::string LastWindowsError() {
  DWORD code = GetLastError();
  char* text = nullptr;
  FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                 code, 0, reinterpret_cast<LPSTR>(&text), 0, nullptr);
  std::string message = text != nullptr ? text : ("error " + std::to_string(code));
  if (text != nullptr) LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  return message;
}

OpenedLibrary OpenFirstLibrary(const std::vector<std::string>& names, std::vector<std::string>* failures) {
  for (const auto& name : names) {
    HMODULE handle = LoadLibraryExA(name.c_str(), nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (handle == nullptr) {
      failures->push_back(name + ": " + LastWindowsError());
      continue;
    }
    char path[MAX_PATH] = {0};
    GetModuleFileNameA(handle, path, MAX_PATH);
    return OpenedLibrary{handle, name, path};
  }
  return OpenedLibrary{};
}

void* FindSymbol(void* handle, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle), name));
}

std::string LibraryPathOf(void* address) {
  HMODULE module = nullptr;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          static_cast<LPCSTR>(address), &module)) {
    return "";
  }
  char path[MAX_PATH] = {0};
  GetModuleFileNameA(module, path, MAX_PATH);
  return path;
}

#else

OpenedLibrary OpenFirstLibrary(const std::vector<std::string>& names, std::vector<std::string>* failures) {
  for (const auto& name : names) {
    // RTLD_LOCAL keeps the library's symbols out of the global namespace of the process.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = dlerror();
      failures->push_back(name + ": " + (reason != nullptr ? reason : "unknown dlopen error"));
      continue;
    }
    return OpenedLibrary{handle, name, ""};
  }
  return OpenedLibrary{};
}

void* FindSymbol(void* handle, const char* name) { return dlsym(handle, name); }

std::string LibraryPathOf(void* address) {
  Dl_info info;
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

#endif

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace trtn
