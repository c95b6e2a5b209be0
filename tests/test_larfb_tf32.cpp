// larfb's FP32 products W = V^T C and C -= V W on the TF32 tensor cores by the 3xTF32 split
// (CUTLASS, src/cuda/larfb_tf32.cu), against the same call on SGEMM (larfb_tf32_mode 0, its
// twin) and a double reference. CUDA only: skips without a GPU. In a build without CUTLASS
// (optional), FP32 must stay on SGEMM bit for bit, as FP64 always does.
//
// The measure: ||C_out - C_ref||_F / ||V Y||_F, with Y = op(T) V^T C and C_ref = C - V Y in
// double. An error dW in W reaches C as V op(T) dW, so the measure is W's relative error plus
// the last product's. 3xTF32 errs by ~3 * 2^-22 per term, plus FP32 sums that truncate within
// the tensor cores' chains (~0.118 u per term of a chain on same-sign sums, u = 2^-24; W's
// chains are at most 1024 rows: ~120 u); SGEMM by ~sqrt(chain) u. The two results must agree
// within 256 u, and the 3xTF32 one must be within twice SGEMM's error of the reference (plus
// 256 u). Plain TF32 (the inputs rounded to TF32 once) errs by ~2^-11 / sqrt(3) per term,
// thousands of u on random inputs: the test computes that error too and requires it to be
// 8x above the bound, so that a path that lost the split would fail. Same-sign inputs (the
// truncation's worst case) are checked against the bound alone. k not a multiple of the
// tiles, W in several row chunks, C -= V W in several launches, both ops, and leading dimensions
// CUTLASS cannot take (SGEMM then, bit for bit); FP64 is never affected (bitwise unchanged).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "src/core/blocked_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/env_knob.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class LarfbTf32 : public BackendTest {};

struct ModeReset {
  ~ModeReset() { kernels::cuda::larfb_tf32_mode(-1); }
};

float tf32_round(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  b = (b + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &b, sizeof b);
  return x;
}

/// An explicit unit lower trapezoidal V (h x k), an upper triangular T (k x k, zeros below:
/// larfb multiplies by the full T) scaled by 1/sqrt(h), and C (h x n): entries uniform in
/// (-1, 1), or their magnitudes.
struct Inputs {
  Matrix<float> v, t, c;
};

Inputs make_inputs(std::int64_t h, std::int64_t k, std::int64_t n, bool positive,
                   std::uint64_t seed) {
  Inputs in{random_matrix<float>(h, k, seed), random_matrix<float>(k, k, seed + 1),
            random_matrix<float>(h, n, seed + 2)};
  const float scale = 1.0f / std::sqrt(float(h));
  for (std::int64_t j = 0; j < k; ++j) {
    for (std::int64_t i = 0; i < h; ++i) {
      float& e = in.v(i, j);
      e = i < j ? 0.0f : (i == j ? 1.0f : (positive ? std::fabs(e) : e));
    }
    for (std::int64_t i = 0; i < k; ++i) {
      float& e = in.t(i, j);
      e = i > j ? 0.0f : (positive ? std::fabs(e) : e) * scale;
    }
  }
  if (positive)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < h; ++i) in.c(i, j) = std::fabs(in.c(i, j));
  return in;
}

/// C - V Y in double for Y given (k x n, column-major), with V's and Y's entries rounded to
/// TF32 first when `plain`.
std::vector<double> minus_product(const Inputs& in, const std::vector<double>& y, bool plain) {
  const std::int64_t h = in.v.rows(), k = in.v.cols(), n = in.c.cols();
  std::vector<double> out(static_cast<std::size_t>(h * n));
  std::vector<double> vcol(static_cast<std::size_t>(h));
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < n; ++j) out[std::size_t(i + j * h)] = in.c(i, j);
  for (std::int64_t a = 0; a < k; ++a) {
    for (std::int64_t i = 0; i < h; ++i)
      vcol[std::size_t(i)] = plain ? tf32_round(in.v(i, a)) : double(in.v(i, a));
    for (std::int64_t j = 0; j < n; ++j) {
      const double yv = y[std::size_t(a + j * k)];
      const double ya = plain ? double(tf32_round(float(yv))) : yv;
      double* col = out.data() + j * h;
      for (std::int64_t i = a; i < h; ++i) col[i] -= vcol[std::size_t(i)] * ya;
    }
  }
  return out;
}

