// Each CUDA leaf of the blocked QR against its CPU twin (LAPACK's geqr2, larft, larfb) on the
// same inputs. Both follow LAPACK's sign convention (beta = -sign(alpha) ||x||), so R, tau, V
// and T are compared entry by entry within rounding. CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/blocked_qr.hpp"
#include "src/core/dense_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class KernelTwins : public BackendTest {};

/// Runs panel_qr on both backends for `a` and compares R/V, tau and the explicit V. For a
/// rank-deficient panel only the first `rank` reflectors are determined (the rest reduce
/// rounding noise, differently in each implementation), so only they and R's first `rank`
/// rows are compared.
template <class T>
void compare_panel(Context& gpu, const Matrix<T>& a, std::int64_t rank = -1) {
  const std::int64_t h = a.rows(), b = a.cols();
  const std::int64_t r = rank < 0 ? b : rank;
  Context cpu = Context::cpu();
  Matrix<T> a_cpu = a.clone(), tau_cpu(b, 1), v_cpu(h, b), t_cpu(b, b);
  kernels::cpu::panel_qr<T>(cpu.impl(), a_cpu.view(), vec(tau_cpu), v_cpu.view(), t_cpu.view());
  zero_below_diagonal(t_cpu);  // larft leaves it
  Matrix<T> a_gpu = to_ctx<T>(gpu, a.view());
  Matrix<T> tau_gpu = device_matrix<T>(gpu, b, 1), v_gpu = device_matrix<T>(gpu, h, b);
  Matrix<T> t_gpu = device_matrix<T>(gpu, b, b);
  kernels::cuda::panel_qr<T>(gpu.impl(), a_gpu.view(), vec(tau_gpu), v_gpu.view(), t_gpu.view());
  const double bound = 50.0 * std::sqrt(double(h)) * accuracy::eps<T>();
  const Matrix<T> a_back = to_host(gpu, a_gpu);
  // R's first r rows (all columns), then the first r columns (V below the diagonal).
  Matrix<T> r_gpu(r, b), r_cpu(r, b);
  for (std::int64_t j = 0; j < b; ++j)
    for (std::int64_t i = 0; i < r; ++i) {
      r_gpu(i, j) = i <= j ? a_back(i, j) : T(0);
      r_cpu(i, j) = i <= j ? a_cpu(i, j) : T(0);
    }
  EXPECT_LT(entry_diff(r_gpu, r_cpu), bound);
  EXPECT_LT(entry_diff(lead(a_back, h, r), lead(a_cpu, h, r)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, tau_gpu), r, 1), lead(tau_cpu, r, 1)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, v_gpu), h, r), lead(v_cpu, h, r)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, t_gpu), r, r), lead(t_cpu, r, r)), bound);
}

TEST_P(KernelTwins, PanelQrMatchesGeqr2) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 900;
    // Heights from one block to many (the grid spreads rows over the multiprocessors),
    // widths up to the kernel's 32, and a panel too tall for it (the fallback path).
    // 150000 x 32 (FP64) and 300001 x 32 (both) are too tall for the fused kernels: the AH
    // panel with its status read back, cuSOLVER's geqrf where it declines (rank-deficient).
    for (auto [h, b] : {std::pair<int, int>{1, 1},
                        {5, 5},
                        {33, 32},
                        {200, 7},
                        {1000, 32},
                        {5000, 32},
                        {40000, 17},
                        {70001, 32},
                        {150000, 32},
                        {300001, 32}}) {
      for (MatrixKind kind : {MatrixKind::random, MatrixKind::graded, MatrixKind::rank_deficient}) {
        SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(b) + " " + to_string(kind));
        const std::int64_t rank =
            kind == MatrixKind::rank_deficient ? std::max<std::int64_t>(1, b / 2) : -1;
        compare_panel<T>(ctx(), make_matrix<T>(kind, h, b, seed++), rank);
      }
    }
  }));
}

TEST_P(KernelTwins, PanelQrSingleBlockAndClusterMatchGeqr2) {
  // Panels one thread block holds (FP64 up to 512 rows, FP32 up to 640) go to the
  // single-block kernel by default; each shape is also run with it switched off (the cluster
  // kernel), both against LAPACK. Heights at the register-count boundaries (16 * 2^k). The
  // AH panel, which panel_qr tries first on taller panels, is off here (its own test below).
  struct Reset {
    ~Reset() {
      kernels::cuda::panel_qr_single_block(-1);
      kernels::cuda::panel_qr_ah_mode(-1);
    }
  } reset;
  kernels::cuda::panel_qr_ah_mode(0);
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 950;
    for (auto [h, b] : {std::pair<int, int>{1, 1}, {16, 16}, {17, 3}, {32, 32}, {33, 32},
                        {64, 1}, {65, 20}, {128, 32}, {129, 32}, {256, 31}, {257, 32},
                        {512, 32}, {513, 32}, {640, 32}, {641, 32}, {1000, 9}, {1024, 32}, {1025, 32}}) {
      for (int mode : {1, 0}) {
        kernels::cuda::panel_qr_single_block(mode);
        for (MatrixKind kind :
             {MatrixKind::random, MatrixKind::graded, MatrixKind::rank_deficient}) {
          SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(b) + " " + to_string(kind) +
                       (mode == 1 ? " single-block" : " cluster"));
          const std::int64_t rank =
              kind == MatrixKind::rank_deficient ? std::max<std::int64_t>(1, b / 2) : -1;
          compare_panel<T>(ctx(), make_matrix<T>(kind, h, b, seed++), rank);
        }
      }
    }
  }));
}

