// Batched QR: bad input (every backend: the error names the matrix, nothing is written) and
// the CUDA kernels against their CPU twins on random tiles of every route (register kernel,
// shared-memory kernel, dense fallback): both follow LAPACK's larfg conventions, so R, the
// reflectors and tau agree entry by entry up to rounding on well-conditioned tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuqr/batched.hpp"
#include "gpuqr/error.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/bad_input.hpp"
#include "tests/support/batched_support.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

class BatchedBadInput : public BackendTest {};

/// Every matrix of `dev` still equals its original in `host`, entry by entry.
template <class T>
void expect_untouched(const Context& ctx, const HostBatch<T>& host, const CtxBatch<T>& dev) {
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    const Matrix<T> back = to_host(ctx, dev.mats[i]);
    for (std::int64_t j = 0; j < back.cols(); ++j)
      for (std::int64_t r = 0; r < back.rows(); ++r)
        ASSERT_EQ(back(r, j), host.mats[i](r, j)) << "matrix " << i << " was written";
  }
}

/// Runs call(), expecting InvalidArgument whose message names "matrix <index>".
template <class F>
void expect_names(F&& call, std::int64_t index) {
  expect_invalid(call, "matrix " + std::to_string(index) + ":");
}

TEST_P(BatchedBadInput, NamesTheMatrixAndWritesNothing) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::vector<BShape> shapes = {{6, 4}, {12, 12}, {40, 30}, {5, 5}};
    HostBatch<T> host = make_batch<T>(shapes, 42, 0);
    CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
    const std::int64_t count = dev.count();
    {  // lda < m at index 2
      auto ld = dev.ld;
      ld[2] = 3;
      expect_names([&] { geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(),
                                           ld.data(), dev.tau_ptrs.data(), count); }, 2);
    }
    {  // a null pointer at index 1
      auto a = dev.a_ptrs;
      a[1] = nullptr;
      expect_names([&] { geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), a.data(),
                                           dev.ld.data(), dev.tau_ptrs.data(), count); }, 1);
    }
    {  // a negative size at index 3
      auto n = dev.n;
      n[3] = -1;
      expect_names([&] { geqrf_vbatched<T>(ctx(), dev.m.data(), n.data(), dev.a_ptrs.data(),
                                           dev.ld.data(), dev.tau_ptrs.data(), count); }, 3);
    }
    {  // orgqr with n > m at index 0
      auto n = dev.n;
      n[0] = 7;
      const std::vector<std::int64_t> k = {1, 1, 1, 1};
      expect_names([&] { orgqr_vbatched<T>(ctx(), dev.m.data(), n.data(), k.data(),
                                           dev.a_ptrs.data(), dev.ld.data(),
                                           dev.const_tau_ptrs().data(), count); }, 0);
    }
    {  // ormqr with ldc < m at index 3 (C is the batch itself)
      const std::vector<std::int64_t> k = {2, 2, 2, 2};
      auto ldc = dev.ld;
      ldc[3] = 4;
      expect_names([&] { ormqr_vbatched<T>(ctx(), Op::trans, dev.m.data(), dev.n.data(),
                                           k.data(), dev.const_a_ptrs().data(), dev.ld.data(),
                                           dev.const_tau_ptrs().data(), dev.a_ptrs.data(),
                                           ldc.data(), count); }, 3);
    }
    {  // gels with m < n at index 1
      auto m = dev.m;
      m[1] = 11;
      expect_names([&] { gels_vbatched<T>(ctx(), m.data(), dev.n.data(), dev.n.data(),
                                          dev.a_ptrs.data(), dev.ld.data(), dev.a_ptrs.data(),
                                          dev.ld.data(), count); }, 1);
    }
    {  // strided: matrices that would overlap (stride < lda n)
      expect_names([&] { geqrf_strided_batched<T>(ctx(), 6, 4, dev.a_ptrs[0], 6, 20,
                                                  dev.tau_ptrs[0], 4, 2); }, 1);
    }
    expect_untouched<T>(ctx(), host, dev);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedBadInput, all_backend_cases(), case_name);

class BatchedTwinsCuda : public BackendTest {};

// Scaled differences (in units of max(m, n) eps) the twins may show on well-conditioned tiles.
constexpr double kTwinBound = 100.0;

/// max |x - y| over the entries, for matrices of one shape.
template <class T>
double max_diff(const Matrix<T>& x, const Matrix<T>& y) {
  double d = 0;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      d = std::max(d, std::fabs(double(x(i, j)) - double(y(i, j))));
  return d;
}

TEST_P(BatchedTwinsCuda, FactorsMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Tall tiles (well conditioned) on every route: register classes (n <= 8/16/32 with
    // m <= 8..64), shared memory, and the dense fallback for the largest.
    const std::vector<BShape> shapes = {{8, 4},   {16, 8},   {16, 16}, {32, 12},  {40, 20},
                                        {64, 32}, {64, 8},   {3, 7},   {96, 48},  {128, 64},
                                        {65, 33}, {250, 100}, {700, 200}};
    HostBatch<T> host = make_batch<T>(shapes, 2024, 0);
    const Context cpu = Context::cpu();
    CtxBatch<T> ref = to_ctx_batch<T>(cpu, host), dev = to_ctx_batch<T>(ctx(), host);
    geqrf_vbatched<T>(cpu, ref.m.data(), ref.n.data(), ref.a_ptrs.data(), ref.ld.data(),
                      ref.tau_ptrs.data(), ref.count());
    geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                      dev.tau_ptrs.data(), dev.count());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE("matrix " + std::to_string(i) + " (" + std::to_string(shapes[i].m) + "x" +
                   std::to_string(shapes[i].n) + ")");
      const Matrix<T> got = to_host(ctx(), dev.mats[i]), tau = to_host(ctx(), dev.taus[i]);
      const double scale = accuracy::norm1<T>(host.mats[i].view()) *
                           double(std::max(shapes[i].m, shapes[i].n)) * accuracy::eps<T>();
      // Entries of R scale with ||A||; reflectors and tau are O(1).
      double r_diff = 0, v_diff = 0;
      for (std::int64_t j = 0; j < got.cols(); ++j)
        for (std::int64_t r = 0; r < got.rows(); ++r) {
          const double d = std::fabs(double(got(r, j)) - double(ref.mats[i](r, j)));
          (r <= j ? r_diff : v_diff) = std::max(r <= j ? r_diff : v_diff, d);
        }
      const double unit = double(std::max(shapes[i].m, shapes[i].n)) * accuracy::eps<T>();
      EXPECT_LT(track("twin R", r_diff / scale), kTwinBound);
      EXPECT_LT(track("twin V", v_diff / unit), kTwinBound);
      EXPECT_LT(track("twin tau", max_diff(tau, ref.taus[i]) / unit), kTwinBound);
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedTwinsCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
