// larfb's last product, C -= V Y, in FP32 on the TF32 tensor cores with the 3xTF32 split
// (src/cuda/larfb_tf32.hpp). The trailing updates of the tall FP32 Householder QR (geqrf's
// form by CholeskyQR panels, src/core/tsqr.cpp) are half of its time on cuBLAS's SGEMM, which
// runs on the FP32 pipes (~35 TFLOP/s at ncu's base clocks, session 24 run 1); cuBLAS's TF32
// GEMMs run at ~250.
//
// Split. x = hi + lo with hi = tf32(x) (round to nearest) and lo = tf32(x - hi), both exactly
// representable in TF32, so that whatever conversion the GEMM applies to its inputs leaves
// them unchanged; |x - hi - lo| <= 2^-22 |x|. V Y is taken as lo_V hi_Y + hi_V lo_Y + hi_V hi_Y
// (lo_V lo_Y, <= 2^-22 |V||Y|, dropped): one GEMM with an inner dimension of 3k over
// X = [lo_V | hi_V | hi_V] (a row chunk of V at a time, in the split workspace) and
// Z = [hi_Y; lo_Y; hi_Y], the small terms first in the sum.
//
// Accumulation. The tensor cores truncate each mma's FP32 sum; over the 3k-long chain of one
// output that is a bias of ~0.118 u per term on same-sign sums (session 22's measure, u =
// 2^-24): ~30 u relative at k = 256 for the main term, where SGEMM's bound for the same
// product is k u = 256 u. The inner dimension stays k (no long chains: W = V^T C, whose inner
// dimension is C's rows, stays on SGEMM).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpuqr/error.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "src/cuda/gram_tf32.cuh"
#include "src/cuda/larfb_tf32.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;

std::atomic<int> tf32_larfb_override{-1};   // larfb_tf32_mode(): -1 default, 0 off, 1 on
std::atomic<std::int64_t> tf32_larfb_calls{0};  // larfb_tf32_count()

/// GPUQR_<name> as an integer in [lo, hi], else dflt (read on every call: A/B runs).
std::int64_t knob(const char* name, std::int64_t dflt, std::int64_t lo, std::int64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return *end == '\0' && x >= lo && x <= hi ? std::int64_t(x) : dflt;
}

__device__ __forceinline__ float tf32_round(float x) { return __uint_as_float(tf32_rna(x)); }

/// x (rows x 3k, ld ldx) := [lo | hi | hi] of v (rows x k, ld ldv).
__global__ void split_columns_kernel(const float* v, std::int64_t ldv, std::int64_t rows,
                                     std::int64_t k, float* x, std::int64_t ldx) {
  for (std::int64_t j = blockIdx.y; j < k; j += gridDim.y) {
    float* lo = x + j * ldx;
    float* hi = x + (j + k) * ldx;
    float* hi2 = x + (j + 2 * k) * ldx;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const float e = v[i + j * ldv];
      const float h = tf32_round(e);
      lo[i] = tf32_round(e - h);
      hi[i] = h;
      hi2[i] = h;
    }
  }
}

/// z (3k x n, ld 3k) := [hi; lo; hi] of y (k x n, ld ldy).
__global__ void split_rows_kernel(const float* y, std::int64_t ldy, std::int64_t k,
                                  std::int64_t n, float* z) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y) {
    float* col = z + j * 3 * k;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < k;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const float e = y[i + j * ldy];
      const float h = tf32_round(e);
      col[i] = h;
      col[i + k] = tf32_round(e - h);
      col[i + 2 * k] = h;
    }
  }
}

dim3 grid_for(std::int64_t rows, std::int64_t cols) {
  const std::int64_t bx = std::min<std::int64_t>((rows + kThreads - 1) / kThreads, 1024);
  const std::int64_t by = std::min<std::int64_t>(cols, 65535);
  return dim3(static_cast<unsigned>(std::max<std::int64_t>(bx, 1)),
              static_cast<unsigned>(std::max<std::int64_t>(by, 1)));
}

}  // namespace

void larfb_tf32_mode(int mode) { tf32_larfb_override.store(mode); }
int larfb_tf32_override() { return tf32_larfb_override.load(); }
std::int64_t larfb_tf32_count() { return tf32_larfb_calls.load(); }

bool larfb_tf32_wanted(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return false;
  const int mode = tf32_larfb_override.load();
  if (mode >= 0) return mode == 1;
  const char* v = std::getenv("GPUQR_LARFB_TF32");
  if (v != nullptr && *v != '\0') {
    const std::string s(v);
    GPUQR_CHECK_ARG(s == "0" || s == "1", "GPUQR_LARFB_TF32 is '" + s + "': 0 or 1");
    if (s == "0") return false;
  }
  // Where the split pays (session 24, H100): long V (the split's pass over it is shared by
  // all of C's columns) and inner dimensions of the CholeskyQR panels' blocks.
  return gram_tf32_enabled() &&
         m >= knob("GPUQR_LARFB_TF32_ROWS", 131072, 1, std::int64_t(1) << 40) &&
         k >= knob("GPUQR_LARFB_TF32_MIN_K", 128, 1, 1 << 20) &&
         n >= knob("GPUQR_LARFB_TF32_MIN_N", 128, 1, std::int64_t(1) << 40);
}

bool minus_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                          std::int64_t m, std::int64_t k, const float* y, std::int64_t ldy,
                          std::int64_t n, float* c, std::int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return true;
  DeviceGuard guard(ctx.device);
  // Row chunks of X within GPUQR_LARFB_TF32_CHUNK_MB (1 GiB: 349,525 rows at k = 256), of
  // equal height (a multiple of 32 rows), after Z.
  const std::int64_t budget = knob("GPUQR_LARFB_TF32_CHUNK_MB", 1024, 1, 1 << 20) << 20;
  const std::int64_t row_bytes = 3 * k * std::int64_t(sizeof(float));
  const std::int64_t max_rows = std::max<std::int64_t>(32, budget / row_bytes / 32 * 32);
  const std::int64_t chunks = (m + max_rows - 1) / max_rows;
  const std::int64_t rows = std::min(m, ((m + chunks - 1) / chunks + 31) / 32 * 32);
  const std::int64_t z_elems = (3 * k * n + 63) / 64 * 64;
  float* z = nullptr;
  try {
    z = static_cast<float*>(detail::cuda_workspace(
        ctx, static_cast<std::size_t>(z_elems + rows * 3 * k) * sizeof(float),
        detail::ContextImpl::kSplitWorkspace));
  } catch (const OutOfMemory&) {
    return false;  // the caller takes SGEMM, which needs no workspace
  }
  float* x = z + z_elems;
  split_rows_kernel<<<grid_for(k, n), kThreads, 0, ctx.stream>>>(y, ldy, k, n, z);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const cublasHandle_t h = static_cast<cublasHandle_t>(ctx.cublas);
  const float minus_one = -1.0f, one = 1.0f;
  for (std::int64_t s = 0; s < m; s += rows) {
    const std::int64_t r = std::min(rows, m - s);
    split_columns_kernel<<<grid_for(r, k), kThreads, 0, ctx.stream>>>(v + s, ldv, r, k, x, r);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    GPUQR_CUBLAS_CHECK(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, r, n, 3 * k, &minus_one, x,
                                       CUDA_R_32F, r, z, CUDA_R_32F, 3 * k, &one, c + s,
                                       CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                                       CUBLAS_GEMM_DEFAULT));
  }
  tf32_larfb_calls.fetch_add(1);
  return true;
}

}  // namespace gpuqr::kernels::cuda
