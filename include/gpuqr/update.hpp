// gpuqr/update.hpp: an updatable QR factorization for least squares whose data changes a few
// observations (rows) at a time (Andrew & Dingle, "Implementing QR factorization updating
// algorithms on GPUs", section 3; Hammarling & Lucas).
//
// UpdatableQR<T> holds, for the current matrix A~ (m x n, m >= n, full column rank) and
// right-hand sides b~ (m x k):
//   R (n x n, upper triangular), d = Q^T b~ (m x k), and Q (m x m, m x n or nothing: QMode).
// Everything lives in the context's memory (device memory on a CUDA context); updates are
// enqueued on the context's stream. Which operations need which Q:
//
//   operation        | UpdateQ::none | UpdateQ::thin | UpdateQ::full
//   add_rows         | yes           | yes           | yes
//   remove_rows      | no (throws)   | no (throws)   | yes
//   remove_columns   | yes           | yes           | yes
//   add_columns      | no (throws)   | no (throws)   | yes
//   update_rank_k    | no (throws)   | no (throws)   | yes
//   policy automatic | no (throws)   | no (throws)   | yes
//   solve            | yes           | yes           | yes
//   matrix_q         | no (throws)   | m x n         | m x m
//
// (Removing rows needs the rows of Q that belong to the removed rows, including their part
// in Q's last m - n columns; a thin Q does not have it, so a thin or Q-less object must be
// rebuilt from A~ to remove rows.)
//
// Columns (issue 6). Removing columns only mixes R's rows k..n-1, so it works with any Q.
// Adding columns (and a rank-k update) needs Q^T U in full: its part in Q's last m - n columns
// is what gives the new pivots, and d's rows n..m (b~'s part outside range(A~)) must be
// rotated with it. A thin Q could re-orthogonalise U against itself (CGS2) to get the new Q
// columns, but not d's new rows: they need b~'s component in the complement, which neither a
// thin Q nor d keeps. So add_columns / update_rank_k need UpdateQ::full; rebuild with it.
// The automatic policy also needs the full Q: refactoring rebuilds A~ = Q(:, 0:n) R and
// b~ = Q d from the object (no copy of A~ is kept).
//
// Row order. Internally new rows are appended at the bottom of Q's storage (the paper's
// permutation of the inserted block to the bottom) and a host-side map keeps the order of A~:
// row_order()[i] is the storage row of Q that belongs to row i of A~, so Q~ as returned by
// matrix_q() is in A~'s row order and Q~ R~ = A~ (matrix_q() uploads that map and so waits
// for the context's stream).
//
// Inputs (A, b, U, e) may be in host memory or in the context's memory; host inputs cost one
// stream synchronization (the copy in). Bad input throws InvalidArgument and leaves the object
// unchanged (R, d, Q bitwise, m, row order).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"
#include "gpuqr/update_cost_model.hpp"

namespace gpuqr {

/// How an UpdatableQR carries out column updates and rank-k updates.
enum class UpdatePolicy {
  update,     ///< always update (the default)
  refactor,   ///< always rebuild from A~ = Q R (UpdateQ::full): a reference and a fallback
  automatic,  ///< whichever the UpdateCostModel predicts faster (UpdateQ::full)
};

/// What one update did, for benchmarks and diagnostics (host values, no synchronization).
struct UpdateInfo {
  /// Device operations enqueued by the update: our kernel launches plus cuBLAS/cuSOLVER calls
  /// (exact for the update's own leaves, estimated from their structure for the reused
  /// blocked-QR leaves). 0 on a CPU context.
  std::int64_t device_launches = 0;
  /// Householder column blocks (add_rows) or Givens rotations (remove_rows) applied.
  std::int64_t blocks = 0;
  std::int64_t rotations = 0;
  /// Batches a large remove_rows was split into (each at most kRemoveBatch rows).
  std::int64_t batches = 0;
  /// True when the policy rebuilt the factorization instead of updating it.
  bool refactored = false;
  /// The cost model's prediction that the automatic policy acted on (0 otherwise).
  double predicted_update_seconds = 0, predicted_rebuild_seconds = 0;
};

/// A QR factorization of A (m x n) with right-hand sides b (m x k), kept current under row
/// insertions and deletions. Move-only; float and double are instantiated.
template <class T>
class UpdatableQR {
 public:
  /// Rows removed per Givens batch: remove_rows(k, p) with larger p runs ceil(p / batch)
  /// batches (the rotation-angle kernel keeps a batch's accumulators and its last p steps'
  /// rotations in shared memory: 2.5 p^2 entries, 200 KB for p = 100 in double).
  static constexpr std::int64_t kRemoveBatch = 100;