TEST_P(KernelTwins, PanelQrSingleBlockScalesExtremeColumns) {
  struct Reset {
    ~Reset() {
      kernels::cuda::panel_qr_single_block(-1);
      kernels::cuda::panel_qr_ah_mode(-1);
    }
  } reset;
  kernels::cuda::panel_qr_ah_mode(0);
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // The scaled path (squares over- or underflow) and zero columns, in the single block.
    kernels::cuda::panel_qr_single_block(1);
    const double tiny = sizeof(T) == 8 ? 1e-170 : 1e-25;
    const double huge = sizeof(T) == 8 ? 1e+170 : 1e+25;
    for (double scale : {tiny, huge}) {
      Matrix<T> a = random_matrix<T>(300, 12, 33);
      for (std::int64_t j = 0; j < 12; j += 3)
        for (std::int64_t i = 0; i < 300; ++i) a(i, j) = static_cast<T>(a(i, j) * scale);
      SCOPED_TRACE(scale);
      compare_panel<T>(ctx(), a);
    }
    Matrix<T> z = random_matrix<T>(200, 5, 34);
    for (std::int64_t i = 0; i < 200; ++i) z(i, 2) = T(0);
    for (std::int64_t i = 3; i < 200; ++i) z(i, 3) = T(0);
    compare_panel<T>(ctx(), z);
    kernels::cuda::panel_qr_single_block(-1);
  }));
}

/// Runs the AH panel alone (no fallback) on `a`. When it factors the panel, R/V, tau, V and
/// T must match LAPACK's geqr2/larft (as compare_panel); when it declines, the panel and the
/// outputs must be exactly as they were. Returns whether it factored the panel.
template <class T>
bool compare_ah_panel(Context& gpu, const Matrix<T>& a) {
  const std::int64_t h = a.rows(), b = a.cols();
  Context cpu = Context::cpu();
  Matrix<T> a_cpu = a.clone(), tau_cpu(b, 1), v_cpu(h, b), t_cpu(b, b);
  kernels::cpu::panel_qr<T>(cpu.impl(), a_cpu.view(), vec(tau_cpu), v_cpu.view(), t_cpu.view());
  zero_below_diagonal(t_cpu);
  // Outputs start as a sentinel, so that "left unchanged" is checkable.
  Matrix<T> sentinel_tau(b, 1), sentinel_v(h, b), sentinel_t(b, b);
  for (std::int64_t j = 0; j < b; ++j) {
    sentinel_tau(j, 0) = T(7);
    for (std::int64_t i = 0; i < h; ++i) sentinel_v(i, j) = T(7);
    for (std::int64_t i = 0; i < b; ++i) sentinel_t(i, j) = T(7);
  }
  Matrix<T> a_gpu = to_ctx<T>(gpu, a.view());
  Matrix<T> tau_gpu = to_ctx<T>(gpu, sentinel_tau.view()), v_gpu = to_ctx<T>(gpu, sentinel_v.view());
  Matrix<T> t_gpu = to_ctx<T>(gpu, sentinel_t.view());
  const bool done = kernels::cuda::panel_qr_ah_only<T>(gpu.impl(), a_gpu.view(), vec(tau_gpu),
                                                       v_gpu.view(), t_gpu.view());
  if (!done) {
    EXPECT_EQ(entry_diff(to_host(gpu, a_gpu), a), 0.0) << "declined, yet the panel changed";
    EXPECT_EQ(entry_diff(to_host(gpu, tau_gpu), sentinel_tau), 0.0);
    EXPECT_EQ(entry_diff(to_host(gpu, v_gpu), sentinel_v), 0.0);
    EXPECT_EQ(entry_diff(to_host(gpu, t_gpu), sentinel_t), 0.0);
    return false;
  }
  const double bound = 50.0 * std::sqrt(double(h)) * accuracy::eps<T>();
  EXPECT_LT(entry_diff(to_host(gpu, a_gpu), a_cpu), bound);
  EXPECT_LT(entry_diff(to_host(gpu, tau_gpu), tau_cpu), bound);
  EXPECT_LT(entry_diff(to_host(gpu, v_gpu), v_cpu), bound);
  EXPECT_LT(entry_diff(to_host(gpu, t_gpu), t_cpu), bound);
  return true;
}

/// ||P - Q [R; 0]||_1 / (||P||_1 h eps) and ||I - Q^T Q||_1 / (h eps) for Q = I - V T V^T
/// from the AH panel's outputs (host copies), formed explicitly (h small).
template <class T>
std::pair<double, double> ah_panel_ratios(const Matrix<T>& p, const Matrix<T>& r_v,
                                          const Matrix<T>& v, const Matrix<T>& t) {
  const std::int64_t h = p.rows(), b = p.cols();
  std::vector<double> vt(static_cast<std::size_t>(h * b), 0.0);  // V T (h x b)
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < b; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k <= j; ++k) s += double(v(i, k)) * double(t(k, j));
      vt[static_cast<std::size_t>(i + j * h)] = s;
    }
  std::vector<double> q(static_cast<std::size_t>(h * h));
  for (std::int64_t j = 0; j < h; ++j)
    for (std::int64_t i = 0; i < h; ++i) {
      double s = i == j ? 1.0 : 0.0;
      for (std::int64_t k = 0; k < b; ++k) s -= vt[static_cast<std::size_t>(i + k * h)] * double(v(j, k));
      q[static_cast<std::size_t>(i + j * h)] = s;
    }
  const double eps = accuracy::eps<T>();
  double res = 0, pn = 0;
  for (std::int64_t j = 0; j < b; ++j) {
    double col = 0, pc = 0;
    for (std::int64_t i = 0; i < h; ++i) {
      double s = 0;
      for (std::int64_t k = 0; k <= j; ++k) s += q[static_cast<std::size_t>(i + k * h)] * double(r_v(k, j));
      col += std::abs(double(p(i, j)) - s);
      pc += std::abs(double(p(i, j)));
    }
    res = std::max(res, col);
    pn = std::max(pn, pc);
  }
  double orth = 0;
  for (std::int64_t j = 0; j < h; ++j) {
    double col = 0;
    for (std::int64_t i = 0; i < h; ++i) {
      double s = i == j ? -1.0 : 0.0;
      for (std::int64_t k = 0; k < h; ++k)
        s += q[static_cast<std::size_t>(k + i * h)] * q[static_cast<std::size_t>(k + j * h)];
      col += std::abs(s);
    }
    orth = std::max(orth, col);
  }
  return {res / (pn * double(h) * eps), orth / (double(h) * eps)};
}

