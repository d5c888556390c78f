#include "nvrtc.h"

#include "../common/nvidia_library.h"
#include "nvrtc_api.h"

namespace trtn::nvrtc {

namespace {

const NvidiaLibrarySpec kSpec{
    "nvrtc", "TENSORRT_NODE_NVRTC_LIBRARY", {"libnvrtc.so.13", "libnvrtc.so.12"}, true,
    "Install NVRTC from the CUDA toolkit (12.x or 13.x: e.g. `apt install cuda-nvrtc-13-0`, or the pip package "
    "nvidia-cuda-nvrtc), and make sure the loader finds it (LD_LIBRARY_PATH or ldconfig)."};

void Resolve(void* handle, NvrtcApi* api, std::vector<std::string>* missing) {
#define TRTN_RESOLVE(name) ResolveSymbol(handle, #name, &api->name, missing);
  TRTN_NVRTC_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
}

std::string CheckVersion(const NvrtcApi& api, double* version) {
  int major = 0, minor = 0;
  api.nvrtcVersion(&major, &minor);
  *version = major * 1000 + minor * 10;
  if (major >= 12) return "";
  return "it is NVRTC " + std::to_string(major) + "." + std::to_string(minor) + ", and 12.0 or newer is needed";
}

const LoadedLibrary<NvrtcApi>* Get(NativeError* error) { return GetNvidiaLibrary(kSpec, Resolve, CheckVersion, error); }

NativeError Failed(const NvrtcApi& api, const char* call, nvrtcResult result, const std::string& name) {
  const char* text = api.nvrtcGetErrorString(result);
  std::string status = text != nullptr ? text : ("NVRTC error " + std::to_string(result));
  return NativeError{"E_CUDA", std::string(call) + " failed with " + status + " for " + name,
                     {{"call", call}, {"library", "nvrtc"}, {"status", status}}, {{"statusCode", double(result)}}, {}};
}

}  // namespace

bool Info(NvrtcInfo* out, NativeError* error) {
  const LoadedLibrary<NvrtcApi>* library = Get(error);
  if (library == nullptr) return false;
  out->libraryPath = library->path;
  out->major = int(library->version) / 1000;
  out->minor = (int(library->version) % 1000) / 10;
  return true;
}

bool Compile(const std::string& source, const std::string& name, int arch, const std::vector<std::string>& options,
             std::vector<char>* cubin, std::string* log, NativeError* error) {
  const LoadedLibrary<NvrtcApi>* library = Get(error);
  if (library == nullptr) return false;
  const NvrtcApi& api = library->api;
  nvrtcProgram program = nullptr;
  nvrtcResult result = api.nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (result != kSuccess) {
    *error = Failed(api, "nvrtcCreateProgram", result, name);
    return false;
  }
  std::vector<std::string> all{"--gpu-architecture=sm_" + std::to_string(arch)};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& option : all) argv.push_back(option.c_str());
  result = api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  if (api.nvrtcGetProgramLogSize(program, &logSize) == kSuccess && logSize > 1) {
    log->assign(logSize, '\0');
    api.nvrtcGetProgramLog(program, &(*log)[0]);
    log->resize(logSize - 1);
  }
  bool ok = false;
  if (result == kErrorCompilation) {
    *error = NativeError{"E_NVRTC_COMPILE",
                         "NVRTC could not compile " + name + " for sm_" + std::to_string(arch) + ":\n" + *log,
                         {{"name", name}, {"log", *log}, {"arch", "sm_" + std::to_string(arch)}}, {}, {{"options", all}}};
  } else if (result != kSuccess) {
    *error = Failed(api, "nvrtcCompileProgram", result, name);
  } else {
    size_t size = 0;
    result = api.nvrtcGetCUBINSize(program, &size);
    if (result != kSuccess) {
      *error = Failed(api, "nvrtcGetCUBINSize", result, name);
    } else if (size == 0) {
      // A virtual architecture yields PTX only, with success and size 0 (gpu-execution.md §4).
      *error = NativeError{"E_CUDA", "NVRTC produced no cubin for " + name + " (sm_" + std::to_string(arch) + ")",
                           {{"call", "nvrtcGetCUBINSize"}, {"library", "nvrtc"}}, {}, {}};
    } else {
      cubin->resize(size);
      result = api.nvrtcGetCUBIN(program, cubin->data());
      if (result != kSuccess) {
        *error = Failed(api, "nvrtcGetCUBIN", result, name);
      } else {
        ok = true;
      }
    }
  }
  api.nvrtcDestroyProgram(&program);
  return ok;
}

}  // namespace trtn::nvrtc
