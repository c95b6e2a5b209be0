// geqrf_wy (Kerr, Campbell & Richards' blocked QR with the full Q in W/Y form), run for every
// backend and precision: the full m x m Q and R against A (backward error, orthogonality of
// all m columns), R and tau against geqrf's on the same input, block sizes that do and do not
// divide n, structured inputs, and bad input that leaves every output untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/error.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

class DenseWy : public BackendTest {};

/// max |x - y| over two host matrices' entries, in units of ||A||_F max(m, n) eps.
template <class T>
double scaled_max_difference(const Matrix<T>& x, const Matrix<T>& y, double norm_a,
                             std::int64_t scale) {
  double worst = 0;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      worst = std::max(worst, std::abs(double(x(i, j)) - double(y(i, j))));
  const double unit =
      norm_a * double(std::max<std::int64_t>(scale, 1)) * double(std::numeric_limits<T>::epsilon());
  return unit > 0 ? worst / unit : worst;
}

template <class T>
double frobenius(const Matrix<T>& a) {
  double s = 0;
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) s += double(a(i, j)) * double(a(i, j));
  return std::sqrt(s);
}

TEST_P(DenseWy, FullQAndRMatchTheInputAndGeqrf) {
  struct Case {
    std::int64_t m, n, block;
  };
  const Case cases[] = {{200, 120, 0}, {200, 120, 32}, {97, 97, 0},   {97, 97, 40},
                        {64, 150, 16}, {301, 37, 0},   {301, 37, 13}, {1, 1, 0},
                        {33, 1, 0},    {5, 9, 2},      {260, 260, 64}};
  const MatrixKind kinds[] = {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned,
                              MatrixKind::rank_deficient};
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 50;
    for (const Case c : cases) {
      for (const MatrixKind kind : kinds) {
        SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + " block " +
                     std::to_string(c.block) + " " + to_string(kind));
        const std::int64_t m = c.m, n = c.n, k = std::min(m, n);
        const Matrix<T> a = make_matrix<T>(kind, m, n, seed++);
        Matrix<T> f = to_ctx<T>(ctx(), a.view());
        Matrix<T> tau(k, 1, f.space(), f.device());
        // Q starts as 1e30 everywhere: every entry must be written.
        Matrix<T> q0(m, m);
        for (std::int64_t j = 0; j < m; ++j)
          for (std::int64_t i = 0; i < m; ++i) q0(i, j) = static_cast<T>(1e30);
        Matrix<T> q = to_ctx<T>(ctx(), q0.view());
        geqrf_wy<T>(ctx(), f.view(), vec(tau), q.view(), c.block);
        const Matrix<T> fh = to_host(ctx(), f), qh = to_host(ctx(), q);
        // R (m x n, zeros below the diagonal): A = Q R with the full Q.
        Matrix<T> r(m, n);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) r(i, j) = i <= j ? fh(i, j) : T(0);
        EXPECT_LT(track("wy backward error",
                        accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
                  kBound);
        EXPECT_LT(track("wy orthogonality (full Q)", accuracy::orthogonality<T>(qh.view())),
                  kBound);
        // The same factors as geqrf's on the same backend, up to rounding.
        Matrix<T> g = to_ctx<T>(ctx(), a.view());
        Matrix<T> gtau(k, 1, g.space(), g.device());
        geqrf<T>(ctx(), g.view(), vec(gtau));
        const Matrix<T> gh = to_host(ctx(), g);
        Matrix<T> rg(m, n);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) rg(i, j) = i <= j ? gh(i, j) : T(0);
        EXPECT_LT(
            track("wy R vs geqrf", scaled_max_difference(r, rg, frobenius(a), std::max(m, n))),
            kBound);
        // tau too, where it is well determined (ill-conditioned and rank-deficient inputs
        // leave late columns whose reflectors are mostly rounding).
        if (kind == MatrixKind::random || kind == MatrixKind::graded) {
          const Matrix<T> th = to_host(ctx(), tau), gth = to_host(ctx(), gtau);
          double worst = 0;
          for (std::int64_t i = 0; i < k; ++i)
            worst = std::max(worst, std::abs(double(th(i, 0)) - double(gth(i, 0))));
          EXPECT_LT(worst / (double(std::max(m, n)) * double(std::numeric_limits<T>::epsilon())),
                    kBound * 100)
              << "tau against geqrf's";
        }
      }
    }
  }));
}

// Each bad argument is a clear error, and A, tau and Q are left as they were.
TEST_P(DenseWy, BadInputIsAClearErrorAndChangesNothing) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 40, n = 25;
    const Matrix<T> a = random_matrix<T>(m, n, 9);
    Matrix<T> f = to_ctx<T>(ctx(), a.view());
    Matrix<T> tau0(n, 1);
    for (std::int64_t i = 0; i < n; ++i) tau0(i, 0) = T(7);
    Matrix<T> tau = to_ctx<T>(ctx(), tau0.view());
    Matrix<T> q0(m, m);
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t i = 0; i < m; ++i) q0(i, j) = T(3);
    Matrix<T> q = to_ctx<T>(ctx(), q0.view());
    auto unchanged = [&]() {
      const Matrix<T> fh = to_host(ctx(), f), th = to_host(ctx(), tau), qh = to_host(ctx(), q);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) ASSERT_EQ(fh(i, j), a(i, j));
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(th(i, 0), T(7));
      for (std::int64_t j = 0; j < m; ++j)
        for (std::int64_t i = 0; i < m; ++i) ASSERT_EQ(qh(i, j), T(3));
    };
    // Q of the wrong shape.
    Matrix<T> small(m, m - 1, q.space(), q.device());
    EXPECT_THROW(geqrf_wy<T>(ctx(), f.view(), vec(tau), small.view()), InvalidArgument);
    // tau too short.
    EXPECT_THROW(geqrf_wy<T>(ctx(), f.view(),
                             VectorView<T>(tau.data(), n - 1, tau.space(), tau.device()), q.view()),
                 InvalidArgument);
    // A negative block.
    EXPECT_THROW(geqrf_wy<T>(ctx(), f.view(), vec(tau), q.view(), -4), InvalidArgument);
    // Q overlapping A.
    Matrix<T> big = to_ctx<T>(ctx(), random_matrix<T>(m, m + n, 10).view());
    MatrixView<T> a_in_big(big.data(), m, n, big.ld(), big.space(), big.device());
    MatrixView<T> q_in_big(big.data() + (n - 1) * big.ld(), m, m, big.ld(), big.space(),
                           big.device());
    EXPECT_THROW(geqrf_wy<T>(ctx(), a_in_big, vec(tau), q_in_big), InvalidArgument);
    unchanged();
    // NaN in A.
    Matrix<T> bad = a.clone();
    bad(3, 4) = std::numeric_limits<T>::quiet_NaN();
    Matrix<T> fb = to_ctx<T>(ctx(), bad.view());
    EXPECT_THROW(geqrf_wy<T>(ctx(), fb.view(), vec(tau), q.view()), InvalidArgument);
    unchanged();
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, DenseWy, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
