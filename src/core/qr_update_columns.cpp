// UpdatableQR<T>: removing columns (band reduction of R's trailing part), adding columns and the
// rank-k update (Q^T U, Householder on its lower part, bottom-up windowed Householder, band
// reduction): Andrew & Dingle section 3.1-3.2, with Householder in place of their Givens.
// Backend-agnostic: every step is a leaf, enqueued in order on the context; each update sizes
// one scratch before its loops (src/core/qr_update_reduce.hpp). Every check that can throw
// runs before the first write to R, d or Q.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "gpuqr/update.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qr_update_internal.hpp"
#include "src/core/qr_update_reduce.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr {

namespace {

using detail::BandReducer;
using detail::UpdateScratch;

template <class T>
VectorView<T> head(VectorView<T> v, std::int64_t size) {
  return VectorView<T>(v.data(), size, v.space(), v.device());
}

/// Inverse of the row order (storage row -> row of A~), or empty when it is the identity.
std::vector<std::int64_t> storage_to_row(const std::vector<std::int64_t>& order) {
  bool identity = true;
  for (std::size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == std::int64_t(i);
  if (identity) return {};
  std::vector<std::int64_t> inv(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inv[static_cast<std::size_t>(order[i])] = std::int64_t(i);
  return inv;
}

}  // namespace

template <class T>
void UpdatableQR<T>::check_columns_block(const char* routine, MatrixView<const T> u) const {
  GPUQR_CHECK_ARG(q_mode_ == UpdateQ::full,
                  std::string(routine) + ": needs the full Q (UpdateQ::full): the new columns' "
                      "part outside range(Q) and d's rows n..m live in Q's last m - n columns; "
                      "this object keeps " + (q_mode_ == UpdateQ::thin ? "a thin Q" : "no Q") +
                      ": rebuild it from A~ with UpdateQ::full");
  GPUQR_CHECK_ARG(u.rows() == m_, std::string(routine) + ": U is " +
                                      detail::shape(u.rows(), u.cols()) + ", A~ has " +
                                      std::to_string(m_) + " rows");
  if (u.space() == detail::space_of(ctx_) && !u.empty()) detail::check_view(ctx_, u, "U", routine);
}

template <class T>
UpdateInfo UpdatableQR<T>::remove_columns(std::int64_t k, std::int64_t p) {
  const char* routine = "UpdatableQR::remove_columns";
  GPUQR_CHECK_ARG(p >= 0 && k >= 0 && k + p <= n_,
                  std::string(routine) + ": columns " + std::to_string(k) + ".." +
                      std::to_string(k + p - 1) + " (k = " + std::to_string(k) + ", p = " +
                      std::to_string(p) + ") are not within the " + std::to_string(n_) +
                      " columns of A~");
  GPUQR_CHECK_ARG(p < n_, std::string(routine) + ": removing all " + std::to_string(n_) +
                              " columns leaves no matrix to factor");
  UpdateInfo info;
  if (p == 0) return last_ = info;
  if (choose_rebuild(UpdateOp::remove_columns, p, k, info)) {
    rebuild(UpdateOp::remove_columns, k, p, MatrixView<const T>(), MatrixView<const T>());
    info.refactored = true;
    return last_ = info;
  }
  const std::int64_t n = n_, t = n - k - p;  // t: the trailing columns that stay
  const std::int64_t nb = std::min(detail::update_block_width(ctx_), std::max<std::int64_t>(t, 1));
  MatrixView<T> q = q_view();
  MatrixView<T> d = d_view();
  typename BandReducer<T>::Sizes sizes;
  sizes.nb = nb;
  sizes.hmax = std::min(n - k, nb + p);
  sizes.rest_cols = t;
  sizes.mq = q.empty() ? 0 : q.rows();
  sizes.nrhs = nrhs_;
  UpdateScratch scratch(ctx_, UpdateScratch::piece_bytes(n * t, sizeof(T)) +
                                  BandReducer<T>::bytes(sizes, sizeof(T)));
  MatrixView<T> w = scratch.matrix<T>(n, t);
  BandReducer<T> reducer(ctx_, scratch, sizes, q, d);
  MatrixView<T> r = r_view();
  std::int64_t launches = 0;
  if (t > 0) {
    // The trailing columns through scratch (they move left by p); rows k..n of them are upper
    // triangular plus p subdiagonals: one band reduction, applied to d and Q's columns k..n.
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(r.block(0, k + p, n, t)), w);
    reducer.reduce_band(w.block(k, 0, n - k, t), p, k);
    if (k > 0) GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(w.block(0, 0, k, t)), r.block(0, k, k, t));
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(w.block(k, 0, t, t)), r.block(k, k, t, t));
    launches += k > 0 ? 3 : 2;
  }
  n_ = n - p;  // a thin Q's last p columns and d's rows n-p..n join the complement
  info.blocks = reducer.blocks();
  info.device_launches = ctx_.is_cuda() ? launches + reducer.launches() : 0;
  return last_ = info;
}

