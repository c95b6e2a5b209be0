// The FP32 Gram kernels on the TF32 tensor cores with the 3xTF32 split (src/cuda/gram_tf32.cu),
// forced on with the gram_tf32_mode hook (and the streamed kernels with GPUQR_GRAM_KERNEL=1):
// exact results on small integers, FP32-level rounding errors on random, graded and
// ill-conditioned inputs against a long-double reference (both A^T A and (A X)^T (A X)), a
// detector that fails if the big/small split were dropped, bitwise reproducibility, and the
// CholeskyQR methods on the paper's stress matrices through them. FP32 and CUDA only: skips
// without a GPU.
//
// The bound. Per entry, |G - G_ref|(i, j) <= (10 sqrt(m) + 64 [+ 2 n for the product]) u
// (|a_i|^T |a_j|), u = 2^-24, with |A| |X| in place of |A| for the product. An FP32 dot product
// of m terms errs by at most m u |a_i|^T |a_j| and in practice (rounding errors of either sign)
// by ~sqrt(m) u: sequential FP32 sums of the inputs below stay under 0.75 sqrt(m) u (emulated),
// so the bound sits 10x above FP32 GEMM accuracy. 3xTF32 adds a constant: each product errs by
// at most ~12 u (the dropped small * small term and the rounding of the small parts), and the
// tensor cores' truncating mma chains (6 mma at most, then FP32 adds) by ~12 u more; W = A X
// errs by ~32 u of |A| |X|, which the Gram of W doubles (the 64 and the 2 n). The lead's
// suggestion, max |G - G_ref| / ||A||_F^2 <= 10 sqrt(m) u, is looser by ~n and would not see
// plain TF32 at all. Plain TF32 errs by up to 2^-11 |ab| a product (~2^-10 / sqrt(3) rms on
// the diagonal): on the random inputs at m = 257 that is 2x-7x this bound (emulated), and the
// detector below (every product off by exactly 2^-11 relative, 8192 u) fails it by ~10x.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpuqr/tsqr.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/env_knob.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/tsqr_checks.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class GramTf32 : public BackendTest {};

constexpr double kU = 1.0 / 16777216.0;  // 2^-24, FP32's unit roundoff

/// gram_tf32_mode(mode) for the scope, back to the default (-1) however the test ends.
class Tf32Mode {
 public:
  explicit Tf32Mode(int mode) { kernels::cuda::gram_tf32_mode(mode); }
  ~Tf32Mode() { kernels::cuda::gram_tf32_mode(-1); }
};

// Every padded width (32, 64, 128) and its edges.
const int kCols[] = {1, 7, 32, 33, 64, 100, 128};

Matrix<float> pick_matrix(std::int64_t m, std::int64_t n, const std::vector<int>& values,
                          std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  Matrix<float> a(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = float(values[pick(gen)]);
  return a;
}

/// A device copy of `a`: ld = m (offset false) or starting one element into its buffer with
/// ld = m + 1 (offset true: neither 16-byte aligned nor a multiple of 4, the 4-byte copies).
struct Placed {
  Matrix<float> store;
  MatrixView<const float> view;
};
Placed place(const Context& gpu, const Matrix<float>& a, bool offset) {
  const std::int64_t m = a.rows(), n = a.cols(), first = offset ? 1 : 0;
  Matrix<float> host(m + first, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m + first; ++i)  // 1e30 outside A: a stray read shows
      host(i, j) = i >= first ? a(i - first, j) : 1e30f;
  Placed p{to_ctx<float>(gpu, host.view()), {}};
  p.view = MatrixView<const float>(p.store.view().block(first, 0, m, n));
  return p;
}

/// (A X)^T (A X) (x null: A^T A) and the same of |A| |X|, in long double on the host.
struct Reference {
  std::vector<long double> g, scale;
};
Reference reference_gram(const Matrix<float>& a, const Matrix<float>* x) {
  const std::int64_t m = a.rows(), n = a.cols();
  std::vector<long double> w(m * n), wa(m * n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      long double s = 0, sa = 0;
      if (x == nullptr) {
        s = a(i, j);
        sa = std::fabs(s);
      } else {
        for (std::int64_t k = 0; k <= j; ++k) {  // X upper triangular in every case here
          s += (long double)a(i, k) * (*x)(k, j);
          sa += std::fabs((long double)a(i, k) * (*x)(k, j));
        }
      }
      w[i + j * m] = s;
      wa[i + j * m] = sa;
    }
  Reference ref{std::vector<long double>(n * n, 0), std::vector<long double>(n * n, 0)};
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) {
      long double s = 0, sa = 0;
      for (std::int64_t r = 0; r < m; ++r) {
        s += w[r + i * m] * w[r + j * m];
        sa += wa[r + i * m] * wa[r + j * m];
      }
      ref.g[i + j * n] = ref.g[j + i * n] = s;
      ref.scale[i + j * n] = ref.scale[j + i * n] = sa;
    }
  return ref;
}

