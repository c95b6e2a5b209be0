// TallSkinnyQR<T>: R with Q kept implicitly. The object owns one allocation: an m x n matrix
// (a copy of A) followed by R and R^{-1} (n x n each). CholeskyQR2 in single-pass form keeps
// Q = A R^{-1} implicit: the copy of A stays A, and Q is applied as A R^{-1} (Q^T C as
// R^{-T} (A^T C), one triangular solve), so the factorization reads the tall data twice after
// the copy and writes nothing tall. Other CholeskyQR runs leave the explicit Q in the m x n
// matrix; Householder QR geqrf's compact form and tau; TSQR the tree (its leaves' reflectors
// in the copy, its levels in the tree object).
#include <algorithm>
#include <limits>

#include "gpuqr/tsqr.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/cholesky_qr.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qrf_ah.hpp"
#include "src/core/tsqr_drivers.hpp"
#include "src/core/tsqr_tree.hpp"

namespace gpuqr {

template <class T>
struct TallSkinnyQR<T>::State {
  explicit State(Context c) : ctx(std::move(c)) {}
  Context ctx;
  TsqrInfo info;
  std::int64_t m = 0, n = 0;
  Matrix<T> store;  // q, r and rinv below, one allocation
  MatrixView<T> q;  // m x n: the explicit Q, A (implicit: the copy, or the caller's A when
                    // borrowed, then only read), or geqrf's compact form (tau set)
  MatrixView<T> r;  // n x n
  MatrixView<T> rinv;  // n x n: R^{-1} when `implicit`
  bool implicit = false;
  Matrix<T> tau;    // n x 1 for the Householder form
  std::unique_ptr<detail::TsqrTree<T>> tree;  // TSQR: the tree over `q` (a copy of A)
  bool compact() const { return !tau.empty(); }
  VectorView<const T> tau_view() const {
    return VectorView<const T>(tau.data(), tau.rows(), tau.space(), tau.device());
  }
};

template <class T>
TallSkinnyQR<T>::TallSkinnyQR(Context ctx, MatrixView<const T> a, const TsqrOptions& options) {
  const char* routine = "TallSkinnyQR";
  const std::int64_t m = a.rows(), n = a.cols();
  const bool householder_auto =
      options.method == TsqrMethod::automatic && n > 0 && m >= n && detail::tall_enough(m, n) &&
      detail::householder_preferred_for_r(m, n, static_cast<int>(sizeof(T)));
  // The NaN/Inf check rides on CholeskyQR's first Gram matrix where CholeskyQR goes first.
  const char* unchecked = detail::check_tall_skinny<T>(ctx, a, options, routine,
                                                       /*cholesky_first=*/!householder_auto)
                              ? routine
                              : nullptr;
  auto state = std::make_unique<State>(ctx);
  const MemorySpace space = detail::space_of(ctx);
  const int dev = ctx.device();
  state->m = m;
  state->n = n;
  if (options.borrow_input && n > 0 && !householder_auto) {
    // R and R^{-1} only; Q stays the caller's A times R^{-1} (read-only from here on).
    state->store = Matrix<T>(2 * n * n, 1, space, dev);
    state->r = MatrixView<T>(state->store.data(), n, n, n, space, dev);
    state->rinv = MatrixView<T>(state->store.data() + n * n, n, n, n, space, dev);
    const bool kept =
        detail::run_borrowed<T>(ctx, a, state->r, state->rinv, options, state->info, unchecked);
    unchecked = nullptr;  // settled: it threw, or A is finite
    if (kept) {
      state->q = MatrixView<T>(const_cast<T*>(a.data()), m, n, a.ld(), space, dev);
      state->implicit = true;
      state->info.input_borrowed = true;
      state_ = std::move(state);
      return;
    }
  }
  state->store = Matrix<T>(std::max<std::int64_t>(m * n + 2 * n * n, 1), 1, space, dev);
  T* base = state->store.data();
  state->q = MatrixView<T>(base, m, n, std::max<std::int64_t>(m, 1), space, dev);
  state->r = MatrixView<T>(base + m * n, n, n, std::max<std::int64_t>(n, 1), space, dev);
  state->rinv = MatrixView<T>(base + m * n + n * n, n, n, std::max<std::int64_t>(n, 1), space,
                              dev);
  const bool householder = options.method == TsqrMethod::householder || householder_auto ||
                           (options.method == TsqrMethod::automatic && !detail::tall_enough(m, n));
  if (n == 0) {
    state->info.method = TsqrMethod::householder;
  } else if (options.method == TsqrMethod::tsqr) {
    GPUQR_DISPATCH(ctx, copy, a, state->q);
    state->tree = std::make_unique<detail::TsqrTree<T>>(ctx, state->q, options.block);
    state->tree->r(state->r);
    state->info.method = TsqrMethod::tsqr;
  } else if (householder || options.method == TsqrMethod::qrf_ah) {
    state->tau = Matrix<T>(n, 1, space, dev);
    GPUQR_DISPATCH(ctx, copy, a, state->q);
    const VectorView<T> tau(state->tau.data(), n, space, dev);
    if (householder) {
      detail::run_householder_geqrf<T>(ctx, state->q, tau, state->info);
    } else {
      state->info.panels_shrunk = detail::run_qrf_ah<T>(ctx, state->q, tau, options.block);
    }
    GPUQR_DISPATCH(ctx, copy_upper, MatrixView<const T>(state->q.block(0, 0, n, n)),
                   state->r);
    state->info.method = householder ? TsqrMethod::householder : TsqrMethod::qrf_ah;
  } else {
    GPUQR_DISPATCH(ctx, copy, a, state->q);
    state->info = detail::run_implicit<T>(ctx, state->q, state->r, state->rinv, options,
                                          state->implicit, unchecked);
  }
  state_ = std::move(state);
}

template <class T>
TallSkinnyQR<T>::~TallSkinnyQR() = default;
template <class T>
TallSkinnyQR<T>::TallSkinnyQR(TallSkinnyQR&&) noexcept = default;
template <class T>
TallSkinnyQR<T>& TallSkinnyQR<T>::operator=(TallSkinnyQR&&) noexcept = default;

template <class T>
std::int64_t TallSkinnyQR<T>::rows() const noexcept {
  return state_ ? state_->m : 0;
}
template <class T>
std::int64_t TallSkinnyQR<T>::cols() const noexcept {
  return state_ ? state_->n : 0;
}
template <class T>
const Context& TallSkinnyQR<T>::context() const noexcept {
  return state_->ctx;
}
template <class T>
const TsqrInfo& TallSkinnyQR<T>::info() const noexcept {
  return state_->info;
}

template <class T>
Matrix<T> TallSkinnyQR<T>::matrix_r() const {
  const State& s = *state_;
  Matrix<T> r(s.n, s.n, s.r.space(), s.r.device());
  GPUQR_DISPATCH(s.ctx, copy, MatrixView<const T>(s.r), r.view());
  return r;
}

template <class T>
Matrix<T> TallSkinnyQR<T>::matrix_q() const {
  const State& s = *state_;
  Matrix<T> q(s.m, s.n, s.q.space(), s.q.device());
  if (s.tree) {
    s.tree->form_q(q.view());
    return q;
  }
  if (s.implicit) {  // Q = A R^{-1}, R^{-1} upper triangular
    detail::multiply_upper<T>(s.ctx, MatrixView<const T>(s.q), MatrixView<const T>(s.rinv),
                              q.view());
    return q;
  }
  GPUQR_DISPATCH(s.ctx, copy, MatrixView<const T>(s.q), q.view());
  if (s.compact()) detail::run_orgqr<T>(s.ctx, s.n, q.view(), s.tau_view());
  return q;
}

template <class T>
Matrix<T> TallSkinnyQR<T>::apply_qt(MatrixView<const T> c) const {
  const State& s = *state_;
  detail::check_view(s.ctx, c, "C", "TallSkinnyQR::apply_qt");
  GPUQR_CHECK_ARG(c.rows() == s.m, "TallSkinnyQR::apply_qt: C has " + std::to_string(c.rows()) +
                                       " rows, Q has " + std::to_string(s.m));
  Matrix<T> out(s.n, c.cols(), s.q.space(), s.q.device());
  if (out.empty()) return out;
  if (s.tree) {
    Matrix<T> work(s.m, c.cols(), s.q.space(), s.q.device());
    GPUQR_DISPATCH(s.ctx, copy, c, work.view());
    s.tree->apply_qt(work.view());
    GPUQR_DISPATCH(s.ctx, copy, MatrixView<const T>(work.view().block(0, 0, s.n, c.cols())),
                   out.view());
    s.ctx.synchronize();  // `work` is freed on return while the copy may still read it
    return out;
  }
  if (!s.compact()) {
    GPUQR_DISPATCH(s.ctx, multiply, Op::trans, MatrixView<const T>(s.q), c, out.view());
    // Implicit Q = A R^{-1}: Q^T C = R^{-T} (A^T C), one n x k triangular solve.
    if (s.implicit)
      GPUQR_DISPATCH(s.ctx, trsm, Uplo::upper, Op::trans, Diag::non_unit,
                     MatrixView<const T>(s.r), out.view());
    return out;
  }
  Matrix<T> work(s.m, c.cols(), s.q.space(), s.q.device());
  GPUQR_DISPATCH(s.ctx, copy, c, work.view());
  detail::run_ormqr<T>(s.ctx, Side::left, Op::trans, MatrixView<const T>(s.q), s.tau_view(),
                       work.view());
  GPUQR_DISPATCH(s.ctx, copy, MatrixView<const T>(work.view().block(0, 0, s.n, c.cols())),
                 out.view());
  s.ctx.synchronize();  // `work` is freed on return while the copy may still read it
  return out;
}

template <class T>
Matrix<T> TallSkinnyQR<T>::apply_q(MatrixView<const T> y) const {
  const State& s = *state_;
  detail::check_view(s.ctx, y, "Y", "TallSkinnyQR::apply_q");
  GPUQR_CHECK_ARG(y.rows() == s.n, "TallSkinnyQR::apply_q: Y has " + std::to_string(y.rows()) +
                                       " rows, R is " + detail::shape(s.n, s.n));
  Matrix<T> out(s.m, y.cols(), s.q.space(), s.q.device());
  if (out.empty()) return out;
  if (s.implicit) {  // Q Y = A (R^{-1} Y)
    Matrix<T> z(s.n, y.cols(), s.q.space(), s.q.device());
    GPUQR_DISPATCH(s.ctx, multiply, Op::no_trans, MatrixView<const T>(s.rinv), y, z.view());
    GPUQR_DISPATCH(s.ctx, multiply, Op::no_trans, MatrixView<const T>(s.q),
                   MatrixView<const T>(z.view()), out.view());
    s.ctx.synchronize();  // `z` is freed on return while the GEMM may still read it
    return out;
  }
  if (!s.compact() && !s.tree) {
    GPUQR_DISPATCH(s.ctx, multiply, Op::no_trans, MatrixView<const T>(s.q), y, out.view());
    return out;
  }
  GPUQR_DISPATCH(s.ctx, fill, out.view(), T(0));
  GPUQR_DISPATCH(s.ctx, copy, y, out.view().block(0, 0, s.n, y.cols()));
  if (s.tree) {
    s.tree->apply_q(out.view());
    return out;
  }
  detail::run_ormqr<T>(s.ctx, Side::left, Op::no_trans, MatrixView<const T>(s.q), s.tau_view(),
                       out.view());
  return out;
}

template <class T>
Matrix<T> TallSkinnyQR<T>::solve(MatrixView<const T> b) const {
  const State& s = *state_;
  detail::check_view(s.ctx, b, "B", "TallSkinnyQR::solve");
  GPUQR_CHECK_ARG(b.rows() == s.m, "TallSkinnyQR::solve: B has " + std::to_string(b.rows()) +
                                       " rows, A has " + std::to_string(s.m));
  detail::check_finite<T>(s.ctx, b, "B", "TallSkinnyQR::solve");
  Matrix<T> x = apply_qt(b);
  if (x.empty()) return x;
  const TriangularInfo tri =
      trtrs<T>(s.ctx, Uplo::upper, Op::no_trans, Diag::non_unit, MatrixView<const T>(s.r),
               x.view());
  if (tri.singular()) {
    GPUQR_THROW(InvalidArgument, "TallSkinnyQR::solve: R(" + std::to_string(tri.singular_at) +
                                     ", " + std::to_string(tri.singular_at) +
                                     ") is exactly zero: A is rank deficient");
  }
  return x;
}

template class TallSkinnyQR<float>;
template class TallSkinnyQR<double>;

}  // namespace gpuqr
