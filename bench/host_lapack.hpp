// Typed float/double overloads of the LAPACKE "_work" routines the tester calls on the host
// (the LAPACK baseline and the reference steps of the accuracy checks), with workspace
// queries. Sizes are LAPACK's int; the tester's sizes always fit.
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuqr::bench::lapack {

/// Throws std::runtime_error when a LAPACK routine reports info != 0.
inline void check_info(lapack_int info, const char* routine) {
  if (info != 0) {
    throw std::runtime_error(std::string(routine) + " returned info = " + std::to_string(info));
  }
}

/// `v` as lapack_int (sizes of the tester are far below the limit).
inline lapack_int as_int(std::int64_t v) { return static_cast<lapack_int>(v); }

// ---- geqrf ---------------------------------------------------------------------------------
inline lapack_int geqrf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau,
                        double* work, lapack_int lwork) {
  return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
}
inline lapack_int geqrf(lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau,
                        float* work, lapack_int lwork) {
  return LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
}

// ---- orgqr ---------------------------------------------------------------------------------
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda,
                        const double* tau, double* work, lapack_int lwork) {
  return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda,
                        const float* tau, float* work, lapack_int lwork) {
  return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
}

// ---- ormqr ---------------------------------------------------------------------------------
inline lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                        const double* a, lapack_int lda, const double* tau, double* c,
                        lapack_int ldc, double* work, lapack_int lwork) {
  return LAPACKE_dormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc, work,
                             lwork);
}
inline lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                        const float* a, lapack_int lda, const float* tau, float* c,
                        lapack_int ldc, float* work, lapack_int lwork) {
  return LAPACKE_sormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc, work,
                             lwork);
}

// ---- gels ----------------------------------------------------------------------------------
inline lapack_int gels(lapack_int m, lapack_int n, lapack_int nrhs, double* a, lapack_int lda,
                       double* b, lapack_int ldb, double* work, lapack_int lwork) {
  return LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', m, n, nrhs, a, lda, b, ldb, work, lwork);
}
inline lapack_int gels(lapack_int m, lapack_int n, lapack_int nrhs, float* a, lapack_int lda,
                       float* b, lapack_int ldb, float* work, lapack_int lwork) {
  return LAPACKE_sgels_work(LAPACK_COL_MAJOR, 'N', m, n, nrhs, a, lda, b, ldb, work, lwork);
}

/// The optimal workspace that a query (lwork = -1) left in `query`, at least 1.
template <class T>
std::vector<T> workspace_from_query(T query) {
  return std::vector<T>(static_cast<std::size_t>(std::max<T>(T(1), query)));
}

/// Forms Q (m x k, overwriting `a`, which holds k reflectors) with LAPACK's orgqr.
template <class T>
void form_q(lapack_int m, lapack_int k, T* a, lapack_int lda, const T* tau) {
  if (m == 0 || k == 0) return;
  T query = 0;
  check_info(orgqr(m, k, k, a, lda, tau, &query, -1), "orgqr (query)");
  std::vector<T> work = workspace_from_query(query);
  check_info(orgqr(m, k, k, a, lda, tau, work.data(), as_int(work.size())), "orgqr");
}

/// C := op(Q) C from the left with LAPACK's ormqr; trans is 'N' or 'T'.
template <class T>
void apply_q_left(char trans, lapack_int m, lapack_int nrhs, lapack_int k, const T* a,
                  lapack_int lda, const T* tau, T* c, lapack_int ldc) {
  if (m == 0 || nrhs == 0 || k == 0) return;
  T query = 0;
  check_info(ormqr('L', trans, m, nrhs, k, a, lda, tau, c, ldc, &query, -1), "ormqr (query)");
  std::vector<T> work = workspace_from_query(query);
  check_info(ormqr('L', trans, m, nrhs, k, a, lda, tau, c, ldc, work.data(),
                   as_int(work.size())),
             "ormqr");
}

}  // namespace gpuqr::bench::lapack