/// The leaf on the GPU: gram (x null) or gram_of_product, G back on the host.
Matrix<float> gpu_gram(const Context& gpu, MatrixView<const float> a, const Matrix<float>* x) {
  const std::int64_t n = a.cols();
  Matrix<float> g = device_matrix<float>(gpu, n, n);
  if (x == nullptr) {
    kernels::cuda::gram<float>(gpu.impl(), a, g.view());
    return to_host(gpu, g);
  }
  const Matrix<float> xd = device_copy(gpu, *x);
  kernels::cuda::gram_of_product<float>(gpu.impl(), a, xd.view(), g.view());
  return to_host(gpu, g);  // synchronizes before xd is freed
}

/// max over (i, j) of |G - G_ref| / scale(i, j).
double scaled_error(const Matrix<float>& g, const Reference& ref) {
  const std::int64_t n = g.rows();
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const long double d = std::fabs((long double)g(i, j) - ref.g[i + j * n]);
      const long double s = ref.scale[i + j * n];
      worst = std::max(worst, double(s > 0 ? d / s : d));
    }
  return worst;
}

/// The bound of the file's head, in units of the scale.
double bound(std::int64_t m, std::int64_t n, bool product) {
  return (10.0 * std::sqrt(double(m)) + 64.0 + (product ? 2.0 * double(n) : 0.0)) * kU;
}

bool bitwise_equal(const Matrix<float>& x, const Matrix<float>& y) {
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      if (std::memcmp(&x(i, j), &y(i, j), sizeof(float)) != 0) return false;
  return true;
}

/// Upper triangular n x n: entries in {-1, 0, 1}, diagonal +-1.
Matrix<float> small_x(std::int64_t n, std::uint64_t seed) {
  Matrix<float> x = pick_matrix(n, n, {-1, 0, 1}, seed);
  for (std::int64_t j = 0; j < n; ++j) {
    x(j, j) = j % 2 == 0 ? 1.0f : -1.0f;
    for (std::int64_t i = j + 1; i < n; ++i) x(i, j) = 0.0f;
  }
  return x;
}

/// Random upper triangular n x n with diagonal 4 + |x| (as R^{-1} in CholeskyQR2, well scaled).
Matrix<float> random_upper(std::int64_t n, std::uint64_t seed) {
  Matrix<float> x = random_matrix<float>(n, n, seed);
  for (std::int64_t j = 0; j < n; ++j) {
    x(j, j) = 4.0f + std::fabs(x(j, j));
    for (std::int64_t i = j + 1; i < n; ++i) x(i, j) = 0.0f;
  }
  return x;
}

const char* const kKindNames[] = {" random", " graded", " ill-conditioned"};

/// The inputs of the bound tests by kind: 0 random; 1 graded, column j scaled by
/// 10^(-3 + 6 j / (n - 1)), 1e-3 .. 1e3 (the bound is per entry: an error in a small column
/// must not hide behind the large ones); 2 ill-conditioned (the paper's stress matrix with
/// R(n / 2, n / 2) = 1e-6).
Matrix<float> input_of_kind(int kind, std::int64_t m, std::int64_t n, std::uint64_t seed) {
  Matrix<float> a = kind == 2 ? stress_matrix<float>(m, n, n / 2, 1e-6, seed)
                              : random_matrix<float>(m, n, seed);
  if (kind == 1 && n > 1)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        a(i, j) *= float(std::pow(10.0, -3.0 + 6.0 * double(j) / double(n - 1)));
  return a;
}

