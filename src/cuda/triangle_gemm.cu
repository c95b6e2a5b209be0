// Block-column GEMMs for symmetric results and triangular factors (see triangle_gemm.hpp).
#include "src/cuda/triangle_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"
#include "src/cuda/gram_kernels.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;

constexpr int kThreads = 256;

/// g(i, j) := g(j, i) below the diagonal.
template <class T>
__global__ void mirror_upper_kernel(T* g, std::int64_t ldg, std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = j + 1 + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
      g[i + j * ldg] = g[j + i * ldg];
}

/// TF32 rounding to nearest (ties away from zero), as cvt.rna.tf32.f32 for finite x.
__device__ __forceinline__ float tf32_rna(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// hi := tf32(w), lo := tf32(w - hi) for w rows x cols (ld ldw); hi and lo ld ldh.
__global__ void split_tf32_kernel(const float* w, std::int64_t ldw, std::int64_t rows,
                                  std::int64_t cols, float* hi, float* lo, std::int64_t ldh) {
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const float v = w[i + j * ldw];
      const float h = tf32_rna(v);
      hi[i + j * ldh] = h;
      lo[i + j * ldh] = tf32_rna(v - h);
    }
}

/// g(i, j) = g(j, i) := g(i, j) + c(i, j) + c(j, i) for i <= j: the upper triangle of H^T H
/// plus the symmetric part of C = H^T L, twice.
__global__ void combine_mirror_kernel(float* g, std::int64_t ldg, const float* c,
                                      std::int64_t ldc, std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= j;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const float v = g[i + j * ldg] + (c[i + j * ldc] + c[j + i * ldc]);
      g[i + j * ldg] = v;
      g[j + i * ldg] = v;
    }
}

/// The upper triangle of G := beta G + X^T X (X m x n, ld ldx) by recursive halves through
/// `gemm_at(rows, cols, k, x_cols, y_cols, g_block, beta)` computing g_block := beta g_block +
/// X(:, x_cols)^T X(:, y_cols): for the columns o .. o + s, the off-diagonal block by one GEMM,
/// then each half the same way, down to diagonal blocks of at most nb columns (full GEMMs).
/// h is a multiple of nb, so the leaves are nb wide but the last.
template <class Gemm>
void upper_by_halves(std::int64_t n, std::int64_t nb, Gemm gemm_at) {
  std::int64_t stack[2 * 64];
  int top = 0;
  stack[top++] = 0;
  stack[top++] = n;
  while (top > 0) {
    const std::int64_t s = stack[--top], o = stack[--top];
    if (s <= nb) {
      gemm_at(o, o, s, s);
      continue;
    }
    const std::int64_t h = std::min(s - 1, (s / 2 + nb - 1) / nb * nb);
    gemm_at(o, o + h, h, s - h);
    stack[top++] = o;
    stack[top++] = h;
    stack[top++] = o + h;
    stack[top++] = s - h;
  }
}

/// GPUQR_TF32_CHUNK_MB (read on every call: tests, measurements): the 3xTF32 Gram matrix's
/// split chunk (hi and lo) in MiB, 16 to 16384, 512 by default.
std::size_t split_chunk_bytes() {
  const char* v = std::getenv("GPUQR_TF32_CHUNK_MB");
  const long mb = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
  return std::size_t(mb >= 16 && mb <= 16384 ? mb : 512) << 20;
}

