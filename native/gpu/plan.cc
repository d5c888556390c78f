#include "plan.h"

#include <algorithm>
#include <cstring>

namespace trtn::gpu {

namespace {

constexpr uint32_t kMagic = 0x504E5254;  // "TRNP" little-endian
constexpr uint32_t kVersion = 1;
constexpr uint32_t kNoBuffer = 0xFFFFFFFFu;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool U32(uint32_t* out) { return Raw(out, 4); }
  bool U64(uint64_t* out) { return Raw(out, 8); }
  bool I32(int32_t* out) { return Raw(out, 4); }
  bool Bytes(void* out, size_t n) { return Raw(out, n); }
  bool Skip(size_t n) {
    if (size_ - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == size_; }

 private:
  bool Raw(void* out, size_t n) {
    if (size_ - pos_ < n) return false;
    std::memcpy(out, data_ + pos_, n);  // little-endian hosts only (x86-64, arm64)
    pos_ += n;
    return true;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

NativeError Malformed(const std::string& why, size_t step, size_t at) {
  return NativeError{"E_INVALID_ARGUMENT",
                     "The GPU plan is malformed at step " + std::to_string(step) + " (byte " + std::to_string(at) +
                         "): " + why,
                     {}, {{"step", double(step)}, {"offset", double(at)}}, {}};
}

}  // namespace

bool Plan::Decode(const uint8_t* data, size_t size, const std::vector<BufferRef>& buffers,
                  const std::vector<std::vector<KernelRef>>& modules, Plan* out, NativeError* error) {
  Reader r(data, size);
  uint32_t magic = 0, version = 0, count = 0;
  if (!r.U32(&magic) || !r.U32(&version) || !r.U32(&count) || magic != kMagic) {
    *error = Malformed("not a plan (bad header)", 0, 0);
    return false;
  }
  if (version != kVersion) {
    *error = Malformed("plan format version " + std::to_string(version) + ", expected " + std::to_string(kVersion), 0, 4);
    return false;
  }
  size_t index = 0;
  // A (buffer, offset) operand of `extent` bytes, resolved to a device pointer.
  auto operand = [&](uint64_t extent, cuda::CUdeviceptr* ptr, const char* role, bool optional = false) {
    size_t at = r.pos();
    uint32_t buffer = 0;
    uint64_t offset = 0;
    if (!r.U32(&buffer) || !r.U64(&offset)) {
      *error = Malformed(std::string("truncated ") + role + " operand", index, at);
      return false;
    }
    if (optional && buffer == kNoBuffer) {
      *ptr = 0;
      return true;
    }
    if (buffer >= buffers.size()) {
      *error = Malformed(std::string(role) + " names buffer " + std::to_string(buffer) + " but the plan has " +
                             std::to_string(buffers.size()),
                         index, at);
      return false;
    }
    const BufferRef& b = buffers[buffer];
    if (offset > b.bytes || extent > b.bytes - offset) {
      *error = Malformed(std::string(role) + " reads bytes [" + std::to_string(offset) + ", " +
                             std::to_string(offset + extent) + ") of buffer " + std::to_string(buffer) + ", which holds " +
                             std::to_string(b.bytes),
                         index, at);
      return false;
    }
    *ptr = b.ptr + offset;
    return true;
  };
  out->steps_.reserve(count);
  for (index = 0; index < count; ++index) {
    PlanStep step;
    uint32_t kind = 0;
    size_t at = r.pos();
    if (!r.U32(&kind)) {
      *error = Malformed("truncated step", index, at);
      return false;
    }
    step.kind = static_cast<StepKind>(kind);
    if (kind == kLaunch) {
      uint32_t module = 0, function = 0, relocs = 0, paramBytes = 0;
      bool ok = r.U32(&module) && r.U32(&function);
      for (int i = 0; i < 3 && ok; ++i) ok = r.U32(&step.grid[i]);
      for (int i = 0; i < 3 && ok; ++i) ok = r.U32(&step.block[i]);
      ok = ok && r.U32(&step.sharedBytes) && r.U32(&paramBytes) && r.U32(&relocs);
      if (!ok) {
        *error = Malformed("truncated launch", index, at);
        return false;
      }
      if (module >= modules.size() || function >= modules[module].size()) {
        *error = Malformed("launch names kernel " + std::to_string(function) + " of module " + std::to_string(module) +
                               ", which does not exist",
                           index, at);
        return false;
      }
      step.kernel = modules[module][function];
      step.paramBytes = paramBytes;
      step.params.assign((paramBytes + 7) / 8, 0);
      if (!r.Bytes(step.params.data(), paramBytes) || !r.Skip((4 - paramBytes % 4) % 4)) {
        *error = Malformed("truncated kernel arguments", index, at);
        return false;
      }
      for (uint32_t i = 0; i < relocs; ++i) {
        size_t relocAt = r.pos();
        uint32_t paramOffset = 0;
        if (!r.U32(&paramOffset)) {
          *error = Malformed("truncated pointer argument", index, relocAt);
          return false;
        }
        cuda::CUdeviceptr ptr = 0;
        if (!operand(0, &ptr, "pointer argument")) return false;
        if (paramOffset % 8 != 0 || paramOffset + 8 > paramBytes) {
          *error = Malformed("pointer argument at parameter byte " + std::to_string(paramOffset) +
                                 " is misaligned or outside the " + std::to_string(paramBytes) + "-byte argument buffer",
                             index, relocAt);
          return false;
        }
        std::memcpy(reinterpret_cast<uint8_t*>(step.params.data()) + paramOffset, &ptr, 8);
      }
    } else if (kind == kCopy) {
      size_t head = r.pos();
      uint64_t bytes = 0;
      // Extents are known only after the byte count, which comes last: peek it.
      Reader peek(data + head, size - head);
      if (!peek.Skip(24) || !peek.U64(&bytes)) {
        *error = Malformed("truncated copy", index, at);
        return false;
      }
      if (!operand(bytes, &step.ptrs[0], "copy destination") || !operand(bytes, &step.ptrs[1], "copy source")) {
        return false;
      }
      r.U64(&step.bytes);
    } else if (kind == kMemset) {
      size_t head = r.pos();
      uint64_t bytes = 0;
      Reader peek(data + head, size - head);
      if (!peek.Skip(12) || !peek.U64(&bytes)) {
        *error = Malformed("truncated memset", index, at);
        return false;
      }
      uint32_t value = 0;
      if (!operand(bytes, &step.ptrs[0], "memset destination")) return false;
      r.U64(&step.bytes);
      if (!r.U32(&value)) {
        *error = Malformed("truncated memset", index, at);
        return false;
      }
      step.value = static_cast<uint8_t>(value);
    } else if (kind == kGemm) {
      size_t head = r.pos();
      Reader peek(data + head, size - head);
      if (!peek.Skip(36) || !peek.U32(&step.gemm.m) || !peek.U32(&step.gemm.n) || !peek.U32(&step.gemm.k)) {
        *error = Malformed("truncated gemm", index, at);
        return false;
      }
      const uint64_t m = step.gemm.m, n = step.gemm.n, k = step.gemm.k;
      if (m == 0 || n == 0 || k == 0) {
        *error = Malformed("gemm with an empty dimension", index, at);
        return false;
      }
      if (!operand(m * k * 4, &step.ptrs[0], "gemm A") || !operand(k * n * 4, &step.ptrs[1], "gemm B") ||
          !operand(m * n * 4, &step.ptrs[2], "gemm D")) {
        return false;
      }
      r.Skip(12);
    } else if (kind == kConv) {
      size_t head = r.pos();
      Reader peek(data + head, size - head);
      cudnn::ConvShape& s = step.conv;
      int32_t* fields[] = {&s.n, &s.c, &s.h, &s.w, &s.k, &s.r, &s.s, &s.padH, &s.padW, &s.strideH, &s.strideW,
                           &s.dilationH, &s.dilationW, &s.groups, &s.outH, &s.outW};
      bool ok = peek.Skip(48);
      for (int32_t* field : fields) ok = ok && peek.I32(field);
      if (!ok) {
        *error = Malformed("truncated convolution", index, at);
        return false;
      }
      for (int32_t* field : fields) {
        if (*field < 0 || (*field == 0 && field != &s.padH && field != &s.padW)) {
          *error = Malformed("convolution with a zero or negative size", index, at);
          return false;
        }
      }
      if (s.c % s.groups != 0 || s.k % s.groups != 0) {
        *error = Malformed("convolution channels are not divisible by groups", index, at);
        return false;
      }
      const uint64_t xBytes = uint64_t(s.n) * s.c * s.h * s.w * 4;
      const uint64_t wBytes = uint64_t(s.k) * (s.c / s.groups) * s.r * s.s * 4;
      const uint64_t yBytes = uint64_t(s.n) * s.k * s.outH * s.outW * 4;
      if (!operand(xBytes, &step.ptrs[0], "convolution input") || !operand(wBytes, &step.ptrs[1], "convolution weight") ||
          !operand(uint64_t(s.k) * 4, &step.ptrs[2], "convolution bias", true) ||
          !operand(yBytes, &step.ptrs[3], "convolution output")) {
        return false;
      }
      step.hasBias = step.ptrs[2] != 0;
      r.Skip(64);
    } else {
      *error = Malformed("unknown step kind " + std::to_string(kind), index, at);
      return false;
    }
    out->steps_.push_back(std::move(step));
  }
  if (!r.done()) {
    *error = Malformed(std::to_string(size - r.pos()) + " trailing bytes after the last step", index, r.pos());
    return false;
  }
  return true;
}

bool Plan::Prepare(cuda::Device& device, NativeError* error) {
  device_ = &device;
  const cuda::RuntimeApi& api = *device.api;
  if (!cuda::MakeCurrent(device, error)) return false;
  if (!cuda::Check(device, api.cuStreamCreate(&stream_, cuda::kStreamNonBlocking), "cuStreamCreate", error)) return false;
  for (size_t i = 0; i < steps_.size(); ++i) {
    PlanStep& step = steps_[i];
    size_t need = 0;
    const std::string where = "(plan step " + std::to_string(i) + ")";
    if (step.kind == kLaunch && api.cuFuncGetParamInfo != nullptr) {
      // The parameter layout from the kernel image: a wrong argument count or size is refused here
      // instead of becoming a launch that reads garbage.
      size_t expected = 0, offset = 0, bytes = 0, count = 0;
      while (api.cuFuncGetParamInfo(step.kernel.function, count, &offset, &bytes) == cuda::kSuccess) {
        expected = std::max(expected, offset + bytes);
        ++count;
      }
      if (expected != step.paramBytes) {
        *error = NativeError{"E_INVALID_ARGUMENT",
                             "Kernel " + step.kernel.name + " takes " + std::to_string(count) + " parameters (" +
                                 std::to_string(expected) + " bytes), but plan step " + std::to_string(i) + " passes " +
                                 std::to_string(step.paramBytes) + " bytes of arguments.",
                             {{"kernel", step.kernel.name}},
                             {{"step", double(i)}, {"expectedBytes", double(expected)}, {"givenBytes", double(step.paramBytes)}},
                             {}};
        return false;
      }
      if (step.sharedBytes > 48 * 1024 &&
          !cuda::Check(device, api.cuFuncSetAttribute(step.kernel.function, cuda::kFuncAttrMaxDynamicSharedSize,
                                                      int(step.sharedBytes)),
                       "cuFuncSetAttribute", error, where)) {
        return false;
      }
    } else if (step.kind == kGemm) {
      if (!cublaslt::PrepareGemm(device, step.gemm, &step.gemmOp, &need, error)) return false;
    } else if (step.kind == kConv) {
      if (!cudnn::PrepareConv(device, step.conv, step.hasBias, &step.convOp, &need, error)) return false;
    }
    workspaceBytes_ = std::max(workspaceBytes_, need);
  }
  // One workspace, allocated before any capture, so graphs hold no allocation nodes (§2.1).
  return cuda::Allocate(device, workspaceBytes_, &workspace_, error);
}

bool Plan::Enqueue(NativeError* error) {
  const cuda::RuntimeApi& api = *device_->api;
  for (size_t i = 0; i < steps_.size(); ++i) {
    PlanStep& step = steps_[i];
    // Built only on failure: this loop is the launch path, once per step per run.
    auto where = [i] { return "(plan step " + std::to_string(i) + ")"; };
    switch (step.kind) {
      case kLaunch: {
        size_t paramBytes = step.paramBytes;
        void* extra[] = {reinterpret_cast<void*>(cuda::kLaunchParamBufferPointer), step.params.data(),
                         reinterpret_cast<void*>(cuda::kLaunchParamBufferSize), &paramBytes,
                         reinterpret_cast<void*>(cuda::kLaunchParamEnd)};
        cuda::CUresult result = api.cuLaunchKernel(step.kernel.function, step.grid[0], step.grid[1], step.grid[2],
                                             step.block[0], step.block[1], step.block[2], step.sharedBytes, stream_,
                                             nullptr, paramBytes == 0 ? nullptr : extra);
        if (result != cuda::kSuccess) {
          cuda::Check(*device_, result, "cuLaunchKernel", error, "launching " + step.kernel.name + " " + where());
          error->details["kernel"] = step.kernel.name;
          error->numbers["step"] = double(i);
          return false;
        }
        break;
      }
      case kCopy: {
        cuda::CUresult result = api.cuMemcpyDtoDAsync_v2(step.ptrs[0], step.ptrs[1], step.bytes, stream_);
        if (result != cuda::kSuccess) return cuda::Check(*device_, result, "cuMemcpyDtoDAsync_v2", error, where());
        break;
      }
      case kMemset: {
        cuda::CUresult result = api.cuMemsetD8Async(step.ptrs[0], step.value, step.bytes, stream_);
        if (result != cuda::kSuccess) return cuda::Check(*device_, result, "cuMemsetD8Async", error, where());
        break;
      }
      case kGemm:
        if (!cublaslt::EnqueueGemm(*step.gemmOp, stream_, step.ptrs[0], step.ptrs[1], step.ptrs[2], workspace_,
                                   workspaceBytes_, error)) {
          error->numbers["step"] = double(i);
          return false;
        }
        break;
      case kConv:
        if (!cudnn::EnqueueConv(*step.convOp, stream_, step.ptrs[0], step.ptrs[1], step.ptrs[2], step.ptrs[3],
                                workspace_, workspaceBytes_, error)) {
          error->numbers["step"] = double(i);
          return false;
        }
        break;
    }
  }
  return true;
}

bool Plan::Run(int times, NativeError* error) {
  if (!cuda::MakeCurrent(*device_, error)) return false;
  bool ok = true;
  for (int i = 0; i < times && ok; ++i) ok = Enqueue(error);
  // Wait even after a failed enqueue: the steps already queued must finish before buffers move.
  cuda::CUresult sync = device_->api->cuStreamSynchronize(stream_);
  if (ok) return cuda::Check(*device_, sync, "cuStreamSynchronize", error, "after running a plan");
  return false;
}

bool Plan::Capture(NativeError* error) {
  if (!cuda::MakeCurrent(*device_, error)) return false;
  const cuda::RuntimeApi& api = *device_->api;
  // Lazy loading resolves a kernel at its first launch, which must not happen inside a capture.
  if (!Run(1, error)) return false;
  if (!cuda::Check(*device_, api.cuStreamBeginCapture_v2(stream_, cuda::kStreamCaptureModeThreadLocal),
                   "cuStreamBeginCapture_v2", error)) {
    return false;
  }
  NativeError enqueueError;
  bool enqueued = Enqueue(&enqueueError);
  cuda::CUgraph graph = nullptr;
  cuda::CUresult ended = api.cuStreamEndCapture(stream_, &graph);  // always end, or the stream stays capturing
  if (!enqueued) {
    if (graph != nullptr) api.cuGraphDestroy(graph);
    *error = enqueueError;
    error->message += " (while capturing the plan into a CUDA graph)";
    return false;
  }
  if (!cuda::Check(*device_, ended, "cuStreamEndCapture", error)) return false;
  cuda::CUgraphExec exec = nullptr;
  cuda::CUresult instantiated = api.cuGraphInstantiateWithFlags(&exec, graph, 0);
  api.cuGraphDestroy(graph);
  if (!cuda::Check(*device_, instantiated, "cuGraphInstantiateWithFlags", error)) return false;
  if (exec_ != nullptr) api.cuGraphExecDestroy(exec_);
  exec_ = exec;
  return true;
}

bool Plan::Replay(int times, NativeError* error) {
  if (!cuda::MakeCurrent(*device_, error)) return false;
  const cuda::RuntimeApi& api = *device_->api;
  bool ok = true;
  for (int i = 0; i < times && ok; ++i) {
    ok = cuda::Check(*device_, api.cuGraphLaunch(exec_, stream_), "cuGraphLaunch", error);
  }
  cuda::CUresult sync = api.cuStreamSynchronize(stream_);
  return ok && cuda::Check(*device_, sync, "cuStreamSynchronize", error, "after replaying a plan");
}

void Plan::Release() {
  if (device_ == nullptr) return;
  NativeError ignored;
  if (!cuda::MakeCurrent(*device_, &ignored)) return;
  const cuda::RuntimeApi& api = *device_->api;
  if (exec_ != nullptr) api.cuGraphExecDestroy(exec_);
  exec_ = nullptr;
  if (workspace_ != 0) {
    // Stream order on the plan's stream: the free waits for the plan's last work.
    api.cuMemFreeAsync(workspace_, stream_);
    workspace_ = 0;
  }
  if (stream_ != nullptr) api.cuStreamDestroy_v2(stream_);
  stream_ = nullptr;
  steps_.clear();
  device_ = nullptr;
}

}  // namespace trtn::gpu
