// Each CUDA leaf of the blocked QR against its CPU twin (LAPACK's geqr2, larft, larfb) on the
// same inputs. Both follow LAPACK's sign convention (beta = -sign(alpha) ||x||), so R, tau, V
// and T are compared entry by entry within rounding. CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuqr/accuracy.hpp"
#include "src/core/blocked_kernels.hpp"
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
    for (auto [h, b] : {std::pair<int, int>{1, 1}, {5, 5}, {33, 32}, {200, 7}, {1000, 32},
                        {5000, 32}, {40000, 17}, {70001, 32}, {150000, 32}}) {
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
  // kernel), both against LAPACK. Heights at the register-count boundaries (16 * 2^k).
  struct Reset {
    ~Reset() { kernels::cuda::panel_qr_single_block(-1); }
  } reset;
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
    ~Reset() { kernels::cuda::panel_qr_single_block(-1); }
  } reset;
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

TEST_P(KernelTwins, LarftAndLarfbMatchLapack) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    for (auto [h, k] : {std::pair<int, int>{40, 1}, {300, 32}, {700, 96}, {2000, 256}, {517, 200}}) {
      SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(k));
      // Reflectors from a real factorization, so V and tau are consistent.
      Matrix<T> a = random_matrix<T>(h, k, 40);
      Matrix<T> tau(k, 1), v(h, k);
      {
        Matrix<T> work = a.clone();
        Matrix<T> full_tau(k, 1);
        kernels::cpu::geqrf<T>(cpu.impl(), work.view(), vec(full_tau));
        kernels::cpu::form_v<T>(cpu.impl(), work.view(), v.view());
        tau = std::move(full_tau);
      }
      Matrix<T> t_cpu(k, k), g_cpu(k, k);
      kernels::cpu::larft<T>(cpu.impl(), v.view(), VectorView<const T>(vec(tau)), t_cpu.view(),
                             g_cpu.view());
      zero_below_diagonal(t_cpu);  // LAPACK leaves it
      Matrix<T> v_gpu = to_ctx<T>(ctx(), v.view());
      Matrix<T> tau_gpu = to_ctx<T>(ctx(), tau.view());
      Matrix<T> t_gpu = device_matrix<T>(ctx(), k, k), g_gpu = device_matrix<T>(ctx(), k, k);
      kernels::cuda::larft<T>(ctx().impl(), v_gpu.view(), VectorView<const T>(vec(tau_gpu)),
                              t_gpu.view(), g_gpu.view());
      const Matrix<T> t_back = to_host(ctx(), t_gpu);
      EXPECT_LT(entry_diff(t_back, t_cpu), 50.0 * h * accuracy::eps<T>());
      // larfb: every side and op on a random C.
      for (Side side : {Side::left, Side::right}) {
        for (Op op : {Op::no_trans, Op::trans}) {
          const std::int64_t rows = side == Side::left ? h : 45, cols = side == Side::left ? 45 : h;
          const Matrix<T> c = random_matrix<T>(rows, cols, 41);
          Matrix<T> c_cpu = c.clone();
          Matrix<T> w_cpu(side == Side::left ? k : rows, side == Side::left ? cols : k);
          kernels::cpu::larfb<T>(cpu.impl(), side, op, v.view(), t_cpu.view(), c_cpu.view(),
                                 w_cpu.view());
          Matrix<T> c_gpu = to_ctx<T>(ctx(), c.view());
          Matrix<T> w_gpu = device_matrix<T>(ctx(), w_cpu.rows(), w_cpu.cols());
          kernels::cuda::larfb<T>(ctx().impl(), side, op, v_gpu.view(), t_gpu.view(),
                                  c_gpu.view(), w_gpu.view());
          EXPECT_LT(entry_diff(to_host(ctx(), c_gpu), c_cpu), 50.0 * h * accuracy::eps<T>());
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

INSTANTIATE_TEST_SUITE_P(Backends, KernelTwins, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
