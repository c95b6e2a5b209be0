// Tests for the CPU multifrontal sparse QR (gpuqr/sparse_qr.hpp): least-squares solutions
// against LAPACK's dense dgels on the data/matrices corpus and on generated matrices, the
// backward error of R ((AQ)^T (AQ) = R^T R), nnz(R) against the symbolic analysis, consistent
// systems on a 2-D grid gradient operator, several right-hand sides, permuted copies, and
// input validation. Rank detection, apply_qt/apply_q and min-norm, the Q-less mode and the
// SuiteSparseQR comparison have their own test_sparse_qr_*.cpp files.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <numeric>

#include "gpuqr/error.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;
using gpuqr::testing::sparse_corpus;
using gpuqr::testing::structural_rank;

}  // namespace

TEST(SparseQR, DataMatricesMatchDenseLapack) {
  int solved = 0;
  for (const auto& [name, a0] : sparse_corpus()) {
    for (int t = 0; t < 2; ++t) {
      const CscMatrix<double> a = t == 0 ? a0 : transpose(a0);
      if (t == 1 && a0.rows >= a0.cols) continue;  // the transpose only when it is tall
      if (a.cols == 0) continue;
      const bool full = structural_rank(a) == a.cols;
      for (const ColumnOrdering ord : orderings()) {
        SCOPED_TRACE(name + (t ? " transposed " : " ") + name_of(ord));
        const SparseQR<double> qr(a, with_ordering(ord));
        // Every factorization, rank deficient or not, must satisfy (AQ)^T(AQ) = R^T R.
        EXPECT_LT(gpuqr::testing::track("sparse_rtr", rtr_ratio(a, qr)), 30.0);
        if (a.rows < a.cols) {
          EXPECT_THROW(qr.solve(random_dense<double>(a.rows, 1, 1).view()), gpuqr::InvalidArgument);
          continue;
        }
        if (!full) {
          EXPECT_FALSE(qr.zero_pivots().empty()) << "structurally rank deficient, no zero pivot";
          continue;
        }
        EXPECT_LE(qr.nnz_r(), qr.analysis().nnz_r);
        if (!qr.zero_pivots().empty()) continue;  // numerically singular with these values
        const double ratio = check_solve_against_dense(a, qr, 2, 7 + a.cols);
        std::printf("[ SPARSEQR ] %-26s %-7s %4lld x %-4lld nnz(R) %6lld (analysis %6lld) err ratio %.3g\n",
                    (name + (t ? "^T" : "")).c_str(), name_of(ord).c_str(),
                    static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                    static_cast<long long>(qr.nnz_r()),
                    static_cast<long long>(qr.analysis().nnz_r), ratio);
        ++solved;
      }
    }
  }
  EXPECT_GE(solved, 6) << "too few corpus matrices were solved";
}

template <class T>
void random_tall_case() {
  for (const ColumnOrdering ord : orderings()) {
    SCOPED_TRACE(name_of(ord));
    const auto a = random_sparse<T>(400, 250, 3, 42);
    const SparseQR<T> qr(a, with_ordering(ord));
    EXPECT_TRUE(qr.zero_pivots().empty());
    EXPECT_LE(qr.nnz_r(), qr.analysis().nnz_r);
    EXPECT_LT(gpuqr::testing::track("sparse_rtr", rtr_ratio(a, qr)), 30.0);
    check_solve_against_dense(a, qr, 1, 3);
  }
}

TEST(SparseQR, RandomTallMatchesDenseDouble) { random_tall_case<double>(); }
TEST(SparseQR, RandomTallMatchesDenseFloat) { random_tall_case<float>(); }

