// Each CUDA leaf of the CholeskyQR / orhr_col family (src/core/cholqr_kernels.hpp) against its
// CPU twin on the same random inputs. Both backends follow the same conventions (upper
// Cholesky factor with a positive diagonal; orhr_col's signs d_k = -sign(pivot), as LAPACK),
// so outputs are compared entry by entry within rounding. CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/qrf_ah_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class TsqrCudaTwins : public BackendTest {};

const std::pair<int, int> kShapes[] = {{1, 1}, {100, 7}, {1000, 32}, {3001, 45}, {20000, 130},
                                       {5000, 300}};

TEST_P(TsqrCudaTwins, GramCholeskyAndMultiplyMatchCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 300;
    for (auto [m, n] : kShapes) {
      for (double shift_factor : {0.0, 1e-3}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " shift " +
                     std::to_string(shift_factor));
        const Matrix<T> a = random_matrix<T>(m, n, seed++);
        // Gram matrix.
        Matrix<T> g_cpu(n, n);
        kernels::cpu::gram<T>(cpu.impl(), a.view(), g_cpu.view());
        const Matrix<T> a_gpu = device_copy(ctx(), a);
        Matrix<T> g_gpu = device_matrix<T>(ctx(), n, n);
        kernels::cuda::gram<T>(ctx().impl(), a_gpu.view(), g_gpu.view());
        EXPECT_LT(entry_diff(to_host(ctx(), g_gpu), g_cpu), 10.0 * m * eps);
        // Cholesky + inverse + status, from the same (CPU) Gram matrix.
        Matrix<T> r_cpu = g_cpu.clone(), rinv_cpu(n, n);
        std::vector<double> st_cpu(detail::kStatusSize);
        kernels::cpu::cholesky_inverse<T>(cpu.impl(), r_cpu.view(), rinv_cpu.view(), shift_factor,
                                          VectorView<double>(st_cpu.data(), detail::kStatusSize));
        Matrix<T> r_gpu = device_copy(ctx(), g_cpu);
        Matrix<T> rinv_gpu = device_matrix<T>(ctx(), n, n);
        Matrix<double> st_gpu = device_matrix<double>(ctx(), detail::kStatusSize, 1);
        kernels::cuda::cholesky_inverse<T>(
            ctx().impl(), r_gpu.view(), rinv_gpu.view(), shift_factor,
            vec(st_gpu));
        const Matrix<double> st = to_host(ctx(), st_gpu);
        EXPECT_EQ(st(detail::kStatusBreakdown, 0), 0.0);
        EXPECT_EQ(st_cpu[detail::kStatusBreakdown], 0.0);
        for (int k : {int(detail::kStatusOffset), int(detail::kStatusTrace),
                      int(detail::kStatusInverseNorm), int(detail::kStatusMinDiag),
                      int(detail::kStatusMaxDiag), int(detail::kStatusShift)}) {
          EXPECT_NEAR(st(k, 0), st_cpu[k], 1e3 * n * eps * std::abs(st_cpu[k]) + 1e-300)
              << "status entry " << k;
        }
        const double chol_bound = 100.0 * n * eps;
        EXPECT_LT(entry_diff(to_host(ctx(), r_gpu), r_cpu), chol_bound);
        EXPECT_LT(entry_diff(to_host(ctx(), rinv_gpu), rinv_cpu),
                  chol_bound * st_cpu[detail::kStatusMaxDiag] /
                      st_cpu[detail::kStatusMinDiag]);
        // multiply, both ops: A R^{-1} and A^T B.
        Matrix<T> c_cpu(m, n);
        kernels::cpu::multiply<T>(cpu.impl(), Op::no_trans, a.view(), rinv_cpu.view(),
                                  c_cpu.view());
        const Matrix<T> rinv_dev = device_copy(ctx(), rinv_cpu);
        Matrix<T> c_gpu = device_matrix<T>(ctx(), m, n);
        kernels::cuda::multiply<T>(ctx().impl(), Op::no_trans, a_gpu.view(), rinv_dev.view(),
                                   c_gpu.view());
        EXPECT_LT(entry_diff(to_host(ctx(), c_gpu), c_cpu), 10.0 * n * eps);
        Matrix<T> t_cpu(n, n);
        kernels::cpu::multiply<T>(cpu.impl(), Op::trans, a.view(), c_cpu.view(), t_cpu.view());
        const Matrix<T> c_dev = device_copy(ctx(), c_cpu);
        Matrix<T> t_gpu = device_matrix<T>(ctx(), n, n);
        kernels::cuda::multiply<T>(ctx().impl(), Op::trans, a_gpu.view(), c_dev.view(),
                                   t_gpu.view());
        EXPECT_LT(entry_diff(to_host(ctx(), t_gpu), t_cpu), 10.0 * m * eps);
      }
    }
  }));
}

