// The blocked Householder driver (src/core/blocked_qr.cpp) with explicit block sizes, on every
// backend: the CPU runs it over LAPACK's geqr2/larft/larfb, CUDA over our panel kernel and
// cuBLAS. Invariants only (backward error, orthogonality, agreement of ormqr/orgqr with Q).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/blocked_qr.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/gram_stress.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

class BlockedQR : public BackendTest {};

/// R (k x n) from geqrf's output: its first k rows on and above the diagonal.
template <class T>
Matrix<T> upper_r(const Matrix<T>& qr, std::int64_t k) {
  Matrix<T> r(k, qr.cols());
  for (std::int64_t j = 0; j < qr.cols(); ++j)
    for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? qr(i, j) : T(0);
  return r;
}

const detail::BlockSizes kSizes[] = {{8, 4}, {16, 16}, {64, 32}, {96, 32}, {0, 0}};

TEST_P(BlockedQR, GeqrfAndOrgqrAcrossBlockSizes) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 500;
    for (const detail::BlockSizes bs : kSizes) {
      for (auto [m, n] : {std::pair<int, int>{1, 1},
                          {37, 1},
                          {70, 70},
                          {301, 130},
                          {130, 301},
                          {1000, 45},
                          {200, 199}}) {
        for (MatrixKind kind : {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned,
                                MatrixKind::rank_deficient}) {
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " " + to_string(kind) +
                       " nb=" + std::to_string(bs.outer) + "/" + std::to_string(bs.inner));
          const Matrix<T> a = make_matrix<T>(kind, m, n, seed++);
          Matrix<T> qr = to_ctx<T>(ctx(), a.view());
          const std::int64_t k = std::min(m, n);
          Matrix<T> tau(k, 1, qr.space(), qr.device());
          detail::blocked_geqrf<T>(ctx(), qr.view(), vec(tau), bs);
          Matrix<T> q = Matrix<T>::copy_of(MatrixView<const T>(qr.view().block(0, 0, m, k)),
                                           qr.space(), qr.device());
          detail::blocked_orgqr<T>(ctx(), k, q.view(), VectorView<const T>(vec(tau)), bs);
          const Matrix<T> qh = to_host(ctx(), q);
          const Matrix<T> qrh = to_host(ctx(), qr);
          const Matrix<T> r = upper_r(qrh, k);
          EXPECT_LT(track("backward error",
                          accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
                    kBound);
          EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(qh.view())), kBound);
        }
      }
    }
  }));
}

// Panels too tall for the fused panel kernels (on CUDA: the AH panel with its status read
// back, and the driver enqueueing the trailing update before the next panel): geqrf and
// orgqr meet the bounds on random, graded and rank-deficient inputs (the last makes the AH
// panel decline, so cuSOLVER's geqrf takes those panels).
TEST_P(BlockedQR, PanelsTooTallForTheFusedKernels) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 560;
    const std::int64_t m = 300001, n = 40;
    for (MatrixKind kind : {MatrixKind::random, MatrixKind::graded, MatrixKind::rank_deficient}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " " + to_string(kind));
      const Matrix<T> a = make_matrix<T>(kind, m, n, seed++);
      Matrix<T> q = to_ctx<T>(ctx(), a.view());
      Matrix<T> tau(n, 1, q.space(), q.device());
      detail::blocked_geqrf<T>(ctx(), q.view(), vec(tau));
      const Matrix<T> r = upper_r(to_host(ctx(), q), n);
      detail::blocked_orgqr<T>(ctx(), n, q.view(), VectorView<const T>(vec(tau)));
      const Matrix<T> qh = to_host(ctx(), q);
      EXPECT_LT(
          track("backward error", accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
          kBound);
      EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(qh.view())), kBound);
    }
  }));
}

TEST_P(BlockedQR, GramBasedPanelsStayAccurate) {
  // On CUDA every panel with h >= 2b first goes to the AH panel (QRF-AH from the Gram
  // matrix), which either factors it or leaves it to the Householder kernel; the result must
  // be as accurate as Householder QR's whichever happened. On the CPU the same inputs run
  // through LAPACK (the reference the bounds come from).
  struct Reset {
    ~Reset() { kernels::cuda::panel_qr_ah_mode(-1); }
  } reset;
  if (ctx().is_cuda()) kernels::cuda::panel_qr_ah_mode(1);
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 560;
    for (int which : {0, 1, 2}) {
      for (auto [m, n] : {std::pair<int, int>{640, 96}, {1000, 64}, {333, 70}}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " input " + std::to_string(which));
        const Matrix<T> a = gram_stress_matrix<T>(which, m, n, seed++);
        Matrix<T> qr = to_ctx<T>(ctx(), a.view());
        Matrix<T> tau(n, 1, qr.space(), qr.device());
        detail::blocked_geqrf<T>(ctx(), qr.view(), vec(tau), {0, 0});
        Matrix<T> q = Matrix<T>::copy_of(MatrixView<const T>(qr.view()), qr.space(), qr.device());
        detail::blocked_orgqr<T>(ctx(), n, q.view(), VectorView<const T>(vec(tau)), {0, 0});
        const Matrix<T> qh = to_host(ctx(), q), qrh = to_host(ctx(), qr);
        const Matrix<T> r = upper_r(qrh, n);
        EXPECT_LT(track("backward error (Gram-stress inputs)",
                        accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
                  kBound);
        EXPECT_LT(track("orthogonality (Gram-stress inputs)", accuracy::orthogonality<T>(qh.view())),
                  kBound);
      }
    }
  }));
}

