// The graph path of the dense calls (Context::cuda_graphs). GraphCache's keys and LRU order
// on the CPU; on a GPU, geqrf, orgqr, ormqr and gels replayed from graphs against the direct
// path on the same context: the same kernels, so the same bits, for repeated calls on the
// same buffers (replays), new buffers of a shape (updates), several shapes, both precisions;
// and the usual invariants (backward error, orthogonality, least-squares optimality).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"
#include "src/core/graph_cache.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

using detail::GraphCache;
using detail::GraphKey;

// ---- GraphCache (host only) --------------------------------------------------------------------

GraphKey key_of(std::int64_t shape, std::uintptr_t address) {
  GraphKey key;
  key.add_shape(shape);
  key.add_address(reinterpret_cast<const void*>(address));
  return key;
}

/// Fake executables: distinct non-null handles; destroyed ones are recorded.
struct Destroyed {
  std::vector<std::uintptr_t> handles;
  GraphCache::Destroy callback() {
    return [this](void* exec) { handles.push_back(reinterpret_cast<std::uintptr_t>(exec)); };
  }
};
void* handle(std::uintptr_t id) { return reinterpret_cast<void*>(id); }

TEST(GraphCache, FindsExactKeysOnly) {
  Destroyed destroyed;
  GraphCache cache(4, destroyed.callback());
  cache.insert(key_of(1, 100), handle(11));
  ASSERT_NE(cache.find(key_of(1, 100)), nullptr);
  EXPECT_EQ(cache.find(key_of(1, 100))->exec, handle(11));
  EXPECT_EQ(cache.find(key_of(1, 101)), nullptr);  // other address
  EXPECT_EQ(cache.find(key_of(2, 100)), nullptr);  // other shape
  EXPECT_TRUE(destroyed.handles.empty());
}

TEST(GraphCache, EvictsTheLeastRecentlyUsed) {
  Destroyed destroyed;
  GraphCache cache(3, destroyed.callback());
  cache.insert(key_of(1, 0), handle(1));
  cache.insert(key_of(2, 0), handle(2));
  cache.insert(key_of(3, 0), handle(3));
  ASSERT_NE(cache.find(key_of(1, 0)), nullptr);  // 1 is now the most recent; 2 the least
  cache.insert(key_of(4, 0), handle(4));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find(key_of(2, 0)), nullptr);
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 2u);
  EXPECT_NE(cache.find(key_of(1, 0)), nullptr);
  EXPECT_NE(cache.find(key_of(3, 0)), nullptr);
  EXPECT_NE(cache.find(key_of(4, 0)), nullptr);
}

TEST(GraphCache, ReinsertingAKeyReplacesItsExecutable) {
  Destroyed destroyed;
  GraphCache cache(3, destroyed.callback());
  cache.insert(key_of(1, 0), handle(1));
  cache.insert(key_of(1, 0), handle(7));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(key_of(1, 0))->exec, handle(7));
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 1u);
}

TEST(GraphCache, SameShapeEntryIsRekeyedForAnUpdate) {
  Destroyed destroyed;
  GraphCache cache(4, destroyed.callback());
  cache.insert(key_of(5, 100), handle(1));
  cache.insert(key_of(6, 100), handle(2));
  cache.insert(key_of(5, 300), nullptr);  // a failed capture: never an update target
  GraphCache::Entry* same = cache.find_same_shape(key_of(5, 200));
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same->exec, handle(1));
  cache.rekey(same, key_of(5, 200));
  EXPECT_EQ(cache.find(key_of(5, 100)), nullptr);
  ASSERT_NE(cache.find(key_of(5, 200)), nullptr);
  EXPECT_EQ(cache.find(key_of(5, 200))->exec, handle(1));
  EXPECT_EQ(cache.find_same_shape(key_of(7, 0)), nullptr);
  EXPECT_TRUE(destroyed.handles.empty());  // an update keeps the executable
  // Rekeying onto a key that exists drops that entry (and its executable).
  cache.insert(key_of(6, 500), handle(3));
  GraphCache::Entry* six = cache.find(key_of(6, 100));
  ASSERT_NE(six, nullptr);
  cache.rekey(six, key_of(6, 500));
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 3u);
  EXPECT_EQ(cache.find(key_of(6, 500))->exec, handle(2));
}