TEST_P(KernelTwins, PanelQrAhMatchesGeqr2OrDeclines) {
  // The AH panel (QRF-AH from the Gram matrix, src/cuda/panel_qr_ah.cu) alone: on random and
  // graded panels it factors them, entry by entry as LAPACK; on rank-deficient ones its
  // norm-update test declines and nothing is written (the Householder kernel then runs); on
  // columns whose squares leave the safe range likewise.
  // Every way of running Algorithm 2 (the whole thread block; one warp with the columns in
  // registers; four warps with a quarter of the rows each, in blocks or interleaved) must give
  // the same decisions and LAPACK's factors.
  struct Reset {
    ~Reset() {
      kernels::cuda::panel_qr_ah_mode(-1);
      kernels::cuda::panel_qr_ah_warp_mode(-1);
    }
  } reset;
  kernels::cuda::panel_qr_ah_mode(1);
  for (const int warp : {4, 1, 0, 6, 7, 10}) {
    SCOPED_TRACE(warp == 4   ? "Algorithm 2 by four warps"
                 : warp == 1 ? "Algorithm 2 by one warp"
                 : warp == 0 ? "Algorithm 2 by the thread block"
                 : warp == 6 ? "Algorithm 2 by four warps, rows interleaved"
                 : warp == 7 ? "Algorithm 2 by four warps, rows interleaved, short reciprocals"
                             : "mode 7 with shadow warps running its code ahead");
    kernels::cuda::panel_qr_ah_warp_mode(warp);
    GPUQR_FOR_PRECISION(([&]<class T>() {
      std::uint64_t seed = 970;
      for (auto [h, b] : {std::pair<int, int>{64, 32},
                          {65, 20},
                          {96, 32},
                          {100, 2},
                          {256, 32},
                          {1000, 32},
                          {4097, 17},
                          {70001, 32}}) {
        SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(b));
        // Random panels of at least 4b rows are factored (their amplification stays near 3;
        // the default threshold is 96 rows). Shorter ones (64 x 32: kappa 8-9) may be
        // declined by the amplification test, and then must be left unchanged.
        const bool factored =
            compare_ah_panel<T>(ctx(), make_matrix<T>(MatrixKind::random, h, b, seed++));
        if (h >= 4 * b) EXPECT_TRUE(factored) << "a random panel should not be declined";
        compare_ah_panel<T>(ctx(), make_matrix<T>(MatrixKind::graded, h, b, seed++));
        EXPECT_FALSE(
            compare_ah_panel<T>(ctx(), make_matrix<T>(MatrixKind::rank_deficient, h, b, seed++)))
            << "a rank-deficient panel must be left to the Householder kernel";
      }
      const double tiny = sizeof(T) == 8 ? 1e-170 : 1e-25;
      const double huge = sizeof(T) == 8 ? 1e+170 : 1e+25;
      for (double scale : {tiny, huge}) {
        Matrix<T> a = random_matrix<T>(300, 12, 35);
        for (std::int64_t i = 0; i < 300; ++i) a(i, 4) = static_cast<T>(a(i, 4) * scale);
        SCOPED_TRACE(scale);
        EXPECT_FALSE(compare_ah_panel<T>(ctx(), a));
      }
      // Ill-conditioned panels: where it factors them, as accurate as Householder QR (backward
      // error and orthogonality ratios against the LAPACK-test bound of 30). The norm-update
      // test declines most of them (measured: every one from cond = 1e2 up); the mildest are
      // factored, so the check runs.
      int factored = 0;
      for (double cond : {2.0, 10.0, 1e2, 1e4, 1e6, 1e10}) {
        if (sizeof(T) == 4 && cond > 1e4) continue;
        for (auto [h, b] : {std::pair<int, int>{300, 32}, {517, 24}}) {
          SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(b) + " cond " +
                       std::to_string(cond));
          const Matrix<T> p = make_matrix<T>(MatrixKind::ill_conditioned, h, b, seed++, cond);
          Matrix<T> a_gpu = to_ctx<T>(ctx(), p.view());
          Matrix<T> tau_gpu = device_matrix<T>(ctx(), b, 1), v_gpu = device_matrix<T>(ctx(), h, b);
          Matrix<T> t_gpu = device_matrix<T>(ctx(), b, b);
          if (!kernels::cuda::panel_qr_ah_only<T>(ctx().impl(), a_gpu.view(), vec(tau_gpu),
                                                  v_gpu.view(), t_gpu.view()))
            continue;
          ++factored;
          const auto [res, orth] = ah_panel_ratios<T>(p, to_host(ctx(), a_gpu),
                                                      to_host(ctx(), v_gpu), to_host(ctx(), t_gpu));
          EXPECT_LT(res, 30.0);
          EXPECT_LT(orth, 30.0);
        }
      }
      EXPECT_GT(factored, 0) << "no ill-conditioned panel was factored: the check above never ran";
    }));
  }
}

