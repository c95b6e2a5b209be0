// The blocked route of the CUDA batched geqrf (src/cuda/batched_blocked.cu: panel kernel, then
// the trailing update by cuBLAS batched GEMMs) against its CPU twin (LAPACK's geqrf per
// matrix: geqr2 on the panel, larft, larfb), forced with the routing test hook on strided,
// pointer-array (one shape: gemmBatched) and variable-size (several shapes per step:
// gemmGroupedBatched) batches, at every panel width. Both follow larfg's conventions, so R, V
// and tau agree entry by entry up to rounding on well-conditioned matrices (graded columns
// included: Householder QR is column-scaling invariant); a rank-deficient matrix is checked
// through the invariants alone (its trailing reflectors are rounding noise). Every batch is
// also checked for backward error and orthogonality (Q from orgqr_vbatched). The mixed-shape
// update kernel (batched_update.cu) is checked the same way on odd shapes (1 x 1, one row or
// column, tall, wide) with ld > m, whose padding rows (and tau past k) must stay untouched.
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
using kernels::cuda::BatchedUpdate;
using kernels::cuda::set_batched_route;
using kernels::cuda::set_batched_update;

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
    set_batched_update(BatchedUpdate::automatic);
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

/// Shapes for the update kernel: 1 x 1, one row, one column, odd sizes,
/// tall and wide, repeated shapes (a step with a group of several) beside unique ones, and
/// matrices of the register kernel (n <= 32, m <= 64) and of the shared-memory block route
/// (63 x 45, 70 x 1) next to the blocked ones.
const std::vector<BShape> kOdd = {
    {1, 1},    {1, 70},   {70, 1},    {7, 5},     {37, 3},    {64, 64},   {65, 65},
    {97, 96},  {96, 97},  {129, 67},  {67, 129},  {200, 200}, {200, 200}, {255, 129},
    {301, 173}, {33, 65}, {40, 20},   {63, 45},   {150, 150}, {150, 150}, {150, 150},
    {520, 40}, {2, 300},  {300, 2},   {99, 99}};

constexpr std::int64_t kPadRows = 3;  // ld = m + 3: rows m .. m + 2 of every column poisoned
constexpr std::int64_t kPadTau = 2;   // tau entries past min(m, n), poisoned too

/// A listed batch in device memory with ld > m and poisoned padding (rows below each matrix,
/// tau past its k entries), factored by geqrf_vbatched; `touched` counts poison overwritten.
template <class T>
CtxBatch<T> factor_padded(const Context& ctx, const HostBatch<T>& host, std::int64_t& touched) {
  std::vector<Matrix<T>> mats, taus;
  std::vector<std::int64_t> m, n, ld;
  std::vector<T*> a_ptrs, tau_ptrs;
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    const std::int64_t mi = host.shapes[i].m, ni = host.shapes[i].n, k = std::min(mi, ni);
    Matrix<T> h(mi + kPadRows, ni), t(k + kPadTau, 1);
    for (std::int64_t j = 0; j < ni; ++j)
      for (std::int64_t r = 0; r < mi + kPadRows; ++r)
        h(r, j) = r < mi ? host.mats[i](r, j) : static_cast<T>(kPoison);
    for (std::int64_t r = 0; r < t.rows(); ++r) t(r, 0) = static_cast<T>(kPoison);
    mats.push_back(to_ctx<T>(ctx, h.view()));
    taus.push_back(to_ctx<T>(ctx, t.view()));
    m.push_back(mi);
    n.push_back(ni);
    ld.push_back(mats.back().ld());
    a_ptrs.push_back(mats.back().data());
    tau_ptrs.push_back(taus.back().data());
  }
  geqrf_vbatched<T>(ctx, m.data(), n.data(), a_ptrs.data(), ld.data(), tau_ptrs.data(),
                    static_cast<std::int64_t>(m.size()));
  CtxBatch<T> out;
  touched = 0;
  for (std::size_t i = 0; i < mats.size(); ++i) {
    const Matrix<T> h = to_host(ctx, mats[i]), t = to_host(ctx, taus[i]);
    const std::int64_t k = std::min(m[i], n[i]);
    for (std::int64_t j = 0; j < n[i]; ++j)
      for (std::int64_t r = m[i]; r < h.rows(); ++r)
        if (h(r, j) != static_cast<T>(kPoison)) ++touched;
    for (std::int64_t r = k; r < t.rows(); ++r)
      if (t(r, 0) != static_cast<T>(kPoison)) ++touched;
    out.add(to_ctx<T>(ctx, h.view().block(0, 0, m[i], n[i])),
            to_ctx<T>(ctx, t.view().block(0, 0, std::max<std::int64_t>(k, 1), 1)));
  }
  return out;
}