TEST(GraphCache, FailuresAreCountedPerKey) {
  Destroyed destroyed;
  GraphCache cache(4, destroyed.callback());
  EXPECT_EQ(cache.note_failure(key_of(1, 0)), 1);
  EXPECT_EQ(cache.note_failure(key_of(1, 0)), 2);
  EXPECT_EQ(cache.find(key_of(1, 0))->exec, nullptr);
  EXPECT_EQ(cache.find(key_of(1, 0))->failures, 2);
  // A key that had a graph: the graph goes, the count starts again.
  cache.insert(key_of(2, 0), handle(2));
  EXPECT_EQ(cache.note_failure(key_of(2, 0)), 1);
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 2u);
  EXPECT_EQ(cache.find_same_shape(key_of(2, 5)), nullptr);  // no executable to update
}

TEST(GraphCache, SeenOnceKeysHoldNoExecutable) {
  // The default mode's first call of a key: an entry with no executable and no failure, found
  // by its exact key (the second call then captures), never offered for an update, not
  // counted among the executables, evicted like any entry without a destroy.
  Destroyed destroyed;
  GraphCache cache(2, destroyed.callback());
  cache.note_seen(key_of(1, 0));
  ASSERT_NE(cache.find(key_of(1, 0)), nullptr);
  EXPECT_EQ(cache.find(key_of(1, 0))->exec, nullptr);
  EXPECT_EQ(cache.find(key_of(1, 0))->failures, 0);
  EXPECT_EQ(cache.find_same_shape(key_of(1, 5)), nullptr);
  EXPECT_EQ(cache.executables(), 0u);
  EXPECT_EQ(cache.size(), 1u);
  cache.insert(key_of(1, 0), handle(7));  // its capture
  EXPECT_EQ(cache.find(key_of(1, 0))->exec, handle(7));
  EXPECT_EQ(cache.executables(), 1u);
  EXPECT_EQ(cache.size(), 1u);
  cache.note_seen(key_of(2, 0));
  cache.note_seen(key_of(3, 0));  // evicts key 1, the least recent, and destroys its graph
  EXPECT_EQ(cache.find(key_of(1, 0)), nullptr);
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 7u);
  cache.note_seen(key_of(4, 0));  // evicts a seen-once key: nothing to destroy
  EXPECT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(cache.executables(), 0u);
}

TEST(GraphCache, EraseDestroysTheEntry) {
  Destroyed destroyed;
  GraphCache cache(4, destroyed.callback());
  cache.insert(key_of(1, 0), handle(1));
  cache.insert(key_of(2, 0), handle(2));
  cache.erase(cache.find(key_of(1, 0)));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(key_of(1, 0)), nullptr);
  ASSERT_EQ(destroyed.handles.size(), 1u);
  EXPECT_EQ(destroyed.handles[0], 1u);
}

TEST(GraphCache, DestroysEveryExecutableOnceAndNeverNull) {
  Destroyed destroyed;
  {
    GraphCache cache(8, destroyed.callback());
    cache.insert(key_of(1, 0), handle(1));
    cache.insert(key_of(2, 0), nullptr);
    cache.insert(key_of(3, 0), handle(3));
  }
  std::sort(destroyed.handles.begin(), destroyed.handles.end());
  EXPECT_EQ(destroyed.handles, (std::vector<std::uintptr_t>{1, 3}));
}

