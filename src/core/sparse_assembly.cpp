// Flat assembly maps of the sparse multifrontal QR (S-Assembly tuples, Rimap/Rjmap).
#include "src/core/sparse_assembly.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

using I = std::int64_t;

namespace {

/// The rows of A*Q as (permuted column, CSC value index) pairs, ascending columns.
struct RowsWithIndex {
  std::vector<I> ptr, cols, index;
};

RowsWithIndex rows_with_index(const CscPattern& a, const std::vector<I>& q) {
  RowsWithIndex out;
  const I m = a.rows, n = a.cols, nnz = a.col_ptr[a.cols];
  out.ptr.assign(m + 1, 0);
  out.cols.resize(nnz);
  out.index.resize(nnz);
  for (I p = 0; p < nnz; ++p) ++out.ptr[a.row_indices[p] + 1];
  for (I i = 0; i < m; ++i) out.ptr[i + 1] += out.ptr[i];
  std::vector<I> fill(out.ptr.begin(), out.ptr.end() - 1);
  for (I k = 0; k < n; ++k) {
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) {
      const I at = fill[a.row_indices[p]]++;
      out.cols[at] = k;
      out.index[at] = p;
    }
  }
  return out;
}

}  // namespace

void place_front_rows(const SparseAnalysis& an, const SparseAssemblyMaps& maps, I f,
                      const std::vector<I>& child_cb_rows, std::vector<I>& row_source,
                      std::vector<I>& row_key) {
  const FrontInfo& fr = an.fronts[f];
  const I na = static_cast<I>(fr.a_rows.size());
  row_key.assign(maps.row_key.begin() + maps.stack_ptr[f],
                 maps.row_key.begin() + maps.stack_ptr[f] + na);
  for (std::size_t c = 0; c < fr.children.size(); ++c) {
    const std::vector<I>& map = fr.child_col_map[c];
    if (child_cb_rows[c] > static_cast<I>(map.size()))
      GPUQR_THROW(Error, "place_front_rows: a child passes more rows than its CB columns");
    // CB row r is upper trapezoidal: its leftmost column is CB column r.
    row_key.insert(row_key.end(), map.begin(), map.begin() + child_cb_rows[c]);
  }
  row_source.resize(row_key.size());
  std::iota(row_source.begin(), row_source.end(), I{0});
  std::stable_sort(row_source.begin(), row_source.end(),
                   [&row_key](I x, I y) { return row_key[x] < row_key[y]; });
}