/// The AH panel's outputs (panel_qr_ah_only) and blocked geqrf's R and tau on `ctx`, each
/// computed in every mode of `modes` (set by `set_mode`, reset to -1 after), must be the same
/// bits. Every path T takes: full 32-column panels (by rows), narrower ones (by doubling),
/// short and tall panels (whose Gram passes differ: 1, 2, 16, 47 and 64 partials, and the
/// tall panels' partials summed in 16 segments); the outputs start as NaN, so an entry left
/// unwritten shows. Declined panels leave T as it was in every mode. Then blocked geqrf, whose
/// inner panels run the AH kernels between the Householder kernel and larfb_small under
/// programmatic dependent launch (an ordering fault would show as a difference).
template <class T, class SetMode>
void expect_ah_same_bits(Context& ctx, SetMode set_mode, std::vector<int> modes,
                         std::uint64_t seed) {
  struct Reset {
    SetMode& set;
    ~Reset() {
      kernels::cuda::panel_qr_ah_mode(-1);
      set(-1);
    }
  } reset{set_mode};
  kernels::cuda::panel_qr_ah_mode(1);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  auto nan_device = [&](std::int64_t rows, std::int64_t cols) {
    Matrix<T> host(rows, cols);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) host(i, j) = nan;
    return to_ctx<T>(ctx, host.view());
  };
  const std::size_t nm = modes.size();
  int factored = 0, declined = 0;
  for (auto [h, b] : {std::pair<int, int>{96, 32},
                      {130, 7},
                      {1000, 32},
                      {1024, 24},
                      {3000, 32},
                      {4097, 17},
                      {70001, 32}}) {
    for (const MatrixKind kind :
         {MatrixKind::random, MatrixKind::graded, MatrixKind::rank_deficient}) {
      SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(b) + " kind " +
                   std::to_string(static_cast<int>(kind)));
      const Matrix<T> p = make_matrix<T>(kind, h, b, seed++);
      std::vector<std::vector<Matrix<T>>> outs(nm);  // by mode: the panel, tau, V, T
      std::vector<int> done(nm, 0);
      for (std::size_t m = 0; m < nm; ++m) {
        set_mode(modes[m]);
        Matrix<T> a_gpu = to_ctx<T>(ctx, p.view());
        Matrix<T> tau_gpu = nan_device(b, 1), v_gpu = nan_device(h, b), t_gpu = nan_device(b, b);
        done[m] = kernels::cuda::panel_qr_ah_only<T>(ctx.impl(), a_gpu.view(), vec(tau_gpu),
                                                     v_gpu.view(), t_gpu.view());
        outs[m].push_back(to_host(ctx, a_gpu));
        outs[m].push_back(to_host(ctx, tau_gpu));
        outs[m].push_back(to_host(ctx, v_gpu));
        outs[m].push_back(to_host(ctx, t_gpu));
      }
      for (std::size_t m = 1; m < nm; ++m) {
        SCOPED_TRACE("mode " + std::to_string(modes[m]) + " against " + std::to_string(modes[0]));
        ASSERT_EQ(done[0], done[m]) << "the modes decided differently";
        for (int o = 0; o < 4; ++o)
          EXPECT_TRUE(same_bits(outs[0][o], outs[m][o])) << "output " << o;
      }
      if (!done[0]) {
        ++declined;
        EXPECT_TRUE(same_bits(outs[0][3], to_host(ctx, nan_device(b, b))))
            << "declined, yet T was written";
        continue;
      }
      ++factored;
      bool finite = true;
      for (std::int64_t j = 0; j < b; ++j)
        for (std::int64_t i = 0; i < b; ++i) finite = finite && std::isfinite(outs[0][3](i, j));
      EXPECT_TRUE(finite) << "an entry of T was not written";
    }
  }
  EXPECT_GE(factored, 10) << "too few panels were factored for the comparison to mean much";
  EXPECT_GE(declined, 1) << "no declined panel: the status path was not checked";
  kernels::cuda::panel_qr_ah_mode(-1);
  for (auto [m, n] : {std::pair<int, int>{1024, 1024}, {1500, 700}, {777, 333}}) {
    SCOPED_TRACE("geqrf " + std::to_string(m) + "x" + std::to_string(n));
    const Matrix<T> a = random_matrix<T>(m, n, seed++);
    std::vector<Matrix<T>> r(nm), tau_h(nm);
    for (std::size_t k = 0; k < nm; ++k) {
      set_mode(modes[k]);
      Matrix<T> qr = to_ctx<T>(ctx, a.view());
      Matrix<T> tau = nan_device(std::min(m, n), 1);
      detail::blocked_geqrf<T>(ctx, qr.view(), vec(tau), {0, 0});
      r[k] = to_host(ctx, qr);
      tau_h[k] = to_host(ctx, tau);
    }
    for (std::size_t k = 1; k < nm; ++k) {
      EXPECT_TRUE(same_bits(r[0], r[k])) << "mode " << modes[k];
      EXPECT_TRUE(same_bits(tau_h[0], tau_h[k])) << "mode " << modes[k];
    }
  }
}

TEST_P(KernelTwins, PanelQrAhTBesideTheScalingGivesTheSameBits) {
  // T formed by its own kernel beside the scaling kernel (panel_qr_ah_t_beside_mode(1), the
  // default; it starts before the scaling ends and waits for it only at its end) must be the
  // b x b kernel's T bit for bit (the same device function, the same sums), and every other
  // output with it.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    expect_ah_same_bits<T>(
        ctx(), [](int m) { kernels::cuda::panel_qr_ah_t_beside_mode(m); }, {0, 1}, 4410);
  }));
}

