// TensorRT's NvInferRuntimeBase.h includes <cuda_runtime_api.h> for two handle types only.
// The addon never links the CUDA runtime (it opens libcuda itself), so this stub declares
// them exactly as CUDA's driver_types.h does; a real CUDA install on the include path after
// TensorRT's is equally fine, since the typedefs are identical.
#pragma once
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
