// Accuracy measures, computed in double with CBLAS on host copies.
#include "gpuqr/accuracy.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gpuqr::accuracy {

namespace {

/// A dense double copy (ld = rows) of a host view; throws for device memory.
template <class T>
std::vector<double> to_double(MatrixView<const T> a, const char* what) {
  GPUQR_CHECK_ARG(a.on_host(), std::string("accuracy: ") + what + " must be in host memory");
  std::vector<double> out(static_cast<std::size_t>(a.rows() * a.cols()));
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) out[i + j * a.rows()] = a(i, j);
  return out;
}

double norm1_of(const std::vector<double>& a, std::int64_t m, std::int64_t n) {
  double best = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (std::int64_t i = 0; i < m; ++i) s += std::abs(a[i + j * m]);
    best = std::max(best, s);
  }
  return best;
}

int as_int(std::int64_t v) { return static_cast<int>(v); }

/// C := alpha op(A) B + beta C, all dense with ld = rows.
void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, as_int(m),
              as_int(n), as_int(k), alpha, a, as_int(std::max<std::int64_t>(lda, 1)), b,
              as_int(std::max<std::int64_t>(ldb, 1)), beta, c,
              as_int(std::max<std::int64_t>(ldc, 1)));
}

/// r = b - A x (m x nrhs).
template <class T>
std::vector<double> residual(MatrixView<const T> a, MatrixView<const T> x,
                             MatrixView<const T> b) {
  GPUQR_CHECK_ARG(x.rows() == a.cols() && b.rows() == a.rows() && x.cols() == b.cols(),
                  "accuracy: A, x, b shapes disagree");
  const auto ad = to_double(a, "A");
  const auto xd = to_double(x, "x");
  auto r = to_double(b, "b");
  gemm(false, a.rows(), b.cols(), a.cols(), -1.0, ad.data(), a.rows(), xd.data(), x.rows(),
       1.0, r.data(), a.rows());
  return r;
}

}  // namespace

template <class T>
double norm1(MatrixView<const T> a) {
  return norm1_of(to_double(a, "A"), a.rows(), a.cols());
}

template <class T>
double qr_backward_error(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r) {
  GPUQR_CHECK_ARG(q.rows() == a.rows() && r.cols() == a.cols() && q.cols() == r.rows(),
                  "qr_backward_error: A, Q, R shapes disagree");
  const std::int64_t m = a.rows(), n = a.cols();
  auto diff = to_double(a, "A");
  const double anorm = norm1_of(diff, m, n);
  const auto qd = to_double(q, "Q");
  const auto rd = to_double(r, "R");
  gemm(false, m, n, q.cols(), -1.0, qd.data(), m, rd.data(), r.rows(), 1.0, diff.data(), m);
  const double dnorm = norm1_of(diff, m, n);
  if (anorm == 0.0) return dnorm == 0.0 ? 0.0 : dnorm / eps<T>();
  return dnorm / (anorm * static_cast<double>(std::max<std::int64_t>({m, n, 1})) * eps<T>());
}

template <class T>
double orthogonality(MatrixView<const T> q) {
  const std::int64_t m = q.rows(), k = q.cols();
  if (k == 0) return 0.0;
  const auto qd = to_double(q, "Q");
  std::vector<double> g(static_cast<std::size_t>(k * k), 0.0);
  for (std::int64_t i = 0; i < k; ++i) g[i + i * k] = 1.0;
  gemm(true, k, k, m, -1.0, qd.data(), m, qd.data(), m, 1.0, g.data(), k);
  return norm1_of(g, k, k) / (static_cast<double>(std::max<std::int64_t>(m, 1)) * eps<T>());
}

template <class T>
double lstsq_optimality_ratio(MatrixView<const T> a, MatrixView<const T> x,
                              MatrixView<const T> b) {
  const std::int64_t m = a.rows(), n = a.cols(), nrhs = b.cols();
  const auto r = residual(a, x, b);
  const auto ad = to_double(a, "A");
  std::vector<double> atr(static_cast<std::size_t>(n * nrhs), 0.0);
  gemm(true, n, nrhs, m, 1.0, ad.data(), m, r.data(), m, 0.0, atr.data(), n);
  const double anorm = norm1_of(ad, m, n);
  const double bnorm = norm1_of(to_double(b, "b"), m, nrhs);
  const double num = norm1_of(atr, n, nrhs);
  if (anorm == 0.0 || bnorm == 0.0) return num == 0.0 ? 0.0 : num / eps<T>();
  return num / (anorm * bnorm * static_cast<double>(std::max({m, n, nrhs})) * eps<T>());
}

template <class T>
double normal_equations_residual(MatrixView<const T> a, MatrixView<const T> x,
                                 MatrixView<const T> b) {
  GPUQR_CHECK_ARG(b.cols() == 1, "normal_equations_residual: one right-hand side");
  const std::int64_t m = a.rows(), n = a.cols();
  const auto r = residual(a, x, b);
  const auto ad = to_double(a, "A");
  std::vector<double> atr(static_cast<std::size_t>(n), 0.0);
  gemm(true, n, 1, m, 1.0, ad.data(), m, r.data(), m, 0.0, atr.data(), n);
  const double rn = m > 0 ? cblas_dnrm2(as_int(m), r.data(), 1) : 0.0;
  const double an = m * n > 0 ? cblas_dnrm2(as_int(m * n), ad.data(), 1) : 0.0;
  const double num = n > 0 ? cblas_dnrm2(as_int(n), atr.data(), 1) : 0.0;
  if (rn == 0.0 || an == 0.0) return 0.0;
  return num / (an * rn);
}

template <class T>
double residual_norm(MatrixView<const T> a, MatrixView<const T> x, MatrixView<const T> b) {
  GPUQR_CHECK_ARG(b.cols() == 1, "residual_norm: one right-hand side");
  const auto r = residual(a, x, b);
  return a.rows() > 0 ? cblas_dnrm2(as_int(a.rows()), r.data(), 1) : 0.0;
}

template <class T>
double relative_difference(MatrixView<const T> x, MatrixView<const T> y) {
  GPUQR_CHECK_ARG(x.rows() == y.rows() && x.cols() == y.cols(),
                  "relative_difference: shapes disagree");
  double num = 0.0, den = 0.0;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i) {
      const double d = static_cast<double>(x(i, j)) - static_cast<double>(y(i, j));
      num += d * d;
      den += static_cast<double>(y(i, j)) * static_cast<double>(y(i, j));
    }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

#define GPUQR_INSTANTIATE_ACCURACY(T)                                                       \
  template double norm1<T>(MatrixView<const T>);                                            \
  template double qr_backward_error<T>(MatrixView<const T>, MatrixView<const T>,            \
                                       MatrixView<const T>);                                \
  template double orthogonality<T>(MatrixView<const T>);                                    \
  template double lstsq_optimality_ratio<T>(MatrixView<const T>, MatrixView<const T>,       \
                                            MatrixView<const T>);                           \
  template double normal_equations_residual<T>(MatrixView<const T>, MatrixView<const T>,    \
                                               MatrixView<const T>);                        \
  template double residual_norm<T>(MatrixView<const T>, MatrixView<const T>,                \
                                   MatrixView<const T>);                                    \
  template double relative_difference<T>(MatrixView<const T>, MatrixView<const T>);

GPUQR_INSTANTIATE_ACCURACY(float)
GPUQR_INSTANTIATE_ACCURACY(double)

}  // namespace gpuqr::accuracy
