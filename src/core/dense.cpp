// Dense QR drivers: argument checks, then leaf operations of the context's backend.
// Everything here is backend-agnostic; gels is composed of geqrf, ormqr and trsm.
#include "gpuqr/dense.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/blocked_qr.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_replay.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/staging.hpp"

namespace gpuqr {

using detail::check_view;
using detail::shape;

namespace detail {

template <class T>
void check_finite(const Context& ctx, MatrixView<const T> a, const char* what,
                  const char* routine) {
  if (!ctx.check_finite() || a.empty()) return;
  if (!GPUQR_DISPATCH(ctx, all_finite, a)) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": " + what +
                                     " contains NaN or Inf (turn the check off with "
                                     "Context::set_check_finite(false))");
  }
}

/// min |d_i| / max |d_i| over R's diagonal, and the first exact zero.
std::pair<double, std::int64_t> diagonal_summary(const std::vector<double>& d) {
  if (d.empty()) return {1.0, -1};
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  std::int64_t zero_at = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    lo = std::min(lo, d[i]);
    hi = std::max(hi, d[i]);
    if (d[i] == 0.0 && zero_at < 0) zero_at = static_cast<std::int64_t>(i);
  }
  return {hi > 0.0 ? lo / hi : 0.0, zero_at};
}

template <class T>
void run_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau) {
  if (ctx.is_cuda()) {
    blocked_geqrf<T>(ctx, a, tau);
  } else {
    kernels::cpu::geqrf<T>(ctx.impl(), a, tau);
  }
}

template <class T>
void run_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
               VectorView<const T> tau, MatrixView<T> c) {
  if (ctx.is_cuda()) {
    blocked_ormqr<T>(ctx, side, op, a, tau, c);
  } else {
    kernels::cpu::ormqr<T>(ctx.impl(), side, op, a, tau, c);
  }
}

template <class T>
void run_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau) {
  if (ctx.is_cuda()) {
    blocked_orgqr<T>(ctx, k, a, tau);
  } else {
    kernels::cpu::orgqr<T>(ctx.impl(), k, a, tau);
  }
}

}  // namespace detail

using detail::host_on_cuda;
using detail::StagedMatrix;
using detail::StagedVector;

// Each function below first stages host arguments of a CUDA call (src/core/staging.hpp):
// device copies in, the call on them, outputs copied back only when it succeeded. The staged
// calls never replay graphs (Context::cuda_graphs): their device copies are new at every
// call, so each would be a capture. `Replay` says which path a call on views in the
// context's memory may take.