TEST_P(KernelTwins, PanelQrAhReadsOfTheGramPartialsGiveTheSameBits) {
  // The b x b kernel's reads of the Gram pass's partials (panel_qr_ah_read_mode): 0, four
  // partials at a time; 1, eight, the top block's loads first; 2, eight, only the upper
  // triangles, mirrored (the partials are symmetric bit for bit); 3 (the default), sixteen.
  // The same sums in the same order: the same bits, on panels with few partials, many (47:
  // 16, 16, 8, 4 and three at a time), and the tall panels'.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    expect_ah_same_bits<T>(
        ctx(), [](int m) { kernels::cuda::panel_qr_ah_read_mode(m); }, {0, 1, 2, 3}, 5520);
  }));
}

TEST_P(KernelTwins, PanelQrAhShadowWarpsGiveTheSameBits) {
  // Algorithm 2 with the b x b kernel's other four warps running the four warps' instructions
  // ahead of them, storing nothing (panel_qr_ah_warp_mode(10)), against mode 7 without them:
  // the four warps do the same work, so the same bits, including the decisions of the
  // norm-update and amplification tests on the graded and rank-deficient panels; a shadow
  // that stored anything, or a missing barrier, would show as a difference or a NaN.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    expect_ah_same_bits<T>(
        ctx(), [](int m) { kernels::cuda::panel_qr_ah_warp_mode(m); }, {7, 10}, 6630);
  }));
}

/// panel_qr_update on both backends for the h x w matrix whose first 32 columns are `panel`
/// and the rest `rest`: R, the reflectors, tau, V, T and the updated columns. For a
/// rank-deficient panel only the first `rank` reflectors (and R's and the updated columns'
/// first `rank` rows, which the later reflectors do not touch) are determined.
template <class T>
void compare_step(Context& gpu, const Matrix<T>& a, std::int64_t rank) {
  constexpr std::int64_t ib = 32;
  const std::int64_t h = a.rows(), w = a.cols(), r = rank;
  Context cpu = Context::cpu();
  Matrix<T> a_cpu = a.clone(), tau_cpu(ib, 1), v_cpu(h, ib), t_cpu(ib, ib), w_cpu(ib, w);
  kernels::cpu::panel_qr_update<T>(cpu.impl(), a_cpu.view(), ib, vec(tau_cpu), v_cpu.view(),
                                   t_cpu.view(), w_cpu.view().block(0, 0, ib, w - ib));
  zero_below_diagonal(t_cpu);
  Matrix<T> a_gpu = to_ctx<T>(gpu, a.view());
  Matrix<T> tau_gpu = device_matrix<T>(gpu, ib, 1), v_gpu = device_matrix<T>(gpu, h, ib);
  Matrix<T> t_gpu = device_matrix<T>(gpu, ib, ib), w_gpu = device_matrix<T>(gpu, ib, w);
  kernels::cuda::panel_qr_update<T>(gpu.impl(), a_gpu.view(), ib, vec(tau_gpu), v_gpu.view(),
                                    t_gpu.view(), w_gpu.view().block(0, 0, ib, w - ib));
  const Matrix<T> back = to_host(gpu, a_gpu);
  const double bound = 50.0 * std::sqrt(double(h)) * accuracy::eps<T>();  // relative
  // The panel: R's first r rows, the first r reflectors; tau, V, T likewise.
  Matrix<T> r_gpu(r, ib), r_cpu(r, ib);
  for (std::int64_t j = 0; j < ib; ++j)
    for (std::int64_t i = 0; i < r; ++i) {
      r_gpu(i, j) = i <= j ? back(i, j) : T(0);
      r_cpu(i, j) = i <= j ? a_cpu(i, j) : T(0);
    }
  EXPECT_LT(entry_diff(r_gpu, r_cpu), bound);
  EXPECT_LT(entry_diff(lead(back, h, r), lead(a_cpu, h, r)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, tau_gpu), r, 1), lead(tau_cpu, r, 1)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, v_gpu), h, r), lead(v_cpu, h, r)), bound);
  EXPECT_LT(entry_diff(lead(to_host(gpu, t_gpu), r, r), lead(t_cpu, r, r)), bound);
  // The updated columns: all rows, or the first r.
  const std::int64_t rows = r == ib ? h : r;
  Matrix<T> c_gpu(rows, w - ib), c_cpu(rows, w - ib);
  for (std::int64_t j = 0; j < w - ib; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      c_gpu(i, j) = back(i, ib + j);
      c_cpu(i, j) = a_cpu(i, ib + j);
    }
  EXPECT_LT(entry_diff(c_gpu, c_cpu), 50.0 * double(h) * accuracy::eps<T>());
}

