// Batched QR (gpuqr/batched.hpp), run for every backend and precision: every matrix of a
// batch is checked with the dense test ratios (backward error, orthogonality, Q^T A = R,
// least-squares optimality), on batches of equal and of mixed sizes that reach every route of
// the CUDA backend (register kernel, shared-memory kernel, dense fallback).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/batched_support.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

/// Mixed sizes: empty, 1, m < n, tall, small (register route), mid (shared memory), and
/// 300 x 300 (past shared memory in both precisions: the dense route).
const std::vector<BShape> kMixed = {
    {0, 0},   {0, 5},   {5, 0},   {1, 1},   {1, 7},    {7, 1},    {16, 16},  {8, 3},
    {33, 20}, {20, 33}, {64, 32}, {65, 33}, {100, 40}, {40, 100}, {31, 31},  {130, 70},
    {17, 9},  {64, 64}, {3, 2},   {48, 29}, {300, 300}, {96, 96}, {200, 150}};

class Batched : public BackendTest {};

TEST_P(Batched, GeqrfVariableSizes) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    HostBatch<T> host = make_batch<T>(kMixed, 101, 2);
    CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
    geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                      dev.tau_ptrs.data(), dev.count());
    check_factors<T>(ctx(), host, dev, kBound);
  }));
}

TEST_P(Batched, GeqrfStridedAndPointerArray) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (const BShape s : {BShape{16, 16}, BShape{32, 32}, BShape{64, 16}, BShape{40, 40},
                           BShape{9, 5}, BShape{5, 9}, BShape{12, 30}, BShape{150, 60}}) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
      const std::int64_t count = 37;
      const std::vector<BShape> shapes(count, s);
      HostBatch<T> host = make_batch<T>(shapes, 7 + s.m * 100 + s.n, 3);
      // One strided allocation: ld = m + 3, stride = ld * n + 5, padding poisoned.
      StridedBatch<T> strided = to_strided<T>(ctx(), host, 3, 5);
      geqrf_strided_batched<T>(ctx(), s.m, s.n, strided.data.data(), strided.ld, strided.stride,
                               strided.tau.data(), strided.tau_stride, count);
      CtxBatch<T> back = from_strided<T>(ctx(), strided, host);
      check_factors<T>(ctx(), host, back, kBound);
      // The pointer-array form of the same batch.
      CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
      geqrf_batched<T>(ctx(), s.m, s.n, dev.a_ptrs.data(), dev.ld[0], dev.tau_ptrs.data(),
                       count);
      check_factors<T>(ctx(), host, dev, kBound);
    }
  }));
}

TEST_P(Batched, OrmqrGivesRAndRoundTrips) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    HostBatch<T> host = make_batch<T>(kMixed, 303, 0);
    CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
    geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                      dev.tau_ptrs.data(), dev.count());
    // C = A: Q^T A must be [R; 0]; then Q (Q^T A) must be A again.
    CtxBatch<T> c = to_ctx_batch<T>(ctx(), host);
    std::vector<std::int64_t> k(host.shapes.size());
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::min(host.shapes[i].m, host.shapes[i].n);
    ormqr_vbatched<T>(ctx(), Op::trans, dev.m.data(), dev.n.data(), k.data(),
                      dev.const_a_ptrs().data(), dev.ld.data(), dev.const_tau_ptrs().data(),
                      c.a_ptrs.data(), c.ld.data(), dev.count());
    check_qta_is_r<T>(ctx(), host, dev, c, kBound);
    ormqr_vbatched<T>(ctx(), Op::no_trans, dev.m.data(), dev.n.data(), k.data(),
                      dev.const_a_ptrs().data(), dev.ld.data(), dev.const_tau_ptrs().data(),
                      c.a_ptrs.data(), c.ld.data(), dev.count());
    check_round_trip<T>(ctx(), host, c, kBound);
  }));
}

TEST_P(Batched, GelsOptimality) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::vector<BShape> shapes = {{1, 1},   {10, 3},  {40, 40}, {50, 20}, {64, 32},
                                        {65, 33}, {7, 0},   {0, 0},   {120, 100}, {300, 250},
                                        {33, 1},  {16, 16}, {96, 60}};
    HostBatch<T> a = make_batch<T>(shapes, 505, 1);
    std::vector<BShape> rhs_shapes;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      rhs_shapes.push_back({shapes[i].m, static_cast<std::int64_t>(1 + i % 3)});
    HostBatch<T> b = make_batch<T>(rhs_shapes, 606, 0);
    CtxBatch<T> da = to_ctx_batch<T>(ctx(), a), db = to_ctx_batch<T>(ctx(), b);
    gels_vbatched<T>(ctx(), da.m.data(), da.n.data(), db.n.data(), da.a_ptrs.data(),
                     da.ld.data(), db.a_ptrs.data(), db.ld.data(), da.count());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::int64_t m = shapes[i].m, n = shapes[i].n, nrhs = rhs_shapes[i].n;
      if (n == 0) continue;
      SCOPED_TRACE("matrix " + std::to_string(i));
      Matrix<T> bx = to_host(ctx(), db.mats[i]);
      Matrix<T> x = Matrix<T>::copy_of(MatrixView<const T>(bx.data(), n, nrhs, bx.ld()));
      EXPECT_LT(track("lstsq optimality", accuracy::lstsq_optimality_ratio<T>(
                                              a.mats[i].view(), x.view(), b.mats[i].view())),
                kBound);
      if (m == n) {  // square: the residual itself is small
        for (std::int64_t j = 0; j < nrhs; ++j) {
          const double res = accuracy::residual_norm<T>(a.mats[i].view(), x.view().col(j),
                                                        b.mats[i].view().col(j));
          EXPECT_LT(res, 1e3 * std::sqrt(accuracy::eps<T>()) * (1 + accuracy::norm1<T>(
                                                                     b.mats[i].view())));
        }
      }
    }
  }));
}

TEST_P(Batched, OrgqrWithFewerReflectors) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // n > k: the columns past k come from the identity (k = 0: Q is the identity's columns).
    const std::vector<BShape> shapes = {{20, 10}, {70, 50}, {9, 9}, {5, 3}, {260, 40}};
    const std::vector<std::int64_t> ks = {4, 20, 0, 3, 40};
    HostBatch<T> host = make_batch<T>(shapes, 909, 0);
    CtxBatch<T> dev = to_ctx_batch<T>(ctx(), host);
    // Factor with tau sized n; orgqr then uses only the first k reflectors.
    geqrf_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                      dev.tau_ptrs.data(), dev.count());
    orgqr_vbatched<T>(ctx(), dev.m.data(), dev.n.data(), ks.data(), dev.a_ptrs.data(),
                      dev.ld.data(), dev.const_tau_ptrs().data(), dev.count());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE("matrix " + std::to_string(i));
      Matrix<T> q = to_host(ctx(), dev.mats[i]);
      EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(q.view())), kBound);
      if (ks[i] == 0) {
        for (std::int64_t j = 0; j < shapes[i].n; ++j)
          for (std::int64_t r = 0; r < shapes[i].m; ++r) ASSERT_EQ(q(r, j), T(r == j ? 1 : 0));
      }
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, Batched, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
