// Tests for the sparse QR symbolic analysis (gpuqr/sparse_analysis.hpp): etree and R counts
// against a brute-force dense row-merge simulation, front invariants on random matrices and on
// the data/matrices corpus, input validation, and (when SuiteSparseQR is found at build time)
// nnz(R) against SuiteSparseQR.
#include <gtest/gtest.h>

#include "tests/support/sparse_corpus.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"

#ifdef GPUQR_TEST_WITH_SPQR
#include <SuiteSparseQR_C.h>
#endif

#ifndef GPUQR_DATA_DIR
#error "GPUQR_DATA_DIR must name the repository's data/ folder"
#endif

namespace {

using gpuqr::ColumnOrdering;
using gpuqr::CscMatrix;
using gpuqr::SparseAnalysis;
using gpuqr::SparseAnalysisOptions;
using I = std::int64_t;
using gpuqr::testing::sparse_corpus;
using gpuqr::testing::structural_rank;

/// R's structure by brute force: a dense boolean row-merge on A*Q. At column k every active
/// row with a nonzero in column k is merged: their union (with k) is R's row k, and the merged
/// row minus column k stays active (one row, as in a full-rank Householder step).
struct BruteR {
  std::vector<I> parent, row_counts, col_counts, leftmost;
  I nnz = 0;
};

BruteR brute_force_r(const CscMatrix<double>& a, const std::vector<I>& q) {
  const I m = a.rows, n = a.cols;
  std::vector<std::vector<char>> active;
  BruteR out;
  out.leftmost.assign(m, -1);
  std::vector<std::vector<char>> dense(m, std::vector<char>(n, 0));
  for (I k = 0; k < n; ++k)
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) dense[a.row_indices[p]][k] = 1;
  for (I i = 0; i < m; ++i) {
    for (I k = 0; k < n; ++k) {
      if (dense[i][k]) {
        out.leftmost[i] = k;
        break;
      }
    }
    active.push_back(dense[i]);
  }
  out.parent.assign(n, -1);
  out.row_counts.assign(n, 0);
  out.col_counts.assign(n, 0);
  for (I k = 0; k < n; ++k) {
    std::vector<char> u(n, 0);
    u[k] = 1;
    std::vector<std::vector<char>> rest;
    for (auto& row : active) {
      if (row[k]) {
        for (I j = 0; j < n; ++j) u[j] |= row[j];
      } else {
        rest.push_back(std::move(row));
      }
    }
    for (I j = 0; j < k; ++j) EXPECT_FALSE(u[j]) << "brute force: column left of k";
    for (I j = k; j < n; ++j) {
      if (u[j]) {
        ++out.row_counts[k];
        ++out.col_counts[j];
        if (j > k && out.parent[k] == -1) out.parent[k] = j;
      }
    }
    out.nnz += out.row_counts[k];
    u[k] = 0;
    if (out.parent[k] != -1) rest.push_back(std::move(u));
    active = std::move(rest);
  }
  return out;
}

bool is_permutation_of_n(const std::vector<I>& p, I n) {
  if (static_cast<I>(p.size()) != n) return false;
  std::vector<char> seen(n, 0);
  for (I x : p) {
    if (x < 0 || x >= n || seen[x]) return false;
    seen[x] = 1;
  }
  return true;
}