template <class T>
UpdateInfo UpdatableQR<T>::add_columns(std::int64_t k, MatrixView<const T> u) {
  const char* routine = "UpdatableQR::add_columns";
  check_columns_block(routine, u);
  GPUQR_CHECK_ARG(k >= 0 && k <= n_, std::string(routine) + ": position k = " +
                                         std::to_string(k) + " is outside 0.." +
                                         std::to_string(n_));
  const std::int64_t m = m_, n = n_, p = u.cols(), nrhs = nrhs_;
  GPUQR_CHECK_ARG(n + p <= m, std::string(routine) + ": adding " + std::to_string(p) +
                                  " columns to " + std::to_string(n) + " gives more columns than "
                                  "the " + std::to_string(m) + " rows (A~ would be rank deficient)");
  UpdateInfo info;
  if (p == 0) return last_ = info;
  if (choose_rebuild(UpdateOp::add_columns, p, k, info)) {
    rebuild(UpdateOp::add_columns, k, p, u, MatrixView<const T>());
    info.refactored = true;
    return last_ = info;
  }
  const std::int64_t nb = detail::update_block_width(ctx_), s = nb;
  const std::int64_t nk = n - k, rows_m = nk + p;  // M: rows k..n+p of [W | R's trailing part]
  const std::vector<std::int64_t> inv = storage_to_row(row_order_);
  typename BandReducer<T>::Sizes sizes;
  sizes.nb = nb;
  sizes.hmax = std::min(rows_m, s + p + nb);
  sizes.rest_cols = p + nk;
  sizes.mq = m;
  sizes.nrhs = nrhs;
  const std::size_t es = sizeof(T);
  auto bytes = [&](std::int64_t count) { return UpdateScratch::piece_bytes(count, es); };
  UpdateScratch scratch(ctx_, 3 * bytes(m * p) + bytes(p) + bytes(k * nk) +
                                  bytes(rows_m * (p + nk)) +
                                  UpdateScratch::piece_bytes(std::int64_t(inv.size()), sizeof(std::int64_t)) +
                                  BandReducer<T>::bytes(sizes, es));
  MatrixView<T> ua = scratch.matrix<T>(m, p);
  MatrixView<T> us = scratch.matrix<T>(m, p);
  MatrixView<T> w = scratch.matrix<T>(m, p);
  VectorView<T> tau = scratch.vector<T>(p);
  MatrixView<T> rtop = scratch.matrix<T>(k, nk);
  MatrixView<T> mm = scratch.matrix<T>(rows_m, p + nk);
  const VectorView<const std::int64_t> inv_d = scratch.upload(inv);
  detail::copy_into<T>(ctx_, u, ua);
  detail::check_finite<T>(ctx_, ua, "U", routine);
  if (inv.empty()) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(ua), us);
  } else {  // U's rows into Q's storage order
    GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(ua), inv_d, std::int64_t{0}, false, us);
  }
  MatrixView<T> q = q_view();
  MatrixView<T> d = d_view();
  // W = Q^T U; W's rows n..m (the part outside range(A~)) by one Householder QR: its R is the
  // new columns' pivots, checked before anything of the object changes.
  GPUQR_DISPATCH(ctx_, multiply, Op::trans, MatrixView<const T>(q), MatrixView<const T>(us), w);
  MatrixView<T> lower = w.block(n, 0, m - n, p);
  detail::run_geqrf_tall<T>(ctx_, lower, tau);
  std::int64_t launches = 3 + detail::blocked_launches(p, true);
  detail::check_pivots(GPUQR_DISPATCH(ctx_, abs_diagonal, MatrixView<const T>(lower.block(0, 0, p, p))),
               GPUQR_DISPATCH(ctx_, column_norms, MatrixView<const T>(ua)), k,
               double(std::max(m, n + p)) * std::numeric_limits<T>::epsilon(), routine,
               "U's column");

  reserve_cols(n + p);
  const MatrixView<const T> lower_c = lower;
  detail::run_ormqr<T>(ctx_, Side::right, Op::no_trans, lower_c, VectorView<const T>(tau),
                       q.block(0, n, m, m - n));
  if (nrhs > 0) {
    detail::run_ormqr<T>(ctx_, Side::left, Op::trans, lower_c, VectorView<const T>(tau),
                         d.block(n, 0, m - n, nrhs));
  }
  launches += (nrhs > 0 ? 2 : 1) * detail::blocked_launches(p, false);
  MatrixView<T> r = r_.view().block(0, 0, n + p, n + p);
  // M = [W(k:n); R22 | R(k:n, k:n); 0]; R(0:k, k:n) aside (it moves right by p).
  if (nk > 0) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(w.block(k, 0, nk, p)), mm.block(0, 0, nk, p));
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(r.block(k, k, nk, nk)), mm.block(0, p, nk, nk));
    GPUQR_DISPATCH(ctx_, fill, mm.block(nk, p, p, nk), T(0));
    launches += 3;
  }
  GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(lower.block(0, 0, p, p)), mm.block(nk, 0, p, p));
  ++launches;
  if (k > 0 && nk > 0) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(r.block(0, k, k, nk)), rtop);
    ++launches;
  }
  BandReducer<T> reducer(ctx_, scratch, sizes, q, d);
  reducer.reduce_from_bottom(mm, p, s, k);
  if (nk > 0 && s > 1) reducer.reduce_band(mm.block(p, p, nk, nk), s - 1, k + p);
  // R~ = [R(0:k, 0:k), W(0:k), R(0:k, k:n); 0, M].
  if (k > 0) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(w.block(0, 0, k, p)), r.block(0, k, k, p));
    GPUQR_DISPATCH(ctx_, fill, r.block(k, 0, nk + p, k), T(0));
    launches += 2;
    if (nk > 0) {
      GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(rtop), r.block(0, k + p, k, nk));
      ++launches;
    }
  }
  GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(mm), r.block(k, k, nk + p, nk + p));
  ++launches;
  n_ = n + p;
  info.blocks = reducer.blocks();
  info.device_launches = ctx_.is_cuda() ? launches + reducer.launches() : 0;
  return last_ = info;
}

