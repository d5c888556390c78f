// Compiled only with TensorRT's headers (TRTN_WITH_TENSORRT; binding.gyp, CMakeLists.txt).
#ifdef TRTN_WITH_TENSORRT

#include "build.h"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include "library.h"
#include "program.h"

namespace trtn::trt {

namespace nv = nvinfer1;

namespace {

// A TensorRT call returned nullptr/false: carries what was being done.
struct TrtFailure {
  std::string what;
};

template <class T>
struct Deleter {
  void operator()(T* p) const { delete p; }
};
template <class T>
using Owned = std::unique_ptr<T, Deleter<T>>;

nv::Dims ToDims(const std::vector<int64_t>& v) {
  nv::Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

nv::Permutation ToPermutation(ProgramReader& r, const std::vector<int64_t>& v) {
  nv::Permutation p{};
  for (int i = 0; i < nv::Dims::MAX_DIMS; ++i) p.order[i] = i;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= static_cast<int64_t>(v.size())) r.Fail("a permutation entry is out of range");
    p.order[i] = static_cast<int32_t>(v[i]);
  }
  return p;
}

// The DataType numbers lib/backends/tensorrt/enums.ts writes (DATA_TYPE), held to the headers.
static_assert(static_cast<int32_t>(nv::DataType::kFLOAT) == 0 && static_cast<int32_t>(nv::DataType::kHALF) == 1 &&
                  static_cast<int32_t>(nv::DataType::kINT8) == 2 && static_cast<int32_t>(nv::DataType::kINT32) == 3 &&
                  static_cast<int32_t>(nv::DataType::kBOOL) == 4 && static_cast<int32_t>(nv::DataType::kUINT8) == 5 &&
                  static_cast<int32_t>(nv::DataType::kFP8) == 6 && static_cast<int32_t>(nv::DataType::kBF16) == 7 &&
                  static_cast<int32_t>(nv::DataType::kINT64) == 8 && static_cast<int32_t>(nv::DataType::kINT4) == 9,
              "nvinfer1::DataType differs from DATA_TYPE in lib/backends/tensorrt/enums.ts");

int64_t ElementBytes(ProgramReader& r, int32_t dataType) {
  switch (static_cast<nv::DataType>(dataType)) {
    case nv::DataType::kFLOAT:
    case nv::DataType::kINT32:
      return 4;
    case nv::DataType::kHALF:
    case nv::DataType::kBF16:
      return 2;
    case nv::DataType::kINT8:
    case nv::DataType::kBOOL:
    case nv::DataType::kUINT8:
    case nv::DataType::kFP8:
      return 1;
    case nv::DataType::kINT64:
      return 8;
    default:
      r.Fail("weights of DataType " + std::to_string(dataType));
  }
}

nv::Weights ToWeights(ProgramReader& r, const RawWeights& w) {
  if (w.dataType < 0) return nv::Weights{nv::DataType::kFLOAT, nullptr, 0};
  if (static_cast<nv::DataType>(w.dataType) == nv::DataType::kINT4) {
    // INT4 weights come packed two values a byte; TensorRT counts them in values, not bytes.
    int64_t count = 1;
    for (const int64_t d : w.dims) {
      if (d < 0 || (d > 0 && count > INT64_MAX / d)) r.Fail("INT4 weights of unknown or overflowing size");
      count *= d;
    }
    if (w.byteLength != (count + 1) / 2) r.Fail("INT4 weights whose length is not half their value count, rounded up");
    return nv::Weights{nv::DataType::kINT4, w.data, count};
  }
  const int64_t item = ElementBytes(r, w.dataType);
  if (w.byteLength % item != 0) r.Fail("weights whose length is not a multiple of their element size");
  return nv::Weights{static_cast<nv::DataType>(w.dataType), w.data, w.byteLength / item};
}

// Replays the layers, inputs, outputs and profiles of a program into `net`.
class Replayer {
 public:
  Replayer(ProgramReader& r, nv::IBuilder& builder, nv::INetworkDefinition& net, nv::IBuilderConfig& config)
      : r_(r), builder_(builder), net_(net), config_(config) {}

