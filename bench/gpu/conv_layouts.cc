// The convolutions of ResNet-50 (torchvision, 224×224) in fp16 through cuDNN's legacy API, timed
// as one CUDA graph per variant, to choose the cuda backend's convolution plan by measurement:
// NCHW vs NHWC (channels-last), a separate bias pass
// (cudnnAddTensor, what plans do now) vs cudnnConvolutionBiasActivationForward (bias, ReLU and
// the residual add in the convolution), and the heuristics' algorithm vs one timed by
// cudnnFindConvolutionForwardAlgorithmEx on the buffers it will run on. A standalone program
// linked to the real cuDNN: it depends on nothing of ours.
// usage (GPU machine): g++ -O2 -std=c++17 -I/usr/local/cuda/include bench/gpu/conv_layouts.cc -o /tmp/conv_layouts \
//   -L/usr/local/cuda/lib64 -lcudart -lcudnn && /tmp/conv_layouts [batch...]
// STEM_ONLY=1 times the stem alone; STEM_C=<c> gives it c input channels instead of 3 (the image
// zero-padded to 4 or 8 channels, a candidate for cuDNN's tensor-core NHWC kernels).
// STEM_SHAPE=c,k,r,stride,pad,in replaces the stem by that convolution: 12,64,4,1,0,115 is the
// stem after a space-to-depth of its padded image (2×2 pixels into 12 channels, the 7×7 stride-2
// kernel as a 4×4 stride-1 one, zero where the 8th tap falls).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudnn_bench.h"

struct Shape {
  int c, k, r, stride, pad, in;  // square kernels and images
  bool relu, residual;           // what follows the convolution in ResNet-50
};

// torchvision's resnet50: the stem, then per stage its blocks (1×1 reduce, 3×3, 1×1 expand
// with the residual add and ReLU after it, and the first block's 1×1 downsample).
std::vector<Shape> Resnet50() {
  const char* stemC = std::getenv("STEM_C");
  std::vector<Shape> v{{stemC != nullptr ? std::atoi(stemC) : 3, 64, 7, 2, 3, 224, true, false}};
  if (const char* shape = std::getenv("STEM_SHAPE")) {
    Shape& s = v[0];
    if (std::sscanf(shape, "%d,%d,%d,%d,%d,%d", &s.c, &s.k, &s.r, &s.stride, &s.pad, &s.in) != 6) {
      std::fprintf(stderr, "STEM_SHAPE wants c,k,r,stride,pad,in\n");
      std::exit(2);
    }
  }
  if (std::getenv("STEM_ONLY") != nullptr) return v;
  const int widths[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3}, sizes[4] = {56, 56, 28, 14};
  int cin = 64;
  for (int s = 0; s < 4; ++s) {
    const int w = widths[s], out = w * 4, stride = s == 0 ? 1 : 2;
    for (int b = 0; b < blocks[s]; ++b) {
      const int in = b == 0 ? sizes[s] : sizes[s] / stride;
      const int st = b == 0 ? stride : 1;
      v.push_back({b == 0 ? cin : out, w, 1, 1, 0, in, true, false});
      v.push_back({w, w, 3, st, 1, in, true, false});
      v.push_back({w, out, 1, 1, 0, in / st, true, true});
      if (b == 0) v.push_back({cin, out, 1, st, 0, in, false, false});
    }
    cin = out;
  }
  return v;
}

struct Conv {
  Shape s;
  int out = 0;
  cudnnTensorDescriptor_t x{}, y{}, bias{};
  cudnnFilterDescriptor_t w{};
  cudnnConvolutionDescriptor_t conv{};
  cudnnConvolutionFwdAlgo_t algo{};
  size_t ws = 0;
  void *dx{}, *dw{}, *dy{}, *dz{}, *db{};
};

