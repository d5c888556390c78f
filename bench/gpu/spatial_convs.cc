// The convolutions of ResNet-50 (torchvision, 224×224, fp16, NHWC) that the cuda backend still
// runs through cuDNN: the stem (over the image widened to 4 channels, as plans run it), the 3×3
// convolutions and the three stride-2 1×1 downsamples. Each distinct shape is timed with the
// fused call plans make (cudnnConvolutionBiasActivationForward: ReLU, or identity for the
// downsamples) under every legacy algorithm cuDNN accepts for it, against the algorithm the
// plans take now (the first usable one of cudnnGetConvolutionForwardAlgorithm_v7). An algorithm
// the fused call refuses is timed as plans would then run it: the convolution, then the bias
// added (cudnnAddTensor) and the ReLU. So the totals say what timing cuDNN's algorithms at plan
// creation could win. Each variant is a CUDA graph of 20 calls over 4 rotating
// buffer sets, median of 30 replays (cudnn_bench.h); the outputs of the heuristic's and the
// fastest algorithm are compared. A standalone program linked to the real cuDNN.
// usage (GPU machine): g++ -O2 -std=c++17 -I/usr/local/cuda/include -I/usr/include/x86_64-linux-gnu \
//   bench/gpu/spatial_convs.cc -o /tmp/spatial_convs -L/usr/local/cuda/lib64 -L/usr/lib/x86_64-linux-gnu \
//   -lcudart -lcudnn && /tmp/spatial_convs [batch...]
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudnn_bench.h"

struct Shape {
  int c, k, r, stride, pad, in;
  bool relu;
  int count;  // how many of ResNet-50's layers have this shape
};

std::vector<Shape> Shapes() {
  std::vector<Shape> v{{4, 64, 7, 2, 3, 224, true, 1}};
  auto add = [&](Shape s) {
    for (Shape& t : v)
      if (t.c == s.c && t.k == s.k && t.r == s.r && t.stride == s.stride && t.in == s.in && t.relu == s.relu) return void(++t.count);
    v.push_back(s);
  };
  for (const Bottleneck& b : Resnet50Blocks()) {
    add({b.width, b.width, 3, b.stride, 1, b.in, true, 1});
    if (b.first && b.stride == 2) add({b.cin, b.out, 1, 2, 0, b.in, false, 1});
  }
  return v;
}

