// Helpers shared by the benchmarks that run SuiteSparseQR next to gpuqr's sparse QR
// (sparse_vs_spqr.cpp, sparse_gpu_bench.cpp): wall-clock seconds and CHOLMOD copies of
// gpuqr's host matrices.
#pragma once

#include <SuiteSparseQR.hpp>
#include <chrono>
#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"

namespace gpuqr::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A CHOLMOD copy of a CSC matrix (64-bit indices); the caller frees it
/// (cholmod_l_free_sparse).
inline cholmod_sparse* to_cholmod(const CscMatrix<double>& a, cholmod_common* cc) {
  cholmod_sparse* c = cholmod_l_allocate_sparse(a.rows, a.cols, a.nnz(), 1, 1, 0, CHOLMOD_REAL, cc);
  auto* p = static_cast<SuiteSparse_long*>(c->p);
  auto* i = static_cast<SuiteSparse_long*>(c->i);
  auto* x = static_cast<double*>(c->x);
  for (std::int64_t j = 0; j <= a.cols; ++j) p[j] = a.col_ptr[j];
  for (std::int64_t k = 0; k < a.nnz(); ++k) {
    i[k] = a.row_indices[k];
    x[k] = a.values[k];
  }
  return c;
}

/// A CHOLMOD copy of a dense host matrix; the caller frees it (cholmod_l_free_dense).
inline cholmod_dense* to_cholmod(MatrixView<const double> b, cholmod_common* cc) {
  cholmod_dense* c = cholmod_l_allocate_dense(b.rows(), b.cols(), b.rows(), CHOLMOD_REAL, cc);
  auto* x = static_cast<double*>(c->x);
  for (std::int64_t j = 0; j < b.cols(); ++j) {
    for (std::int64_t i = 0; i < b.rows(); ++i) x[i + j * b.rows()] = b(i, j);
  }
  return c;
}

}  // namespace gpuqr::bench
