// The CUDA register kernel of the batched QR (n <= 32, m <= 64) against its CPU twin, on
// batches large enough that every persistent warp factors several matrices in turn: strided
// batches of every class (aligned and unaligned columns, partial 16-byte granules, padding
// that must stay untouched) and a listed batch that mixes shapes within a class, m < n, and
// columns that take the scaled-norm path (entries near under- and overflow) or give tau = 0
// (a zero column, a zero subcolumn, a zero matrix). Both follow LAPACK's larfg conventions,
// so R, the reflectors and tau agree entry by entry up to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "src/core/batched_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/batched_support.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

class BatchedSmallCuda : public BackendTest {
 protected:
  // The tall register kernel would take the shapes with m > 32 first: off here, so that
  // these cases keep exercising the small kernel (test_batched_tall_small.cpp has the other).
  void SetUp() override {
    BackendTest::SetUp();
    kernels::cuda::set_batched_tall(kernels::cuda::TallRoute::off);
  }
  void TearDown() override {
    kernels::cuda::set_batched_tall(kernels::cuda::TallRoute::automatic);
    kernels::cuda::set_batched_small_tall(-1);
    kernels::cuda::set_batched_rows_fast(-1);
    kernels::cuda::set_batched_rows_prefetch(-1);
  }
};

// Scaled differences (in units of max(m, n) eps) the twins may show on well-conditioned tiles.
constexpr double kTwinBound = 100.0;

/// What a matrix of the listed batch is made of.
enum class Special { none, tiny, huge, zero_subcolumn, zero_column, zero };

/// Random entries plus a diagonal of about 2 sqrt(max(m, n)) (well conditioned, so that the
/// twins' rounding differences stay small on thousands of matrices), then `special`.
template <class T>
Matrix<T> tile(std::int64_t m, std::int64_t n, std::uint64_t seed, Special special) {
  Matrix<T> a = random_matrix<T>(m, n, seed);
  const double shift = 2.0 * std::sqrt(double(std::max(m, n)));
  for (std::int64_t j = 0; j < std::min(m, n); ++j)
    a(j, j) += static_cast<T>(a(j, j) < T(0) ? -shift : shift);
  // Near the ends of the exponent range: squares of the entries under- or overflow.
  const double tiny = sizeof(T) == 8 ? 1e-300 : 1e-30, huge = sizeof(T) == 8 ? 1e300 : 1e30;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      switch (special) {
        case Special::tiny: a(i, j) = static_cast<T>(double(a(i, j)) * tiny); break;
        case Special::huge: a(i, j) = static_cast<T>(double(a(i, j)) * huge); break;
        case Special::zero_subcolumn: a(i, j) = j == 0 && i > 0 ? T(0) : a(i, j); break;
        case Special::zero_column: a(i, j) = j == std::min<std::int64_t>(3, n - 1) ? T(0) : a(i, j);
          break;
        case Special::zero: a(i, j) = T(0); break;
        case Special::none: break;
      }
    }
  return a;
}

/// Worst twin differences over a batch, with the matrix that showed each.
struct TwinWorst {
  double r = 0, v = 0, tau = 0;
  std::int64_t r_at = -1, v_at = -1, tau_at = -1;

  /// got and want: a factored m x n matrix (ld each) and its k taus; a: the input.
  template <class T>
  void add(std::int64_t index, const T* got, std::int64_t got_ld, const T* want,
           std::int64_t want_ld, const T* got_tau, const T* want_tau, const Matrix<T>& a) {
    const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
    const double unit = double(std::max(m, n)) * accuracy::eps<T>();
    // Entries of R scale with ||A||; reflectors and tau are O(1).
    const double r_scale = std::max(accuracy::norm1<T>(a.view()), 1e-300) * unit;
    double rd = 0, vd = 0, td = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        const double d = std::fabs(double(got[i + j * got_ld]) - double(want[i + j * want_ld]));
        (i <= j ? rd : vd) = std::max(i <= j ? rd : vd, d);
      }
    for (std::int64_t j = 0; j < k; ++j)
      td = std::max(td, std::fabs(double(got_tau[j]) - double(want_tau[j])));
    note(r, r_at, rd / r_scale, index);
    note(v, v_at, vd / unit, index);
    note(tau, tau_at, td / unit, index);
  }
  static void note(double& worst, std::int64_t& at, double value, std::int64_t index) {
    // NaN counts as the worst.
    if (!(value <= worst)) {
      worst = std::isnan(value) ? 1e300 : value;
      at = index;
    }
  }
  void expect_within(double bound) const {
    EXPECT_LT(track("twin R", r), bound) << "matrix " << r_at;
    EXPECT_LT(track("twin V", v), bound) << "matrix " << v_at;
    EXPECT_LT(track("twin tau", tau), bound) << "matrix " << tau_at;
  }
};