TEST_P(TsqrCudaTwins, CholeskyBreakdownIsReportedNotThrown) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t n = 6;
    // An indefinite symmetric matrix: diagonal 1 except G(3, 3) = -1.
    Matrix<T> g(n, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) g(i, j) = i == j ? (i == 3 ? T(-1) : T(1)) : T(0.01);
    Matrix<T> g_gpu = to_ctx<T>(ctx(), g.view());
    Matrix<T> rinv = device_matrix<T>(ctx(), n, n);
    Matrix<double> st = device_matrix<double>(ctx(), detail::kStatusSize, 1);
    kernels::cuda::cholesky_inverse<T>(
        ctx().impl(), g_gpu.view(), rinv.view(), 0.0,
        vec(st));
    EXPECT_EQ(to_host(ctx(), st)(detail::kStatusBreakdown, 0), 4.0);  // column 3, 1-based
  }));
}

// gram_status (block-Jacobi's prediction and certificate): offset, trace and the row sum of
// |G - I| against the CPU twin and against a sum in long double here, on symmetric matrices
// near the identity (the certificate's range), one far from it, a leading dimension past n,
// and a NaN that must reach the row sum (a NaN must never read as a small sum).
TEST_P(TsqrCudaTwins, GramStatusMatchesCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    std::uint64_t seed = 900;
    for (const std::int64_t n : {1, 37, 256, 1030}) {
      for (const double spread : {1e-3, 0.3, 5.0}) {
        SCOPED_TRACE(std::to_string(n) + " spread " + std::to_string(spread));
        const Matrix<T> x = random_matrix<T>(n, n, seed++);
        Matrix<T> g(n + 3, n);  // ld = n + 3; the rows past n are never read
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n + 3; ++i)
            g(i, j) = i >= n ? T(1e30)
                             : T((i == j ? 1.0 : 0.0) +
                                 spread * 0.5 * (double(x(i, j)) + double(x(j, i))) / n);
        const MatrixView<const T> gv = MatrixView<const T>(g.view()).block(0, 0, n, n);
        long double off = 0, most = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          long double column = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            const long double e = (long double)gv(i, j) - (i == j ? 1.0L : 0.0L);
            off += e * e;
            column += e < 0 ? -e : e;
          }
          most = std::max(most, column);
        }
        std::vector<double> st_cpu(detail::kStatusSize, -1.0);
        kernels::cpu::gram_status<T>(cpu.impl(), gv,
                                     VectorView<double>(st_cpu.data(), detail::kStatusSize));
        const Matrix<T> g_gpu = device_copy(ctx(), g);
        Matrix<double> st_gpu = device_matrix<double>(ctx(), detail::kStatusSize, 1);
        kernels::cuda::gram_status<T>(
            ctx().impl(), MatrixView<const T>(g_gpu.view()).block(0, 0, n, n), vec(st_gpu));
        const Matrix<double> st = to_host(ctx(), st_gpu);
        const double bound = 4.0 * n * std::numeric_limits<double>::epsilon();
        EXPECT_NEAR(st_cpu[detail::kStatusRowSum], double(most), bound * double(most));
        EXPECT_NEAR(st(detail::kStatusRowSum, 0), double(most), bound * double(most));
        EXPECT_NEAR(st(detail::kStatusOffset, 0), std::sqrt(double(off)),
                    bound * std::sqrt(double(off)));
        EXPECT_NEAR(st(detail::kStatusTrace, 0), st_cpu[detail::kStatusTrace], bound * n);
        for (int k : {int(detail::kStatusBreakdown), int(detail::kStatusInverseNorm),
                      int(detail::kStatusMinDiag), int(detail::kStatusMaxDiag),
                      int(detail::kStatusShift)}) {
          EXPECT_EQ(st(k, 0), 0.0) << "status entry " << k;
          EXPECT_EQ(st_cpu[k], 0.0) << "status entry " << k;
        }
      }
    }
    // A NaN off the diagonal: the row sum is NaN on both backends.
    const std::int64_t n = 300;
    Matrix<T> g(n, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) g(i, j) = i == j ? T(1) : T(1e-4);
    g(17, 250) = g(250, 17) = std::numeric_limits<T>::quiet_NaN();
    std::vector<double> st_cpu(detail::kStatusSize);
    kernels::cpu::gram_status<T>(cpu.impl(), MatrixView<const T>(g.view()),
                                 VectorView<double>(st_cpu.data(), detail::kStatusSize));
    const Matrix<T> g_gpu = device_copy(ctx(), g);
    Matrix<double> st_gpu = device_matrix<double>(ctx(), detail::kStatusSize, 1);
    kernels::cuda::gram_status<T>(ctx().impl(), MatrixView<const T>(g_gpu.view()), vec(st_gpu));
    EXPECT_TRUE(std::isnan(st_cpu[detail::kStatusRowSum]));
    EXPECT_TRUE(std::isnan(to_host(ctx(), st_gpu)(detail::kStatusRowSum, 0)));
  }));
}

