// The TSQR reduction tree (src/core/tsqr_tree.hpp) on every backend and precision: backward
// error, orthogonality of the formed Q, Q^T A = [R; 0], apply_qt/apply_q round trips, shapes
// (n = 1, m = n, m not a multiple of the leaf rows, deep trees, the wide-n fallbacks), the
// stress test of the TSQR papers (graded R(100,100)), and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/tsqr_tree.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

class TsqrTreeTest : public BackendTest {};

using detail::TsqrTree;

template <class T>
double frobenius(MatrixView<const T> a) {
  double s = 0;
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) s += double(a(i, j)) * double(a(i, j));
  return std::sqrt(s);
}

/// ||I - Q^T Q||_F and ||A - Q R||_F / ||A||_F in double (host matrices).
template <class T>
std::pair<double, double> stress_figures(const Matrix<T>& a, const Matrix<T>& q,
                                         const Matrix<T>& r) {
  const std::int64_t m = q.rows(), n = q.cols();
  double orth = 0, res = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::int64_t l = 0; l < m; ++l) s += double(q(l, i)) * double(q(l, j));
      s -= i == j ? 1.0 : 0.0;
      orth += s * s;
    }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double s = a(i, j);
      for (std::int64_t l = 0; l <= j; ++l) s -= double(q(i, l)) * double(r(l, j));
      res += s * s;
    }
  return {std::sqrt(orth), std::sqrt(res) / frobenius<T>(a.view())};
}

/// Factors a copy of `host` by TSQR on ctx and checks every invariant of the tree.
template <class T>
void check_tree(const Context& ctx, const Matrix<T>& host, std::int64_t leaf_rows,
                std::int64_t group, std::int64_t min_levels = 0) {
  const std::int64_t m = host.rows(), n = host.cols();
  const double eps = accuracy::eps<T>();
  Matrix<T> a = to_ctx<T>(ctx, host.view());
  TsqrTree<T> tree(ctx, a.view(), leaf_rows, group);
  EXPECT_GE(tree.levels(), min_levels);
  const MemorySpace space = ctx.is_cuda() ? MemorySpace::device : MemorySpace::host;
  Matrix<T> r(n, n, space, ctx.device()), q(m, n, space, ctx.device());
  tree.r(r.view());
  tree.form_q(q.view());
  const Matrix<T> r_h = to_host(ctx, r), q_h = to_host(ctx, q);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) ASSERT_EQ(r_h(i, j), T(0)) << i << "," << j;
  EXPECT_LT(accuracy::qr_backward_error<T>(host.view(), q_h.view(), r_h.view()), 30.0);
  EXPECT_LT(accuracy::orthogonality<T>(q_h.view()), 30.0);
  // Q_full^T A = [R; 0].
  Matrix<T> qta = to_ctx<T>(ctx, host.view());
  tree.apply_qt(qta.view());
  const Matrix<T> qta_h = to_host(ctx, qta);
  const double anorm = frobenius<T>(host.view());
  double top = 0, below = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const double d = i < n ? double(qta_h(i, j)) - double(r_h(i, j)) : double(qta_h(i, j));
      (i < n ? top : below) += d * d;
    }
  const double bound = 20.0 * std::sqrt(double(m)) * eps;
  EXPECT_LT(std::sqrt(top) / anorm, bound);
  EXPECT_LT(std::sqrt(below) / anorm, bound);
  // apply_qt then apply_q gives C back; apply_q of [Y; 0] matches Q Y from the formed Q.
  const Matrix<T> c = random_matrix<T>(m, 3, 77);
  Matrix<T> cc = to_ctx<T>(ctx, c.view());
  tree.apply_qt(cc.view());
  tree.apply_q(cc.view());
  EXPECT_LT(accuracy::relative_difference<T>(to_host(ctx, cc).view(), c.view()), bound);
  Matrix<T> y(m, 2);
  for (std::int64_t j = 0; j < 2; ++j)
    for (std::int64_t i = 0; i < m; ++i) y(i, j) = i < n ? c(i, j) : T(0);
  Matrix<T> qy = to_ctx<T>(ctx, y.view());
  tree.apply_q(qy.view());
  Matrix<T> ref(m, 2);
  for (std::int64_t j = 0; j < 2; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::int64_t l = 0; l < n; ++l) s += double(q_h(i, l)) * double(c(l, j));
      ref(i, j) = static_cast<T>(s);
    }
  EXPECT_LT(accuracy::relative_difference<T>(to_host(ctx, qy).view(), ref.view()), bound);
}

