// Compiled only on the GPU machine (scripts/gpu-run.sh): proves nccl_api.h agrees with nccl.h.
#include <nccl.h>

#include <cstddef>

#include "../common/signature_check.h"
#include "nccl_api.h"

namespace n = trtn::nccl;

template <>
struct trtn::check::Norm<n::UniqueId> {
  using type = ncclUniqueId;
};
template <>
struct trtn::check::Norm<n::Config> {
  using type = ncclConfig_t;
};
using trtn::check::kSameSignature;

static_assert(std::is_same_v<n::ncclComm_t, ncclComm_t>, "ncclComm_t");
static_assert(std::is_same_v<n::cudaStream_t, cudaStream_t>, "cudaStream_t");
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
                  sizeof(ncclRedOp_t) == sizeof(int),
              "enums passed as int are int-sized");
static_assert(n::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES && sizeof(n::UniqueId) == sizeof(ncclUniqueId), "ncclUniqueId");

// Our config is a prefix of the header's, field for field.
static_assert(sizeof(n::Config) <= sizeof(ncclConfig_t), "config size");
#define TRTN_CHECK_FIELD(field) \
  static_assert(offsetof(n::Config, field) == offsetof(ncclConfig_t, field), "ncclConfig_t." #field);
TRTN_CHECK_FIELD(size)
TRTN_CHECK_FIELD(magic)
TRTN_CHECK_FIELD(version)
TRTN_CHECK_FIELD(blocking)
TRTN_CHECK_FIELD(cgaClusterSize)
TRTN_CHECK_FIELD(minCTAs)
TRTN_CHECK_FIELD(maxCTAs)
TRTN_CHECK_FIELD(netName)
TRTN_CHECK_FIELD(splitShare)
#undef TRTN_CHECK_FIELD
static_assert(n::kConfigUndefInt == NCCL_CONFIG_UNDEF_INT, "NCCL_CONFIG_UNDEF_INT");
static_assert(n::kConfigVersion == NCCL_VERSION(2, 17, 0), "config version");

static_assert(n::kSuccess == ncclSuccess && n::kUnhandledCudaError == ncclUnhandledCudaError &&
                  n::kSystemError == ncclSystemError && n::kInternalError == ncclInternalError &&
                  n::kInvalidArgument == ncclInvalidArgument && n::kInvalidUsage == ncclInvalidUsage &&
                  n::kRemoteError == ncclRemoteError && n::kInProgress == ncclInProgress,
              "ncclResult_t values");
static_assert(n::kInt8 == ncclInt8 && n::kUint8 == ncclUint8 && n::kInt32 == ncclInt32 && n::kUint32 == ncclUint32 &&
                  n::kInt64 == ncclInt64 && n::kUint64 == ncclUint64 && n::kFloat16 == ncclFloat16 &&
                  n::kFloat32 == ncclFloat32 && n::kFloat64 == ncclFloat64 && n::kBfloat16 == ncclBfloat16,
              "ncclDataType_t values");
static_assert(n::kSum == ncclSum && n::kProd == ncclProd && n::kMax == ncclMax && n::kMin == ncclMin &&
                  n::kAvg == ncclAvg,
              "ncclRedOp_t values");

#define TRTN_CHECK_ENTRY(name) static_assert(kSameSignature<n::PFN_##name, decltype(&::name)>, #name);
TRTN_NCCL_ENTRY_POINTS(TRTN_CHECK_ENTRY)
#undef TRTN_CHECK_ENTRY

int main() {
  // The config magic is a macro inside NCCL_CONFIG_INITIALIZER only.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  return config.magic == n::kConfigMagic ? 0 : 1;
}