  void Input() {
    const int32_t id = r_.I32();
    const std::string name = r_.Str();
    const int32_t type = r_.I32();
    const auto dims = r_.Dims();
    nv::ITensor* t = net_.addInput(name.c_str(), static_cast<nv::DataType>(type), ToDims(dims));
    if (t == nullptr) throw TrtFailure{"addInput(\"" + name + "\")"};
    Define(id, t);
  }

  void Output() {
    const int32_t id = r_.I32();
    const std::string name = r_.Str();
    nv::ITensor& t = Tensor(id);
    t.setName(name.c_str());
    net_.markOutput(t);
  }

  void Profile() {
    nv::IOptimizationProfile* profile = builder_.createOptimizationProfile();
    if (profile == nullptr) throw TrtFailure{"createOptimizationProfile()"};
    const uint32_t n = r_.U32();
    for (uint32_t i = 0; i < n; ++i) {
      const std::string name = r_.Str();
      const auto mn = r_.Dims(), opt = r_.Dims(), mx = r_.Dims();
      if (!profile->setDimensions(name.c_str(), nv::OptProfileSelector::kMIN, ToDims(mn)) ||
          !profile->setDimensions(name.c_str(), nv::OptProfileSelector::kOPT, ToDims(opt)) ||
          !profile->setDimensions(name.c_str(), nv::OptProfileSelector::kMAX, ToDims(mx))) {
        throw TrtFailure{"IOptimizationProfile::setDimensions(\"" + name + "\")"};
      }
    }
    if (config_.addOptimizationProfile(profile) < 0) throw TrtFailure{"addOptimizationProfile()"};
  }

  void Layer() {
    const auto op = static_cast<LayerOp>(r_.I32());
    name_ = r_.Str();
    inputs_.assign(r_.U32(), -1);
    for (auto& id : inputs_) id = r_.I32();
    outputs_.clear();
    const uint32_t nOut = r_.U32();
    for (uint32_t i = 0; i < nOut; ++i) {
      const int32_t id = r_.I32();
      outputs_.emplace_back(id, r_.Str());
    }
    if (op == LayerOp::kAttention) {
      AddAttention();
      return;
    }
    nv::ILayer* layer = Add(op);
    if (layer == nullptr) throw TrtFailure{"adding layer \"" + name_ + "\""};
    layer->setName(name_.c_str());
    for (size_t i = 0; i < outputs_.size(); ++i) {
      nv::ITensor* t = layer->getOutput(static_cast<int32_t>(i));
      if (t == nullptr) throw TrtFailure{"layer \"" + name_ + "\" output " + std::to_string(i)};
      t->setName(outputs_[i].second.c_str());
      Define(outputs_[i].first, t);
    }
  }

  // IAttention is no ILayer: it is named and read through its own methods. Softmax
  // normalization; decomposable, so that shapes without a fused kernel still build.
  void AddAttention() {
    const bool causal = r_.Bool();
    nv::IAttention* a = net_.addAttention(In(0), In(1), In(2), nv::AttentionNormalizationOp::kSOFTMAX, causal);
    if (a == nullptr) throw TrtFailure{"adding attention \"" + name_ + "\""};
    if (Has(3) && !a->setMask(In(3))) throw TrtFailure{"IAttention::setMask for \"" + name_ + "\""};
    if (!a->setDecomposable(true)) throw TrtFailure{"IAttention::setDecomposable for \"" + name_ + "\""};
    a->setName(name_.c_str());
    if (outputs_.size() != 1) r_.Fail("attention \"" + name_ + "\" has " + std::to_string(outputs_.size()) + " outputs, not 1");
    nv::ITensor* t = a->getOutput(0);
    if (t == nullptr) throw TrtFailure{"attention \"" + name_ + "\" output 0"};
    t->setName(outputs_[0].second.c_str());
    Define(outputs_[0].first, t);
  }

 private:
  nv::ITensor& Tensor(int32_t id) {
    auto it = tensors_.find(id);
    if (it == tensors_.end()) r_.Fail("tensor " + std::to_string(id) + " is used before it is defined");
    return *it->second;
  }
  void Define(int32_t id, nv::ITensor* t) {
    if (!tensors_.emplace(id, t).second) r_.Fail("tensor " + std::to_string(id) + " is defined twice");
  }
  nv::ITensor& In(size_t k) {
    if (k >= inputs_.size() || inputs_[k] < 0) r_.Fail("layer \"" + name_ + "\" lacks input " + std::to_string(k));
    return Tensor(inputs_[k]);
  }
  bool Has(size_t k) const { return k < inputs_.size() && inputs_[k] >= 0; }
  // Optional inputs (shape tensors) replace the static parameter of the same role.
  void SetOptionalInputs(nv::ILayer* layer, size_t from, size_t to) {
    for (size_t k = from; k <= to; ++k) {
      if (Has(k)) layer->setInput(static_cast<int32_t>(k), In(k));
    }
  }

