// Flat assembly maps of the sparse multifrontal QR, laid out for a GPU (Yeralan, Davis et al.,
// section 3.3.1): built once from the symbolic analysis and A's pattern, sized exactly, and
// reusable for every matrix with the same pattern (the tuples index A's values, they do not
// copy them). Plain arrays of int64 only: a device copy is one memcpy per array.
//
// Rows of a front are "stacked" first: its A rows (FrontInfo::a_rows order), then each
// child's contribution-block rows (children in FrontInfo::children order). The front's actual
// row order is the staircase order: the stacked rows stably sorted by their leftmost front
// column (their key). The maps hold that placement for the analysis' row counts; with rank
// detection a child with dead columns passes more CB rows than the analysis counted, and the
// parent's rows are then re-placed with place_front_rows (the keys of the extra rows are known:
// CB row r of a child starts at its CB column r).
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/sparse_analysis.hpp"
#include "src/core/sparse_ordering.hpp"

namespace gpuqr::detail {

/// The assembly maps of every front of an analysis. f indexes SparseAnalysis::fronts.
struct SparseAssemblyMaps {
  // ---- row placement (analysis row counts) ----
  /// nf + 1 offsets: front f's stacked rows are [stack_ptr[f], stack_ptr[f + 1]) of row_key
  /// and row_source (FrontInfo::rows of them).
  std::vector<std::int64_t> stack_ptr;
  /// Per stacked row: its leftmost column in the front (the staircase key).
  std::vector<std::int64_t> row_key;
  /// Per front row (same offsets): the stacked row placed there (staircase order).
  std::vector<std::int64_t> row_source;

  // ---- S-Assembly: packed (row, column, value) tuples, grouped by front ----
  /// nf + 1 offsets into s_row / s_col / s_value.
  std::vector<std::int64_t> s_ptr;
  /// Front row of the tuple (analysis placement); row_source[stack_ptr[f] + s_row] is the A
  /// row's slot in FrontInfo::a_rows.
  std::vector<std::int64_t> s_row;
  /// Column in the front (index into FrontInfo::cols).
  std::vector<std::int64_t> s_col;
  /// Index into A's CSC values (CscMatrix::values).
  std::vector<std::int64_t> s_value;

  // ---- Pack-Assembly: per child front c (indexed by the child), Rimap and Rjmap ----
  /// nf + 1 offsets into pack_row: child c's cb_rows destination rows in its parent.
  std::vector<std::int64_t> pack_row_ptr;
  /// Front row in the parent of each CB row (analysis placement).
  std::vector<std::int64_t> pack_row;
  /// nf + 1 offsets into pack_col: child c's cb_cols destination columns.
  std::vector<std::int64_t> pack_col_ptr;
  /// Column in the parent of each CB column (strictly increasing per child).
  std::vector<std::int64_t> pack_col;
  /// Per front: its first stacked row in its parent (-1 for a root).
  std::vector<std::int64_t> pack_first_stacked;

  std::int64_t fronts() const noexcept { return static_cast<std::int64_t>(s_ptr.size()) - 1; }
  /// Bytes of the maps of front f as a GPU stage holds them: its tuples, its row placement,
  /// and its children's Rimap and Rjmap.
  std::int64_t front_bytes(const SparseAnalysis& an, std::int64_t f) const;
  /// Bytes of all the arrays.
  std::int64_t total_bytes() const noexcept;
};

/// Builds the maps for `an` (computed from a matrix with pattern `a`). Throws Error when the
/// analysis and the pattern disagree (a row of A leaving its front's columns).
SparseAssemblyMaps build_sparse_assembly_maps(const SparseAnalysis& an, const CscPattern& a);

/// Staircase placement of front f's rows when its children pass `child_cb_rows` CB rows
/// (per child, FrontInfo::children order; each <= the child's cb_cols): writes the stacked
/// row of each front row to `row_source` (resized) and each stacked row's key to `row_key`.
/// With the analysis' counts this reproduces the maps' placement.
void place_front_rows(const SparseAnalysis& an, const SparseAssemblyMaps& maps, std::int64_t f,
                      const std::vector<std::int64_t>& child_cb_rows,
                      std::vector<std::int64_t>& row_source, std::vector<std::int64_t>& row_key);

}  // namespace gpuqr::detail
