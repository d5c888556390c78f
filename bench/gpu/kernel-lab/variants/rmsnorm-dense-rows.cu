// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: dense-rows
#define DENSE_ROWS 1
// body: rmsnorm.cuh