struct StridedCase {
  std::int64_t m, n, count, pad_ld, pad_stride;
};

/// Each case's strided batch on `gpu` and on the CPU twin: padding untouched, factors within
/// the twin bound.
template <class T>
void check_strided_cases(const Context& gpu, const std::vector<StridedCase>& cases,
                         bool with_specials = false) {
  const Special specials[] = {Special::tiny, Special::huge, Special::zero_subcolumn,
                              Special::zero_column, Special::zero};
  auto special_of = [&](std::int64_t q) {
    return with_specials && q % 37 == 5 ? specials[(q / 37) % 5] : Special::none;
  };
  const Context cpu = Context::cpu();
  const Context& ctx_ = gpu;
  auto ctx = [&]() -> const Context& { return ctx_; };
  for (const StridedCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + " x" + std::to_string(c.count) +
                 ", ld pad " + std::to_string(c.pad_ld) + ", stride pad " +
                 std::to_string(c.pad_stride));
    HostBatch<T> host;
    host.shapes.assign(static_cast<std::size_t>(c.count), BShape{c.m, c.n});
    for (std::int64_t q = 0; q < c.count; ++q)
      host.mats.push_back(tile<T>(c.m, c.n, 9000 + 31 * q, special_of(q)));
    StridedBatch<T> dev = to_strided<T>(ctx(), host, c.pad_ld, c.pad_stride);
    StridedBatch<T> ref = to_strided<T>(cpu, host, c.pad_ld, c.pad_stride);
    geqrf_strided_batched<T>(ctx(), c.m, c.n, dev.data.data(), dev.ld, dev.stride, dev.tau.data(),
                             dev.tau_stride, c.count);
    geqrf_strided_batched<T>(cpu, c.m, c.n, ref.data.data(), ref.ld, ref.stride, ref.tau.data(),
                             ref.tau_stride, c.count);
    const Matrix<T> got = to_host(ctx(), dev.data), got_tau = to_host(ctx(), dev.tau);
    // Padding (between columns, between matrices, past tau's k entries) is untouched.
    EXPECT_EQ(touched_padding(got, got_tau, dev.ld, dev.stride, dev.tau_stride, c.m, c.n), 0)
        << "entries outside the matrices (or past tau) were written";
    TwinWorst worst, special_worst;
    for (std::int64_t q = 0; q < c.count; ++q) {
      const bool special = special_of(q) != Special::none;
      (special ? special_worst : worst)
          .add<T>(q, got.data() + q * dev.stride, dev.ld, ref.data.data() + q * ref.stride, ref.ld,
                  got_tau.data() + q * dev.tau_stride, ref.tau.data() + q * ref.tau_stride,
                  host.mats[static_cast<std::size_t>(q)]);
    }
    worst.expect_within(kTwinBound);
    if (with_specials) {
      SCOPED_TRACE("tiny, huge and zero columns");
      special_worst.expect_within(kTwinBound);
    }
  }
}

TEST_P(BatchedSmallCuda, StridedBatchesMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Counts well past the resident warps' slots of each class; ld = m + pad_ld and the
    // stride pad decide whether the columns are 16-byte aligned (granule copies, partial
    // last granules when m is not a multiple) or not (element copies), per matrix.
    check_strided_cases<T>(ctx(), {{16, 16, 20000, 0, 0}, {32, 32, 8000, 1, 3},
                                   {8, 5, 40000, 0, 0},   {7, 5, 30000, 1, 0},
                                   {64, 16, 6000, 0, 0},  {40, 20, 5000, 2, 1},
                                   {12, 30, 8000, 0, 0},  {33, 9, 6000, 3, 0},
                                   {64, 32, 3000, 0, 0},  {5, 3, 30000, 3, 4},
                                   {24, 24, 6000, 0, 0},  {64, 31, 100, 1, 0}});
  }));
}

