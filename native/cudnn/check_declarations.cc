// Compiled only by the test suite and on the GPU machine: proves cudnn_api.h agrees with cudnn.h.
#include <cudnn.h>

#include <cstddef>

#include "../common/signature_check.h"
#include "cudnn_api.h"

namespace d = trtn::cudnn;

template <>
struct trtn::check::Norm<d::ConvolutionFwdAlgoPerf> {
  using type = cudnnConvolutionFwdAlgoPerf_t;
};
template <>
struct trtn::check::Norm<d::ConvolutionBwdDataAlgoPerf> {
  using type = cudnnConvolutionBwdDataAlgoPerf_t;
};
using trtn::check::kSameSignature;

static_assert(std::is_same_v<d::cudnnHandle_t, cudnnHandle_t>, "cudnnHandle_t");
static_assert(std::is_same_v<d::cudnnTensorDescriptor_t, cudnnTensorDescriptor_t>, "tensor descriptor");
static_assert(std::is_same_v<d::cudnnFilterDescriptor_t, cudnnFilterDescriptor_t>, "filter descriptor");
static_assert(std::is_same_v<d::cudnnConvolutionDescriptor_t, cudnnConvolutionDescriptor_t>, "conv descriptor");
static_assert(std::is_same_v<d::cudaStream_t, cudaStream_t>, "cudaStream_t");
static_assert(std::is_same_v<d::cudnnActivationDescriptor_t, cudnnActivationDescriptor_t>, "activation descriptor");

static_assert(sizeof(d::ConvolutionFwdAlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t), "perf size");
static_assert(offsetof(d::ConvolutionFwdAlgoPerf, status) == offsetof(cudnnConvolutionFwdAlgoPerf_t, status), "status");
static_assert(offsetof(d::ConvolutionFwdAlgoPerf, memory) == offsetof(cudnnConvolutionFwdAlgoPerf_t, memory), "memory");
static_assert(offsetof(d::ConvolutionFwdAlgoPerf, mathType) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType), "mathType");

static_assert(sizeof(d::ConvolutionBwdDataAlgoPerf) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t), "bwd perf size");
static_assert(offsetof(d::ConvolutionBwdDataAlgoPerf, status) == offsetof(cudnnConvolutionBwdDataAlgoPerf_t, status), "bwd status");
static_assert(offsetof(d::ConvolutionBwdDataAlgoPerf, memory) == offsetof(cudnnConvolutionBwdDataAlgoPerf_t, memory), "bwd memory");
static_assert(offsetof(d::ConvolutionBwdDataAlgoPerf, mathType) == offsetof(cudnnConvolutionBwdDataAlgoPerf_t, mathType), "bwd mathType");

static_assert(d::kSuccess == CUDNN_STATUS_SUCCESS, "CUDNN_STATUS_SUCCESS");
static_assert(d::kTensorNCHW == CUDNN_TENSOR_NCHW, "CUDNN_TENSOR_NCHW");
static_assert(d::kTensorNHWC == CUDNN_TENSOR_NHWC, "CUDNN_TENSOR_NHWC");
static_assert(d::kActivationRelu == CUDNN_ACTIVATION_RELU, "CUDNN_ACTIVATION_RELU");
static_assert(d::kActivationIdentity == CUDNN_ACTIVATION_IDENTITY, "CUDNN_ACTIVATION_IDENTITY");
static_assert(d::kConvFwdImplicitPrecompGemm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "IMPLICIT_PRECOMP_GEMM");
static_assert(d::kPropagateNan == CUDNN_PROPAGATE_NAN, "CUDNN_PROPAGATE_NAN");
static_assert(d::kDataFloat == CUDNN_DATA_FLOAT, "CUDNN_DATA_FLOAT");
static_assert(d::kCrossCorrelation == CUDNN_CROSS_CORRELATION, "CUDNN_CROSS_CORRELATION");
static_assert(d::kDefaultMath == CUDNN_DEFAULT_MATH, "CUDNN_DEFAULT_MATH");
static_assert(d::kFmaMath == CUDNN_FMA_MATH, "CUDNN_FMA_MATH");
static_assert(d::kTensorOpMath == CUDNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH");
static_assert(d::kDataHalf == CUDNN_DATA_HALF, "CUDNN_DATA_HALF");
static_assert(d::kDataBFloat16 == CUDNN_DATA_BFLOAT16, "CUDNN_DATA_BFLOAT16");
static_assert(d::kConvBwdDataAlgoCount == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT");
static_assert(d::kConvFwdAlgoCount == CUDNN_CONVOLUTION_FWD_ALGO_COUNT, "CUDNN_CONVOLUTION_FWD_ALGO_COUNT");

#define TRTN_CHECK_ENTRY(name) static_assert(kSameSignature<d::PFN_##name, decltype(&::name)>, #name);
TRTN_CUDNN_ENTRY_POINTS(TRTN_CHECK_ENTRY)
#undef TRTN_CHECK_ENTRY

int main() { return 0; }
