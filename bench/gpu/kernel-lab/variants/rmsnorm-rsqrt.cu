// case: k_normalization_float16_float16_float16_rms_s1_b0_warp64v8_full
// variant: rsqrt
#define RSQRT 1
// body: rmsnorm.cuh
