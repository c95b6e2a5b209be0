// The blocked Householder driver (src/core/blocked_qr.cpp) with explicit block sizes, on every
// backend: the CPU runs it over LAPACK's geqr2/larft/larfb, CUDA over our panel kernel and
// cuBLAS. Invariants only (backward error, orthogonality, agreement of ormqr/orgqr with Q).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

/// Restores larfb_trmm_mode's default however a test ends.
struct TrmmModeReset {
  ~TrmmModeReset() { kernels::cuda::larfb_trmm_mode(-1); }
};

TEST_P(BlockedQR, BothTPathsFactorAccurately) {
  // On CUDA, larft's merges and larfb's product with T run either as the merge kernel and a
  // GEMM with T (default) or as cuBLAS TRMMs (GPUQR_LARFB_TRMM=1); both must give a
  // backward-stable QR with an orthogonal Q. Outer blocks of 256 and 320 columns take every
  // level of the merge kernel, and (320) cuBLAS TRMM for the widest level.
  TrmmModeReset reset;
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 900;
    for (int trmm : {0, 1}) {
      if (ctx().is_cuda()) kernels::cuda::larfb_trmm_mode(trmm);
      for (auto [m, n, outer] : {std::tuple<int, int, int>{700, 300, 320},
                                 {900, 520, 256},
                                 {333, 333, 0}}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " nb=" +
                     std::to_string(outer) + (trmm ? " trmm" : " gemm"));
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