int main(int argc, char** argv) {
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {32, 1};
  const CudnnBench bench = OpenCudnnBench(size_t(256) << 20);
  std::printf("{\"cudnn\":%zu,\"rows\":[\n", cudnnGetVersion());
  bool firstRow = true;
  for (int n : batches) {
    double sumHeuristic = 0, sumBest = 0;
    for (const Shape& s : Shapes()) {
      const int out = (s.in + 2 * s.pad - s.r) / s.stride + 1;
      const size_t xn = size_t(n) * s.in * s.in * s.c, yn = size_t(n) * out * out * s.k, wn = size_t(s.k) * s.c * s.r * s.r;
      void *x[kSets], *y[kSets], *w, *bias;
      for (int i = 0; i < kSets; ++i) {
        CK(cudaMalloc(&x[i], xn * 2));
        CK(cudaMalloc(&y[i], yn * 2));
        Fill(x[i], xn, i);
      }
      CK(cudaMalloc(&w, wn * 2));
      CK(cudaMalloc(&bias, size_t(s.k) * 2));
      Fill(w, wn, 3);
      Fill(bias, s.k, 5);
      const NhwcConv cv = OpenNhwcConv(n, s.c, s.k, s.r, s.stride, s.pad, s.in);
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      DN(cudnnGetConvolutionForwardAlgorithm_v7(bench.dnn, cv.x, cv.w, cv.conv, cv.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      int heuristic = -1;
      std::string ranked;
      for (int i = 0; i < returned; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        if (heuristic < 0) heuristic = perf[i].algo;
        ranked += (ranked.empty() ? "" : ",") + std::to_string(int(perf[i].algo));
      }
      const float one = 1.0f, zero = 0.0f;
      // What a plan step runs with `algo`: the fused call, or (refused) the separate calls.
      auto step = [&](int algo, int i, bool* fused) {
        const auto a = cudnnConvolutionFwdAlgo_t(algo);
        if (cudnnConvolutionBiasActivationForward(bench.dnn, &one, cv.x, x[i], cv.w, w, cv.conv, a, bench.ws, bench.wsBytes, &zero, cv.y, y[i], cv.bias, bias,
                                                  s.relu ? bench.relu : bench.identity, cv.y, y[i]) == CUDNN_STATUS_SUCCESS) {
          *fused = true;
          return true;
        }
        *fused = false;
        return cudnnConvolutionForward(bench.dnn, &one, cv.x, x[i], cv.w, w, cv.conv, a, bench.ws, bench.wsBytes, &zero, cv.y, y[i]) == CUDNN_STATUS_SUCCESS &&
               cudnnAddTensor(bench.dnn, &one, cv.bias, bias, &one, cv.y, y[i]) == CUDNN_STATUS_SUCCESS &&
               (!s.relu || cudnnActivationForward(bench.dnn, bench.relu, &one, cv.y, y[i], &zero, cv.y, y[i]) == CUDNN_STATUS_SUCCESS);
      };
      std::string times;
      float heuristicUs = -1, bestUs = 1e9f;
      int bestAlgo = -1;
      for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
        size_t need = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(bench.dnn, cv.x, cv.w, cv.conv, cv.y, cudnnConvolutionFwdAlgo_t(algo), &need) != CUDNN_STATUS_SUCCESS ||
            need > bench.wsBytes)
          continue;
        bool fused = false;
        const float us = GraphTimeUs(bench.stream, [&](int i) { return step(algo, i, &fused); });
        if (us < 0) continue;
        times += (times.empty() ? "" : ",") + std::string("\"") + std::to_string(algo) + (fused ? "" : " unfused") +
                 "\":" + std::to_string(us);
        if (algo == heuristic) heuristicUs = us;
        if (us < bestUs) bestUs = us, bestAlgo = algo;
      }
      double maxDiff = -1;
      if (heuristic >= 0 && bestAlgo >= 0) {
        bool fused;
        step(heuristic, 0, &fused);
        CK(cudaStreamSynchronize(bench.stream));
        const std::vector<float> a = Read(y[0], yn);
        step(bestAlgo, 0, &fused);
        CK(cudaStreamSynchronize(bench.stream));
        const std::vector<float> b = Read(y[0], yn);
        maxDiff = 0;
        for (size_t i = 0; i < yn; ++i) maxDiff = std::max(maxDiff, double(std::fabs(a[i] - b[i])));
      }
      sumHeuristic += heuristicUs * s.count;
      sumBest += bestUs * s.count;
      std::printf("%s{\"batch\":%d,\"c\":%d,\"k\":%d,\"r\":%d,\"stride\":%d,\"hw\":%d,\"relu\":%s,\"layers\":%d,"
                  "\"ranked\":[%s],\"heuristicAlgo\":%d,\"heuristicUs\":%.2f,\"bestAlgo\":%d,\"bestUs\":%.2f,"
                  "\"us\":{%s},\"maxAbsDiff\":%.4g}\n",
                  firstRow ? "" : ",", n, s.c, s.k, s.r, s.stride, s.in, s.relu ? "true" : "false", s.count,
                  ranked.c_str(), heuristic, heuristicUs, bestAlgo, bestUs, times.c_str(), maxDiff);
      std::fflush(stdout);
      firstRow = false;
      CloseNhwcConv(cv);
      for (int i = 0; i < kSets; ++i) cudaFree(x[i]), cudaFree(y[i]);
      cudaFree(w), cudaFree(bias);
    }
    std::printf(",{\"batch\":%d,\"totalUs\":{\"heuristic\":%.1f,\"best\":%.1f}}\n", n, sumHeuristic, sumBest);
  }
  std::printf("]}\n");
  return 0;
}
