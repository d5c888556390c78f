// Our declarations of the cuDNN 9 entry points (cudnn.h is not included: the addon builds
// without it). native/cudnn/check_declarations.cc proves them against the real headers.
// These are the legacy convolution calls (present in 9.x, marked deprecated): see docs/gpu-runtime.md.
#pragma once

#include <cstddef>

struct cudnnContext;
struct cudnnTensorStruct;
struct cudnnFilterStruct;
struct cudnnConvolutionStruct;
struct cudnnActivationStruct;
struct CUstream_st;

namespace trtn::cudnn {

using cudnnStatus_t = int;
using cudnnHandle_t = ::cudnnContext*;
using cudnnTensorDescriptor_t = ::cudnnTensorStruct*;
using cudnnFilterDescriptor_t = ::cudnnFilterStruct*;
using cudnnConvolutionDescriptor_t = ::cudnnConvolutionStruct*;
using cudnnActivationDescriptor_t = ::cudnnActivationStruct*;
using cudaStream_t = ::CUstream_st*;

struct ConvolutionFwdAlgoPerf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

// cudnnConvolutionBwdDataAlgoPerf_t: the same fields as the forward one, its own type.
struct ConvolutionBwdDataAlgoPerf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

constexpr cudnnStatus_t kSuccess = 0;
constexpr int kTensorNCHW = 0;         // CUDNN_TENSOR_NCHW
constexpr int kTensorNHWC = 1;         // CUDNN_TENSOR_NHWC
constexpr int kActivationRelu = 1;     // CUDNN_ACTIVATION_RELU
constexpr int kActivationIdentity = 5; // CUDNN_ACTIVATION_IDENTITY (fused calls: IMPLICIT_PRECOMP_GEMM only)
constexpr int kConvFwdImplicitPrecompGemm = 1;  // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
constexpr int kPropagateNan = 1;       // CUDNN_PROPAGATE_NAN (relu(NaN) = NaN, as PyTorch and TensorRT)
constexpr int kDataFloat = 0;          // CUDNN_DATA_FLOAT
constexpr int kDataHalf = 2;           // CUDNN_DATA_HALF
constexpr int kDataBFloat16 = 9;       // CUDNN_DATA_BFLOAT16
constexpr int kCrossCorrelation = 1;   // CUDNN_CROSS_CORRELATION
constexpr int kDefaultMath = 0;        // CUDNN_DEFAULT_MATH (permits TF32 on Ampere and newer)
constexpr int kTensorOpMath = 1;       // CUDNN_TENSOR_OP_MATH: tensor cores (fp16/bf16 steps)
constexpr int kFmaMath = 3;            // CUDNN_FMA_MATH: plain fp32 FMA, no tensor cores
constexpr int kConvFwdAlgoCount = 8;   // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
constexpr int kConvBwdDataAlgoCount = 6;  // CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT

using PFN_cudnnGetVersion = size_t (*)();
using PFN_cudnnGetErrorString = const char* (*)(cudnnStatus_t status);
using PFN_cudnnCreate = cudnnStatus_t (*)(cudnnHandle_t* handle);
using PFN_cudnnSetStream = cudnnStatus_t (*)(cudnnHandle_t handle, cudaStream_t stream);
using PFN_cudnnCreateTensorDescriptor = cudnnStatus_t (*)(cudnnTensorDescriptor_t* desc);
using PFN_cudnnSetTensorNdDescriptor = cudnnStatus_t (*)(cudnnTensorDescriptor_t desc, int dataType, int nbDims,
                                                         const int dims[], const int strides[]);
using PFN_cudnnDestroyTensorDescriptor = cudnnStatus_t (*)(cudnnTensorDescriptor_t desc);
using PFN_cudnnCreateFilterDescriptor = cudnnStatus_t (*)(cudnnFilterDescriptor_t* desc);
using PFN_cudnnSetFilterNdDescriptor = cudnnStatus_t (*)(cudnnFilterDescriptor_t desc, int dataType, int format,
                                                         int nbDims, const int dims[]);
using PFN_cudnnDestroyFilterDescriptor = cudnnStatus_t (*)(cudnnFilterDescriptor_t desc);
using PFN_cudnnCreateConvolutionDescriptor = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t* desc);
using PFN_cudnnSetConvolutionNdDescriptor = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t desc, int arrayLength,
                                                              const int pads[], const int strides[],
                                                              const int dilations[], int mode, int computeType);
using PFN_cudnnSetConvolutionGroupCount = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t desc, int groups);
using PFN_cudnnSetConvolutionMathType = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t desc, int mathType);
using PFN_cudnnDestroyConvolutionDescriptor = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t desc);
using PFN_cudnnGetConvolutionForwardAlgorithm_v7 = cudnnStatus_t (*)(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t y, int requested, int* returned, ConvolutionFwdAlgoPerf* results);
using PFN_cudnnGetConvolutionForwardWorkspaceSize = cudnnStatus_t (*)(cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                                                                      cudnnFilterDescriptor_t w,
                                                                      cudnnConvolutionDescriptor_t conv,
                                                                      cudnnTensorDescriptor_t y, int algo,
                                                                      size_t* bytes);
