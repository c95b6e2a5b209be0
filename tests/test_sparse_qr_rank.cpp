// Rank detection of the CPU sparse QR (gpuqr/sparse_qr.hpp): the corpus matrices' numerical
// rank and basic solutions against dgelsd, an exactly dependent column, the tolerance off.
// (The rank against SuiteSparseQR's is in test_sparse_qr_spqr.cpp.)
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;
using gpuqr::testing::sparse_corpus;

}  // namespace

// Rank detection on the corpus (each matrix and, when wide, its transpose): for tall
// rank-deficient problems the basic solution's optimality and residual against dgelsd.
TEST(SparseQR, RankDetectionOnDataMatrices) {
  int deficient = 0;
  for (const auto& [name, a0] : sparse_corpus()) {
    for (int t = 0; t < 2; ++t) {
      const CscMatrix<double> a = t == 0 ? a0 : transpose(a0);
      if (t == 1 && a0.rows >= a0.cols) continue;
      if (a.cols == 0) continue;
      SCOPED_TRACE(name + (t ? " transposed" : ""));
      const SparseQR<double> qr(a, with_ordering(orderings().back()));
      EXPECT_EQ(qr.rank() + static_cast<I>(qr.dead_columns().size()), a.cols);
      EXPECT_LE(qr.rank(), std::min(a.rows, a.cols));
      EXPECT_LT(gpuqr::testing::track("sparse_rtr", rtr_ratio(a, qr)), 30.0);
      I drank = -1;
      double opt = 0, rd = 0;
      if (a.rows >= a.cols && qr.rank() < a.cols) {
        opt = check_basic_solution(a, qr, &drank, &rd);
        ++deficient;
      }
      std::printf("[ RANK     ] %-26s %4lld x %-4lld tol %.2e rank %4lld dgelsd %4lld "
                  "opt %.3g res diff %.2g\n",
                  (name + (t ? "^T" : "")).c_str(), static_cast<long long>(a.rows),
                  static_cast<long long>(a.cols), qr.tolerance(), static_cast<long long>(qr.rank()),
                  static_cast<long long>(drank), opt, rd);
    }
  }
  EXPECT_GE(deficient, 1);
}

// A tall matrix with an exactly dependent column (column 5 = column 2 - 3 column 7) has rank
// n - 1, in double and float; a full-rank one is unchanged with the tolerance off.
TEST(SparseQR, DependentColumnGivesRankNMinusOne) {
  const auto base = random_sparse<double>(200, 60, 3, 77);
  std::vector<I> ii, jj;
  std::vector<double> vv;
  for (I j = 0; j < base.cols; ++j) {
    const I src = j == 5 ? -1 : j;
    if (src >= 0)
      for (I p = base.col_ptr[j]; p < base.col_ptr[j + 1]; ++p)
        ii.push_back(base.row_indices[p]), jj.push_back(j), vv.push_back(base.values[p]);
  }
  for (const auto [c, f] : {std::pair<I, double>{2, 1.0}, {7, -3.0}})
    for (I p = base.col_ptr[c]; p < base.col_ptr[c + 1]; ++p)
      ii.push_back(base.row_indices[p]), jj.push_back(5), vv.push_back(f * base.values[p]);
  const auto a = CscMatrix<double>::from_triplets(base.rows, base.cols, ii, jj, vv);
  for (const ColumnOrdering ord : orderings()) {
    SCOPED_TRACE(name_of(ord));
    const SparseQR<double> qr(a, with_ordering(ord));
    EXPECT_EQ(qr.rank(), a.cols - 1);
    ASSERT_EQ(qr.dead_columns().size(), 1u);
    const I dead = qr.dead_columns()[0];
    EXPECT_TRUE(dead == 2 || dead == 5 || dead == 7) << dead;
    EXPECT_LT(rtr_ratio(a, qr), 30.0);
    I drank = 0;
    double rd = 0;
    check_basic_solution(a, qr, &drank, &rd);
    EXPECT_EQ(drank, a.cols - 1);
    const SparseQR<float> qf(a.cast<float>(), with_ordering(ord));
    EXPECT_EQ(qf.rank(), a.cols - 1);
    // Tolerance none: exact arithmetic would give a zero pivot, rounding does not.
    SparseQROptions none = with_ordering(ord);
    none.tolerance = -1;
    EXPECT_LT(SparseQR<double>(a, none).tolerance(), 0.0);
    // Full rank: the same solution with and without rank detection.
    const SparseQR<double> f1(base, with_ordering(ord)), f2(base, none);
    EXPECT_EQ(f1.rank(), base.cols);
    EXPECT_EQ(f2.rank(), base.cols);
    const Matrix<double> b = random_dense<double>(base.rows, 1, 3);
    const Matrix<double> x1 = f1.solve(b.view()), x2 = f2.solve(b.view());
    for (I i = 0; i < base.cols; ++i) EXPECT_NEAR(x1(i, 0), x2(i, 0), 1e-10 * (1 + std::abs(x2(i, 0))));
  }
}

