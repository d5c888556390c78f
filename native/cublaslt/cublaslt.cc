#include "cublaslt.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../common/nvidia_library.h"
#include "cublaslt_api.h"

namespace trtn::cublaslt {

namespace {

const NvidiaLibrarySpec kSpec{
    "cublasLt", "TENSORRT_NODE_CUBLASLT_LIBRARY", {"libcublasLt.so.13", "libcublasLt.so.12"}, true,
    "Install cuBLAS 12 or 13 (e.g. `apt install libcublas-13-0`, or the pip package nvidia-cublas), and make sure "
    "the loader finds it (LD_LIBRARY_PATH or ldconfig)."};

// Workspace offered to the heuristic: 32 MiB on Hopper (gpu-execution.md §7.1).
constexpr uint64_t kMaxWorkspace = uint64_t(32) << 20;

void Resolve(void* handle, CublasLtApi* api, std::vector<std::string>* missing) {
#define TRTN_RESOLVE(name) ResolveSymbol(handle, #name, &api->name, missing);
  TRTN_CUBLASLT_ENTRY_POINTS(TRTN_RESOLVE)
#undef TRTN_RESOLVE
}

std::string CheckVersion(const CublasLtApi& api, double* version) {
  size_t v = api.cublasLtGetVersion();
  *version = double(v);
  if (v >= 120000 && v < 140000) return "";
  return "it reports version " + std::to_string(v) + ", and cuBLASLt 12.x or 13.x is needed";
}

// Handles per device, created on first use and never destroyed (no CUDA at exit).
struct Handles {
  std::mutex mutex;
  std::map<int, cublasLtHandle_t> byDevice;
};
Handles& DeviceHandles() {
  static auto* handles = new Handles();
  return *handles;
}

const LoadedLibrary<CublasLtApi>* Get(NativeError* error) { return GetNvidiaLibrary(kSpec, Resolve, CheckVersion, error); }

NativeError Failed(const CublasLtApi& api, const char* call, cublasStatus_t status, const std::string& context) {
  const char* text = api.cublasLtGetStatusString(status);
  std::string name = text != nullptr ? text : ("cuBLAS status " + std::to_string(status));
  return NativeError{"E_CUDA", std::string(call) + " failed with " + name + " " + context,
                     {{"call", call}, {"library", "cublasLt"}, {"status", name}}, {{"statusCode", double(status)}}, {}};
}

// The algorithm TuneGemm chose per device and problem (ProblemKey), kept for the process and
// seeded from timing cache files: plain data, never destroyed (no CUDA at exit).
struct TunedAlgos {
  std::mutex mutex;
  std::map<int, std::map<std::string, MatmulAlgo>> byDevice;
  uint64_t timed = 0, reused = 0, overBudget = 0;
};
TunedAlgos& Tuned() {
  static auto* tuned = new TunedAlgos();
  return *tuned;
}

}  // namespace

class Gemm {
 public:
  const CublasLtApi* api = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  MatmulAlgo algo{};
  // The heuristic's candidates, best ranked first (algo is one of them).
  std::vector<MatmulAlgo> candidates;
  GemmShape shape;
  int device = 0;
  ~Gemm() {
    if (a != nullptr) api->cublasLtMatrixLayoutDestroy(a);
    if (b != nullptr) api->cublasLtMatrixLayoutDestroy(b);
    if (c != nullptr) api->cublasLtMatrixLayoutDestroy(c);
    if (d != nullptr) api->cublasLtMatrixLayoutDestroy(d);
    if (desc != nullptr) api->cublasLtMatmulDescDestroy(desc);
  }
};

void GemmDeleter::operator()(Gemm* gemm) const { delete gemm; }

bool Info(LibraryInfo* out, NativeError* error) {
  const LoadedLibrary<CublasLtApi>* library = Get(error);
  if (library == nullptr) return false;
  out->libraryPath = library->path;
  out->version = library->version;
  return true;
}

bool PrepareGemm(cuda::Device& device, const GemmShape& shape, cuda::CUdeviceptr bias, GemmPtr* out,
                 size_t* workspaceBytes, NativeError* error) {
  const LoadedLibrary<CublasLtApi>* library = Get(error);
  if (library == nullptr) return false;
  const CublasLtApi& api = library->api;
  static const char* kNames[] = {"fp32", "fp16", "bf16"};
  std::string what = "for a " + std::to_string(shape.batch) + " x " + std::to_string(shape.m) + "x" +
                     std::to_string(shape.k) + (shape.transA ? "ᵀ" : "") + " by " + std::to_string(shape.k) + "x" +
                     std::to_string(shape.n) + (shape.transB ? "ᵀ" : "") + " " + kNames[int(shape.dtype)] +
                     (shape.tf32 ? " (TF32)" : "") + " GEMM" + (shape.hasBias ? " with a bias" : "") +
                     (shape.relu ? " and ReLU" : "");
  GemmPtr gemm(new Gemm());
  gemm->api = &api;
  gemm->shape = shape;
  gemm->device = device.ordinal;
  {
    Handles& handles = DeviceHandles();
    std::lock_guard<std::mutex> lock(handles.mutex);
    auto found = handles.byDevice.find(device.ordinal);
    if (found == handles.byDevice.end()) {
      cublasLtHandle_t handle = nullptr;
      cublasStatus_t status = api.cublasLtCreate(&handle);
      if (status != kSuccess) {
        *error = Failed(api, "cublasLtCreate", status, "on device " + std::to_string(device.ordinal));
        return false;
      }
      found = handles.byDevice.emplace(device.ordinal, handle).first;
    }
    gemm->handle = found->second;
  }
  cublasStatus_t status = kSuccess;
  const char* failed = nullptr;
  auto call = [&](const char* name, cublasStatus_t result) {
    if (failed == nullptr && result != kSuccess) {
      failed = name;
      status = result;
    }
  };
  const int compute = shape.tf32 ? kComputeType32FFastTf32 : kComputeType32F;
  const int type = shape.dtype == DType::kFloat16 ? kDataTypeR16F : shape.dtype == DType::kBFloat16 ? kDataTypeR16BF : kDataTypeR32F;
  call("cublasLtMatmulDescCreate", api.cublasLtMatmulDescCreate(&gemm->desc, compute, kDataTypeR32F));
  // Row-major D = op(A)·op(B) is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS's "A" is our B and its
  // "B" our A (gpu-execution.md §7.2). Row-major B (k×n) is column-major n×k, ld n, used as is;
  // a transposed B (stored n×k) is column-major k×n, ld k, used transposed. Likewise A.
  const uint64_t m = shape.m, n = shape.n, k = shape.k;
  const int32_t opA = shape.transB ? kOpT : kOpN, opB = shape.transA ? kOpT : kOpN;
  if (failed == nullptr) {
    call("cublasLtMatmulDescSetAttribute", api.cublasLtMatmulDescSetAttribute(gemm->desc, kDescTransA, &opA, sizeof(opA)));
    call("cublasLtMatmulDescSetAttribute", api.cublasLtMatmulDescSetAttribute(gemm->desc, kDescTransB, &opB, sizeof(opB)));
    call("cublasLtMatrixLayoutCreate", shape.transB ? api.cublasLtMatrixLayoutCreate(&gemm->a, type, k, n, int64_t(k))
                                                    : api.cublasLtMatrixLayoutCreate(&gemm->a, type, n, k, int64_t(n)));
    call("cublasLtMatrixLayoutCreate", shape.transA ? api.cublasLtMatrixLayoutCreate(&gemm->b, type, m, k, int64_t(m))
                                                    : api.cublasLtMatrixLayoutCreate(&gemm->b, type, k, m, int64_t(k)));
    call("cublasLtMatrixLayoutCreate", api.cublasLtMatrixLayoutCreate(&gemm->d, type, n, m, int64_t(n)));
    if (shape.hasC) call("cublasLtMatrixLayoutCreate", api.cublasLtMatrixLayoutCreate(&gemm->c, type, n, m, int64_t(n)));
    // The bias runs along cuBLAS's rows of D (our columns); set before the heuristic, which
    // reads the pointer for its alignment.
    if (shape.relu || shape.hasBias) {
      const uint32_t epilogue = shape.hasBias ? (shape.relu ? kEpilogueReluBias : kEpilogueBias) : kEpilogueRelu;
      call("cublasLtMatmulDescSetAttribute",
           api.cublasLtMatmulDescSetAttribute(gemm->desc, kDescEpilogue, &epilogue, sizeof(epilogue)));
    }
    if (shape.hasBias) {
      const void* biasPointer = reinterpret_cast<const void*>(static_cast<uintptr_t>(bias));
      call("cublasLtMatmulDescSetAttribute",
           api.cublasLtMatmulDescSetAttribute(gemm->desc, kDescBiasPointer, &biasPointer, sizeof(biasPointer)));
    }
  }
  if (failed == nullptr && shape.batch > 1) {
    const int32_t count = int32_t(shape.batch);
    const int64_t strides[3] = {int64_t(shape.strideB), int64_t(shape.strideA), int64_t(shape.strideD)};
    cublasLtMatrixLayout_t layouts[3] = {gemm->a, gemm->b, gemm->d};
    for (int i = 0; i < 3; ++i) {
      call("cublasLtMatrixLayoutSetAttribute",
           api.cublasLtMatrixLayoutSetAttribute(layouts[i], kLayoutBatchCount, &count, sizeof(count)));
      call("cublasLtMatrixLayoutSetAttribute",
           api.cublasLtMatrixLayoutSetAttribute(layouts[i], kLayoutStridedBatchOffset, &strides[i], sizeof(strides[i])));
    }
  }
  if (failed != nullptr) {
    *error = Failed(api, failed, status, what);
    return false;
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if ((status = api.cublasLtMatmulPreferenceCreate(&pref)) != kSuccess) {
    *error = Failed(api, "cublasLtMatmulPreferenceCreate", status, what);
    return false;
  }
  uint64_t limit = kMaxWorkspace;
  api.cublasLtMatmulPreferenceSetAttribute(pref, kPrefMaxWorkspaceBytes, &limit, sizeof(limit));
  // cuBLAS's "A" is our B: their alignments swap like the operands.
  const uint32_t alignments[4] = {shape.alignB, shape.alignA, shape.hasC ? shape.alignC : shape.alignD, shape.alignD};
  const int alignmentAttributes[4] = {kPrefMinAlignmentA, kPrefMinAlignmentB, kPrefMinAlignmentC, kPrefMinAlignmentD};
  for (int i = 0; i < 4; ++i) {
    api.cublasLtMatmulPreferenceSetAttribute(pref, alignmentAttributes[i], &alignments[i], sizeof(alignments[i]));
  }
  constexpr int kMaxCandidates = 16;
  MatmulHeuristicResult results[kMaxCandidates] = {};
  const int requested = int(std::min<uint32_t>(std::max<uint32_t>(shape.tune, 1), kMaxCandidates));
  int returned = 0;
  status = api.cublasLtMatmulAlgoGetHeuristic(gemm->handle, gemm->desc, gemm->a, gemm->b, gemm->c != nullptr ? gemm->c : gemm->d,
                                              gemm->d, pref, requested, results, &returned);
  api.cublasLtMatmulPreferenceDestroy(pref);
  if (status != kSuccess || returned == 0) {
    *error = Failed(api, "cublasLtMatmulAlgoGetHeuristic", status, what + " (no algorithm)");
    return false;
  }
  size_t need = 0;
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != kSuccess) continue;
    gemm->candidates.push_back(results[i].algo);
    need = std::max(need, results[i].workspaceSize);
  }
  if (gemm->candidates.empty()) {
    *error = Failed(api, "cublasLtMatmulAlgoGetHeuristic", results[0].state, what + " (no usable algorithm)");
    return false;
  }
  gemm->algo = gemm->candidates[0];
  *workspaceBytes = need;
  *out = std::move(gemm);
  return true;
}

