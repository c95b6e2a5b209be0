// Q = A X for upper triangular X (the tall_times_upper leaf, src/cuda/gram_product.cu on CUDA,
// TRMM on the CPU) against a long-double host reference, and CholeskyQR's explicit Q through
// it (the tall_times_upper_mode hook forcing the streamed kernel on at small m).
//
// The bound. Per entry, |Q - W|(i, j) <= c u (|A| |X|)(i, j) with W = A X exact (long double)
// and u the precision's unit roundoff: c = n + 8 in FP64 (a dot product of at most n terms by
// FMAs errs by at most ~n u of it; DMMA adds in FP64 with round to nearest), c = n + 64 in FP32
// (3xTF32: ~12 u per product for the dropped small * small term and the small parts' rounding,
// ~12 u for the truncating 6-mma chains, then at most n / 16 FP32 adds). X's strictly lower
// triangle holds NaN or huge garbage (1e6 |X|), so a kernel that read it fails by far. Plain
// TF32 (the split dropped) errs by up to 2^-11 of each product: the `SplitDetector` case makes
// every product of A X off by 2^-12 relative in one direction (A = 1 + 2^-12, X = 1: TF32 rounds
// A to 1), 4096 u of |A| |X|, 20x the FP32 bound at n = 128.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/tsqr.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/env_knob.hpp"
#include "tests/support/tsqr_checks.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class TallTimesUpper : public BackendTest {};

/// The CUDA hooks for the scope: the streamed Q = A X kernel forced (tall_times_upper_mode)
/// and FP32's 3xTF32 kernels on (gram_tf32_mode); back to the defaults however a test ends.
class ForceKernels {
 public:
  ForceKernels() {
    kernels::cuda::tall_times_upper_mode(1);
    kernels::cuda::gram_tf32_mode(1);
  }
  ~ForceKernels() {
    kernels::cuda::tall_times_upper_mode(-1);
    kernels::cuda::gram_tf32_mode(-1);
  }
};

template <class T>
double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2;
}
template <class T>
double bound_factor(std::int64_t n) {
  return sizeof(T) == 8 ? double(n + 8) : double(n + 64);
}

/// A (random normal; graded: column j scaled by 2^-(j mod 24)) and X upper triangular
/// (random, diagonal 1 + |.|) with its strictly lower triangle `garbage`.
template <class T>
Matrix<T> make_a(std::int64_t m, std::int64_t n, bool graded, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist;
  Matrix<T> a(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      a(i, j) = static_cast<T>(dist(gen) * (graded ? std::ldexp(1.0, -int(j % 24)) : 1.0));
  return a;
}
template <class T>
Matrix<T> make_x(std::int64_t n, T garbage, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist;
  Matrix<T> x(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i)
      x(i, j) = i < j ? static_cast<T>(dist(gen)) : i == j ? static_cast<T>(1 + std::fabs(dist(gen)))
                                                         : garbage;
  return x;
}

/// `a` in the context's memory at rows [first, first + m) of a buffer with ld = m + pad
/// (entries outside `a` hold 1e30: a stray read shows).
template <class T>
struct Placed {
  Matrix<T> store;
  MatrixView<T> view;
};
template <class T>
Placed<T> place(const Context& ctx, const Matrix<T>& a, std::int64_t first, std::int64_t pad) {
  const std::int64_t m = a.rows(), n = a.cols();
  Matrix<T> host(m + pad, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m + pad; ++i)
      host(i, j) = i >= first && i < first + m ? a(i - first, j) : T(1e30);
  Placed<T> p{to_ctx<T>(ctx, host.view()), {}};
  p.view = p.store.view().block(first, 0, m, n);
  return p;
}

/// The rows checked: all of them up to 5000, else the first and last 300 and every 61st.
bool checked_row(std::int64_t i, std::int64_t m) {
  return m <= 5000 || i < 300 || i >= m - 300 || i % 61 == 0;
}

/// max over the checked entries of |Q - W| / (|A| |X|) (the upper triangle of X alone); NaN
/// or Inf in Q counts as infinite. Also checks that Q's padding rows still hold 1e30.
template <class T>
double scaled_error(const Matrix<T>& a, const Matrix<T>& x, const Matrix<T>& qbuf,
                    std::int64_t first) {
  const std::int64_t m = a.rows(), n = a.cols();
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    if (!checked_row(i, m)) continue;
    for (std::int64_t j = 0; j < n; ++j) {
      long double w = 0, s = 0;
      for (std::int64_t k = 0; k <= j; ++k) {
        const long double p = (long double)a(i, k) * x(k, j);
        w += p;
        s += std::fabs(p);
      }
      const double q = double(qbuf(first + i, j));
      if (!std::isfinite(q)) return std::numeric_limits<double>::infinity();
      const double err = double(std::fabs((long double)q - w));
      worst = std::max(worst, s > 0 ? err / double(s) : (err > 0 ? 1e300 : 0.0));
    }
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < qbuf.rows(); ++i)
      if ((i < first || i >= first + m) && qbuf(i, j) != T(1e30))
        return std::numeric_limits<double>::infinity();  // written outside Q
  return worst / unit_roundoff<T>();
}

