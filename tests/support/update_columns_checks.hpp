// Host-side tracking of A~ and b~ for the column-update tests (tests/test_qr_update_columns*.cpp)
// and the comparison of an UpdatableQR with a fresh factorization of the tracked matrix.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/update.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {

/// x with the rows of y inserted before row k.
template <class T>
Matrix<T> rows_inserted(const Matrix<T>& x, std::int64_t k, const Matrix<T>& y) {
  Matrix<T> out(x.rows() + y.rows(), x.cols());
  for (std::int64_t j = 0; j < x.cols(); ++j) {
    for (std::int64_t i = 0; i < k; ++i) out(i, j) = x(i, j);
    for (std::int64_t i = 0; i < y.rows(); ++i) out(k + i, j) = y(i, j);
    for (std::int64_t i = k; i < x.rows(); ++i) out(y.rows() + i, j) = x(i, j);
  }
  return out;
}

/// x without its rows k .. k + p - 1.
template <class T>
Matrix<T> rows_erased(const Matrix<T>& x, std::int64_t k, std::int64_t p) {
  Matrix<T> out(x.rows() - p, x.cols());
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < out.rows(); ++i) out(i, j) = x(i < k ? i : i + p, j);
  return out;
}

/// A~ and b~ on the host, changed as the object is.
template <class T>
struct TrackedColumns {
  Matrix<T> a, b;
  void insert_rows(std::int64_t k, const Matrix<T>& u, const Matrix<T>& e) {
    a = rows_inserted(a, k, u);
    b = rows_inserted(b, k, e);
  }
  void erase_rows(std::int64_t k, std::int64_t p) {
    a = rows_erased(a, k, p);
    b = rows_erased(b, k, p);
  }
  void insert_cols(std::int64_t k, const Matrix<T>& u) {
    Matrix<T> out(a.rows(), a.cols() + u.cols());
    for (std::int64_t i = 0; i < a.rows(); ++i) {
      for (std::int64_t j = 0; j < k; ++j) out(i, j) = a(i, j);
      for (std::int64_t j = 0; j < u.cols(); ++j) out(i, k + j) = u(i, j);
      for (std::int64_t j = k; j < a.cols(); ++j) out(i, u.cols() + j) = a(i, j);
    }
    a = std::move(out);
  }
  void erase_cols(std::int64_t k, std::int64_t p) {
    Matrix<T> out(a.rows(), a.cols() - p);
    for (std::int64_t i = 0; i < a.rows(); ++i)
      for (std::int64_t j = 0; j < out.cols(); ++j) out(i, j) = a(i, j < k ? j : j + p);
    a = std::move(out);
  }
  void add_rank_k(const Matrix<T>& u, const Matrix<T>& v) {
    for (std::int64_t i = 0; i < a.rows(); ++i)
      for (std::int64_t j = 0; j < a.cols(); ++j) {
        double s = 0;
        for (std::int64_t l = 0; l < u.cols(); ++l) s += double(u(i, l)) * double(v(j, l));
        a(i, j) = T(double(a(i, j)) + s);
      }
  }
};

/// The invariants of one comparison, in units of eps (x and residual: eps / rcond).
struct ColumnChecks {
  double backward = 0, orthogonality = 0, optimality = 0, x_diff = 0, res_diff = 0, diag_diff = 0;
};

