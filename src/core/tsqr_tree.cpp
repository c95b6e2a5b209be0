// The TSQR reduction tree (see tsqr_tree.hpp). Every step is a batched leaf of
// src/core/tsqr_kernels.hpp enqueued in order on the context; the object's storage (leaf tau,
// the levels' V and tau) is allocated once in the constructor, so the factorization and the
// applications neither allocate nor wait (CUDA) beyond that.
#include "src/core/tsqr_tree.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/tsqr_kernels.hpp"

namespace gpuqr::detail {

namespace {

constexpr std::int64_t kMaxGroup = 16;   // children per node: deeper trees cost launches only
constexpr std::int64_t kApplyExtra = 8;  // columns of C the apply kernels hold beside V

/// GPUQR_TSQR_LEAF_ROWS from the environment (tuning runs), or 0.
std::int64_t env_leaf_rows() {
  const char* text = std::getenv("GPUQR_TSQR_LEAF_ROWS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v <= 0) {
    GPUQR_THROW(InvalidArgument,
                std::string("GPUQR_TSQR_LEAF_ROWS='") + text + "' is not a positive integer");
  }
  return v;
}

/// Rows the batched kernels hold for n columns (with kApplyExtra columns of C beside them).
std::int64_t rows_limit(const Context& ctx, int elem, std::int64_t n) {
  return GPUQR_DISPATCH(ctx, tsqr_block_rows_limit, elem, n, kApplyExtra);
}

/// Default leaf rows: on CUDA half of what a block may hold (two blocks per multiprocessor),
/// a multiple of 32, leaving room for a last leaf of up to n - 1 extra rows; one leaf (the
/// dense fallback) where that is under 3n rows: then the tree's levels cost about as much as
/// its leaves, and cuSOLVER on A wins (FP32 1048576 x 128 on an H200: a tree of 192-row leaves
/// took 54.9 ms, geqrf 19.8). On the CPU a few hundred rows (cache-sized).
std::int64_t choose_leaf_rows(const Context& ctx, int elem, std::int64_t m, std::int64_t n) {
  if (!ctx.is_cuda()) return std::max<std::int64_t>(4 * n, 512);
  const std::int64_t rows = rows_limit(ctx, elem, n) / 2 / 32 * 32;
  return rows < 3 * n ? m : rows;
}

/// Default children per node: as many n x n triangles as a block holds, within [2, kMaxGroup];
/// 4 on the CPU.
std::int64_t choose_group(const Context& ctx, int elem, std::int64_t n) {
  if (!ctx.is_cuda()) return 4;
  return std::clamp<std::int64_t>(rows_limit(ctx, elem, n) / std::max<std::int64_t>(n, 1), 2,
                                  kMaxGroup);
}

/// Strided pieces: count pieces of `rows` rows (the last `last_rows`), `group` per block.
template <class T>
kernels::Pieces<T> strided(T* base, std::int64_t ld, std::int64_t count, std::int64_t group,
                           std::int64_t stride, std::int64_t rows, std::int64_t last_rows) {
  kernels::Pieces<T> p;
  p.base = base;
  p.ld = ld;
  p.count = count;
  p.group = group;
  p.stride = stride;
  p.rows = rows;
  p.last_rows = last_rows;
  return p;
}

}  // namespace

template <class T>
TsqrTree<T>::TsqrTree(const Context& ctx, MatrixView<T> a, std::int64_t leaf_rows,
                      std::int64_t group)
    : ctx_(ctx), a_(a), m_(a.rows()), n_(a.cols()) {
  const char* routine = "TsqrTree";
  check_view(ctx, a, "A", routine);
  if (m_ < n_) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": A is " + shape(m_, n_) +
                                     "; TSQR needs at least as many rows as columns");
  }
  if (leaf_rows < 0 || group < 0 || group == 1) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": leaf_rows = " +
                                     std::to_string(leaf_rows) + ", group = " +
                                     std::to_string(group) +
                                     " (need leaf_rows >= 0 and group 0 or >= 2)");
  }
  if (n_ == 0) return;
  if (ctx.check_finite() && !GPUQR_DISPATCH(ctx, all_finite, MatrixView<const T>(a))) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": A contains NaN or Inf");
  }
  const int elem = static_cast<int>(sizeof(T));
  if (leaf_rows == 0) leaf_rows = env_leaf_rows();
  if (leaf_rows == 0) leaf_rows = choose_leaf_rows(ctx, elem, m_, n_);
  leaf_rows_ = std::min(std::max(leaf_rows, n_), m_);
  // Leaves: ceil(m / b) blocks; a last block shorter than n joins the one before it.
  leaves_ = (m_ + leaf_rows_ - 1) / leaf_rows_;
  last_rows_ = m_ - (leaves_ - 1) * leaf_rows_;
  if (leaves_ > 1 && last_rows_ < n_) {
    --leaves_;
    last_rows_ += leaf_rows_;
  }
  if (group == 0) group = choose_group(ctx, elem, n_);
  // The levels' shapes, then their storage (context memory, owned: this object outlives the
  // call, so the shared grow-only workspaces are not an option).
  const MemorySpace space = space_of(ctx);
  std::int64_t children = leaves_, child_stride = leaf_rows_;
  while (children > 1) {
    Level level;
    level.group = std::min(group, children);
    level.children = children;
    level.nodes = (children + level.group - 1) / level.group;
    level.child_stride = child_stride;
    level.v = Matrix<T>(level.group * n_, level.nodes * n_, space, ctx.device());
    level.tau = Matrix<T>(n_, level.nodes, space, ctx.device());
    child_stride *= level.group;
    children = level.nodes;
    levels_.push_back(std::move(level));
  }
  leaf_tau_ = Matrix<T>(n_, leaves_, space, ctx.device());

  // Leaves in place, then each level from its children's R factors.
  auto leaf_blocks = strided<T>(a.data(), a.ld(), leaves_, 1, leaf_rows_, leaf_rows_, last_rows_);
  GPUQR_DISPATCH(ctx, tsqr_batched_geqrf<T>, leaf_blocks.template as<const T>(), leaf_blocks, n_,
                 leaf_tau_.view(), false);
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    Level& level = levels_[l];
    kernels::Pieces<const T> src;
    if (l == 0) {
      src = strided<const T>(a.data(), a.ld(), leaves_, level.group, leaf_rows_, n_, n_);
    } else {
      const Matrix<T>& below = levels_[l - 1].v;
      src = strided<const T>(below.data(), below.ld(), level.children, level.group,
                             n_ * below.ld(), n_, n_);
    }
    const std::int64_t last_children = level.children - (level.nodes - 1) * level.group;
    auto dst = strided<T>(level.v.data(), level.v.ld(), level.nodes, 1, n_ * level.v.ld(),
                          level.group * n_, last_children * n_);
    GPUQR_DISPATCH(ctx, tsqr_batched_geqrf<T>, src, dst, n_, level.tau.view(), true);
  }
}

