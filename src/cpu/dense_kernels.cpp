// CPU backend of the dense leaf operations: LAPACKE and CBLAS. The reference twin of
// src/cuda/dense_kernels.cu.
#include "src/core/dense_kernels.hpp"

#include <cmath>

#include "src/cpu/lapack_wrappers.hpp"

namespace gpuqr::kernels::cpu {

using lapack::to_int;

template <class T>
void geqrf(detail::ContextImpl&, MatrixView<T> a, VectorView<T> tau) {
  if (a.empty()) return;
  lapack::check_info(lapack::geqrf(to_int(a.rows(), "m"), to_int(a.cols(), "n"), a.data(),
                                   to_int(a.ld(), "lda"), tau.data()),
                     "geqrf");
}

template <class T>
void orgqr(detail::ContextImpl&, std::int64_t k, MatrixView<T> a, VectorView<const T> tau) {
  if (a.empty()) return;
  lapack::check_info(lapack::orgqr(to_int(a.rows(), "m"), to_int(a.cols(), "n"),
                                   to_int(k, "k"), a.data(), to_int(a.ld(), "lda"),
                                   tau.data()),
                     "orgqr");
}

template <class T>
void ormqr(detail::ContextImpl&, Side side, Op op, MatrixView<const T> a,
           VectorView<const T> tau, MatrixView<T> c) {
  if (c.empty()) return;
  lapack::check_info(
      lapack::ormqr(side == Side::left ? 'L' : 'R', op == Op::trans ? 'T' : 'N',
                    to_int(c.rows(), "m"), to_int(c.cols(), "n"), to_int(a.cols(), "k"),
                    a.data(), to_int(a.ld(), "lda"), tau.data(), c.data(),
                    to_int(c.ld(), "ldc")),
      "ormqr");
}

template <class T>
void trsm(detail::ContextImpl&, Uplo uplo, Op op, Diag diag, MatrixView<const T> a,
          MatrixView<T> b) {
  if (b.empty()) return;
  lapack::trsm(uplo == Uplo::upper ? CblasUpper : CblasLower,
               op == Op::trans ? CblasTrans : CblasNoTrans,
               diag == Diag::unit ? CblasUnit : CblasNonUnit, to_int(b.rows(), "n"),
               to_int(b.cols(), "nrhs"), a.data(), to_int(a.ld(), "lda"), b.data(),
               to_int(b.ld(), "ldb"));
}

template <class T>
std::vector<double> abs_diagonal(detail::ContextImpl&, MatrixView<const T> a) {
  const std::int64_t k = std::min(a.rows(), a.cols());
  std::vector<double> d(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) d[i] = std::abs(static_cast<double>(a(i, i)));
  return d;
}

template <class T>
std::vector<double> column_norms(detail::ContextImpl&, MatrixView<const T> a) {
  std::vector<double> norms(static_cast<std::size_t>(a.cols()), 0.0);
  if (a.rows() == 0) return norms;
  for (std::int64_t j = 0; j < a.cols(); ++j) {
    norms[j] = lapack::nrm2(to_int(a.rows(), "m"), a.data() + j * a.ld());
  }
  return norms;
}

template <class T>
std::vector<double> diagonal_and_norms(detail::ContextImpl& ctx, MatrixView<const T> a,
                                       MatrixView<const T> b) {
  std::vector<double> out = abs_diagonal<T>(ctx, a);
  const std::vector<double> norms = column_norms<T>(ctx, b);
  out.insert(out.end(), norms.begin(), norms.end());
  return out;
}

template <class T>
bool all_finite(detail::ContextImpl&, MatrixView<const T> a) {
  for (std::int64_t j = 0; j < a.cols(); ++j) {
    const T* col = a.data() + j * a.ld();
    for (std::int64_t i = 0; i < a.rows(); ++i) {
      if (!std::isfinite(col[i])) return false;
    }
  }
  return true;
}

template <class T>
void copy(detail::ContextImpl&, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  lapack::check_info(lapack::lacpy('A', to_int(src.rows(), "m"), to_int(src.cols(), "n"),
                                   src.data(), to_int(src.ld(), "lda"), dst.data(),
                                   to_int(dst.ld(), "ldb")),
                     "lacpy");
}

template <class T>
void copy_upper(detail::ContextImpl&, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  const lapack_int m = to_int(src.rows(), "m");
  const lapack_int n = to_int(src.cols(), "n");
  lapack::check_info(lapack::lacpy('U', m, n, src.data(), to_int(src.ld(), "lda"),
                                   dst.data(), to_int(dst.ld(), "ldb")),
                     "lacpy");
  if (m > 1) {
    // The strictly lower part: rows 1..m-1 of the first min(m-1, n) columns.
    lapack::check_info(lapack::laset('L', m - 1, std::min(m - 1, n), T(0), T(0),
                                     dst.data() + 1, to_int(dst.ld(), "ldb")),
                       "laset");
  }
}

template <class T>
void fill(detail::ContextImpl&, MatrixView<T> a, T value) {
  if (a.empty()) return;
  lapack::check_info(lapack::laset('A', to_int(a.rows(), "m"), to_int(a.cols(), "n"), value,
                                   value, a.data(), to_int(a.ld(), "lda")),
                     "laset");
}

GPUQR_INSTANTIATE_DENSE_KERNELS(float)
GPUQR_INSTANTIATE_DENSE_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
