// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: hoist-scale
#define HOIST_SCALE 1
// body: rmsnorm.cuh
