// Dense QR functions (geqrf, orgqr, ormqr, trtrs, gels), run for every backend and precision.
// Metrics are computed on the host in double (gpuqr/accuracy.hpp); factors are never compared
// entry by entry across backends (signs may differ), only invariants are.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;  // LAPACK's tester threshold on the scaled ratios

struct Shape {
  std::int64_t m, n;
};
const Shape kShapes[] = {{0, 0},     {1, 1},     {1, 6},     {6, 1},   {37, 1},  {64, 64},
                         {100, 100}, {257, 129}, {129, 257}, {300, 7}, {33, 95}, {515, 260}};
const MatrixKind kKinds[] = {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned,
                             MatrixKind::rank_deficient};

/// R (k x n, zeros below) and thin Q (m x k) from geqrf's output, on the host.
template <class T>
void split_qr(const Context& ctx, const Matrix<T>& qr_dev, Matrix<T>& tau_dev, Matrix<T>& q,
              Matrix<T>& r) {
  const std::int64_t m = qr_dev.rows(), n = qr_dev.cols(), k = std::min(m, n);
  Matrix<T> qr = to_host(ctx, qr_dev);
  r = Matrix<T>(k, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? qr(i, j) : T(0);
  Matrix<T> q_dev =
      Matrix<T>::copy_of(qr_dev.view().block(0, 0, m, k), qr_dev.space(), qr_dev.device());
  orgqr<T>(ctx, k, q_dev.view(), VectorView<const T>(vec(tau_dev)));
  q = to_host(ctx, q_dev);
}

class Dense : public BackendTest {};

TEST_P(Dense, GeqrfBackwardErrorAndOrthogonality) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 1;
    for (const Shape s : kShapes) {
      for (const MatrixKind kind : kKinds) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " " + to_string(kind));
        const Matrix<T> a = make_matrix<T>(kind, s.m, s.n, seed++);
        Matrix<T> qr = to_ctx<T>(ctx(), a.view());
        Matrix<T> tau(std::min(s.m, s.n), 1, qr.space(), qr.device());
        geqrf<T>(ctx(), qr.view(), vec(tau));
        Matrix<T> q, r;
        split_qr<T>(ctx(), qr, tau, q, r);
        EXPECT_LT(
            track("backward error", accuracy::qr_backward_error<T>(a.view(), q.view(), r.view())),
            kBound);
        EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(q.view())), kBound);
      }
    }
  }));
}

TEST_P(Dense, GeqrfHonoursLeadingDimension) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = random_matrix<T>(70, 45, 7);
    // A view with ld = m + 13 whose padding holds 1e30: touching it would wreck the result.
    Padded<T> host = padded_copy<T>(a.view(), 13);
    Matrix<T> storage = to_ctx<T>(ctx(), MatrixView<const T>(host.storage.view()));
    MatrixView<T> view(storage.data(), 70, 45, storage.ld(), storage.space(), storage.device());
    Matrix<T> tau(45, 1, storage.space(), storage.device());
    geqrf<T>(ctx(), view, vec(tau));
    Matrix<T> back = to_host(ctx(), storage);
    for (std::int64_t j = 0; j < 45; ++j)
      for (std::int64_t i = 70; i < 83; ++i) ASSERT_EQ(back(i, j), static_cast<T>(1e30));
    Matrix<T> qr = Matrix<T>::copy_of(MatrixView<const T>(back.data(), 70, 45, back.ld()));
    Matrix<T> qr_ctx = to_ctx<T>(ctx(), qr.view());
    Matrix<T> q, r;
    split_qr<T>(ctx(), qr_ctx, tau, q, r);
    EXPECT_LT(track("backward error", accuracy::qr_backward_error<T>(a.view(), q.view(), r.view())),
              kBound);
  }));
}

