// UpdatableQR<T>: construction, storage, accessors and solve. The row updates themselves are
// in qr_update_rows.cpp.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "gpuqr/update.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qr_update_internal.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr {

namespace {

/// A copy of `src` (any space) in the context's memory.
template <class T>
Matrix<T> copy_in(const Context& ctx, MatrixView<const T> src, const char* what) {
  if (src.space() == detail::space_of(ctx)) {
    detail::check_view(ctx, src, what, "UpdatableQR");
  }
  return Matrix<T>::copy_of(src, detail::space_of(ctx), ctx.device());
}

}  // namespace

template <class T>
UpdatableQR<T>::UpdatableQR(Context ctx, MatrixView<const T> a, MatrixView<const T> b,
                            UpdateQ q_mode)
    : ctx_(std::move(ctx)), q_mode_(q_mode) {
  const std::int64_t m = a.rows(), n = a.cols();
  GPUQR_CHECK_ARG(n >= 1 && m >= n, "UpdatableQR: A is " + detail::shape(m, n) +
                                        "; updating needs m >= n >= 1");
  GPUQR_CHECK_ARG(b.cols() == 0 || b.rows() == m,
                  "UpdatableQR: b is " + detail::shape(b.rows(), b.cols()) + ", A has " +
                      std::to_string(m) + " rows");
  const std::int64_t k = b.cols();
  const MemorySpace space = detail::space_of(ctx_);
  const int dev = ctx_.device();
  Matrix<T> qr = copy_in(ctx_, a, "A");
  detail::check_finite<T>(ctx_, qr.view(), "A", "UpdatableQR");
  Matrix<T> bb;
  if (k > 0) {
    bb = copy_in(ctx_, b, "b");
    detail::check_finite<T>(ctx_, bb.view(), "b", "UpdatableQR");
  }
  m_ = m;
  n_ = n;
  nrhs_ = k;
  Matrix<T> tau(n, 1, space, dev);
  VectorView<T> tau_v(tau.data(), n, space, dev);
  detail::run_geqrf<T>(ctx_, qr.view(), tau_v);
  r_ = Matrix<T>(n, n, space, dev);
  GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(qr.view().block(0, 0, n, n)), r_.view());
  d_ = Matrix<T>(m + m / 4 + 16, std::max<std::int64_t>(k, 1), space, dev);  // room to add rows
  if (k > 0) {
    GPUQR_DISPATCH(ctx_, copy<T>, bb.view(), d_view());
    detail::run_ormqr<T>(ctx_, Side::left, Op::trans, qr.view(), VectorView<const T>(tau_v),
                         d_view());
  }
  if (q_mode_ != UpdateQ::none) {
    q_ = Matrix<T>(m, q_mode_ == UpdateQ::full ? m : n, space, dev);
    MatrixView<T> q = q_view();
    GPUQR_DISPATCH(ctx_, copy<T>, qr.view(), q.block(0, 0, m, n));
    if (q.cols() > n) GPUQR_DISPATCH(ctx_, fill, q.block(0, n, m, q.cols() - n), T(0));
    detail::run_orgqr<T>(ctx_, n, q, VectorView<const T>(tau_v));
  }
  row_order_.resize(static_cast<std::size_t>(m));
  std::iota(row_order_.begin(), row_order_.end(), std::int64_t{0});
  ctx_.synchronize();  // qr and tau are freed on return while queued work reads them
}

template <class T>
MatrixView<T> UpdatableQR<T>::q_view() {
  if (q_mode_ == UpdateQ::none) return MatrixView<T>();
  return q_.view().block(0, 0, m_, q_mode_ == UpdateQ::full ? m_ : n_);
}

template <class T>
MatrixView<T> UpdatableQR<T>::d_view() {
  return d_.view().block(0, 0, m_, nrhs_);
}

template <class T>
void UpdatableQR<T>::reserve_rows(std::int64_t rows) {
  // d and Q grow apart: d (m x k) is built with room for a quarter more rows, so that adding
  // rows to a new object neither allocates nor waits; Q is built to size (m^2 for the full Q).
  const bool grow_d = rows > d_.rows();
  const bool grow_q = q_mode_ != UpdateQ::none && rows > q_.rows();
  if (!grow_d && !grow_q) return;
  auto capacity = [rows](std::int64_t have) { return std::max(rows, have + have / 4 + 16); };
  const MemorySpace space = detail::space_of(ctx_);
  const int dev = ctx_.device();
  Matrix<T> d, q;
  if (grow_d) {
    d = Matrix<T>(capacity(d_.rows()), d_.cols(), space, dev);
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(d_view()), d.view().block(0, 0, m_, nrhs_));
  }
  if (grow_q) {
    const std::int64_t cap = capacity(q_.rows());
    MatrixView<T> old = q_view();
    q = Matrix<T>(cap, q_mode_ == UpdateQ::full ? cap : n_, space, dev);
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(old),
                   q.view().block(0, 0, old.rows(), old.cols()));
  }
  ctx_.synchronize();  // the old storage is freed below while the copies may be queued
  if (grow_d) d_ = std::move(d);
  if (grow_q) q_ = std::move(q);
}