TEST(GraphCache, KeySlotsAreBounded) {
  GraphKey key;
  for (int i = 0; i < GraphKey::kShapeSlots; ++i) key.add_shape(i);
  EXPECT_THROW(key.add_shape(0), std::length_error);
  for (int i = 0; i < GraphKey::kAddressSlots; ++i) key.add_address(nullptr);
  EXPECT_THROW(key.add_address(nullptr), std::length_error);
  GraphKey a, b;
  a.add_shape(3);
  b.add_shape(3);
  b.add_address(reinterpret_cast<const void*>(std::uintptr_t{8}));
  EXPECT_TRUE(a.same_shape(b));
  EXPECT_FALSE(a == b);
}

TEST(GraphCache, CpuContextKeepsTheOptionAndReportsNothing) {
  Context ctx = Context::cpu();
  EXPECT_FALSE(ctx.cuda_graphs());
  ctx.set_cuda_graphs(true);
  EXPECT_TRUE(ctx.cuda_graphs());
  // No effect on the CPU: geqrf runs LAPACK, the stats stay zero.
  Matrix<double> a = random_matrix<double>(20, 10, 3);
  Matrix<double> tau(10, 1);
  geqrf<double>(ctx, a.view(), VectorView<double>(tau.data(), 10));
  const Context::GraphStats stats = ctx.graph_stats();
  EXPECT_EQ(stats.launches + stats.captures + stats.updates + stats.fallbacks + stats.cached, 0);
}

// ---- the dense calls on a GPU ------------------------------------------------------------------

constexpr double kBound = 30.0;

class CudaGraphReplay : public BackendTest {};

std::string describe(const Context::GraphStats& s) {
  return "launches " + std::to_string(s.launches) + ", captures " + std::to_string(s.captures) +
         ", updates " + std::to_string(s.updates) + ", fallbacks " +
         std::to_string(s.fallbacks) + ", cached " + std::to_string(s.cached);
}

/// geqrf of `a` into new device buffers with the context's current mode; outputs on the host.
template <class T>
std::pair<Matrix<T>, Matrix<T>> geqrf_once(const Context& ctx, const Matrix<T>& a) {
  Matrix<T> qr = to_ctx<T>(ctx, a.view());
  const std::int64_t k = std::min(a.rows(), a.cols());
  Matrix<T> tau(k, 1, MemorySpace::device, ctx.device());
  geqrf<T>(ctx, qr.view(), vec(tau));
  return {to_host(ctx, qr), to_host(ctx, tau)};
}

TEST_P(CudaGraphReplay, GeqrfMatchesTheDirectPathBitForBit) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    ctx().set_cuda_graphs(true);
    std::uint64_t seed = 900;
    for (auto [m, n] : {std::pair<int, int>{300, 200}, {777, 777}, {1024, 512}, {2000, 300},
                        {200, 300}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const Matrix<T> a = random_matrix<T>(m, n, seed++);
      const std::int64_t k = std::min(m, n);
      // Graphs on, the same buffers four times: a fallback or capture, then replays.
      Matrix<T> qr = to_ctx<T>(ctx(), a.view());
      Matrix<T> tau(k, 1, MemorySpace::device, ctx().device());
      std::vector<Matrix<T>> outs;
      for (int call = 0; call < 4; ++call) {
        detail::copy_2d(qr.data(), qr.ld(), qr.space(), a.data(), a.ld(), a.space(), m, n,
                        sizeof(T));
        geqrf<T>(ctx(), qr.view(), vec(tau));
        outs.push_back(to_host(ctx(), qr));
        outs.push_back(to_host(ctx(), tau));
      }
      const Context::GraphStats after_same = ctx().graph_stats();
      // New buffers of the same shape: an update of the graph (or a new one).
      auto [qr_new, tau_new] = geqrf_once<T>(ctx(), a);
      const Context::GraphStats after_new = ctx().graph_stats();
      // The direct path on the same context (the same cuBLAS handle and workspace).
      ctx().set_cuda_graphs(false);
      auto [qr_ref, tau_ref] = geqrf_once<T>(ctx(), a);
      ctx().set_cuda_graphs(true);
      for (std::size_t i = 0; i < outs.size(); i += 2) {
        EXPECT_TRUE(same_bits(outs[i], qr_ref)) << "call " << i / 2 << ": factors differ";
        EXPECT_TRUE(same_bits(outs[i + 1], tau_ref)) << "call " << i / 2 << ": tau differs";
      }
      EXPECT_TRUE(same_bits(qr_new, qr_ref)) << "new buffers: factors differ";
      EXPECT_TRUE(same_bits(tau_new, tau_ref)) << "new buffers: tau differs";
      EXPECT_GE(after_same.launches, 2) << describe(after_same);
      EXPECT_GT(after_new.launches, after_same.launches) << describe(after_new);
      std::printf("  %dx%d: %s\n", m, n, describe(after_new).c_str());
    }
  }));
}

