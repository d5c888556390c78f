// Our declarations of the NCCL entry points and types the addon uses (nccl.h is not included: the
// addon builds without NCCL). native/nccl/check_declarations.cc proves them against the real nccl.h.
#pragma once

#include <climits>
#include <cstddef>

struct ncclComm;
struct CUstream_st;

namespace trtn::nccl {

using ncclResult_t = int;
using ncclDataType_t = int;
using ncclRedOp_t = int;
using ncclComm_t = ::ncclComm*;
using cudaStream_t = ::CUstream_st*;

constexpr size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct UniqueId {
  char internal[kUniqueIdBytes];
};

// ncclConfig_t as NCCL 2.17 laid it out. Later versions only append fields, and NCCL copies
// min(size, its own sizeof) bytes and resets fields newer than `version` to their defaults
// (src/init.cc parseCommConfig), so this prefix is a valid config for every NCCL >= 2.17.
struct Config {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
};
constexpr unsigned int kConfigMagic = 0xcafebeef;
constexpr unsigned int kConfigVersion = 21700;  // NCCL_VERSION(2, 17, 0)
constexpr int kConfigUndefInt = INT_MIN;        // NCCL_CONFIG_UNDEF_INT

constexpr ncclResult_t kSuccess = 0;
constexpr ncclResult_t kUnhandledCudaError = 1;
constexpr ncclResult_t kSystemError = 2;
constexpr ncclResult_t kInternalError = 3;
constexpr ncclResult_t kInvalidArgument = 4;
constexpr ncclResult_t kInvalidUsage = 5;
constexpr ncclResult_t kRemoteError = 6;
constexpr ncclResult_t kInProgress = 7;

constexpr ncclDataType_t kInt8 = 0;
constexpr ncclDataType_t kUint8 = 1;
constexpr ncclDataType_t kInt32 = 2;
constexpr ncclDataType_t kUint32 = 3;
constexpr ncclDataType_t kInt64 = 4;
constexpr ncclDataType_t kUint64 = 5;
constexpr ncclDataType_t kFloat16 = 6;
constexpr ncclDataType_t kFloat32 = 7;
constexpr ncclDataType_t kFloat64 = 8;
constexpr ncclDataType_t kBfloat16 = 9;

constexpr ncclRedOp_t kSum = 0;
constexpr ncclRedOp_t kProd = 1;
constexpr ncclRedOp_t kMax = 2;
constexpr ncclRedOp_t kMin = 3;
constexpr ncclRedOp_t kAvg = 4;

using PFN_ncclGetVersion = ncclResult_t (*)(int* version);
using PFN_ncclGetUniqueId = ncclResult_t (*)(UniqueId* uniqueId);
using PFN_ncclCommInitRank = ncclResult_t (*)(ncclComm_t* comm, int nranks, UniqueId commId, int rank);
using PFN_ncclCommInitRankConfig = ncclResult_t (*)(ncclComm_t* comm, int nranks, UniqueId commId, int rank,
                                                    Config* config);
using PFN_ncclCommInitAll = ncclResult_t (*)(ncclComm_t* comm, int ndev, const int* devlist);
using PFN_ncclCommFinalize = ncclResult_t (*)(ncclComm_t comm);
using PFN_ncclCommDestroy = ncclResult_t (*)(ncclComm_t comm);
using PFN_ncclCommAbort = ncclResult_t (*)(ncclComm_t comm);
using PFN_ncclCommGetAsyncError = ncclResult_t (*)(ncclComm_t comm, ncclResult_t* asyncError);
using PFN_ncclGetErrorString = const char* (*)(ncclResult_t result);
using PFN_ncclGetLastError = const char* (*)(ncclComm_t comm);
using PFN_ncclAllReduce = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream);
using PFN_ncclGroupStart = ncclResult_t (*)();
using PFN_ncclGroupEnd = ncclResult_t (*)();

#define TRTN_NCCL_ENTRY_POINTS(X) \
  X(ncclGetVersion)               \
  X(ncclGetUniqueId)              \
  X(ncclCommInitRank)             \
  X(ncclCommInitRankConfig)       \
  X(ncclCommInitAll)              \
  X(ncclCommFinalize)             \
  X(ncclCommDestroy)              \
  X(ncclCommAbort)                \
  X(ncclCommGetAsyncError)        \
  X(ncclGetErrorString)           \
  X(ncclGetLastError)             \
  X(ncclAllReduce)                \
  X(ncclGroupStart)               \
  X(ncclGroupEnd)

struct NcclApi {
#define TRTN_MEMBER(name) PFN_##name name = nullptr;
  TRTN_NCCL_ENTRY_POINTS(TRTN_MEMBER)
#undef TRTN_MEMBER
};

}  // namespace trtn::nccl
