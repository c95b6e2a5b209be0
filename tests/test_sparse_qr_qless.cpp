// Q-less mode of the CPU sparse QR (SparseQROptions::keep_householder = false, B carried
// through the fronts as extra columns, like SuiteSparseQR's [C, R] = qr(A, B)): C = Q^T B and
// the solution against the path that keeps the Householder vectors (apply_qt, solve), on the
// corpus and on random matrices, float and double, rank-deficient ones included; the memory
// saved; the errors of the Q-less object and of a bad B.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/error.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "tests/support/ratios.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;
using gpuqr::testing::sparse_corpus;

/// ||X - Y||_F / (scale ||Y||_F) (0 for two empty or zero matrices).
template <class T>
double rel_diff(const Matrix<T>& x, const Matrix<T>& y) {
  EXPECT_EQ(x.rows(), y.rows());
  EXPECT_EQ(x.cols(), y.cols());
  double d = 0, ny = 0;
  for (I j = 0; j < y.cols(); ++j)
    for (I i = 0; i < y.rows(); ++i) {
      const double e = static_cast<double>(x(i, j)) - static_cast<double>(y(i, j));
      d += e * e;
      ny += static_cast<double>(y(i, j)) * y(i, j);
    }
  return ny == 0 ? std::sqrt(d) : std::sqrt(d / ny);
}

/// sign(R(i, i)) for the first n rows of R (+1 where R(i, i) is zero or not stored).
template <class T>
std::vector<double> diagonal_signs(const CscMatrix<T>& r, I n) {
  std::vector<double> sign(static_cast<std::size_t>(std::max<I>(n, 0)), 1.0);
  for (I j = 0; j < std::min(r.cols, n); ++j)
    for (I p = r.col_ptr[j]; p < r.col_ptr[j + 1]; ++p)
      if (r.row_indices[p] == j && r.values[p] < 0) sign[static_cast<std::size_t>(j)] = -1.0;
  return sign;
}

struct QlessResult {
  double c_ratio = 0;  ///< ||C_qless - apply_qt(B)|| / (||B|| m eps)
  double x_ratio = 0;  ///< ||X_qless - X_kept|| / (||X_kept|| eps n / rcond)
  std::int64_t kept_bytes = 0, qless_bytes = 0;
};