TEST_P(Dense, OrgqrFullQ) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (const Shape s : {Shape{50, 20}, Shape{65, 65}, Shape{3, 1}, Shape{130, 33}}) {
      const Matrix<T> a = make_matrix<T>(MatrixKind::graded, s.m, s.n, 11);
      Matrix<T> qr = to_ctx<T>(ctx(), a.view());
      Matrix<T> tau(s.n, 1, qr.space(), qr.device());
      geqrf<T>(ctx(), qr.view(), vec(tau));
      // Full Q: the reflectors in an m x m array, the extra columns set by orgqr.
      Matrix<T> full(s.m, s.m);
      Matrix<T> qr_host = to_host(ctx(), qr);
      for (std::int64_t j = 0; j < s.m; ++j)
        for (std::int64_t i = 0; i < s.m; ++i) full(i, j) = j < s.n ? qr_host(i, j) : T(0.25);
      Matrix<T> full_ctx = to_ctx<T>(ctx(), full.view());
      orgqr<T>(ctx(), s.n, full_ctx.view(), VectorView<const T>(vec(tau)));
      Matrix<T> q = to_host(ctx(), full_ctx);
      EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(q.view())), kBound);
      Matrix<T> r(s.m, s.n);
      for (std::int64_t j = 0; j < s.n; ++j)
        for (std::int64_t i = 0; i < s.m; ++i) r(i, j) = i <= j ? qr_host(i, j) : T(0);
      EXPECT_LT(
          track("backward error", accuracy::qr_backward_error<T>(a.view(), q.view(), r.view())),
          kBound);
    }
  }));
}

/// C := op(Q) C or C op(Q) against the explicit full Q, for every side and op.
TEST_P(Dense, OrmqrMatchesExplicitQ) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 77, k = 31, nc = 19;
    const Matrix<T> a = random_matrix<T>(m, k, 21);
    Matrix<T> qr = to_ctx<T>(ctx(), a.view());
    Matrix<T> tau(k, 1, qr.space(), qr.device());
    geqrf<T>(ctx(), qr.view(), vec(tau));
    Matrix<T> qr_host = to_host(ctx(), qr);
    Matrix<T> full(m, m);
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t i = 0; i < m; ++i) full(i, j) = j < k ? qr_host(i, j) : T(0);
    Matrix<T> full_ctx = to_ctx<T>(ctx(), full.view());
    orgqr<T>(ctx(), k, full_ctx.view(), VectorView<const T>(vec(tau)));
    const Matrix<T> q = to_host(ctx(), full_ctx);
    for (Side side : {Side::left, Side::right}) {
      for (Op op : {Op::no_trans, Op::trans}) {
        SCOPED_TRACE(std::string(side == Side::left ? "left" : "right") +
                     (op == Op::trans ? " trans" : " no_trans"));
        const std::int64_t rows = side == Side::left ? m : nc;
        const std::int64_t cols = side == Side::left ? nc : m;
        const Matrix<T> c = random_matrix<T>(rows, cols, 99);
        Matrix<T> c_ctx = to_ctx<T>(ctx(), c.view());
        ormqr<T>(ctx(), side, op, MatrixView<const T>(qr.view()), VectorView<const T>(vec(tau)),
                 c_ctx.view());
        const Matrix<T> got = to_host(ctx(), c_ctx);
        const Matrix<T> want = apply_explicit_q<T>(side, op, q, c);
        const double diff = accuracy::relative_difference<T>(got.view(), want.view());
        EXPECT_LT(diff / (m * accuracy::eps<T>()), kBound);
      }
    }
  }));
}

/// A random n x n triangle whose diagonal dominates, so op(A) x = b is well conditioned.
template <class T>
Matrix<T> triangle(std::int64_t n, Uplo uplo, std::uint64_t seed) {
  Matrix<T> a = random_matrix<T>(n, n, seed);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      if ((uplo == Uplo::upper && i > j) || (uplo == Uplo::lower && i < j)) a(i, j) = T(7);
      if (i == j) a(i, j) = static_cast<T>(n) + std::abs(a(i, j));
    }
  return a;
}

