// Reading the replay program lib/backends/tensorrt/program.ts writes: a flat, little-endian
// sequence of ops. Bounds are checked on every read; a malformed program is an error naming
// the byte offset, never a read past the end. No TensorRT types here, so it compiles anywhere.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace trtn::trt {

enum class Op : uint8_t { kEnd = 0, kInput = 1, kLayer = 2, kOutput = 3, kProfile = 4, kConfig = 5 };

// Mirrors LAYER_OPCODE in lib/backends/tensorrt/program.ts.
enum class LayerOp : int32_t {
  kConstant = 1, kIdentity, kCast, kElementWise, kUnary, kActivation, kMatMul, kShuffle, kSlice, kConcat,
  kGather, kScatter, kReduce, kSoftMax, kShape, kFill, kSelect, kConvolution, kDeconvolution, kPooling,
  kNormalization, kResize, kTopK, kCumulative, kAttention, kQuantize, kDequantize, kNonZero,
};

constexpr char kProgramMagic[8] = {'T', 'R', 'T', 'N', 'P', 'L', 'A', 'Y'};
constexpr uint32_t kProgramVersion = 1;

class ProgramError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raw weights inside the program: TensorRT's Weights point at `data` (the program outlives the build).
struct RawWeights {
  int32_t dataType = -1;  // -1: absent (an empty Weights)
  std::vector<int64_t> dims;
  const void* data = nullptr;
  int64_t byteLength = 0;
};

class ProgramReader {
 public:
  ProgramReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t offset() const { return pos_; }

  void Header() {
    Need(8, "the magic");
    if (std::memcmp(data_, kProgramMagic, 8) != 0) Fail("the bytes are not a tensorrt-node replay program (magic)");
    pos_ = 8;
    const uint32_t version = U32();
    if (version != kProgramVersion) {
      Fail("replay program version " + std::to_string(version) + " is not the " + std::to_string(kProgramVersion) +
           " this addon reads (rebuild the addon and dist/ together)");
    }
  }

  uint8_t U8() { return Scalar<uint8_t>("u8"); }
  bool Bool() { return U8() != 0; }
  uint32_t U32() { return Scalar<uint32_t>("u32"); }
  int32_t I32() { return Scalar<int32_t>("i32"); }
  int64_t I64() { return Scalar<int64_t>("i64"); }
  double F64() { return Scalar<double>("f64"); }

  std::string Str() {
    const uint32_t n = U32();
    Need(n, "a string");
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

  std::vector<int64_t> Dims() {
    const uint32_t n = U32();
    if (n > 8) Fail("dims of rank " + std::to_string(n) + " (TensorRT allows 8)");
    std::vector<int64_t> d(n);
    for (auto& x : d) x = I64();
    return d;
  }

  const uint8_t* Bytes(size_t n) {
    Need(n, "bytes");
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }

  RawWeights Weights() {
    RawWeights w;
    w.dataType = I32();
    if (w.dataType < 0) return w;
    w.dims = Dims();
    w.byteLength = I64();
    if (w.byteLength < 0) Fail("weights with a negative length");
    while (pos_ % 8 != 0) Bytes(1);
    w.data = Bytes(static_cast<size_t>(w.byteLength));
    return w;
  }

  [[noreturn]] void Fail(const std::string& what) const {
    throw ProgramError("replay program, byte " + std::to_string(pos_) + ": " + what);
  }

 private:
  void Need(size_t n, const char* what) const {
    if (n > size_ - pos_) Fail(std::string("truncated while reading ") + what);
  }
  template <class T>
  T Scalar(const char* what) {
    Need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
    pos_ += sizeof(T);
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace trtn::trt
