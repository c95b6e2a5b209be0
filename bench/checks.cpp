// Accuracy checks of the tester (see checks.hpp).
#include "bench/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bench/host_lapack.hpp"
#include "gpuqr/accuracy.hpp"

namespace gpuqr::bench {
namespace {

using lapack::as_int;

/// A host copy of the host view `src` (ld = rows).
template <class T>
Matrix<T> host_copy(MatrixView<const T> src) {
  Matrix<T> out(src.rows(), src.cols());
  for (std::int64_t j = 0; j < src.cols(); ++j) {
    std::memcpy(out.data() + j * out.ld(), src.data() + j * src.ld(),
                static_cast<std::size_t>(src.rows()) * sizeof(T));
  }
  return out;
}

}  // namespace

template <class T>
std::pair<Matrix<T>, Matrix<T>> reference_geqrf(MatrixView<const T> a) {
  Matrix<T> factors = host_copy(a);
  const lapack_int m = as_int(a.rows()), n = as_int(a.cols());
  Matrix<T> tau(std::min(m, n), 1);
  T query = 0;
  lapack::check_info(lapack::geqrf(m, n, factors.data(), as_int(factors.ld()), tau.data(),
                                   &query, -1),
                     "geqrf (query)");
  std::vector<T> work = lapack::workspace_from_query(query);
  lapack::check_info(lapack::geqrf(m, n, factors.data(), as_int(factors.ld()), tau.data(),
                                   work.data(), as_int(work.size())),
                     "geqrf");
  return {std::move(factors), std::move(tau)};
}

template <class T>
Matrix<T> upper_r(MatrixView<const T> factors) {
  const std::int64_t k = std::min(factors.rows(), factors.cols());
  Matrix<T> r(k, factors.cols());
  for (std::int64_t j = 0; j < factors.cols(); ++j) {
    for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? factors(i, j) : T(0);
  }
  return r;
}

template <class T>
Accuracy check_geqrf(MatrixView<const T> a, MatrixView<const T> factors,
                     MatrixView<const T> tau) {
  const std::int64_t m = factors.rows(), k = std::min(factors.rows(), factors.cols());
  Matrix<T> q = host_copy(factors.block(0, 0, m, k));
  lapack::form_q(as_int(m), as_int(k), q.data(), as_int(q.ld()), tau.data());
  const Matrix<T> r = upper_r(factors);
  Accuracy acc;
  acc.error = accuracy::qr_backward_error<T>(a, q.view(), r.view());
  acc.orth = accuracy::orthogonality<T>(q.view());
  return acc;
}

template <class T>
Accuracy check_orgqr(MatrixView<const T> a, MatrixView<const T> reference,
                     MatrixView<const T> q) {
  const Matrix<T> r = upper_r(reference);
  Accuracy acc;
  acc.error = accuracy::qr_backward_error<T>(a, q, r.view());
  acc.orth = accuracy::orthogonality<T>(q);
  return acc;
}

template <class T>
Accuracy check_ormqr(MatrixView<const T> reflectors, MatrixView<const T> tau,
                     MatrixView<const T> c, MatrixView<const T> y) {
  const std::int64_t m = c.rows(), nrhs = c.cols();
  Matrix<T> qy = host_copy(y);
  lapack::apply_q_left('N', as_int(m), as_int(nrhs), as_int(reflectors.cols()),
                       reflectors.data(), as_int(reflectors.ld()), tau.data(), qy.data(),
                       as_int(qy.ld()));
  double diff = 0.0;  // ||C - Q y||_1, in double
  for (std::int64_t j = 0; j < nrhs; ++j) {
    double column = 0.0;
    for (std::int64_t i = 0; i < m; ++i) {
      column += std::abs(static_cast<double>(c(i, j)) - static_cast<double>(qy(i, j)));
    }
    diff = std::max(diff, column);
  }
  const double norm_c = accuracy::norm1<T>(c);
  Accuracy acc;
  acc.error = norm_c > 0.0 ? diff / (norm_c * static_cast<double>(std::max(m, nrhs)) *
                                     accuracy::eps<T>())
                           : diff;
  return acc;
}

template <class T>
Accuracy check_gels(MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> b_out) {
  Accuracy acc;
  acc.error = accuracy::lstsq_optimality_ratio<T>(a, b_out.block(0, 0, a.cols(), b_out.cols()),
                                                  b);
  return acc;
}

#define GPUQR_BENCH_INSTANTIATE_CHECKS(T)                                                   \
  template std::pair<Matrix<T>, Matrix<T>> reference_geqrf<T>(MatrixView<const T>);          \
  template Matrix<T> upper_r<T>(MatrixView<const T>);                                       \
  template Accuracy check_geqrf<T>(MatrixView<const T>, MatrixView<const T>,                \
                                   MatrixView<const T>);                                    \
  template Accuracy check_orgqr<T>(MatrixView<const T>, MatrixView<const T>,                \
                                   MatrixView<const T>);                                    \
  template Accuracy check_ormqr<T>(MatrixView<const T>, MatrixView<const T>,                \
                                   MatrixView<const T>, MatrixView<const T>);               \
  template Accuracy check_gels<T>(MatrixView<const T>, MatrixView<const T>,                 \
                                  MatrixView<const T>);

GPUQR_BENCH_INSTANTIATE_CHECKS(float)
GPUQR_BENCH_INSTANTIATE_CHECKS(double)

}  // namespace gpuqr::bench