template <class T>
void call_leaf(const Context& ctx, MatrixView<const T> a, MatrixView<const T> x,
               MatrixView<T> q) {
  if (ctx.is_cuda()) {
    kernels::cuda::tall_times_upper<T>(ctx.impl(), a, x, q);
  } else {
    kernels::cpu::tall_times_upper<T>(ctx.impl(), a, x, q);
  }
}

// Every padded width (32, 64, 128) and its edges; m: one row, less than a chunk, not a
// multiple of any chunk height, many chunks per block. A and Q at odd ld (m + 3, m + 5: the
// 8-/4-byte copies and scalar stores) and at aligned ones (the 16-byte paths), and in place.
TEST_P(TallTimesUpper, MatchesTheReference) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const ForceKernels force;
    std::uint64_t seed = 40;
    for (std::int64_t m : {1, 37, 4097, 300001}) {
      for (int n : {1, 7, 32, 33, 64, 100, 128}) {
        if (m == 300001 && n % 32 != 0 && n != 100) continue;  // the big ones at a few widths
        for (int variant = 0; variant < 3; ++variant) {
          // 0: misaligned, NaN below X's diagonal; 1: aligned (16-byte copies and stores),
          // 1e6-garbage below, graded A; 2: in place, aligned, NaN below.
          SCOPED_TRACE("m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                       ", variant " + std::to_string(variant));
          const bool graded = variant == 1;
          const Matrix<T> a = make_a<T>(m, n, graded, ++seed);
          const T garbage = variant == 1 ? T(1e6) : std::numeric_limits<T>::quiet_NaN();
          const Matrix<T> x = make_x<T>(n, garbage, ++seed);
          const Matrix<T> xd = to_ctx<T>(ctx(), x.view());
          const bool aligned = variant != 0;
          const std::int64_t first = aligned ? 4 : 1;
          const std::int64_t pad = aligned ? 8 - m % 4 : 3 + 2 * (m % 2 == 0);
          Placed<T> pa = place<T>(ctx(), a, first, pad);
          double err;
          if (variant == 2) {
            call_leaf<T>(ctx(), MatrixView<const T>(pa.view), xd.view(), pa.view);
            err = scaled_error<T>(a, x, to_host(ctx(), pa.store), first);
          } else {
            const Matrix<T> fill(m, n);  // Q's own buffer and ld (m + pad + 4 or + 2)
            Placed<T> pq = place<T>(ctx(), fill, first, pad + (aligned ? 4 : 2));
            call_leaf<T>(ctx(), MatrixView<const T>(pa.view), xd.view(), pq.view);
            err = scaled_error<T>(a, x, to_host(ctx(), pq.store), first);
          }
          EXPECT_LE(err, bound_factor<T>(n)) << "max |Q - A X| / (|A| |X|) in units of u";
        }
      }
    }
  }));
}

// Wider than the streamed kernel (n > 128): block columns by GEMM on CUDA
// (src/cuda/triangle_gemm.cu), out of place and in place (70001 rows: several row chunks of
// the in-place path in FP64, a short last one), n not a multiple of the 128-column blocks,
// NaN below X's diagonal.
TEST_P(TallTimesUpper, BlockColumnsPastTheKernelsWidth) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 90;
    const std::int64_t m = 70001;
    for (int n : {129, 300}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE("n = " + std::to_string(n) + (in_place ? ", in place" : ""));
        const Matrix<T> a = make_a<T>(m, n, false, ++seed);
        const Matrix<T> x = make_x<T>(n, std::numeric_limits<T>::quiet_NaN(), ++seed);
        const Matrix<T> xd = to_ctx<T>(ctx(), x.view());
        Placed<T> pa = place<T>(ctx(), a, 2, 5);
        double err;
        if (in_place) {
          call_leaf<T>(ctx(), MatrixView<const T>(pa.view), xd.view(), pa.view);
          err = scaled_error<T>(a, x, to_host(ctx(), pa.store), 2);
        } else {
          Placed<T> pq = place<T>(ctx(), Matrix<T>(m, n), 2, 7);
          call_leaf<T>(ctx(), MatrixView<const T>(pa.view), xd.view(), pq.view);
          err = scaled_error<T>(a, x, to_host(ctx(), pq.store), 2);
        }
        EXPECT_LE(err, bound_factor<T>(n)) << "max |Q - A X| / (|A| |X|) in units of u";
      }
    }
  }));
}