TEST_P(KernelTwins, PanelQrUpdateStepMatchesTheTwin) {
  // The AH step (src/cuda/panel_qr_ah_step.cu: an inner panel by QRF-AH and its update of the
  // outer panel's next columns in one cluster launch) against the CPU twin (geqr2, larft,
  // larfb). Random and graded panels are factored by the step; rank-deficient ones and a
  // column whose squares leave the safe range are declined, and then the Householder kernel
  // and the update-only launch must give the same result. Heights across the cluster's
  // slicing (96 to 1024, odd ones: a block's last 32-row chunk part empty), widths 32 to 128;
  // every version of Algorithm 2.
  struct Reset {
    ~Reset() {
      kernels::cuda::panel_qr_ah_step_mode(-1);
      kernels::cuda::panel_qr_ah_warp_mode(-1);
    }
  } reset;
  kernels::cuda::panel_qr_ah_step_mode(1);
  for (const int warp : {4, 1, 6, 7, 10}) {
    SCOPED_TRACE(warp == 4   ? "Algorithm 2 by four warps"
                 : warp == 1 ? "Algorithm 2 by one warp"
                 : warp == 6 ? "Algorithm 2 by four warps, rows interleaved"
                 : warp == 7 ? "Algorithm 2 by four warps, rows interleaved, short reciprocals"
                             : "mode 7 with shadow warps running its code ahead");
    kernels::cuda::panel_qr_ah_warp_mode(warp);
    GPUQR_FOR_PRECISION(([&]<class T>() {
      std::uint64_t seed = 5100;
      // Taller panels are the AH panel's and larfb's (a block's rows of C sit in registers).
      for (const int h : {1025, 2048, 4096})
        EXPECT_FALSE(kernels::cuda::panel_qr_ah_step_wanted(ctx().device(), sizeof(T), h, 32, 96));
      for (auto [h, w] : {std::pair<int, int>{96, 32},
                          {97, 64},
                          {128, 128},
                          {161, 128},
                          {300, 96},
                          {513, 100},
                          {1000, 65},
                          {1024, 128},
                          {1024, 33}}) {
        SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
        ASSERT_TRUE(
            kernels::cuda::panel_qr_ah_step_wanted(ctx().device(), sizeof(T), h, 32, w - 32));
        for (MatrixKind kind :
             {MatrixKind::random, MatrixKind::graded, MatrixKind::rank_deficient}) {
          SCOPED_TRACE(to_string(kind));
          // The panel of `kind`, the rest random.
          Matrix<T> a = random_matrix<T>(h, w, seed++);
          const Matrix<T> p = make_matrix<T>(kind, h, 32, seed++);
          for (std::int64_t j = 0; j < 32; ++j)
            for (std::int64_t i = 0; i < h; ++i) a(i, j) = p(i, j);
          compare_step<T>(ctx(), a, kind == MatrixKind::rank_deficient ? 16 : 32);
        }
        const double tiny = sizeof(T) == 8 ? 1e-170 : 1e-25;
        Matrix<T> a = random_matrix<T>(h, w, seed++);
        for (std::int64_t i = 0; i < h; ++i) a(i, 4) = static_cast<T>(a(i, 4) * tiny);
        SCOPED_TRACE("a tiny column");
        compare_step<T>(ctx(), a, 32);
      }
    }));
  }
}

TEST_P(KernelTwins, PanelQrScalesExtremeColumns) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Columns whose squares over- or underflow take the kernel's rescaled path.
    const double tiny = sizeof(T) == 8 ? 1e-170 : 1e-25;
    const double huge = sizeof(T) == 8 ? 1e+170 : 1e+25;
    for (double scale : {tiny, huge}) {
      Matrix<T> a = random_matrix<T>(3000, 12, 31);
      for (std::int64_t j = 0; j < 12; j += 3)
        for (std::int64_t i = 0; i < 3000; ++i) a(i, j) = static_cast<T>(a(i, j) * scale);
      SCOPED_TRACE(scale);
      compare_panel<T>(ctx(), a);
    }
    // A column that is zero below the diagonal: tau = 0, H = I (as LAPACK's larfg).
    Matrix<T> z = random_matrix<T>(300, 4, 32);
    for (std::int64_t i = 2; i < 300; ++i) z(i, 1) = T(0);
    compare_panel<T>(ctx(), z);
  }));
}

/// Reflectors (explicit V, tau) of a real factorization of a random h x k matrix, so that V
/// and tau are consistent.
template <class T>
std::pair<Matrix<T>, Matrix<T>> reflectors(std::int64_t h, std::int64_t k, std::uint64_t seed) {
  Context cpu = Context::cpu();
  Matrix<T> work = random_matrix<T>(h, k, seed);
  Matrix<T> tau(k, 1), v(h, k);
  kernels::cpu::geqrf<T>(cpu.impl(), work.view(), vec(tau));
  kernels::cpu::form_v<T>(cpu.impl(), work.view(), v.view());
  return {std::move(v), std::move(tau)};
}

/// A rows x cols device matrix full of NaN: whatever a leaf fails to write stays NaN.
template <class T>
Matrix<T> nan_device_matrix(const Context& gpu, std::int64_t rows, std::int64_t cols) {
  Matrix<T> host(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) host(i, j) = std::numeric_limits<T>::quiet_NaN();
  return to_ctx<T>(gpu, host.view());
}

/// entry_diff, but infinite when x has an entry that is not finite (entry_diff's max would
/// skip a NaN).
template <class T>
double finite_entry_diff(const Matrix<T>& x, const Matrix<T>& y) {
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      if (!std::isfinite(double(x(i, j)))) return std::numeric_limits<double>::infinity();
  return entry_diff(x, y);
}

/// Whether T's strictly lower triangle holds exact zeros (larfb multiplies by the full T).
template <class T>
bool zero_below(const Matrix<T>& t) {
  for (std::int64_t j = 0; j < t.cols(); ++j)
    for (std::int64_t i = j + 1; i < t.rows(); ++i)
      if (!(t(i, j) == T(0))) return false;
  return true;
}

/// Restores larfb_trmm_mode's, larfb_small_mode's and larft_merge_mode's defaults however a
/// test ends.
struct TrmmModeReset {
  ~TrmmModeReset() {
    kernels::cuda::larfb_trmm_mode(-1);
    kernels::cuda::larfb_small_mode(-1);
    kernels::cuda::larft_merge_mode(-1);
  }
};