TEST_P(Dense, TrtrsSolvesEveryTriangle) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t n = 67, nrhs = 5;
    for (Uplo uplo : {Uplo::upper, Uplo::lower}) {
      for (Op op : {Op::no_trans, Op::trans}) {
        Matrix<T> a = triangle<T>(n, uplo, 5);
        // Poison the unreferenced triangle: a solver that reads it fails.
        Matrix<T> used(n, n);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n; ++i) {
            const bool in = uplo == Uplo::upper ? i <= j : i >= j;
            used(i, j) = in ? a(i, j) : T(0);
          }
        const Matrix<T> x_true = random_matrix<T>(n, nrhs, 3);
        Matrix<T> b(n, nrhs);
        for (std::int64_t j = 0; j < nrhs; ++j)
          for (std::int64_t i = 0; i < n; ++i) {
            double acc = 0.0;
            for (std::int64_t p = 0; p < n; ++p)
              acc += (op == Op::trans ? used(p, i) : used(i, p)) * x_true(p, j);
            b(i, j) = static_cast<T>(acc);
          }
        Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
        Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
        const TriangularInfo info =
            trtrs<T>(ctx(), uplo, op, Diag::non_unit, a_ctx.view(), b_ctx.view());
        EXPECT_FALSE(info.singular());
        const Matrix<T> x = to_host(ctx(), b_ctx);
        EXPECT_LT(
            accuracy::relative_difference<T>(x.view(), x_true.view()) / (n * accuracy::eps<T>()),
            kBound);
      }
    }
  }));
}

TEST_P(Dense, TrtrsReportsSingularAndLeavesBUntouched) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Matrix<T> a = triangle<T>(9, Uplo::upper, 8);
    a(4, 4) = T(0);
    const Matrix<T> b = random_matrix<T>(9, 2, 4);
    Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
    Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
    const TriangularInfo info =
        trtrs<T>(ctx(), Uplo::upper, Op::no_trans, Diag::non_unit, a_ctx.view(), b_ctx.view());
    EXPECT_EQ(info.singular_at, 4);
    const Matrix<T> after = to_host(ctx(), b_ctx);
    EXPECT_EQ(accuracy::relative_difference<T>(after.view(), b.view()), 0.0);
  }));
}

/// LAPACK's own gels on the host: the reference solution.
template <class T>
Matrix<T> lapack_gels(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> ac = a.clone(), bc = b.clone();
  lapack_int info;
  if constexpr (std::is_same_v<T, double>) {
    info = LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', a.rows(), a.cols(), b.cols(), ac.data(), ac.ld(),
                         bc.data(), bc.ld());
  } else {
    info = LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', a.rows(), a.cols(), b.cols(), ac.data(), ac.ld(),
                         bc.data(), bc.ld());
  }
  EXPECT_EQ(info, 0);
  return Matrix<T>::copy_of(bc.view().block(0, 0, a.cols(), b.cols()));
}

/// The 2-norm condition number sigma_max / sigma_min, from LAPACK's SVD in double.
template <class T>
double condition_number(const Matrix<T>& a) {
  const std::int64_t k = std::min(a.rows(), a.cols());
  if (k == 0) return 1.0;
  Matrix<double> ad(a.rows(), a.cols());
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) ad(i, j) = a(i, j);
  std::vector<double> sv(static_cast<std::size_t>(k));
  EXPECT_EQ(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', a.rows(), a.cols(), ad.data(), ad.ld(), sv.data(),
                           nullptr, 1, nullptr, 1),
            0);
  return sv.back() > 0.0 ? sv.front() / sv.back() : std::numeric_limits<double>::infinity();
}