/// Restores larfb_trmm_mode's and larft_merge_mode's defaults however a test ends.
struct TrmmModeReset {
  ~TrmmModeReset() {
    kernels::cuda::larfb_trmm_mode(-1);
    kernels::cuda::larft_merge_mode(-1);
  }
};

/// Sets GPUQR_LOOKAHEAD for a scope (unset: the default, the second lane) and restores it.
class LookAhead {
 public:
  explicit LookAhead(const char* value) {
    if (const char* old = std::getenv("GPUQR_LOOKAHEAD")) old_ = old, had_ = true;
    if (value == nullptr) unsetenv("GPUQR_LOOKAHEAD");
    else setenv("GPUQR_LOOKAHEAD", value, 1);
  }
  ~LookAhead() {
    if (had_) setenv("GPUQR_LOOKAHEAD", old_.c_str(), 1);
    else unsetenv("GPUQR_LOOKAHEAD");
  }
  LookAhead(const LookAhead&) = delete;
  LookAhead& operator=(const LookAhead&) = delete;

 private:
  std::string old_;
  bool had_ = false;
};

TEST_P(BlockedQR, EveryTPathFactorsAccurately) {
  // On CUDA, larft's merges run as batched GEMMs (default), cuBLAS TRMMs or the merge
  // kernel, and larfb's product with T as a GEMM with T (default) or a TRMM
  // (GPUQR_LARFB_TRMM=1); every pairing used must give a backward-stable QR with an
  // orthogonal Q. Outer blocks of 256 and 320 columns take every merge level (320: a
  // narrower last merge, and for the merge kernel cuBLAS TRMM at the widest level).
  TrmmModeReset reset;
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 900;
    const std::pair<kernels::cuda::LarftMerge, int> paths[] = {
        {kernels::cuda::LarftMerge::gemm, 0},
        {kernels::cuda::LarftMerge::kernel, 0},
        {kernels::cuda::LarftMerge::trmm, 1}};
    for (auto [merge, trmm] : paths) {
      if (ctx().is_cuda()) {
        kernels::cuda::larft_merge_mode(static_cast<int>(merge));
        kernels::cuda::larfb_trmm_mode(trmm);
      }
      for (auto [m, n, outer] : {std::tuple<int, int, int>{700, 300, 320},
                                 {900, 520, 256},
                                 {333, 333, 0}}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " nb=" +
                     std::to_string(outer) + " merge " +
                     std::to_string(static_cast<int>(merge)) + (trmm ? " trmm" : " gemm"));
        const detail::BlockSizes bs{outer, outer == 0 ? 0 : 32};
        const Matrix<T> a = random_matrix<T>(m, n, seed++);
        Matrix<T> qr = to_ctx<T>(ctx(), a.view());
        Matrix<T> tau(n, 1, qr.space(), qr.device());
        detail::blocked_geqrf<T>(ctx(), qr.view(), vec(tau), bs);
        Matrix<T> q = Matrix<T>::copy_of(MatrixView<const T>(qr.view()), qr.space(), qr.device());
        detail::blocked_orgqr<T>(ctx(), n, q.view(), VectorView<const T>(vec(tau)), bs);
        const Matrix<T> qh = to_host(ctx(), q), qrh = to_host(ctx(), qr);
        const Matrix<T> r = upper_r(qrh, n);
        EXPECT_LT(track("backward error (both T paths)",
                        accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
                  kBound);
        EXPECT_LT(track("orthogonality (both T paths)", accuracy::orthogonality<T>(qh.view())),
                  kBound);
      }
    }
  }));
}