template <class T>
void UpdatableQR<T>::reserve_cols(std::int64_t cols) {
  if (cols <= r_.rows()) return;
  const std::int64_t cap = std::max(cols, r_.rows() + r_.rows() / 4 + 16);
  Matrix<T> r(cap, cap, detail::space_of(ctx_), ctx_.device());
  GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(r_view()), r.view().block(0, 0, n_, n_));
  ctx_.synchronize();  // the old R is freed below while the copy may be queued
  r_ = std::move(r);
}

template <class T>
Matrix<T> UpdatableQR<T>::matrix_r() const {
  Matrix<T> r(n_, n_, detail::space_of(ctx_), ctx_.device());
  GPUQR_DISPATCH(ctx_, copy, r_view(), r.view());
  return r;
}

template <class T>
Matrix<T> UpdatableQR<T>::matrix_d() const {
  Matrix<T> d(m_, nrhs_, detail::space_of(ctx_), ctx_.device());
  GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(d_.view().block(0, 0, m_, nrhs_)), d.view());
  return d;
}

template <class T>
Matrix<T> UpdatableQR<T>::matrix_q() const {
  GPUQR_CHECK_ARG(q_mode_ != UpdateQ::none,
                  "UpdatableQR::matrix_q: this object keeps no Q (UpdateQ::none)");
  const std::int64_t cols = q_mode_ == UpdateQ::full ? m_ : n_;
  Matrix<T> q(m_, cols, detail::space_of(ctx_), ctx_.device());
  detail::UpdateScratch scratch(ctx_, detail::UpdateScratch::piece_bytes(m_, sizeof(std::int64_t)));
  VectorView<const std::int64_t> rows = scratch.upload(row_order_);
  GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(q_.view().block(0, 0, m_, cols)), rows,
                 std::int64_t{0}, false, q.view());
  return q;
}

template <class T>
Matrix<T> UpdatableQR<T>::solve(LstsqInfo* info) const {
  const MemorySpace space = detail::space_of(ctx_);
  Matrix<T> x(n_, nrhs_, space, ctx_.device());
  LstsqInfo result;
  const MatrixView<const T> d = d_.view().block(0, 0, m_, nrhs_);
  if (nrhs_ > 0) {
    // Enqueued before R's diagonal is read back, so that the solve follows the update on the
    // device without waiting for the host; an exactly singular R gets NaN below.
    GPUQR_DISPATCH(ctx_, copy, d.block(0, 0, n_, nrhs_), x.view());
    GPUQR_DISPATCH(ctx_, trsm, Uplo::upper, Op::no_trans, Diag::non_unit, r_view(), x.view());
  }
  // R's diagonal and the residual norms ||d(n:m, j)|| come back together (one host round trip).
  std::vector<double> values =
      GPUQR_DISPATCH(ctx_, diagonal_and_norms, r_view(), d.block(n_, 0, m_ - n_, nrhs_));
  const auto split = values.begin() + static_cast<std::ptrdiff_t>(n_);
  result.residual_norms.assign(split, values.end());
  values.erase(split, values.end());
  const auto [rcond, zero_at] = detail::diagonal_summary(values);
  result.rcond_estimate = rcond;
  result.singular_at = zero_at;
  if (nrhs_ > 0 && result.singular())
    GPUQR_DISPATCH(ctx_, fill, x.view(), std::numeric_limits<T>::quiet_NaN());
  if (result.singular() && info == nullptr) {
    GPUQR_THROW(InvalidArgument, "UpdatableQR::solve: R(" + std::to_string(result.singular_at) +
                                     ", " + std::to_string(result.singular_at) +
                                     ") is exactly zero: A~ is rank deficient");
  }
  if (info != nullptr) *info = std::move(result);
  return x;
}

template class UpdatableQR<float>;
template class UpdatableQR<double>;

}  // namespace gpuqr