namespace {

// Every field that decides the candidates or their speed (field by field: a struct's padding
// bytes are not part of its value), readable in a timing cache file. The device is not in it:
// choices are kept per device ordinal, and a file is scoped by the device's identity.
std::string ProblemKey(const Gemm& gemm) {
  const GemmShape& s = gemm.shape;
  std::string key;
  const std::pair<const char*, uint64_t> fields[] = {
      {"m", s.m},           {"n", s.n},           {"k", s.k},           {"dtype", uint64_t(s.dtype)},
      {"transA", s.transA}, {"transB", s.transB}, {"tf32", s.tf32},     {"relu", s.relu},
      {"c", s.hasC},        {"bias", s.hasBias},  {"batch", s.batch},   {"strideA", s.strideA},
      {"strideB", s.strideB}, {"strideD", s.strideD}, {"alignA", s.alignA}, {"alignB", s.alignB},
      {"alignC", s.alignC}, {"alignD", s.alignD}, {"beta", s.beta != 0.0f}};
  for (const auto& [name, value] : fields) {
    if (!key.empty()) key += ' ';
    key += std::string(name) + "=" + std::to_string(value);
  }
  return key;
}

}  // namespace

bool TuneGemm(Gemm& gemm, const cuda::Device& device, cuda::CUstream stream, cuda::CUdeviceptr a, cuda::CUdeviceptr b,
              cuda::CUdeviceptr c, cuda::CUdeviceptr d, cuda::CUdeviceptr workspace, size_t workspaceBytes,
              bool mayTime, NativeError* error) {
  const cuda::RuntimeApi& rt = *device.api;
  if (gemm.candidates.size() < 2 || rt.cuEventElapsedTime == nullptr) return true;
  // C is D when the problem has no C of its own: timing would then accumulate into D, which a
  // plan may have filled on purpose (beta != 0). Such GEMMs keep the heuristic's first choice.
  if (!gemm.shape.hasC && gemm.shape.beta != 0.0f) return true;
  const std::string key = ProblemKey(gemm);
  {
    // A remembered choice counts only while it is still one of the heuristic's candidates: a
    // cache file from another library build names algorithms this one may not offer.
    TunedAlgos& tuned = Tuned();
    std::lock_guard<std::mutex> lock(tuned.mutex);
    const auto& byProblem = tuned.byDevice[gemm.device];
    auto found = byProblem.find(key);
    if (found != byProblem.end()) {
      for (const MatmulAlgo& candidate : gemm.candidates) {
        if (std::memcmp(&candidate, &found->second, sizeof(MatmulAlgo)) == 0) {
          gemm.algo = candidate;
          ++tuned.reused;
          return true;
        }
      }
    }
    if (!mayTime) {
      ++tuned.overBudget;
      return true;
    }
  }
  // Each candidate's runs are captured as one CUDA graph and timed as a graph launch: enqueued
  // one by one, a few-microsecond GEMM would be timed at the host's launch rate. Two rounds over
  // all candidates, each keeping its faster: the first round also brings the clocks up.
  constexpr int kRuns = 10, kRounds = 2;
  const char* timing = "(timing GEMM algorithms)";
  struct Timed {
    MatmulAlgo algo;
    cuda::CUgraphExec exec = nullptr;
    float ms = -1;
  };
  std::vector<Timed> timed;
  cuda::CUevent start = nullptr, end = nullptr;
  bool ok = cuda::Check(device, rt.cuEventCreate(&start, 0), "cuEventCreate", error, timing) &&
            cuda::Check(device, rt.cuEventCreate(&end, 0), "cuEventCreate", error, timing);
  for (size_t i = 0; ok && i < gemm.candidates.size(); ++i) {
    gemm.algo = gemm.candidates[i];
    NativeError refused;
    // A first run outside the capture loads the kernel (lazy loading must not happen while
    // capturing) and drops a candidate the library refuses for these operands.
    if (!EnqueueGemm(gemm, stream, a, b, c, d, workspace, workspaceBytes, &refused)) continue;
    if (!cuda::Check(device, rt.cuStreamBeginCapture_v2(stream, cuda::kStreamCaptureModeThreadLocal),
                     "cuStreamBeginCapture_v2", error, timing)) {
      ok = false;
      break;
    }
    bool enqueued = true;
    for (int r = 0; r < kRuns && enqueued; ++r) enqueued = EnqueueGemm(gemm, stream, a, b, c, d, workspace, workspaceBytes, &refused);
    cuda::CUgraph graph = nullptr;
    const cuda::CUresult ended = rt.cuStreamEndCapture(stream, &graph);  // always end, or the stream stays capturing
    cuda::CUgraphExec exec = nullptr;
    const bool built = enqueued && ended == cuda::kSuccess && graph != nullptr &&
                       rt.cuGraphInstantiateWithFlags(&exec, graph, 0) == cuda::kSuccess;
    if (graph != nullptr) rt.cuGraphDestroy(graph);
    if (built) timed.push_back({gemm.candidates[i], exec, -1});
  }
  for (int round = 0; ok && round < kRounds; ++round) {
    for (Timed& t : timed) {
      float ms = 0;
      ok = cuda::Check(device, rt.cuEventRecord(start, stream), "cuEventRecord", error, timing) &&
           cuda::Check(device, rt.cuGraphLaunch(t.exec, stream), "cuGraphLaunch", error, timing) &&
           cuda::Check(device, rt.cuEventRecord(end, stream), "cuEventRecord", error, timing) &&
           cuda::Check(device, rt.cuEventSynchronize(end), "cuEventSynchronize", error, timing) &&
           cuda::Check(device, rt.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime", error, timing);
      if (!ok) break;
      if (t.ms < 0 || ms < t.ms) t.ms = ms;
    }
  }
  const Timed* best = nullptr;
  for (const Timed& t : timed) {
    if (t.ms >= 0 && (best == nullptr || t.ms < best->ms)) best = &t;
  }
  // No candidate timed (every one refused): the first stays, and its error comes from the run.
  gemm.algo = best != nullptr ? best->algo : gemm.candidates[0];
  for (const Timed& t : timed) rt.cuGraphExecDestroy(t.exec);
  if (start != nullptr) rt.cuEventDestroy_v2(start);
  if (end != nullptr) rt.cuEventDestroy_v2(end);
  if (!ok) return false;
  if (best == nullptr) return true;
  TunedAlgos& tuned = Tuned();
  std::lock_guard<std::mutex> lock(tuned.mutex);
  tuned.byDevice[gemm.device][key] = gemm.algo;
  ++tuned.timed;
  return true;
}

std::vector<TunedGemm> TunedGemms(int device) {
  TunedAlgos& tuned = Tuned();
  std::lock_guard<std::mutex> lock(tuned.mutex);
  std::vector<TunedGemm> out;
  for (const auto& [problem, algo] : tuned.byDevice[device]) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&algo);
    out.push_back({problem, std::vector<uint8_t>(bytes, bytes + sizeof(MatmulAlgo))});
  }
  return out;
}