TEST_P(GramTf32, ExactOnSmallIntegers) {
  const EnvKnob kernel("GPUQR_GRAM_KERNEL", "1");
  const Tf32Mode tf32(1);
  std::uint64_t seed = 10;
  // m: one row, less than a chunk, not a multiple of any chunk height (256, 128, 64), and
  // many chunks per block (the ring of stages wraps) for the narrow case.
  for (const std::int64_t m : {1, 37, 4097, 300001}) {
    for (const int n : kCols) {
      if (m == 300001 && n > 13) continue;  // the long-double reference would take minutes
      for (const bool offset : {false, true}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + (offset ? " offset" : ""));
        // |G| <= 9 m < 2^24 and every value TF32-exact (small parts zero): exact sums.
        const Matrix<float> a = pick_matrix(m, n, {-3, -2, -1, 1, 2, 3}, seed++);
        const Placed ad = place(ctx(), a, offset);
        const Matrix<float> g = gpu_gram(ctx(), ad.view, nullptr);
        EXPECT_EQ(scaled_error(g, reference_gram(a, nullptr)), 0.0) << "A^T A";
        EXPECT_TRUE(bitwise_equal(g, gpu_gram(ctx(), ad.view, nullptr))) << "two runs differ";
        // (A X)^T (A X), A and X in {-1, 0, 1}: |entries| <= m n^2, exact while < 2^24.
        if (double(m) * n * n >= 16777216.0) continue;
        const Matrix<float> a1 = pick_matrix(m, n, {-1, 1}, seed++);
        const Placed a1d = place(ctx(), a1, offset);
        const Matrix<float> x = small_x(n, seed++);
        EXPECT_EQ(scaled_error(gpu_gram(ctx(), a1d.view, &x), reference_gram(a1, &x)), 0.0)
            << "(A X)^T (A X)";
      }
    }
  }
}

// Inputs on which plain TF32 errs by exactly 2^-11 relative on every product: entries
// v (1 + 2^-12) with v TF32-exact in +-[1, 2), so that big = v and small = v 2^-12 (both exact;
// the split must carry the small part), and for the product A TF32-exact with
// X = (1 + 2^-12) I (W = A X must carry X's small part, then W's). With the split, the error is
// 2^-24 a product plus the sums' rounding; without it G's diagonal is off by 2^-11 = 8192 u.
TEST_P(GramTf32, SplitIsCarried) {
  const EnvKnob kernel("GPUQR_GRAM_KERNEL", "1");
  const Tf32Mode tf32(1);
  const float lift = 1.0f + 1.0f / 4096.0f;
  std::mt19937_64 gen(31);
  std::uniform_int_distribution<int> mantissa(0, 1023), sign(0, 1);
  for (const std::pair<std::int64_t, int> shape :
       {std::pair<std::int64_t, int>{4097, 7}, {4097, 33}, {2001, 100}, {1000, 128}}) {
    const auto [m, n] = shape;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    Matrix<float> v(m, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        v(i, j) = (sign(gen) ? -1.0f : 1.0f) * (1.0f + float(mantissa(gen)) / 1024.0f);
    Matrix<float> a(m, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) a(i, j) = v(i, j) * lift;  // exact in FP32
    const Placed ad = place(ctx(), a, false);
    const double ea = scaled_error(gpu_gram(ctx(), ad.view, nullptr), reference_gram(a, nullptr));
    EXPECT_LE(ea, bound(m, n, false)) << "A^T A: the split of A is lost";
    // Plain TF32 misses G's diagonal by 2^-11 of it: 8x the bound at least.
    EXPECT_LE(bound(m, n, true), 1.0 / 2048.0 / 8.0) << "the bound would not see plain TF32";
    Matrix<float> x(n, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) x(i, j) = i == j ? lift : 0.0f;
    const Placed vd = place(ctx(), v, false);
    const double ep = scaled_error(gpu_gram(ctx(), vd.view, &x), reference_gram(v, &x));
    EXPECT_LE(ep, bound(m, n, true)) << "(A X)^T (A X): the split of X or of W is lost";
  }
}

TEST_P(GramTf32, RandomGradedIllConditionedWithinFp32Bounds) {
  const EnvKnob kernel("GPUQR_GRAM_KERNEL", "1");
  std::uint64_t seed = 70;
  // m = 257 (where the bound also catches plain TF32), 1000 and 20011: none a multiple of
  // the chunks (256, 128, 64 rows).
  for (const std::int64_t m : {257, 1000, 20011}) {
    for (const int n : kCols) {
      for (const int kind : {0, 1, 2}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + kKindNames[kind]);
        const Matrix<float> a = input_of_kind(kind, m, n, seed++);
        const Placed ad = place(ctx(), a, false);
        const Reference ref = reference_gram(a, nullptr);
        const Matrix<float> x = random_upper(n, seed++);
        const Reference refp = reference_gram(a, &x);
        // The FMA kernel (mode 0) meets the same bound: it is FP32 GEMM accuracy.
        Matrix<float> g_tf32, g_fma;
        for (const int mode : {1, 0}) {
          SCOPED_TRACE(mode == 1 ? "3xTF32" : "FP32 FMA");
          const Tf32Mode tf32(mode);
          Matrix<float> g = gpu_gram(ctx(), ad.view, nullptr);
          EXPECT_LE(scaled_error(g, ref), bound(m, n, false)) << "A^T A";
          EXPECT_TRUE(bitwise_equal(g, gpu_gram(ctx(), ad.view, nullptr))) << "two runs differ";
          const Matrix<float> gp = gpu_gram(ctx(), ad.view, &x);
          EXPECT_LE(scaled_error(gp, refp), bound(m, n, true)) << "(A X)^T (A X)";
          EXPECT_TRUE(bitwise_equal(gp, gpu_gram(ctx(), ad.view, &x))) << "two runs differ";
          (mode == 1 ? g_tf32 : g_fma) = std::move(g);
        }
        // The hook switches kernels: their roundings differ somewhere on random inputs.
        if (kind == 0 && n >= 7) {
          EXPECT_FALSE(bitwise_equal(g_tf32, g_fma)) << "gram_tf32_mode did not switch";
        }
      }
    }
  }
}

