// ResNet-50's 1×1 stride-1 convolutions (torchvision, 224×224, fp16, NHWC) two ways, per layer:
// cuDNN's fused call (cudnnConvolutionBiasActivationForward, y = relu(conv(x) + bias [+ z]),
// what plans run now) with every legacy algorithm it accepts, and cuBLASLt's GEMM with the
// RELU_BIAS / BIAS epilogue and the residual as C (beta 1) with each of its heuristic's top
// candidates. An NHWC 1×1 stride-1 convolution is the GEMM Y[M, K] = X[M, C]·W[K, C]ᵀ, M = N·H·W.
// Each variant is timed as a CUDA graph of 20 calls over 4 rotating buffer sets (more than the
// 50 MB L2), median of 30 replays; both outputs are compared. A standalone program linked to the
// real libraries: it depends on nothing of ours (to choose the plan by measurement).
// usage (GPU machine): g++ -O2 -std=c++17 -I/usr/local/cuda/include bench/gpu/pointwise_convs.cc \
//   -o /tmp/pointwise_convs -L/usr/local/cuda/lib64 -lcudart -lcudnn -lcublasLt && /tmp/pointwise_convs [batch...]
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudnn_bench.h"

#define LT(x)                                                                              \
  do {                                                                                     \
    cublasStatus_t s_ = (x);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, int(s_));     \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct Shape {
  int c, k, in;
  bool relu, residual;
  int count;  // how many of ResNet-50's layers have this shape
};

// The 1×1 stride-1 layers of torchvision's resnet50, one entry per distinct shape.
std::vector<Shape> Shapes() {
  std::vector<Shape> v;
  auto add = [&](Shape s) {
    for (Shape& t : v)
      if (t.c == s.c && t.k == s.k && t.in == s.in && t.relu == s.relu && t.residual == s.residual) return void(++t.count);
    v.push_back(s);
  };
  for (const Bottleneck& b : Resnet50Blocks()) {
    add({b.cin, b.width, b.in, true, false, 1});
    add({b.width, b.out, b.in / b.stride, true, true, 1});
    if (b.first && b.stride == 1) add({b.cin, b.out, b.in, false, false, 1});
  }
  return v;
}

