// Helpers of the tall-skinny QR tests: the paper's stress matrices and Frobenius-norm
// orthogonality / residual measures (in double, CBLAS, host memory).
#pragma once

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::testing {

/// Tomas & Quintana-Orti's stress matrix: A0 (m x n) uniform in [0, 1) (never 0), A0 = Q R,
/// R(k, k) := rho, A = Q R; kappa(A) grows like 1/rho. Computed in double, returned as T.
template <class T>
Matrix<T> stress_matrix(std::int64_t m, std::int64_t n, std::int64_t k, double rho,
                        std::uint64_t seed) {
  Matrix<double> a(m, n);
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull + 7);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const double v = dist(gen);
      a(i, j) = v == 0.0 ? 0.5 : v;
    }
  Context cpu = Context::cpu();
  Matrix<double> tau(n, 1);
  geqrf<double>(cpu, a.view(), VectorView<double>(tau.data(), n));
  Matrix<double> r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) r(i, j) = i <= j ? a(i, j) : 0.0;
  r(k, k) = rho;
  orgqr<double>(cpu, n, a.view(), VectorView<const double>(tau.data(), n));
  Matrix<double> out(m, n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(n), 1.0, a.data(),
              int(a.ld()), r.data(), int(r.ld()), 0.0, out.data(), int(out.ld()));
  Matrix<T> result(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) result(i, j) = static_cast<T>(out(i, j));
  return result;
}

/// A dense double copy of a host matrix.
template <class T>
std::vector<double> as_double(MatrixView<const T> a) {
  std::vector<double> d(static_cast<std::size_t>(a.rows() * a.cols()));
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) d[i + j * a.rows()] = double(a(i, j));
  return d;
}

/// ||Q^T Q - I||_F for a host m x n Q (NaN propagates).
template <class T>
double orthogonality_f(MatrixView<const T> q) {
  const std::int64_t m = q.rows(), n = q.cols();
  const std::vector<double> qd = as_double(q);
  std::vector<double> g(static_cast<std::size_t>(n * n));
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(n), int(n), int(m), 1.0, qd.data(),
              int(m), qd.data(), int(m), 0.0, g.data(), int(n));
  double s = 0.0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = g[i + j * n] - (i == j ? 1.0 : 0.0);
      s += e * e;
    }
  return std::sqrt(s);
}

/// ||A - Q R||_F / ||A||_F for host A (m x n), Q (m x n), R (n x n; only its upper triangle).
template <class T>
double residual_f(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r) {
  const std::int64_t m = a.rows(), n = a.cols();
  std::vector<double> diff = as_double(a);
  const std::vector<double> qd = as_double(q);
  std::vector<double> rd(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) rd[i + j * n] = double(r(i, j));
  double anorm = 0.0;
  for (double v : diff) anorm += v * v;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(n), -1.0,
              qd.data(), int(m), rd.data(), int(n), 1.0, diff.data(), int(m));
  double dnorm = 0.0;
  for (double v : diff) dnorm += v * v;
  return std::sqrt(dnorm) / std::sqrt(anorm);
}

}  // namespace gpuqr::testing
