// The reduced-precision Gram matrix (the gram_low leaf: A's entries rounded to TF32, FP32
// sums), CholeskyQR2's first-step preconditioner: the CPU twin (SSYRK on a rounded copy) and
// the CUDA leaf (cuBLAS's TF32 GEMMs by recursive halves; FP64 input converted chunk by chunk),
// each against a long-double reference within TF32's bound, exactly symmetric, and the two
// backends against each other. Both precisions, random and graded inputs, widths that do and
// do not split evenly into leaves of 256, one and several FP64 chunks.
//
// The bound. Per entry |G - G_ref|(i, j) <= (2^-8 + 2 m u) (|a_i|^T |a_j|), u = 2^-24: each
// input rounded to TF32 (RN: 2^-11 relative; a truncating conversion would be 2^-10) makes
// each product err by at most ~2^-9, the FP64 -> FP32 rounding before it adds 2^-24, and
// FP32 sums of m terms (truncating within the tensor cores' chains) err by at most ~m u
// relative. The bound is 2x to 4x above that; a dropped chunk, a wrong column or a missing
// mirror errs by O(1) and fails it by orders of magnitude. A full-precision Gram matrix would
// pass it too, so on random inputs the error must also be above what FP32 or FP64 sums
// reach (the rounding to TF32 did happen: that is the leaf's reason to exist).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/env_knob.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

class GramLow : public BackendTest {};

/// G = A^T A and S = |A|^T |A| in long double.
struct Reference {
  std::vector<long double> g, s;
};

template <class T>
Reference reference_gram(const Matrix<T>& a) {
  const std::int64_t m = a.rows(), n = a.cols();
  Reference r;
  r.g.assign(std::size_t(n * n), 0.0L);
  r.s.assign(std::size_t(n * n), 0.0L);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) {
      long double g = 0, s = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        const long double x = a(k, i), y = a(k, j);
        g += x * y;
        s += std::fabs(x * y);
      }
      r.g[std::size_t(i + j * n)] = r.g[std::size_t(j + i * n)] = g;
      r.s[std::size_t(i + j * n)] = r.s[std::size_t(j + i * n)] = s;
    }
  return r;
}

/// max over (i, j) of |G - G_ref| / S(i, j).
template <class T>
double scaled_error(const Matrix<T>& g, const Reference& ref) {
  const std::int64_t n = g.rows();
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t k = std::size_t(i + j * n);
      const double e = double(std::fabs((long double)g(i, j) - ref.g[k]) / ref.s[k]);
      worst = std::isfinite(e) ? std::max(worst, e) : 1e300;
    }
  return worst;
}

template <class T>
bool symmetric(const Matrix<T>& g) {
  for (std::int64_t j = 0; j < g.cols(); ++j)
    for (std::int64_t i = 0; i < j; ++i)
      if (!(g(i, j) == g(j, i))) return false;
  return true;
}

template <class T>
Matrix<T> backend_gram_low(const Context& ctx, const Matrix<T>& a) {
  const Matrix<T> ad = to_ctx<T>(ctx, a.view());
  const std::int64_t n = a.cols();
  // NaN in G before the call: every entry must be written.
  Matrix<T> g0(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) g0(i, j) = std::numeric_limits<T>::quiet_NaN();
  Matrix<T> g = to_ctx<T>(ctx, g0.view());
  const bool done = GPUQR_DISPATCH(ctx, gram_low, MatrixView<const T>(ad.view()), g.view());
  EXPECT_TRUE(done) << "gram_low declined (workspace)";
  return to_host(ctx, g);
}

double low_bound(std::int64_t m) { return std::ldexp(1.0, -8) + 2.0 * double(m) * 0x1p-24; }