  /// Factors A (m x n, m >= n >= 1) and forms d = Q^T b (b m x k, k >= 0; an empty view
  /// means k = 0). A and b in host memory or the context's. Throws InvalidArgument for bad
  /// shapes or NaN/Inf (when ctx.check_finite()). Synchronizes when an input is on the host.
  UpdatableQR(Context ctx, MatrixView<const T> a, MatrixView<const T> b,
              UpdateQ q_mode = UpdateQ::full);

  UpdatableQR(UpdatableQR&&) noexcept = default;
  UpdatableQR& operator=(UpdatableQR&&) noexcept = default;

  /// Inserts the p x n block U, with right-hand-side rows e (p x k), before row k of A~
  /// (0 <= k <= m; k = m appends). Blocked Householder on [R; U] (V = [I; V_U] and T per
  /// column block, tpqrt's shape), applied to d and e and to Q when kept; R's zeros are never
  /// touched, so the cost is O(p n^2) (+ O(m p n) for Q). p = 0 is a no-op. Throws
  /// InvalidArgument (object unchanged) for k out of range, U not n columns wide, e not
  /// p x k, or NaN/Inf.
  UpdateInfo add_rows(std::int64_t k, MatrixView<const T> u, MatrixView<const T> e);

  /// Deletes rows k .. k+p-1 of A~ (and of b~). Needs UpdateQ::full. The rows' part in Q's
  /// last m - n columns is first compressed into p columns by one Householder QR (applied to
  /// Q and d), then Givens rotations zero the rows' part in the first n columns against those
  /// p columns, applied to R, d and Q (paper section 3.4, one sweep kernel per batch on the
  /// GPU). p = 0 is a no-op. Throws InvalidArgument (object unchanged) when Q is not full,
  /// k < 0, p < 0, k + p > m, or m - p < n (A~ would lose full column rank).
  UpdateInfo remove_rows(std::int64_t k, std::int64_t p);

  /// Deletes columns k .. k+p-1 of A~ (n shrinks by p). R's trailing columns, upper triangular
  /// plus p subdiagonals once the columns are gone, are reduced by blocked Householder on the
  /// (nb + p)-row band (reflectors of length p + 1, nb columns per block, applied with GEMMs
  /// to R, d and Q's columns k..n when kept). Any UpdateQ. p = 0 is a no-op. Throws
  /// InvalidArgument (object unchanged) for k < 0, p < 0, k + p > n, or p = n (no column left).
  UpdateInfo remove_columns(std::int64_t k, std::int64_t p);

  /// Inserts the m x p block U (rows in A~'s row order, host or context memory) before column
  /// k of A~ (0 <= k <= n; k = n appends). Needs UpdateQ::full: W = Q^T U; Householder QR of
  /// W's rows n..m (applied to Q's columns n..m and to d), then the triangle is restored in
  /// rows k..n+p by blocked Householder: windows of nb + p rows of W's rows k..n+p from the
  /// bottom up (leaving R's trailing part banded, nb - 1 subdiagonals), then the band
  /// reduction of remove_columns; all applied to R, d and Q. Throws InvalidArgument (object
  /// unchanged) for no full Q, k out of range, U not m rows, n + p > m, NaN/Inf, or a new
  /// pivot |R(k+i, k+i)| <= max(m, n+p) eps ||U(:, i)||: U's column i is (numerically) in the
  /// span of A~'s columns and U's earlier ones, and A~ would become rank deficient.
  UpdateInfo add_columns(std::int64_t k, MatrixView<const T> u);