/// Factors `a` three ways with `opt`: Householder vectors kept (no B), kept with B carried,
/// and Q-less with B carried; B is m x 3. Checks that all three agree on the rank, the dead
/// columns and nnz(R); that both carried C equal apply_qt(B) within 30 m eps ||B||; that in
/// Q-less mode apply_qt, apply_q, solve(B) and solve_transposed_min_norm throw; and, for
/// m >= n, that solve_carried's X and residual norms equal solve(B)'s to working accuracy
/// (relative to eps n / rcond_estimate: both are backward stable, rounding differs).
template <class T>
QlessResult check_qless(const CscMatrix<T>& a, SparseQROptions opt, std::uint64_t seed) {
  const I m = a.rows, n = a.cols, k = 3;
  const double eps = gpuqr::accuracy::eps<T>();
  const Matrix<T> b = random_dense<T>(m, k, seed);
  opt.keep_householder = true;
  const SparseQR<T> kept(a, opt);
  const SparseQR<T> carried(a, b.view(), opt);
  opt.keep_householder = false;
  const SparseQR<T> qless(a, b.view(), opt);
  EXPECT_TRUE(kept.keeps_householder());
  EXPECT_FALSE(qless.keeps_householder());
  EXPECT_EQ(kept.qtb().cols(), 0);
  // The carried columns do not take part in the pivot decisions: same rank, same columns.
  EXPECT_EQ(qless.rank(), kept.rank());
  EXPECT_EQ(qless.dead_columns(), kept.dead_columns());
  EXPECT_EQ(qless.r_row_count(), kept.r_row_count());
  // R's entries are computed by the same operations except for BLAS blocking over the wider
  // fronts; an entry can round to exactly zero (and not be stored) in one and not the other.
  EXPECT_NEAR(static_cast<double>(qless.nnz_r()), static_cast<double>(kept.nnz_r()),
              0.01 * static_cast<double>(kept.nnz_r()));

  // C = Q^T B: its first r_row_count() rows (R's rows) are Q1^T B with Q1 an orthonormal
  // basis of range(A Q) fixed by A (up to cond(A) eps), and must agree; the other rows are
  // the coordinates of B's residual in a basis of range(A)'s complement that is *not* fixed
  // by A: where a front's trailing columns are numerically (not exactly) dependent, their
  // reflectors are built from rounding noise, which differs between the two paths (the
  // carried columns change the BLAS blocking). Only the norm of that part (the residual
  // norm, per column) is determined, and is compared.
  QlessResult out;
  const Matrix<T> want = kept.apply_qt(b.view());
  const double scale = static_cast<double>(std::max<I>(m, 1)) * eps;
  const double rcd = std::max(kept.rcond_estimate(), 1e-300);
  const I nr = kept.r_row_count();
  double lead = 0, bnorm2 = 0;
  // Row i of C is q_i^T B, and Householder QR fixes q_i only up to its sign (R's row i flips
  // with it): where a pivot's leading entry is (near) zero, as on the natural ordering of
  // lp_e226^T, the two paths' rounding may pick opposite signs. Compare sign(R_ii) C_i.
  const std::vector<double> want_sign = diagonal_signs(kept.r(), nr);
  for (const SparseQR<T>* path : {&qless, &carried}) {
    const Matrix<T>* c = &path->qtb();
    const std::vector<double> sign = diagonal_signs(path->r(), nr);
    EXPECT_EQ(c->rows(), m);
    EXPECT_EQ(c->cols(), k);
    for (I j = 0; j < k; ++j) {
      double d = 0, t1 = 0, t2 = 0;
      for (I i = 0; i < nr; ++i)
        d += std::pow(sign[i] * static_cast<double>((*c)(i, j)) - want_sign[i] * want(i, j), 2);
      for (I i = nr; i < m; ++i) {
        t1 += static_cast<double>((*c)(i, j)) * (*c)(i, j);
        t2 += static_cast<double>(want(i, j)) * want(i, j);
      }
      lead = std::max(lead, std::sqrt(d));
      double bj = 0;
      for (I i = 0; i < m; ++i) bj += static_cast<double>(b(i, j)) * b(i, j);
      bnorm2 = std::max(bnorm2, bj);
      EXPECT_LE(std::abs(std::sqrt(t1) - std::sqrt(t2)), 30 * scale / rcd * std::sqrt(bj))
          << "norm of the rows R does not reach, column " << j;
    }
  }
  out.c_ratio = bnorm2 > 0 ? lead / (std::sqrt(bnorm2) * scale / rcd) : lead;
  EXPECT_LT(gpuqr::testing::track("sparse_qless_c", out.c_ratio), 30.0);

  for (const char* who : {"apply_qt", "apply_q", "solve", "solve_transposed_min_norm"}) {
    try {
      const std::string w = who;
      if (w == "apply_qt") (void)qless.apply_qt(b.view());
      if (w == "apply_q") (void)qless.apply_q(b.view());
      if (w == "solve") (void)qless.solve(b.view());
      if (w == "solve_transposed_min_norm")
        (void)qless.solve_transposed_min_norm(random_dense<T>(n, 1, 1).view());
      ADD_FAILURE() << who << " did not throw in Q-less mode";
    } catch (const gpuqr::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("Householder vectors were not kept"), std::string::npos)
          << who << ": " << e.what();
    }
  }

  out.kept_bytes = kept.stored_bytes();
  out.qless_bytes = qless.stored_bytes();
  if (m < n || (opt.tolerance == -1 && !kept.zero_pivots().empty())) {
    EXPECT_THROW((void)qless.solve_carried(), gpuqr::InvalidArgument);
    return out;
  }
  std::vector<double> rk, rq, rc;
  const Matrix<T> xk = kept.solve(b.view(), &rk);
  const Matrix<T> xq = qless.solve_carried(&rq);
  const Matrix<T> xc = carried.solve_carried(&rc);
  const double rcond = std::max(kept.rcond_estimate(), 1e-300);
  out.x_ratio = std::max(rel_diff(xq, xk), rel_diff(xc, xk)) /
                (eps * static_cast<double>(std::max<I>(n, 1)) / rcond);
  EXPECT_LT(gpuqr::testing::track("sparse_qless_x", out.x_ratio), 100.0);
  for (const I d : qless.dead_columns())
    for (I j = 0; j < k; ++j) EXPECT_EQ(xq(d, j), T(0)) << "dead column " << d;
  const double anorm = frob(to_double(a.to_dense())), bnorm = frob(to_double(b));
  const double xnorm = frob(to_double(xk));
  for (I j = 0; j < k; ++j) {
    EXPECT_NEAR(rq[j], rk[j], 1e2 * scale * (bnorm + anorm * xnorm / rcond)) << "rhs " << j;
    EXPECT_NEAR(rc[j], rk[j], 1e2 * scale * (bnorm + anorm * xnorm / rcond)) << "rhs " << j;
  }
  return out;
}

