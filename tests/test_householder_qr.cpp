// The HouseholderQR object, run for every backend and precision.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

class HouseholderQRTest : public BackendTest {};

TEST_P(HouseholderQRTest, FactorsEveryShapeAndKind) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 300;
    for (auto [m, n] :
         {std::pair<int, int>{0, 0}, {1, 1}, {40, 1}, {1, 40}, {97, 97}, {200, 63}, {63, 200}}) {
      for (MatrixKind kind : {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned,
                              MatrixKind::rank_deficient}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " " + to_string(kind));
        const Matrix<T> a = make_matrix<T>(kind, m, n, seed++);
        // Input from the host, whatever the backend: compute() copies it in.
        HouseholderQR<T> qr(ctx(), a.view());
        ASSERT_TRUE(qr.is_computed());
        EXPECT_EQ(qr.rows(), m);
        EXPECT_EQ(qr.cols(), n);
        const Matrix<T> r = to_host(ctx(), qr.matrix_r());
        const Matrix<T> q = to_host(ctx(), qr.householder_q(QMode::thin));
        ASSERT_EQ(q.cols(), std::min(m, n));
        ASSERT_EQ(r.rows(), std::min(m, n));
        for (std::int64_t j = 0; j < r.cols(); ++j)
          for (std::int64_t i = j + 1; i < r.rows(); ++i) ASSERT_EQ(r(i, j), T(0));
        EXPECT_LT(
            track("backward error", accuracy::qr_backward_error<T>(a.view(), q.view(), r.view())),
            kBound);
        EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(q.view())), kBound);
        // Full Q: m x m orthogonal whose first min(m, n) columns are the thin Q.
        const Matrix<T> qf = to_host(ctx(), qr.householder_q(QMode::full));
        ASSERT_EQ(qf.cols(), m);
        EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(qf.view())), kBound);
        if (q.cols() > 0) {
          const Matrix<T> lead =
              Matrix<T>::copy_of(MatrixView<const T>(qf.view().block(0, 0, m, q.cols())));
          EXPECT_LT(accuracy::relative_difference<T>(lead.view(), q.view()),
                    kBound * m * accuracy::eps<T>());
        }
      }
    }
  }));
}

TEST_P(HouseholderQRTest, ApplyQRoundTripsAndMatchesR) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 150, n = 70;
    const Matrix<T> a = random_matrix<T>(m, n, 9);
    HouseholderQR<T> qr(ctx(), a.view());
    // Q^T A = [R; 0].
    Matrix<T> c = to_ctx<T>(ctx(), a.view());
    qr.apply_q(Side::left, Op::trans, c.view());
    const Matrix<T> qta = to_host(ctx(), c);
    const Matrix<T> r = to_host(ctx(), qr.matrix_r());
    double worst = 0.0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        const double want = i < n ? static_cast<double>(r(i, j)) : 0.0;
        worst = std::max(worst, std::abs(qta(i, j) - want));
      }
    EXPECT_LT(worst / (accuracy::norm1<T>(a.view()) * m * accuracy::eps<T>()), kBound);
    // Q (Q^T C) = C, from the right too: (C Q) Q^T = C.
    const Matrix<T> b = random_matrix<T>(11, m, 10);
    Matrix<T> d = to_ctx<T>(ctx(), b.view());
    qr.apply_q(Side::right, Op::no_trans, d.view());
    qr.apply_q(Side::right, Op::trans, d.view());
    const Matrix<T> back = to_host(ctx(), d);
    EXPECT_LT(accuracy::relative_difference<T>(back.view(), b.view()) / (m * accuracy::eps<T>()),
              kBound);
  }));
}

TEST_P(HouseholderQRTest, SolvesManyRightHandSidesFromEitherSpace) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 180, n = 45, nrhs = 4;
    const Matrix<T> a = make_matrix<T>(MatrixKind::graded, m, n, 12);
    const Matrix<T> b = random_matrix<T>(m, nrhs, 13);
    HouseholderQR<T> qr(ctx(), a.view());
    LstsqInfo info;
    const Matrix<T> x = qr.solve(b.view(), &info);  // host B -> host X
    ASSERT_EQ(x.space(), MemorySpace::host);
    ASSERT_EQ(x.rows(), n);
    ASSERT_EQ(x.cols(), nrhs);
    EXPECT_LT(track("lstsq optimality",
                    accuracy::lstsq_optimality_ratio<T>(a.view(), x.view(), b.view())),
              kBound);
    ASSERT_EQ(info.residual_norms.size(), static_cast<std::size_t>(nrhs));
    EXPECT_GT(info.rcond_estimate, 0.0);
    EXPECT_DOUBLE_EQ(info.rcond_estimate, qr.rcond_estimate());
    // B in the context's space gives X in the same space and the same numbers.
    const Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
    const Matrix<T> x_ctx = qr.solve(b_ctx.view());
    EXPECT_EQ(x_ctx.space(), b_ctx.space());
    const Matrix<T> x2 = to_host(ctx(), x_ctx);
    EXPECT_EQ(accuracy::relative_difference<T>(x2.view(), x.view()), 0.0);
  }));
}

TEST_P(HouseholderQRTest, SingularRIsReportedNotSilent) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Matrix<T> a = random_matrix<T>(30, 8, 14);
    for (std::int64_t i = 0; i < 30; ++i) a(i, 3) = T(0);  // an exactly zero column
    const Matrix<T> b = random_matrix<T>(30, 1, 15);
    HouseholderQR<T> qr(ctx(), a.view());
    EXPECT_THROW(qr.solve(b.view()), InvalidArgument);
    LstsqInfo info;
    const Matrix<T> x = qr.solve(b.view(), &info);
    EXPECT_EQ(info.singular_at, 3);
    for (std::int64_t i = 0; i < x.rows(); ++i) EXPECT_TRUE(std::isnan(x(i, 0)));
  }));
}

TEST_P(HouseholderQRTest, MisuseIsAClearError) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    HouseholderQR<T> empty(ctx());
    EXPECT_FALSE(empty.is_computed());
    EXPECT_THROW(empty.matrix_r(), InvalidArgument);
    EXPECT_THROW(empty.solve(random_matrix<T>(3, 1, 1).view()), InvalidArgument);
    const Matrix<T> wide = random_matrix<T>(5, 9, 2);
    HouseholderQR<T> qr(ctx(), wide.view());
    EXPECT_THROW(qr.solve(random_matrix<T>(5, 1, 3).view()), InvalidArgument);  // m < n
    const Matrix<T> tall = random_matrix<T>(9, 5, 4);
    qr.compute(tall.view());
    EXPECT_THROW(qr.solve(random_matrix<T>(8, 1, 5).view()), InvalidArgument);  // rows differ
    // A failed compute (NaN input) leaves the earlier factorization in place.
    Matrix<T> bad = random_matrix<T>(9, 5, 6);
    bad(2, 2) = std::numeric_limits<T>::quiet_NaN();
    const Matrix<T> r_before = to_host(ctx(), qr.matrix_r());
    EXPECT_THROW(qr.compute(bad.view()), InvalidArgument);
    ASSERT_TRUE(qr.is_computed());
    const Matrix<T> r_after = to_host(ctx(), qr.matrix_r());
    EXPECT_EQ(accuracy::relative_difference<T>(r_after.view(), r_before.view()), 0.0);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, HouseholderQRTest, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
