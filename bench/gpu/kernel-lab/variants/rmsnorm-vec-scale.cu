// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: vec-scale
#define VEC_SCALE 1
// body: rmsnorm.cuh
