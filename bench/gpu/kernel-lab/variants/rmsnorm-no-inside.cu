// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: no-inside
#define NO_INSIDE 1
// body: rmsnorm.cuh