TEST_P(CudaGraphReplay, FactorsAndQFromGraphsAreAccurate) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    ctx().set_cuda_graphs(true);
    for (auto [m, n] : {std::pair<int, int>{512, 512}, {1500, 700}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const Matrix<T> a = random_matrix<T>(m, n, 77);
      const std::int64_t k = std::min(m, n);
      Matrix<T> qr = to_ctx<T>(ctx(), a.view());
      Matrix<T> tau(k, 1, MemorySpace::device, ctx().device());
      Matrix<T> q(m, k, MemorySpace::device, ctx().device());
      for (int call = 0; call < 3; ++call) {  // the last two replay
        detail::copy_2d(qr.data(), qr.ld(), qr.space(), a.data(), a.ld(), a.space(), m, n,
                        sizeof(T));
        geqrf<T>(ctx(), qr.view(), vec(tau));
        detail::copy_2d(q.data(), q.ld(), q.space(), qr.data(), qr.ld(), qr.space(), m, k,
                        sizeof(T));
        orgqr<T>(ctx(), k, q.view(), VectorView<const T>(vec(tau)));
      }
      const Matrix<T> qh = to_host(ctx(), q);
      const Matrix<T> qrh = to_host(ctx(), qr);
      Matrix<T> r(k, n);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? qrh(i, j) : T(0);
      EXPECT_LT(track("backward error (graphs)",
                      accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view())),
                kBound);
      EXPECT_LT(track("orthogonality (graphs)", accuracy::orthogonality<T>(qh.view())), kBound);
    }
    EXPECT_GE(ctx().graph_stats().launches, 4) << describe(ctx().graph_stats());
  }));
}

TEST_P(CudaGraphReplay, OrgqrAndOrmqrMatchTheDirectPathBitForBit) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 900, n = 400, nrhs = 3;
    const Matrix<T> a = random_matrix<T>(m, n, 31);
    const Matrix<T> c = random_matrix<T>(m, nrhs, 32);
    const Matrix<T> cr = random_matrix<T>(nrhs, m, 33);
    ctx().set_cuda_graphs(false);
    auto [qr_host, tau_host] = geqrf_once<T>(ctx(), a);
    const Matrix<T> qr = to_ctx<T>(ctx(), qr_host.view());
    const Matrix<T> tau = to_ctx<T>(ctx(), tau_host.view());
    const VectorView<const T> tau_v(tau.data(), n, tau.space(), tau.device());
    // Q, Q^T C and C Q with the current mode, into new device buffers.
    auto run_all = [&] {
      Matrix<T> q = to_ctx<T>(ctx(), qr_host.view());
      orgqr<T>(ctx(), n, q.view(), tau_v);
      Matrix<T> qtc = to_ctx<T>(ctx(), c.view());
      ormqr<T>(ctx(), Side::left, Op::trans, qr.view(), tau_v, qtc.view());
      Matrix<T> cq = to_ctx<T>(ctx(), cr.view());
      ormqr<T>(ctx(), Side::right, Op::no_trans, qr.view(), tau_v, cq.view());
      std::vector<Matrix<T>> outs;
      outs.push_back(to_host(ctx(), q));
      outs.push_back(to_host(ctx(), qtc));
      outs.push_back(to_host(ctx(), cq));
      return outs;
    };
    ctx().set_cuda_graphs(true);
    std::vector<std::vector<Matrix<T>>> graph_runs;
    for (int call = 0; call < 3; ++call) graph_runs.push_back(run_all());
    ctx().set_cuda_graphs(false);
    const std::vector<Matrix<T>> ref = run_all();
    const char* names[] = {"orgqr", "ormqr left trans", "ormqr right no_trans"};
    for (std::size_t call = 0; call < graph_runs.size(); ++call)
      for (std::size_t i = 0; i < ref.size(); ++i)
        EXPECT_TRUE(same_bits(graph_runs[call][i], ref[i])) << names[i] << ", call " << call;
    EXPECT_LT(track("orthogonality (orgqr graphs)",
                    accuracy::orthogonality<T>(graph_runs.back()[0].view())),
              kBound);
    EXPECT_GE(ctx().graph_stats().launches, 3) << describe(ctx().graph_stats());
  }));
}