/// Compares the object with the tracked A~, b~ and with a fresh HouseholderQR of them (CPU).
template <class T>
ColumnChecks compare_with_fresh(const Context& ctx, const UpdatableQR<T>& qr,
                                const TrackedColumns<T>& t) {
  ColumnChecks out;
  const std::int64_t m = t.a.rows(), n = t.a.cols();
  EXPECT_EQ(qr.rows(), m);
  EXPECT_EQ(qr.cols(), n);
  if (qr.rows() != m || qr.cols() != n) return out;
  const Matrix<T> r = to_host(ctx, qr.matrix_r());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) EXPECT_EQ(r(i, j), T(0)) << "R(" << i << ", " << j << ")";
  if (qr.q_mode() != UpdateQ::none) {
    const Matrix<T> q = to_host(ctx, qr.matrix_q());
    const Matrix<T> q1 = Matrix<T>::copy_of(MatrixView<const T>(q.view().block(0, 0, m, n)));
    out.backward = accuracy::qr_backward_error<T>(t.a.view(), q1.view(), r.view());
    out.orthogonality = accuracy::orthogonality<T>(q.view());
  }
  HouseholderQR<T> fresh(Context::cpu(), t.a.view());
  const Matrix<T> rf = fresh.matrix_r();
  double worst = 0, size = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    worst = std::max(worst, std::abs(std::abs(double(r(j, j))) - std::abs(double(rf(j, j)))));
    size = std::max(size, std::abs(double(rf(j, j))));
  }
  out.diag_diff = worst / (size * accuracy::eps<T>());
  if (t.b.cols() == 0) return out;
  LstsqInfo info, fresh_info;
  const Matrix<T> x = to_host(ctx, qr.solve(&info));
  const Matrix<T> xf = fresh.solve(t.b.view(), &fresh_info);
  EXPECT_FALSE(info.singular());
  out.optimality = accuracy::lstsq_optimality_ratio<T>(t.a.view(), x.view(), t.b.view());
  const double scale = accuracy::eps<T>() / std::max(fresh_info.rcond_estimate, 1e-300);
  out.x_diff = accuracy::relative_difference<T>(x.view(), xf.view()) / scale;
  for (std::size_t j = 0; j < info.residual_norms.size() && j < fresh_info.residual_norms.size(); ++j) {
    double bnorm = 0;
    for (std::int64_t i = 0; i < m; ++i) bnorm += double(t.b(i, j)) * double(t.b(i, j));
    out.res_diff = std::max(out.res_diff, std::abs(info.residual_norms[j] - fresh_info.residual_norms[j]) /
                                              (std::sqrt(bnorm) * scale));
  }
  return out;
}

/// Bounds on the invariants; `drift` scales them for long sequences. The |diag R| difference
/// is relative to max |R(j, j)| and grows with the condition number: bounded by 1e4 eps x drift
/// on the random (well-conditioned) test matrices.
inline void expect_close_to_fresh(const ColumnChecks& c, double drift = 1.0) {
  EXPECT_LT(track("columns backward error", c.backward), 30.0 * drift);
  EXPECT_LT(track("columns orthogonality", c.orthogonality), 30.0 * drift);
  EXPECT_LT(track("columns lstsq optimality", c.optimality), 30.0 * drift);
  EXPECT_LT(track("columns x vs fresh (eps/rcond)", c.x_diff), 1000.0 * drift);
  EXPECT_LT(track("columns residual vs fresh (eps/rcond)", c.res_diff), 1000.0 * drift);
  EXPECT_LT(track("columns |diag R| vs fresh (eps)", c.diag_diff), 1e4 * drift);
}

/// R, d, Q (bitwise), sizes and row order, to show that a failed call changed nothing.
template <class T>
struct ColumnSnapshot {
  Matrix<T> r, d, q;
  std::int64_t m, n;
  std::vector<std::int64_t> order;
  ColumnSnapshot(const Context& ctx, const UpdatableQR<T>& qr)
      : r(to_host(ctx, qr.matrix_r())), d(to_host(ctx, qr.matrix_d())),
        q(qr.q_mode() == UpdateQ::none ? Matrix<T>() : to_host(ctx, qr.matrix_q())),
        m(qr.rows()), n(qr.cols()), order(qr.row_order()) {}
  void expect_same(const Context& ctx, const UpdatableQR<T>& qr) const {
    ASSERT_EQ(qr.rows(), m);
    ASSERT_EQ(qr.cols(), n);
    EXPECT_EQ(qr.row_order(), order);
    const Matrix<T> r2 = to_host(ctx, qr.matrix_r()), d2 = to_host(ctx, qr.matrix_d());
    EXPECT_EQ(std::memcmp(r.data(), r2.data(), sizeof(T) * r.rows() * r.cols()), 0);
    EXPECT_EQ(std::memcmp(d.data(), d2.data(), sizeof(T) * d.rows() * d.cols()), 0);
    if (qr.q_mode() != UpdateQ::none) {
      const Matrix<T> q2 = to_host(ctx, qr.matrix_q());
      EXPECT_EQ(std::memcmp(q.data(), q2.data(), sizeof(T) * q.rows() * q.cols()), 0);
    }
  }
};

}  // namespace gpuqr::testing