template <class T>
UpdateInfo UpdatableQR<T>::update_rank_k(MatrixView<const T> u, MatrixView<const T> v) {
  const char* routine = "UpdatableQR::update_rank_k";
  check_columns_block(routine, u);
  const std::int64_t m = m_, n = n_, r = u.cols(), nrhs = nrhs_;
  GPUQR_CHECK_ARG(v.rows() == n && v.cols() == r,
                  std::string(routine) + ": V is " + detail::shape(v.rows(), v.cols()) +
                      ", expected " + detail::shape(n, r) + " (A~'s columns x U's columns)");
  GPUQR_CHECK_ARG(r <= m, std::string(routine) + ": rank " + std::to_string(r) +
                              " exceeds the " + std::to_string(m) + " rows");
  if (v.space() == detail::space_of(ctx_) && !v.empty()) detail::check_view(ctx_, v, "V", routine);
  UpdateInfo info;
  if (r == 0) return last_ = info;
  if (choose_rebuild(UpdateOp::rank_k, r, 0, info)) {
    rebuild(UpdateOp::rank_k, 0, r, u, v);
    info.refactored = true;
    return last_ = info;
  }
  const std::int64_t nb = detail::update_block_width(ctx_), s = nb;
  const std::int64_t r2 = std::min(r, m - n), rows_m = n + r2;
  const std::vector<std::int64_t> inv = storage_to_row(row_order_);
  typename BandReducer<T>::Sizes sizes;
  sizes.nb = nb;
  sizes.hmax = std::min(rows_m, s + r + nb);
  sizes.rest_cols = r + n;
  sizes.mq = m;
  sizes.nrhs = nrhs;
  const std::size_t es = sizeof(T);
  auto bytes = [&](std::int64_t count) { return UpdateScratch::piece_bytes(count, es); };
  UpdateScratch scratch(ctx_, 3 * bytes(m * r) + bytes(r) + bytes(n * r) +
                                  bytes(rows_m * (r + n)) +
                                  UpdateScratch::piece_bytes(std::int64_t(inv.size()), sizeof(std::int64_t)) +
                                  BandReducer<T>::bytes(sizes, es));
  MatrixView<T> ua = scratch.matrix<T>(m, r);
  MatrixView<T> us = scratch.matrix<T>(m, r);
  MatrixView<T> w = scratch.matrix<T>(m, r);
  VectorView<T> tau = scratch.vector<T>(r);
  MatrixView<T> vv = scratch.matrix<T>(n, r);
  MatrixView<T> mm = scratch.matrix<T>(rows_m, r + n);
  const VectorView<const std::int64_t> inv_d = scratch.upload(inv);
  detail::copy_into<T>(ctx_, u, ua);
  detail::copy_into<T>(ctx_, v, vv);
  detail::check_finite<T>(ctx_, ua, "U", routine);
  detail::check_finite<T>(ctx_, vv, "V", routine);
  // Nothing below throws on valid input: the object changes from here on.
  if (inv.empty()) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(ua), us);
  } else {
    GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(ua), inv_d, std::int64_t{0}, false, us);
  }
  MatrixView<T> q = q_view();
  MatrixView<T> d = d_view();
  GPUQR_DISPATCH(ctx_, multiply, Op::trans, MatrixView<const T>(q), MatrixView<const T>(us), w);
  std::int64_t launches = 2;
  MatrixView<T> lower = w.block(n, 0, m - n, r);
  if (r2 > 0) {
    detail::run_geqrf_tall<T>(ctx_, lower, head(tau, r2));
    const MatrixView<const T> refl = lower.block(0, 0, m - n, r2);
    detail::run_ormqr<T>(ctx_, Side::right, Op::no_trans, refl, VectorView<const T>(head(tau, r2)),
                         q.block(0, n, m, m - n));
    if (nrhs > 0) {
      detail::run_ormqr<T>(ctx_, Side::left, Op::trans, refl, VectorView<const T>(head(tau, r2)),
                           d.block(n, 0, m - n, nrhs));
    }
    launches += detail::blocked_launches(r2, true) + (nrhs > 0 ? 2 : 1) * detail::blocked_launches(r2, false);
  }
  // M = [W(0:n); R22 | R; 0]: W to an r x r triangle X from the bottom up (R becomes banded),
  // then R's top rows += X V^T, then the band (s + r - 1 subdiagonals) reduced.
  MatrixView<T> rr = r_view();
  GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(w.block(0, 0, n, r)), mm.block(0, 0, n, r));
  GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(rr), mm.block(0, r, n, n));
  launches += 2;
  if (r2 > 0) {
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(lower.block(0, 0, r2, r)), mm.block(n, 0, r2, r));
    GPUQR_DISPATCH(ctx_, fill, mm.block(n, r, r2, n), T(0));
    launches += 2;
  }
  BandReducer<T> reducer(ctx_, scratch, sizes, q, d);
  reducer.reduce_from_bottom(mm, r, s, 0);
  GPUQR_DISPATCH(ctx_, multiply_add, Op::no_trans, Op::trans, T(1),
                 MatrixView<const T>(mm.block(0, 0, r, r)), MatrixView<const T>(vv),
                 mm.block(0, r, r, n));
  reducer.reduce_band(mm.block(0, r, rows_m, n), std::min(s + r - 1, rows_m - 1), 0);
  GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(mm.block(0, r, n, n)), rr);
  launches += 2;
  info.blocks = reducer.blocks();
  info.device_launches = ctx_.is_cuda() ? launches + reducer.launches() : 0;
  return last_ = info;
}

template UpdateInfo UpdatableQR<float>::remove_columns(std::int64_t, std::int64_t);
template UpdateInfo UpdatableQR<double>::remove_columns(std::int64_t, std::int64_t);
template UpdateInfo UpdatableQR<float>::add_columns(std::int64_t, MatrixView<const float>);
template UpdateInfo UpdatableQR<double>::add_columns(std::int64_t, MatrixView<const double>);
template UpdateInfo UpdatableQR<float>::update_rank_k(MatrixView<const float>, MatrixView<const float>);
template UpdateInfo UpdatableQR<double>::update_rank_k(MatrixView<const double>,
                                                       MatrixView<const double>);

}  // namespace gpuqr
