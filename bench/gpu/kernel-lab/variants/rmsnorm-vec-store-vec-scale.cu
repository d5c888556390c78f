// case: k_normalization_float16_float16_float16_rms_s1_b0_warp64v8_full
// variant: vec-store+vec-scale
#define VEC_STORE 1
#define VEC_SCALE 1
// body: rmsnorm.cuh