// Past 128 columns the FP32 Gram matrix is cuBLAS's TF32 GEMMs on a 3xTF32 split with mma
// chains of at most GPUQR_TF32_KC rows (triangle_gemm.cu, gram_split_tf32; from 512 columns
// by default, here from 129 by GPUQR_TF32_WIDE_FROM), or with gram_tf32_mode(0) its SGEMMs
// (the upper triangle by recursive halves, mirrored), and so is
// that of A X (gram_of_upper_product): within the file's bound, exactly symmetric, on random,
// graded and ill-conditioned inputs, at widths that do and do not split evenly into blocks of
// 128 and leaves of 256, with fewer rows than one chain (1000) and many chains and a rest
// (20011; chains of 512 rows, and of 64 in split chunks of 16 MiB, where the partials' share
// of the chunk, not H and L's, sets the chunk's rows at n = 300).
TEST_P(GramTf32, WideGramWithinFp32Bounds) {
  std::uint64_t seed = 170;
  struct Setting {
    int mode;
    const char* kc;
    const char* chunk_mb;
  };
  for (const Setting set : {Setting{1, "512", "1024"}, Setting{1, "64", "16"},
                            Setting{0, "512", "1024"}})
  for (const std::int64_t m : {1000, 20011}) {
    for (const int n : {129, 160, 300}) {
      for (const int kind : {0, 1, 2}) {
        const Tf32Mode tf32(set.mode);
        const EnvKnob wide("GPUQR_TF32_WIDE_FROM", "129");  // 512 by default
        const EnvKnob kc("GPUQR_TF32_KC", set.kc);
        const EnvKnob chunk("GPUQR_TF32_CHUNK_MB", set.chunk_mb);
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + kKindNames[kind] +
                     (set.mode == 1 ? " 3xTF32, chains of " + std::string(set.kc) +
                                          ", chunks of " + set.chunk_mb + " MiB"
                                    : " SGEMM"));
        const Matrix<float> a = input_of_kind(kind, m, n, seed++);
        const Placed ad = place(ctx(), a, false);
        const Reference ref = reference_gram(a, nullptr);
        const Matrix<float> x = random_upper(n, seed++);
        const Reference refp = reference_gram(a, &x);
        const Matrix<float> xd = device_copy(ctx(), x);
        Matrix<float> gd = device_matrix<float>(ctx(), n, n);
        kernels::cuda::gram<float>(ctx().impl(), ad.view, gd.view());
        const Matrix<float> g = to_host(ctx(), gd);
        EXPECT_LE(scaled_error(g, ref), bound(m, n, false)) << "A^T A";
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < j; ++i) ASSERT_EQ(g(i, j), g(j, i)) << "not symmetric";
        kernels::cuda::gram_of_upper_product<float>(ctx().impl(), ad.view, xd.view(), gd.view());
        EXPECT_LE(scaled_error(to_host(ctx(), gd), refp), bound(m, n, true)) << "(A X)^T (A X)";
      }
    }
  }
}

