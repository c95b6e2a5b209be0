// R's row patterns per front (detail::FrontRowStructure, src/core/sparse_qr_twin.hpp), which
// decide which entries of a factored front are R's and which are the rounding noise of relaxed
// fronts: against the recurrence written here with sets (row j = {j} + the columns of the rows
// of A whose leftmost column is j + the patterns of j's etree children less the child), row by
// row, on the shipped matrices and on grids, with and without relaxed amalgamation.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpuqr/sparse_analysis.hpp"
#include "src/core/sparse_qr_twin.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace gpuqr::testing {
namespace {

using I = std::int64_t;

/// Every row's pattern by the recurrence, with std::set (slow and plain).
std::vector<std::set<I>> patterns_by_sets(const SparseAnalysis& an,
                                          const detail::RowsOfAQ<double>& aq, I m) {
  const I n = an.cols;
  std::vector<std::set<I>> p(static_cast<std::size_t>(n));
  for (I i = 0; i < m; ++i) {
    const I j = an.row_leftmost[i];
    if (j < 0) continue;
    for (I q = aq.ptr[i]; q < aq.ptr[i + 1]; ++q) p[j].insert(aq.cols[q]);
  }
  for (I j = 0; j < n; ++j) {  // children (smaller columns) come first
    p[j].insert(j);
    const I parent = an.etree[j];
    if (parent >= 0)
      for (const I x : p[j])
        if (x != j) p[parent].insert(x);
  }
  return p;
}

/// Front by front, every pivot row's bits against the sets; returns the rows compared.
I compare_patterns(const CscMatrix<double>& a, const SparseAnalysisOptions& options,
                   const std::string& what) {
  SCOPED_TRACE(what);
  const SparseAnalysis an = analyze_sparse_qr(a, options);
  const detail::RowsOfAQ<double> aq = detail::rows_of_aq(a, an.column_permutation);
  const std::vector<std::set<I>> want = patterns_by_sets(an, aq, a.rows);
  I rows = 0;
  for (I f = 0; f < static_cast<I>(an.fronts.size()); ++f) {
    const FrontInfo& fr = an.fronts[f];
    std::vector<std::vector<I>> at_pivot(static_cast<std::size_t>(fr.npiv));
    for (const I i : fr.a_rows) at_pivot[an.row_leftmost[i] - fr.first_pivot].push_back(i);
    detail::FrontRowStructure<double> st;
    st.seed(an, aq, f, at_pivot);
    st.complete();
    const I ncols = static_cast<I>(fr.cols.size());
    for (I i = 0; i < fr.npiv; ++i, ++rows) {
      const I row = fr.first_pivot + i;
      std::set<I> got;
      for (I t = i; t < ncols; ++t)
        if (st.has(i, t)) got.insert(fr.cols[t]);
      EXPECT_EQ(got, want[row]) << "front " << f << ", row " << row;
      EXPECT_EQ(static_cast<I>(got.size()), an.r_row_counts[row]) << "row " << row;
      if (::testing::Test::HasFailure()) return rows;
    }
  }
  return rows;
}

TEST(SparseRowStructure, MatchesTheRecurrenceOnTheCorpus) {
  I rows = 0;
  for (const auto& [name, a] : sparse_corpus()) {
    SparseAnalysisOptions relaxed;  // the defaults: COLAMD where built, relaxed fronts
    rows += compare_patterns(a, relaxed, name + ", default options");
    SparseAnalysisOptions strict;
    strict.relax_columns = 0;
    strict.relax_fill = -1;
    rows += compare_patterns(a, strict, name + ", fundamental supernodes only");
  }
  EXPECT_GT(rows, 1000) << "too little of the corpus was compared";
}

TEST(SparseRowStructure, MatchesTheRecurrenceOnGrids) {
  for (const I g : {6, 13, 20}) {
    const CscMatrix<double> a = sparse::grid_gradient<double>(g);
    SparseAnalysisOptions options;
    options.relax_fill = 0.5;  // much relaxation: many structural zeros inside fronts
    EXPECT_GT(compare_patterns(a, options, "grid " + std::to_string(g) + ", relaxed 0.5"), 0);
    EXPECT_GT(compare_patterns(a, SparseAnalysisOptions{}, "grid " + std::to_string(g)), 0);
  }
}

}  // namespace
}  // namespace gpuqr::testing
