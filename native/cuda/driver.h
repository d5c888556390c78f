// The CUDA driver (libcuda), opened on first use and kept for the life of the process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common/native_error.h"
#include "driver_api.h"

namespace trtn::cuda {

// Loads the driver once per process (thread-safe). Returns nullptr and fills `error`
// (E_CUDA_MISSING, with every library name tried) when it cannot be opened or lacks a symbol.
// The handle is deliberately never closed: unloading libcuda at exit races with other users.
const DriverApi* LoadDriver(std::string* libraryPath, NativeError* error);

// An E_CUDA error naming the driver call, its error name and text, and `context`.
NativeError CallFailed(const DriverApi& api, const std::string& call, CUresult result, const std::string& context);

struct DeviceRecord {
  int ordinal = 0;
  std::string name;
  unsigned char uuid[16] = {0};
  std::string pciBusId;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
  uint64_t totalMemoryBytes = 0;
  int multiprocessorCount = 0;
};

struct DeviceQuery {
  int driverVersion = 0;  // e.g. 13000 for CUDA 13.0
  std::string libraryPath;
  std::vector<DeviceRecord> devices;
};

// Initializes the driver and describes every device. On failure returns false with `error`
// set: E_CUDA_MISSING, E_NO_DEVICE (driver present, no device) or E_CUDA (a call failed).
bool QueryDevices(DeviceQuery* out, NativeError* error);

}  // namespace trtn::cuda