// The tensor cores add with truncation, so a long mma chain biases a sum of same-sign terms
// toward zero (session 21: ~1e-4 over cuBLAS's k of 65536; session 22 run 1: 0.94 u a row
// in 8, linear in the chain's length). On an all-positive input every Gram entry is such a
// sum: the mean signed relative error of the off-diagonal entries shows the bias, where
// rounding errors of either sign average out. Raw (GPUQR_TF32_DIAG=0), the detector must see
// chains of 2048 rows (over 128 u: 242 u in run 2) or the test could not fail; the default
// (chains of 512, the exact diagonal) must stay within 128 u (~60 u), its diagonal within
// 4 u. The other settings are printed.
TEST_P(GramTf32, WideGramChainsShortEnoughForNoBias) {
  const Tf32Mode tf32(1);
  const EnvKnob wide("GPUQR_TF32_WIDE_FROM", "129");  // 512 by default
  const std::int64_t m = 65573, n = 144;
  std::mt19937_64 gen(404);
  std::uniform_real_distribution<float> positive(0.5f, 1.0f);
  Matrix<float> a(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = positive(gen);
  const Placed ad = place(ctx(), a, false);
  const Reference ref = reference_gram(a, nullptr);
  // mean over i < j of (G - G_ref)(i, j) / G_ref(i, j), in units of u; within the bound.
  double last_diagonal = 0;  // the last call's largest relative error on the diagonal, in u
  const auto bias = [&](const char* kc_rows, const char* diag) {
    const EnvKnob kc("GPUQR_TF32_KC", kc_rows);
    const EnvKnob mode("GPUQR_TF32_DIAG", diag);
    const Matrix<float> g = gpu_gram(ctx(), ad.view, nullptr);
    double sum = 0, worst = 0, worst_diag = 0;
    std::int64_t count = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      worst_diag = std::max(
          worst_diag, double(std::fabs(((long double)g(j, j) - ref.g[j + j * n]) / ref.g[j + j * n])));
      for (std::int64_t i = 0; i < j; ++i) {
        const double r = double(((long double)g(i, j) - ref.g[i + j * n]) / ref.g[i + j * n]);
        sum += r;
        worst = std::max(worst, std::fabs(r));
        ++count;
      }
    }
    std::printf("[ bias     ] chains of %s rows, diagonal mode %s: mean %.1f u, max %.1f u, "
                "diagonal max %.1f u\n",
                kc_rows, diag, sum / double(count) / kU, worst / kU, worst_diag / kU);
    EXPECT_LE(scaled_error(g, ref), bound(m, n, false)) << "chains of " << kc_rows;
    last_diagonal = worst_diag / kU;
    return std::fabs(sum / double(count)) / kU;
  };
  for (const char* kc : {"256", "512", "1024", "4096"}) bias(kc, "0");
  for (const char* diag : {"2", "3"}) bias("512", diag);
  EXPECT_GT(bias("2048", "0"), 128.0) << "the detector does not see chains of 2048";
  EXPECT_LE(bias("512", "1"), 128.0) << "the default leaves G biased";
  EXPECT_LE(last_diagonal, 4.0) << "the default's diagonal is not the exact one";
}