// Sized for compute-sanitizer (memcheck, racecheck): still more matrices than resident warp
// slots (each warp loads its next matrix while it factors the current one), fewer cases.
TEST_P(BatchedSmallCuda, SanitizerSizedStridedBatches) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    check_strided_cases<T>(ctx(), {{16, 16, 6000, 0, 0}, {32, 32, 2500, 1, 3},
                                   {7, 5, 12000, 1, 0}, {64, 16, 2000, 0, 0}});
  }));
}

/// A listed batch of `groups` (shapes interleaved: the batch is bucketed by class on the
/// way in), one matrix in 37 made for larfg's special paths (entries near under- and
/// overflow, zero columns and subcolumns, a zero matrix), on `gpu` and on the CPU twin.
template <class T>
void check_listed(const Context& gpu, const std::vector<std::pair<BShape, std::int64_t>>& groups) {
  const Context& ctx_ = gpu;
  auto ctx = [&]() -> const Context& { return ctx_; };
  const Special specials[] = {Special::tiny, Special::huge, Special::zero_subcolumn,
                              Special::zero_column, Special::zero};
  const std::vector<BShape> shapes = interleaved_shapes(groups);
  HostBatch<T> host;
  host.shapes = shapes;
  for (std::size_t q = 0; q < shapes.size(); ++q) {
    const Special special = q % 37 == 5 ? specials[(q / 37) % 5] : Special::none;
    host.mats.push_back(tile<T>(shapes[q].m, shapes[q].n, 500 + 7 * q, special));
  }
  const Context cpu = Context::cpu();
  CtxBatch<T> ref = to_ctx_batch<T>(cpu, host), dev = to_ctx_batch<T>(ctx(), host);
  geqrf_vbatched<T>(cpu, ref.m.data(), ref.n.data(), ref.a_ptrs.data(), ref.ld.data(),
                    ref.tau_ptrs.data(), ref.count());
  geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                    dev.tau_ptrs.data(), dev.count());
  ctx().synchronize();
  TwinWorst worst, special_worst;
  for (std::size_t q = 0; q < shapes.size(); ++q) {
    const Matrix<T> got = dev.mats[q].to_host(), tau = dev.taus[q].to_host();
    (q % 37 == 5 ? special_worst : worst)
        .add<T>(static_cast<std::int64_t>(q), got.data(), got.ld(), ref.mats[q].data(),
                ref.mats[q].ld(), tau.data(), ref.taus[q].data(), host.mats[q]);
  }
  {
    SCOPED_TRACE("random tiles");
    worst.expect_within(kTwinBound);
  }
  {
    SCOPED_TRACE("tiny, huge and zero columns");
    special_worst.expect_within(kTwinBound);
  }
}

TEST_P(BatchedSmallCuda, ListedMixedBatchMatchesTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Mixed shapes within each class, m < n, and inputs for larfg's special paths.
    check_listed<T>(ctx(), {{{32, 32}, 5000},
                            {{16, 16}, 3000},
                            {{8, 5}, 2000},
                            {{64, 32}, 1000},
                            {{40, 20}, 700},
                            {{12, 30}, 300},
                            {{30, 25}, 300},
                            {{17, 20}, 200},
                            {{64, 16}, 300},
                            {{33, 9}, 300},
                            {{3, 8}, 200},
                            {{1, 1}, 50},
                            {{7, 1}, 50},
                            {{1, 6}, 50},
                            {{64, 1}, 50},
                            {{50, 31}, 200}});
  }));
}

