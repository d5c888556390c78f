// Support for the generated recording TensorRT double (generate.js writes fake_nvinfer.gen.cc,
// which includes this). Every call of the addon into TensorRT's apiv::V* classes is written as
// one JSON line to the file named by FAKE_TRT_LOG:
//   {"seq":n,"obj":"INetworkDefinition#1","m":"VNetworkDefinition::addTopKV2","args":[...],"ret":"ITopKLayer#3"}
// Objects are named by class and a per-class counter; tensors given as arguments by their
// names; Dims as arrays; Weights as {type,count,fnv}; enums as integers.
// FAKE_TRT_FAIL=VClass::method makes that method fail (nullptr/false) after logging kERROR
// through the ILogger the factory was given, as TensorRT does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <NvInfer.h>
#include <NvInferRuntime.h>
#pragma GCC diagnostic pop

namespace fake {

namespace nv = nvinfer1;

// State every fake object carries; the behaviours of generate.js read and write it.
struct Obj {
  explicit Obj(const char* c);
  virtual ~Obj();
  std::string cls;
  int id = 0;
  std::string name;              // tensors, layers
  nv::Dims dims{-1, {}};         // tensors
  int32_t dtype = 0;             // tensors
  int nbOutputs = 1;             // layers
  std::vector<Obj*> outputs;     // layers: output tensors (owned through children)
  std::vector<Obj*> netInputs, netOutputs, profiles;  // networks; configs (profiles)
  std::vector<uint8_t> bytes;    // host memory, timing caches
  nv::ILogger* logger = nullptr;
  nv::IProgressMonitor* monitor = nullptr;
  // profiles: name -> [min, opt, max]
  std::map<std::string, std::vector<nv::Dims>> shapes;
  // engines: the I/O table; contexts: shapes and addresses set
  struct IO { std::string name; int32_t mode = 0; int32_t dtype = 0; nv::Dims dims{-1, {}}; };
  std::vector<IO> io;
  std::vector<std::map<std::string, std::vector<nv::Dims>>> engineProfiles;
  std::map<std::string, nv::Dims> inputShapes;
  std::map<std::string, uintptr_t> addresses;
  std::map<std::string, nv::IOutputAllocator*> allocators;  // contexts: setOutputAllocator
  Obj* engine = nullptr;
  std::vector<std::unique_ptr<Obj>> children;  // owned: tensors, layers, profiles
  void* iface = nullptr;  // the public object (ITensor*, ILayer*, ...) this Obj is
};

// The public object -> Obj registry: lets the fake name any of its objects from an interface
// pointer without RTTI (the addon is built with -fno-rtti).
Obj* Lookup(const void* iface);
void Register(const void* iface, Obj* obj);
void Unregister(const void* iface);

// The logger the factories were given (TensorRT keeps one per builder/runtime; one suffices here).
extern nv::ILogger* gLogger;
void LogError(const std::string& message);
bool ShouldFail(const char* method);

std::string Quote(const std::string& s);
std::string FormatDims(const nv::Dims& d);
uint64_t Fnv(const void* data, size_t n);
size_t ElementSize(nv::DataType t);

// JSON of one argument, chosen by the declared type.
template <class T>
std::string Arg(const T& v) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<U, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_enum_v<U>) {
    return std::to_string(static_cast<int64_t>(v));
  } else if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
    if (std::isnan(v)) return "\"NaN\"";
    if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    char buf[40];
    std::snprintf(buf, sizeof buf, std::is_same_v<U, float> ? "%.9g" : "%.17g", static_cast<double>(v));
    return buf;
  } else if constexpr (std::is_integral_v<U>) {
    const bool big = (std::is_signed_v<U> ? (static_cast<int64_t>(v) > (int64_t{1} << 53) || static_cast<int64_t>(v) < -(int64_t{1} << 53))
                                          : static_cast<uint64_t>(v) > (uint64_t{1} << 53));
    return big ? "\"" + std::to_string(v) + "\"" : std::to_string(v);
  } else if constexpr (std::is_same_v<U, nv::Dims>) {
    return FormatDims(v);
  } else if constexpr (std::is_same_v<U, nv::Weights>) {
    const size_t n = static_cast<size_t>(v.count) * ElementSize(v.type);
    return "{\"type\":" + std::to_string(static_cast<int32_t>(v.type)) + ",\"count\":" + std::to_string(v.count) +
           ",\"fnv\":\"" + std::to_string(v.values == nullptr ? 0 : Fnv(v.values, n)) + "\"}";
  } else if constexpr (std::is_same_v<U, nv::Permutation>) {
    std::string s = "[";
    for (int i = 0; i < nv::Dims::MAX_DIMS; ++i) s += (i ? "," : "") + std::to_string(v.order[i]);
    return s + "]";
  } else if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*>) {
    return v == nullptr ? "null" : Quote(v);
  } else if constexpr (std::is_pointer_v<U>) {
    if (v == nullptr) return "null";
    Obj* o = Lookup(static_cast<const void*>(v));
    if (o != nullptr) return Quote(o->cls == "ITensor" ? "%" + o->name : o->cls + "#" + std::to_string(o->id));
    // Not one of the fake's objects: a device address, a stream or a user interface, raw.
    char buf[24];
    std::snprintf(buf, sizeof buf, "\"0x%llx\"", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(v)));
    return buf;
  } else if constexpr (std::is_class_v<U>) {
    return Arg(&v);
  } else {
    return "\"?\"";
  }
}

// An array argument with its count (ITensor* const* + n, int64_t const* + n).
template <class T>
std::string ArgList(T const* p, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; p != nullptr && i < n; ++i) s += (i ? "," : "") + Arg(p[i]);
  return s + "]";
}

// A blob argument (void const* + size): its length and hash.
std::string ArgBlob(const void* p, size_t n);

// JSON of a return value: fake objects by class and id (tensors too, unlike arguments).
template <class T>
std::string Ret(const T& v) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_pointer_v<U> && !std::is_same_v<U, const char*> && !std::is_same_v<U, char*>) {
    Obj* o = v == nullptr ? nullptr : Lookup(static_cast<const void*>(v));
    if (o != nullptr) return Quote(o->cls + "#" + std::to_string(o->id));
    return Arg(v);
  } else if constexpr (std::is_class_v<U> && !std::is_same_v<U, nv::Dims> && !std::is_same_v<U, nv::Weights> && !std::is_same_v<U, nv::Permutation>) {
    return Ret(&v);
  } else {
    return Arg(v);
  }
}

// Appends one call to the log.
void Record(const Obj* self, const char* method, const std::string& args, const std::string& ret);

template <class R>
R Default() {
  if constexpr (std::is_same_v<R, void>) {
    return;
  } else if constexpr (std::is_same_v<R, nv::Dims>) {
    return nv::Dims{-1, {}};
  } else if constexpr (std::is_same_v<R, const char*>) {
    return "";
  } else if constexpr (std::is_same_v<R, nv::Permutation>) {
    return nv::Permutation{};
  } else if constexpr (std::is_default_constructible_v<R>) {
    return R{};
  } else {
    std::abort();
  }
}

}  // namespace fake
