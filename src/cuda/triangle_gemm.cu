// Block-column GEMMs for symmetric results and triangular factors (see triangle_gemm.hpp).
#include "src/cuda/triangle_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>

#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"

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

/// The upper triangle of an n x n G = X^T X by recursive halves: `gemm_at(xc, yc, xs, ys)`
/// computes G(xc : xc + xs, yc : yc + ys) := X(:, xc : xc + xs)^T X(:, yc : yc + ys); for the
/// columns o .. o + s, the off-diagonal block by one GEMM,
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
  // The upper triangle by recursive halves (upper_by_halves). Measured on the H100 (session
  // 21, scripts/dev/gemm_probe.cu, 2^20 x 1024 FP64): 22.2 ms against 25.7 for block columns
  // of 128 (the off-diagonal GEMMs are wider: 512 x 512, 256 x 256, ...). FP32 stays on
  // SGEMM: a 3xTF32 split on cuBLAS's TF32 GEMMs (hi and lo of W's row chunks, H^T H + H^T L
  // + L^T H) took the FP32 explicit Q of 2^20 x 1024 from 112.9 to 93.3 ms but lost an order
  // of orthogonality (1.5e-4 against 1.6e-5): the tensor cores' accumulation truncates, and
  // over cuBLAS's long k loops the bias on same-sign sums (G's diagonal) reaches ~1e-4.
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