double diff_f(const Matrix<float>& x, const std::vector<double>& ref) {
  double s = 0;
  const std::int64_t h = x.rows();
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < h; ++i) {
      const double d = double(x(i, j)) - ref[std::size_t(i + j * h)];
      s += d * d;
    }
  return std::sqrt(s);
}

/// FP32: the checks of the file's opening notes.
void check_float(const Context& gpu) {
  const double u = std::ldexp(1.0, -24), bound = 256 * u;
  struct Case {
    std::int64_t h, k, n;
    bool positive;
    Op op;
    const char* ws_mb;             // GPUQR_LARFB_TF32_WS_MB ("": the default)
    const char* launch_rows = "";  // GPUQR_LARFB_TF32_LAUNCH_ROWS
  };
  const Case cases[] = {{70000, 256, 45, false, Op::trans, "1"},            // W in 4 row chunks
                        {30000, 256, 40, false, Op::no_trans, "", "4096"},  // 8 launches
                        {4100, 132, 300, false, Op::trans, ""},
                        {4100, 130, 300, false, Op::trans, ""},  // W's ld 130: SGEMM
                        {20000, 128, 128, true, Op::trans, ""},
                        {4099, 128, 64, false, Op::trans, ""}};  // ld 4099: SGEMM
  std::uint64_t seed = 2400;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.h) + "x" + std::to_string(c.k) + " n " + std::to_string(c.n) +
                 (c.positive ? " positive" : " random") +
                 (c.op == Op::trans ? " trans" : " no_trans") + " ws " + c.ws_mb);
    const EnvKnob ws("GPUQR_LARFB_TF32_WS_MB", c.ws_mb);
    const EnvKnob launch("GPUQR_LARFB_TF32_LAUNCH_ROWS", c.launch_rows);
    const bool takes = c.h % 4 == 0 && c.k % 4 == 0;  // 16-byte columns
    const Inputs in = make_inputs(c.h, c.k, c.n, c.positive, seed);
    seed += 3;
    // Y = op(T) (V^T C) and V Y's norm in double.
    std::vector<double> w(std::size_t(c.k * c.n), 0.0), y(std::size_t(c.k * c.n), 0.0);
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t a = 0; a < c.k; ++a) {
        double s = 0;
        for (std::int64_t i = a; i < c.h; ++i) s += double(in.v(i, a)) * double(in.c(i, j));
        w[std::size_t(a + j * c.k)] = s;
      }
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t a = 0; a < c.k; ++a) {
        double s = 0;
        for (std::int64_t b = 0; b < c.k; ++b) {
          const double t = c.op == Op::trans ? in.t(b, a) : in.t(a, b);
          s += t * w[std::size_t(b + j * c.k)];
        }
        y[std::size_t(a + j * c.k)] = s;
      }
    const std::vector<double> ref = minus_product(in, y, false);
    const std::vector<double> plain = minus_product(in, y, true);
    double pnorm = 0, plain_diff = 0;
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.h; ++i) {
        const std::size_t e = std::size_t(i + j * c.h);
        const double p = double(in.c(i, j)) - ref[e];
        pnorm += p * p;
        plain_diff += (plain[e] - ref[e]) * (plain[e] - ref[e]);
      }
    pnorm = std::sqrt(pnorm);
    const double e_plain = std::sqrt(plain_diff) / pnorm;
    ASSERT_GT(pnorm, 0.0);

    const Matrix<float> v_gpu = to_ctx<float>(gpu, in.v.view());
    const Matrix<float> t_gpu = to_ctx<float>(gpu, in.t.view());
    Matrix<float> out[2];
    for (int mode : {0, 1}) {
      kernels::cuda::larfb_tf32_mode(mode);
      Matrix<float> c_gpu = to_ctx<float>(gpu, in.c.view());
      Matrix<float> work = device_matrix<float>(gpu, c.k, c.n);
      const std::int64_t before = kernels::cuda::larfb_tf32_count();
      kernels::cuda::larfb<float>(gpu.impl(), Side::left, c.op, v_gpu.view(), t_gpu.view(),
                                  c_gpu.view(), work.view());
      out[mode] = to_host(gpu, c_gpu);
      EXPECT_EQ(kernels::cuda::larfb_tf32_count() - before, takes ? mode : 0);
    }
    const double e_sgemm = diff_f(out[0], ref) / pnorm, e_tf32 = diff_f(out[1], ref) / pnorm;
    double between = 0;
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.h; ++i) {
        const double d = double(out[1](i, j)) - double(out[0](i, j));
        between += d * d;
      }
    between = std::sqrt(between) / pnorm;
    std::printf("  %s: SGEMM %.3g u, 3xTF32 %.3g u, between %.3g u, plain TF32 %.3g u\n",
                c.positive ? "positive" : "random", e_sgemm / u, e_tf32 / u, between / u,
                e_plain / u);
    if (!takes) {
      EXPECT_EQ(between, 0.0);  // SGEMM both times
      continue;
    }
    EXPECT_LT(between, bound);
    EXPECT_LT(e_tf32, 2 * e_sgemm + bound);
    if (!c.positive) EXPECT_GT(e_plain, 8 * bound);  // the bound tells plain TF32 apart
  }
}

