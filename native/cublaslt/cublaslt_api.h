// Our declarations of the cuBLASLt entry points (cublasLt.h is not included: the addon builds
// without the toolkit). native/cublaslt/check_declarations.cc proves them against cublasLt.h.
// One set serves cuBLASLt 12 and 13: only items unchanged between them are used (gpu-execution.md §7.3).
#pragma once

#include <cstddef>
#include <cstdint>

// The struct tags cublasLt.h uses, so these handle types are its handle types. Its descriptor
// structs are anonymous (typedef struct {...} X), so ours are our own tags; the check maps them.
struct cublasLtContext;
struct CUstream_st;

namespace trtn::cublaslt {

struct MatmulDescOpaque;
struct MatrixLayoutOpaque;
struct MatmulPreferenceOpaque;

using cublasStatus_t = int;
using cublasLtHandle_t = ::cublasLtContext*;
using cublasLtMatmulDesc_t = MatmulDescOpaque*;
using cublasLtMatrixLayout_t = MatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = MatmulPreferenceOpaque*;
using cudaStream_t = ::CUstream_st*;

struct MatmulAlgo {
  uint64_t data[8];
};

struct MatmulHeuristicResult {
  MatmulAlgo algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

constexpr cublasStatus_t kSuccess = 0;
constexpr int kComputeType32F = 68;          // CUBLAS_COMPUTE_32F: no TF32
constexpr int kComputeType32FFastTf32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kDataTypeR32F = 0;             // CUDA_R_32F
constexpr int kDataTypeR16F = 2;             // CUDA_R_16F
constexpr int kDataTypeR16BF = 14;           // CUDA_R_16BF
constexpr int kOpN = 0;                      // CUBLAS_OP_N
constexpr int kOpT = 1;                      // CUBLAS_OP_T
constexpr int kDescTransA = 3;               // CUBLASLT_MATMUL_DESC_TRANSA (int32)
constexpr int kDescTransB = 4;               // CUBLASLT_MATMUL_DESC_TRANSB (int32)
constexpr int kDescEpilogue = 7;              // CUBLASLT_MATMUL_DESC_EPILOGUE (uint32)
constexpr int kDescBiasPointer = 8;          // CUBLASLT_MATMUL_DESC_BIAS_POINTER (const void*)
constexpr uint32_t kEpilogueDefault = 1;     // CUBLASLT_EPILOGUE_DEFAULT
constexpr uint32_t kEpilogueRelu = 2;        // CUBLASLT_EPILOGUE_RELU
constexpr uint32_t kEpilogueBias = 4;        // CUBLASLT_EPILOGUE_BIAS
constexpr uint32_t kEpilogueReluBias = 6;    // CUBLASLT_EPILOGUE_RELU_BIAS
constexpr int kLayoutBatchCount = 5;         // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT (int32)
constexpr int kLayoutStridedBatchOffset = 6; // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET (int64, elements)
constexpr int kPrefMaxWorkspaceBytes = 1;    // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr int kPrefMinAlignmentA = 5;        // CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES (uint32)
constexpr int kPrefMinAlignmentB = 6;        // ..._B_BYTES
constexpr int kPrefMinAlignmentC = 7;        // ..._C_BYTES
constexpr int kPrefMinAlignmentD = 8;        // ..._D_BYTES

using PFN_cublasLtGetVersion = size_t (*)();
using PFN_cublasLtGetStatusString = const char* (*)(cublasStatus_t status);
using PFN_cublasLtCreate = cublasStatus_t (*)(cublasLtHandle_t* handle);
using PFN_cublasLtMatmulDescCreate = cublasStatus_t (*)(cublasLtMatmulDesc_t* desc, int computeType, int scaleType);
using PFN_cublasLtMatmulDescSetAttribute = cublasStatus_t (*)(cublasLtMatmulDesc_t desc, int attribute,
                                                              const void* value, size_t size);
using PFN_cublasLtMatrixLayoutSetAttribute = cublasStatus_t (*)(cublasLtMatrixLayout_t layout, int attribute,
                                                               const void* value, size_t size);
using PFN_cublasLtMatmulDescDestroy = cublasStatus_t (*)(cublasLtMatmulDesc_t desc);
using PFN_cublasLtMatrixLayoutCreate = cublasStatus_t (*)(cublasLtMatrixLayout_t* layout, int type, uint64_t rows,
                                                          uint64_t cols, int64_t ld);
using PFN_cublasLtMatrixLayoutDestroy = cublasStatus_t (*)(cublasLtMatrixLayout_t layout);
using PFN_cublasLtMatmulPreferenceCreate = cublasStatus_t (*)(cublasLtMatmulPreference_t* pref);
using PFN_cublasLtMatmulPreferenceDestroy = cublasStatus_t (*)(cublasLtMatmulPreference_t pref);
using PFN_cublasLtMatmulPreferenceSetAttribute = cublasStatus_t (*)(cublasLtMatmulPreference_t pref, int attribute,
                                                                    const void* value, size_t size);
using PFN_cublasLtMatmulAlgoGetHeuristic = cublasStatus_t (*)(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
    MatmulHeuristicResult* results, int* returned);
using PFN_cublasLtMatmul = cublasStatus_t (*)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                              const void* a, cublasLtMatrixLayout_t aDesc, const void* b,
                                              cublasLtMatrixLayout_t bDesc, const void* beta, const void* c,
                                              cublasLtMatrixLayout_t cDesc, void* d, cublasLtMatrixLayout_t dDesc,
                                              const MatmulAlgo* algo, void* workspace, size_t workspaceBytes,
                                              cudaStream_t stream);

#define TRTN_CUBLASLT_ENTRY_POINTS(X)     \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusString)              \
  X(cublasLtCreate)                       \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

struct CublasLtApi {
#define TRTN_MEMBER(name) PFN_##name name = nullptr;
  TRTN_CUBLASLT_ENTRY_POINTS(TRTN_MEMBER)
#undef TRTN_MEMBER
};

}  // namespace trtn::cublaslt