TEST_P(TsqrTreeTest, Shapes) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // (m, n, leaf rows, group, least levels): n = 1, m = n, m not a multiple of the leaves, a
    // last leaf shorter than n (merged), deep trees, the defaults.
    const std::vector<std::tuple<int, int, int, int, int>> shapes = {
        {1000, 1, 64, 2, 4},  {37, 37, 0, 0, 0},   {65, 64, 0, 0, 0},   {1000, 16, 100, 3, 2},
        {500, 20, 30, 2, 4},  {1000, 40, 45, 2, 4}, {300, 7, 0, 0, 0},   {2000, 64, 150, 0, 1},
        {4099, 33, 64, 5, 3}, {3000, 1, 1, 16, 2}};
    std::uint64_t seed = 1;
    for (auto [m, n, leaf, group, levels] : shapes) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " leaf " + std::to_string(leaf) +
                   " group " + std::to_string(group));
      check_tree<T>(ctx(), random_matrix<T>(m, n, seed++), leaf, group, levels);
    }
  }));
}

TEST_P(TsqrTreeTest, LargeAndWide) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // The default leaves at a realistic height, a graded matrix, and columns wider than a
    // shared-memory block holds on CUDA (one leaf by default; an explicit tree factors its
    // blocks and nodes one cuSOLVER call at a time).
    check_tree<T>(ctx(), random_matrix<T>(100000, 32, 5), 0, 0, 0);
    check_tree<T>(ctx(), make_matrix<T>(MatrixKind::graded, 20000, 48, 6), 0, 0, 0);
    check_tree<T>(ctx(), random_matrix<T>(6000, 130, 7), 0, 0, 0);
    check_tree<T>(ctx(), random_matrix<T>(5000, 160, 8), 600, 0, 2);
  }));
}

TEST_P(TsqrTreeTest, StressGradedR) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // A = Q0 R0 from the QR of a 1000 x 200 uniform [0, 1) matrix, with R0(100, 100) = rho:
    // TSQR's ||Q^T Q - I||_F and ||A - QR||_F / ||A||_F stay within 10x of LAPACK geqrf's.
    const std::int64_t m = 1000, n = 200;
    Context cpu = Context::cpu();
    Matrix<T> u = random_matrix<T>(m, n, 2024);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) u(i, j) = static_cast<T>((double(u(i, j)) + 1) / 2);
    Matrix<T> q0 = u.clone(), tau(n, 1);
    VectorView<T> tv(tau.data(), n);
    kernels::cpu::geqrf<T>(cpu.impl(), q0.view(), tv);
    Matrix<T> r0(n, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) r0(i, j) = i <= j ? q0(i, j) : T(0);
    kernels::cpu::orgqr<T>(cpu.impl(), n, q0.view(), VectorView<const T>(tv));
    for (int e = 1; e <= 15; ++e) {
      const double rho = std::pow(10.0, -e);
      SCOPED_TRACE("rho 1e-" + std::to_string(e));
      r0(99, 99) = static_cast<T>(rho);
      Matrix<T> a(m, n);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) {
          double s = 0;
          for (std::int64_t l = 0; l <= j; ++l) s += double(q0(i, l)) * double(r0(l, j));
          a(i, j) = static_cast<T>(s);
        }
      // LAPACK's figures.
      Matrix<T> lq = a.clone(), lt(n, 1), lr(n, n);
      VectorView<T> ltv(lt.data(), n);
      kernels::cpu::geqrf<T>(cpu.impl(), lq.view(), ltv);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) lr(i, j) = i <= j ? lq(i, j) : T(0);
      kernels::cpu::orgqr<T>(cpu.impl(), n, lq.view(), VectorView<const T>(ltv));
      const auto [l_orth, l_res] = stress_figures<T>(a, lq, lr);
      // TSQR: 4 leaves of 250 rows, nodes of 2 (two levels).
      Matrix<T> ad = to_ctx<T>(ctx(), a.view());
      TsqrTree<T> tree(ctx(), ad.view(), 250, 2);
      EXPECT_EQ(tree.levels(), 2);
      const MemorySpace space = ctx().is_cuda() ? MemorySpace::device : MemorySpace::host;
      Matrix<T> r(n, n, space, ctx().device()), q(m, n, space, ctx().device());
      tree.r(r.view());
      tree.form_q(q.view());
      const auto [t_orth, t_res] = stress_figures<T>(a, to_host(ctx(), q), to_host(ctx(), r));
      const double eps = accuracy::eps<T>();
      EXPECT_LT(t_orth, 10.0 * std::max(l_orth, eps)) << "LAPACK " << l_orth;
      EXPECT_LT(t_res, 10.0 * std::max(l_res, eps)) << "LAPACK " << l_res;
    }
  }));
}

