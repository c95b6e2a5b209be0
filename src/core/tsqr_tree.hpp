// TSQR: QR of a tall-skinny matrix by a reduction tree of local Householder QRs.
//
//   A = [A_0; A_1; ...; A_{p-1}]  (row blocks of `leaf_rows` rows; the last has the remainder,
//                                  merged into its neighbour when it would have fewer than n)
//   leaves:  A_i = Q_i R_i                      one batched QR over all row blocks, in place
//   level 1: [R_0; ...; R_{g-1}] = Q' R'        stacked upper triangles, g at a time (batched)
//   level 2: ... until one R is left: the root's R is A's R.
//
// Q_full = diag(Q_i) * (level 1, embedded at the first n rows of each leaf) * ... * (root):
// each node acts on the "representative" rows of its children (the first n rows of the first
// leaf below each child). A's row blocks keep the leaves' Householder vectors (R_i above them
// is overwritten by nothing but is superseded by the tree); the tree levels' V and tau live in
// this object. Backend-agnostic: every step is a leaf of src/core/tsqr_kernels.hpp.
//
// Where the batched kernels cannot hold a block (CUDA: wide n, say n > ~100 in double), the
// default is one leaf of all m rows: then this is geqrf/ormqr on A itself (cuSOLVER), which is
// what a tree of per-block geqrf calls would cost anyway. An explicit leaf_rows still builds the
// tree, factoring each oversized block with cuSOLVER, one call per block (correct, slow).
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::detail {

template <class T>
class TsqrTree {
 public:
  /// Factors `a` (m x n, m >= n, in the context's memory) in place; the view must stay valid
  /// (and its contents untouched) while this object is used. `leaf_rows` rows per leaf block
  /// (0: chosen by shape and backend; values below n are raised to n); `group` children per
  /// tree node (0: chosen; at least 2). Throws InvalidArgument (before writing anything) for
  /// m < n, a view in the wrong memory space, negative sizes, or NaN/Inf in `a` when
  /// ctx.check_finite(). Asynchronous on CUDA apart from that NaN/Inf check.
  TsqrTree(const Context& ctx, MatrixView<T> a, std::int64_t leaf_rows = 0,
           std::int64_t group = 0);

  std::int64_t rows() const noexcept { return m_; }
  std::int64_t cols() const noexcept { return n_; }
  /// Rows per leaf block, the number of leaves, and the levels above them (0: one leaf).
  std::int64_t leaf_rows() const noexcept { return leaf_rows_; }
  std::int64_t leaves() const noexcept { return leaves_; }
  std::int64_t levels() const noexcept { return static_cast<std::int64_t>(levels_.size()); }

  /// r := R (n x n, upper triangular, zeros below the diagonal); context memory.
  void r(MatrixView<T> r) const;
  /// C := Q_full^T C for C m x k (context memory): its first n rows are then Q^T C.
  void apply_qt(MatrixView<T> c) const;
  /// C := Q_full C for C m x k (context memory): with C = [Y; 0], Q Y.
  void apply_q(MatrixView<T> c) const;
  /// q := the thin Q (m x n, orthonormal columns, A = Q R); context memory.
  void form_q(MatrixView<T> q) const;

 private:
  /// One tree level above the leaves: `nodes` nodes of up to `group` children each; node j's
  /// V (stacked triangles, group*n x n) in columns j*n.. of `v`, its tau in column j of `tau`.
  struct Level {
    std::int64_t group = 2;
    std::int64_t nodes = 0;
    std::int64_t children = 0;
    std::int64_t child_stride = 0;  // rows of C between the children's representative rows
    Matrix<T> v;
    Matrix<T> tau;
  };

  void check_c(MatrixView<T> c, const char* routine) const;
  void apply_leaves(Op op, MatrixView<T> c, bool top_only) const;
  void apply_level(Op op, std::size_t level, MatrixView<T> c) const;

  Context ctx_;
  MatrixView<T> a_;
  std::int64_t m_ = 0, n_ = 0;
  std::int64_t leaf_rows_ = 0, leaves_ = 0, last_rows_ = 0;
  Matrix<T> leaf_tau_;  // n x leaves
  std::vector<Level> levels_;
};

}  // namespace gpuqr::detail