template <class T>
void TsqrTree<T>::check_c(MatrixView<T> c, const char* routine) const {
  check_view(ctx_, c, "C", routine);
  if (c.rows() != m_) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": C is " + shape(c.rows(), c.cols()) +
                                     ", A has " + std::to_string(m_) + " rows");
  }
}

template <class T>
void TsqrTree<T>::apply_leaves(Op op, MatrixView<T> c, bool top_only) const {
  auto v = strided<const T>(a_.data(), a_.ld(), leaves_, 1, leaf_rows_, leaf_rows_, last_rows_);
  auto cp = strided<T>(c.data(), c.ld(), leaves_, 1, leaf_rows_, leaf_rows_, last_rows_);
  GPUQR_DISPATCH(ctx_, tsqr_batched_apply<T>, op, v, n_, MatrixView<const T>(leaf_tau_.view()),
                 cp, c.cols(), false, top_only);
}

template <class T>
void TsqrTree<T>::apply_level(Op op, std::size_t l, MatrixView<T> c) const {
  const Level& level = levels_[l];
  const std::int64_t last_children = level.children - (level.nodes - 1) * level.group;
  auto v = strided<const T>(level.v.data(), level.v.ld(), level.nodes, 1, n_ * level.v.ld(),
                            level.group * n_, last_children * n_);
  auto cp = strided<T>(c.data(), c.ld(), level.children, level.group, level.child_stride, n_,
                       n_);
  GPUQR_DISPATCH(ctx_, tsqr_batched_apply<T>, op, v, n_, MatrixView<const T>(level.tau.view()),
                 cp, c.cols(), true, false);
}

template <class T>
void TsqrTree<T>::r(MatrixView<T> r) const {
  check_view(ctx_, r, "R", "TsqrTree::r");
  if (r.rows() != n_ || r.cols() != n_) {
    GPUQR_THROW(InvalidArgument, "TsqrTree::r: R is " + shape(r.rows(), r.cols()) +
                                     ", expected " + shape(n_, n_));
  }
  if (n_ == 0) return;
  MatrixView<const T> root = levels_.empty()
                                 ? MatrixView<const T>(a_.block(0, 0, n_, n_))
                                 : MatrixView<const T>(levels_.back().v.view().block(0, 0, n_, n_));
  GPUQR_DISPATCH(ctx_, copy_upper, root, r);
}

template <class T>
void TsqrTree<T>::apply_qt(MatrixView<T> c) const {
  check_c(c, "TsqrTree::apply_qt");
  if (n_ == 0 || c.cols() == 0) return;
  // Q_full^T = root^T ... level1^T diag(Q_i^T): the leaves first, then up the tree.
  apply_leaves(Op::trans, c, false);
  for (std::size_t l = 0; l < levels_.size(); ++l) apply_level(Op::trans, l, c);
}

template <class T>
void TsqrTree<T>::apply_q(MatrixView<T> c) const {
  check_c(c, "TsqrTree::apply_q");
  if (n_ == 0 || c.cols() == 0) return;
  for (std::size_t l = levels_.size(); l-- > 0;) apply_level(Op::no_trans, l, c);
  apply_leaves(Op::no_trans, c, false);
}

template <class T>
void TsqrTree<T>::form_q(MatrixView<T> q) const {
  check_c(q, "TsqrTree::form_q");
  if (q.cols() != n_) {
    GPUQR_THROW(InvalidArgument, "TsqrTree::form_q: Q is " + shape(q.rows(), q.cols()) +
                                     ", expected " + shape(m_, n_));
  }
  if (n_ == 0) return;
  // Q = Q_full [I; 0]. The tree touches only the leaves' first n rows, so only those are set
  // (I at the root's, zeros elsewhere); the leaves then read just those rows of their block.
  auto tops = strided<T>(q.data(), q.ld(), leaves_, 1, leaf_rows_, leaf_rows_, last_rows_);
  GPUQR_DISPATCH(ctx_, tsqr_set_tops<T>, tops, n_, n_);
  for (std::size_t l = levels_.size(); l-- > 0;) apply_level(Op::no_trans, l, q);
  apply_leaves(Op::no_trans, q, true);
}

template class TsqrTree<float>;
template class TsqrTree<double>;

}  // namespace gpuqr::detail
