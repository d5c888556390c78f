#include "fake_support.h"

#include <atomic>

namespace fake {

namespace {
std::mutex gMutex;
std::unordered_map<const void*, Obj*>& Registry() {
  static auto* r = new std::unordered_map<const void*, Obj*>();
  return *r;
}
std::map<std::string, int>& Counters() {
  static auto* c = new std::map<std::string, int>();
  return *c;
}
long gSeq = 0;
}  // namespace

nv::ILogger* gLogger = nullptr;

Obj::Obj(const char* c) : cls(c) {
  std::lock_guard<std::mutex> lock(gMutex);
  id = ++Counters()[cls];
}
Obj::~Obj() = default;

Obj* Lookup(const void* iface) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = Registry().find(iface);
  return it == Registry().end() ? nullptr : it->second;
}
void Register(const void* iface, Obj* obj) {
  std::lock_guard<std::mutex> lock(gMutex);
  Registry()[iface] = obj;
  obj->iface = const_cast<void*>(iface);
}
void Unregister(const void* iface) {
  std::lock_guard<std::mutex> lock(gMutex);
  Registry().erase(iface);
}

void LogError(const std::string& message) {
  if (gLogger != nullptr) gLogger->log(nv::ILogger::Severity::kERROR, message.c_str());
}

bool ShouldFail(const char* method) {
  const char* f = std::getenv("FAKE_TRT_FAIL");
  if (f == nullptr || std::strcmp(f, method) != 0) return false;
  LogError(std::string("fake failure injected in ") + method);
  return true;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string FormatDims(const nv::Dims& d) {
  if (d.nbDims < 0 || d.nbDims > nv::Dims::MAX_DIMS) return "null";
  std::string s = "[";
  for (int i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

uint64_t Fnv(const void* data, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h & ((uint64_t{1} << 53) - 1);  // exact in a JS number
}

size_t ElementSize(nv::DataType t) {
  switch (t) {
    case nv::DataType::kFLOAT: case nv::DataType::kINT32: return 4;
    case nv::DataType::kHALF: case nv::DataType::kBF16: return 2;
    case nv::DataType::kINT64: return 8;
    default: return 1;
  }
}

std::string ArgBlob(const void* p, size_t n) {
  return "{\"size\":" + std::to_string(n) + ",\"fnv\":\"" + std::to_string(p == nullptr ? 0 : Fnv(p, n)) + "\"}";
}

void Record(const Obj* self, const char* method, const std::string& args, const std::string& ret) {
  const char* path = std::getenv("FAKE_TRT_LOG");
  std::lock_guard<std::mutex> lock(gMutex);
  const long seq = ++gSeq;
  if (path == nullptr) return;
  FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  const std::string obj = self == nullptr ? "null" : Quote(self->cls + "#" + std::to_string(self->id));
  std::fprintf(f, "{\"seq\":%ld,\"obj\":%s,\"m\":%s,\"args\":[%s],\"ret\":%s}\n", seq, obj.c_str(), Quote(method).c_str(),
               args.c_str(), ret.empty() ? "null" : ret.c_str());
  std::fclose(f);
}

}  // namespace fake