// The one-block Cholesky + inverse (src/cuda/cholesky_small.cu, n <= 128): every width
// around its 32-column panels, graded and ill-conditioned Gram matrices, a leading dimension
// past n, with and without the shift. R is checked on its own (backward error of R^T R) and
// against the CPU twin within the bound scaled by R's conditioning; R^{-1} by the residual of
// R^{-1} R - I entry by entry against |R^{-1}| |R| (the bound of a computed inverse).
TEST_P(TsqrCudaTwins, SmallCholeskyAndInverseMatchCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    const bool dbl = sizeof(T) == 8;
    std::uint64_t seed = 900;
    for (MatrixKind kind : {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned}) {
      for (std::int64_t n : {1, 2, 31, 32, 33, 64, 65, 100, 127, 128}) {
        const double shift_factor = n % 2 == 1 ? 1e-3 : 0.0;
        const std::int64_t pad = n == 65 ? 3 : 0;  // G and R^{-1} with ld > n
        SCOPED_TRACE(std::string(to_string(kind)) + " n " + std::to_string(n));
        const Matrix<T> a = make_matrix<T>(kind, 2 * n + 37, n, seed++, dbl ? 1e6 : 1e2);
        Matrix<T> g(n, n);
        kernels::cpu::gram<T>(cpu.impl(), a.view(), g.view());
        Matrix<T> r_cpu = g.clone(), rinv_cpu(n, n);
        std::vector<double> st_cpu(detail::kStatusSize);
        kernels::cpu::cholesky_inverse<T>(cpu.impl(), r_cpu.view(), rinv_cpu.view(), shift_factor,
                                          VectorView<double>(st_cpu.data(), detail::kStatusSize));
        ASSERT_EQ(st_cpu[detail::kStatusBreakdown], 0.0);
        Matrix<T> gp(n + pad, n), xp(n + pad, n);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n + pad; ++i) {
            gp(i, j) = i < n ? g(i, j) : T(7);  // the rows past n must stay as they are
            xp(i, j) = T(7);
          }
        Matrix<T> g_gpu = device_copy(ctx(), gp), x_gpu = device_copy(ctx(), xp);
        Matrix<double> st_gpu = device_matrix<double>(ctx(), detail::kStatusSize, 1);
        kernels::cuda::cholesky_inverse<T>(ctx().impl(), g_gpu.view().block(0, 0, n, n),
                                           x_gpu.view().block(0, 0, n, n), shift_factor,
                                           vec(st_gpu));
        const Matrix<double> st = to_host(ctx(), st_gpu);
        const Matrix<T> rp = to_host(ctx(), g_gpu), xb = to_host(ctx(), x_gpu);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = n; i < n + pad; ++i) {
            ASSERT_EQ(rp(i, j), T(7));
            ASSERT_EQ(xb(i, j), T(7));
          }
        Matrix<T> r(n, n), x(n, n);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n; ++i) {
            r(i, j) = rp(i, j);
            x(i, j) = xb(i, j);
            if (i > j) {
              ASSERT_EQ(r(i, j), T(0)) << i << "," << j;
              ASSERT_EQ(x(i, j), T(0)) << i << "," << j;
            }
          }
        EXPECT_EQ(st(detail::kStatusBreakdown, 0), 0.0);
        // G's own figures to rounding; R's (its smallest pivot, R^{-1}'s norm) to the
        // Cholesky factor's forward error, which grows as kappa(G) = kappa(R)^2.
        const double kappa_r = std::sqrt(st_cpu[detail::kStatusTrace]) *
                               st_cpu[detail::kStatusInverseNorm] / double(n);
        for (int k : {int(detail::kStatusOffset), int(detail::kStatusTrace),
                      int(detail::kStatusShift), int(detail::kStatusInverseNorm),
                      int(detail::kStatusMinDiag), int(detail::kStatusMaxDiag)}) {
          const bool of_g =
              k == detail::kStatusOffset || k == detail::kStatusTrace || k == detail::kStatusShift;
          const double tol = 1e3 * n * eps * (of_g ? 1.0 : std::max(1.0, kappa_r * kappa_r));
          EXPECT_NEAR(st(k, 0), st_cpu[k], tol * std::abs(st_cpu[k]) + 1e-300)
              << "status entry " << k;
        }
        // R^T R = G + shift I within Cholesky's backward error.
        const double shift = st_cpu[detail::kStatusShift];
        double worst = 0.0;
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i <= j; ++i) {
            double v = 0.0, mag = 0.0;
            for (std::int64_t k = 0; k <= i; ++k) {
              v += double(r(k, i)) * double(r(k, j));
              mag += std::abs(double(r(k, i)) * double(r(k, j)));
            }
            const double target = double(g(i, j)) + (i == j ? shift : 0.0);
            worst = std::max(worst, std::abs(v - target) / (mag * n * eps));
          }
        EXPECT_LT(worst, 4.0) << "R^T R - G entry over |R^T| |R| n eps";
        const double kappa = st_cpu[detail::kStatusMaxDiag] / st_cpu[detail::kStatusMinDiag];
        EXPECT_LT(entry_diff(r, r_cpu), 100.0 * n * eps * std::max(1.0, kappa));
        // R^{-1} R = I within |R^{-1}| |R| n eps, entry by entry.
        worst = 0.0;
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i <= j; ++i) {
            double v = 0.0, mag = 0.0;
            for (std::int64_t k = i; k <= j; ++k) {
              v += double(x(i, k)) * double(r(k, j));
              mag += std::abs(double(x(i, k)) * double(r(k, j)));
            }
            worst = std::max(worst, std::abs(v - (i == j ? 1.0 : 0.0)) / (mag * n * eps));
          }
        EXPECT_LT(worst, 4.0) << "R^{-1} R - I entry over |R^{-1}| |R| n eps";
      }
    }
  }));
}

