// The CUDA trsm leaf's own back substitution (src/cuda/trsm_few_rhs.cu: upper triangular,
// no transpose, at most kFewRhs right-hand sides) against its CPU twin (BLAS trsm), and its
// normwise backward error against a bound, on odd sizes, padded leading dimensions, unit and
// non-unit diagonals, graded rows, and NaN below the diagonal (which must never be read).
// CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gpuqr/accuracy.hpp"
#include "src/core/dense_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class TrsmFewRhsCuda : public BackendTest {};

/// ||R x - b||_F / ((||R||_F ||x||_F + ||b||_F) n eps), in double on the host, over the upper
/// triangle of R (unit: ones on the diagonal).
template <class T>
double backward_error(const Matrix<T>& r, bool unit, const Matrix<T>& x, const Matrix<T>& b) {
  const std::int64_t n = x.rows(), k = x.cols();
  double res = 0, rn = 0, xn = 0, bn = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) {
      const double v = (i == j && unit) ? 1.0 : double(r(i, j));
      rn += v * v;
    }
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t i = 0; i < n; ++i) {
      double s = -double(b(i, q));
      for (std::int64_t j = i; j < n; ++j)
        s += ((i == j && unit) ? 1.0 : double(r(i, j))) * double(x(j, q));
      res += s * s;
      xn += double(x(i, q)) * double(x(i, q));
      bn += double(b(i, q)) * double(b(i, q));
    }
  return std::sqrt(res) /
         ((std::sqrt(rn) * std::sqrt(xn) + std::sqrt(bn)) * double(n) * accuracy::eps<T>());
}

TEST_P(TrsmFewRhsCuda, MatchesBlasAndIsBackwardStable) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    int cases = 0;
    for (std::int64_t n : {1, 7, 32, 33, 100, 257, 1000, 3001})
      for (std::int64_t k : {1, 2, 4, 5})       // 5: past kFewRhs, cuBLAS
        for (int kind = 0; kind < 3; ++kind) {  // 0 well conditioned, 1 graded, 2 unit
          if (n >= 1000 && k == 2) continue;
          const bool unit = kind == 2;
          SCOPED_TRACE("n " + std::to_string(n) + " k " + std::to_string(k) + " kind " +
                       std::to_string(kind));
          const std::int64_t lda = n + 3, ldb = n + 5;
          Matrix<T> rs = random_matrix<T>(lda, n, 40 + n + kind);
          Matrix<T> bs = random_matrix<T>(ldb, k, 41 + n);
          for (std::int64_t j = 0; j < n; ++j) {
            // Off the diagonal |R(i, j)| < 1 / n against |R(j, j)| > 2: well conditioned
            // (random triangular matrices are not), so that the twins agree entry by entry.
            for (std::int64_t i = 0; i < j; ++i) rs(i, j) /= T(n);
            for (std::int64_t i = j + 1; i < lda; ++i)
              rs(i, j) = std::numeric_limits<T>::quiet_NaN();  // never read
            rs(j, j) += T(j % 2 == 0 ? 3 : -3);
            if (unit) rs(j, j) = std::numeric_limits<T>::quiet_NaN();  // never read either
            if (kind == 1)  // rows graded over 8 (FP32: 4) orders of magnitude
              for (std::int64_t i = 0; i <= j; ++i)
                rs(i, j) *=
                    T(std::pow(10.0, -(sizeof(T) == 8 ? 8.0 : 4.0) * double(i) / double(n)));
          }
          const Diag diag = unit ? Diag::unit : Diag::non_unit;
          Matrix<T> x_cpu = bs.clone();
          kernels::cpu::trsm<T>(cpu.impl(), Uplo::upper, Op::no_trans, diag,
                                MatrixView<const T>(rs.view().block(0, 0, n, n)),
                                x_cpu.view().block(0, 0, n, k));
          Matrix<T> r_g = to_ctx<T>(ctx(), rs.view()), x_g = to_ctx<T>(ctx(), bs.view());
          kernels::cuda::trsm<T>(ctx().impl(), Uplo::upper, Op::no_trans, diag,
                                 MatrixView<const T>(r_g.view().block(0, 0, n, n)),
                                 x_g.view().block(0, 0, n, k));
          const Matrix<T> x_back = to_host(ctx(), x_g);
          const Matrix<T> x = lead(x_back, n, k), b = lead(bs, n, k);
          Matrix<T> r(n, n);
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < n; ++i) r(i, j) = i <= j ? rs(i, j) : T(0);
          EXPECT_LT(backward_error(r, unit, x, b), 10.0);
          // Rows below the solve are untouched (ldb > n).
          for (std::int64_t q = 0; q < k; ++q)
            for (std::int64_t i = n; i < ldb; ++i) ASSERT_EQ(x_back(i, q), bs(i, q));
          if (kind != 1) {  // well conditioned: the same solution as BLAS within rounding
            EXPECT_LT(entry_diff(x, lead(x_cpu, n, k)), 100.0 * double(n) * accuracy::eps<T>());
          }
          ++cases;
        }
    EXPECT_GT(cases, 80);
  }));
}

// The kernel's tiles hand x on through a copy pre-filled with a signaling NaN that no
// arithmetic result can equal: NaN and Inf in B, or an exact zero on R's diagonal (x = Inf,
// then NaN), must come out as NaN or Inf where LAPACK's do, and never hang.
TEST_P(TrsmFewRhsCuda, NanAndInfPassThroughWithoutHanging) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const std::int64_t n = 300;
    for (std::int64_t k : {1, 3}) {
      for (int kind = 0; kind < 3; ++kind) {  // 0 NaN in B, 1 Inf in B, 2 zero pivot
        SCOPED_TRACE("k " + std::to_string(k) + " kind " + std::to_string(kind));
        Matrix<T> r = random_matrix<T>(n, n, 60 + kind), b = random_matrix<T>(n, k, 61);
        for (std::int64_t j = 0; j < n; ++j) {
          for (std::int64_t i = j + 1; i < n; ++i) r(i, j) = T(0);
          for (std::int64_t i = 0; i < j; ++i) r(i, j) /= T(n);
          r(j, j) += T(3);
        }
        if (kind == 0) b(200, 0) = std::numeric_limits<T>::quiet_NaN();
        if (kind == 1) b(250, k - 1) = std::numeric_limits<T>::infinity();
        if (kind == 2) r(150, 150) = T(0);
        Matrix<T> x_cpu = b.clone();
        kernels::cpu::trsm<T>(cpu.impl(), Uplo::upper, Op::no_trans, Diag::non_unit,
                              MatrixView<const T>(r.view()), x_cpu.view());
        Matrix<T> r_g = to_ctx<T>(ctx(), r.view()), x_g = to_ctx<T>(ctx(), b.view());
        kernels::cuda::trsm<T>(ctx().impl(), Uplo::upper, Op::no_trans, Diag::non_unit,
                               MatrixView<const T>(r_g.view()), x_g.view());
        const Matrix<T> x = to_host(ctx(), x_g);
        int nonfinite = 0;
        for (std::int64_t q = 0; q < k; ++q)
          for (std::int64_t i = 0; i < n; ++i) {
            const double got = double(x(i, q)), want = double(x_cpu(i, q));
            EXPECT_EQ(std::isfinite(got), std::isfinite(want)) << "x(" << i << ", " << q << ")";
            nonfinite += std::isfinite(got) ? 0 : 1;
          }
        EXPECT_GT(nonfinite, 0);  // the case did reach the solve
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, TrsmFewRhsCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
