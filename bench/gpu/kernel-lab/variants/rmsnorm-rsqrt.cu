// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: rsqrt
#define RSQRT 1
// body: rmsnorm.cuh
