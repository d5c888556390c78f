// What the standalone cuDNN benchmarks (conv_layouts.cc, pointwise_convs.cc, spatial_convs.cc)
// share: exit-on-error checks for the CUDA runtime and cuDNN, a deterministic fp16 fill, and a
// graph timer. Header-only; each program still builds with one g++ line.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)
#define DN(x)                                                                                     \
  do {                                                                                            \
    cudnnStatus_t s_ = (x);                                                                       \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudnnGetErrorString(s_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// n fp16 values in [-0.5, 0.5), a different sequence per seed, copied to device memory p.
inline void Fill(void* p, size_t n, unsigned seed = 0) {
  std::vector<__half> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = __float2half(float(((i + seed) * 2654435761u) % 1000) / 1000.0f - 0.5f);
  CK(cudaMemcpy(p, h.data(), n * 2, cudaMemcpyHostToDevice));
}

// n fp16 values at device address p, as floats.
inline std::vector<float> Read(const void* p, size_t n) {
  std::vector<__half> h(n);
  CK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __half2float(h[i]);
  return f;
}

// One bottleneck block of torchvision's resnet50 (224×224): its input channels, width (the 3×3's
// channels), output channels, input size, and stride (on the 3×3, as torchvision has it; the
// first block of stages 2–4 also downsamples its input with a 1×1 of that stride).
struct Bottleneck {
  int cin, width, out, in, stride;
  bool first;  // the stage's first block, the one with the 1×1 downsample
};

inline std::vector<Bottleneck> Resnet50Blocks() {
  std::vector<Bottleneck> blocks;
  const int widths[4] = {64, 128, 256, 512}, counts[4] = {3, 4, 6, 3}, sizes[4] = {56, 56, 28, 14};
  int cin = 64;
  for (int s = 0; s < 4; ++s) {
    const int w = widths[s], out = w * 4, stride = s == 0 ? 1 : 2;
    for (int b = 0; b < counts[s]; ++b) {
      blocks.push_back({b == 0 ? cin : out, w, out, b == 0 ? sizes[s] : sizes[s] / stride, b == 0 ? stride : 1, b == 0});
    }
    cin = out;
  }
  return blocks;
}

// What the per-layer benchmarks set up once: a cuDNN handle on a non-blocking stream, ReLU and
// identity activations, and a workspace of `wsBytes`.
struct CudnnBench {
  cudnnHandle_t dnn;
  cudaStream_t stream;
  cudnnActivationDescriptor_t relu, identity;
  void* ws;
  size_t wsBytes;
};

inline CudnnBench OpenCudnnBench(size_t wsBytes) {
  CudnnBench b{};
  DN(cudnnCreate(&b.dnn));
  CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  DN(cudnnSetStream(b.dnn, b.stream));
  DN(cudnnCreateActivationDescriptor(&b.relu));
  DN(cudnnSetActivationDescriptor(b.relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  DN(cudnnCreateActivationDescriptor(&b.identity));
  DN(cudnnSetActivationDescriptor(b.identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0.0));
  b.wsBytes = wsBytes;
  CK(cudaMalloc(&b.ws, wsBytes));
  return b;
}

// The descriptors of a 2-D fp16 NHWC convolution (square r×r kernel, stride, symmetric padding;
// tensor-core math, fp32 accumulation) of n images in×in×c into k channels, and of its bias.
struct NhwcConv {
  cudnnTensorDescriptor_t x, y, bias;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  int out;  // the output's height and width
};

inline NhwcConv OpenNhwcConv(int n, int c, int k, int r, int stride, int pad, int in) {
  NhwcConv d{};
  d.out = (in + 2 * pad - r) / stride + 1;
  DN(cudnnCreateTensorDescriptor(&d.x));
  DN(cudnnCreateTensorDescriptor(&d.y));
  DN(cudnnCreateTensorDescriptor(&d.bias));
  DN(cudnnCreateFilterDescriptor(&d.w));
  DN(cudnnCreateConvolutionDescriptor(&d.conv));
  DN(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, c, in, in));
  DN(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, k, d.out, d.out));
  DN(cudnnSetTensor4dDescriptor(d.bias, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 1, k, 1, 1));
  DN(cudnnSetFilter4dDescriptor(d.w, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, k, c, r, r));
  DN(cudnnSetConvolution2dDescriptor(d.conv, pad, pad, stride, stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DN(cudnnSetConvolutionMathType(d.conv, CUDNN_TENSOR_OP_MATH));
  return d;
}

inline void CloseNhwcConv(const NhwcConv& d) {
  cudnnDestroyTensorDescriptor(d.x), cudnnDestroyTensorDescriptor(d.y), cudnnDestroyTensorDescriptor(d.bias);
  cudnnDestroyFilterDescriptor(d.w), cudnnDestroyConvolutionDescriptor(d.conv);
}

// Buffer sets a timed call rotates over (more bytes than the 50 MB L2 for the larger layers), and
// calls per graph.
constexpr int kSets = 4, kCalls = 20;

// Median µs per call of `call(set)` captured kCalls times into one graph, over 30 replays after 3
// warm-ups; -1 if the call fails (first run, outside the capture) or cannot be captured.
inline float GraphTimeUs(cudaStream_t stream, const std::function<bool(int)>& call) {
  if (!call(0)) return -1;
  CK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  bool ok = true;
  for (int i = 0; i < kCalls && ok; ++i) ok = call(i % kSets);
  // A call that cannot be captured (or failed) gives no time; the program goes on.
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) return cudaGetLastError(), -1;
  if (!ok || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    cudaGraphDestroy(graph);
    return cudaGetLastError(), -1;
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(exec, stream));
  std::vector<float> times;
  for (int i = 0; i < 30; ++i) {
    CK(cudaEventRecord(a, stream));
    CK(cudaGraphLaunch(exec, stream));
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return times[times.size() / 2] * 1000.0f / kCalls;
}