namespace {
enum class Replay { off, allowed };

template <class T>
void geqrf_in_place(const Context& ctx, MatrixView<T> a, VectorView<T> tau, Replay replay) {
  check_view(ctx, a, "A", "geqrf");
  check_view(ctx, tau, "tau", "geqrf");
  const std::int64_t k = std::min(a.rows(), a.cols());
  GPUQR_CHECK_ARG(tau.size() >= k, "geqrf: tau needs min(m, n) = " + std::to_string(k) +
                                       " entries, has " + std::to_string(tau.size()));
  detail::check_finite<T>(ctx, a, "A", "geqrf");
  if (replay == Replay::allowed) {
    detail::replay_geqrf<T>(ctx, a, tau);
  } else {
    detail::run_geqrf<T>(ctx, a, tau);
  }
}

template <class T>
void orgqr_in_place(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau,
                    Replay replay) {
  check_view(ctx, a, "A", "orgqr");
  check_view(ctx, tau, "tau", "orgqr");
  GPUQR_CHECK_ARG(a.rows() >= a.cols(), "orgqr: A is " + shape(a.rows(), a.cols()) +
                                            "; Q's columns need m >= n");
  GPUQR_CHECK_ARG(k >= 0 && k <= a.cols(),
                  "orgqr: k = " + std::to_string(k) + " reflectors for n = " +
                      std::to_string(a.cols()) + " columns; need 0 <= k <= n");
  GPUQR_CHECK_ARG(tau.size() >= k, "orgqr: tau has " + std::to_string(tau.size()) +
                                       " entries for k = " + std::to_string(k));
  if (replay == Replay::allowed) {
    detail::replay_orgqr<T>(ctx, k, a, tau);
  } else {
    detail::run_orgqr<T>(ctx, k, a, tau);
  }
}

template <class T>
void ormqr_in_place(const Context& ctx, Side side, Op op, MatrixView<const T> a,
                    VectorView<const T> tau, MatrixView<T> c, Replay replay) {
  check_view(ctx, a, "A", "ormqr");
  check_view(ctx, tau, "tau", "ormqr");
  check_view(ctx, c, "C", "ormqr");
  const std::int64_t q_order = side == Side::left ? c.rows() : c.cols();
  GPUQR_CHECK_ARG(a.rows() == q_order,
                  "ormqr: the reflectors have " + std::to_string(a.rows()) + " rows but C (" +
                      shape(c.rows(), c.cols()) + ") needs " + std::to_string(q_order) +
                      (side == Side::left ? " (C's rows)" : " (C's columns)"));
  GPUQR_CHECK_ARG(a.cols() <= a.rows(), "ormqr: more reflectors (" + std::to_string(a.cols()) +
                                            ") than rows (" + std::to_string(a.rows()) + ")");
  GPUQR_CHECK_ARG(tau.size() >= a.cols(), "ormqr: tau has " + std::to_string(tau.size()) +
                                              " entries for " + std::to_string(a.cols()) +
                                              " reflectors");
  if (replay == Replay::allowed) {
    detail::replay_ormqr<T>(ctx, side, op, a, tau, c);
  } else {
    detail::run_ormqr<T>(ctx, side, op, a, tau, c);
  }
}

}  // namespace

template <class T>
void geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, tau)) {
    const StagedMatrix<T> sa(ctx, a);
    const StagedVector<T> st(ctx, tau);
    geqrf_in_place<T>(ctx, sa.view(), st.view(), Replay::off);
    sa.copy_back();
    st.copy_back();
    return;
  }
  geqrf_in_place<T>(ctx, a, tau, Replay::allowed);
}

template <class T>
void geqrf_wy(const Context& ctx, MatrixView<T> a, VectorView<T> tau, MatrixView<T> q,
              std::int64_t block) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, tau) || host_on_cuda(ctx, q)) {
    const StagedMatrix<T> sa(ctx, a);
    const StagedVector<T> st(ctx, tau);
    const StagedMatrix<T> sq(ctx, q);
    geqrf_wy<T>(ctx, sa.view(), st.view(), sq.view(), block);
    sa.copy_back();
    st.copy_back();
    sq.copy_back();
    return;
  }
  check_view(ctx, a, "A", "geqrf_wy");
  check_view(ctx, tau, "tau", "geqrf_wy");
  check_view(ctx, q, "Q", "geqrf_wy");
  const std::int64_t m = a.rows(), k = std::min(m, a.cols());
  GPUQR_CHECK_ARG(tau.size() >= k, "geqrf_wy: tau needs min(m, n) = " + std::to_string(k) +
                                       " entries, has " + std::to_string(tau.size()));
  GPUQR_CHECK_ARG(q.rows() == m && q.cols() == m,
                  "geqrf_wy: Q is " + shape(q.rows(), q.cols()) + ", needs m x m = " + shape(m, m));
  GPUQR_CHECK_ARG(block >= 0, "geqrf_wy: block = " + std::to_string(block) + " is negative");
  if (!a.empty() && !q.empty()) {
    const T* a0 = a.data();
    const T* a1 = a.data() + (a.cols() - 1) * a.ld() + a.rows();
    const T* q0 = q.data();
    const T* q1 = q.data() + (q.cols() - 1) * q.ld() + q.rows();
    GPUQR_CHECK_ARG(a1 <= q0 || q1 <= a0, "geqrf_wy: Q overlaps A");
  }
  detail::check_finite<T>(ctx, a, "A", "geqrf_wy");
  detail::wy_geqrf<T>(ctx, a, tau, q, detail::BlockSizes{block, 0});
}

