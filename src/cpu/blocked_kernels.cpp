// CPU backend of the blocked-QR leaves: LAPACK's geqr2, larft and larfb. The reference twins
// of src/cuda/blocked_kernels.cu and src/cuda/panel_qr.cu.
#include "src/core/blocked_kernels.hpp"

#include <vector>

#include "src/cpu/lapack_wrappers.hpp"

namespace gpuqr::kernels::cpu {

using lapack::check_info;
using lapack::geqr2;
using lapack::to_int;

namespace {

lapack_int larft(lapack_int n, lapack_int k, const float* v, lapack_int ldv, const float* tau,
                 float* t, lapack_int ldt) {
  return LAPACKE_slarft_work(LAPACK_COL_MAJOR, 'F', 'C', n, k, v, ldv, tau, t, ldt);
}
lapack_int larft(lapack_int n, lapack_int k, const double* v, lapack_int ldv,
                 const double* tau, double* t, lapack_int ldt) {
  return LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', n, k, v, ldv, tau, t, ldt);
}
lapack_int larfb(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                 const float* v, lapack_int ldv, const float* t, lapack_int ldt, float* c,
                 lapack_int ldc, float* work, lapack_int ldwork) {
  return LAPACKE_slarfb_work(LAPACK_COL_MAJOR, side, trans, 'F', 'C', m, n, k, v, ldv, t, ldt,
                             c, ldc, work, ldwork);
}
lapack_int larfb(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                 const double* v, lapack_int ldv, const double* t, lapack_int ldt, double* c,
                 lapack_int ldc, double* work, lapack_int ldwork) {
  return LAPACKE_dlarfb_work(LAPACK_COL_MAJOR, side, trans, 'F', 'C', m, n, k, v, ldv, t, ldt,
                             c, ldc, work, ldwork);
}

}  // namespace

std::int64_t max_panel_width(detail::ContextImpl&, int, std::int64_t) { return 32; }
bool panel_waits_for_host(detail::ContextImpl&, int, std::int64_t, std::int64_t) {
  return false;  // everything here runs as it is called
}

template <class T>
void panel_qr(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
              MatrixView<T> v, MatrixView<T> t) {
  if (panel.empty()) return;
  std::vector<T> work(static_cast<std::size_t>(panel.cols()));
  check_info(geqr2(to_int(panel.rows(), "m"), to_int(panel.cols(), "n"), panel.data(),
                   to_int(panel.ld(), "lda"), tau.data(), work.data()),
             "geqr2");
  form_v<T>(ctx, panel, v);
  if (!t.empty()) larft<T>(ctx, v, VectorView<const T>(tau), t, t);
}

template <class T>
void panel_qr_update(detail::ContextImpl& ctx, MatrixView<T> panel, std::int64_t ib,
                     VectorView<T> tau, MatrixView<T> v, MatrixView<T> t, MatrixView<T> work) {
  const std::int64_t h = panel.rows(), w = panel.cols();
  panel_qr<T>(ctx, panel.block(0, 0, h, ib), tau, v, t);
  if (w > ib) {
    larfb<T>(ctx, Side::left, Op::trans, MatrixView<const T>(v), MatrixView<const T>(t),
             panel.block(0, ib, h, w - ib), work);
  }
}

template <class T>
void form_v(detail::ContextImpl&, MatrixView<const T> qr, MatrixView<T> v) {
  if (qr.empty()) return;
  const lapack_int m = to_int(qr.rows(), "m"), k = to_int(qr.cols(), "k");
  const lapack_int ldv = to_int(v.ld(), "ldv");
  check_info(lapack::lacpy('L', m, k, qr.data(), to_int(qr.ld(), "lda"), v.data(), ldv),
             "lacpy");
  check_info(lapack::laset('U', std::min(m, k), k, T(0), T(1), v.data(), ldv), "laset");
}

template <class T>
void larft(detail::ContextImpl&, MatrixView<const T> v, VectorView<const T> tau,
           MatrixView<T> t, MatrixView<T>) {
  if (v.cols() == 0) return;
  check_info(larft(to_int(v.rows(), "n"), to_int(v.cols(), "k"), v.data(), to_int(v.ld(), "ldv"),
                   tau.data(), t.data(), to_int(t.ld(), "ldt")),
             "larft");
}

template <class T>
void larft_known_diagonal(detail::ContextImpl& ctx, MatrixView<const T> v,
                          VectorView<const T> tau, MatrixView<T> t, MatrixView<T> gram,
                          std::int64_t) {
  larft<T>(ctx, v, tau, t, gram);  // LAPACK recomputes the diagonal blocks: same values
}

template <class T>
void larfb(detail::ContextImpl&, Side side, Op op, MatrixView<const T> v,
           MatrixView<const T> t, MatrixView<T> c, MatrixView<T>) {
  if (c.empty() || v.cols() == 0) return;
  // LAPACK's work is (ldwork x k) with ldwork = C's columns (left) or rows (right).
  const std::int64_t ldwork = std::max<std::int64_t>(side == Side::left ? c.cols() : c.rows(), 1);
  std::vector<T> work(static_cast<std::size_t>(ldwork * v.cols()));
  check_info(larfb(side == Side::left ? 'L' : 'R', op == Op::trans ? 'T' : 'N',
                   to_int(c.rows(), "m"), to_int(c.cols(), "n"), to_int(v.cols(), "k"),
                   v.data(), to_int(v.ld(), "ldv"), t.data(), to_int(t.ld(), "ldt"), c.data(),
                   to_int(c.ld(), "ldc"), work.data(), to_int(ldwork, "ldwork")),
             "larfb");
}

template <class T>
void laset(detail::ContextImpl&, T off, T diag, MatrixView<T> a) {
  if (a.empty()) return;
  check_info(lapack::laset('A', to_int(a.rows(), "m"), to_int(a.cols(), "n"), off, diag,
                           a.data(), to_int(a.ld(), "lda")),
             "laset");
}

GPUQR_INSTANTIATE_BLOCKED_KERNELS(float)
GPUQR_INSTANTIATE_BLOCKED_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