int main(int argc, char** argv) {
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {32, 1};
  const CudnnBench bench = OpenCudnnBench(size_t(64) << 20);
  cublasLtHandle_t lt;
  LT(cublasLtCreate(&lt));
  std::printf("{\"cudnn\":%zu,\"cublasLt\":%zu,\"rows\":[\n", cudnnGetVersion(), cublasLtGetVersion());
  bool firstRow = true;
  for (int n : batches) {
    double sumHeuristic = 0, sumBestDnn = 0, sumBestLt = 0, sumBest = 0;
    for (const Shape& s : Shapes()) {
      const size_t M = size_t(n) * s.in * s.in, xn = M * s.c, yn = M * s.k, wn = size_t(s.k) * s.c;
      void *x[kSets], *y[kSets], *z[kSets], *d[kSets], *w, *bias;
      for (int i = 0; i < kSets; ++i) {
        CK(cudaMalloc(&x[i], xn * 2));
        CK(cudaMalloc(&y[i], yn * 2));
        CK(cudaMalloc(&z[i], yn * 2));
        CK(cudaMalloc(&d[i], yn * 2));
        Fill(x[i], xn, i);
        Fill(z[i], yn, 7 + i);
      }
      CK(cudaMalloc(&w, wn * 2));
      CK(cudaMalloc(&bias, size_t(s.k) * 2));
      Fill(w, wn, 3);
      Fill(bias, s.k, 5);
      // cuDNN, NHWC.
      const NhwcConv cv = OpenNhwcConv(n, s.c, s.k, 1, 1, 0, s.in);
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      DN(cudnnGetConvolutionForwardAlgorithm_v7(bench.dnn, cv.x, cv.w, cv.conv, cv.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      int heuristic = -1;
      for (int i = 0; i < returned && heuristic < 0; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) heuristic = perf[i].algo;
      const float one = 1.0f, alpha2 = s.residual ? 1.0f : 0.0f;
      std::string dnnTimes;
      float heuristicUs = -1, bestDnn = 1e9f;
      for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
        size_t need = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(bench.dnn, cv.x, cv.w, cv.conv, cv.y, cudnnConvolutionFwdAlgo_t(algo), &need) !=
                CUDNN_STATUS_SUCCESS ||
            need > bench.wsBytes)
          continue;
        const float us = GraphTimeUs(bench.stream, [&](int i) {
          return cudnnConvolutionBiasActivationForward(bench.dnn, &one, cv.x, x[i], cv.w, w, cv.conv, cudnnConvolutionFwdAlgo_t(algo), bench.ws,
                                                       bench.wsBytes, &alpha2, cv.y, s.residual ? z[i] : y[i], cv.bias, bias,
                                                       s.relu ? bench.relu : bench.identity, cv.y, y[i]) == CUDNN_STATUS_SUCCESS;
        });
        if (us < 0) continue;
        dnnTimes += (dnnTimes.empty() ? "" : ",") + std::string("\"") + std::to_string(algo) + "\":" + std::to_string(us);
        if (algo == heuristic) heuristicUs = us;
        bestDnn = std::min(bestDnn, us);
      }
      // cuBLASLt, column-major: D[K, M] = W(stored [C, K] col-major, op T)·X(stored [C, M], op N) + Z.
      cublasLtMatmulDesc_t desc;
      LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      const int32_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
      LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof(opT)));
      LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof(opN)));
      const cublasLtEpilogue_t epi = s.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
      LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
      LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      cublasLtMatrixLayout_t ad, bdl, dd;
      LT(cublasLtMatrixLayoutCreate(&ad, CUDA_R_16F, s.c, s.k, s.c));
      LT(cublasLtMatrixLayoutCreate(&bdl, CUDA_R_16F, s.c, M, s.c));
      LT(cublasLtMatrixLayoutCreate(&dd, CUDA_R_16F, s.k, M, s.k));
      cublasLtMatmulPreference_t pref;
      LT(cublasLtMatmulPreferenceCreate(&pref));
      const uint64_t limit = size_t(32) << 20;
      LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)));
      cublasLtMatmulHeuristicResult_t results[16];
      int got = 0;
      LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, ad, bdl, dd, dd, pref, 16, results, &got));
      const float beta = s.residual ? 1.0f : 0.0f;
      std::string ltTimes;
      float firstLt = -1, bestLt = 1e9f;
      int bestLtIndex = -1;
      for (int r = 0; r < got; ++r) {
        const float us = GraphTimeUs(bench.stream, [&](int i) {
          return cublasLtMatmul(lt, desc, &one, w, ad, x[i], bdl, &beta, s.residual ? z[i] : d[i], dd, d[i], dd,
                                &results[r].algo, bench.ws, limit, bench.stream) == CUBLAS_STATUS_SUCCESS;
        });
        ltTimes += (ltTimes.empty() ? "" : ",") + std::to_string(us);
        if (us < 0) continue;
        if (r == 0) firstLt = us;
        if (us < bestLt) bestLt = us, bestLtIndex = r;
      }
      // Same answer? (set 0 of both, last written by the timing runs)
      double maxDiff = -1;
      if (heuristic >= 0 && bestLtIndex >= 0) {
        cudnnConvolutionBiasActivationForward(bench.dnn, &one, cv.x, x[0], cv.w, w, cv.conv, cudnnConvolutionFwdAlgo_t(heuristic), bench.ws,
                                              bench.wsBytes, &alpha2, cv.y, s.residual ? z[0] : y[0], cv.bias, bias,
                                              s.relu ? bench.relu : bench.identity, cv.y, y[0]);
        cublasLtMatmul(lt, desc, &one, w, ad, x[0], bdl, &beta, s.residual ? z[0] : d[0], dd, d[0], dd,
                       &results[bestLtIndex].algo, bench.ws, limit, bench.stream);
        CK(cudaStreamSynchronize(bench.stream));
        const std::vector<float> a = Read(y[0], yn), b = Read(d[0], yn);
        maxDiff = 0;
        for (size_t i = 0; i < yn; ++i) maxDiff = std::max(maxDiff, double(std::fabs(a[i] - b[i])));
      }
      const float best = std::min(bestDnn, bestLt);
      sumHeuristic += heuristicUs * s.count;
      sumBestDnn += bestDnn * s.count;
      sumBestLt += bestLt * s.count;
      sumBest += best * s.count;
      std::printf("%s{\"batch\":%d,\"c\":%d,\"k\":%d,\"hw\":%d,\"relu\":%s,\"residual\":%s,\"layers\":%d,"
                  "\"heuristicAlgo\":%d,\"heuristicUs\":%.2f,\"cudnnUs\":{%s},\"cublasLtUs\":[%s],"
                  "\"bestCudnnUs\":%.2f,\"bestCublasLtUs\":%.2f,\"firstCublasLtUs\":%.2f,\"maxAbsDiff\":%.4g,"
                  "\"mib\":%.1f}\n",
                  firstRow ? "" : ",", n, s.c, s.k, s.in, s.relu ? "true" : "false", s.residual ? "true" : "false",
                  s.count, heuristic, heuristicUs, dnnTimes.c_str(), ltTimes.c_str(), bestDnn, bestLt, firstLt,
                  maxDiff, (xn + yn * (s.residual ? 2 : 1)) * 2 / 1048576.0);
      std::fflush(stdout);
      firstRow = false;
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(ad), cublasLtMatrixLayoutDestroy(bdl), cublasLtMatrixLayoutDestroy(dd);
      cublasLtMatmulDescDestroy(desc);
      CloseNhwcConv(cv);
      for (int i = 0; i < kSets; ++i) cudaFree(x[i]), cudaFree(y[i]), cudaFree(z[i]), cudaFree(d[i]);
      cudaFree(w), cudaFree(bias);
    }
    std::printf(",{\"batch\":%d,\"totalUs\":{\"heuristic\":%.1f,\"bestCudnn\":%.1f,\"bestCublasLt\":%.1f,\"best\":%.1f}}\n",
                n, sumHeuristic, sumBestDnn, sumBestLt, sumBest);
  }
  std::printf("]}\n");
  return 0;
}