TEST_P(CudaGraphReplay, GelsMatchesTheDirectPathBitForBit) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (auto [m, n] : {std::pair<int, int>{1000, 300}, {600, 600}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const Matrix<T> a = random_matrix<T>(m, n, 51);
      const Matrix<T> b = random_matrix<T>(m, 2, 52);
      auto solve = [&] {
        Matrix<T> a_ctx = to_ctx<T>(ctx(), a.view());
        Matrix<T> b_ctx = to_ctx<T>(ctx(), b.view());
        const LstsqInfo info = gels<T>(ctx(), a_ctx.view(), b_ctx.view());
        EXPECT_FALSE(info.singular());
        return std::pair<Matrix<T>, Matrix<T>>{to_host(ctx(), a_ctx), to_host(ctx(), b_ctx)};
      };
      ctx().set_cuda_graphs(true);
      std::vector<std::pair<Matrix<T>, Matrix<T>>> runs;
      for (int call = 0; call < 3; ++call) runs.push_back(solve());
      ctx().set_cuda_graphs(false);
      const auto ref = solve();
      for (std::size_t call = 0; call < runs.size(); ++call) {
        EXPECT_TRUE(same_bits(runs[call].first, ref.first)) << "factors, call " << call;
        EXPECT_TRUE(same_bits(runs[call].second, ref.second)) << "solution, call " << call;
      }
      const MatrixView<const T> x(runs.back().second.view().block(0, 0, n, 2));
      EXPECT_LT(track("least squares (graphs)",
                      accuracy::lstsq_optimality_ratio<T>(a.view(), x, b.view())),
                kBound);
    }
    EXPECT_GE(ctx().graph_stats().launches, 2) << describe(ctx().graph_stats());
  }));
}

TEST_P(CudaGraphReplay, ManyShapesStayBoundedAndCorrect) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    ctx().set_cuda_graphs(true);
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 20; ++i) {
        const int m = 96 + 8 * i, n = 64 + 4 * i;
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
        const Matrix<T> a = random_matrix<T>(m, n, 1000 + i);
        auto [qr_g, tau_g] = geqrf_once<T>(ctx(), a);
        auto [qr_g2, tau_g2] = geqrf_once<T>(ctx(), a);
        ctx().set_cuda_graphs(false);
        auto [qr_d, tau_d] = geqrf_once<T>(ctx(), a);
        ctx().set_cuda_graphs(true);
        EXPECT_TRUE(same_bits(qr_g, qr_d));
        EXPECT_TRUE(same_bits(qr_g2, qr_d));
        EXPECT_TRUE(same_bits(tau_g2, tau_d));
      }
    }
    EXPECT_LE(ctx().graph_stats().cached, 16) << describe(ctx().graph_stats());
  }));
}