SparseAssemblyMaps build_sparse_assembly_maps(const SparseAnalysis& an, const CscPattern& a) {
  GPUQR_CHECK_ARG(a.rows == an.rows && a.cols == an.cols,
                  "build_sparse_assembly_maps: the pattern's shape differs from the analysis'");
  const I nf = static_cast<I>(an.fronts.size());
  const RowsWithIndex aq = rows_with_index(a, an.column_permutation);
  SparseAssemblyMaps m;
  // Exact sizes first, so that every array is allocated once.
  m.stack_ptr.assign(nf + 1, 0);
  m.s_ptr.assign(nf + 1, 0);
  m.pack_row_ptr.assign(nf + 1, 0);
  m.pack_col_ptr.assign(nf + 1, 0);
  m.pack_first_stacked.assign(nf, -1);
  for (I f = 0; f < nf; ++f) {
    const FrontInfo& fr = an.fronts[f];
    m.stack_ptr[f + 1] = m.stack_ptr[f] + fr.rows;
    I tuples = 0;
    for (const I i : fr.a_rows) tuples += aq.ptr[i + 1] - aq.ptr[i];
    m.s_ptr[f + 1] = m.s_ptr[f] + tuples;
    m.pack_row_ptr[f + 1] = m.pack_row_ptr[f] + (fr.parent >= 0 ? fr.cb_rows : 0);
    m.pack_col_ptr[f + 1] = m.pack_col_ptr[f] + (fr.parent >= 0 ? fr.cb_cols : 0);
  }
  m.row_key.resize(m.stack_ptr[nf]);
  m.row_source.resize(m.stack_ptr[nf]);
  m.s_row.resize(m.s_ptr[nf]);
  m.s_col.resize(m.s_ptr[nf]);
  m.s_value.resize(m.s_ptr[nf]);
  m.pack_row.resize(m.pack_row_ptr[nf]);
  m.pack_col.resize(m.pack_col_ptr[nf]);

  std::vector<I> pos(an.cols, -1), source, key, row_at;
  for (I f = 0; f < nf; ++f) {
    const FrontInfo& fr = an.fronts[f];
    const I na = static_cast<I>(fr.a_rows.size()), ncols = static_cast<I>(fr.cols.size());
    // Keys of the A rows: their leftmost column is one of this front's pivots.
    for (I s = 0; s < na; ++s)
      m.row_key[m.stack_ptr[f] + s] = an.row_leftmost[fr.a_rows[s]] - fr.first_pivot;
    std::vector<I> counts;
    for (const I c : fr.children) counts.push_back(an.fronts[c].cb_rows);
    place_front_rows(an, m, f, counts, source, key);
    if (static_cast<I>(source.size()) != fr.rows)
      GPUQR_THROW(Error, "build_sparse_assembly_maps: front rows disagree with the analysis");
    std::copy(key.begin(), key.end(), m.row_key.begin() + m.stack_ptr[f]);
    std::copy(source.begin(), source.end(), m.row_source.begin() + m.stack_ptr[f]);
    row_at.resize(source.size());
    for (I r = 0; r < fr.rows; ++r) row_at[source[r]] = r;

    // S-Assembly tuples, A rows in a_rows order, each row's columns ascending.
    for (I t = 0; t < ncols; ++t) pos[fr.cols[t]] = t;
    I at = m.s_ptr[f];
    for (I s = 0; s < na; ++s) {
      const I i = fr.a_rows[s];
      for (I p = aq.ptr[i]; p < aq.ptr[i + 1]; ++p, ++at) {
        const I where = pos[aq.cols[p]];
        if (where < 0)
          GPUQR_THROW(Error, "build_sparse_assembly_maps: row " + std::to_string(i) +
                                 " of A leaves the columns of front " + std::to_string(f));
        m.s_row[at] = row_at[s];
        m.s_col[at] = where;
        m.s_value[at] = aq.index[p];
      }
    }
    for (I t = 0; t < ncols; ++t) pos[fr.cols[t]] = -1;

    // Rimap / Rjmap of each child into this front.
    I stacked = na;
    for (std::size_t c = 0; c < fr.children.size(); ++c) {
      const I ci = fr.children[c];
      const FrontInfo& child = an.fronts[ci];
      m.pack_first_stacked[ci] = stacked;
      for (I r = 0; r < child.cb_rows; ++r) m.pack_row[m.pack_row_ptr[ci] + r] = row_at[stacked + r];
      std::copy(fr.child_col_map[c].begin(), fr.child_col_map[c].end(),
                m.pack_col.begin() + m.pack_col_ptr[ci]);
      stacked += child.cb_rows;
    }
  }
  return m;
}

std::int64_t SparseAssemblyMaps::front_bytes(const SparseAnalysis& an, I f) const {
  constexpr I w = static_cast<I>(sizeof(I));
  I words = 3 * (s_ptr[f + 1] - s_ptr[f]) + 2 * (stack_ptr[f + 1] - stack_ptr[f]);
  for (const I c : an.fronts[f].children)
    words += (pack_row_ptr[c + 1] - pack_row_ptr[c]) + (pack_col_ptr[c + 1] - pack_col_ptr[c]);
  return words * w;
}

std::int64_t SparseAssemblyMaps::total_bytes() const noexcept {
  const std::size_t words = stack_ptr.size() + row_key.size() + row_source.size() + s_ptr.size() +
                            s_row.size() + s_col.size() + s_value.size() + pack_row_ptr.size() +
                            pack_row.size() + pack_col_ptr.size() + pack_col.size() +
                            pack_first_stacked.size();
  return static_cast<std::int64_t>(words * sizeof(I));
}

}  // namespace gpuqr::detail