// Breakdowns in every panel of the one-block kernel, at potrf's 1-based column; a NaN pivot
// counts as one (as reference LAPACK's potrf; with no shift asked, G's NaN trace adds none).
// R^{-1}'s buffer is left alone.
TEST_P(TsqrCudaTwins, SmallCholeskyBreakdownColumn) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    struct Case {
      std::int64_t n, col;
      bool nan;
    };
    for (Case c : {Case{100, 70, false}, Case{128, 127, false}, Case{33, 32, false},
                   Case{64, 0, false}, Case{40, 5, true}}) {
      SCOPED_TRACE("n " + std::to_string(c.n) + " column " + std::to_string(c.col));
      Matrix<T> g(c.n, c.n);
      for (std::int64_t j = 0; j < c.n; ++j)
        for (std::int64_t i = 0; i < c.n; ++i) g(i, j) = i == j ? T(2) : T(0.01);
      g(c.col, c.col) = c.nan ? std::numeric_limits<T>::quiet_NaN() : T(-1);
      Matrix<T> g_gpu = to_ctx<T>(ctx(), g.view());
      Matrix<T> x(c.n, c.n);
      for (std::int64_t j = 0; j < c.n; ++j)
        for (std::int64_t i = 0; i < c.n; ++i) x(i, j) = T(3);
      Matrix<T> x_gpu = to_ctx<T>(ctx(), x.view());
      Matrix<double> st = device_matrix<double>(ctx(), detail::kStatusSize, 1);
      kernels::cuda::cholesky_inverse<T>(ctx().impl(), g_gpu.view(), x_gpu.view(), 0.0, vec(st));
      EXPECT_EQ(to_host(ctx(), st)(detail::kStatusBreakdown, 0), double(c.col + 1));
      const char* knob = std::getenv("GPUQR_SMALL_CHOLESKY");  // "0": the cuSOLVER route
      if (knob == nullptr || std::string(knob) != "0")
        EXPECT_EQ(entry_diff(to_host(ctx(), x_gpu), x), 0.0);
    }
  }));
}