TEST_P(TsqrTreeTest, BadInputChangesNothing) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const MemorySpace space = ctx().is_cuda() ? MemorySpace::device : MemorySpace::host;
    const MemorySpace other = ctx().is_cuda() ? MemorySpace::host : MemorySpace::device;
    const Matrix<T> host = random_matrix<T>(50, 10, 3);
    Matrix<T> a = to_ctx<T>(ctx(), host.view());
    auto unchanged = [&] {
      EXPECT_EQ(accuracy::relative_difference<T>(to_host(ctx(), a).view(), host.view()), 0.0);
    };
    // m < n, negative leaf rows, a group of one, the wrong memory space.
    EXPECT_THROW(TsqrTree<T>(ctx(), a.view().block(0, 0, 9, 10)), InvalidArgument);
    EXPECT_THROW(TsqrTree<T>(ctx(), a.view(), -1), InvalidArgument);
    EXPECT_THROW(TsqrTree<T>(ctx(), a.view(), 16, 1), InvalidArgument);
    MatrixView<T> wrong(a.data(), 50, 10, 50, other, other == MemorySpace::device ? 0 : -1);
    EXPECT_THROW(TsqrTree<T>(ctx(), wrong), InvalidArgument);
    unchanged();
    // NaN and Inf (with check_finite on).
    for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
      Matrix<T> h = host.clone();
      h(17, 4) = bad;
      Matrix<T> hb = to_ctx<T>(ctx(), h.view());
      EXPECT_THROW(TsqrTree<T>(ctx(), hb.view()), InvalidArgument);
      const Matrix<T> back = to_host(ctx(), hb);
      EXPECT_EQ(double(back(3, 3)), double(h(3, 3)));
    }
    // Wrong shapes for r, apply and form_q leave their outputs alone.
    TsqrTree<T> tree(ctx(), a.view(), 16, 2);
    const Matrix<T> c_host = random_matrix<T>(49, 2, 4);
    Matrix<T> c = to_ctx<T>(ctx(), c_host.view());
    EXPECT_THROW(tree.apply_qt(c.view()), InvalidArgument);
    EXPECT_THROW(tree.apply_q(c.view()), InvalidArgument);
    EXPECT_EQ(accuracy::relative_difference<T>(to_host(ctx(), c).view(), c_host.view()), 0.0);
    Matrix<T> q(50, 9, space, ctx().device()), r(9, 10, space, ctx().device());
    EXPECT_THROW(tree.form_q(q.view()), InvalidArgument);
    EXPECT_THROW(tree.r(r.view()), InvalidArgument);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, TsqrTreeTest, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