TEST_P(BatchedBlockedCuda, UpdateKernelsMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const HostBatch<T> host = make_mixed<T>(kOdd, 123, {6, 14}, {});
    const CtxBatch<T> ref = cpu_factors(host);
    // Every GPUQR_BATCHED_VGEMM setting: the fused kernel everywhere (2) and on mixed steps
    // (1), cuBLAS (0), and the default (per precision).
    for (const BatchedUpdate update : {BatchedUpdate::own, BatchedUpdate::mixed,
                                       BatchedUpdate::automatic, BatchedUpdate::cublas}) {
      SCOPED_TRACE("update " + std::to_string(static_cast<int>(update)));
      set_batched_update(update);
      std::int64_t touched = -1;
      const CtxBatch<T> dev = factor_padded<T>(ctx(), host, touched);
      EXPECT_EQ(touched, 0) << "entries below a matrix (ld > m) or past its tau were written";
      expect_twin<T>(ctx(), host, dev, ref, {});
      check_factors<T>(ctx(), host, dev, kBound);
    }
  }));
}

TEST_P(BatchedBlockedCuda, UpdateKernelsAtEveryPanelWidth) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const HostBatch<T> host = make_mixed<T>(kOdd, 321, {9}, {});
    const CtxBatch<T> ref = cpu_factors(host);
    for (const BatchedUpdate update : {BatchedUpdate::own, BatchedUpdate::cublas}) {
      set_batched_update(update);
      for (const int nb : {32, 16, 8}) {
        SCOPED_TRACE("update " + std::to_string(static_cast<int>(update)) + ", nb " +
                     std::to_string(nb));
        set_batched_route(BatchedRoute::blocked, nb);
        std::int64_t touched = -1;
        const CtxBatch<T> dev = factor_padded<T>(ctx(), host, touched);
        EXPECT_EQ(touched, 0) << "entries below a matrix (ld > m) or past its tau were written";
        expect_twin<T>(ctx(), host, dev, ref, {});
        check_factors<T>(ctx(), host, dev, kBound);
      }
    }
  }));
}

/// Our update kernels on one shape too (a listed batch of equal matrices; the default takes
/// cuBLAS gemmBatched there), many matrices so that a step has thousands of tiles, and the
/// rank-deficient matrix through the invariants.
TEST_P(BatchedBlockedCuda, UpdateKernelsOnOneShapeAndManyMatrices) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    set_batched_update(BatchedUpdate::own);
    std::vector<BShape> shapes(40, BShape{160, 144});
    const HostBatch<T> one = make_mixed<T>(shapes, 8, {3}, {5});
    const CtxBatch<T> ref = cpu_factors(one);
    CtxBatch<T> dev = to_ctx_batch<T>(ctx(), one);
    geqrf_batched<T>(ctx(), 160, 144, dev.a_ptrs.data(), dev.ld[0], dev.tau_ptrs.data(),
                     dev.count());
    expect_twin<T>(ctx(), one, dev, ref, {5});
    check_factors<T>(ctx(), one, dev, kBound);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedBlockedCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
