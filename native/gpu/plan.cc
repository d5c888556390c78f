#include "plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <initializer_list>

namespace trtn::gpu {

namespace {

constexpr uint32_t kMagic = 0x504E5254;  // "TRNP" little-endian
constexpr uint32_t kVersion = 4;
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

// a · b · c ... without wrapping; false when the product exceeds 2^63.
bool Product(std::initializer_list<uint64_t> factors, uint64_t* out) {
  uint64_t value = 1;
  for (uint64_t f : factors) {
    if (__builtin_mul_overflow(value, f, &value) || value > (uint64_t(1) << 63)) return false;
  }
  *out = value;
  return true;
}

// Bytes a strided batch of `batch` matrices of `elements` each spans: (batch - 1)·stride + elements.
bool BatchExtent(uint64_t batch, uint64_t stride, uint64_t elements, uint64_t elementBytes, uint64_t* out) {
  uint64_t span = 0;
  if (!Product({batch - 1, stride}, &span) || __builtin_add_overflow(span, elements, &span)) return false;
  return Product({span, elementBytes}, out);
}

NativeError Unsupported(const std::string& why, size_t step) {
  return NativeError{"E_UNSUPPORTED_OP", "GPU plan step " + std::to_string(step) + ": " + why, {}, {{"step", double(step)}}, {}};
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
      // a, b, d, c (optional), bias (optional); u32 m, n, k, dtype, flags, batch, tune; u64 strideA,
      // strideB, strideD; f32 alpha, beta.
      size_t head = r.pos();
      Reader peek(data + head, size - head);
      cublaslt::GemmShape& g = step.gemm;
      uint32_t dtype = 0, flags = 0;
      if (!peek.Skip(60) || !peek.U32(&g.m) || !peek.U32(&g.n) || !peek.U32(&g.k) || !peek.U32(&dtype) ||
          !peek.U32(&flags) || !peek.U32(&g.batch) || !peek.U32(&g.tune) || !peek.U64(&g.strideA) || !peek.U64(&g.strideB) ||
          !peek.U64(&g.strideD) || !peek.Bytes(&g.alpha, 4) || !peek.Bytes(&g.beta, 4)) {
        *error = Malformed("truncated gemm", index, at);
        return false;
      }
      const uint64_t m = g.m, n = g.n, k = g.k, batch = g.batch;
      const uint32_t kMax = 0x7fffffffu;
      if (m == 0 || n == 0 || k == 0 || batch == 0 || g.m > kMax || g.n > kMax || g.k > kMax || g.batch > kMax) {
        *error = Malformed("gemm with an empty or oversized dimension (m, n, k and batch are 1 to 2^31 - 1)", index, at);
        return false;
      }
      if (dtype > 2 || (flags & ~15u) != 0) {
        *error = Malformed("gemm with an unknown dtype (" + std::to_string(dtype) + ") or flags (" + std::to_string(flags) + ")", index, at);
        return false;
      }
      g.dtype = static_cast<cublaslt::DType>(dtype);
      g.transA = (flags & 1) != 0;
      g.transB = (flags & 2) != 0;
      g.tf32 = (flags & 4) != 0;
      g.relu = (flags & 8) != 0;
      if (g.tf32 && g.dtype != cublaslt::DType::kFloat32) {
        *error = Malformed("gemm asks for TF32 on a non-float32 GEMM", index, at);
        return false;
      }
      if (batch > 1 && g.strideD < m * n) {
        *error = Malformed("gemm D batch stride " + std::to_string(g.strideD) + " makes output matrices of " +
                               std::to_string(m * n) + " elements overlap",
                           index, at);
        return false;
      }
      if (!std::isfinite(g.alpha) || !std::isfinite(g.beta)) {
        *error = Malformed("gemm alpha and beta must be finite", index, at);
        return false;
      }
      const uint64_t e = cublaslt::ElementBytes(g.dtype);
      uint64_t aBytes = 0, bBytes = 0, dBytes = 0;
      if (!BatchExtent(batch, g.strideA, m * k, e, &aBytes) || !BatchExtent(batch, g.strideB, k * n, e, &bBytes) ||
          !BatchExtent(batch, g.strideD, m * n, e, &dBytes)) {
        *error = Malformed("gemm operands larger than 2^63 bytes", index, at);
        return false;
      }
      if (!operand(aBytes, &step.ptrs[0], "gemm A") || !operand(bBytes, &step.ptrs[1], "gemm B") ||
          !operand(dBytes, &step.ptrs[2], "gemm D") || !operand(dBytes, &step.ptrs[3], "gemm C", true) ||
          !operand(n * e, &step.ptrs[4], "gemm bias", true)) {
        return false;
      }
      g.hasC = step.ptrs[3] != 0;
      g.hasBias = step.ptrs[4] != 0;
      if ((g.hasC || g.hasBias || g.relu) && batch > 1) {
        *error = Malformed("gemm with a C, a bias or a ReLU takes one matrix (batch 1), not " + std::to_string(batch), index, at);
        return false;
      }
      r.Skip(60);
    } else if (kind == kConv) {
      // x, w, bias, z, y; u32 spatial, dtype, flags; i32 n, c, k, groups; 3 × (in, kernel, pad, postPad,
      // stride, dilation, out).
      size_t head = r.pos();
      Reader peek(data + head, size - head);
      cudnn::ConvShape& s = step.conv;
      uint32_t spatial = 0, dtype = 0, flags = 0;
      bool ok = peek.Skip(60) && peek.U32(&spatial) && peek.U32(&dtype) && peek.U32(&flags) && peek.I32(&s.n) &&
                peek.I32(&s.c) && peek.I32(&s.k) && peek.I32(&s.groups);
      for (int i = 0; i < 3 && ok; ++i) {
        ok = peek.I32(&s.in[i]) && peek.I32(&s.kernel[i]) && peek.I32(&s.pad[i]) && peek.I32(&s.postPad[i]) &&
             peek.I32(&s.stride[i]) && peek.I32(&s.dilation[i]) && peek.I32(&s.out[i]);
      }
      if (!ok) {
        *error = Malformed("truncated convolution", index, at);
        return false;
      }
      // Flags: 1 transposed, 2 tf32 (fp32 only), 4 channels-last, 8 ReLU (4 and 8: forward only).
      if (spatial < 1 || spatial > 3 || dtype > 2 || (flags & ~15u) != 0 ||
          ((flags & 2) != 0 && dtype != 0) || ((flags & 1) != 0 && (flags & 12) != 0)) {
        *error = Malformed("convolution with " + std::to_string(spatial) + " spatial dims (1 to 3), dtype " +
                               std::to_string(dtype) + " or flags " + std::to_string(flags),
                           index, at);
        return false;
      }
      s.spatial = int32_t(spatial);
      s.dtype = int32_t(dtype);
      s.transposed = (flags & 1) != 0;
      s.tf32 = (flags & 2) != 0;
      s.channelsLast = (flags & 4) != 0;
      s.relu = (flags & 8) != 0;
      if (s.n <= 0 || s.c <= 0 || s.k <= 0 || s.groups <= 0) {
        *error = Malformed("convolution with a zero or negative size", index, at);
        return false;
      }
      if (s.c % s.groups != 0 || s.k % s.groups != 0) {
        *error = Malformed("convolution channels are not divisible by groups", index, at);
        return false;
      }
      uint64_t inElems = 1, kernelElems = 1, outElems = 1;
      for (int i = 0; i < 3; ++i) {
        const bool used = i < s.spatial;
        if (!used && (s.in[i] != 1 || s.kernel[i] != 1 || s.pad[i] != 0 || s.postPad[i] != 0 || s.stride[i] != 1 ||
                      s.dilation[i] != 1 || s.out[i] != 1)) {
          *error = Malformed("convolution spatial dim " + std::to_string(i) + " is unused but not 1, 1, 0, 0, 1, 1, 1", index, at);
          return false;
        }
        if (s.in[i] <= 0 || s.kernel[i] <= 0 || s.stride[i] <= 0 || s.dilation[i] <= 0 || s.out[i] <= 0 ||
            s.pad[i] < 0 || s.postPad[i] < 0) {
          *error = Malformed("convolution with a zero or negative size", index, at);
          return false;
        }
        const int64_t span = int64_t(s.dilation[i]) * (s.kernel[i] - 1) + 1;
        const int64_t expected = s.transposed
                                     ? (int64_t(s.in[i]) - 1) * s.stride[i] - s.pad[i] - s.postPad[i] + span
                                     : (int64_t(s.in[i]) + s.pad[i] + s.postPad[i] - span) / s.stride[i] + 1;
        if (!s.transposed && int64_t(s.in[i]) + s.pad[i] + s.postPad[i] < span) {
          *error = Malformed("convolution kernel is larger than the padded input in spatial dim " + std::to_string(i), index, at);
          return false;
        }
        if (expected != s.out[i]) {
          *error = Malformed("convolution output size " + std::to_string(s.out[i]) + " in spatial dim " + std::to_string(i) +
                                 ", but the geometry gives " + std::to_string(expected),
                             index, at);
          return false;
        }
        if (s.channelsLast && s.pad[i] != s.postPad[i]) {
          *error = Malformed("a channels-last convolution with asymmetric padding", index, at);
          return false;
        }
        if (s.transposed && (s.pad[i] < s.postPad[i] || s.pad[i] - s.postPad[i] >= s.stride[i])) {
          *error = Unsupported("a transposed convolution needs 0 <= pads - postPads < stride in every spatial dim (dim " +
                                   std::to_string(i) + ": pad " + std::to_string(s.pad[i]) + ", postPad " +
                                   std::to_string(s.postPad[i]) + ", stride " + std::to_string(s.stride[i]) + ")",
                               index);
          return false;
        }
        inElems *= uint64_t(s.in[i]);
        kernelElems *= uint64_t(s.kernel[i]);
        outElems *= uint64_t(s.out[i]);
      }
      const uint64_t e = s.dtype == 0 ? 4 : 2;
      const uint64_t perGroupOut = s.transposed ? uint64_t(s.k / s.groups) : uint64_t(s.c / s.groups);
      const uint64_t filters = s.transposed ? uint64_t(s.c) : uint64_t(s.k);
      uint64_t xBytes = 0, wBytes = 0, yBytes = 0;
      if (!Product({uint64_t(s.n), uint64_t(s.c), inElems, e}, &xBytes) ||
          !Product({filters, perGroupOut, kernelElems, e}, &wBytes) ||
          !Product({uint64_t(s.n), uint64_t(s.k), outElems, e}, &yBytes)) {
        *error = Malformed("convolution operands larger than 2^63 bytes", index, at);
        return false;
      }
      if (!operand(xBytes, &step.ptrs[0], "convolution input") || !operand(wBytes, &step.ptrs[1], "convolution weight") ||
          !operand(uint64_t(s.k) * e, &step.ptrs[2], "convolution bias", true) ||
          !operand(yBytes, &step.ptrs[3], "convolution residual", true) ||
          !operand(yBytes, &step.ptrs[4], "convolution output")) {
        return false;
      }
      step.hasBias = step.ptrs[2] != 0;
      s.residual = step.ptrs[3] != 0;
      if (s.residual && s.transposed) {
        *error = Malformed("a transposed convolution with a residual", index, at);
        return false;
      }
      r.Skip(112);
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
      cublaslt::GemmShape& g = step.gemm;
      const uint64_t e = cublaslt::ElementBytes(g.dtype);
      auto alignment = [&](cuda::CUdeviceptr ptr, uint64_t stride) {
        uint64_t bits = uint64_t(ptr) | 256 | (g.batch > 1 ? stride * e : 0);
        return uint32_t(bits & (~bits + 1));  // lowest set bit: what every matrix is aligned to
      };
      g.alignA = alignment(step.ptrs[0], g.strideA);
      g.alignB = alignment(step.ptrs[1], g.strideB);
      g.alignD = alignment(step.ptrs[2], g.strideD);
      if (g.hasC) g.alignC = alignment(step.ptrs[3], 0);
      if (!cublaslt::PrepareGemm(device, step.gemm, step.ptrs[4], &step.gemmOp, &need, error)) return false;
    } else if (step.kind == kConv) {
      if (!cudnn::PrepareConv(device, step.conv, step.hasBias, &step.convOp, &need, error)) return false;
    }
    workspaceBytes_ = std::max(workspaceBytes_, need);
  }
  // One workspace, allocated before any capture, so graphs hold no allocation nodes (§2.1).
  if (!cuda::Allocate(device, workspaceBytes_, &workspace_, error)) return false;
  // GEMM candidates timed on the plan's own buffers and workspace (their contents are not yet
  // the run's: every D is written before it is read), within the plan's timing budget.
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < steps_.size(); ++i) {
    PlanStep& step = steps_[i];
    if (step.kind != kGemm) continue;
    const double spentMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    const bool mayTime = tuningBudgetMs_ < 0 || spentMs < tuningBudgetMs_;
    if (!cublaslt::TuneGemm(*step.gemmOp, device, stream_, step.ptrs[0], step.ptrs[1], step.ptrs[3], step.ptrs[2],
                            workspace_, workspaceBytes_, mayTime, error)) {
      error->numbers["step"] = double(i);
      return false;
    }
  }
  return true;
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
        if (result != cuda::kSuccess) {
          cuda::Check(*device_, result, "cuMemcpyDtoDAsync_v2", error, where());
          error->numbers["step"] = double(i);
          return false;
        }
        break;
      }
      case kMemset: {
        cuda::CUresult result = api.cuMemsetD8Async(step.ptrs[0], step.value, step.bytes, stream_);
        if (result != cuda::kSuccess) {
          cuda::Check(*device_, result, "cuMemsetD8Async", error, where());
          error->numbers["step"] = double(i);
          return false;
        }
        break;
      }
      case kGemm:
        if (!cublaslt::EnqueueGemm(*step.gemmOp, stream_, step.ptrs[0], step.ptrs[1], step.ptrs[3], step.ptrs[2],
                                   workspace_, workspaceBytes_, error)) {
          error->numbers["step"] = double(i);
          return false;
        }
        break;
      case kConv:
        if (!cudnn::EnqueueConv(*step.convOp, stream_, step.ptrs[0], step.ptrs[1], step.ptrs[2], step.ptrs[3],
                                step.ptrs[4], workspace_, workspaceBytes_, error)) {
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

bool Plan::Submit(int times, bool replay, NativeError* error) {
  if (!cuda::MakeCurrent(*device_, error)) return false;
  bool ok = true;
  for (int i = 0; i < times && ok; ++i) {
    ok = replay ? cuda::Check(*device_, device_->api->cuGraphLaunch(exec_, stream_), "cuGraphLaunch", error) : Enqueue(error);
  }
  return ok;
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
