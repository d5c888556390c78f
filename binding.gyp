{
  # Release build: prebuildify drives node-gyp with this file and writes prebuilds/.
  # CMakeLists.txt is the developer build; test/native/build-files.test.ts keeps the two
  # source lists identical.
  # The TensorRT backend (native/trt/build.cc, runtime.cc, bindings.cc) is compiled in only
  # when TensorRT's headers are named: TENSORRT_INCLUDE_DIR, or TENSORRT_ROOT/include.
  # Without them those files compile to nothing and the addon reports "built without TensorRT".
  "variables": {
    "tensorrt_include%": "<!(node -p \"process.env.TENSORRT_INCLUDE_DIR || (process.env.TENSORRT_ROOT ? require('path').join(process.env.TENSORRT_ROOT, 'include') : '')\")"
  },
  "targets": [
    {
      "target_name": "tensorrt_node",
      "sources": [
        "native/addon.cc",
        "native/common/dynlib.cc",
        "native/common/nvidia_library.cc",
        "native/cublaslt/cublaslt.cc",
        "native/cuda/driver.cc",
        "native/cuda/runtime.cc",
        "native/cudnn/cudnn.cc",
        "native/gpu/bindings.cc",
        "native/gpu/completion.cc",
        "native/gpu/plan.cc",
        "native/nccl/bindings.cc",
        "native/nccl/nccl.cc",
        "native/nvrtc/nvrtc.cc",
        "native/trt/bindings.cc",
        "native/trt/build.cc",
        "native/trt/library.cc",
        "native/trt/runtime.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "conditions": [
        ["tensorrt_include!=''", {
          "defines": ["TRTN_WITH_TENSORRT"],
          # -isystem: warnings inside TensorRT's headers are not this project's to fix.
          "cflags_cc": ["-isystem", "<(tensorrt_include)", "-isystem", "<(module_root_dir)/native/trt/cuda_stub"],
          "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-isystem", "<(tensorrt_include)", "-isystem", "<(module_root_dir)/native/trt/cuda_stub"] },
          "msvs_settings": { "VCCLCompilerTool": { "AdditionalIncludeDirectories": ["<(tensorrt_include)", "<(module_root_dir)/native/trt/cuda_stub"] } }
        }],
        ["OS=='linux'", { "libraries": ["-ldl"] }],
        ["OS=='mac'", {
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "11.0"
          }
        }],
        ["OS=='win'", {
          "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17"] } }
        }]
      ]
    }
  ]
}