void gemm_tf32(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
               std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
               std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(cublasGemmEx_64(h, ta, tb, m, n, k, &one, a, CUDA_R_32F, lda, b, CUDA_R_32F,
                                     ldb, &beta, c, CUDA_R_32F, ldc,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

/// G := W^T W in FP32 on the TF32 tensor cores, 3xTF32: W = H + L with H = tf32(W) and
/// L = tf32(W - H) (|W - H - L| <= 2^-22 |W|), W^T W = H^T H + H^T L + L^T H (+ L^T L,
/// <= 2^-22 |W|^T |W|, dropped): a GEMM's accuracy in FP32 at the tensor cores' rate.
/// Row chunks of W are split into the split workspace; H^T H's upper triangle (by halves)
/// and C = H^T L (whole) accumulate over the chunks, then G = upper + C + C^T, mirrored.
/// Session 21 (H100, scripts/dev/gemm_probe.cu, 2^20 x 1024): cuBLAS's SGEMM Gram matrix
/// 29.7 ms at 41.7 TFLOP/s; a TF32 GEMM of the full Gram matrix 7.0 ms.
void gram_split_tf32(detail::ContextImpl& ctx, const float* w, std::int64_t ldw,
                     std::int64_t m, std::int64_t n, float* g, std::int64_t ldg) {
  const std::int64_t nb = triangle_block_width();
  const std::int64_t rows = std::min<std::int64_t>(
      m, std::max<std::int64_t>(
             1024, static_cast<std::int64_t>(split_chunk_bytes() / (2 * sizeof(float) * n)) /
                       256 * 256));
  const std::size_t cn = (std::size_t(n) * std::size_t(n) + 63) / 64 * 64;
  float* base = static_cast<float*>(detail::cuda_workspace(
      ctx, (2 * std::size_t(rows) * std::size_t(n) + cn) * sizeof(float),
      detail::ContextImpl::kSplitWorkspace));
  float* c = base;
  float* hi = base + cn;
  float* lo = hi + std::size_t(rows) * std::size_t(n);
  const cublasHandle_t h = blas(ctx);
  for (std::int64_t s = 0; s < m; s += rows) {
    const std::int64_t k = std::min(rows, m - s);
    const auto bx = static_cast<unsigned>(std::min<std::int64_t>((k + kThreads - 1) / kThreads, 64));
    const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
    split_tf32_kernel<<<dim3(bx, by), kThreads, 0, ctx.stream>>>(w + s, ldw, k, n, hi, lo, rows);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    const float beta = s == 0 ? 0.0f : 1.0f;
    upper_by_halves(n, nb, [&](std::int64_t xc, std::int64_t yc, std::int64_t xs,
                               std::int64_t ys) {
      gemm_tf32(h, CUBLAS_OP_T, CUBLAS_OP_N, xs, ys, k, hi + xc * rows, rows, hi + yc * rows,
                rows, beta, g + xc + yc * ldg, ldg);
    });
    gemm_tf32(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, k, hi, rows, lo, rows, beta, c, n);
  }
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  combine_mirror_kernel<<<dim3(bx, by), kThreads, 0, ctx.stream>>>(g, ldg, c, n, n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

}  // namespace

std::int64_t triangle_block_width() {
  static const std::int64_t width = [] {
    const char* v = std::getenv("GPUQR_TRI_BLOCK");
    const long w = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
    return w >= 32 && w <= 1024 ? std::int64_t(w) : kTriangleBlock;
  }();
  return width;
}

template <class T>
void gram_blocked(detail::ContextImpl& ctx, const T* w, std::int64_t ldw, std::int64_t m,
                  std::int64_t n, T* g, std::int64_t ldg) {
  if (n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (m > 0 && gram_tf32_enabled()) {
      gram_split_tf32(ctx, w, ldw, m, n, g, ldg);
      return;
    }
  }
  // The upper triangle by recursive halves (upper_by_halves). Measured on the H100 (session
  // 21, scripts/dev/gemm_probe.cu, 2^20 x 1024 FP64): 22.2 ms against 25.7 for block columns
  // of 128 (the off-diagonal GEMMs are wider: 512 x 512, 256 x 256, ...).
  // m = 0 included: beta = 0 writes zeros.
  upper_by_halves(n, triangle_block_width(),
                  [&](std::int64_t xc, std::int64_t yc, std::int64_t xs, std::int64_t ys) {
                    gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, xs, ys, m, T(1), w + xc * ldw, ldw,
                         w + yc * ldw, ldw, T(0), g + xc + yc * ldg, ldg);
                  });
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  mirror_upper_kernel<T><<<dim3(bx, by), kThreads, 0, ctx.stream>>>(g, ldg, n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void upper_product_blocked(detail::ContextImpl& ctx, const T* a, std::int64_t lda,
                           std::int64_t m, std::int64_t n, const T* x, std::int64_t ldx, T* q,
                           std::int64_t ldq) {
  if (m == 0 || n == 0) return;
  const std::int64_t nb = triangle_block_width();
  for (std::int64_t j0 = 0; j0 < n; j0 += nb) {
    const std::int64_t j1 = std::min(n, j0 + nb);
    gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, m, j1 - j0, j1, T(1), a, lda, x + j0 * ldx, ldx,
         T(0), q + j0 * ldq, ldq);
  }
}

template <class T>
void upper_product_blocked_in_place(detail::ContextImpl& ctx, T* a, std::int64_t lda,
                                    std::int64_t m, std::int64_t n, const T* x, std::int64_t ldx,
                                    T* w, std::int64_t chunk_rows) {
  if (m == 0 || n == 0) return;
  const std::int64_t nb = triangle_block_width();
  const std::int64_t last = (n - 1) / nb * nb;
  for (std::int64_t s = 0; s < m; s += chunk_rows) {
    const std::int64_t h = std::min(chunk_rows, m - s);
    for (std::int64_t j0 = last; j0 >= 0; j0 -= nb) {
      const std::int64_t jb = std::min(n, j0 + nb) - j0;
      gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, h, jb, j0 + jb, T(1), a + s, lda, x + j0 * ldx,
           ldx, T(0), w, chunk_rows);
      GPUQR_CUDA_CHECK(cudaMemcpy2DAsync(a + s + j0 * lda, lda * sizeof(T), w,
                                         chunk_rows * sizeof(T), h * sizeof(T), jb,
                                         cudaMemcpyDeviceToDevice, ctx.stream));
    }
  }
}

#define GPUQR_INSTANTIATE_TRIANGLE_GEMM(T)                                                      \
  template void gram_blocked<T>(detail::ContextImpl&, const T*, std::int64_t, std::int64_t,     \
                                std::int64_t, T*, std::int64_t);                                \
  template void upper_product_blocked<T>(detail::ContextImpl&, const T*, std::int64_t,          \
                                         std::int64_t, std::int64_t, const T*, std::int64_t,    \
                                         T*, std::int64_t);                                     \
  template void upper_product_blocked_in_place<T>(detail::ContextImpl&, T*, std::int64_t,       \
                                                  std::int64_t, std::int64_t, const T*,         \
                                                  std::int64_t, T*, std::int64_t);

GPUQR_INSTANTIATE_TRIANGLE_GEMM(float)
GPUQR_INSTANTIATE_TRIANGLE_GEMM(double)

}  // namespace gpuqr::kernels::cuda