/// Where the path does not exist (FP64; FP32 in a build without CUTLASS) the override changes
/// nothing, bit for bit, and is never counted as taken.
template <class T>
void check_unchanged(const Context& gpu) {
  const Matrix<T> v = random_matrix<T>(3000, 128, 2500);
  Matrix<T> t = random_matrix<T>(128, 128, 2501);
  for (std::int64_t j = 0; j < 128; ++j)
    for (std::int64_t i = j + 1; i < 128; ++i) t(i, j) = T(0);
  const Matrix<T> c = random_matrix<T>(3000, 128, 2502);
  const Matrix<T> v_gpu = to_ctx<T>(gpu, v.view()), t_gpu = to_ctx<T>(gpu, t.view());
  Matrix<T> out[2];
  for (int mode : {0, 1}) {
    kernels::cuda::larfb_tf32_mode(mode);
    Matrix<T> c_gpu = to_ctx<T>(gpu, c.view());
    Matrix<T> work = device_matrix<T>(gpu, 128, 128);
    const std::int64_t before = kernels::cuda::larfb_tf32_count();
    kernels::cuda::larfb<T>(gpu.impl(), Side::left, Op::trans, v_gpu.view(), t_gpu.view(),
                            c_gpu.view(), work.view());
    EXPECT_EQ(kernels::cuda::larfb_tf32_count(), before);
    out[mode] = to_host(gpu, c_gpu);
  }
  EXPECT_EQ(entry_diff(out[0], out[1]), 0.0);
  EXPECT_GT(entry_diff(out[0], c), 1e-3);  // C changed
}

TEST_P(LarfbTf32, FloatWithinSgemmBoundsDoubleUnchanged) {
  ModeReset reset;
  if (is_double()) {
    check_unchanged<double>(ctx());
  } else if (kernels::cuda::larfb_tf32_built()) {
    check_float(ctx());
  } else {
    // CUTLASS is optional (cmake/FindGpuqrCutlass.cmake): without it FP32 stays on SGEMM.
    std::printf("  built without CUTLASS: FP32 larfb must stay on SGEMM\n");
    check_unchanged<float>(ctx());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LarfbTf32, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