// T of larft and larft_known_diagonal against LAPACK's larft, into a T and a Gram scratch
// full of NaN so that an entry left unwritten (or read before it is written) shows; every
// merge method: batched GEMMs (k = 200, 300: a narrower last merge at some levels; 2000 x
// 256: full levels only), cuBLAS TRMM, and the merge kernel (k = 300 mixes it with TRMM
// levels).
TEST_P(KernelTwins, LarftMatchesLapackOnEveryMergePath) {
  TrmmModeReset reset;
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double base_bound = 200.0 * accuracy::eps<T>();
    std::uint64_t seed = 40;
    // 70001 x 64: V^T V with a long inner dimension.
    for (auto [h, k] : {std::pair<int, int>{40, 1},
                        {300, 31},
                        {300, 32},
                        {129, 33},
                        {700, 64},
                        {517, 100},
                        {400, 128},
                        {517, 200},
                        {2000, 256},
                        {611, 300},
                        {70001, 64}}) {
      // Sums over h rows: rounding grows like sqrt(h) past the short cases.
      const double bound = base_bound * std::max(1.0, std::sqrt(double(h) / 2000.0));
      const auto [v, tau] = reflectors<T>(h, k, seed++);
      Matrix<T> t_cpu(k, k), g_cpu(k, k);
      kernels::cpu::larft<T>(cpu.impl(), v.view(), VectorView<const T>(vec(tau)), t_cpu.view(),
                             g_cpu.view());
      zero_below_diagonal(t_cpu);  // LAPACK leaves it
      // The diagonal 32-blocks alone, as the panel kernels leave them for larft_known_diagonal.
      Matrix<T> t_diag(k, k);
      for (std::int64_t j = 0; j < k; ++j)
        for (std::int64_t i = 0; i < k; ++i)
          t_diag(i, j) = i / 32 == j / 32 ? t_cpu(i, j) : std::numeric_limits<T>::quiet_NaN();
      const Matrix<T> v_gpu = to_ctx<T>(ctx(), v.view()), tau_gpu = to_ctx<T>(ctx(), tau.view());
      for (kernels::cuda::LarftMerge merge :
           {kernels::cuda::LarftMerge::gemm, kernels::cuda::LarftMerge::trmm,
            kernels::cuda::LarftMerge::kernel}) {
        const char* names[] = {" batched gemm", " trmm", " merge kernel"};
        SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(k) + names[static_cast<int>(merge)]);
        kernels::cuda::larft_merge_mode(static_cast<int>(merge));
        Matrix<T> t_gpu = nan_device_matrix<T>(ctx(), k, k), g_gpu = nan_device_matrix<T>(ctx(), k, k);
        kernels::cuda::larft<T>(ctx().impl(), v_gpu.view(), VectorView<const T>(vec(tau_gpu)),
                                t_gpu.view(), g_gpu.view());
        const Matrix<T> t_back = to_host(ctx(), t_gpu);
        EXPECT_LT(finite_entry_diff(t_back, t_cpu), bound);
        EXPECT_TRUE(zero_below(t_back));
        Matrix<T> tk_gpu = to_ctx<T>(ctx(), t_diag.view());
        g_gpu = nan_device_matrix<T>(ctx(), k, k);
        kernels::cuda::larft_known_diagonal<T>(ctx().impl(), v_gpu.view(),
                                               VectorView<const T>(vec(tau_gpu)), tk_gpu.view(),
                                               g_gpu.view(), 32);
        const Matrix<T> tk_back = to_host(ctx(), tk_gpu);
        EXPECT_LT(finite_entry_diff(tk_back, t_cpu), bound);
        EXPECT_TRUE(zero_below(tk_back));
      }
    }
  }));
}

// larfb, every side and op, odd sizes of C, every path (GEMMs with T, cuBLAS TRMM, and the
// one-launch larfb_small for k <= 32 on the left: C's columns not a multiple of its 4, k not a
// multiple of its 8), short and tall V, against LAPACK's larfb, with T from our larft (its
// explicit zeros below the diagonal are what the GEMM paths rely on) and the work array full
// of NaN.
TEST_P(KernelTwins, LarfbMatchesLapackOnEveryPath) {
  TrmmModeReset reset;
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double base_bound = 200.0 * accuracy::eps<T>();
    std::uint64_t seed = 70;
    // 70001 rows: V^T C (left side) and C V (right side) with a long inner dimension.
    for (auto [h, k] : {std::pair<int, int>{40, 1},
                        {97, 7},
                        {300, 32},
                        {300, 33},
                        {1024, 31},
                        {4096, 32},
                        {517, 100},
                        {2000, 256},
                        {611, 300},
                        {70001, 32},
                        {70001, 96}}) {
      // Sums over h rows: rounding grows like sqrt(h) past the short cases.
      const double bound = base_bound * std::max(1.0, std::sqrt(double(h) / 2000.0));
      const auto [v, tau] = reflectors<T>(h, k, seed++);
      const bool small_fits = k <= 32;
      Matrix<T> t_cpu(k, k), g_cpu(k, k);
      kernels::cpu::larft<T>(cpu.impl(), v.view(), VectorView<const T>(vec(tau)), t_cpu.view(),
                             g_cpu.view());
      zero_below_diagonal(t_cpu);
      const Matrix<T> v_gpu = to_ctx<T>(ctx(), v.view()), tau_gpu = to_ctx<T>(ctx(), tau.view());
      // 0: GEMMs, 1: cuBLAS TRMM, 2: larfb_small (left side, k <= 32).
      for (int path : {0, 1, 2}) {
        if (path == 2 && !small_fits) continue;
        const int trmm = path == 1 ? 1 : 0;
        kernels::cuda::larfb_trmm_mode(trmm);
        kernels::cuda::larfb_small_mode(path == 2 ? 1 : 0);
        Matrix<T> t_gpu = nan_device_matrix<T>(ctx(), k, k), g_gpu = device_matrix<T>(ctx(), k, k);
        kernels::cuda::larft<T>(ctx().impl(), v_gpu.view(), VectorView<const T>(vec(tau_gpu)),
                                t_gpu.view(), g_gpu.view());
        for (Side side : {Side::left, Side::right}) {
          for (Op op : {Op::no_trans, Op::trans}) {
            for (std::int64_t other : {1, 45, 77}) {
              SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(k) +
                           (side == Side::left ? " left" : " right") +
                           (op == Op::trans ? " trans" : " no_trans") + " other " +
                           std::to_string(other) +
                           (path == 0 ? " gemm" : (path == 1 ? " trmm" : " small")));
              const std::int64_t rows = side == Side::left ? h : other;
              const std::int64_t cols = side == Side::left ? other : h;
              const Matrix<T> c = random_matrix<T>(rows, cols, seed + 1000 * other);
              Matrix<T> c_cpu = c.clone();
              Matrix<T> w_cpu(side == Side::left ? k : rows, side == Side::left ? cols : k);
              kernels::cpu::larfb<T>(cpu.impl(), side, op, v.view(), t_cpu.view(), c_cpu.view(),
                                     w_cpu.view());
              Matrix<T> c_gpu = to_ctx<T>(ctx(), c.view());
              Matrix<T> w_gpu = nan_device_matrix<T>(ctx(), w_cpu.rows(), w_cpu.cols());
              const std::int64_t small_before = kernels::cuda::larfb_small_count();
              kernels::cuda::larfb<T>(ctx().impl(), side, op, v_gpu.view(), t_gpu.view(),
                                      c_gpu.view(), w_gpu.view());
              // The path asked for is the one taken.
              EXPECT_EQ(kernels::cuda::larfb_small_count() - small_before,
                        path == 2 && side == Side::left ? 1 : 0);
              const Matrix<T> c_back = to_host(ctx(), c_gpu);
              // H is orthogonal, not the identity: C must have changed.
              EXPECT_GT(entry_diff(c_back, c), 1e3 * bound);
              EXPECT_LT(finite_entry_diff(c_back, c_cpu), bound);
            }
          }
        }
      }
    }
  }));
}