using PFN_cudnnConvolutionForward = cudnnStatus_t (*)(cudnnHandle_t handle, const void* alpha,
                                                      cudnnTensorDescriptor_t xDesc, const void* x,
                                                      cudnnFilterDescriptor_t wDesc, const void* w,
                                                      cudnnConvolutionDescriptor_t conv, int algo, void* workspace,
                                                      size_t workspaceBytes, const void* beta,
                                                      cudnnTensorDescriptor_t yDesc, void* y);
using PFN_cudnnGetConvolutionBackwardDataAlgorithm_v7 = cudnnStatus_t (*)(
    cudnnHandle_t handle, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy, cudnnConvolutionDescriptor_t conv,
    cudnnTensorDescriptor_t dx, int requested, int* returned, ConvolutionBwdDataAlgoPerf* results);
using PFN_cudnnGetConvolutionBackwardDataWorkspaceSize = cudnnStatus_t (*)(cudnnHandle_t handle,
                                                                           cudnnFilterDescriptor_t w,
                                                                           cudnnTensorDescriptor_t dy,
                                                                           cudnnConvolutionDescriptor_t conv,
                                                                           cudnnTensorDescriptor_t dx, int algo,
                                                                           size_t* bytes);
using PFN_cudnnConvolutionBackwardData = cudnnStatus_t (*)(cudnnHandle_t handle, const void* alpha,
                                                           cudnnFilterDescriptor_t wDesc, const void* w,
                                                           cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                           cudnnConvolutionDescriptor_t conv, int algo, void* workspace,
                                                           size_t workspaceBytes, const void* beta,
                                                           cudnnTensorDescriptor_t dxDesc, void* dx);
using PFN_cudnnCreateActivationDescriptor = cudnnStatus_t (*)(cudnnActivationDescriptor_t* desc);
using PFN_cudnnSetActivationDescriptor = cudnnStatus_t (*)(cudnnActivationDescriptor_t desc, int mode, int reluNanOpt,
                                                           double coef);
using PFN_cudnnDestroyActivationDescriptor = cudnnStatus_t (*)(cudnnActivationDescriptor_t desc);
using PFN_cudnnActivationForward = cudnnStatus_t (*)(cudnnHandle_t handle, cudnnActivationDescriptor_t activation,
                                                     const void* alpha, cudnnTensorDescriptor_t xDesc, const void* x,
                                                     const void* beta, cudnnTensorDescriptor_t yDesc, void* y);
using PFN_cudnnConvolutionBiasActivationForward = cudnnStatus_t (*)(
    cudnnHandle_t handle, const void* alpha1, cudnnTensorDescriptor_t xDesc, const void* x, cudnnFilterDescriptor_t wDesc,
    const void* w, cudnnConvolutionDescriptor_t conv, int algo, void* workspace, size_t workspaceBytes,
    const void* alpha2, cudnnTensorDescriptor_t zDesc, const void* z, cudnnTensorDescriptor_t biasDesc, const void* bias,
    cudnnActivationDescriptor_t activation, cudnnTensorDescriptor_t yDesc, void* y);
using PFN_cudnnAddTensor = cudnnStatus_t (*)(cudnnHandle_t handle, const void* alpha, cudnnTensorDescriptor_t aDesc,
                                             const void* a, const void* beta, cudnnTensorDescriptor_t cDesc, void* c);

#define TRTN_CUDNN_ENTRY_POINTS(X)          \
  X(cudnnGetVersion)                        \
  X(cudnnGetErrorString)                    \
  X(cudnnCreate)                            \
  X(cudnnSetStream)                         \
  X(cudnnCreateTensorDescriptor)            \
  X(cudnnSetTensorNdDescriptor)             \
  X(cudnnDestroyTensorDescriptor)           \
  X(cudnnCreateFilterDescriptor)            \
  X(cudnnSetFilterNdDescriptor)             \
  X(cudnnDestroyFilterDescriptor)           \
  X(cudnnCreateConvolutionDescriptor)       \
  X(cudnnSetConvolutionNdDescriptor)        \
  X(cudnnSetConvolutionGroupCount)          \
  X(cudnnSetConvolutionMathType)            \
  X(cudnnDestroyConvolutionDescriptor)      \
  X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnGetConvolutionForwardWorkspaceSize) \
  X(cudnnConvolutionForward)                \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData)           \
  X(cudnnAddTensor)                         \
  X(cudnnCreateActivationDescriptor)        \
  X(cudnnSetActivationDescriptor)           \
  X(cudnnDestroyActivationDescriptor)       \
  X(cudnnActivationForward)                 \
  X(cudnnConvolutionBiasActivationForward)

struct CudnnApi {
#define TRTN_MEMBER(name) PFN_##name name = nullptr;
  TRTN_CUDNN_ENTRY_POINTS(TRTN_MEMBER)
#undef TRTN_MEMBER
};

}  // namespace trtn::cudnn
