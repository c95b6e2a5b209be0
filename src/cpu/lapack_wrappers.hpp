// Typed overloads over LAPACKE/CBLAS (float and double), with 64-bit sizes converted to
// LAPACK's int after a range check. Only src/cpu/ includes this.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cstdint>
#include <vector>
#include <limits>
#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::kernels::cpu::lapack {

inline lapack_int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<lapack_int>::max()) {
    GPUQR_THROW(InvalidArgument, std::string(what) + " = " + std::to_string(v) +
                                     " does not fit LAPACK's integer");
  }
  return static_cast<lapack_int>(v);
}

/// LAPACK's info < 0 means we passed a bad argument past our own checks: a bug, reported.
inline void check_info(lapack_int info, const char* routine) {
  if (info < 0) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + " rejected argument " +
                                     std::to_string(-info));
  }
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) {
    GPUQR_THROW(OutOfMemory, std::string(routine) + " could not allocate its workspace");
  }
}


// The _work variants: LAPACKE's high-level ones would NaN-check again (our drivers own that
// policy, Context::check_finite) and report NaN as a bad argument. Workspace: query, then a
// vector per call (CPU allocations are cheap next to the O(mn^2) factorization).
#define GPUQR_LAPACK_WORK_CALL(call_query, call_run, T)       \
  T query = 0;                                                \
  lapack_int info = call_query;                               \
  if (info != 0) return info;                                 \
  std::vector<T> work(std::max<std::size_t>(1, static_cast<std::size_t>(query))); \
  const lapack_int lwork = static_cast<lapack_int>(work.size()); \
  return call_run;

inline lapack_int geqrf(lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau) {
  GPUQR_LAPACK_WORK_CALL(LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, &query, -1),
                         LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work.data(), lwork),
                         float)
}
inline lapack_int geqrf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau) {
  GPUQR_LAPACK_WORK_CALL(LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, &query, -1),
                         LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work.data(), lwork),
                         double)
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda,
                        const float* tau) {
  GPUQR_LAPACK_WORK_CALL(
      LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, &query, -1),
      LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work.data(), lwork), float)
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda,
                        const double* tau) {
  GPUQR_LAPACK_WORK_CALL(
      LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, &query, -1),
      LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work.data(), lwork), double)
}
inline lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                        const float* a, lapack_int lda, const float* tau, float* c,
                        lapack_int ldc) {
  GPUQR_LAPACK_WORK_CALL(LAPACKE_sormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda,
                                             tau, c, ldc, &query, -1),
                         LAPACKE_sormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda,
                                             tau, c, ldc, work.data(), lwork),
                         float)
}
inline lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                        const double* a, lapack_int lda, const double* tau, double* c,
                        lapack_int ldc) {
  GPUQR_LAPACK_WORK_CALL(LAPACKE_dormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda,
                                             tau, c, ldc, &query, -1),
                         LAPACKE_dormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda,
                                             tau, c, ldc, work.data(), lwork),
                         double)
}
#undef GPUQR_LAPACK_WORK_CALL

inline lapack_int lacpy(char uplo, lapack_int m, lapack_int n, const float* a, lapack_int lda,
                        float* b, lapack_int ldb) {
  return LAPACKE_slacpy_work(LAPACK_COL_MAJOR, uplo, m, n, a, lda, b, ldb);
}
inline lapack_int lacpy(char uplo, lapack_int m, lapack_int n, const double* a,
                        lapack_int lda, double* b, lapack_int ldb) {
  return LAPACKE_dlacpy_work(LAPACK_COL_MAJOR, uplo, m, n, a, lda, b, ldb);
}
inline lapack_int laset(char uplo, lapack_int m, lapack_int n, float off, float diag, float* a,
                        lapack_int lda) {
  return LAPACKE_slaset_work(LAPACK_COL_MAJOR, uplo, m, n, off, diag, a, lda);
}
inline lapack_int laset(char uplo, lapack_int m, lapack_int n, double off, double diag,
                        double* a, lapack_int lda) {
  return LAPACKE_dlaset_work(LAPACK_COL_MAJOR, uplo, m, n, off, diag, a, lda);
}
inline void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, lapack_int n,
                 lapack_int nrhs, const float* a, lapack_int lda, float* b, lapack_int ldb) {
  cblas_strsm(CblasColMajor, CblasLeft, uplo, trans, diag, n, nrhs, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, lapack_int n,
                 lapack_int nrhs, const double* a, lapack_int lda, double* b, lapack_int ldb) {
  cblas_dtrsm(CblasColMajor, CblasLeft, uplo, trans, diag, n, nrhs, 1.0, a, lda, b, ldb);
}
inline lapack_int geqr2(lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau,
                        float* w) {
  return LAPACKE_sgeqr2_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, w);
}
inline lapack_int geqr2(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau,
                        double* w) {
  return LAPACKE_dgeqr2_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, w);
}
/// C = alpha op(A) op(B) + beta C; alpha and beta come last and default to C = op(A) op(B).
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, lapack_int m, lapack_int n,
                 lapack_int k, const float* a, lapack_int lda, const float* b, lapack_int ldb,
                 float* c, lapack_int ldc, float beta = 0.0f, float alpha = 1.0f) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, lapack_int m, lapack_int n,
                 lapack_int k, const double* a, lapack_int lda, const double* b, lapack_int ldb,
                 double* c, lapack_int ldc, double beta = 0.0, double alpha = 1.0) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline double nrm2(lapack_int n, const float* x) { return cblas_snrm2(n, x, 1); }
inline double nrm2(lapack_int n, const double* x) { return cblas_dnrm2(n, x, 1); }

}  // namespace gpuqr::kernels::cpu::lapack
