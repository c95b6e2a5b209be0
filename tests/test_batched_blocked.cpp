// The blocked route of the CUDA batched geqrf (src/cuda/batched_blocked.cu: panel kernel, then
// the trailing update by cuBLAS batched GEMMs) against its CPU twin (LAPACK's geqrf per
// matrix: geqr2 on the panel, larft, larfb), forced with the routing test hook on strided,
// pointer-array (one shape: gemmBatched) and variable-size (several shapes per step:
// gemmGroupedBatched) batches, at every panel width. Both follow larfg's conventions, so R, V
// and tau agree entry by entry up to rounding on well-conditioned matrices (graded columns
// included: Householder QR is column-scaling invariant); a rank-deficient matrix is checked
// through the invariants alone (its trailing reflectors are rounding noise). Every batch is
// also checked for backward error and orthogonality (Q from orgqr_vbatched).
// CUDA only: the cases skip with a message without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuqr/batched.hpp"
#include "src/core/batched_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/batched_support.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

using kernels::cuda::BatchedRoute;
using kernels::cuda::set_batched_route;

constexpr double kBound = 30.0;      // backward error, orthogonality (as test_batched.cpp)
constexpr double kTwinBound = 100.0;  // as FactorsMatchTheCpuTwin (test_batched_twins.cpp)

class BatchedBlockedCuda : public BackendTest {
 protected:
  // The tall register kernel would take 64x64 and 100x37 first: off here, so
  // that these cases keep exercising the blocked route (test_batched_tall_small.cpp has it).
  void SetUp() override {
    BackendTest::SetUp();
    kernels::cuda::set_batched_tall(kernels::cuda::TallRoute::off);
  }
  void TearDown() override {
    set_batched_route(BatchedRoute::automatic);
    kernels::cuda::set_batched_tall(kernels::cuda::TallRoute::automatic);
  }
};

/// Random matrices, with the `graded` ones' columns scaled from 1e-8 to 1e8 and the
/// `rankdef` ones of rank about n / 2.
template <class T>
HostBatch<T> make_mixed(const std::vector<BShape>& shapes, std::uint64_t seed,
                        const std::vector<std::size_t>& graded,
                        const std::vector<std::size_t>& rankdef) {
  HostBatch<T> b = make_batch<T>(shapes, seed, 0);
  for (const std::size_t i : graded) {
    Matrix<T>& a = b.mats[i];
    for (std::int64_t j = 0; j < a.cols(); ++j) {
      const double t = a.cols() > 1 ? static_cast<double>(j) / double(a.cols() - 1) : 0.0;
      const double scale = std::pow(10.0, -8.0 + 16.0 * t);
      for (std::int64_t r = 0; r < a.rows(); ++r) a(r, j) = static_cast<T>(a(r, j) * scale);
    }
  }
  for (const std::size_t i : rankdef)
    b.mats[i] = make_matrix<T>(MatrixKind::rank_deficient, shapes[i].m, shapes[i].n, seed + i);
  return b;
}

/// The CPU twin's factors of `host` (LAPACK's geqrf per matrix).
template <class T>
CtxBatch<T> cpu_factors(const HostBatch<T>& host) {
  const Context cpu = Context::cpu();
  CtxBatch<T> ref = to_ctx_batch<T>(cpu, host);
  geqrf_vbatched<T>(cpu, ref.m.data(), ref.n.data(), ref.a_ptrs.data(), ref.ld.data(),
                    ref.tau_ptrs.data(), ref.count());
  return ref;
}

/// R, V and tau of `got` against the twin's `ref`, matrix by matrix (skipping `skip`).
template <class T>
void expect_twin(const Context& ctx, const HostBatch<T>& host, const CtxBatch<T>& got,
                 const CtxBatch<T>& ref, const std::vector<std::size_t>& skip) {
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
    const std::int64_t m = host.shapes[i].m, n = host.shapes[i].n, k = std::min(m, n);
    SCOPED_TRACE("matrix " + std::to_string(i) + " (" + std::to_string(m) + "x" +
                 std::to_string(n) + ")");
    const Matrix<T> a = to_host(ctx, got.mats[i]), tau = to_host(ctx, got.taus[i]);
    const Matrix<T>& ra = ref.mats[i];
    const Matrix<T>& rtau = ref.taus[i];
    const double unit = double(std::max(m, n)) * accuracy::eps<T>();
    const double scale = accuracy::norm1<T>(host.mats[i].view()) * unit;
    // Entries of R scale with ||A||; reflectors and tau are O(1).
    double r_diff = 0, v_diff = 0, t_diff = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t r = 0; r < m; ++r) {
        const double d = std::fabs(double(a(r, j)) - double(ra(r, j)));
        (r <= j ? r_diff : v_diff) = std::max(r <= j ? r_diff : v_diff, d);
      }
    for (std::int64_t j = 0; j < k; ++j)
      t_diff = std::max(t_diff, std::fabs(double(tau(j, 0)) - double(rtau(j, 0))));
    EXPECT_LT(track("blocked twin R", r_diff / scale), kTwinBound);
    EXPECT_LT(track("blocked twin V", v_diff / unit), kTwinBound);
    EXPECT_LT(track("blocked twin tau", t_diff / unit), kTwinBound);
  }
}