TEST_P(GramLow, WithinTf32BoundsSymmetricAndTwinsAgree) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 4100;
    struct Shape {
      std::int64_t m, n;
    };
    // n = 300 and 257: leaves of 256 with a rest; 20011 rows with chunks of 16 MiB: 13981
    // rows at n = 300, two FP64 chunks on CUDA (one on the CPU twin, which has none).
    for (const Shape s : {Shape{1000, 1}, Shape{1000, 37}, Shape{2000, 300}, Shape{20011, 257},
                          Shape{20011, 300}}) {
      for (const MatrixKind kind : {MatrixKind::random, MatrixKind::graded}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " " + to_string(kind));
        const EnvKnob chunk("GPUQR_TF32_CHUNK_MB", s.m == 20011 ? "16" : "");
        const Matrix<T> a = make_matrix<T>(kind, s.m, s.n, seed++);
        const Reference ref = reference_gram(a);
        const Matrix<T> g = backend_gram_low<T>(ctx(), a);
        const double err = scaled_error(g, ref);
        EXPECT_LE(err, low_bound(s.m));
        EXPECT_TRUE(symmetric(g));
        // The rounding to TF32 happened: a full-precision Gram matrix errs by at most ~1e-7
        // (FP32 sums) or ~1e-15 (FP64) of S here; TF32 inputs by ~1e-5 somewhere (its worst
        // entry, measured on the CPU twin: 9.7e-6 and up).
        if (kind == MatrixKind::random && s.n >= 37) EXPECT_GT(err, 2e-6);
        if (ctx().is_cuda()) {
          // The twin: the CPU leaf on the same input, both within the bound of each other.
          const Context cpu = Context::cpu();
          const Matrix<T> twin = backend_gram_low<T>(cpu, a);
          double diff = 0;
          for (std::int64_t j = 0; j < s.n; ++j)
            for (std::int64_t i = 0; i < s.n; ++i)
              diff = std::max(diff, double(std::fabs(double(g(i, j)) - double(twin(i, j))) /
                                           ref.s[std::size_t(i + j * s.n)]));
          EXPECT_LE(diff, 2 * low_bound(s.m)) << "CUDA against its CPU twin";
        }
      }
    }
  }));
}

// Non-finite entries reach the trace (the deferred NaN/Inf check relies on it): NaN, Inf and
// an FP64 entry beyond FP32's range (its square overflows: Inf on the diagonal).
TEST_P(GramLow, NonFiniteEntriesReachTheDiagonal) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 700, n = 260;
    const T values[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        sizeof(T) == 8 ? T(1e200) : std::numeric_limits<T>::max()};
    for (const T bad : values) {
      Matrix<T> a = make_matrix<T>(MatrixKind::random, m, n, 4200);
      a(m / 2, 259) = bad;
      const Matrix<T> g = backend_gram_low<T>(ctx(), a);
      EXPECT_FALSE(std::isfinite(double(g(259, 259)))) << "value " << double(bad);
      EXPECT_TRUE(std::isfinite(double(g(0, 0))));
    }
  }));
}

// ---- The streamed FP64 kernel (src/cuda/gram_low_streamed.cu, GPUQR_GRAM_LOW_STREAMED) ----

class GramLowStreamed : public BackendTest {};

/// gram_low of A placed in device memory as a sub-block: `first` rows into a buffer of
/// ld = m + extra (1e30 outside A: a stray read shows).
Matrix<double> placed_gram_low(const Context& ctx, const Matrix<double>& a, std::int64_t first,
                               std::int64_t extra) {
  const std::int64_t m = a.rows(), n = a.cols();
  Matrix<double> host(m + extra, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m + extra; ++i)
      host(i, j) = i >= first && i < first + m ? a(i - first, j) : 1e30;
  const Matrix<double> store = to_ctx<double>(ctx, host.view());
  Matrix<double> g0(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) g0(i, j) = std::numeric_limits<double>::quiet_NaN();
  Matrix<double> g = to_ctx<double>(ctx, g0.view());
  const bool done = GPUQR_DISPATCH(
      ctx, gram_low, MatrixView<const double>(store.view().block(first, 0, m, n)), g.view());
  EXPECT_TRUE(done);
  return to_host(ctx, g);
}

// Entries in -8 .. 8: every TF32 input and every FP32 partial sum is exact (|G| <= 64 m <
// 2^24), so the kernel must return A^T A exactly; a lost, doubled or misplaced row or column,
// a wrong swizzle or a missed zero column shows as an integer off. m not a multiple of the
// 32-row chunk, several chunks per block (the ring of stages wraps) at 70001 rows, n at the
// mma tiles' edges, ld > m, and an A that is not 16-byte aligned (8-byte copies).
TEST_P(GramLowStreamed, ExactOnSmallIntegers) {
  const EnvKnob on("GPUQR_GRAM_LOW_STREAMED", "1");
  struct Case {
    std::int64_t m, n, first, extra;
  };
  std::uint64_t seed = 4300;
  for (const Case c :
       {Case{70001, 128, 0, 0}, Case{70001, 100, 1, 1}, Case{4099, 1, 0, 0}, Case{4099, 13, 0, 3},
        Case{4099, 64, 1, 1}, Case{33, 128, 0, 0}, Case{5, 37, 1, 2}}) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + " first " +
                 std::to_string(c.first) + " ld " + std::to_string(c.m + c.extra));
    std::mt19937_64 gen(seed++);
    std::uniform_int_distribution<int> pick(-8, 8);
    Matrix<double> a(c.m, c.n);
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.m; ++i) a(i, j) = pick(gen);
    const Matrix<double> g = placed_gram_low(ctx(), a, c.first, c.extra);
    std::int64_t wrong = 0;
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.n; ++i) {
        std::int64_t exact = 0;
        for (std::int64_t k = 0; k < c.m; ++k)
          exact += std::int64_t(a(k, i)) * std::int64_t(a(k, j));
        if (!(g(i, j) == double(exact))) ++wrong;
      }
    EXPECT_EQ(wrong, 0) << "entries of G not equal to the exact A^T A";
  }
}