size_t SeedTunedGemms(int device, const std::vector<TunedGemm>& entries) {
  static_assert(sizeof(MatmulAlgo) == kAlgorithmBytes, "cublasLtMatmulAlgo_t is 8 uint64_t");
  TunedAlgos& tuned = Tuned();
  std::lock_guard<std::mutex> lock(tuned.mutex);
  size_t taken = 0;
  for (const TunedGemm& entry : entries) {
    if (entry.algo.size() != sizeof(MatmulAlgo) || entry.problem.empty()) continue;
    MatmulAlgo algo;
    std::memcpy(&algo, entry.algo.data(), sizeof(MatmulAlgo));
    // What this process timed itself wins over a file's entry.
    if (tuned.byDevice[device].emplace(entry.problem, algo).second) ++taken;
  }
  return taken;
}

TuningCounts CountTuning() {
  TunedAlgos& tuned = Tuned();
  std::lock_guard<std::mutex> lock(tuned.mutex);
  return {tuned.timed, tuned.reused, tuned.overBudget};
}

bool EnqueueGemm(const Gemm& gemm, cuda::CUstream stream, cuda::CUdeviceptr a, cuda::CUdeviceptr b,
                 cuda::CUdeviceptr c, cuda::CUdeviceptr d, cuda::CUdeviceptr workspace, size_t workspaceBytes,
                 NativeError* error) {
  const float alpha = gemm.shape.alpha, beta = gemm.shape.beta;
  const CublasLtApi& api = *gemm.api;
  auto ptr = [](cuda::CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
  const bool ownC = gemm.c != nullptr;
  cublasStatus_t status =
      api.cublasLtMatmul(gemm.handle, gemm.desc, &alpha, ptr(b), gemm.a, ptr(a), gemm.b, &beta, ptr(ownC ? c : d),
                         ownC ? gemm.c : gemm.d, ptr(d), gemm.d, &gemm.algo, ptr(workspace), workspaceBytes, stream);
  if (status != kSuccess) {
    *error = Failed(api, "cublasLtMatmul", status, "");
    return false;
  }
  return true;
}

}  // namespace trtn::cublaslt