/// Structural invariants of an analysis; `fundamental`: no relaxation was asked for, so the
/// fronts' R blocks hold exactly R's structural entries.
void check_analysis(const CscMatrix<double>& a, const SparseAnalysis& an, bool fundamental) {
  const I m = a.rows, n = a.cols;
  ASSERT_EQ(an.rows, m);
  ASSERT_EQ(an.cols, n);
  ASSERT_TRUE(is_permutation_of_n(an.column_permutation, n));
  ASSERT_TRUE(is_permutation_of_n(an.postorder, n));
  ASSERT_EQ(static_cast<I>(an.etree.size()), n);
  std::vector<I> when(n);
  for (I k = 0; k < n; ++k) when[an.postorder[k]] = k;
  for (I j = 0; j < n; ++j) {
    if (an.etree[j] != -1) {
      EXPECT_GT(an.etree[j], j);
      EXPECT_LT(when[j], when[an.etree[j]]) << "postorder visits a parent before its child";
    }
  }
  EXPECT_EQ(std::accumulate(an.r_row_counts.begin(), an.r_row_counts.end(), I{0}), an.nnz_r);
  EXPECT_EQ(std::accumulate(an.r_column_counts.begin(), an.r_column_counts.end(), I{0}),
            an.nnz_r);

  const I nf = static_cast<I>(an.fronts.size());
  I next_pivot = 0;
  std::vector<int> row_seen(m, 0);
  double flops = 0, stored = 0;
  for (I f = 0; f < nf; ++f) {
    const auto& fr = an.fronts[f];
    EXPECT_EQ(fr.first_pivot, next_pivot);
    ASSERT_GE(fr.npiv, 1);
    next_pivot += fr.npiv;
    ASSERT_GE(static_cast<I>(fr.cols.size()), fr.npiv);
    for (I t = 0; t < fr.npiv; ++t) EXPECT_EQ(fr.cols[t], fr.first_pivot + t);
    for (std::size_t t = 1; t < fr.cols.size(); ++t) EXPECT_LT(fr.cols[t - 1], fr.cols[t]);
    if (!fr.cols.empty()) EXPECT_LT(fr.cols.back(), n);
    if (fr.parent != -1) {
      EXPECT_LT(f, fr.parent) << "fronts not in postorder";
      const auto& sib = an.fronts[fr.parent].children;
      EXPECT_EQ(std::count(sib.begin(), sib.end(), f), 1);
    } else {
      EXPECT_EQ(fr.cb_cols, 0) << "a root front with a contribution block";
    }
    I rows = static_cast<I>(fr.a_rows.size());
    ASSERT_EQ(fr.child_col_map.size(), fr.children.size());
    for (std::size_t c = 0; c < fr.children.size(); ++c) {
      const auto& ch = an.fronts[fr.children[c]];
      EXPECT_EQ(ch.parent, f);
      rows += ch.cb_rows;
      const auto& map = fr.child_col_map[c];
      ASSERT_EQ(static_cast<I>(map.size()), ch.cb_cols);
      for (std::size_t t = 0; t < map.size(); ++t) {
        ASSERT_GE(map[t], 0);
        ASSERT_LT(map[t], static_cast<I>(fr.cols.size()));
        if (t > 0) EXPECT_LT(map[t - 1], map[t]);
        EXPECT_EQ(fr.cols[map[t]], ch.cols[ch.npiv + static_cast<I>(t)]);
      }
    }
    EXPECT_EQ(fr.rows, rows);
    const I ncols = static_cast<I>(fr.cols.size());
    EXPECT_EQ(fr.cb_cols, ncols - fr.npiv);
    EXPECT_EQ(fr.cb_rows, std::max<I>(0, std::min(fr.rows - fr.npiv, fr.cb_cols)));
    for (I i : fr.a_rows) {
      ASSERT_GE(i, 0);
      ASSERT_LT(i, m);
      ++row_seen[i];
      EXPECT_GE(an.row_leftmost[i], fr.first_pivot);
      EXPECT_LT(an.row_leftmost[i], fr.first_pivot + fr.npiv);
    }
    EXPECT_GE(fr.flops, 0);
    if (fr.rows > 0 && ncols > 0) EXPECT_GT(fr.flops, 0);
    flops += fr.flops;
    stored += static_cast<double>(fr.npiv) * ncols - fr.npiv * (fr.npiv - 1.0) / 2.0;
  }
  EXPECT_EQ(next_pivot, n) << "pivots of the fronts do not cover the columns";
  for (I i = 0; i < m; ++i) {
    const bool empty = an.row_leftmost[i] == -1;
    EXPECT_EQ(row_seen[i], empty ? 0 : 1) << "row " << i;
  }
  EXPECT_NEAR(flops, an.flops, 1e-9 * (1 + flops));
  EXPECT_GE(stored, static_cast<double>(an.nnz_r));
  if (fundamental) EXPECT_EQ(stored, static_cast<double>(an.nnz_r));
  if (flops > 0) {
    EXPECT_GT(an.memory_bytes, 0);
    EXPECT_GT(an.intensity, 0);
  }
}

