// Session 24 probe: CUTLASS's 3xTF32 GEMM (OpMultiplyAddFastF32: each FP32 operand split as
// big + small TF32 in registers, three mma) against cublasSgemm on larfb's C -= V Y of geqrf's
// form by CholeskyQR panels (column-major, m = 2^20 rows, k = 256 or 128), several tile shapes.
// Median of 5 after a warm-up; the max relative difference to SGEMM's result as a sanity check.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<cutlass>/include -o cutlass_probe cutlass_probe.cu -lcublas
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/gemm/device/gemm_splitk_parallel.h"

#define CK(x)                                                          \
  do {                                                                 \
    auto s_ = (x);                                                     \
    if (s_ != 0) {                                                     \
      std::printf("error %d at %s:%d\n", int(s_), __FILE__, __LINE__); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

cudaEvent_t e0, e1;

double time_ms(const std::function<void()>& f) {
  f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

__global__ void fill(float* x, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    x[i] = (float(h & 0xffffff) / float(0x1000000)) * 2.0f - 1.0f + 1e-7f;
  }
}

using Col = cutlass::layout::ColumnMajor;
template <int TM, int TN, int TK, int WM, int WN, int Stages>
using Gemm3x = cutlass::gemm::device::Gemm<
    float, Col, float, Col, float, Col, float, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<TM, TN, TK>, cutlass::gemm::GemmShape<WM, WN, TK>,
    cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages, 4, 4, false,
    cutlass::arch::OpMultiplyAddFastF32>;

using Row = cutlass::layout::RowMajor;
template <int TM, int TN, int TK, int WM, int WN, int Stages>
using SplitK3x = cutlass::gemm::device::GemmSplitKParallel<
    float, Row, float, Col, float, Col, float, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<TM, TN, TK>, cutlass::gemm::GemmShape<WM, WN, TK>,
    cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::epilogue::thread::Convert<float, 4, float>,
    cutlass::reduction::thread::ReduceAdd<float, float, 4>,
    cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle, Stages, 4, 4,
    cutlass::arch::OpMultiplyAddFastF32>;

// W (256 x n, ld 256) := V^T C over m rows, split-K parallel (each slice a short chain).
template <class G>
void run_tn(const char* name, std::int64_t m, std::int64_t n, const float* v, const float* c,
            float* w, int slices, double base) {
  typename G::Arguments args({256, int(n), int(m)}, {v, m}, {c, m}, {w, 256}, {w, 256},
                             {1.0f, 0.0f}, slices);
  G op;
  if (op.can_implement(args) != cutlass::Status::kSuccess) {
    std::printf("  %-24s cannot implement\n", name);
    return;
  }
  const std::size_t bytes = G::get_workspace_size(args);
  void* ws = nullptr;
  CK(cudaMalloc(&ws, bytes + 16));
  if (op.initialize(args, ws) != cutlass::Status::kSuccess) {
    std::printf("  %-24s cannot initialize\n", name);
    return;
  }
  const double t = time_ms([&] { CK(int(op())); });
  std::printf("  %-24s slices %4d ws %6.1f MB %8.3f ms %6.1f TFLOP/s  %.2fx SGEMM\n", name, slices,
              bytes / 1e6, t, 2.0 * m * n * 256 / t * 1e-9, base / t);
  CK(cudaFree(ws));
}

template <class G>
void run(const char* name, std::int64_t m, std::int64_t n, std::int64_t k, const float* v,
         const float* y, float* c, float* ref, double base) {
  typename G::Arguments args({int(m), int(n), int(k)}, {v, m}, {y, k}, {c, m}, {c, m},
                             {-1.0f, 1.0f});
  G op;
  if (op.can_implement(args) != cutlass::Status::kSuccess) {
    std::printf("  %-24s cannot implement\n", name);
    return;
  }
  const double t = time_ms([&] {
    CK(int(op(args)));
  });
  std::printf("  %-24s %8.3f ms %6.1f TFLOP/s  %.2fx SGEMM\n", name, t,
              2.0 * m * n * k / t * 1e-9, base / t);
}

int main() {
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const std::int64_t m = 1 << 20;
  float *v, *c, *y;
  CK(cudaMalloc(&v, sizeof(float) * m * 256));
  CK(cudaMalloc(&c, sizeof(float) * m * 512));
  CK(cudaMalloc(&y, sizeof(float) * 256 * 512));
  fill<<<4096, 256>>>(v, m * 256, 1);
  fill<<<4096, 256>>>(c, m * 512, 2);
  fill<<<64, 256>>>(y, 256 * 512, 3);
  cublasHandle_t h;
  CK(cublasCreate(&h));
  for (const auto& nk : {std::pair<std::int64_t, std::int64_t>{256, 256}, {512, 256}, {128, 128}}) {
    const std::int64_t n = nk.first, k = nk.second;
    const float alpha = -1.0f, beta = 1.0f;
    const double base = time_ms([&] {
      CK(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, v, m, y, k, &beta, c, m));
    });
    std::printf("C -= V Y, m 2^20 n %lld k %lld: cublasSgemm %8.3f ms %6.1f TFLOP/s\n",
                (long long)n, (long long)k, base, 2.0 * m * n * k / base * 1e-9);
    run<Gemm3x<128, 64, 16, 64, 32, 3>>("128x64x16 w64x32 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 64, 16, 64, 32, 4>>("128x64x16 w64x32 s4", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 64, 16, 64, 32, 5>>("128x64x16 w64x32 s5", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 64, 32, 64, 32, 3>>("128x64x32 w64x32 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 64, 32, 64, 32, 4>>("128x64x32 w64x32 s4", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<64, 64, 16, 32, 32, 4>>("64x64x16 w32x32 s4", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<64, 64, 32, 32, 32, 4>>("64x64x32 w32x32 s4", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<256, 64, 16, 64, 32, 3>>("256x64x16 w64x32 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<256, 64, 32, 64, 32, 3>>("256x64x32 w64x32 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<64, 128, 16, 32, 64, 3>>("64x128x16 w32x64 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 32, 16, 64, 16, 4>>("128x32x16 w64x16 s4", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 128, 16, 64, 32, 3>>("128x128x16 w64x32 s3", m, n, k, v, y, c, nullptr, base);
    run<Gemm3x<128, 128, 16, 32, 64, 3>>("128x128x16 w32x64 s3", m, n, k, v, y, c, nullptr, base);
  }
  float* w;
  CK(cudaMalloc(&w, sizeof(float) * 256 * 512));
  for (std::int64_t n : {256, 512}) {
    const float one = 1.0f, zero = 0.0f;
    const double base = time_ms([&] {
      CK(cublasSgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, n, m, &one, v, m, c, m, &zero, w, 256));
    });
    std::printf("W = V^T C, m 2^20 n %lld: cublasSgemm %8.3f ms %6.1f TFLOP/s\n", (long long)n, base,
                2.0 * m * n * 256 / base * 1e-9);
    for (int slices : {128, 256, 512, 1024}) {
      run_tn<SplitK3x<128, 64, 16, 64, 32, 3>>("tn 128x64x16 w64x32 s3", m, n, v, c, w, slices, base);
      run_tn<SplitK3x<64, 64, 16, 32, 32, 4>>("tn 64x64x16 w32x32 s4", m, n, v, c, w, slices, base);
      run_tn<SplitK3x<128, 128, 16, 64, 32, 3>>("tn 128x128x16 w64x32 s3", m, n, v, c, w, slices, base);
    }
  }
  return 0;
}
