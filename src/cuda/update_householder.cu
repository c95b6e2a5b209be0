// CUDA backend of tpmqrt (src/core/update_kernels.hpp): the block reflector of a panel of
// added rows, H = I - [I; V] T [I; V]^T, applied to [A; B] or [A B] with five cuBLAS calls
// (copy, GEMM, TRMM, subtract, GEMM), all enqueued on the context's stream. The identity
// block of the reflectors is never stored or multiplied: that is what skips R's zeros.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "src/core/update_kernels.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

cublasHandle_t blas(const detail::ContextImpl& ctx) {
  return static_cast<cublasHandle_t>(ctx.cublas);
}

void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
          std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasSgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
          std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda,
          const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasDgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
/// C := alpha A + beta B (all m x n, no transposes); C may be A (in place).
void geam(cublasHandle_t h, std::int64_t m, std::int64_t n, float alpha, const float* a,
          std::int64_t lda, float beta, const float* b, std::int64_t ldb, float* c,
          std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasSgeam_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, a, lda, &beta, b,
                                    ldb, c, ldc));
}
void geam(cublasHandle_t h, std::int64_t m, std::int64_t n, double alpha, const double* a,
          std::int64_t lda, double beta, const double* b, std::int64_t ldb, double* c,
          std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasDgeam_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, a, lda, &beta, b,
                                    ldb, c, ldc));
}
void trmm_upper(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, std::int64_t m,
                std::int64_t n, const float* t, std::int64_t ldt, float* c, std::int64_t ldc) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(cublasStrmm_64(h, side, CUBLAS_FILL_MODE_UPPER, op, CUBLAS_DIAG_NON_UNIT, m,
                                    n, &one, t, ldt, c, ldc, c, ldc));
}
void trmm_upper(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, std::int64_t m,
                std::int64_t n, const double* t, std::int64_t ldt, double* c, std::int64_t ldc) {
  const double one = 1.0;
  GPUQR_CUBLAS_CHECK(cublasDtrmm_64(h, side, CUBLAS_FILL_MODE_UPPER, op, CUBLAS_DIAG_NON_UNIT, m,
                                    n, &one, t, ldt, c, ldc, c, ldc));
}

}  // namespace

template <class T>
void tpmqrt(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> v,
            MatrixView<const T> t, MatrixView<T> a, MatrixView<T> b, MatrixView<T> w) {
  const std::int64_t k = v.cols(), p = v.rows();
  if (k == 0 || p == 0 || b.empty()) return;
  DeviceGuard guard(ctx.device);
  cublasHandle_t h = blas(ctx);
  const cublasOperation_t op_t = op == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (side == Side::left) {
    // [A; B] := op(H) [A; B]: W = A + V^T B; W = op(T) W; A -= W; B -= V W.
    const std::int64_t nc = a.cols();
    geam(h, k, nc, T(1), a.data(), a.ld(), T(0), a.data(), a.ld(), w.data(), w.ld());
    gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, k, nc, p, T(1), v.data(), v.ld(), b.data(), b.ld(), T(1),
         w.data(), w.ld());
    trmm_upper(h, CUBLAS_SIDE_LEFT, op_t, k, nc, t.data(), t.ld(), w.data(), w.ld());
    geam(h, k, nc, T(1), a.data(), a.ld(), T(-1), w.data(), w.ld(), a.data(), a.ld());
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p, nc, k, T(-1), v.data(), v.ld(), w.data(), w.ld(), T(1),
         b.data(), b.ld());
  } else {
    // [A B] := [A B] op(H): W = A + B V; W = W op(T); A -= W; B -= W V^T.
    const std::int64_t mr = a.rows();
    geam(h, mr, k, T(1), a.data(), a.ld(), T(0), a.data(), a.ld(), w.data(), w.ld());
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, mr, k, p, T(1), b.data(), b.ld(), v.data(), v.ld(), T(1),
         w.data(), w.ld());
    trmm_upper(h, CUBLAS_SIDE_RIGHT, op_t, mr, k, t.data(), t.ld(), w.data(), w.ld());
    geam(h, mr, k, T(1), a.data(), a.ld(), T(-1), w.data(), w.ld(), a.data(), a.ld());
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, mr, p, k, T(-1), w.data(), w.ld(), v.data(), v.ld(), T(1),
         b.data(), b.ld());
  }
}

template <class T>
void multiply_add(detail::ContextImpl& ctx, Op op_a, Op op_b, T alpha, MatrixView<const T> a,
                  MatrixView<const T> b, MatrixView<T> c) {
  const std::int64_t kk = op_a == Op::trans ? a.rows() : a.cols();
  if (c.empty() || kk == 0) return;
  DeviceGuard guard(ctx.device);
  gemm(blas(ctx), op_a == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N,
       op_b == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N, c.rows(), c.cols(), kk, alpha, a.data(),
       std::max<std::int64_t>(a.ld(), 1), b.data(), std::max<std::int64_t>(b.ld(), 1), T(1),
       c.data(), c.ld());
}

template void multiply_add<float>(detail::ContextImpl&, Op, Op, float, MatrixView<const float>,
                                  MatrixView<const float>, MatrixView<float>);
template void multiply_add<double>(detail::ContextImpl&, Op, Op, double,
                                   MatrixView<const double>, MatrixView<const double>,
                                   MatrixView<double>);
template void tpmqrt<float>(detail::ContextImpl&, Side, Op, MatrixView<const float>,
                            MatrixView<const float>, MatrixView<float>, MatrixView<float>,
                            MatrixView<float>);
template void tpmqrt<double>(detail::ContextImpl&, Side, Op, MatrixView<const double>,
                             MatrixView<const double>, MatrixView<double>, MatrixView<double>,
                             MatrixView<double>);

}  // namespace gpuqr::kernels::cuda
