// The leaf operations of dense QR, declared once and implemented per backend:
// kernels::cpu (src/cpu/, LAPACKE/OpenBLAS; the reference) and kernels::cuda (src/cuda/; or
// src/stubs/ throwing NotCompiled when CUDA is off). Arguments are already checked by the
// drivers in src/core/: shapes agree, views are in the backend's memory space.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

#define GPUQR_DECLARE_DENSE_KERNELS                                                          \
  template <class T>                                                                         \
  void geqrf(detail::ContextImpl& ctx, MatrixView<T> a, VectorView<T> tau);                  \
  template <class T>                                                                         \
  void orgqr(detail::ContextImpl& ctx, std::int64_t k, MatrixView<T> a,                      \
             VectorView<const T> tau);                                                       \
  template <class T>                                                                         \
  void ormqr(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> a,              \
             VectorView<const T> tau, MatrixView<T> c);                                      \
  /* B := op(A)^{-1} B, A n x n triangular, B n x nrhs; no singularity check. */             \
  template <class T>                                                                         \
  void trsm(detail::ContextImpl& ctx, Uplo uplo, Op op, Diag diag, MatrixView<const T> a,    \
            MatrixView<T> b);                                                                \
  /* |a(i,i)| for i < min(rows, cols), returned to the host (synchronizes). */               \
  template <class T>                                                                         \
  std::vector<double> abs_diagonal(detail::ContextImpl& ctx, MatrixView<const T> a);         \
  /* ||a(:, j)||_2 for each column, returned to the host (synchronizes). */                  \
  template <class T>                                                                         \
  std::vector<double> column_norms(detail::ContextImpl& ctx, MatrixView<const T> a);         \
  /* abs_diagonal(a), then column_norms(b), in one return to the host (synchronizes). */     \
  template <class T>                                                                         \
  std::vector<double> diagonal_and_norms(detail::ContextImpl& ctx, MatrixView<const T> a,    \
                                         MatrixView<const T> b);                             \
  /* True when no entry is NaN or Inf (synchronizes). */                                     \
  template <class T>                                                                         \
  bool all_finite(detail::ContextImpl& ctx, MatrixView<const T> a);                          \
  /* dst := src (copy), or src's upper trapezoid with zeros below (copy_upper); same         \
     shapes, both in the backend's memory space. */                                          \
  template <class T>                                                                         \
  void copy(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst);           \
  template <class T>                                                                         \
  void copy_upper(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst);     \
  /* Every entry := value. */                                                                \
  template <class T>                                                                         \
  void fill(detail::ContextImpl& ctx, MatrixView<T> a, T value);

// Explicit instantiations, written inside a backend namespace.
#define GPUQR_INSTANTIATE_DENSE_KERNELS(T)                                                   \
  template void geqrf<T>(detail::ContextImpl&, MatrixView<T>, VectorView<T>);                \
  template void orgqr<T>(detail::ContextImpl&, std::int64_t, MatrixView<T>,                  \
                         VectorView<const T>);                                               \
  template void ormqr<T>(detail::ContextImpl&, Side, Op, MatrixView<const T>,                \
                         VectorView<const T>, MatrixView<T>);                                \
  template void trsm<T>(detail::ContextImpl&, Uplo, Op, Diag, MatrixView<const T>,           \
                        MatrixView<T>);                                                      \
  template std::vector<double> abs_diagonal<T>(detail::ContextImpl&, MatrixView<const T>);   \
  template std::vector<double> column_norms<T>(detail::ContextImpl&, MatrixView<const T>);   \
  template std::vector<double> diagonal_and_norms<T>(detail::ContextImpl&,                   \
                                                     MatrixView<const T>, MatrixView<const T>); \
  template bool all_finite<T>(detail::ContextImpl&, MatrixView<const T>);                    \
  template void copy<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);           \
  template void copy_upper<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);     \
  template void fill<T>(detail::ContextImpl&, MatrixView<T>, T);


namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_DENSE_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_DENSE_KERNELS
}  // namespace gpuqr::kernels::cuda
