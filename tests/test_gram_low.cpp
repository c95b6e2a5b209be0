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

INSTANTIATE_TEST_SUITE_P(Backends, GramLow, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