TEST_P(CudaGraphReplay, DefaultModeCapturesAtTheSecondCall) {
  // A new CUDA context replays graphs by default (GPUQR_GRAPH unset), capturing a key at its
  // second call: a call made once runs directly and captures nothing; repeated calls on the
  // same buffers are captured once (at the second call, or the third where the first call's
  // direct run grew a workspace and so changed the key) and then replayed, with the direct
  // path's bits. The context is put in that mode whatever GPUQR_GRAPH says.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context fresh = Context::cuda(ctx().device());
    const int mode = detail::cuda_graphs_default();  // GPUQR_GRAPH: unset 1, "1" 2, "0" 0
    if (std::getenv("GPUQR_GRAPH") == nullptr) EXPECT_EQ(mode, 1);
    EXPECT_EQ(fresh.cuda_graphs(), mode != 0);
    EXPECT_EQ(fresh.impl().graphs_from_first_call, mode == 2);
    fresh.impl().graphs = true;
    fresh.impl().graphs_from_first_call = false;
    const int m = 700, n = 500;
    const Matrix<T> a = random_matrix<T>(m, n, 77);
    // Once, on buffers of their own: run directly, nothing captured.
    auto [qr_once, tau_once] = geqrf_once<T>(fresh, a);
    Context::GraphStats s = fresh.graph_stats();
    EXPECT_EQ(s.first_calls, 1) << describe(s);
    EXPECT_EQ(s.captures + s.launches + s.fallbacks + s.cached, 0) << describe(s);
    // Five calls on the same buffers.
    Matrix<T> qr = to_ctx<T>(fresh, a.view());
    Matrix<T> tau(n, 1, MemorySpace::device, fresh.device());
    std::vector<Matrix<T>> outs;
    for (int call = 0; call < 5; ++call) {
      detail::copy_2d(qr.data(), qr.ld(), qr.space(), a.data(), a.ld(), a.space(), m, n, sizeof(T));
      geqrf<T>(fresh, qr.view(), vec(tau));
      outs.push_back(to_host(fresh, qr));
      outs.push_back(to_host(fresh, tau));
    }
    s = fresh.graph_stats();
    EXPECT_EQ(s.captures, 1) << describe(s);
    EXPECT_GE(s.launches, 3) << describe(s);
    EXPECT_LE(s.first_calls, 3) << describe(s);
    EXPECT_EQ(s.fallbacks, 0) << describe(s);
    EXPECT_EQ(s.cached, 1) << describe(s);
    // The direct path on the same context (the same cuBLAS handle and workspace).
    fresh.set_cuda_graphs(false);
    auto [qr_ref, tau_ref] = geqrf_once<T>(fresh, a);
    EXPECT_TRUE(same_bits(qr_once, qr_ref));
    EXPECT_TRUE(same_bits(tau_once, tau_ref));
    for (std::size_t i = 0; i < outs.size(); i += 2) {
      EXPECT_TRUE(same_bits(outs[i], qr_ref)) << "call " << i / 2 << ": factors differ";
      EXPECT_TRUE(same_bits(outs[i + 1], tau_ref)) << "call " << i / 2 << ": tau differs";
    }
  }));
}

TEST_P(CudaGraphReplay, HostMatricesNeverUseGraphs) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    ctx().set_cuda_graphs(true);
    Matrix<T> a = random_matrix<T>(300, 200, 5);
    Matrix<T> tau(200, 1);
    for (int call = 0; call < 3; ++call) {
      geqrf<T>(ctx(), a.view(), VectorView<T>(tau.data(), 200));
      a = random_matrix<T>(300, 200, 5);
    }
    const Context::GraphStats stats = ctx().graph_stats();
    EXPECT_EQ(stats.launches + stats.captures + stats.fallbacks, 0) << describe(stats);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, CudaGraphReplay, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