template <class T>
void orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, tau)) {
    const StagedMatrix<T> sa(ctx, a);
    const StagedVector<const T> st(ctx, tau);
    orgqr_in_place<T>(ctx, k, sa.view(), st.view(), Replay::off);
    sa.copy_back();
    return;
  }
  orgqr_in_place<T>(ctx, k, a, tau, Replay::allowed);
}

template <class T>
void ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a, VectorView<const T> tau,
           MatrixView<T> c) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, tau) || host_on_cuda(ctx, c)) {
    const StagedMatrix<const T> sa(ctx, a);
    const StagedVector<const T> st(ctx, tau);
    const StagedMatrix<T> sc(ctx, c);
    ormqr_in_place<T>(ctx, side, op, sa.view(), st.view(), sc.view(), Replay::off);
    sc.copy_back();
    return;
  }
  ormqr_in_place<T>(ctx, side, op, a, tau, c, Replay::allowed);
}

template <class T>
TriangularInfo trtrs(const Context& ctx, Uplo uplo, Op op, Diag diag, MatrixView<const T> a,
                     MatrixView<T> b) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, b)) {
    const StagedMatrix<const T> sa(ctx, a);
    const StagedMatrix<T> sb(ctx, b);
    const TriangularInfo info = trtrs<T>(ctx, uplo, op, diag, sa.view(), sb.view());
    sb.copy_back();
    return info;
  }
  check_view(ctx, a, "A", "trtrs");
  check_view(ctx, b, "B", "trtrs");
  GPUQR_CHECK_ARG(a.rows() == a.cols(), "trtrs: A is " + shape(a.rows(), a.cols()) +
                                            ", not square");
  GPUQR_CHECK_ARG(b.rows() == a.rows(), "trtrs: B has " + std::to_string(b.rows()) +
                                            " rows, A is " + shape(a.rows(), a.cols()));
  detail::check_finite<T>(ctx, a, "A", "trtrs");
  detail::check_finite<T>(ctx, MatrixView<const T>(b), "B", "trtrs");
  TriangularInfo info;
  if (diag == Diag::non_unit) {
    info.singular_at = detail::diagonal_summary(GPUQR_DISPATCH(ctx, abs_diagonal, a)).second;
    if (info.singular()) return info;
  }
  GPUQR_DISPATCH(ctx, trsm, uplo, op, diag, a, b);
  return info;
}

namespace detail {

namespace {

/// solve_factored; `replay`: Q^T B by replay_ormqr (gels on views in the context's memory).
template <class T>
LstsqInfo solve_factored_with(const Context& ctx, MatrixView<const T> qr,
                              VectorView<const T> tau, MatrixView<T> b, bool replay) {
  const std::int64_t n = qr.cols();
  LstsqInfo info;
  if (replay) {
    replay_ormqr<T>(ctx, Side::left, Op::trans, qr, tau, b);
  } else {
    run_ormqr<T>(ctx, Side::left, Op::trans, qr, tau, b);
  }
  const auto [rcond, zero_at] =
      diagonal_summary(GPUQR_DISPATCH(ctx, abs_diagonal, qr.block(0, 0, n, n)));
  info.rcond_estimate = rcond;
  info.singular_at = zero_at;
  if (!info.singular()) {
    GPUQR_DISPATCH(ctx, trsm, Uplo::upper, Op::no_trans, Diag::non_unit, qr.block(0, 0, n, n),
                   b.block(0, 0, n, b.cols()));
  }
  info.residual_norms = GPUQR_DISPATCH(
      ctx, column_norms, MatrixView<const T>(b.block(n, 0, b.rows() - n, b.cols())));
  return info;
}

}  // namespace

template <class T>
LstsqInfo solve_factored(const Context& ctx, MatrixView<const T> qr, VectorView<const T> tau,
                         MatrixView<T> b) {
  return solve_factored_with<T>(ctx, qr, tau, b, false);
}

}  // namespace detail