int main(int argc, char** argv) {
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {32, 1};
  cudnnHandle_t h;
  DN(cudnnCreate(&h));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DN(cudnnSetStream(h, stream));
  cudnnActivationDescriptor_t relu, identity;
  DN(cudnnCreateActivationDescriptor(&relu));
  DN(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  DN(cudnnCreateActivationDescriptor(&identity));
  DN(cudnnSetActivationDescriptor(identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  std::printf("{\"cudnn\":%zu,\"rows\":[\n", cudnnGetVersion());
  bool firstRow = true;
  for (int n : batches) {
    for (int variant = 0; variant < 9; ++variant) {
      // 0 NCHW conv + AddTensor (plans before the layout pass); 1 NHWC conv + AddTensor; 2 NCHW
      // fused; 3 NHWC fused; 4 NHWC fused with FindEx's algorithm; 5 NHWC fused, residual in z;
      // 6 as 5 with the ReLU propagating NaN; 7 NHWC as separate calls (conv, AddTensor for the
      // bias and the residual, ActivationForward: what a refused fused call falls back to);
      // 8 as 5 with N-d descriptors given strides (how the addon describes tensors).
      const bool nhwc = variant == 1 || variant >= 3;
      const bool fused = variant >= 2 && variant != 7;
      const bool find = variant == 4;
      const bool withZ = variant >= 5;
      const bool separate = variant == 7;
      const bool strided = variant == 8;
      cudnnActivationDescriptor_t act = relu;
      if (variant == 6) {
        DN(cudnnCreateActivationDescriptor(&act));
        DN(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
      }
      const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
      std::vector<Conv> convs;
      size_t wsMax = 0;
      bool ok = true;
      std::string failure;
      for (const Shape& s : Resnet50()) {
        Conv c;
        c.s = s;
        c.out = (s.in + 2 * s.pad - s.r) / s.stride + 1;
        DN(cudnnCreateTensorDescriptor(&c.x));
        DN(cudnnCreateTensorDescriptor(&c.y));
        DN(cudnnCreateTensorDescriptor(&c.bias));
        DN(cudnnCreateFilterDescriptor(&c.w));
        if (strided) {
          auto nd = [&](cudnnTensorDescriptor_t d, int nn, int cc, int hw) {
            const int dims[4] = {nn, cc, hw, hw}, strides[4] = {cc * hw * hw, 1, hw * cc, cc};
            DN(cudnnSetTensorNdDescriptor(d, CUDNN_DATA_HALF, 4, dims, strides));
          };
          nd(c.x, n, s.c, s.in);
          nd(c.y, n, s.k, c.out);
          nd(c.bias, 1, s.k, 1);
          const int wdims[4] = {s.k, s.c, s.r, s.r};
          DN(cudnnSetFilterNdDescriptor(c.w, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 4, wdims));
        } else {
          DN(cudnnSetTensor4dDescriptor(c.x, fmt, CUDNN_DATA_HALF, n, s.c, s.in, s.in));
          DN(cudnnSetTensor4dDescriptor(c.y, fmt, CUDNN_DATA_HALF, n, s.k, c.out, c.out));
          DN(cudnnSetTensor4dDescriptor(c.bias, fmt, CUDNN_DATA_HALF, 1, s.k, 1, 1));
          DN(cudnnSetFilter4dDescriptor(c.w, CUDNN_DATA_HALF, fmt, s.k, s.c, s.r, s.r));
        }
        DN(cudnnCreateConvolutionDescriptor(&c.conv));
        DN(cudnnSetConvolution2dDescriptor(c.conv, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                           CUDNN_DATA_FLOAT));
        DN(cudnnSetConvolutionMathType(c.conv, CUDNN_TENSOR_OP_MATH));
        const size_t xn = size_t(n) * s.c * s.in * s.in, yn = size_t(n) * s.k * c.out * c.out;
        CK(cudaMalloc(&c.dx, xn * 2));
        CK(cudaMalloc(&c.dw, size_t(s.k) * s.c * s.r * s.r * 2));
        CK(cudaMalloc(&c.dy, yn * 2));
        CK(cudaMalloc(&c.dz, yn * 2));
        CK(cudaMalloc(&c.db, size_t(s.k) * 2));
        Fill(c.dx, xn);
        Fill(c.dw, size_t(s.k) * s.c * s.r * s.r);
        Fill(c.dz, yn);
        Fill(c.db, s.k);
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        if (find) {
          void* scratch = nullptr;
          const size_t scratchBytes = size_t(256) << 20;
          CK(cudaMalloc(&scratch, scratchBytes));
          DN(cudnnFindConvolutionForwardAlgorithmEx(h, c.x, c.dx, c.w, c.dw, c.conv, c.y, c.dy,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, scratch,
                                                     scratchBytes));
          CK(cudaFree(scratch));
        } else {
          DN(cudnnGetConvolutionForwardAlgorithm_v7(h, c.x, c.w, c.conv, c.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                    &returned, perf));
        }
        int chosen = -1;
        for (int i = 0; i < returned && chosen < 0; ++i)
          if (perf[i].status == CUDNN_STATUS_SUCCESS) chosen = i;
        if (chosen < 0) {
          ok = false;
          failure = "no algorithm";
          break;
        }
        c.algo = perf[chosen].algo;
        DN(cudnnGetConvolutionForwardWorkspaceSize(h, c.x, c.w, c.conv, c.y, c.algo, &c.ws));
        wsMax = std::max(wsMax, c.ws);
        convs.push_back(c);
      }
      void* ws = nullptr;
      CK(cudaMalloc(&ws, std::max<size_t>(wsMax, 256)));
      const float one = 1.0f, zero = 0.0f;
      auto enqueue = [&](bool* good, std::string* why) {
        for (Conv& c : convs) {
          cudnnStatus_t st;
          if (separate) {
            st = cudnnConvolutionForward(h, &one, c.x, c.dx, c.w, c.dw, c.conv, c.algo, ws, wsMax, &zero, c.y, c.dy);
            if (st == CUDNN_STATUS_SUCCESS) st = cudnnAddTensor(h, &one, c.bias, c.db, &one, c.y, c.dy);
            if (st == CUDNN_STATUS_SUCCESS && c.s.residual) st = cudnnAddTensor(h, &one, c.y, c.dz, &one, c.y, c.dy);
            if (st == CUDNN_STATUS_SUCCESS && c.s.relu) st = cudnnActivationForward(h, relu, &one, c.y, c.dy, &zero, c.y, c.dy);
          } else if (!fused) {
            st = cudnnConvolutionForward(h, &one, c.x, c.dx, c.w, c.dw, c.conv, c.algo, ws, wsMax, &zero, c.y, c.dy);
            if (st == CUDNN_STATUS_SUCCESS) st = cudnnAddTensor(h, &one, c.bias, c.db, &one, c.y, c.dy);
          } else {
            const bool z = withZ && c.s.residual;
            const float alpha2 = z ? 1.0f : 0.0f;
            st = cudnnConvolutionBiasActivationForward(h, &one, c.x, c.dx, c.w, c.dw, c.conv, c.algo, ws, wsMax, &alpha2,
                                                       c.y, z ? c.dz : c.dy, c.bias, c.db,
                                                       c.s.relu ? act : identity, c.y, c.dy);
            if (st != CUDNN_STATUS_SUCCESS && !c.s.relu) {
              // IDENTITY needs IMPLICIT_PRECOMP_GEMM: what a plan would do is the unfused pair.
              st = cudnnConvolutionForward(h, &one, c.x, c.dx, c.w, c.dw, c.conv, c.algo, ws, wsMax, &zero, c.y, c.dy);
              if (st == CUDNN_STATUS_SUCCESS) st = cudnnAddTensor(h, &one, c.bias, c.db, &one, c.y, c.dy);
            }
          }
          if (st != CUDNN_STATUS_SUCCESS) {
            *good = false;
            *why = std::string(cudnnGetErrorString(st)) + " at c=" + std::to_string(c.s.c) + " k=" +
                   std::to_string(c.s.k) + " r=" + std::to_string(c.s.r) + " algo=" + std::to_string(int(c.algo));
            return;
          }
        }
      };
      float median = -1, eager = -1;
      if (ok) {
        enqueue(&ok, &failure);  // warm-up, and the first error if any
        CK(cudaStreamSynchronize(stream));
      }
      if (ok) {
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        std::vector<float> times;
        for (int i = 0; i < 30; ++i) {
          CK(cudaEventRecord(a, stream));
          enqueue(&ok, &failure);
          CK(cudaEventRecord(b, stream));
          CK(cudaEventSynchronize(b));
          float ms;
          CK(cudaEventElapsedTime(&ms, a, b));
          times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        eager = times[times.size() / 2];
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        enqueue(&ok, &failure);
        CK(cudaStreamEndCapture(stream, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        for (int i = 0; i < 10; ++i) CK(cudaGraphLaunch(exec, stream));
        times.clear();
        for (int i = 0; i < 100; ++i) {
          CK(cudaEventRecord(a, stream));
          CK(cudaGraphLaunch(exec, stream));
          CK(cudaEventRecord(b, stream));
          CK(cudaEventSynchronize(b));
          float ms;
          CK(cudaEventElapsedTime(&ms, a, b));
          times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        median = times[times.size() / 2];
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
      }
      static const char* names[] = {"nchw conv+addTensor", "nhwc conv+addTensor", "nchw fused bias+relu",
                                    "nhwc fused bias+relu", "nhwc fused, FindEx algo", "nhwc fused + residual z",
                                    "nhwc fused + z, relu propagates NaN", "nhwc separate calls (fallback)",
                                    "nhwc fused + z, N-d strided descriptors"};
      std::string algos;
      for (const Conv& c : convs) algos += (algos.empty() ? "" : ",") + std::to_string(int(c.algo));
      std::printf("%s{\"batch\":%d,\"variant\":\"%s\",\"convs\":%zu,\"graphMs\":%.4f,\"eagerMs\":%.4f,\"ok\":%s,"
                  "\"failure\":\"%s\",\"workspaceMiB\":%.1f,\"algos\":[%s]}\n",
                  firstRow ? "" : ",", n, names[variant], convs.size(), median, eager, ok ? "true" : "false",
                  failure.c_str(), wsMax / 1048576.0, algos.c_str());
      std::fflush(stdout);
      firstRow = false;
      for (Conv& c : convs) {
        cudaFree(c.dx), cudaFree(c.dw), cudaFree(c.dy), cudaFree(c.dz), cudaFree(c.db);
        cudnnDestroyTensorDescriptor(c.x), cudnnDestroyTensorDescriptor(c.y), cudnnDestroyTensorDescriptor(c.bias);
        cudnnDestroyFilterDescriptor(c.w), cudnnDestroyConvolutionDescriptor(c.conv);
      }
      cudaFree(ws);
    }
  }
  std::printf("]}\n");
  return 0;
}
