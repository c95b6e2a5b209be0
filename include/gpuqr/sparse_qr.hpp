// gpuqr/sparse_qr.hpp: sparse multifrontal QR factorization and least squares on the CPU.
//
// Built on the symbolic analysis of gpuqr/sparse_analysis.hpp. Each front (children first) is
// assembled from the rows of A whose leftmost permuted column is one of its pivots and from
// its children's contribution blocks, its rows are sorted into staircase order, and it is
// factorized by the library's dense QR (geqrf on a CPU Context). The first npiv rows of the
// front's R are rows first_pivot.. of R; the next cb_rows rows (the contribution block) go to
// the parent front.
//
// The Householder vectors and scalars of every front are kept, so solve() applies Q^T to its
// right-hand sides front by front in the same order (ormqr), then back-substitutes with R.
// One factorization serves any number of solves. (SuiteSparseQR's Q-less mode, where B is
// carried along as extra columns of every front, is not implemented.)
//
// Rank detection as SuiteSparseQR does it (Heath's method): with a tolerance tol >= 0 (by
// default SuiteSparseQR's 20 (m + n) eps max_j ||A(:, j)||_2), a pivot column whose norm over
// the rows still available in its front (at and below the front's next pivot row) is <= tol
// is "dead": that part of it is dropped (set to zero), it gets no Householder reflector and no
// R row (R(k, k) = 0 and row k of R is empty), and the front's next pivot column uses the same
// row. A front with d dead columns therefore passes up to d more rows to its parent than the
// analysis predicted (FrontInfo::rows and cb_rows are hints then, not the sizes used). Pivot
// columns are factored one by one (BLAS-2) when rank detection is on; with the tolerance off
// (SparseQROptions::tolerance < 0, other than -2) the 64-column blocked path is used and only
// exact zero pivots are reported (R(k, k) == 0 of the unpivoted QR; solve() then throws).
// With rank detection, solve() returns the basic solution (x = 0 on the dead columns).
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"

namespace gpuqr {

/// Options of SparseQR.
struct SparseQROptions {
  /// Options of the symbolic analysis (ordering, amalgamation).
  SparseAnalysisOptions analysis;
  /// Rank-detection tolerance, as SuiteSparseQR's tol: -2 (the default) picks
  /// 20 (m + n) eps max_j ||A(:, j)||_2 (eps of T); any other negative value turns rank
  /// detection off; a value >= 0 is used as given (0 drops only exactly zero columns).
  double tolerance = -2;
};

/// The multifrontal QR factorization A Q = Q_H R of a sparse m x n matrix (any m, n) on the
/// CPU, with Q the fill-reducing column permutation of the analysis and Q_H orthogonal (kept
/// implicitly as per-front Householder reflectors). float and double are instantiated.
template <class T>
class SparseQR {
 public:
  /// Analyzes and factors `a` (validated: InvalidArgument for a malformed matrix or a NaN/Inf
  /// value, or from the analysis for bad options; NotCompiled for colamd/amd without
  /// SuiteSparse).
  explicit SparseQR(const CscMatrix<T>& a, const SparseQROptions& options = {});

  std::int64_t rows() const noexcept { return analysis_.rows; }
  std::int64_t cols() const noexcept { return analysis_.cols; }

  /// The symbolic analysis the factorization followed.
  const SparseAnalysis& analysis() const noexcept { return analysis_; }

  /// R: n x n upper triangular, the factor of A*Q (column k of R is permuted column k, i.e.
  /// original column column_permutation()[k]). Exact zeros off the diagonal are not stored;
  /// the diagonal is always stored (a zero there is a missing pivot).
  CscMatrix<T> r() const;

  /// q: permuted column k is original column q[k].
  const std::vector<std::int64_t>& column_permutation() const noexcept {
    return analysis_.column_permutation;
  }

  /// Permuted columns k with R(k, k) == 0, ascending: with rank detection the dead columns
  /// (permuted indices); without it the exact zero pivots of the unpivoted QR.
  const std::vector<std::int64_t>& zero_pivots() const noexcept { return zero_pivots_; }

  /// The same columns as zero_pivots() in original indices (column q[k] of A), ascending.
  std::vector<std::int64_t> dead_columns() const;

  /// Numerical rank: n minus the dead columns (minus the zero pivots without rank detection).
  std::int64_t rank() const noexcept {
    return cols() - static_cast<std::int64_t>(zero_pivots_.size());
  }

  /// The tolerance used (negative: rank detection off).
  double tolerance() const noexcept { return tol_; }

  /// min |R(k,k)| / max |R(k,k)| (0 with a zero pivot, 1 for n = 0): a cheap, rough
  /// indicator of 1/cond(A), as LstsqInfo::rcond_estimate.
  double rcond_estimate() const;

  /// Least-squares solutions X (n x nrhs) of min ||A X - B|| for B m x nrhs (dense, host
  /// memory), with the column permutation undone. Q^T B is formed front by front with the
  /// kept reflectors, then R Z = (Q^T B)(0:n) is solved by sparse back substitution and
  /// X(q[k], :) = Z(k, :). `residual_norms` (optional) receives ||B(:, j) - A X(:, j)||_2 from
  /// the parts of Q^T B that R does not reach. With rank detection and rank() < n, X is the
  /// basic solution: X(q[k], :) = 0 for the dead columns k, the others from the live part of
  /// R (the residual norms are then those of that solution, up to the dropped parts of A,
  /// whose column norms are <= tolerance()). Throws InvalidArgument when B's rows differ
  /// from m, B is not on the host, m < n (no minimum-norm solve yet), or, without rank
  /// detection, R has a zero pivot (the message names the original column; see zero_pivots()).
  Matrix<T> solve(MatrixView<const T> b, std::vector<double>* residual_norms = nullptr) const;

  /// Entries of R stored by r() (the diagonal always counts).
  std::int64_t nnz_r() const noexcept { return static_cast<std::int64_t>(r_values_.size()); }

 private:
  /// One factored front: geqrf's output on the staircase-sorted front, its tau, and where
  /// each front row came from (index into [a_rows, child 0's CB rows, child 1's, ...]).
  /// With dead columns, qr's reflector columns are compacted (the dead pivot columns
  /// removed) so that reflector t sits in column t from row t, as geqrf leaves them.
  struct Front {
    Matrix<T> qr;
    std::vector<T> tau;
    std::vector<std::int64_t> row_source;
    std::int64_t rows = 0;     ///< front rows actually assembled
    std::int64_t live = 0;     ///< front rows holding pivot rows of R (0..live-1)
    std::int64_t cb_rows = 0;  ///< contribution block rows: live..live+cb_rows-1
    std::vector<std::int64_t> pivot_row;  ///< per pivot: its front row, -1 when missing/dead
  };

  SparseAnalysis analysis_;
  std::vector<Front> fronts_;
  /// R in compressed sparse row form (row k: permuted column indices ascending, diagonal
  /// first), kept for the back substitution and converted to CSC by r().
  std::vector<std::int64_t> r_row_ptr_;
  std::vector<std::int64_t> r_cols_;
  std::vector<T> r_values_;
  std::vector<std::int64_t> zero_pivots_;
  double tol_ = -1;
};

}  // namespace gpuqr
