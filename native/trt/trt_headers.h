// TensorRT's public headers, as the TensorRT part of the addon includes them. Compiled only
// when the build is given TENSORRT_ROOT or TENSORRT_INCLUDE_DIR (binding.gyp, CMakeLists.txt).
#pragma once

#if defined(__GNUC__)
#pragma GCC diagnostic push
// Inline bodies of deprecated TensorRT methods call other deprecated methods.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <NvInfer.h>
#include <NvInferRuntime.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