/// Consistent system A x = A x_true must give x_true to cond * eps; random b must give an
/// optimal x (xQRT17 ratio); the solver's residual norm must match ||b - A x||.
template <class T>
void grid_case(I g, ColumnOrdering ord, double cond_bound) {
  SCOPED_TRACE("grid " + std::to_string(g) + " " + name_of(ord));
  const auto a = grid_gradient<T>(g);
  const auto t0 = std::chrono::steady_clock::now();
  const SparseQR<T> qr(a, with_ordering(ord));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(qr.zero_pivots().empty());
  EXPECT_LE(qr.nnz_r(), qr.analysis().nnz_r);
  const I m = a.rows, n = a.cols;
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<double> xt(n), bb(m);
  for (auto& v : xt) v = val(gen);
  const std::vector<double> ax = spmv(a, xt);
  Matrix<T> b(m, 2);
  for (I i = 0; i < m; ++i) {
    b(i, 0) = static_cast<T>(ax[i]);
    b(i, 1) = static_cast<T>(val(gen));
  }
  std::vector<double> res;
  const Matrix<T> x = qr.solve(b.view(), &res);
  double dx = 0, nx = 0;
  for (I i = 0; i < n; ++i) {
    dx += (x(i, 0) - xt[i]) * (x(i, 0) - xt[i]);
    nx += xt[i] * xt[i];
  }
  // b(:, 0) is rounded to T: that perturbation is also bounded by cond * eps.
  const double err = std::sqrt(dx / nx) / (gpuqr::accuracy::eps<T>() * cond_bound);
  EXPECT_LT(gpuqr::testing::track("sparse_grid_consistent", err), 10.0);
  for (I j = 0; j < 2; ++j) {
    std::vector<double> xj(n), bj(m);
    for (I i = 0; i < n; ++i) xj[i] = x(i, j);
    for (I i = 0; i < m; ++i) bj[i] = b(i, j);
    const double opt = sparse_optimality_ratio(a, xj, bj);
    EXPECT_LT(gpuqr::testing::track("sparse_lstsq_optimality", opt), 30.0);
    const std::vector<double> axj = spmv(a, xj);
    double r2 = 0, b2 = 0;
    for (I i = 0; i < m; ++i) {
      r2 += (bj[i] - axj[i]) * (bj[i] - axj[i]);
      b2 += bj[i] * bj[i];
    }
    EXPECT_NEAR(res[j], std::sqrt(r2), 1e2 * cond_bound * gpuqr::accuracy::eps<T>() * std::sqrt(b2));
  }
  std::printf("[ SPARSEQR ] grid %lld (%lld x %lld) %-7s %s: factor %.2f s, %zu fronts, nnz(R) %lld, "
              "consistent err/(eps cond) %.3g\n",
              static_cast<long long>(g), static_cast<long long>(m), static_cast<long long>(n),
              name_of(ord).c_str(), sizeof(T) == 4 ? "float" : "double", secs,
              qr.analysis().fronts.size(), static_cast<long long>(qr.nnz_r()), err);
}

// cond(A) of the grid operator grows like g (A^T A is a Dirichlet Laplacian); 2g bounds it.
TEST(SparseQR, GridGradientDouble) {
  grid_case<double>(40, ColumnOrdering::natural, 80);
  // A 230 x 230 grid: about 106000 x 52900, the sparse issue's ">= 100000 rows" size.
  if (gpuqr::sparse_orderings_available()) grid_case<double>(230, ColumnOrdering::colamd, 460);
}
TEST(SparseQR, GridGradientFloat) {
  grid_case<float>(40, ColumnOrdering::natural, 80);
  if (gpuqr::sparse_orderings_available()) grid_case<float>(120, ColumnOrdering::colamd, 240);
}

