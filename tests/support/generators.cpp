#include "tests/support/generators.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gpuqr/dense.hpp"

namespace gpuqr::testing {

const char* to_string(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::random: return "random";
    case MatrixKind::graded: return "graded";
    case MatrixKind::ill_conditioned: return "illcond";
    case MatrixKind::rank_deficient: return "rankdef";
  }
  return "?";
}

template <class T>
Matrix<T> random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  Matrix<T> a(m, n);
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double v = dist(gen);
      if (v == 0.0) v = 0.5;
      a(i, j) = static_cast<T>(v);
    }
  return a;
}

namespace {

/// An m x k matrix with orthonormal columns (k <= m), computed in double on the CPU.
Matrix<double> random_orthonormal(std::int64_t m, std::int64_t k, std::uint64_t seed) {
  Matrix<double> q = random_matrix<double>(m, k, seed);
  if (m == 0 || k == 0) return q;
  Context cpu = Context::cpu();
  Matrix<double> tau(k, 1);
  geqrf<double>(cpu, q.view(), VectorView<double>(tau.data(), k));
  orgqr<double>(cpu, k, q.view(), VectorView<const double>(tau.data(), k));
  return q;
}

template <class T>
Matrix<T> from_double(const Matrix<double>& d) {
  Matrix<T> out(d.rows(), d.cols());
  for (std::int64_t j = 0; j < d.cols(); ++j)
    for (std::int64_t i = 0; i < d.rows(); ++i) out(i, j) = static_cast<T>(d(i, j));
  return out;
}

/// U diag(s) V^T with U m x k, V n x k orthonormal; k = min(m, n) or the rank.
Matrix<double> svd_product(std::int64_t m, std::int64_t n, const std::vector<double>& s,
                           std::uint64_t seed) {
  const auto k = static_cast<std::int64_t>(s.size());
  Matrix<double> u = random_orthonormal(m, k, seed + 1);
  Matrix<double> v = random_orthonormal(n, k, seed + 2);
  Matrix<double> a(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < k; ++p) acc += u(i, p) * s[p] * v(j, p);
      a(i, j) = acc;
    }
  return a;
}

}  // namespace

template <class T>
Matrix<T> make_matrix(MatrixKind kind, std::int64_t m, std::int64_t n, std::uint64_t seed,
                      double cond) {
  const std::int64_t k = std::min(m, n);
  switch (kind) {
    case MatrixKind::random:
      return random_matrix<T>(m, n, seed);
    case MatrixKind::graded: {
      Matrix<T> a = random_matrix<T>(m, n, seed);
      const double g = sizeof(T) == 8 ? 6.0 : 3.0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double scale = std::pow(10.0, -g * static_cast<double>(j) / std::max<double>(n, 1));
        for (std::int64_t i = 0; i < m; ++i) a(i, j) = static_cast<T>(a(i, j) * scale);
      }
      return a;
    }
    case MatrixKind::ill_conditioned: {
      std::vector<double> s(static_cast<std::size_t>(k));
      for (std::int64_t i = 0; i < k; ++i)
        s[i] = std::pow(cond, -static_cast<double>(i) / std::max<double>(k - 1, 1));
      return from_double<T>(svd_product(m, n, s, seed));
    }
    case MatrixKind::rank_deficient: {
      const std::int64_t r = std::max<std::int64_t>(1, k / 2);
      std::vector<double> s(static_cast<std::size_t>(std::min(r, k)), 1.0);
      for (std::size_t i = 0; i < s.size(); ++i) s[i] = 1.0 + static_cast<double>(i) / s.size();
      return from_double<T>(svd_product(m, n, s, seed));
    }
  }
  return random_matrix<T>(m, n, seed);
}

template <class T>
Matrix<T> block_orthogonal_matrix(std::int64_t m, std::int64_t n, std::int64_t nb,
                                  std::uint64_t seed, double cond) {
  const Matrix<double> u = random_orthonormal(m, n, seed);
  Matrix<double> a(m, n);
  std::fill(a.data(), a.data() + m * n, 0.0);
  for (std::int64_t j0 = 0; j0 < n; j0 += nb) {
    const std::int64_t jb = std::min(nb, n - j0);
    std::vector<double> s(static_cast<std::size_t>(jb));
    for (std::int64_t i = 0; i < jb; ++i)
      s[i] = std::pow(cond, -static_cast<double>(i) / std::max<double>(jb - 1, 1));
    const Matrix<double> b = svd_product(jb, jb, s, seed + 7 + std::uint64_t(j0));
    for (std::int64_t j = 0; j < jb; ++j)
      for (std::int64_t p = 0; p < jb; ++p) {
        const double bpj = b(p, j);
        const double* up = &u(0, j0 + p);
        double* aj = &a(0, j0 + j);
        for (std::int64_t i = 0; i < m; ++i) aj[i] += up[i] * bpj;
      }
  }
  return from_double<T>(a);
}

template <class T>
Padded<T> padded_copy(MatrixView<const T> a, std::int64_t pad) {
  Padded<T> p{Matrix<T>(a.rows() + pad, a.cols()), {}};
  // Poison the padding so that an ld mistake shows.
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows() + pad; ++i)
      p.storage(i, j) = i < a.rows() ? a(i, j) : static_cast<T>(1e30);
  p.view = MatrixView<T>(p.storage.data(), a.rows(), a.cols(), p.storage.ld());
  return p;
}

template <class T>
Matrix<T> apply_explicit_q(Side side, Op op, const Matrix<T>& q, const Matrix<T>& c) {
  const std::int64_t m = q.rows(), rows = c.rows(), cols = c.cols();
  Matrix<T> out(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < m; ++p) {
        const double qv = side == Side::left ? (op == Op::trans ? q(p, i) : q(i, p))
                                             : (op == Op::trans ? q(j, p) : q(p, j));
        acc += side == Side::left ? qv * c(p, j) : c(i, p) * qv;
      }
      out(i, j) = static_cast<T>(acc);
    }
  return out;
}

#define GPUQR_INSTANTIATE_GENERATORS(T)                                                    \
  template Matrix<T> make_matrix<T>(MatrixKind, std::int64_t, std::int64_t, std::uint64_t, \
                                    double);                                               \
  template Matrix<T> random_matrix<T>(std::int64_t, std::int64_t, std::uint64_t);          \
  template Matrix<T> block_orthogonal_matrix<T>(std::int64_t, std::int64_t, std::int64_t,  \
                                                std::uint64_t, double);                    \
  template Padded<T> padded_copy<T>(MatrixView<const T>, std::int64_t);                    \
  template Matrix<T> apply_explicit_q<T>(Side, Op, const Matrix<T>&, const Matrix<T>&);

GPUQR_INSTANTIATE_GENERATORS(float)
GPUQR_INSTANTIATE_GENERATORS(double)

}  // namespace gpuqr::testing
