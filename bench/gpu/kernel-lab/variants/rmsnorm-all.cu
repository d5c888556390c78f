// case: k_normalization_float16_float16_float16_rms_s1_b0_warp64v8_full
// variant: all
#define NO_INSIDE 1
#define HOIST_SCALE 1
#define DENSE_ROWS 1
#define RSQRT 1
// body: rmsnorm.cuh
