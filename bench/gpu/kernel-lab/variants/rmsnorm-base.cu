// case: k_normalization_float16_float16_float16_rms_warp64v8
// variant: base

// body: rmsnorm.cuh
