// Compiled only by the test suite and on the GPU machine: proves cublaslt_api.h agrees with cublasLt.h.
#include <cublasLt.h>

#include <cstddef>

#include "../common/signature_check.h"
#include "cublaslt_api.h"

namespace l = trtn::cublaslt;

template <>
struct trtn::check::Norm<l::MatmulAlgo> {
  using type = cublasLtMatmulAlgo_t;
};
template <>
struct trtn::check::Norm<l::MatmulHeuristicResult> {
  using type = cublasLtMatmulHeuristicResult_t;
};
template <>
struct trtn::check::Norm<l::MatmulDescOpaque> {
  using type = cublasLtMatmulDescOpaque_t;
};
template <>
struct trtn::check::Norm<l::MatrixLayoutOpaque> {
  using type = cublasLtMatrixLayoutOpaque_t;
};
template <>
struct trtn::check::Norm<l::MatmulPreferenceOpaque> {
  using type = cublasLtMatmulPreferenceOpaque_t;
};
using trtn::check::kSameSignature;

static_assert(std::is_same_v<l::cublasLtHandle_t, cublasLtHandle_t>, "cublasLtHandle_t");
static_assert(kSameSignature<l::cublasLtMatmulDesc_t, cublasLtMatmulDesc_t>, "cublasLtMatmulDesc_t");
static_assert(kSameSignature<l::cublasLtMatrixLayout_t, cublasLtMatrixLayout_t>, "cublasLtMatrixLayout_t");
static_assert(kSameSignature<l::cublasLtMatmulPreference_t, cublasLtMatmulPreference_t>, "preference");
static_assert(std::is_same_v<l::cudaStream_t, cudaStream_t>, "cudaStream_t");

static_assert(sizeof(l::MatmulAlgo) == sizeof(cublasLtMatmulAlgo_t), "algo size");
static_assert(sizeof(l::MatmulHeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t), "heuristic size");
static_assert(offsetof(l::MatmulHeuristicResult, workspaceSize) == offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize),
              "heuristic workspaceSize");
static_assert(offsetof(l::MatmulHeuristicResult, state) == offsetof(cublasLtMatmulHeuristicResult_t, state), "state");
static_assert(sizeof(cublasStatus_t) == sizeof(int) && sizeof(cublasComputeType_t) == sizeof(int) &&
                  sizeof(cudaDataType_t) == sizeof(int),
              "enums passed as int are int-sized");

static_assert(l::kSuccess == CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS");
static_assert(l::kComputeType32F == CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F");
static_assert(l::kDataTypeR32F == CUDA_R_32F, "CUDA_R_32F");
static_assert(l::kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, "max workspace");
static_assert(l::kComputeType32FFastTf32 == CUBLAS_COMPUTE_32F_FAST_TF32, "CUBLAS_COMPUTE_32F_FAST_TF32");
static_assert(l::kDataTypeR16F == CUDA_R_16F, "CUDA_R_16F");
static_assert(l::kDataTypeR16BF == CUDA_R_16BF, "CUDA_R_16BF");
static_assert(l::kOpN == CUBLAS_OP_N && l::kOpT == CUBLAS_OP_T, "CUBLAS_OP_N/T");
static_assert(l::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA, "CUBLASLT_MATMUL_DESC_TRANSA");
static_assert(l::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB, "CUBLASLT_MATMUL_DESC_TRANSB");
static_assert(l::kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT");
static_assert(l::kLayoutStridedBatchOffset == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, "STRIDED_BATCH_OFFSET");
static_assert(l::kPrefMinAlignmentA == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, "MIN_ALIGNMENT_A_BYTES");
static_assert(l::kPrefMinAlignmentB == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, "MIN_ALIGNMENT_B_BYTES");
static_assert(l::kPrefMinAlignmentC == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, "MIN_ALIGNMENT_C_BYTES");
static_assert(l::kPrefMinAlignmentD == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, "MIN_ALIGNMENT_D_BYTES");
static_assert(sizeof(cublasOperation_t) == sizeof(int32_t), "TRANSA/TRANSB values are int32");
static_assert(l::kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE, "CUBLASLT_MATMUL_DESC_EPILOGUE");
static_assert(l::kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER, "CUBLASLT_MATMUL_DESC_BIAS_POINTER");
static_assert(l::kEpilogueDefault == CUBLASLT_EPILOGUE_DEFAULT && l::kEpilogueRelu == CUBLASLT_EPILOGUE_RELU &&
                  l::kEpilogueBias == CUBLASLT_EPILOGUE_BIAS && l::kEpilogueReluBias == CUBLASLT_EPILOGUE_RELU_BIAS,
              "CUBLASLT_EPILOGUE_*");
static_assert(sizeof(cublasLtEpilogue_t) == sizeof(uint32_t), "the epilogue attribute is uint32");

#define TRTN_CHECK_ENTRY(name) static_assert(kSameSignature<l::PFN_##name, decltype(&::name)>, #name);
TRTN_CUBLASLT_ENTRY_POINTS(TRTN_CHECK_ENTRY)
#undef TRTN_CHECK_ENTRY

int main() { return 0; }
