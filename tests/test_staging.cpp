// Host matrices given to the LAPACK-level functions on a CUDA context are staged through the
// device (src/core/staging.hpp): results as good as the device-resident call's, the copies
// counted in Context::staging_stats, and a failed call leaves the host data untouched.
// On the CPU the same calls are the ordinary path (no staging, stats stay zero).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/bad_input.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

class Staging : public BackendTest {};

// geqrf + orgqr + ormqr + trtrs + gels with every matrix on the host.
TEST_P(Staging, HostMatricesGiveAccurateResults) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 301, n = 77;
    ctx().reset_staging_stats();
    const Matrix<T> a = make_matrix<T>(MatrixKind::graded, m, n, 5);
    Matrix<T> qr = a.clone();
    Matrix<T> tau(n, 1);
    geqrf<T>(ctx(), qr.view(), vec(tau));
    // geqrf stages A and tau in and out.
    const auto elem = static_cast<std::int64_t>(sizeof(T));
    if (ctx().is_cuda()) {
      EXPECT_EQ(ctx().staging_stats().bytes, 2 * (m * n + n) * elem);
      EXPECT_GT(ctx().staging_stats().seconds, 0.0);
    } else {
      EXPECT_EQ(ctx().staging_stats().bytes, 0);
    }
    Matrix<T> q = qr.clone();
    orgqr<T>(ctx(), n, q.view(), VectorView<const T>(vec(tau)));
    Matrix<T> r(n, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) r(i, j) = i <= j ? qr(i, j) : T(0);
    EXPECT_LT(accuracy::qr_backward_error<T>(a.view(), q.view(), r.view()), kBound);
    EXPECT_LT(accuracy::orthogonality<T>(q.view()), kBound);

    // ormqr with C on the host: Q^T A = [R; 0].
    Matrix<T> c = a.clone();
    ormqr<T>(ctx(), Side::left, Op::trans, MatrixView<const T>(qr.view()),
             VectorView<const T>(vec(tau)), c.view());
    double below = 0, anorm = accuracy::norm1<T>(a.view());
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j + 1; i < m; ++i) below = std::max(below, std::abs(double(c(i, j))));
    EXPECT_LT(below / (anorm * m * accuracy::eps<T>()), kBound);

    // trtrs on the host: the backward error of R x = rhs.
    const Matrix<T> rhs0 = random_matrix<T>(n, 1, 8);
    Matrix<T> xs = rhs0.clone();
    const TriangularInfo tinfo = trtrs<T>(ctx(), Uplo::upper, Op::no_trans, Diag::non_unit,
                                          MatrixView<const T>(r.view()), xs.view());
    EXPECT_FALSE(tinfo.singular());
    double res = 0, xnorm = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::int64_t j = i; j < n; ++j) s += double(r(i, j)) * double(xs(j, 0));
      res = std::max(res, std::abs(s - double(rhs0(i, 0))));
      xnorm = std::max(xnorm, std::abs(double(xs(i, 0))));
    }
    EXPECT_LT(res / (accuracy::norm1<T>(r.view()) * xnorm * n * accuracy::eps<T>()), kBound);

    // gels with A and B on the host.
    Matrix<T> a2 = make_matrix<T>(MatrixKind::random, m, n, 6);
    const Matrix<T> a2_orig = a2.clone();
    const Matrix<T> b = random_matrix<T>(m, 2, 7);
    Matrix<T> bx = b.clone();
    const LstsqInfo info = gels<T>(ctx(), a2.view(), bx.view());
    ASSERT_FALSE(info.singular());
    const Matrix<T> x = Matrix<T>::copy_of(bx.view().block(0, 0, n, 2));
    EXPECT_LT(accuracy::lstsq_optimality_ratio<T>(a2_orig.view(), x.view(), b.view()), kBound);
  }));
}

// Mixed: A on the device (the context's memory), C on the host.
TEST_P(Staging, MixedSpacesWork) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 130, n = 40;
    const Matrix<T> a = random_matrix<T>(m, n, 11);
    Matrix<T> qr = to_ctx<T>(ctx(), a.view());
    Matrix<T> tau(n, 1, qr.space(), qr.device());
    geqrf<T>(ctx(), qr.view(), vec(tau));
    Matrix<T> c = a.clone();  // host
    ormqr<T>(ctx(), Side::left, Op::trans, MatrixView<const T>(qr.view()),
             VectorView<const T>(vec(tau)), c.view());
    const Matrix<T> qr_host = to_host(ctx(), qr);
    double diag = 0, below = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      diag = std::max(diag, std::abs(std::abs(double(c(j, j))) - std::abs(double(qr_host(j, j)))));
      for (std::int64_t i = j + 1; i < m; ++i) below = std::max(below, std::abs(double(c(i, j))));
    }
    const double scale = accuracy::norm1<T>(a.view()) * m * accuracy::eps<T>();
    EXPECT_LT(diag / scale, kBound);
    EXPECT_LT(below / scale, kBound);
  }));
}

// A NaN in a host A: InvalidArgument, and neither A nor tau on the host changed.
TEST_P(Staging, FailedCallLeavesHostDataUntouched) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Matrix<T> a = random_matrix<T>(50, 20, 3);
    a(17, 9) = std::numeric_limits<T>::quiet_NaN();
    Matrix<T> tau = random_matrix<T>(20, 1, 4);
    const Matrix<T> a_before = a.clone(), tau_before = tau.clone();
    EXPECT_THROW(geqrf<T>(ctx(), a.view(), vec(tau)), InvalidArgument);
    EXPECT_TRUE(same_bits(a, a_before));
    EXPECT_TRUE(same_bits(tau, tau_before));
    Matrix<T> b = random_matrix<T>(50, 1, 5);
    const Matrix<T> b_before = b.clone();
    EXPECT_THROW(gels<T>(ctx(), a.view(), b.view()), InvalidArgument);
    EXPECT_TRUE(same_bits(a, a_before));
    EXPECT_TRUE(same_bits(b, b_before));
    // A too-short host tau is refused before anything is written.
    Matrix<T> good = random_matrix<T>(50, 20, 6);
    const Matrix<T> good_before = good.clone();
    Matrix<T> short_tau(5, 1);
    EXPECT_THROW(geqrf<T>(ctx(), good.view(), vec(short_tau)), InvalidArgument);
    EXPECT_TRUE(same_bits(good, good_before));
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, Staging, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