void check_against_brute_force(const CscMatrix<double>& a, const SparseAnalysis& an) {
  const BruteR br = brute_force_r(a, an.column_permutation);
  EXPECT_EQ(an.etree, br.parent);
  EXPECT_EQ(an.r_row_counts, br.row_counts);
  EXPECT_EQ(an.r_column_counts, br.col_counts);
  EXPECT_EQ(an.nnz_r, br.nnz);
  EXPECT_EQ(an.row_leftmost, br.leftmost);
}

CscMatrix<double> random_sparse(I m, I n, double density, std::mt19937_64& rng,
                                bool duplicates) {
  std::vector<I> ri, ci;
  std::vector<double> v;
  std::uniform_real_distribution<double> u(0, 1);
  // Leave roughly one row and one column in seven empty.
  const I empty_row = m > 2 ? static_cast<I>(rng() % m) : -1;
  const I empty_col = n > 2 ? static_cast<I>(rng() % n) : -1;
  for (I j = 0; j < n; ++j) {
    for (I i = 0; i < m; ++i) {
      if (i == empty_row || j == empty_col || u(rng) >= density) continue;
      ri.push_back(i);
      ci.push_back(j);
      v.push_back(u(rng) + 0.5);
      if (duplicates && u(rng) < 0.3) {
        ri.push_back(i);
        ci.push_back(j);
        v.push_back(1.0);
      }
    }
  }
  return CscMatrix<double>::from_triplets(m, n, ri, ci, v);
}

std::vector<ColumnOrdering> orderings_to_test() {
  std::vector<ColumnOrdering> out{ColumnOrdering::natural, ColumnOrdering::given};
  if (gpuqr::sparse_orderings_available()) {
    out.push_back(ColumnOrdering::colamd);
    out.push_back(ColumnOrdering::amd);
  }
  return out;
}