  nv::ILayer* Add(LayerOp op) {
    switch (op) {
      case LayerOp::kConstant: {
        const RawWeights w = r_.Weights();
        if (w.dataType < 0) r_.Fail("constant \"" + name_ + "\" has no weights");
        return net_.addConstant(ToDims(w.dims), ToWeights(r_, w));
      }
      case LayerOp::kIdentity:
        return net_.addIdentity(In(0));
      case LayerOp::kCast:
        return net_.addCast(In(0), static_cast<nv::DataType>(r_.I32()));
      case LayerOp::kElementWise:
        return net_.addElementWise(In(0), In(1), static_cast<nv::ElementWiseOperation>(r_.I32()));
      case LayerOp::kUnary:
        return net_.addUnary(In(0), static_cast<nv::UnaryOperation>(r_.I32()));
      case LayerOp::kActivation: {
        const auto type = static_cast<nv::ActivationType>(r_.I32());
        const bool hasAlpha = r_.Bool();
        const double alpha = r_.F64();
        const bool hasBeta = r_.Bool();
        const double beta = r_.F64();
        nv::IActivationLayer* l = net_.addActivation(In(0), type);
        if (l == nullptr) return nullptr;
        if (hasAlpha) l->setAlpha(static_cast<float>(alpha));
        if (hasBeta) l->setBeta(static_cast<float>(beta));
        return l;
      }
      case LayerOp::kMatMul: {
        const auto a = static_cast<nv::MatrixOperation>(r_.I32());
        const auto b = static_cast<nv::MatrixOperation>(r_.I32());
        return net_.addMatrixMultiply(In(0), a, In(1), b);
      }
      case LayerOp::kShuffle: {
        nv::IShuffleLayer* l = net_.addShuffle(In(0));
        if (l == nullptr) return nullptr;
        if (r_.Bool()) l->setFirstTranspose(ToPermutation(r_, r_.Dims()));
        if (r_.Bool()) l->setReshapeDimensions(ToDims(r_.Dims()));
        if (r_.Bool()) l->setSecondTranspose(ToPermutation(r_, r_.Dims()));
        l->setZeroIsPlaceholder(r_.Bool());
        SetOptionalInputs(l, 1, 1);
        return l;
      }
      case LayerOp::kSlice: {
        const auto start = r_.Dims(), size = r_.Dims(), stride = r_.Dims();
        const auto mode = static_cast<nv::SampleMode>(r_.I32());
        nv::ISliceLayer* l = net_.addSlice(In(0), ToDims(start), ToDims(size), ToDims(stride));
        if (l == nullptr) return nullptr;
        l->setMode(mode);
        SetOptionalInputs(l, 1, 4);
        return l;
      }
      case LayerOp::kConcat: {
        std::vector<nv::ITensor*> ins;
        for (size_t k = 0; k < inputs_.size(); ++k) ins.push_back(&In(k));
        nv::IConcatenationLayer* l = net_.addConcatenation(ins.data(), static_cast<int32_t>(ins.size()));
        const int32_t axis = r_.I32();
        if (l != nullptr) l->setAxis(axis);  // the default is nbDims-3, never what the IR means
        return l;
      }
      case LayerOp::kGather: {
        const auto mode = static_cast<nv::GatherMode>(r_.I32());
        const int32_t axis = r_.I32();
        const int32_t nbElementWiseDims = r_.I32();
        nv::IGatherLayer* l = net_.addGatherV2(In(0), In(1), mode);
        if (l == nullptr) return nullptr;
        if (mode != nv::GatherMode::kND) l->setGatherAxis(axis);
        if (nbElementWiseDims >= 0) l->setNbElementWiseDims(nbElementWiseDims);
        return l;
      }
      case LayerOp::kScatter: {
        const auto mode = static_cast<nv::ScatterMode>(r_.I32());
        const int32_t axis = r_.I32();
        nv::IScatterLayer* l = net_.addScatter(In(0), In(1), In(2), mode);
        if (l != nullptr && mode == nv::ScatterMode::kELEMENT) l->setAxis(axis);
        return l;
      }
      case LayerOp::kReduce: {
        const auto op = static_cast<nv::ReduceOperation>(r_.I32());
        const uint32_t mask = r_.U32();
        const bool keep = r_.Bool();
        return net_.addReduce(In(0), op, mask, keep);
      }
      case LayerOp::kSoftMax: {
        const uint32_t mask = r_.U32();
        nv::ISoftMaxLayer* l = net_.addSoftMax(In(0));
        if (l != nullptr) l->setAxes(mask);
        return l;
      }
      case LayerOp::kShape:
        return net_.addShape(In(0));
      case LayerOp::kFill: {
        const auto dims = r_.Dims();
        const auto type = static_cast<nv::DataType>(r_.I32());
        nv::IFillLayer* l = net_.addFill(ToDims(dims), nv::FillOperation::kLINSPACE, type);
        if (l == nullptr) return nullptr;
        SetOptionalInputs(l, 0, 2);
        return l;
      }
      case LayerOp::kSelect:
        return net_.addSelect(In(0), In(1), In(2));
      case LayerOp::kConvolution:
      case LayerOp::kDeconvolution: {
        const int32_t maps = r_.I32();
        const auto kernelSize = r_.Dims();
        const RawWeights kernel = r_.Weights();
        const RawWeights bias = r_.Weights();
        const auto stride = r_.Dims(), pre = r_.Dims(), post = r_.Dims(), dilation = r_.Dims();
        const int32_t groups = r_.I32();
        // IConvolutionLayer and IDeconvolutionLayer have the same setters but no common base.
        auto configure = [&](auto* l) -> nv::ILayer* {
          if (l == nullptr) return nullptr;
          l->setStrideNd(ToDims(stride));
          l->setPrePadding(ToDims(pre));
          l->setPostPadding(ToDims(post));
          l->setDilationNd(ToDims(dilation));
          l->setNbGroups(groups);
          SetOptionalInputs(l, 1, 2);
          return l;
        };
        if (op == LayerOp::kConvolution) {
          return configure(net_.addConvolutionNd(In(0), maps, ToDims(kernelSize), ToWeights(r_, kernel), ToWeights(r_, bias)));
        }
        return configure(net_.addDeconvolutionNd(In(0), maps, ToDims(kernelSize), ToWeights(r_, kernel), ToWeights(r_, bias)));
      }
      case LayerOp::kPooling: {
        const auto type = static_cast<nv::PoolingType>(r_.I32());
        const auto window = r_.Dims(), stride = r_.Dims(), pre = r_.Dims(), post = r_.Dims();
        const auto mode = static_cast<nv::PaddingMode>(r_.I32());
        const bool exclude = r_.Bool();
        nv::IPoolingLayer* l = net_.addPoolingNd(In(0), type, ToDims(window));
        if (l == nullptr) return nullptr;
        l->setStrideNd(ToDims(stride));
        l->setPrePadding(ToDims(pre));
        l->setPostPadding(ToDims(post));
        l->setPaddingMode(mode);
        l->setAverageCountExcludesPadding(exclude);
        return l;
      }
      case LayerOp::kNormalization: {
        const uint32_t mask = r_.U32();
        const double epsilon = r_.F64();
        const int32_t groups = r_.I32();
        nv::INormalizationLayer* l = net_.addNormalizationV2(In(0), In(1), In(2), mask);
        if (l == nullptr) return nullptr;
        l->setEpsilon(static_cast<float>(epsilon));
        l->setNbGroups(groups);
        return l;
      }
      case LayerOp::kResize: {
        const auto mode = static_cast<nv::InterpolationMode>(r_.I32());
        const auto dims = r_.Dims();
        const auto coord = static_cast<nv::ResizeCoordinateTransformation>(r_.I32());
        const auto selector = static_cast<nv::ResizeSelector>(r_.I32());
        const auto rounding = static_cast<nv::ResizeRoundMode>(r_.I32());
        nv::IResizeLayer* l = net_.addResize(In(0));
        if (l == nullptr) return nullptr;
        l->setResizeMode(mode);
        if (Has(1)) {
          l->setInput(1, In(1));
        } else {
          l->setOutputDimensions(ToDims(dims));
        }
        // Set every time: TensorRT's defaults (asymmetric, floor) are not the IR's.
        l->setCoordinateTransformation(coord);
        l->setSelectorForSinglePixel(selector);
        l->setNearestRounding(rounding);
        return l;
      }
      case LayerOp::kTopK: {
        const auto op = static_cast<nv::TopKOperation>(r_.I32());
        const int32_t k = r_.I32();
        const uint32_t mask = r_.U32();
        const auto indices = static_cast<nv::DataType>(r_.I32());
        return net_.addTopK(In(0), op, k, mask, indices);
      }
      case LayerOp::kAttention:
        break;  // not an ILayer: AddAttention()
      case LayerOp::kQuantize:
      case LayerOp::kDequantize: {
        const auto type = static_cast<nv::DataType>(r_.I32());
        const int32_t axis = r_.I32();
        const auto block = r_.Dims();
        // IQuantizeLayer and IDequantizeLayer have the same setters but no common base. The
        // output type is given at creation, as a strongly typed network requires.
        auto configure = [&](auto* l) -> nv::ILayer* {
          if (l == nullptr) return nullptr;
          l->setAxis(axis);
          if (!block.empty() && !l->setBlockShape(ToDims(block))) throw TrtFailure{"setBlockShape for \"" + name_ + "\""};
          SetOptionalInputs(l, 2, 2);  // the zero point (zeros: TensorRT's quantization is symmetric)
          return l;
        };
        if (op == LayerOp::kQuantize) return configure(net_.addQuantize(In(0), In(1), type));
        return configure(net_.addDequantize(In(0), In(1), type));
      }
      case LayerOp::kCumulative: {
        const auto op = static_cast<nv::CumulativeOperation>(r_.I32());
        const bool exclusive = r_.Bool();
        const bool reverse = r_.Bool();
        return net_.addCumulative(In(0), In(1), op, exclusive, reverse);
      }
      case LayerOp::kNonZero: {
        // The indices type at creation (the one-argument form, deprecated in 10.14, gives kINT32).
        const auto indicesType = static_cast<nv::DataType>(r_.I32());
        return net_.addNonZero(In(0), indicesType);
      }
    }
    r_.Fail("unknown layer opcode " + std::to_string(static_cast<int32_t>(op)) + " for \"" + name_ + "\"");
  }