TEST(SparseQR, MultipleRightHandSidesMatchSingleSolves) {
  const auto a = random_sparse<double>(300, 120, 2, 11);
  const SparseQR<double> qr(a, any_ordering());
  const Matrix<double> b = random_dense<double>(a.rows, 5, 12);
  std::vector<double> res;
  const Matrix<double> x = qr.solve(b.view(), &res);
  ASSERT_EQ(res.size(), 5u);
  for (I j = 0; j < 5; ++j) {
    std::vector<double> rj;
    const Matrix<double> xj = qr.solve(b.view().col(j), &rj);
    // Blocked and unblocked ormqr may round differently: agreement to a few ulps.
    for (I i = 0; i < a.cols; ++i)
      EXPECT_NEAR(x(i, j), xj(i, 0), 1e-12 * (1 + std::abs(xj(i, 0)))) << "rhs " << j << " row " << i;
    EXPECT_NEAR(res[j], rj[0], 1e-13 * rj[0]);
  }
  check_solve_against_dense(a, qr, 5, 13);
  // Zero right-hand sides: an empty solution.
  const Matrix<double> none = qr.solve(Matrix<double>(a.rows, 0).view());
  EXPECT_EQ(none.rows(), a.cols);
  EXPECT_EQ(none.cols(), 0);
}

/// A with rows and columns shuffled: PA(:, c) where column k of the copy is A's column c[k].
CscMatrix<double> shuffled(const CscMatrix<double>& a, const std::vector<I>& row_perm,
                           const std::vector<I>& col_of) {
  std::vector<I> new_col(a.cols), ii, jj;
  std::vector<double> vv;
  for (I k = 0; k < a.cols; ++k) new_col[col_of[k]] = k;
  for (I j = 0; j < a.cols; ++j)
    for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      ii.push_back(row_perm[a.row_indices[p]]);
      jj.push_back(new_col[j]);
      vv.push_back(a.values[p]);
    }
  return CscMatrix<double>::from_triplets(a.rows, a.cols, ii, jj, vv);
}

TEST(SparseQR, PermutedCopyGivesSameRAndSolution) {
  std::vector<std::pair<std::string, CscMatrix<double>>> cases;
  for (auto& [name, a] : sparse_corpus())
    if (name == "ash219.mtx" || name == "lp_e226_transposed.mtx") cases.emplace_back(name, a);
  cases.emplace_back("random", random_sparse<double>(300, 150, 2, 21));
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& [name, a] : cases) {
    SCOPED_TRACE(name);
    std::mt19937_64 gen(99);
    std::vector<I> rp(a.rows), cp(a.cols);
    std::iota(rp.begin(), rp.end(), I{0});
    std::iota(cp.begin(), cp.end(), I{0});
    std::shuffle(rp.begin(), rp.end(), gen);
    std::shuffle(cp.begin(), cp.end(), gen);
    const CscMatrix<double> s = shuffled(a, rp, cp);
    const SparseQR<double> base(a, with_ordering(orderings().back()));
    // The same A*Q through the copy: its column k0 is A's column cp[k0], so A's ordering q
    // becomes q'[k] = position of q[k] in cp.
    std::vector<I> pos(a.cols);
    for (I k = 0; k < a.cols; ++k) pos[cp[k]] = k;
    SparseQROptions given;
    given.analysis.ordering = ColumnOrdering::given;
    given.analysis.postorder_columns = false;
    for (I k = 0; k < a.cols; ++k)
      given.analysis.column_permutation.push_back(pos[base.column_permutation()[k]]);
    const SparseQR<double> same(s, given);
    EXPECT_EQ(same.nnz_r(), base.nnz_r());
    EXPECT_EQ(same.analysis().nnz_r, base.analysis().nnz_r);
    const Matrix<double> b = random_dense<double>(a.rows, 1, 5);
    Matrix<double> bs(a.rows, 1);
    for (I i = 0; i < a.rows; ++i) bs(rp[i], 0) = b(i, 0);
    const Matrix<double> x = base.solve(b.view());
    const double scale = 1e3 * a.cols * gpuqr::accuracy::eps<double>() / base.rcond_estimate();
    // The same ordering through `given`, and the copy's own ordering.
    const SparseQR<double> fresh(s, with_ordering(orderings().back()));
    for (const SparseQR<double>* other : {&same, &fresh}) {
      const Matrix<double> xs = other->solve(bs.view());
      double dx = 0, nx = 0;
      for (I k = 0; k < a.cols; ++k) {
        dx += (xs(k, 0) - x(cp[k], 0)) * (xs(k, 0) - x(cp[k], 0));
        nx += x(cp[k], 0) * x(cp[k], 0);
      }
      EXPECT_LT(std::sqrt(dx / nx), scale) << (other == &same ? "given ordering" : "own ordering");
    }
  }
}