TEST(SparseAnalysis, RandomMatchesBruteForceRowMerge) {
  std::mt19937_64 rng(20240611);
  const std::vector<std::pair<I, I>> shapes{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 6}, {6, 1},
                                             {10, 6}, {6, 10}, {25, 25}, {40, 18}, {18, 40},
                                             {60, 45}};
  int cases = 0;
  for (const auto& [m, n] : shapes) {
    for (double density : {0.05, 0.15, 0.4}) {
      const auto a = random_sparse(m, n, density, rng, /*duplicates=*/density > 0.1);
      for (ColumnOrdering ord : orderings_to_test()) {
        for (bool postorder : {true, false}) {
          for (bool relax : {false, true}) {
            SCOPED_TRACE(testing::Message() << m << "x" << n << " density " << density
                                            << " ordering " << static_cast<int>(ord)
                                            << " postorder " << postorder << " relax " << relax);
            SparseAnalysisOptions opt;
            opt.ordering = ord;
            opt.postorder_columns = postorder;
            if (ord == ColumnOrdering::given) {
              opt.column_permutation.resize(n);
              std::iota(opt.column_permutation.begin(), opt.column_permutation.end(), I{0});
              std::shuffle(opt.column_permutation.begin(), opt.column_permutation.end(), rng);
            }
            if (!relax) {
              opt.relax_columns = 0;
              opt.relax_fill = -1;
            }
            const SparseAnalysis an = gpuqr::analyze_sparse_qr(a, opt);
            check_analysis(a, an, !relax);
            check_against_brute_force(a, an);
            if (!postorder && ord == ColumnOrdering::given) {
              EXPECT_EQ(an.column_permutation, opt.column_permutation);
            }
            if (postorder) {
              for (I k = 0; k < n; ++k) EXPECT_EQ(an.postorder[k], k);
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 100);
}

TEST(SparseAnalysis, SmallKnownStructure) {
  // A = [x x . ; . x x ; x . x ] (natural): A^T A is full, so R is full upper triangular.
  const auto a = CscMatrix<double>::from_triplets(3, 3, {0, 0, 1, 1, 2, 2}, {0, 1, 1, 2, 0, 2},
                                                  {1, 1, 1, 1, 1, 1});
  SparseAnalysisOptions opt;
  opt.ordering = ColumnOrdering::natural;
  opt.relax_columns = 0;
  opt.relax_fill = -1;
  const auto an = gpuqr::analyze_sparse_qr(a, opt);
  EXPECT_EQ(an.etree, (std::vector<I>{1, 2, -1}));
  EXPECT_EQ(an.r_row_counts, (std::vector<I>{3, 2, 1}));
  EXPECT_EQ(an.r_column_counts, (std::vector<I>{1, 2, 3}));
  EXPECT_EQ(an.nnz_r, 6);
  ASSERT_EQ(an.fronts.size(), 1u);  // one fundamental supernode 0..2
  EXPECT_EQ(an.fronts[0].npiv, 3);
  EXPECT_EQ(an.fronts[0].rows, 3);
  EXPECT_EQ(an.fronts[0].a_rows, (std::vector<I>{0, 1, 2}));
  EXPECT_EQ(an.fronts[0].cb_cols, 0);
  // Staircase count: rows 0 and 2 start in column 0, row 1 in column 1, so stair = {2, 3, 3};
  // reflector k costs 4hw + 3h + w + 5 (h = stair[k] - k, w = 2 - k): 29 + 20 + 8 = 57. A dense
  // 3x3 front (stair = {3, 3, 3}) would give 40 + 20 + 8 = 68, LAWN 41's geqrf count
  // (mults 3*(3*(-0.5-1+3)+6+23/6) = 43, adds 3*(3*(1.5)+3+5/6) = 25).
  EXPECT_NEAR(an.fronts[0].flops, 57.0, 1e-9);
  EXPECT_NEAR(an.memory_bytes, 9 * sizeof(double), 1e-9);

  // A diagonal matrix: n roots, n one-column fronts, R = diagonal.
  const auto d = CscMatrix<double>::from_triplets(4, 4, {0, 1, 2, 3}, {0, 1, 2, 3}, {1, 2, 3, 4});
  const auto ad = gpuqr::analyze_sparse_qr(d, opt);
  EXPECT_EQ(ad.etree, (std::vector<I>{-1, -1, -1, -1}));
  EXPECT_EQ(ad.nnz_r, 4);
  EXPECT_EQ(ad.fronts.size(), 4u);
}

TEST(SparseAnalysis, RelaxedAmalgamationMergesAndCounts) {
  // A bidiagonal 30x30 matrix: fundamental supernodes are single columns (R row j = {j, j+1},
  // R row j+1 has the same size), so relax_columns bounds the fronts' pivot counts.
  std::vector<I> ri, ci;
  std::vector<double> v;
  const I n = 30;
  for (I j = 0; j < n; ++j) {
    ri.push_back(j), ci.push_back(j), v.push_back(2);
    if (j + 1 < n) ri.push_back(j), ci.push_back(j + 1), v.push_back(1);
  }
  const auto a = CscMatrix<double>::from_triplets(n, n, ri, ci, v);
  SparseAnalysisOptions opt;
  opt.ordering = ColumnOrdering::natural;
  opt.relax_columns = 0;
  opt.relax_fill = -1;
  const auto fund = gpuqr::analyze_sparse_qr(a, opt);
  EXPECT_EQ(fund.nnz_r, 2 * n - 1);
  // The chain has |R row j| = 2 = |R row j+1| except the last: supernodes {0},...,{28,29}.
  EXPECT_EQ(static_cast<I>(fund.fronts.size()), n - 1);
  check_analysis(a, fund, true);
  opt.relax_columns = 8;
  const auto relaxed = gpuqr::analyze_sparse_qr(a, opt);
  check_analysis(a, relaxed, false);
  EXPECT_EQ(relaxed.nnz_r, fund.nnz_r);  // R's structure does not depend on amalgamation
  for (const auto& f : relaxed.fronts) EXPECT_LE(f.npiv, 8);
  EXPECT_EQ(relaxed.fronts.size(), 4u);  // 30 columns in fronts of 8, 8, 8, 6 (from the top)
  opt.relax_columns = 0;
  opt.relax_fill = 1e9;  // always merge: a single front
  const auto one = gpuqr::analyze_sparse_qr(a, opt);
  EXPECT_EQ(one.fronts.size(), 1u);
  EXPECT_EQ(one.fronts[0].npiv, n);
}

TEST(SparseAnalysis, RejectsBadInput) {
  const auto a = CscMatrix<double>::from_triplets(3, 3, {0, 1, 2}, {0, 1, 2}, {1, 1, 1});
  SparseAnalysisOptions opt;
  opt.ordering = ColumnOrdering::given;
  opt.column_permutation = {0, 1};
  EXPECT_THROW(gpuqr::analyze_sparse_qr(a, opt), gpuqr::InvalidArgument);
  opt.column_permutation = {0, 1, 1};
  EXPECT_THROW(gpuqr::analyze_sparse_qr(a, opt), gpuqr::InvalidArgument);
  opt.column_permutation = {0, 1, 3};
  EXPECT_THROW(gpuqr::analyze_sparse_qr(a, opt), gpuqr::InvalidArgument);
  opt.column_permutation = {2, 0, 1};
  EXPECT_NO_THROW(gpuqr::analyze_sparse_qr(a, opt));
  opt.relax_columns = -1;
  EXPECT_THROW(gpuqr::analyze_sparse_qr(a, opt), gpuqr::InvalidArgument);
  auto bad = a;
  bad.row_indices[1] = 7;
  EXPECT_THROW(gpuqr::analyze_sparse_qr(bad, SparseAnalysisOptions{}), gpuqr::InvalidArgument);
  if (!gpuqr::sparse_orderings_available()) {
    SparseAnalysisOptions o;
    o.ordering = ColumnOrdering::colamd;
    EXPECT_THROW(gpuqr::analyze_sparse_qr(a, o), gpuqr::NotCompiled);
    o.ordering = ColumnOrdering::amd;
    EXPECT_THROW(gpuqr::analyze_sparse_qr(a, o), gpuqr::NotCompiled);
  }
}


TEST(SparseAnalysis, DataMatricesAnalyze) {
  const auto mats = sparse_corpus();
  ASSERT_GE(mats.size(), 20u);
  for (const auto& [name, a] : mats) {
    for (ColumnOrdering ord : orderings_to_test()) {
      if (ord == ColumnOrdering::given) continue;
      for (bool relax : {false, true}) {
        SCOPED_TRACE(name + " ordering " + std::to_string(static_cast<int>(ord)) +
                     (relax ? " relaxed" : " fundamental"));
        SparseAnalysisOptions opt;
        opt.ordering = ord;
        if (!relax) {
          opt.relax_columns = 0;
          opt.relax_fill = -1;
        }
        const auto an = gpuqr::analyze_sparse_qr(a, opt);
        check_analysis(a, an, !relax);
        if (a.rows * a.cols <= 300 * 300) check_against_brute_force(a, an);
      }
    }
  }
}


TEST(SparseAnalysis, StructuralRankHelper) {
  const auto full = CscMatrix<double>::from_triplets(3, 2, {0, 1, 2}, {0, 0, 1}, {1, 1, 1});
  EXPECT_EQ(structural_rank(full), 2);
  // Two columns that only touch row 0: rank 1 (+ an empty column).
  const auto def = CscMatrix<double>::from_triplets(3, 3, {0, 0}, {0, 1}, {1, 1});
  EXPECT_EQ(structural_rank(def), 1);
  // Needs an augmenting path: col 0 -> rows {0,1}, col 1 -> row {0}.
  const auto aug = CscMatrix<double>::from_triplets(2, 2, {0, 1, 0}, {0, 0, 1}, {1, 1, 1});
  EXPECT_EQ(structural_rank(aug), 2);
}

#ifdef GPUQR_TEST_WITH_SPQR
/// nnz(R) of SuiteSparseQR's factorization (no rank detection), or -1 on failure.
I spqr_nnz_r(const CscMatrix<double>& a, int ordering) {
  cholmod_common cc;
  cholmod_l_start(&cc);
  cholmod_sparse* A = cholmod_l_allocate_sparse(a.rows, a.cols, a.nnz(), 1, 1, 0, CHOLMOD_REAL, &cc);
  auto* ap = static_cast<SuiteSparse_long*>(A->p);
  auto* ai = static_cast<SuiteSparse_long*>(A->i);
  auto* ax = static_cast<double*>(A->x);
  for (I j = 0; j <= a.cols; ++j) ap[j] = a.col_ptr[j];
  // Random values (the structure is what matters) so that no cancellation drops entries.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (I p = 0; p < a.nnz(); ++p) ai[p] = a.row_indices[p], ax[p] = u(rng);
  cholmod_sparse* R = nullptr;
  SuiteSparse_long* E = nullptr;
  // tol = SPQR_NO_TOL (-1): no rank detection (-2 would pick SPQR's default tolerance).
  const SuiteSparse_long rank = SuiteSparseQR_C(ordering, SPQR_NO_TOL, a.rows, 0, A, nullptr,
                                                nullptr, nullptr, nullptr, &R, &E, nullptr,
                                                nullptr, nullptr, &cc);
  I nnz = -1;
  if (rank >= 0 && R) nnz = static_cast<I>(cholmod_l_nnz(R, &cc));
  if (R) cholmod_l_free_sparse(&R, &cc);
  if (E) cholmod_l_free(a.cols, sizeof(SuiteSparse_long), E, &cc);
  cholmod_l_free_sparse(&A, &cc);
  cholmod_l_finish(&cc);
  return nnz;
}
#endif

// nnz(R) against SuiteSparseQR (tol = SPQR_NO_TOL, so no column is dropped as small), on the
// corpus matrices of full structural column rank (m >= n, sprank = n): there R's structure is
// that of chol(A^T A) (Coleman, Edenbrandt, Gilbert) up to what SPQR's own staircase removes,
// and SPQR's R also holds the explicit zeros of its relaxed fronts; so the counts agree to
// 10% (most are equal). On structurally rank-deficient matrices (the Pajek graphs) SPQR's
// fronts shed dead columns and its R is far smaller than the full-rank structural count.
// Natural order: gpuqr natural vs SPQR_ORDERING_FIXED (the same columns; gpuqr's postorder
// does not change fill), where gpuqr's exact count can only be <= SPQR's.
TEST(SparseAnalysis, NnzRMatchesSuiteSparseQR) {
#ifndef GPUQR_TEST_WITH_SPQR
  // SuiteSparseQR is an optional, test-only reference: scripts/setup.sh installs it (so CI
  // runs this comparison), but the GPU machine's image has no SuiteSparse, and there the
  // analysis is still checked against the brute force above.
  GTEST_SKIP() << "SuiteSparseQR (libspqr, libcholmod) was not found when the tests were built";
#else
  int compared = 0;
  for (const auto& [name, a] : sparse_corpus()) {
    if (a.rows < a.cols || a.cols == 0) continue;  // SPQR's R is min(m,n) x n
    if (structural_rank(a) < a.cols) {
      std::printf("[ SPQR     ] %-24s skipped: structurally rank deficient\n", name.c_str());
      continue;
    }
    for (bool colamd : {false, true}) {
      if (colamd && !gpuqr::sparse_orderings_available()) continue;
      SparseAnalysisOptions opt;
      opt.ordering = colamd ? ColumnOrdering::colamd : ColumnOrdering::natural;
      const auto an = gpuqr::analyze_sparse_qr(a, opt);
      const I ref = spqr_nnz_r(a, colamd ? SPQR_ORDERING_COLAMD : SPQR_ORDERING_FIXED);
      ASSERT_GE(ref, 0) << name;
      std::printf("[ SPQR     ] %-24s %s nnz(R) gpuqr %lld spqr %lld\n", name.c_str(),
                  colamd ? "colamd " : "natural", static_cast<long long>(an.nnz_r),
                  static_cast<long long>(ref));
      EXPECT_NEAR(static_cast<double>(an.nnz_r), static_cast<double>(ref), 0.1 * ref) << name;
      if (!colamd) EXPECT_LE(an.nnz_r, ref) << name;
      ++compared;
    }
  }
  EXPECT_GT(compared, 5);
#endif
}

}  // namespace