  ProgramReader& r_;
  nv::IBuilder& builder_;
  nv::INetworkDefinition& net_;
  nv::IBuilderConfig& config_;
  std::unordered_map<int32_t, nv::ITensor*> tensors_;
  std::string name_;
  std::vector<int32_t> inputs_;
  std::vector<std::pair<int32_t, std::string>> outputs_;
};

struct Config {
  int32_t optimizationLevel = 3;
  int64_t workspaceBytes = -1;
  bool tf32 = true;
  int32_t hardwareCompatibility = 0;
  bool versionCompatible = false;
  std::vector<uint8_t> timingCache;
};

Config ReadConfig(ProgramReader& r) {
  if (static_cast<Op>(r.U8()) != Op::kConfig) r.Fail("the program does not start with its build configuration");
  Config c;
  c.optimizationLevel = r.I32();
  c.workspaceBytes = r.I64();
  c.tf32 = r.Bool();
  c.hardwareCompatibility = r.I32();
  c.versionCompatible = r.Bool();
  const int64_t n = r.I64();
  if (n < 0) r.Fail("a negative timing cache length");
  const uint8_t* p = r.Bytes(static_cast<size_t>(n));
  c.timingCache.assign(p, p + n);
  return c;
}

void ApplyConfig(const Config& c, nv::IBuilder& builder, nv::IBuilderConfig& config, Owned<nv::ITimingCache>* cache) {
  config.setBuilderOptimizationLevel(c.optimizationLevel);
  if (c.workspaceBytes > 0) config.setMemoryPoolLimit(nv::MemoryPoolType::kWORKSPACE, static_cast<size_t>(c.workspaceBytes));
  // Precisions other than TF32 are the network's own dtypes in a strongly typed network
  // (kFP16/kBF16 are deprecated since 10.12 and rejected there); TF32 is on by default.
  if (!c.tf32) config.clearFlag(nv::BuilderFlag::kTF32);
  config.setHardwareCompatibilityLevel(static_cast<nv::HardwareCompatibilityLevel>(c.hardwareCompatibility));
  if (c.versionCompatible) config.setFlag(nv::BuilderFlag::kVERSION_COMPATIBLE);
  cache->reset(config.createTimingCache(c.timingCache.data(), c.timingCache.size()));
  if (*cache == nullptr) throw TrtFailure{"createTimingCache()"};
  // ignoreMismatch: a cache from another device is merely less useful, not wrong.
  if (!config.setTimingCache(**cache, true)) throw TrtFailure{"setTimingCache()"};
  (void)builder;
}

}  // namespace