TEST(SparseQR, RejectsBadInputAndReportsZeroPivots) {
  const auto a = random_sparse<double>(30, 10, 2, 3);
  const SparseQR<double> qr(a, any_ordering());
  EXPECT_THROW(qr.solve(random_dense<double>(29, 1, 1).view()), gpuqr::InvalidArgument);
  EXPECT_THROW(qr.solve(random_dense<double>(31, 2, 1).view()), gpuqr::InvalidArgument);
  Matrix<double> nan = random_dense<double>(30, 1, 1);
  nan(3, 0) = NAN;
  EXPECT_THROW(qr.solve(nan.view()), gpuqr::InvalidArgument);
  // m < n: factors, solve refuses.
  const SparseQR<double> wide(transpose(a), any_ordering());
  EXPECT_EQ(wide.r().rows, 30);
  EXPECT_THROW(wide.solve(random_dense<double>(10, 1, 1).view()), gpuqr::InvalidArgument);
  // NaN in A.
  auto bad = a;
  bad.values[4] = INFINITY;
  EXPECT_THROW((SparseQR<double>{bad, any_ordering()}), gpuqr::InvalidArgument);
  // Column 1 empty, columns 2 and 3 identical: zero pivots. Without rank detection solve
  // names the column; with it (the default) column 1 and one of 2, 3 are dead and solve
  // returns the basic solution.
  const auto def = CscMatrix<double>::from_triplets(4, 4, {0, 1, 2, 1, 2, 3}, {0, 2, 2, 3, 3, 0},
                                                    {1, 2, 3, 2, 3, 1});
  SparseQROptions nat = with_ordering(ColumnOrdering::natural);
  nat.tolerance = -1;
  const SparseQR<double> dq(def, nat);
  ASSERT_FALSE(dq.zero_pivots().empty());
  EXPECT_EQ(dq.zero_pivots().front(), 1);
  EXPECT_EQ(dq.rcond_estimate(), 0.0);
  EXPECT_LT(rtr_ratio(def, dq), 30.0);
  try {
    dq.solve(random_dense<double>(4, 1, 1).view());
    ADD_FAILURE() << "solve with a zero pivot did not throw";
  } catch (const gpuqr::InvalidArgument& e) {
    EXPECT_NE(e.message().find("original column 1"), std::string::npos) << e.message();
  }
  nat.tolerance = -2;
  const SparseQR<double> dr(def, nat);
  EXPECT_EQ(dr.rank(), 2);
  ASSERT_EQ(dr.dead_columns().size(), 2u);
  EXPECT_EQ(dr.dead_columns().front(), 1);
  EXPECT_LT(rtr_ratio(def, dr), 30.0);
  const Matrix<double> x = dr.solve(random_dense<double>(4, 1, 1).view());
  EXPECT_EQ(x(1, 0), 0.0);
  EXPECT_TRUE(x(2, 0) == 0.0 || x(3, 0) == 0.0);
  // Empty matrices.
  const SparseQR<double> empty(CscMatrix<double>::from_triplets(3, 0, {}, {}, {}),
                               any_ordering());
  std::vector<double> res;
  const Matrix<double> b3 = random_dense<double>(3, 1, 2);
  const Matrix<double> x0 = empty.solve(b3.view(), &res);
  EXPECT_EQ(x0.rows(), 0);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_NEAR(res[0], std::sqrt(b3(0, 0) * b3(0, 0) + b3(1, 0) * b3(1, 0) + b3(2, 0) * b3(2, 0)), 1e-15);
}