namespace {

/// gels on views in the context's memory. With `replay`, its geqrf and ormqr steps may replay
/// graphs; the checks that read results on the host (R's diagonal, the residual norms) and
/// the triangular solve that depends on them run directly.
template <class T>
LstsqInfo gels_in_place(const Context& ctx, MatrixView<T> a, MatrixView<T> b, Replay replay) {
  check_view(ctx, a, "A", "gels");
  check_view(ctx, b, "B", "gels");
  GPUQR_CHECK_ARG(a.rows() >= a.cols(), "gels: A is " + shape(a.rows(), a.cols()) +
                                            "; least squares needs m >= n (an "
                                            "underdetermined system has no QR solve here)");
  GPUQR_CHECK_ARG(b.rows() == a.rows(), "gels: B has " + std::to_string(b.rows()) +
                                            " rows, A is " + shape(a.rows(), a.cols()));
  detail::check_finite<T>(ctx, a, "A", "gels");
  detail::check_finite<T>(ctx, MatrixView<const T>(b), "B", "gels");
  // tau lives for this call only: on CUDA in the context's call workspace (no cudaMalloc and
  // cudaFree, whose implicit synchronization would stall the stream), on the CPU in a vector.
  std::vector<T> host_tau;
  T* tau_data = nullptr;
  if (ctx.is_cuda()) {
    tau_data = static_cast<T*>(detail::cuda_workspace(
        ctx.impl(), static_cast<std::size_t>(std::max<std::int64_t>(a.cols(), 1)) * sizeof(T),
        detail::ContextImpl::kCallWorkspace));
  } else {
    host_tau.resize(static_cast<std::size_t>(a.cols()));
    tau_data = host_tau.data();
  }
  VectorView<T> tau_view(tau_data, a.cols(), detail::space_of(ctx), ctx.device());
  if (replay == Replay::allowed) {
    detail::replay_geqrf<T>(ctx, a, tau_view);
  } else {
    detail::run_geqrf<T>(ctx, a, tau_view);
  }
  return detail::solve_factored_with<T>(ctx, a, tau_view, b, replay == Replay::allowed);
}

}  // namespace

template <class T>
LstsqInfo gels(const Context& ctx, MatrixView<T> a, MatrixView<T> b) {
  if (host_on_cuda(ctx, a) || host_on_cuda(ctx, b)) {
    const StagedMatrix<T> sa(ctx, a);
    const StagedMatrix<T> sb(ctx, b);
    const LstsqInfo info = gels_in_place<T>(ctx, sa.view(), sb.view(), Replay::off);
    sa.copy_back();
    sb.copy_back();
    return info;
  }
  return gels_in_place<T>(ctx, a, b, Replay::allowed);
}

#define GPUQR_INSTANTIATE_DENSE_API(T)                                                       \
  template void geqrf<T>(const Context&, MatrixView<T>, VectorView<T>);                      \
  template void geqrf_wy<T>(const Context&, MatrixView<T>, VectorView<T>, MatrixView<T>,     \
                            std::int64_t);                                                   \
  template void orgqr<T>(const Context&, std::int64_t, MatrixView<T>, VectorView<const T>);  \
  template void ormqr<T>(const Context&, Side, Op, MatrixView<const T>, VectorView<const T>, \
                         MatrixView<T>);                                                     \
  template TriangularInfo trtrs<T>(const Context&, Uplo, Op, Diag, MatrixView<const T>,      \
                                   MatrixView<T>);                                           \
  template LstsqInfo gels<T>(const Context&, MatrixView<T>, MatrixView<T>);                  \
  template void detail::check_finite<T>(const Context&, MatrixView<const T>, const char*,    \
                                        const char*);                                        \
  template void detail::run_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>);          \
  template void detail::run_ormqr<T>(const Context&, Side, Op, MatrixView<const T>,          \
                                     VectorView<const T>, MatrixView<T>);                    \
  template void detail::run_orgqr<T>(const Context&, std::int64_t, MatrixView<T>,            \
                                     VectorView<const T>);                                   \
  template LstsqInfo detail::solve_factored<T>(const Context&, MatrixView<const T>,          \
                                               VectorView<const T>, MatrixView<T>);

GPUQR_INSTANTIATE_DENSE_API(float)
GPUQR_INSTANTIATE_DENSE_API(double)

}  // namespace gpuqr
