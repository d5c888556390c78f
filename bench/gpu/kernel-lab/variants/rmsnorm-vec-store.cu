// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: vec-store
#define VEC_STORE 1
// body: rmsnorm.cuh