// The CholeskyQR methods through the 3xTF32 kernels, on the paper's stress matrix at a width
// the kernels take (n = 100), R(50, 50) = rho down to 1e-7 (past FP32 CholeskyQR2's reach:
// the methods' certificates and fallbacks must still hold): explicit Q, the implicit object
// (single-pass CholeskyQR2: gram_of_product), borrowing A; within 10x of Householder QR.
TEST_P(GramTf32, CholeskyMethodsStressThroughTheKernels) {
  const EnvKnob kernel("GPUQR_GRAM_KERNEL", "1");
  const Tf32Mode tf32(1);
  const std::int64_t m = 3000, n = 100;
  const double eps = kU * 2;  // the tests' eps for float (2^-23)
  for (int e = 1; e <= 7; ++e) {
    const double rho = std::pow(10.0, -e);
    SCOPED_TRACE("rho = 1e-" + std::to_string(e));
    const Matrix<float> a = stress_matrix<float>(m, n, 50, rho, 2021);
    auto explicit_run = [&](TsqrMethod method) {
      Matrix<float> q = to_ctx<float>(ctx(), a.view());
      Matrix<float> r = device_matrix<float>(ctx(), n, n);
      TsqrOptions o;
      o.method = method;
      tsqr_explicit<float>(ctx(), q.view(), r.view(), o);
      const Matrix<float> qh = to_host(ctx(), q), rh = to_host(ctx(), r);
      return std::make_pair(orthogonality_f<float>(qh.view()),
                            residual_f<float>(a.view(), qh.view(), rh.view()));
    };
    const auto house = explicit_run(TsqrMethod::householder);
    const double orth_bound = 10 * std::max(house.first, std::sqrt(double(n)) * eps);
    const double res_bound = 10 * std::max(house.second, eps);
    for (TsqrMethod method :
         {TsqrMethod::automatic, TsqrMethod::cholesky_qr2, TsqrMethod::shifted_cholesky_qr3}) {
      SCOPED_TRACE(to_string(method));
      const auto run = explicit_run(method);  // fallback on: a rejected attempt falls back
      EXPECT_LE(run.first, orth_bound);
      EXPECT_LE(run.second, res_bound);
    }
    for (bool borrow : {false, true}) {
      SCOPED_TRACE(borrow ? "TallSkinnyQR borrowing A" : "TallSkinnyQR");
      const Matrix<float> a_ctx = to_ctx<float>(ctx(), a.view());
      TsqrOptions o;
      o.borrow_input = borrow;
      const TallSkinnyQR<float> qr(ctx(), a_ctx.view(), o);
      const Matrix<float> q = to_host(ctx(), qr.matrix_q());
      const Matrix<float> r = to_host(ctx(), qr.matrix_r());
      EXPECT_LE(orthogonality_f<float>(q.view()), orth_bound);
      EXPECT_LE(residual_f<float>(a.view(), q.view(), r.view()), res_bound);
    }
  }
}

// The default path (no GPUQR_GRAM_KERNEL): at m >= 65536 the leaves pick the streamed kernels
// themselves, with 3xTF32 on (forced here, as GPUQR_GRAM_TF32 unset would); CholeskyQR2 on a
// stress matrix with R(n/2, n/2) = 10 (kappa ~ sqrt(m n) / 20, ~1e2, well inside FP32
// CholeskyQR2's reach) is accepted and as accurate as Householder QR, for n = 64 and 128.
TEST_P(GramTf32, TallStressByDefaultPath) {
  const Tf32Mode tf32(1);
  const double eps = kU * 2;
  for (const std::int64_t n : {64, 128}) {
    const std::int64_t m = 70001;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    const Matrix<float> a = stress_matrix<float>(m, n, n / 2, 10.0, 77);
    auto run = [&](TsqrMethod method) {
      Matrix<float> q = to_ctx<float>(ctx(), a.view());
      Matrix<float> r = device_matrix<float>(ctx(), n, n);
      TsqrOptions o;
      o.method = method;
      o.fallback = false;
      const TsqrInfo info = tsqr_explicit<float>(ctx(), q.view(), r.view(), o);
      const Matrix<float> qh = to_host(ctx(), q), rh = to_host(ctx(), r);
      return std::make_pair(info, std::make_pair(orthogonality_f<float>(qh.view()),
                                                 residual_f<float>(a.view(), qh.view(),
                                                                   rh.view())));
    };
    const auto house = run(TsqrMethod::householder).second;
    const auto cqr2 = run(TsqrMethod::cholesky_qr2);
    EXPECT_TRUE(cqr2.first.fallback_reason.empty()) << cqr2.first.fallback_reason;
    EXPECT_LE(cqr2.second.first, 10 * std::max(house.first, std::sqrt(double(n)) * eps));
    EXPECT_LE(cqr2.second.second, 10 * std::max(house.second, eps));
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GramTf32, ::testing::Values(BackendCase{Backend::cuda, false}),
                         case_name);

}  // namespace
}  // namespace gpuqr::testing