// Random and graded FP64 inputs at the panels' sizes: within TF32's bound of the long-double
// Gram matrix, exactly symmetric, rounded (not a full-precision Gram matrix), within the bound
// of the CPU twin, bitwise the same on a second call, and not bitwise the conversion path's
// result (GPUQR_GRAM_LOW_STREAMED=0: other sums; so the kernel, not that path, was measured).
// 70001 x 128 forced on; 65536 x 100 by the default rule (m >= 65536).
TEST_P(GramLowStreamed, WithinTf32BoundsAndTwinAgrees) {
  std::uint64_t seed = 4400;
  for (const bool forced : {true, false}) {
    const std::int64_t m = forced ? 70001 : 65536, n = forced ? 128 : 100;
    for (const MatrixKind kind : {MatrixKind::random, MatrixKind::graded}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " " + to_string(kind));
      const Matrix<double> a = make_matrix<double>(kind, m, n, seed++);
      const Reference ref = reference_gram(a);
      Matrix<double> g, again;
      {
        const EnvKnob on("GPUQR_GRAM_LOW_STREAMED", forced ? "1" : "");
        g = backend_gram_low<double>(ctx(), a);
        again = backend_gram_low<double>(ctx(), a);
      }
      const double err = scaled_error(g, ref);
      EXPECT_LE(err, low_bound(m));
      EXPECT_TRUE(symmetric(g));
      if (kind == MatrixKind::random) EXPECT_GT(err, 2e-6) << "not rounded to TF32";
      bool same = true;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) same = same && g(i, j) == again(i, j);
      EXPECT_TRUE(same) << "two calls differ";
      const Matrix<double> twin = backend_gram_low<double>(Context::cpu(), a);
      double diff = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          diff = std::max(diff,
                          std::fabs(g(i, j) - twin(i, j)) / double(ref.s[std::size_t(i + j * n)]));
      EXPECT_LE(diff, 2 * low_bound(m)) << "CUDA against its CPU twin";
      if (kind == MatrixKind::random) {
        const EnvKnob off("GPUQR_GRAM_LOW_STREAMED", "0");
        const Matrix<double> old = backend_gram_low<double>(ctx(), a);
        EXPECT_LE(scaled_error(old, ref), low_bound(m));
        std::int64_t equal = 0;
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n; ++i) equal += g(i, j) == old(i, j) ? 1 : 0;
        EXPECT_LT(equal, n * n / 2) << "the streamed kernel did not run (same sums as cuBLAS's)";
      }
    }
  }
}

// NaN, Inf and an entry beyond FP32's range reach their column's diagonal entry (the deferred
// NaN/Inf check of CholeskyQR relies on the trace), the other columns' stay finite.
TEST_P(GramLowStreamed, NonFiniteEntriesReachTheDiagonal) {
  const EnvKnob on("GPUQR_GRAM_LOW_STREAMED", "1");
  const std::int64_t m = 3001, n = 100;
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(), 1e200}) {
    Matrix<double> a = make_matrix<double>(MatrixKind::random, m, n, 4500);
    a(m - 1, 99) = bad;
    const Matrix<double> g = backend_gram_low<double>(ctx(), a);
    EXPECT_FALSE(std::isfinite(g(99, 99))) << "value " << bad;
    EXPECT_TRUE(std::isfinite(g(0, 0)));
    EXPECT_TRUE(std::isfinite(g(0, 98)));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GramLow, all_backend_cases(), case_name);
// FP64 only: the kernel takes FP64 input (FP32's gram_low is GramLow's).
INSTANTIATE_TEST_SUITE_P(Backends, GramLowStreamed,
                         ::testing::Values(BackendCase{Backend::cuda, true}), case_name);

}  // namespace
}  // namespace gpuqr::testing
