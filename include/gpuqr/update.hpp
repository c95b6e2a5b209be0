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
//   solve            | yes           | yes           | yes
//   matrix_q         | no (throws)   | m x n         | m x m
//
// (Removing rows needs the rows of Q that belong to the removed rows, including their part
// in Q's last m - n columns; a thin Q does not have it, so a thin or Q-less object must be
// rebuilt from A~ to remove rows.)
//
// Row order. Internally new rows are appended at the bottom of Q's storage (the paper's
// permutation of the inserted block to the bottom) and a host-side map keeps the order of A~:
// row_order()[i] is the storage row of Q that belongs to row i of A~, so Q~ as returned by
// matrix_q() is in A~'s row order and Q~ R~ = A~.
//
// Inputs (A, b, U, e) may be in host memory or in the context's memory; host inputs cost one
// stream synchronization (the copy in). Bad input throws InvalidArgument and leaves the object
// unchanged (R, d, Q bitwise, m, row order).
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr {

/// Which Q an UpdatableQR keeps (see the table in this header).
enum class UpdateQ { none, thin, full };

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
};

/// A QR factorization of A (m x n) with right-hand sides b (m x k), kept current under row
/// insertions and deletions. Move-only; float and double are instantiated.
template <class T>
class UpdatableQR {
 public:
  /// Rows removed per Givens batch: remove_rows(k, p) with larger p runs ceil(p / batch)
  /// batches (the rotation-angle kernel keeps a batch's accumulators in shared memory).
  static constexpr std::int64_t kRemoveBatch = 96;

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
  /// The info of the last add_rows / remove_rows.
  const UpdateInfo& last_update() const noexcept { return last_; }

 private:
  void reserve_rows(std::int64_t rows);
  void check_rows_block(std::int64_t k, MatrixView<const T> u, MatrixView<const T> e) const;
  UpdateInfo remove_batch(std::int64_t k, std::int64_t p);
  MatrixView<T> q_view();
  MatrixView<T> d_view();

  Context ctx_;
  UpdateQ q_mode_ = UpdateQ::full;
  std::int64_t m_ = 0, n_ = 0, nrhs_ = 0;
  Matrix<T> r_;  // n x n
  Matrix<T> d_;  // capacity x max(k, 1); the first m rows are d
  Matrix<T> q_;  // capacity x capacity (full), capacity x n (thin), empty (none)
  std::vector<std::int64_t> row_order_;
  UpdateInfo last_;
};

}  // namespace gpuqr
