// Test driver for the TensorRT part of the addon without N-API: builds a replay program into a
// plan, or runs a plan, through native/trt against whatever libnvinfer it loads (the
// recording double in tests). Prints one JSON object per line: events, then the result.
//   driver build PROGRAM PLAN_OUT CACHE_OUT [cancel]
//   driver run PLAN [shape:NAME=d0,d1,...] [addr:NAME=N] [stream=N] [runs=N] [alloc=BASE|fail] [max=BYTES]
// Outputs sized by the run get memory from a pretend pool: addresses from BASE on (each 256-byte
// aligned), or a refusal as native/cuda's out-of-memory error with alloc=fail; each grant and
// free is an event line, and the result lists those outputs' addresses, bytes and shapes.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "../../../native/trt/build.h"
#include "../../../native/trt/runtime.h"

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::vector<uint8_t> ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

int Error(const trtn::NativeError& e) {
  std::string details;
  for (const auto& [k, v] : e.details) details += (details.empty() ? "" : ",") + Quote(k) + ":" + Quote(v);
  std::printf("{\"ok\":false,\"code\":%s,\"message\":%s,\"details\":{%s}}\n", Quote(e.code).c_str(), Quote(e.message).c_str(), details.c_str());
  return 1;
}

std::string DimsJson(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

int Build(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::vector<uint8_t> program = ReadFile(argv[2]);
  trtn::trt::BuildEvents events;
  const bool cancel = argc > 5 && std::string(argv[5]) == "cancel";
  events.log = [](int severity, const std::string& message) {
    std::printf("{\"event\":\"log\",\"severity\":%d,\"message\":%s}\n", severity, Quote(message).c_str());
  };
  events.progress = [&](int kind, const std::string& phase, const std::string& parent, int step) {
    std::printf("{\"event\":\"progress\",\"kind\":%d,\"phase\":%s,\"parent\":%s,\"step\":%d}\n", kind, Quote(phase).c_str(),
                Quote(parent).c_str(), step);
    if (cancel) events.cancel = true;
  };
  trtn::trt::BuildOutput out;
  trtn::NativeError error;
  if (!trtn::trt::BuildEngine(program.data(), program.size(), &events, &out, &error)) return Error(error);
  std::ofstream(argv[3], std::ios::binary).write(reinterpret_cast<const char*>(out.plan.data()), static_cast<std::streamsize>(out.plan.size()));
  std::ofstream(argv[4], std::ios::binary).write(reinterpret_cast<const char*>(out.timingCache.data()), static_cast<std::streamsize>(out.timingCache.size()));
  std::printf("{\"ok\":true,\"planBytes\":%zu,\"timingCacheBytes\":%zu,\"libraryVersion\":%d,\"hardwareCompatibility\":%d}\n", out.plan.size(),
              out.timingCache.size(), out.libraryVersion, out.hardwareCompatibility);
  return 0;
}

int Run(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::vector<uint8_t> plan = ReadFile(argv[2]);
  trtn::trt::Shapes shapes;
  std::map<std::string, uint64_t> addresses;
  uint64_t stream = 0;
  int runs = 1;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    const size_t eq = a.find('=');
    if (a.rfind("shape:", 0) == 0) {
      std::vector<int64_t> d;
      std::stringstream ss(a.substr(eq + 1));
      for (std::string x; std::getline(ss, x, ',');) d.push_back(std::stoll(x));
      shapes[a.substr(6, eq - 6)] = d;
    } else if (a.rfind("addr:", 0) == 0) {
      addresses[a.substr(5, eq - 5)] = std::stoull(a.substr(eq + 1));
    } else if (a.rfind("stream=", 0) == 0) {
      stream = std::stoull(a.substr(7));
    } else if (a.rfind("runs=", 0) == 0) {
      runs = std::atoi(a.c_str() + 5);
    }
  }
  trtn::trt::OutputMemory memory;
  uint64_t next = 0;
  bool refuse = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "alloc=fail") refuse = true;
    else if (a.rfind("alloc=", 0) == 0) next = std::stoull(a.substr(6));
    else if (a.rfind("max=", 0) == 0) memory.maxBytes = std::stoull(a.substr(4));
  }
  memory.allocate = [&](uint64_t bytes, void* on, uint64_t* address, trtn::NativeError* e) {
    if (refuse || next == 0) {
      *e = trtn::NativeError{"E_OUT_OF_DEVICE_MEMORY", "out of device memory: " + std::to_string(bytes) + " bytes were asked", {}, {}, {}};
      return false;
    }
    *address = next;
    next += (bytes + 255) / 256 * 256;
    std::printf("{\"event\":\"allocate\",\"bytes\":%llu,\"stream\":%llu,\"address\":%llu}\n", static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(on)), static_cast<unsigned long long>(*address));
    return true;
  };
  memory.free = [](uint64_t address) { std::printf("{\"event\":\"free\",\"address\":%llu}\n", static_cast<unsigned long long>(address)); };
  trtn::NativeError error;
  auto engine = trtn::trt::LoadedEngine::Load(plan.data(), plan.size(), false, &error);
  if (engine == nullptr) return Error(error);
  std::string io;
  for (const auto& t : engine->io()) {
    io += (io.empty() ? "" : ",") + std::string("{\"name\":") + Quote(t.name) + ",\"input\":" + (t.input ? "true" : "false") +
          ",\"dataType\":" + std::to_string(t.dataType) + ",\"dims\":" + DimsJson(t.dims) + "}";
  }
  // Two runs alive at once take two contexts; later runs reuse them from the pool.
  std::string outputs, decided;
  for (int r = 0; r < runs; ++r) {
    auto first = engine->StartRun(&error);
    auto second = runs > 1 ? engine->StartRun(&error) : nullptr;
    for (auto* run : {first.get(), second.get()}) {
      if (run == nullptr) continue;
      trtn::trt::Shapes out;
      bool ok = run->SetShapes(shapes, &out, &error) && run->Enqueue(addresses, reinterpret_cast<void*>(static_cast<uintptr_t>(stream)), memory, &error);
      if (!ok) {
        // The runs end (freeing what they still hold) before the result line, which comes last.
        first.reset();
        second.reset();
        return Error(error);
      }
      outputs.clear();
      for (const auto& [name, d] : out) outputs += (outputs.empty() ? "" : ",") + Quote(name) + ":" + DimsJson(d);
      decided.clear();
      for (const auto& o : run->TakeDecided()) {
        decided += (decided.empty() ? "" : ",") + Quote(o.name) + ":{\"shape\":" + DimsJson(o.dims) + ",\"address\":" + std::to_string(o.address) +
                   ",\"bytes\":" + std::to_string(o.bytes) + "}";
        memory.free(o.address);  // as the addon's caller does once it has copied the bytes
      }
    }
  }
  std::printf("{\"ok\":true,\"io\":[%s],\"outputs\":{%s},\"decided\":{%s}}\n", io.c_str(), outputs.c_str(), decided.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "build") return Build(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "run") return Run(argc, argv);
  std::fprintf(stderr, "usage: driver build PROGRAM PLAN CACHE [cancel] | driver run PLAN [shape:N=d,..] [addr:N=x] [stream=x] [runs=n] [alloc=x|fail] [max=n]\n");
  return 2;
}
