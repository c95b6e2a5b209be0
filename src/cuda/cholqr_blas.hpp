// Typed cuBLAS calls (64-bit interface) shared by src/cuda/cholqr_kernels.cu and
// src/cuda/orhr_col.cu; every call checked. src/cuda/ only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "src/core/context_impl.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::cholqr_detail {

inline cublasHandle_t blas(const detail::ContextImpl& ctx) {
  return static_cast<cublasHandle_t>(ctx.cublas);
}

inline void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                 std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                 const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasSgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
inline void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                 std::int64_t n, std::int64_t k, double alpha, const double* a,
                 std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
                 std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasDgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
/// C_i := alpha op(A_i) op(B_i) + beta C_i for i < batch, A_i = a + i stride_a (elements),
/// likewise B_i and C_i (the split-K partial Gram matrices over row blocks).
inline void gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                         std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                         const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                         std::int64_t ldb, std::int64_t stride_b, float beta, float* c,
                         std::int64_t ldc, std::int64_t stride_c, std::int64_t batch) {
  GPUQR_CUBLAS_CHECK(cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, &alpha, a, lda, stride_a,
                                                  b, ldb, stride_b, &beta, c, ldc, stride_c,
                                                  batch));
}
inline void gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                         std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const double* a, std::int64_t lda, std::int64_t stride_a,
                         const double* b, std::int64_t ldb, std::int64_t stride_b, double beta,
                         double* c, std::int64_t ldc, std::int64_t stride_c,
                         std::int64_t batch) {
  GPUQR_CUBLAS_CHECK(cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, &alpha, a, lda, stride_a,
                                                  b, ldb, stride_b, &beta, c, ldc, stride_c,
                                                  batch));
}

/// B := alpha op(A)^{-1} B (side left) or alpha B op(A)^{-1} (side right), A triangular.
/// Only on n x n blocks here (never on the tall matrices, where TRSM is slow).
inline void trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                 cublasOperation_t op, cublasDiagType_t diag, std::int64_t m, std::int64_t n,
                 float alpha, const float* a, std::int64_t lda, float* b, std::int64_t ldb) {
  GPUQR_CUBLAS_CHECK(cublasStrsm_64(h, side, uplo, op, diag, m, n, &alpha, a, lda, b, ldb));
}
inline void trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                 cublasOperation_t op, cublasDiagType_t diag, std::int64_t m, std::int64_t n,
                 double alpha, const double* a, std::int64_t lda, double* b, std::int64_t ldb) {
  GPUQR_CUBLAS_CHECK(cublasDtrsm_64(h, side, uplo, op, diag, m, n, &alpha, a, lda, b, ldb));
}

/// A grid for the 2-D kernels: x over rows (threads), y over columns (blocks).
/// C := B X (X n x n upper triangular, its strictly lower part not read; B, C m x n; C may be
/// B itself, same ld, for in place): cuBLAS's out-of-place TRMM.
inline void trmm_right_upper(cublasHandle_t h, std::int64_t m, std::int64_t n, const float* x,
                             std::int64_t ldx, const float* b, std::int64_t ldb, float* c,
                             std::int64_t ldc) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(cublasStrmm_64(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                    CUBLAS_DIAG_NON_UNIT, m, n, &one, x, ldx, b, ldb, c, ldc));
}
inline void trmm_right_upper(cublasHandle_t h, std::int64_t m, std::int64_t n, const double* x,
                             std::int64_t ldx, const double* b, std::int64_t ldb, double* c,
                             std::int64_t ldc) {
  const double one = 1.0;
  GPUQR_CUBLAS_CHECK(cublasDtrmm_64(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                    CUBLAS_DIAG_NON_UNIT, m, n, &one, x, ldx, b, ldb, c, ldc));
}
inline dim3 grid_2d(std::int64_t rows, std::int64_t cols, int threads) {
  const std::int64_t bx = std::min<std::int64_t>((rows + threads - 1) / threads, 65535);
  const std::int64_t by = std::min<std::int64_t>(cols, 65535);
  return dim3(static_cast<unsigned>(std::max<std::int64_t>(bx, 1)),
              static_cast<unsigned>(std::max<std::int64_t>(by, 1)));
}

}  // namespace gpuqr::kernels::cuda::cholqr_detail
