// HouseholderQR<T>: the factorization object over the dense drivers.
#include <algorithm>
#include <limits>

#include "gpuqr/dense.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"

namespace gpuqr {

namespace {
template <class T>
VectorView<T> as_vector(Matrix<T>& m) {
  return VectorView<T>(m.data(), m.rows(), m.space(), m.device());
}
template <class T>
VectorView<const T> as_vector(const Matrix<T>& m) {
  return VectorView<const T>(m.data(), m.rows(), m.space(), m.device());
}
}  // namespace

template <class T>
void HouseholderQR<T>::require_computed(const char* what) const {
  if (!computed_) {
    GPUQR_THROW(InvalidArgument,
                std::string("HouseholderQR::") + what + ": no factorization; call compute(A)");
  }
}

template <class T>
HouseholderQR<T>& HouseholderQR<T>::compute(MatrixView<const T> a) {
  const MemorySpace space = detail::space_of(ctx_);
  // Check on whichever side the data is, before touching our state (strong guarantee).
  if (a.space() == space) {
    detail::check_view(ctx_, a, "A", "HouseholderQR::compute");
  }
  Matrix<T> qr = Matrix<T>::copy_of(a, space, ctx_.device());
  detail::check_finite<T>(ctx_, qr.view(), "A", "HouseholderQR::compute");
  Matrix<T> tau(std::min(qr.rows(), qr.cols()), 1, space, ctx_.device());
  detail::run_geqrf<T>(ctx_, qr.view(), as_vector(tau));
  qr_ = std::move(qr);
  tau_ = std::move(tau);
  computed_ = true;
  return *this;
}

template <class T>
const Matrix<T>& HouseholderQR<T>::matrix_qr() const {
  require_computed("matrix_qr");
  return qr_;
}

template <class T>
const Matrix<T>& HouseholderQR<T>::h_coeffs() const {
  require_computed("h_coeffs");
  return tau_;
}

template <class T>
Matrix<T> HouseholderQR<T>::matrix_r() const {
  require_computed("matrix_r");
  const std::int64_t k = std::min(rows(), cols());
  Matrix<T> r(k, cols(), qr_.space(), qr_.device());
  GPUQR_DISPATCH(ctx_, copy_upper, qr_.view().block(0, 0, k, cols()), r.view());
  return r;
}

template <class T>
Matrix<T> HouseholderQR<T>::householder_q(QMode mode) const {
  require_computed("householder_q");
  const std::int64_t m = rows();
  const std::int64_t k = std::min(rows(), cols());
  const std::int64_t q_cols = mode == QMode::full ? m : k;
  Matrix<T> q(m, q_cols, qr_.space(), qr_.device());
  // The reflectors fill the first k columns; orgqr ignores what lies above the diagonal.
  // Columns past k (full Q of a wide or tall matrix) start as anything: orgqr sets them.
  GPUQR_DISPATCH(ctx_, copy, qr_.view().block(0, 0, m, k), q.view().block(0, 0, m, k));
  if (q_cols > k) GPUQR_DISPATCH(ctx_, fill, q.view().block(0, k, m, q_cols - k), T(0));
  detail::run_orgqr<T>(ctx_, k, q.view(), as_vector(tau_));
  return q;
}

template <class T>
void HouseholderQR<T>::apply_q(Side side, Op op, MatrixView<T> c) const {
  require_computed("apply_q");
  const std::int64_t k = std::min(rows(), cols());
  ormqr<T>(ctx_, side, op, qr_.view().block(0, 0, rows(), k), as_vector(tau_), c);
}

template <class T>
double HouseholderQR<T>::rcond_estimate() const {
  require_computed("rcond_estimate");
  return detail::diagonal_summary(GPUQR_DISPATCH(ctx_, abs_diagonal, qr_.view())).first;
}

template <class T>
Matrix<T> HouseholderQR<T>::solve(MatrixView<const T> b, LstsqInfo* info) const {
  require_computed("solve");
  GPUQR_CHECK_ARG(rows() >= cols(), "HouseholderQR::solve: the factorization is " +
                                        detail::shape(rows(), cols()) +
                                        "; least squares needs m >= n");
  GPUQR_CHECK_ARG(b.rows() == rows(), "HouseholderQR::solve: B has " +
                                          std::to_string(b.rows()) + " rows, A has " +
                                          std::to_string(rows()));
  const MemorySpace space = detail::space_of(ctx_);
  Matrix<T> work = Matrix<T>::copy_of(b, space, ctx_.device());
  detail::check_finite<T>(ctx_, work.view(), "B", "HouseholderQR::solve");
  LstsqInfo result = detail::solve_factored<T>(ctx_, qr_.view(), as_vector(tau_), work.view());
  if (result.singular() && info == nullptr) {
    GPUQR_THROW(InvalidArgument, "HouseholderQR::solve: R(" +
                                     std::to_string(result.singular_at) + ", " +
                                     std::to_string(result.singular_at) +
                                     ") is exactly zero: A is rank deficient");
  }
  ctx_.synchronize();  // the copy below reads `work` on the host side of the runtime
  Matrix<T> x = Matrix<T>::copy_of(work.view().block(0, 0, cols(), b.cols()), b.space(),
                                   b.space() == MemorySpace::device ? ctx_.device() : -1);
  if (result.singular() && x.space() == MemorySpace::host) {
    for (std::int64_t j = 0; j < x.cols(); ++j)
      for (std::int64_t i = 0; i < x.rows(); ++i) x(i, j) = std::numeric_limits<T>::quiet_NaN();
  } else if (result.singular()) {
    GPUQR_DISPATCH(ctx_, fill, x.view(), std::numeric_limits<T>::quiet_NaN());
  }
  if (info != nullptr) *info = std::move(result);
  return x;
}

template class HouseholderQR<float>;
template class HouseholderQR<double>;

}  // namespace gpuqr