/// Strided batches of each shape on `gpu`: the first reflector's tau and R(0, 0) against the
/// exact values (long double from the input column), worst relative error in eps.
template <class T>
void check_first_reflector(const Context& gpu, const std::vector<BShape>& shapes) {
  for (const BShape shape : shapes) {
    const std::int64_t m = shape.m, n = shape.n, count = m * n > 2048 ? 500 : 4000;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    HostBatch<T> host;
    host.shapes.assign(static_cast<std::size_t>(count), shape);
    for (std::int64_t q = 0; q < count; ++q) {
      // Plain random entries, one column in 8 scaled across the fast path's range.
      Matrix<T> a = random_matrix<T>(m, n, 7100 + 13 * q);
      const double scale = q % 8 == 3 ? (sizeof(T) == 8 ? 1e-120 : 1e-12)
                           : q % 8 == 6 ? (sizeof(T) == 8 ? 1e120 : 1e12) : 1.0;
      for (std::int64_t i = 0; i < m; ++i) a(i, 0) = static_cast<T>(double(a(i, 0)) * scale);
      host.mats.push_back(std::move(a));
    }
    StridedBatch<T> dev = to_strided<T>(gpu, host, 0, 0);
    geqrf_strided_batched<T>(gpu, m, n, dev.data.data(), dev.ld, dev.stride, dev.tau.data(),
                             dev.tau_stride, count);
    const Matrix<T> got = to_host(gpu, dev.data), got_tau = to_host(gpu, dev.tau);
    double worst_tau = 0, worst_beta = 0;
    std::int64_t tau_at = -1, beta_at = -1;
    for (std::int64_t q = 0; q < count; ++q) {
      const Matrix<T>& a = host.mats[static_cast<std::size_t>(q)];
      long double ss = 0;
      for (std::int64_t i = 0; i < m; ++i) ss += (long double)a(i, 0) * (long double)a(i, 0);
      const long double alpha = a(0, 0), norm = std::sqrt(ss);
      const long double beta = alpha < 0 ? norm : -norm;
      const long double tau = (beta - alpha) / beta;
      const double d_tau =
          double(std::fabs((long double)got_tau(q * dev.tau_stride, 0) - tau) / tau);
      const double d_beta =
          double(std::fabs((long double)got(q * dev.stride, 0) - beta) / std::fabs(beta));
      TwinWorst::note(worst_tau, tau_at, d_tau, q);
      TwinWorst::note(worst_beta, beta_at, d_beta, q);
    }
    // The GPU's own sum of squares (partial sums and a shuffle tree) and the refined
    // estimates: a few ulps; 8 leaves room for m = 200.
    EXPECT_LT(track("first tau", worst_tau / accuracy::eps<T>()), 8.0) << "matrix " << tau_at;
    EXPECT_LT(track("first beta", worst_beta / accuracy::eps<T>()), 8.0) << "matrix " << beta_at;
  }
}

// The first reflector of each matrix comes from the input column alone, so its tau and
// R(0, 0) = beta can be held to a few ulps of the exact values, much tighter than the twin
// bound above: this catches an approximate square root or reciprocal left short of full
// precision (an unrefined or once-refined hardware estimate is off by 2^-20 to 2^-40,
// thousands of ulps), which the backward error and orthogonality ratios would not notice.
TEST_P(BatchedSmallCuda, FirstReflectorWithinUlpsOfExact) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // The register kernel's classes, and (64 x 64, 200 x 100) the blocked route's panel.
    check_first_reflector<T>(ctx(), {{16, 16}, {32, 32}, {64, 16}, {8, 8}, {13, 7}, {64, 64},
                                     {200, 100}});
  }));
}

// The same on the tall register kernel (batched_tall_small.cu), forced on for its classes.
TEST_P(BatchedSmallCuda, FirstReflectorWithinUlpsOfExactOnTheTallKernel) {
  kernels::cuda::set_batched_tall(kernels::cuda::TallRoute::on);
  GPUQR_FOR_PRECISION(([&]<class T>() {
    check_first_reflector<T>(ctx(), {{128, 32}, {64, 16}, {64, 64}, {100, 20}, {256, 30}});
  }));
}