TEST_P(TsqrCudaTwins, OrhrColAndFinishGeqrfMatchLapack) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 400;
    for (auto [m, n] : kShapes) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      // An orthonormal Q from LAPACK (geqrf + orgqr of a random matrix).
      Matrix<T> q = random_matrix<T>(m, n, seed++);
      {
        Matrix<T> tau(n, 1);
        geqrf<T>(cpu, q.view(), VectorView<T>(tau.data(), n));
        orgqr<T>(cpu, n, q.view(), VectorView<const T>(tau.data(), n));
      }
      Matrix<T> v_cpu(m, n), t_cpu(n, n), d_cpu(n, 1);
      kernels::cpu::orhr_col<T>(cpu.impl(), q.view(), v_cpu.view(), t_cpu.view(),
                                VectorView<T>(d_cpu.data(), n));
      const Matrix<T> q_gpu = device_copy(ctx(), q);
      Matrix<T> v_gpu = device_matrix<T>(ctx(), m, n);
      Matrix<T> t_gpu = device_matrix<T>(ctx(), n, n);
      Matrix<T> d_gpu = device_matrix<T>(ctx(), n, 1);
      kernels::cuda::orhr_col<T>(ctx().impl(), q_gpu.view(), v_gpu.view(), t_gpu.view(),
                                 vec(d_gpu));
      const Matrix<T> d_back = to_host(ctx(), d_gpu);
      for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(d_back(i, 0), d_cpu(i, 0)) << i;
      const double bound = 100.0 * n * eps;
      EXPECT_LT(entry_diff(to_host(ctx(), v_gpu), v_cpu, m, n, true), bound);
      EXPECT_LT(entry_diff(to_host(ctx(), t_gpu), t_cpu), bound);
      // finish_geqrf: D R on and above the diagonal, tau from T.
      const Matrix<T> r = random_matrix<T>(n, n, seed++);
      Matrix<T> f_cpu = v_cpu.clone(), tau_cpu(n, 1);
      kernels::cpu::finish_geqrf<T>(cpu.impl(), r.view(), VectorView<const T>(d_cpu.data(), n),
                                    t_cpu.view(), f_cpu.view(), VectorView<T>(tau_cpu.data(), n));
      Matrix<T> f_gpu = to_ctx<T>(ctx(), v_cpu.view());
      Matrix<T> tau_gpu = device_matrix<T>(ctx(), n, 1);
      const Matrix<T> r_gpu = to_ctx<T>(ctx(), r.view());
      const Matrix<T> dd = to_ctx<T>(ctx(), d_cpu.view());
      const Matrix<T> tt = to_ctx<T>(ctx(), t_cpu.view());
      kernels::cuda::finish_geqrf<T>(
          ctx().impl(), r_gpu.view(),
          vec(dd), tt.view(), f_gpu.view(), vec(tau_gpu));
      EXPECT_EQ(entry_diff(to_host(ctx(), f_gpu), f_cpu), 0.0);
      EXPECT_EQ(entry_diff(to_host(ctx(), tau_gpu), tau_cpu), 0.0);
    }
  }));
}