TEST_P(Dense, GelsMatchesLapackAndIsOptimal) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 40;
    for (const Shape s : {Shape{1, 1}, Shape{9, 1}, Shape{64, 64}, Shape{300, 7}, Shape{257, 129},
                          Shape{515, 260}}) {
      for (const MatrixKind kind :
           {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " " + to_string(kind));
        const double cond = sizeof(T) == 8 ? 1e8 : 1e3;
        const Matrix<T> a = make_matrix<T>(kind, s.m, s.n, seed++, cond);
        const Matrix<T> b = random_matrix<T>(s.m, 3, seed++);
        Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
        Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
        const LstsqInfo info = gels<T>(ctx(), a_ctx.view(), b_ctx.view());
        ASSERT_FALSE(info.singular());
        const Matrix<T> out = to_host(ctx(), b_ctx);
        const Matrix<T> x = Matrix<T>::copy_of(out.view().block(0, 0, s.n, 3));
        EXPECT_LT(track("lstsq optimality",
                        accuracy::lstsq_optimality_ratio<T>(a.view(), x.view(), b.view())),
                  kBound);
        // Against LAPACK: the solutions agree to the problem's sensitivity,
        // kappa + kappa^2 ||r|| / (||A|| ||x||) (Golub & Van Loan 5.3.8), times eps.
        const Matrix<T> ref = lapack_gels<T>(a, b);
        const double kappa = condition_number<T>(a);
        const double anorm = accuracy::norm1<T>(a.view());
        const double xnorm = accuracy::norm1<T>(ref.view());
        double rnorm = 0.0;
        for (std::int64_t j = 0; j < 3; ++j)
          rnorm = std::max(
              rnorm, accuracy::residual_norm<T>(a.view(), ref.view().col(j), b.view().col(j)));
        const double sensitivity = kappa + kappa * kappa * rnorm / (anorm * xnorm);
        EXPECT_LT(accuracy::relative_difference<T>(x.view(), ref.view()),
                  kBound * s.m * sensitivity * accuracy::eps<T>());
        ASSERT_EQ(info.residual_norms.size(), 3u);
        for (std::int64_t j = 0; j < 3; ++j) {
          const double r = accuracy::residual_norm<T>(a.view(), x.view().col(j), b.view().col(j));
          EXPECT_NEAR(
              info.residual_norms[j], r,
              kBound * s.m * accuracy::eps<T>() * (accuracy::norm1<T>(b.view()) + anorm * xnorm));
        }
        EXPECT_GT(info.rcond_estimate, 0.0);
        EXPECT_LE(info.rcond_estimate, 1.0);
      }
    }
  }));
}

TEST_P(Dense, GelsConsistentSystemRecoversX) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 200, n = 50;
    const Matrix<T> a = random_matrix<T>(m, n, 77);
    const Matrix<T> x_true = random_matrix<T>(n, 1, 78);
    Matrix<T> b(m, 1);
    for (std::int64_t i = 0; i < m; ++i) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < n; ++p) acc += static_cast<double>(a(i, p)) * x_true(p, 0);
      b(i, 0) = static_cast<T>(acc);
    }
    Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
    Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
    const LstsqInfo info = gels<T>(ctx(), a_ctx.view(), b_ctx.view());
    const Matrix<T> out = to_host(ctx(), b_ctx);
    const Matrix<T> x = Matrix<T>::copy_of(out.view().block(0, 0, n, 1));
    EXPECT_LT(accuracy::relative_difference<T>(x.view(), x_true.view()), 1e3 * accuracy::eps<T>());
    EXPECT_LT(info.residual_norms[0], 1e3 * accuracy::eps<T>() * std::sqrt(double(m)));
  }));
}

TEST_P(Dense, GelsReportsExactlySingularR) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Matrix<T> a = random_matrix<T>(20, 6, 5);
    for (std::int64_t i = 0; i < 20; ++i) a(i, 0) = T(0);  // an all-zero column: R(0,0) = 0
    const Matrix<T> b = random_matrix<T>(20, 1, 6);
    Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
    Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
    const LstsqInfo info = gels<T>(ctx(), a_ctx.view(), b_ctx.view());
    EXPECT_EQ(info.singular_at, 0);
    EXPECT_EQ(info.rcond_estimate, 0.0);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, Dense, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