/// The variable-size batch: shapes repeat (groups of a GEMM call) and differ (several groups
/// per step); 33x65 is wide, 1000x100 takes a narrower panel in FP64 (1000 x 32 does not fit
/// shared memory), 40x20 stays on the register kernel.
const std::vector<BShape> kVariable = {
    {64, 64},  {128, 128}, {100, 37}, {300, 200}, {33, 65},  {512, 128}, {65, 65},
    {200, 200}, {200, 200}, {65, 65},  {64, 64},   {40, 20},  {150, 120}, {160, 160},
    {1000, 100}, {97, 96}};
const std::vector<std::size_t> kGraded = {12};
const std::vector<std::size_t> kRankDeficient = {13};

TEST_P(BatchedBlockedCuda, StridedAndPointerArraysMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    set_batched_route(BatchedRoute::blocked);
    const std::vector<std::pair<BShape, std::int64_t>> cases = {
        {{64, 64}, 7}, {{128, 128}, 3}, {{100, 37}, 5}, {{33, 65}, 4},
        {{512, 128}, 2}, {{300, 200}, 2}, {{65, 65}, 3}};
    for (const auto& [s, count] : cases) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
      const std::vector<BShape> shapes(static_cast<std::size_t>(count), s);
      const HostBatch<T> host = make_mixed<T>(shapes, 11 + s.m * 1000 + s.n, {0}, {});
      const CtxBatch<T> ref = cpu_factors(host);
      // Strided, ld = m + 3, stride = ld n + 5, padding poisoned (checked untouched).
      StridedBatch<T> strided = to_strided<T>(ctx(), host, 3, 5);
      geqrf_strided_batched<T>(ctx(), s.m, s.n, strided.data.data(), strided.ld, strided.stride,
                               strided.tau.data(), strided.tau_stride, count);
      const CtxBatch<T> back = from_strided<T>(ctx(), strided, host);
      expect_twin<T>(ctx(), host, back, ref, {});
      check_factors<T>(ctx(), host, back, kBound);
      // Pointer arrays of one shape.
      CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
      geqrf_batched<T>(ctx(), s.m, s.n, dev.a_ptrs.data(), dev.ld[0], dev.tau_ptrs.data(),
                       count);
      expect_twin<T>(ctx(), host, dev, ref, {});
      check_factors<T>(ctx(), host, dev, kBound);
    }
  }));
}

TEST_P(BatchedBlockedCuda, VariableSizesMatchTheCpuTwinAtEveryPanelWidth) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const HostBatch<T> host = make_mixed<T>(kVariable, 77, kGraded, kRankDeficient);
    const CtxBatch<T> ref = cpu_factors(host);
    for (const int nb : {32, 16, 8}) {
      SCOPED_TRACE("nb " + std::to_string(nb));
      set_batched_route(BatchedRoute::blocked, nb);
      CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
      geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                        dev.tau_ptrs.data(), dev.count());
      expect_twin<T>(ctx(), host, dev, ref, kRankDeficient);
      check_factors<T>(ctx(), host, dev, kBound);
    }
  }));
}

TEST_P(BatchedBlockedCuda, EveryRoutingGivesTheSameFactors) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const HostBatch<T> host = make_mixed<T>(kVariable, 91, kGraded, kRankDeficient);
    const CtxBatch<T> ref = cpu_factors(host);
    for (const BatchedRoute route :
         {BatchedRoute::automatic, BatchedRoute::old, BatchedRoute::blocked}) {
      SCOPED_TRACE("route " + std::to_string(static_cast<int>(route)));
      set_batched_route(route);
      CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
      geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                        dev.tau_ptrs.data(), dev.count());
      expect_twin<T>(ctx(), host, dev, ref, kRankDeficient);
      check_factors<T>(ctx(), host, dev, kBound);
    }
  }));
}

TEST_P(BatchedBlockedCuda, GelsThroughTheBlockedRouteMatchesTheCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    set_batched_route(BatchedRoute::blocked);
    const std::vector<BShape> shapes = {{128, 128}, {300, 200}, {512, 128}, {100, 37},
                                        {100, 37},  {65, 65},   {64, 40}};
    const HostBatch<T> host = make_batch<T>(shapes, 5, 0);
    std::vector<BShape> rhs_shapes;
    for (const BShape& s : shapes) rhs_shapes.push_back({s.m, 3});
    const HostBatch<T> rhs = make_batch<T>(rhs_shapes, 6, 0);
    const Context cpu = Context::cpu();
    auto solve = [&](const Context& c) {
      CtxBatch<T> a = to_ctx_batch<T>(c, host), b = to_ctx_batch<T>(c, rhs);
      std::vector<std::int64_t> nrhs(shapes.size(), 3);
      gels_vbatched<T>(c, a.m.data(), a.n.data(), nrhs.data(), a.a_ptrs.data(), a.ld.data(),
                       b.a_ptrs.data(), b.ld.data(), a.count());
      std::vector<Matrix<T>> x;
      for (const Matrix<T>& bi : b.mats) x.push_back(to_host(c, bi));
      return x;
    };
    const std::vector<Matrix<T>> want = solve(cpu), got = solve(ctx());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE("matrix " + std::to_string(i));
      double diff = 0, size = 0;
      for (std::int64_t j = 0; j < 3; ++j)
        for (std::int64_t r = 0; r < shapes[i].n; ++r) {
          diff = std::max(diff, std::fabs(double(got[i](r, j)) - double(want[i](r, j))));
          size = std::max(size, std::fabs(double(want[i](r, j))));
        }
      const double unit = double(std::max(shapes[i].m, shapes[i].n)) * accuracy::eps<T>();
      EXPECT_LT(track("blocked gels X", diff / (size * unit)), 10 * kTwinBound);
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedBlockedCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