TEST(SparseQRQless, DataMatricesMatchKeptHouseholder) {
  int checked = 0, deficient = 0;
  for (const auto& [name, a0] : sparse_corpus()) {
    for (int t = 0; t < 2; ++t) {
      const CscMatrix<double> a = t == 0 ? a0 : transpose(a0);
      if (t == 1 && a0.rows >= a0.cols) continue;  // the transpose only when it is tall
      if (a.rows == 0) continue;
      for (const ColumnOrdering ord : orderings()) {
        for (const double tol : {-2.0, -1.0}) {  // rank detection on and off
          SCOPED_TRACE(name + (t ? "^T " : " ") + name_of(ord) + (tol == -1 ? " tol off" : ""));
          SparseQROptions opt = with_ordering(ord);
          opt.tolerance = tol;
          const QlessResult r = check_qless(a, opt, 31 + a.rows);
          const SparseQR<double> probe(a, opt);
          if (tol == -2.0 && probe.rank() < a.cols && a.rows >= a.cols) ++deficient;
          if (tol == -2.0 && ord == orderings().back()) {
            std::printf("[ QLESS    ] %-26s %4lld x %-4lld rank %4lld C ratio %.3g x ratio %.3g "
                        "bytes kept %lld Q-less %lld\n",
                        (name + (t ? "^T" : "")).c_str(), static_cast<long long>(a.rows),
                        static_cast<long long>(a.cols), static_cast<long long>(probe.rank()),
                        r.c_ratio, r.x_ratio, static_cast<long long>(r.kept_bytes),
                        static_cast<long long>(r.qless_bytes));
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(deficient, 2) << "the corpus should hold tall rank-deficient matrices";
}

/// A random tall matrix, then one with rows emptied and a dependent and an empty column.
template <class T>
void random_case() {
  const auto a = random_sparse<T>(400, 250, 3, 42);
  check_qless(a, any_ordering(), 5);
  const auto b = random_sparse<T>(300, 120, 2, 43);
  auto t = with_empty_rows_and_dependent_column(b);
  for (I p = b.col_ptr[9]; p < b.col_ptr[10]; ++p) {  // column 11 := column 9 + column 11
    t.rows.push_back(b.row_indices[p]);
    t.cols.push_back(11);
    t.values.push_back(b.values[p]);
  }
  const auto c = CscMatrix<T>::from_triplets(300, 120, t.rows, t.cols, t.values);
  const SparseQR<T> probe(c, any_ordering());
  EXPECT_LE(probe.rank(), 119);
  check_qless(c, any_ordering(), 6);
  SparseQROptions off = any_ordering();
  off.tolerance = -1;
  check_qless(a, off, 7);
}

TEST(SparseQRQless, RandomMatchesKeptHouseholderDouble) { random_case<double>(); }
TEST(SparseQRQless, RandomMatchesKeptHouseholderFloat) { random_case<float>(); }

// The memory the reflectors take, on the 2-D grid gradient (about 20000 x 10000) and the
// largest corpus matrix: Q-less keeps R and C only.
TEST(SparseQRQless, SavesTheHouseholderMemory) {
  std::vector<std::pair<std::string, CscMatrix<double>>> cases;
  for (auto& [name, a] : sparse_corpus())
    if (name == "lp_e226_transposed.mtx") cases.emplace_back(name, a);
  cases.emplace_back("grid 100", grid_gradient<double>(100));
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& [name, a] : cases) {
    SCOPED_TRACE(name);
    const Matrix<double> b = random_dense<double>(a.rows, 1, 3);
    SparseQROptions opt = any_ordering();
    const SparseQR<double> kept(a, opt);
    opt.keep_householder = false;
    const SparseQR<double> qless(a, b.view(), opt);
    const double r_bytes = static_cast<double>(qless.nnz_r()) * 16.0 + 8.0 * (a.cols + 1);
    std::printf("[ QLESS    ] %-22s %lld x %lld: stored bytes kept %.3g MB, Q-less %.3g MB "
                "(R %.3g MB, C %.3g MB): %.1fx less\n",
                name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                kept.stored_bytes() / 1e6, qless.stored_bytes() / 1e6, r_bytes / 1e6,
                a.rows * 8.0 / 1e6,
                static_cast<double>(kept.stored_bytes()) / qless.stored_bytes());
    // Q-less holds R (values and column indices), C, and two integers per front and pivot.
    EXPECT_LE(static_cast<double>(qless.stored_bytes()),
              r_bytes + a.rows * 8.0 + 16.0 * static_cast<double>(a.cols) +
                  8.0 * static_cast<double>(qless.analysis().fronts.size()) + 64.0);
    EXPECT_LT(2 * qless.stored_bytes(), kept.stored_bytes());
  }
}

TEST(SparseQRQless, RejectsABadB) {
  const auto a = random_sparse<double>(30, 10, 2, 3);
  SparseQROptions opt = any_ordering();
  opt.keep_householder = false;
  EXPECT_THROW((SparseQR<double>(a, random_dense<double>(29, 1, 1).view(), opt)),
               gpuqr::InvalidArgument);
  Matrix<double> nan = random_dense<double>(30, 2, 1);
  nan(7, 1) = NAN;
  try {
    SparseQR<double> qr(a, nan.view(), opt);
    ADD_FAILURE() << "a NaN in B was accepted";
  } catch (const gpuqr::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("NaN or Inf"), std::string::npos) << e.what();
  }
  // No B at all: Q-less R only; C is m x 0 and solve_carried gives n x 0.
  const SparseQR<double> r_only(a, opt);
  const SparseQR<double> kept(a, any_ordering());
  EXPECT_EQ(r_only.qtb().rows(), 30);
  EXPECT_EQ(r_only.qtb().cols(), 0);
  EXPECT_EQ(r_only.solve_carried().rows(), 10);
  EXPECT_EQ(r_only.solve_carried().cols(), 0);
  EXPECT_EQ(r_only.rank(), kept.rank());
  EXPECT_EQ(r_only.nnz_r(), kept.nnz_r());
  EXPECT_LT(2 * r_only.stored_bytes(), kept.stored_bytes());
  // A wide A: C forms (any shape), solving refuses (m < n).
  const SparseQR<double> wide(transpose(a), random_dense<double>(10, 2, 4).view(), opt);
  EXPECT_EQ(wide.qtb().rows(), 10);
  EXPECT_THROW((void)wide.solve_carried(), gpuqr::InvalidArgument);
}

}  // namespace
