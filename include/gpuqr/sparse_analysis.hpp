// gpuqr/sparse_analysis.hpp: symbolic analysis of a sparse multifrontal QR factorization.
//
// The analysis follows SuiteSparseQR (Davis, ACM TOMS 2011; Yeralan, Davis et al., "Sparse QR
// factorization on the GPU", section 2.1): a fill-reducing column ordering Q, the column
// elimination tree of A*Q (the elimination tree of (AQ)^T (AQ), found from A directly), a
// postorder of that tree, the structure of R (row-merge / multifrontal symbolic analysis),
// fundamental supernodes, relaxed amalgamation, and the fronts (frontal matrices) with their
// contribution blocks, assembly maps, flop counts and a working-memory estimate.
//
// Everything here is structural: R's counts assume A*Q has full structural rank, i.e. they are
// the counts of the Cholesky factor of (AQ)^T (AQ), an upper bound on the nonzeros of R (exact
// when A is strong Hall). The numerical factorization is not part of this header.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/sparse.hpp"

namespace gpuqr {

/// Fill-reducing column orderings.
enum class ColumnOrdering {
  colamd,   ///< COLAMD on A (SuiteSparse colamd_l, default knobs). NotCompiled without SuiteSparse.
  amd,      ///< AMD on the pattern of A^T A (SuiteSparse amd_l_order). NotCompiled without it.
  natural,  ///< the identity.
  given,    ///< SparseAnalysisOptions::column_permutation.
};

/// Options of analyze_sparse_qr.
struct SparseAnalysisOptions {
  ColumnOrdering ordering = ColumnOrdering::colamd;
  /// For ColumnOrdering::given: new column k is old column column_permutation[k]; must be a
  /// permutation of 0..n-1 (InvalidArgument otherwise). Ignored for the other orderings.
  std::vector<std::int64_t> column_permutation;
  /// Compose the ordering with a postorder of its column elimination tree (as SuiteSparseQR
  /// does). This changes neither the fill nor the flops, and lets relaxed amalgamation merge
  /// every child whose pivot columns end right before its parent's. When false the ordering
  /// is kept as it is (SparseAnalysis::column_permutation equals it).
  bool postorder_columns = true;
  /// Relaxed amalgamation. Fundamental supernodes are visited from the last to the first;
  /// supernode s is merged into the front F that starts at supernode s+1 when s's parent
  /// column lies in F (so pivot columns stay contiguous) and either
  ///   (a) the merged front has at most relax_columns pivot columns, or
  ///   (b) explicit zeros <= relax_fill * stored entries of the merged front's R block,
  /// where stored = sum over its pivot rows k of (front columns - k) (its upper trapezoid) and
  /// explicit zeros = stored - sum of the structural R row counts of its pivot columns.
  /// relax_columns = 0 and relax_fill < 0 keep the fundamental supernodes.
  /// The default relax_fill = 0.05 (0.1 before) cut the staircase flops by 8% / 4.5% and the
  /// CPU time by ~13% / ~5% on Groebner_id2003_aug / Franz6_id1959_aug (docs/PERF.md).
  std::int64_t relax_columns = 16;
  double relax_fill = 0.05;
};

/// One frontal matrix of the multifrontal factorization.
struct FrontInfo {
  /// Index of the parent front in SparseAnalysis::fronts, -1 for a root.
  std::int64_t parent = -1;
  /// Child fronts, ascending.
  std::vector<std::int64_t> children;
  /// Pivot columns: permuted columns [first_pivot, first_pivot + npiv).
  std::int64_t first_pivot = 0;
  std::int64_t npiv = 0;
  /// All columns of the front (permuted indices, ascending; the pivots come first).
  std::vector<std::int64_t> cols;
  /// Rows of A (original row indices, ascending) assembled here: the rows whose leftmost
  /// permuted column is a pivot of this front.
  std::vector<std::int64_t> a_rows;
  /// Front rows: a_rows.size() plus the children's cb_rows.
  std::int64_t rows = 0;
  /// Contribution block passed to the parent: cb_cols = cols.size() - npiv columns (the
  /// non-pivot columns) and cb_rows = max(0, min(rows - npiv, cb_cols)) rows (staircase bound).
  std::int64_t cb_rows = 0;
  std::int64_t cb_cols = 0;
  /// Per child (same order as children): for each of the child's CB columns, its position
  /// in cols (strictly increasing).
  std::vector<std::vector<std::int64_t>> child_col_map;
  /// Flops (multiplications + additions) of the staircase Householder QR of the
  /// rows x cols.size() front: with the rows sorted by leftmost front column (an A row at its
  /// leftmost pivot, a child's CB row r at that child's CB column r), column j reaches
  /// stair[j] rows, and reflector k < min(rows, cols) costs 4hw + 3h + w + 5 with
  /// h = max(stair[k] - k, 1), w = cols.size() - k - 1. The rows below the staircase are not
  /// counted, as SuiteSparseQR does not count them; for a dense front (stair[j] = rows) this
  /// is exactly LAWN 41's geqrf count (k = min(rows, cols)).
  double flops = 0;
};

/// Result of analyze_sparse_qr. "Permuted column k" is column k of A*Q.
struct SparseAnalysis {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// q: permuted column k is original column q[k] (includes the etree postorder when
  /// SparseAnalysisOptions::postorder_columns).
  std::vector<std::int64_t> column_permutation;
  /// Per original row: its leftmost permuted column, -1 for an empty row.
  std::vector<std::int64_t> row_leftmost;
  /// Column elimination tree of A*Q: parent of each permuted column, -1 for a root.
  std::vector<std::int64_t> etree;
  /// A postorder of etree: postorder[k] is the k-th column visited (children before parents,
  /// children in ascending order). The identity when postorder_columns is on.
  std::vector<std::int64_t> postorder;
  /// Structural nonzeros of each row of R (= column of the Cholesky factor of (AQ)^T(AQ)),
  /// diagonal included, permuted order.
  std::vector<std::int64_t> r_row_counts;
  /// Structural nonzeros of each column of R, diagonal included, permuted order.
  std::vector<std::int64_t> r_column_counts;
  /// Structural nonzeros of R (sum of either count).
  std::int64_t nnz_r = 0;
  /// First column of each fundamental supernode, plus n at the end.
  std::vector<std::int64_t> fundamental_supernodes;
  /// Fronts in a postorder of the front tree (every child precedes its parent).
  std::vector<FrontInfo> fronts;
  /// Sum of the fronts' flops.
  double flops = 0;
  /// Working memory of a sequential multifrontal factorization, in bytes of T: the largest,
  /// over the fronts in order, of (the front being factorized, rows x cols) + (every
  /// contribution block produced and not yet assembled into its parent). R and the
  /// Householder vectors, which are kept, are not counted.
  double memory_bytes = 0;
  /// flops / bytes moved, where every front is read and written once (2 rows x cols x sizeof T).
  double intensity = 0;
};

/// Symbolic analysis of the sparse QR factorization of `a` (validated first: InvalidArgument
/// for a malformed matrix, a bad given permutation or bad options; NotCompiled for colamd/amd
/// in a build without SuiteSparse). Instantiated for float and double.
template <class T>
SparseAnalysis analyze_sparse_qr(const CscMatrix<T>& a, const SparseAnalysisOptions& options = {});

/// Whether the colamd and amd orderings are available (the library was built with SuiteSparse).
bool sparse_orderings_available() noexcept;

}  // namespace gpuqr
