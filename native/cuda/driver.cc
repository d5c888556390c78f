#include "driver.h"

#include <mutex>
#include <string>

#include "../common/dynlib.h"

namespace trtn::cuda {

namespace {

struct DriverState {
  DriverApi api;
  std::string libraryPath;
  NativeError error;
};

std::vector<std::string> CandidateNames() {
  // An explicit path wins; it is how unusual installs (WSL's /usr/lib/wsl/lib, containers
  // with the driver mounted elsewhere) are reached, and how tests substitute a fake driver.
  std::string override = GetEnv("TENSORRT_NODE_CUDA_LIBRARY");
  if (!override.empty()) return {override};
#ifdef _WIN32
  return {"nvcuda.dll"};
#else
  return {"libcuda.so.1", "libcuda.so"};
#endif
}

template <typename T>
bool Resolve(void* handle, const char* name, T* slot, std::vector<std::string>* missing) {
  *slot = reinterpret_cast<T>(FindSymbol(handle, name));
  if (*slot == nullptr) missing->push_back(name);
  return *slot != nullptr;
}

DriverState* Load() {
  auto* state = new DriverState();  // never freed: see LoadDriver
  std::vector<std::string> failures;
  const std::vector<std::string> names = CandidateNames();
  OpenedLibrary lib = OpenFirstLibrary(names, &failures);
  if (lib.handle == nullptr) {
    std::string message = "The CUDA driver library could not be loaded, so no GPU can be used. Tried:";
    for (const auto& failure : failures) message += "\n  - " + failure;
    message +=
        "\nInstall the NVIDIA driver (it provides libcuda.so.1), or set TENSORRT_NODE_CUDA_LIBRARY to its full path. "
        "The CPU reference backend works without it.";
    state->error = NativeError{"E_CUDA_MISSING", message, {}, {}, {{"tried", failures}}};
    return state;
  }
  std::vector<std::string> missing;
  DriverApi& api = state->api;
  Resolve(lib.handle, "cuInit", &api.cuInit, &missing);
  Resolve(lib.handle, "cuDriverGetVersion", &api.cuDriverGetVersion, &missing);
  Resolve(lib.handle, "cuDeviceGetCount", &api.cuDeviceGetCount, &missing);
  Resolve(lib.handle, "cuDeviceGet", &api.cuDeviceGet, &missing);
  Resolve(lib.handle, "cuDeviceGetName", &api.cuDeviceGetName, &missing);
  Resolve(lib.handle, "cuDeviceGetUuid_v2", &api.cuDeviceGetUuid_v2, &missing);
  Resolve(lib.handle, "cuDeviceTotalMem_v2", &api.cuDeviceTotalMem_v2, &missing);
  Resolve(lib.handle, "cuDeviceGetAttribute", &api.cuDeviceGetAttribute, &missing);
  Resolve(lib.handle, "cuDeviceGetPCIBusId", &api.cuDeviceGetPCIBusId, &missing);
  Resolve(lib.handle, "cuGetErrorName", &api.cuGetErrorName, &missing);
  Resolve(lib.handle, "cuGetErrorString", &api.cuGetErrorString, &missing);
  std::string path = LibraryPathOf(reinterpret_cast<void*>(api.cuInit));
  state->libraryPath = path.empty() ? lib.name : path;
  if (!missing.empty()) {
    std::string list;
    for (const auto& name : missing) list += (list.empty() ? "" : ", ") + name;
    state->error = NativeError{"E_CUDA_MISSING",
                               "The CUDA driver library " + state->libraryPath + " lacks " + list +
                                   ": the driver is too old (CUDA 11.4 or newer is needed). Update the NVIDIA driver.",
                               {{"library", state->libraryPath}},
                               {},
                               {{"missingSymbols", missing}}};
  }
  return state;
}

}  // namespace

static std::string ErrorName(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  if (api.cuGetErrorName(result, &name) == kSuccess && name != nullptr) return name;
  return "CUDA error " + std::to_string(result);
}

static std::string ErrorText(const DriverApi& api, CUresult result) {
  const char* text = nullptr;
  if (api.cuGetErrorString(result, &text) == kSuccess && text != nullptr) return text;
  return "unknown error";
}

NativeError CallFailed(const DriverApi& api, const std::string& call, CUresult result, const std::string& context) {
  std::string name = ErrorName(api, result);
  std::string message = call + " failed with " + name + " (" + ErrorText(api, result) + ")";
  if (!context.empty()) message += " " + context;
  return NativeError{"E_CUDA", message, {{"call", call}, {"cudaError", name}}, {{"cudaErrorCode", double(result)}}, {}};
}


const DriverApi* LoadDriver(std::string* libraryPath, NativeError* error) {
  // Leaked on purpose: a static object's destructor would run at process exit, after other
  // threads or libraries may still be using the driver (the crash-at-exit class of bugs).
  static std::once_flag once;
  static DriverState* state = nullptr;
  std::call_once(once, [] { state = Load(); });
  if (libraryPath != nullptr) *libraryPath = state->libraryPath;
  if (!state->error.ok()) {
    if (error != nullptr) *error = state->error;
    return nullptr;
  }
  return &state->api;
}

// Initializes the driver and describes each device (the driver is loaded and answered its version).
static bool DescribeDevices(const DriverApi& driver, DeviceQuery* out, NativeError* error) {
  const DriverApi* api = &driver;
  CUresult result = kSuccess;

  auto noDevice = [&](const std::string& why) {
    *error = NativeError{"E_NO_DEVICE",
                         "The CUDA driver (" + out->libraryPath + ", CUDA " + std::to_string(out->driverVersion / 1000) +
                             "." + std::to_string((out->driverVersion % 1000) / 10) + ") " + why +
                             ". Check that the GPU is visible to this process (CUDA_VISIBLE_DEVICES, container "
                             "runtime); the CPU reference backend works without one.",
                         {},
                         {},
                         {}};  // the driver's library and version are added by WithDriver
  };

  result = api->cuInit(0);
  if (result == kErrorNoDevice) {
    noDevice("found no CUDA-capable device");
    return false;
  }
  if (result != kSuccess) {
    *error = CallFailed(*api, "cuInit", result, "while initializing the CUDA driver " + out->libraryPath);
    return false;
  }

  int count = 0;
  result = api->cuDeviceGetCount(&count);
  if (result != kSuccess) {
    *error = CallFailed(*api, "cuDeviceGetCount", result, "");
    return false;
  }
  if (count == 0) {
    noDevice("reports zero devices");
    return false;
  }

  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const std::string where = "for device " + std::to_string(ordinal);
    DeviceRecord record;
    record.ordinal = ordinal;
    CUdevice device = 0;
    if ((result = api->cuDeviceGet(&device, ordinal)) != kSuccess) {
      *error = CallFailed(*api, "cuDeviceGet", result, where);
      return false;
    }
    char name[256] = {0};
    if ((result = api->cuDeviceGetName(name, sizeof(name) - 1, device)) != kSuccess) {
      *error = CallFailed(*api, "cuDeviceGetName", result, where);
      return false;
    }
    record.name = name;
    CUuuid uuid{};
    if ((result = api->cuDeviceGetUuid_v2(&uuid, device)) != kSuccess) {
      *error = CallFailed(*api, "cuDeviceGetUuid_v2", result, where);
      return false;
    }
    for (int i = 0; i < 16; ++i) record.uuid[i] = static_cast<unsigned char>(uuid.bytes[i]);
    char busId[64] = {0};
    if ((result = api->cuDeviceGetPCIBusId(busId, sizeof(busId) - 1, device)) != kSuccess) {
      *error = CallFailed(*api, "cuDeviceGetPCIBusId", result, where);
      return false;
    }
    record.pciBusId = busId;
    size_t bytes = 0;
    if ((result = api->cuDeviceTotalMem_v2(&bytes, device)) != kSuccess) {
      *error = CallFailed(*api, "cuDeviceTotalMem_v2", result, where);
      return false;
    }
    record.totalMemoryBytes = bytes;
    struct {
      int attribute;
      int* slot;
    } attributes[] = {
        {kAttrComputeCapabilityMajor, &record.computeCapabilityMajor},
        {kAttrComputeCapabilityMinor, &record.computeCapabilityMinor},
        {kAttrMultiprocessorCount, &record.multiprocessorCount},
    };
    for (auto& attribute : attributes) {
      if ((result = api->cuDeviceGetAttribute(attribute.slot, attribute.attribute, device)) != kSuccess) {
        *error = CallFailed(*api, "cuDeviceGetAttribute", result,
                            where + " (attribute " + std::to_string(attribute.attribute) + ")");
        return false;
      }
    }
    out->devices.push_back(record);
  }
  return true;
}

// Failures after the driver answered its version say which driver it was, so callers
// (doctor) can still report the driver.
static bool WithDriver(const DeviceQuery& query, NativeError* error) {
  error->details["library"] = query.libraryPath;
  error->numbers["driverVersion"] = query.driverVersion;
  return false;
}

bool QueryDevices(DeviceQuery* out, NativeError* error) {
  const DriverApi* api = LoadDriver(&out->libraryPath, error);
  if (api == nullptr) return false;

  CUresult result = api->cuDriverGetVersion(&out->driverVersion);
  if (result != kSuccess) {
    *error = CallFailed(*api, "cuDriverGetVersion", result, "");
    return false;
  }
  if (!DescribeDevices(*api, out, error)) return WithDriver(*out, error);
  return true;
}

}  // namespace trtn::cuda