bool BuildEngine(const uint8_t* program, size_t size, BuildEvents* events, BuildOutput* out, NativeError* error) {
  LibraryInfo lib;
  if (!FindApi(&lib, NV_TENSORRT_VERSION, error)) return false;
  Logger logger(events);
  auto fail = [&](const std::string& what) {
    std::string message = "TensorRT failed at " + what;
    const std::string last = logger.LastError();
    message += last.empty() ? " (TensorRT logged no error)" : ": " + last;
    *error = NativeError{"E_TENSORRT", message, {{"call", what}, {"tensorrtMessage", last}}, {}, {}};
    return false;
  };
  try {
    ProgramReader r(program, size);
    r.Header();
    const Config config = ReadConfig(r);
    // Destroyed in reverse order: network, config, builder, then the monitor and the timing
    // cache they use (the cache must outlive its builders, H:NvInfer.h:11643).
    Owned<nv::ITimingCache> cache;
    ProgressMonitor monitor(events);
    Owned<nv::IBuilder> builder(static_cast<nv::IBuilder*>(lib.createInferBuilder(&logger, NV_TENSORRT_VERSION)));
    if (builder == nullptr) return fail("createInferBuilder");
    Owned<nv::IBuilderConfig> builderConfig(builder->createBuilderConfig());
    if (builderConfig == nullptr) return fail("createBuilderConfig()");
    Owned<nv::INetworkDefinition> network(
        builder->createNetworkV2(1U << static_cast<uint32_t>(nv::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED)));
    if (network == nullptr) return fail("createNetworkV2(kSTRONGLY_TYPED)");
    ApplyConfig(config, *builder, *builderConfig, &cache);
    builderConfig->setProgressMonitor(&monitor);
    Replayer replay(r, *builder, *network, *builderConfig);
    for (bool done = false; !done;) {
      switch (static_cast<Op>(r.U8())) {
        case Op::kEnd: done = true; break;
        case Op::kInput: replay.Input(); break;
        case Op::kLayer: replay.Layer(); break;
        case Op::kOutput: replay.Output(); break;
        case Op::kProfile: replay.Profile(); break;
        default: r.Fail("unknown op");
      }
    }
    Owned<nv::IHostMemory> plan(builder->buildSerializedNetwork(*network, *builderConfig));
    if (plan == nullptr) {
      if (events != nullptr && events->cancel.load()) {
        *error = NativeError{"E_ABORTED", "the TensorRT engine build was cancelled (stepComplete answered false)", {{"call", "buildSerializedNetwork()"}}, {}, {}};
        return false;
      }
      return fail("buildSerializedNetwork()");
    }
    const auto* bytes = static_cast<const uint8_t*>(plan->data());
    out->plan.assign(bytes, bytes + plan->size());
    Owned<nv::IHostMemory> serializedCache(cache->serialize());
    if (serializedCache != nullptr) {
      const auto* c = static_cast<const uint8_t*>(serializedCache->data());
      out->timingCache.assign(c, c + serializedCache->size());
    }
    out->libraryVersion = lib.version;
    out->hardwareCompatibility = config.hardwareCompatibility;
    return true;
  } catch (const ProgramError& e) {
    *error = NativeError{"E_BAD_MODEL", e.what(), {}, {}, {}};
    return false;
  } catch (const TrtFailure& f) {
    return fail(f.what);
  }
}

}  // namespace trtn::trt

#endif  // TRTN_WITH_TENSORRT