TEST_P(BlockedQR, OrgqrSameOnOneLaneAndTwo) {
  // orgqr makes block b's V and T on the second lane while the main lane applies block
  // b + 1, through two buffer pairs; with GPUQR_LOOKAHEAD=0 everything runs in order on one
  // lane. A missing wait would apply a stale or half-made T: Q would lose orthogonality and
  // differ from the one-lane Q. Shapes: several outer blocks of 256 (and 128) with a narrower
  // last block, k = n and k < n (Q's columns past k start as the identity's), m > n.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 1300;
    for (auto [m, n, k, outer] : {std::tuple<int, int, int, int>{1100, 900, 900, 256},
                                  {1000, 700, 520, 256},
                                  {777, 777, 777, 128},
                                  {650, 300, 300, 0}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " k=" + std::to_string(k) +
                   " nb=" + std::to_string(outer));
      const detail::BlockSizes bs{outer, outer == 0 ? 0 : 32};
      const Matrix<T> a = random_matrix<T>(m, k, seed++);
      Matrix<T> qr = to_ctx<T>(ctx(), a.view());
      Matrix<T> tau(k, 1, qr.space(), qr.device());
      detail::blocked_geqrf<T>(ctx(), qr.view(), vec(tau), bs);
      // The reflectors in Q's first k columns, something other than the identity past them.
      Matrix<T> start(m, n);
      {
        const Matrix<T> host = to_host(ctx(), qr);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) start(i, j) = j < k ? host(i, j) : T(0.5);
      }
      Matrix<T> q[2];
      for (int lanes : {1, 2}) {
        const LookAhead look_ahead(lanes == 1 ? "0" : nullptr);
        Matrix<T> q_ctx = to_ctx<T>(ctx(), start.view());
        detail::blocked_orgqr<T>(ctx(), k, q_ctx.view(), VectorView<const T>(vec(tau)), bs);
        q[lanes - 1] = to_host(ctx(), q_ctx);
        const Matrix<T>& qh = q[lanes - 1];
        EXPECT_LT(track("orthogonality (one lane or two)", accuracy::orthogonality<T>(qh.view())),
                  kBound);
        Matrix<T> qk(m, k);
        for (std::int64_t j = 0; j < k; ++j)
          for (std::int64_t i = 0; i < m; ++i) qk(i, j) = qh(i, j);
        const Matrix<T> r = upper_r(to_host(ctx(), qr), k);
        EXPECT_LT(track("backward error (one lane or two)",
                        accuracy::qr_backward_error<T>(a.view(), qk.view(), r.view())),
                  kBound);
      }
      EXPECT_LT(accuracy::relative_difference<T>(q[1].view(), q[0].view()) /
                    (m * accuracy::eps<T>()),
                kBound);
    }
  }));
}

TEST_P(BlockedQR, OrmqrMatchesFormedQ) {
  TrmmModeReset reset;
  for (int trmm : {0, 1}) {
    SCOPED_TRACE(trmm ? "trmm" : "gemm");
    if (ctx().is_cuda()) kernels::cuda::larfb_trmm_mode(trmm);
    GPUQR_FOR_PRECISION(([&]<class T>() {
      const std::int64_t m = 211, k = 75;
      for (const detail::BlockSizes bs : {detail::BlockSizes{32, 16}, detail::BlockSizes{128, 32}}) {
        const Matrix<T> a = random_matrix<T>(m, k, 77);
        Matrix<T> qr = to_ctx<T>(ctx(), a.view());
        Matrix<T> tau(k, 1, qr.space(), qr.device());
        detail::blocked_geqrf<T>(ctx(), qr.view(), vec(tau), bs);
        // The full Q (m x m) by blocked orgqr, then every side/op of blocked ormqr against it.
        Matrix<T> full(m, m, qr.space(), qr.device());
        {
          Matrix<T> host = to_host(ctx(), qr);
          Matrix<T> f(m, m);
          for (std::int64_t j = 0; j < m; ++j)
            for (std::int64_t i = 0; i < m; ++i) f(i, j) = j < k ? host(i, j) : T(0.5);
          full = to_ctx<T>(ctx(), f.view());
        }
        detail::blocked_orgqr<T>(ctx(), k, full.view(), VectorView<const T>(vec(tau)), bs);
        const Matrix<T> q = to_host(ctx(), full);
        EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(q.view())), kBound);
        for (Side side : {Side::left, Side::right}) {
          for (Op op : {Op::no_trans, Op::trans}) {
            SCOPED_TRACE(std::string(side == Side::left ? "left" : "right") +
                         (op == Op::trans ? " trans" : " no_trans"));
            const std::int64_t rows = side == Side::left ? m : 23;
            const std::int64_t cols = side == Side::left ? 23 : m;
            const Matrix<T> c = random_matrix<T>(rows, cols, 3);
            Matrix<T> c_ctx = to_ctx<T>(ctx(), c.view());
            detail::blocked_ormqr<T>(ctx(), side, op, MatrixView<const T>(qr.view()),
                                     VectorView<const T>(vec(tau)), c_ctx.view(), bs);
            const Matrix<T> got = to_host(ctx(), c_ctx);
            const Matrix<T> want = apply_explicit_q<T>(side, op, q, c);
            EXPECT_LT(
                accuracy::relative_difference<T>(got.view(), want.view()) / (m * accuracy::eps<T>()),
                kBound);
          }
        }
      }
    }));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BlockedQR, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