// orhr_col_of_product (Q = W X given as W and upper X; V's tall part W (X U^{-1})) against the
// CPU twin, out of place and in place (w = v, as geqrf_cholesky_panels calls it), where CUDA
// forms V's tall part by tall_times_upper: the streamed kernel at 70001 x 100 / 128 (m - n
// >= 65536), block columns at 70001 x 300, and the GEMMs at 3001 x 45. W = Q X^{-1} for an
// orthonormal Q from LAPACK and X = I + a small random upper triangle.
TEST_P(TsqrCudaTwins, OrhrColOfProductMatchesCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 450;
    for (auto [m, n] : {std::pair<int, int>{3001, 45}, {70001, 100}, {70001, 128}, {70001, 300}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      Matrix<T> w = random_matrix<T>(m, n, seed++);
      {
        Matrix<T> tau(n, 1);
        geqrf<T>(cpu, w.view(), VectorView<T>(tau.data(), n));
        orgqr<T>(cpu, n, w.view(), VectorView<const T>(tau.data(), n));
      }
      Matrix<T> x = random_matrix<T>(n, n, seed++);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          x(i, j) = i > j ? T(0) : (i == j ? T(1) : T(0.1) * x(i, j) / T(std::sqrt(double(n))));
      kernels::cpu::trsm_right_upper<T>(cpu.impl(), x.view(), w.view());  // W = Q X^{-1}
      Matrix<T> v_cpu(m, n), t_cpu(n, n), d_cpu(n, 1), work_cpu(n, n);
      kernels::cpu::orhr_col_of_product<T>(cpu.impl(), w.view(), x.view(), v_cpu.view(),
                                           t_cpu.view(), VectorView<T>(d_cpu.data(), n),
                                           work_cpu.view());
      const Matrix<T> w_gpu = device_copy(ctx(), w), x_gpu = device_copy(ctx(), x);
      for (const bool in_place : {false, true}) {
        SCOPED_TRACE(in_place ? "in place" : "out of place");
        Matrix<T> v_gpu = in_place ? device_copy(ctx(), w) : device_matrix<T>(ctx(), m, n);
        Matrix<T> t_gpu = device_matrix<T>(ctx(), n, n), d_gpu = device_matrix<T>(ctx(), n, 1);
        Matrix<T> work_gpu = device_matrix<T>(ctx(), n, n);
        kernels::cuda::orhr_col_of_product<T>(
            ctx().impl(), in_place ? MatrixView<const T>(v_gpu.view()) : w_gpu.view(),
            x_gpu.view(), v_gpu.view(), t_gpu.view(), vec(d_gpu), work_gpu.view());
        const Matrix<T> d_back = to_host(ctx(), d_gpu);
        for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(d_back(i, 0), d_cpu(i, 0)) << i;
        const double bound = 100.0 * n * eps;
        EXPECT_LT(entry_diff(to_host(ctx(), v_gpu), v_cpu, m, n, true), bound);
        EXPECT_LT(entry_diff(to_host(ctx(), t_gpu), t_cpu), bound);
      }
    }
  }));
}

TEST_P(TsqrCudaTwins, FusedGramAndInPlaceMultiplyMatchCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 500;
    // 300000 x 8 crosses the CUDA split-K and chunk boundaries with a short last block.
    for (auto [m, n] : {std::pair<int, int>{1, 1}, {1000, 32}, {20000, 130}, {300001, 8}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const Matrix<T> a = random_matrix<T>(m, n, seed++);
      const Matrix<T> x = random_matrix<T>(n, n, seed++);
      const Matrix<T> a_gpu = device_copy(ctx(), a), x_gpu = device_copy(ctx(), x);
      Matrix<T> g_cpu(n, n), gp_cpu(n, n);
      kernels::cpu::gram<T>(cpu.impl(), a.view(), g_cpu.view());
      kernels::cpu::gram_of_product<T>(cpu.impl(), a.view(), x.view(), gp_cpu.view());
      Matrix<T> g_gpu = device_matrix<T>(ctx(), n, n);
      Matrix<T> gp_gpu = device_matrix<T>(ctx(), n, n);
      kernels::cuda::gram<T>(ctx().impl(), a_gpu.view(), g_gpu.view());
      kernels::cuda::gram_of_product<T>(ctx().impl(), a_gpu.view(), x_gpu.view(), gp_gpu.view());
      EXPECT_LT(entry_diff(to_host(ctx(), g_gpu), g_cpu), 10.0 * m * eps);
      EXPECT_LT(entry_diff(to_host(ctx(), gp_gpu), gp_cpu), 10.0 * n * m * eps);
      Matrix<T> ax_cpu = a.clone(), ax_gpu = device_copy(ctx(), a);
      kernels::cpu::multiply_in_place<T>(cpu.impl(), ax_cpu.view(), x.view());
      kernels::cuda::multiply_in_place<T>(ctx().impl(), ax_gpu.view(), x_gpu.view());
      EXPECT_LT(entry_diff(to_host(ctx(), ax_gpu), ax_cpu), 10.0 * n * eps);
    }
  }));
}