// Plain TF32 would make every product A(i, k) X(k, j) here 2^-12 too small (1 + 2^-12 rounds
// to 1): 4096 u of |A| |X|. FP64 runs the same case (exact there).
TEST_P(TallTimesUpper, SplitDetector) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const ForceKernels force;
    for (int n : {32, 128}) {
      const std::int64_t m = 70000;
      Matrix<T> a(m, n), x(n, n);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) a(i, j) = T(1 + std::ldexp(1.0, -12));
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) x(i, j) = i <= j ? T(1) : T(-1);  // -1: must not count
      const Matrix<T> ad = to_ctx<T>(ctx(), a.view()), xd = to_ctx<T>(ctx(), x.view());
      Matrix<T> qd = to_ctx<T>(ctx(), a.view());
      call_leaf<T>(ctx(), ad.view(), xd.view(), qd.view());
      const double err = scaled_error<T>(a, x, to_host(ctx(), qd), 0);
      EXPECT_LE(err, bound_factor<T>(n)) << "n = " << n;
    }
  }));
}

// The leaf refuses Q = A at another ld (in place needs the same layout).
TEST_P(TallTimesUpper, RefusesAShiftedInPlace) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 64, n = 8;
    Matrix<T> buf = to_ctx<T>(ctx(), make_a<T>(2 * m, n, false, 3).view());
    const Matrix<T> x = to_ctx<T>(ctx(), make_x<T>(n, T(0), 4).view());
    const MatrixView<T> a(buf.data(), m, n, 2 * m, buf.space(), buf.device());
    const MatrixView<T> q(buf.data(), m, n, m, buf.space(), buf.device());
    EXPECT_THROW(call_leaf<T>(ctx(), MatrixView<const T>(a), x.view(), q), InvalidArgument);
  }));
}

// CholeskyQR's explicit Q (tsqr_explicit: single-pass CholeskyQR2 where Q = A R^{-1} is one
// streamed pass) and TallSkinnyQR's matrix_q through the streamed kernel (forced on at these
// small m), on the paper's stress matrices at widths the kernel takes, R(k, k) = rho down to
// 1e-15: within 10x of Householder QR's orthogonality and residual, as the tall-skinny tests
// ask of every method. With the streamed Gram kernels off (cuBLAS) and on.
// CUDA cases only (the streamed kernel is CUDA's; they skip where no GPU is visible).
class TallTimesUpperCuda : public BackendTest {};

TEST_P(TallTimesUpperCuda, CholeskyExplicitQThroughTheKernel) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const ForceKernels force;
    const double eps = std::numeric_limits<T>::epsilon();
    for (const char* gram_kernel : {"0", "1"}) {
      const EnvKnob knob("GPUQR_GRAM_KERNEL", gram_kernel);
      for (std::int64_t n : {33, 100}) {
        const std::int64_t m = 3000;
        ASSERT_TRUE(kernels::cuda::tall_times_upper_wanted<T>(ctx().impl(), m, n));
        for (int e = 1; e <= 15; e += 2) {
          const double rho = std::pow(10.0, -e);
          SCOPED_TRACE(std::string("GPUQR_GRAM_KERNEL=") + gram_kernel + ", n = " +
                       std::to_string(n) + ", rho = 1e-" + std::to_string(e));
          const Matrix<T> a = stress_matrix<T>(m, n, n / 2, rho, 2022);
          auto explicit_run = [&](TsqrMethod method) {
            Matrix<T> q = to_ctx<T>(ctx(), a.view());
            Matrix<T> r = device_matrix<T>(ctx(), n, n);
            TsqrOptions o;
            o.method = method;
            const TsqrInfo info = tsqr_explicit<T>(ctx(), q.view(), r.view(), o);
            const Matrix<T> qh = to_host(ctx(), q), rh = to_host(ctx(), r);
            return std::make_pair(orthogonality_f<T>(qh.view()),
                                  residual_f<T>(a.view(), qh.view(), rh.view()));
          };
          const auto house = explicit_run(TsqrMethod::householder);
          const double orth_bound = 10 * std::max(house.first, std::sqrt(double(n)) * eps);
          const double res_bound = 10 * std::max(house.second, eps);
          for (TsqrMethod method : {TsqrMethod::automatic, TsqrMethod::cholesky_qr2,
                                    TsqrMethod::shifted_cholesky_qr3}) {
            SCOPED_TRACE(to_string(method));
            const auto run = explicit_run(method);  // fallback on
            EXPECT_LE(run.first, orth_bound);
            EXPECT_LE(run.second, res_bound);
          }
          const Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
          const TallSkinnyQR<T> qr(ctx(), a_ctx.view(), TsqrOptions{});
          const Matrix<T> q = to_host(ctx(), qr.matrix_q());
          const Matrix<T> r = to_host(ctx(), qr.matrix_r());
          EXPECT_LE(orthogonality_f<T>(q.view()), orth_bound) << "TallSkinnyQR";
          EXPECT_LE(residual_f<T>(a.view(), q.view(), r.view()), res_bound) << "TallSkinnyQR";
        }
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, TallTimesUpper, all_backend_cases(), case_name);
INSTANTIATE_TEST_SUITE_P(Backends, TallTimesUpperCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