TEST_P(KernelTwins, FormVAndLaset) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const Matrix<T> qr = random_matrix<T>(77, 30, 50);
    Matrix<T> v_cpu(77, 30);
    kernels::cpu::form_v<T>(cpu.impl(), qr.view(), v_cpu.view());
    Matrix<T> qr_gpu = to_ctx<T>(ctx(), qr.view());
    Matrix<T> v_gpu = device_matrix<T>(ctx(), 77, 30);
    kernels::cuda::form_v<T>(ctx().impl(), qr_gpu.view(), v_gpu.view());
    EXPECT_EQ(entry_diff(to_host(ctx(), v_gpu), v_cpu), 0.0);
    Matrix<T> s_cpu = random_matrix<T>(20, 9, 51);
    Matrix<T> s_gpu = to_ctx<T>(ctx(), s_cpu.view());
    kernels::cpu::laset<T>(cpu.impl(), T(0.5), T(2), s_cpu.view());
    kernels::cuda::laset<T>(ctx().impl(), T(0.5), T(2), s_gpu.view());
    EXPECT_EQ(entry_diff(to_host(ctx(), s_gpu), s_cpu), 0.0);
  }));
}

// R's |diagonal| and the residual norms read back together (UpdatableQR::solve): the same
// values as the CPU twin and as abs_diagonal and column_norms one at a time, on a graded
// matrix (columns from 1e-30 to 1e+30 in double: the scaled norm must keep them), with a
// residual block of one row and of none.
TEST_P(KernelTwins, DiagonalAndNormsMatchesTheTwoReadBacks) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    Matrix<T> a = random_matrix<T>(40, 23, 52);
    const double span = sizeof(T) == 8 ? 30.0 : 10.0;
    for (std::int64_t j = 0; j < a.cols(); ++j)
      for (std::int64_t i = 0; i < a.rows(); ++i)
        a(i, j) = T(double(a(i, j)) * std::pow(10.0, -span + 2 * span * double(j) / 22.0));
    Matrix<T> a_gpu = to_ctx<T>(ctx(), a.view());
    for (const std::int64_t rows : {17, 1, 0}) {
      const MatrixView<const T> r_cpu = MatrixView<const T>(a.view()).block(0, 0, 23, 23);
      const MatrixView<const T> b_cpu = MatrixView<const T>(a.view()).block(23, 0, rows, 23);
      const MatrixView<const T> r_gpu = MatrixView<const T>(a_gpu.view()).block(0, 0, 23, 23);
      const MatrixView<const T> b_gpu = MatrixView<const T>(a_gpu.view()).block(23, 0, rows, 23);
      const std::vector<double> want =
          kernels::cpu::diagonal_and_norms<T>(cpu.impl(), r_cpu, b_cpu);
      const std::vector<double> got =
          kernels::cuda::diagonal_and_norms<T>(ctx().impl(), r_gpu, b_gpu);
      std::vector<double> apart = kernels::cuda::abs_diagonal<T>(ctx().impl(), r_gpu);
      const std::vector<double> norms = kernels::cuda::column_norms<T>(ctx().impl(), b_gpu);
      apart.insert(apart.end(), norms.begin(), norms.end());
      ASSERT_EQ(want.size(), 46u);
      ASSERT_EQ(got.size(), 46u);
      EXPECT_EQ(got, apart);
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_LE(std::abs(got[i] - want[i]), 10 * accuracy::eps<T>() * want[i])
            << "entry " << i << " (rows " << rows << ")";
        if (rows > 0 || i < 23) EXPECT_GT(want[i], 0.0) << "entry " << i;
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelTwins, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