// gram_of_upper_product with X upper (zeros below, as CholeskyQR's R^{-1}): past 128 columns
// CUDA skips X's zero blocks and G's lower half (triangle_gemm.cu); the CPU twin multiplies
// everything. n = 300: blocks of 128, 128 and 44; n = 100 takes gram_of_product's path.
TEST_P(TsqrCudaTwins, GramOfUpperProductMatchesCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 550;
    for (auto [m, n] : {std::pair<int, int>{70001, 300}, {5000, 100}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const Matrix<T> a = random_matrix<T>(m, n, seed++);
      Matrix<T> x = random_matrix<T>(n, n, seed++);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j + 1; i < n; ++i) x(i, j) = T(0);
      const Matrix<T> a_gpu = device_copy(ctx(), a), x_gpu = device_copy(ctx(), x);
      Matrix<T> g_cpu(n, n);
      kernels::cpu::gram_of_upper_product<T>(cpu.impl(), a.view(), x.view(), g_cpu.view());
      Matrix<T> g_gpu = device_matrix<T>(ctx(), n, n);
      kernels::cuda::gram_of_upper_product<T>(ctx().impl(), a_gpu.view(), x_gpu.view(),
                                              g_gpu.view());
      const Matrix<T> g_back = to_host(ctx(), g_gpu);
      EXPECT_LT(entry_diff(g_back, g_cpu), 10.0 * n * std::sqrt(double(m)) * eps);
      double asym = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          asym = std::max(asym, double(std::abs(g_back(i, j) - g_back(j, i))));
      EXPECT_EQ(asym, 0.0) << "G is not exactly symmetric";
    }
  }));
}

TEST_P(TsqrCudaTwins, AhPanelMatchesCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const double eps = accuracy::eps<T>();
    std::uint64_t seed = 600;
    for (int b : {1, 5, 16, 32}) {
      for (bool dependent : {false, true}) {
        SCOPED_TRACE("b = " + std::to_string(b) + (dependent ? " (breakdown)" : ""));
        const std::int64_t h = 500;
        Matrix<T> p = random_matrix<T>(h, b, seed++);
        // A column nearly a copy of an earlier one: the norm-update test must end the panel.
        if (dependent && b > 2)
          for (std::int64_t i = 0; i < h; ++i) p(i, b - 2) = p(i, 0) * T(1 + 1e-6 * (i % 3));
        Matrix<T> g(b, b);
        kernels::cpu::gram<T>(cpu.impl(), p.view(), g.view());
        Matrix<T> top_cpu(b, b), d_cpu(b, b), tau_cpu(b, 1);
        for (std::int64_t j = 0; j < b; ++j)
          for (std::int64_t i = 0; i < b; ++i) top_cpu(i, j) = p(i, j);
        const Matrix<T> top0 = top_cpu.clone();
        Matrix<T> g_cpu = g.clone();
        std::vector<double> st_cpu(1);
        kernels::cpu::ah_panel<T>(cpu.impl(), top_cpu.view(), g_cpu.view(), d_cpu.view(),
                                  VectorView<T>(tau_cpu.data(), b),
                                  VectorView<double>(st_cpu.data(), 1));
        Matrix<T> top_gpu = device_copy(ctx(), top0), g_gpu = device_copy(ctx(), g);
        Matrix<T> d_gpu = device_matrix<T>(ctx(), b, b);
        Matrix<T> tau_gpu = device_matrix<T>(ctx(), b, 1);
        Matrix<double> st_gpu = device_matrix<double>(ctx(), 1, 1);
        kernels::cuda::ah_panel<T>(
            ctx().impl(), top_gpu.view(), g_gpu.view(), d_gpu.view(),
            vec(tau_gpu), vec(st_gpu));
        const double kb = to_host(ctx(), st_gpu)(0, 0);
        EXPECT_EQ(kb, st_cpu[0]);
        if (dependent && b > 2 && sizeof(T) == 8) EXPECT_LT(kb, b);
        const double bound = 1e3 * b * eps;
        EXPECT_LT(entry_diff(to_host(ctx(), top_gpu), top_cpu), bound);
        EXPECT_LT(entry_diff(to_host(ctx(), d_gpu), d_cpu), bound);
        // tau is defined for the panel's kb columns only (the leaf's contract).
        const std::int64_t kbi = static_cast<std::int64_t>(kb);
        ASSERT_GE(kbi, 1);
        const Matrix<T> tau_back = to_host(ctx(), tau_gpu);
        EXPECT_LT(entry_diff(lead(tau_back, kbi, 1), lead(tau_cpu, kbi, 1)), bound);
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Cuda, TsqrCudaTwins, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
