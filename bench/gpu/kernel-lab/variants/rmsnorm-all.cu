// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: all
#define NO_INSIDE 1
#define HOIST_SCALE 1
#define DENSE_ROWS 1
#define RSQRT 1
// body: rmsnorm.cuh