  /// A~ := A~ + U V^T (U m x r in A~'s row order, V n x r; SciPy's qr_update). Needs
  /// UpdateQ::full: W = Q^T U; Householder QR of W's rows n..m; W's rows 0..n+r reduced to an
  /// r x r triangle X from the bottom up as in add_columns (R, padded with r zero rows,
  /// becomes banded); X V^T added to the top r rows; the band reduced. r = 0 is a no-op.
  /// Throws InvalidArgument (object unchanged) for no full Q, U not m rows, V not n rows,
  /// U and V of different widths, r > m, or NaN/Inf. Rank is not checked: solve reports an
  /// exactly singular R.
  UpdateInfo update_rank_k(MatrixView<const T> u, MatrixView<const T> v);

  /// Sets how column and rank-k updates run. refactor and automatic need UpdateQ::full (else
  /// InvalidArgument); automatic uses `model`, or UpdateCostModel::calibrate(context()) when
  /// none is given (which may measure the device once).
  void set_policy(UpdatePolicy policy, const UpdateCostModel* model = nullptr);
  UpdatePolicy policy() const noexcept { return policy_; }

  /// x = R^{-1} d(0:n, :) (n x k, context memory). `info` (optional) receives the residual
  /// norms ||d(n:m, j)|| = ||b~_j - A~ x_j||, the rcond estimate and singular_at (as
  /// HouseholderQR::solve: an exactly singular R throws without `info`, fills x with NaN
  /// with it). Synchronizes (the norms come back to the host).
  Matrix<T> solve(LstsqInfo* info = nullptr) const;

  /// R (n x n, zeros below the diagonal), a copy in the context's memory.
  Matrix<T> matrix_r() const;
  /// d = Q^T b~ (m x k), a copy in the context's memory (rows in Q's column order).
  Matrix<T> matrix_d() const;
  /// Q~ in A~'s row order: m x m (full) or m x n (thin), a copy in the context's memory.
  /// Throws InvalidArgument for UpdateQ::none.
  Matrix<T> matrix_q() const;

  /// Storage row of Q for each row of A~ (host; identity until rows are added).
  const std::vector<std::int64_t>& row_order() const noexcept { return row_order_; }
  std::int64_t rows() const noexcept { return m_; }
  std::int64_t cols() const noexcept { return n_; }
  std::int64_t rhs_count() const noexcept { return nrhs_; }
  UpdateQ q_mode() const noexcept { return q_mode_; }
  const Context& context() const noexcept { return ctx_; }
  /// The info of the last update.
  const UpdateInfo& last_update() const noexcept { return last_; }

 private:
  void reserve_rows(std::int64_t rows);
  void check_rows_block(std::int64_t k, MatrixView<const T> u, MatrixView<const T> e) const;
  UpdateInfo remove_batch(std::int64_t k, std::int64_t p);
  MatrixView<T> q_view();
  MatrixView<T> d_view();
  MatrixView<T> r_view() { return r_.view().block(0, 0, n_, n_); }
  MatrixView<const T> r_view() const { return r_.view().block(0, 0, n_, n_); }
  void reserve_cols(std::int64_t cols);
  bool choose_rebuild(UpdateOp op, std::int64_t p, std::int64_t k, UpdateInfo& info);
  void rebuild(UpdateOp op, std::int64_t k, std::int64_t p, MatrixView<const T> us,
               MatrixView<const T> v);
  void check_columns_block(const char* routine, MatrixView<const T> u) const;

  Context ctx_;
  UpdateQ q_mode_ = UpdateQ::full;
  std::int64_t m_ = 0, n_ = 0, nrhs_ = 0;
  Matrix<T> r_;  // capacity x capacity; the leading n x n block is R
  Matrix<T> d_;  // capacity x max(k, 1); the first m rows are d
  Matrix<T> q_;  // capacity x capacity (full), capacity x n (thin), empty (none)
  std::vector<std::int64_t> row_order_;
  UpdateInfo last_;
  UpdatePolicy policy_ = UpdatePolicy::update;
  std::shared_ptr<const UpdateCostModel> model_;
};

}  // namespace gpuqr