// The classes with 32 < m <= 64 and n <= 16 under each of their kernels (0: a column on two
// lanes, every other row; 1: contiguous halves; 3: the rows kernel, two rows of every column
// on a lane, FP64 with its general steps; "4": the same with the branch-free form first, as
// FP32 always): strided and listed batches against the CPU twin (padding untouched), the
// special inputs, and the first reflector within ulps of exact.
TEST_P(BatchedSmallCuda, TallClassesMatchTheCpuTwinOnEveryLayout) {
  // Layout 3 twice: FP64 with the branch-free form first and without (FP32 always has it).
  for (const int layout : {0, 1, 3, 4}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    kernels::cuda::set_batched_small_tall(std::min(layout, 3));
    kernels::cuda::set_batched_rows_fast(layout == 4 ? 1 : 0);
    GPUQR_FOR_PRECISION(([&]<class T>() {
      check_strided_cases<T>(ctx(), {{64, 16, 5000, 0, 0},
                                     {33, 9, 3000, 1, 0},
                                     {47, 16, 3000, 0, 1},
                                     {64, 8, 3000, 0, 0},
                                     {50, 13, 2000, 3, 0},
                                     {64, 12, 2000, 1, 2}});
      // Strided batches of k = 16 take the rows kernel's branch-free form (FP32, and FP64
      // at layout 4); these matrices (one in 37 special) take its fallback.
      check_strided_cases<T>(ctx(), {{64, 16, 3000, 0, 0}, {40, 16, 2000, 1, 1}}, true);
      check_listed<T>(ctx(), {{{64, 16}, 1500},
                              {{33, 9}, 500},
                              {{40, 12}, 500},
                              {{64, 1}, 100},
                              {{64, 5}, 300},
                              {{57, 16}, 300},
                              {{33, 16}, 300},
                              {{16, 16}, 300}});
      check_first_reflector<T>(ctx(), {{64, 16}, {40, 12}, {33, 9}});
    }));
  }
  kernels::cuda::set_batched_small_tall(-1);
}

// The rows kernel's variants: FP64 with the general form only and with the branch-free form
// first (FP32 always has it), without and with the L2 prefetch of each warp's next matrix.
// Batches several times the resident warps, special columns, the CPU twin; then graded,
// ill-conditioned and rank-deficient matrices by the dense ratios.
TEST_P(BatchedSmallCuda, RowsKernelVariantsMatchTheCpuTwin) {
  kernels::cuda::set_batched_small_tall(3);
  for (const int fast : {0, 1}) {
    for (const int prefetch : {0, 1}) {
      SCOPED_TRACE("fast " + std::to_string(fast) + ", prefetch " + std::to_string(prefetch));
      kernels::cuda::set_batched_rows_fast(fast);
      kernels::cuda::set_batched_rows_prefetch(prefetch);
      GPUQR_FOR_PRECISION(([&]<class T>() {
        check_strided_cases<T>(ctx(), {{64, 16, 5000, 0, 0}, {47, 13, 3000, 1, 1},
                                       {33, 16, 3000, 0, 1}},
                               true);
        check_listed<T>(ctx(), {{{64, 16}, 2500}, {{41, 15}, 1500}, {{64, 9}, 500}});
        const std::vector<BShape> shapes = interleaved_shapes(
            {{{64, 16}, 400}, {{50, 16}, 200}, {{64, 11}, 200}, {{35, 14}, 200}});
        const HostBatch<T> host = make_batch<T>(shapes, 77 + 10 * fast + prefetch, 4);
        CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
        geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                          dev.tau_ptrs.data(), dev.count());
        check_factors<T>(ctx(), host, dev, 30.0);
      }));
    }
  }
}

// Sized for compute-sanitizer: the rows kernel, FP64 with and without the branch-free form,
// and (layout 5) with the L2 prefetch of the next matrix.
TEST_P(BatchedSmallCuda, SanitizerSizedRowsKernels) {
  for (const int layout : {3, 4, 5}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    kernels::cuda::set_batched_small_tall(3);
    kernels::cuda::set_batched_rows_fast(layout == 3 ? 0 : 1);
    kernels::cuda::set_batched_rows_prefetch(layout == 5 ? 1 : 0);
    GPUQR_FOR_PRECISION(([&]<class T>() {
      check_strided_cases<T>(ctx(), {{64, 16, 2000, 0, 0}, {47, 13, 1500, 1, 1}});
    }));
  }
  kernels::cuda::set_batched_small_tall(-1);
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedSmallCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
