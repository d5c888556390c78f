{
  # Release build: prebuildify drives node-gyp with this file and writes prebuilds/.
  # CMakeLists.txt is the developer build; test/native/build-files.test.ts keeps the two
  # source lists identical.
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
        "native/gpu/plan.cc",
        "native/nccl/bindings.cc",
        "native/nccl/nccl.cc",
        "native/nvrtc/nvrtc.cc",
        "native/trt/library.cc"
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
