// UpdatableQR<T>: the update policy (update, refactor, automatic by the cost model) and the
// rebuild it falls back to: A~ = Q(:, 0:n) R and b~ = Q d from the full Q (no copy of A~ is
// kept), the column change applied to A~, then a fresh factorization in Q's storage row order
// (so the row map stays valid). The fresh object replaces this one only once it is complete.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "gpuqr/update.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qr_update_internal.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr {

template <class T>
void UpdatableQR<T>::set_policy(UpdatePolicy policy, const UpdateCostModel* model) {
  GPUQR_CHECK_ARG(policy == UpdatePolicy::update || q_mode_ == UpdateQ::full,
                  std::string("UpdatableQR::set_policy: refactoring rebuilds A~ = Q R and "
                              "b~ = Q d, which needs the full Q (UpdateQ::full); this object "
                              "keeps ") + (q_mode_ == UpdateQ::thin ? "a thin Q" : "no Q"));
  if (policy == UpdatePolicy::automatic) {
    model_ = std::make_shared<const UpdateCostModel>(model != nullptr ? *model
                                                                      : UpdateCostModel::calibrate(ctx_));
  }
  policy_ = policy;
}

template <class T>
bool UpdatableQR<T>::choose_rebuild(UpdateOp op, std::int64_t p, std::int64_t k,
                                    UpdateInfo& info) {
  if (policy_ == UpdatePolicy::update) return false;
  if (policy_ == UpdatePolicy::refactor) return true;
  const UpdatePrediction pr = model_->predict(op, m_, n_, p, k, sizeof(T) == sizeof(double),
                                              q_mode_, nrhs_);
  info.predicted_update_seconds = pr.update_seconds;
  info.predicted_rebuild_seconds = pr.rebuild_seconds;
  return pr.rebuild_seconds < pr.update_seconds;
}

template <class T>
void UpdatableQR<T>::rebuild(UpdateOp op, std::int64_t k, std::int64_t p, MatrixView<const T> u,
                             MatrixView<const T> v) {
  const char* routine = op == UpdateOp::add_columns   ? "UpdatableQR::add_columns"
                        : op == UpdateOp::rank_k      ? "UpdatableQR::update_rank_k"
                                                      : "UpdatableQR::remove_columns";
  const MemorySpace space = detail::space_of(ctx_);
  const int dev = ctx_.device();
  const std::int64_t m = m_, n = n_;
  // U and V in, checked; U's rows into Q's storage order.
  Matrix<T> us, vv;
  if (op != UpdateOp::remove_columns) {
    Matrix<T> ua(m, p, space, dev);
    detail::copy_into<T>(ctx_, u, ua.view());
    detail::check_finite<T>(ctx_, ua.view(), "U", routine);
    us = Matrix<T>(m, p, space, dev);
    std::vector<std::int64_t> inv(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) inv[static_cast<std::size_t>(row_order_[i])] = i;
    detail::UpdateScratch scratch(ctx_, detail::UpdateScratch::piece_bytes(m, sizeof(std::int64_t)));
    GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(ua.view()), scratch.upload(inv),
                   std::int64_t{0}, false, us.view());
    ctx_.synchronize();  // ua and the uploaded indices are released on return
  }
  if (op == UpdateOp::rank_k) {
    vv = Matrix<T>(n, p, space, dev);
    detail::copy_into<T>(ctx_, v, vv.view());
    detail::check_finite<T>(ctx_, vv.view(), "V", routine);
  }
  // A~ (storage row order) and b~ from the factors.
  Matrix<T> a(m, n, space, dev);
  const MatrixView<const T> q = q_.view().block(0, 0, m, m);
  GPUQR_DISPATCH(ctx_, multiply, Op::no_trans, q.block(0, 0, m, n), MatrixView<const T>(r_view()), a.view());
  const std::int64_t n2 = op == UpdateOp::remove_columns ? n - p
                          : op == UpdateOp::add_columns  ? n + p
                                                         : n;
  Matrix<T> a2(m, n2, space, dev);
  const MatrixView<const T> ac = a.view();
  if (op == UpdateOp::remove_columns) {
    if (k > 0) GPUQR_DISPATCH(ctx_, copy, ac.block(0, 0, m, k), a2.view().block(0, 0, m, k));
    if (n - k - p > 0)
      GPUQR_DISPATCH(ctx_, copy, ac.block(0, k + p, m, n - k - p), a2.view().block(0, k, m, n - k - p));
  } else if (op == UpdateOp::add_columns) {
    if (k > 0) GPUQR_DISPATCH(ctx_, copy, ac.block(0, 0, m, k), a2.view().block(0, 0, m, k));
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(us.view()), a2.view().block(0, k, m, p));
    if (n - k > 0)
      GPUQR_DISPATCH(ctx_, copy, ac.block(0, k, m, n - k), a2.view().block(0, k + p, m, n - k));
  } else {
    GPUQR_DISPATCH(ctx_, copy, ac, a2.view());
    GPUQR_DISPATCH(ctx_, multiply_add, Op::no_trans, Op::trans, T(1),
                   MatrixView<const T>(us.view()), MatrixView<const T>(vv.view()), a2.view());
  }
  Matrix<T> b(m, nrhs_, space, dev);
  if (nrhs_ > 0) {
    GPUQR_DISPATCH(ctx_, multiply, Op::no_trans, q, MatrixView<const T>(d_.view().block(0, 0, m, nrhs_)),
                   b.view());
  }
  UpdatableQR<T> fresh(ctx_, MatrixView<const T>(a2.view()), MatrixView<const T>(b.view()), q_mode_);
  if (op == UpdateOp::add_columns) {
    // Every pivot against its column's norm: a new column in the span of the others shows up
    // as a small pivot at its own position or at a later one.
    detail::check_pivots(GPUQR_DISPATCH(ctx_, abs_diagonal, MatrixView<const T>(fresh.r_view())),
                         GPUQR_DISPATCH(ctx_, column_norms, MatrixView<const T>(a2.view())), 0,
                         double(std::max(m, n2)) * std::numeric_limits<T>::epsilon(), routine,
                         "column");
  }
  fresh.row_order_ = std::move(row_order_);
  fresh.policy_ = policy_;
  fresh.model_ = std::move(model_);
  *this = std::move(fresh);
}

#define GPUQR_INSTANTIATE_POLICY(T)                                                         \
  template void UpdatableQR<T>::set_policy(UpdatePolicy, const UpdateCostModel*);           \
  template bool UpdatableQR<T>::choose_rebuild(UpdateOp, std::int64_t, std::int64_t,        \
                                               UpdateInfo&);                                \
  template void UpdatableQR<T>::rebuild(UpdateOp, std::int64_t, std::int64_t,               \
                                        MatrixView<const T>, MatrixView<const T>);
GPUQR_INSTANTIATE_POLICY(float)
GPUQR_INSTANTIATE_POLICY(double)

}  // namespace gpuqr
