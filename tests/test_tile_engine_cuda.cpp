// The tile engine on the device (src/cuda/tile_engine.cu) against its CPU twin
// (src/core/tile_engine_twin.hpp), launch by launch, and the invariants of its result; the host
// side (dry run, task packing) on the CPU. Both the kernel and the twin are Householder QR with
// LAPACK's sign convention, so entries agree to rounding after every launch on well-conditioned
// inputs; graded and rank-deficient matrices are checked through invariants only (R^T R =
// A^T A, |diag R| against LAPACK's, Q R = A with Q applied back on the device).
// TileEnginePack runs in CI; TileEngineCuda skips with a message without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/error.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/tile_engine.hpp"
#include "src/core/tile_engine_twin.hpp"
#include "src/core/tile_scheduler.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

using detail::kTile;
using detail::TileScheduler;
using detail::TileSchedulerOptions;
using detail::TileTask;
using detail::TileTaskDesc;
using detail::TileTaskKind;

std::int32_t tiles(std::int64_t x) { return static_cast<std::int32_t>((x + kTile - 1) / kTile); }

template <class T>
double frob(const Matrix<T>& a) {
  double s = 0;
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) s += double(a(i, j)) * double(a(i, j));
  return std::sqrt(s);
}

/// A staircase (a sparse front's shape): row tiles' leftmost column tiles non-decreasing,
/// zeros to their left in `a`.
template <class T>
std::vector<std::int32_t> make_staircase(Matrix<T>& a, std::mt19937_64& rng) {
  const std::int32_t rt = tiles(a.rows()), ct = tiles(a.cols());
  std::vector<std::int32_t> left(static_cast<std::size_t>(rt));
  std::int32_t at = 0;
  for (std::int32_t r = 0; r < rt; ++r) {
    if (rng() % 3 == 0 && at < ct - 1) ++at;
    left[r] = at;
    for (std::int64_t i = std::int64_t{r} * kTile; i < std::min<std::int64_t>(a.rows(), (r + 1) * kTile);
         ++i)
      for (std::int64_t c = 0; c < std::min<std::int64_t>(a.cols(), std::int64_t{at} * kTile); ++c)
        a(i, c) = T(0);
  }
  return left;
}

// ---- host side (CI) ----------------------------------------------------------------------

std::vector<TileScheduler> mixed_schedulers(TileSchedulerOptions opt) {
  std::vector<TileScheduler> s;
  s.push_back(TileScheduler::dense(0, 100, 64, opt));
  s.push_back(TileScheduler::dense(1, 257, 130, opt));
  s.push_back(TileScheduler(2, 6, 4, {0, 0, 1, 1, 2, 3}, opt));  // a staircase
  s.push_back(TileScheduler::dense(3, 37, 29, opt));
  s.push_back(TileScheduler::dense(4, 64, 300, opt));
  return s;
}

TEST(TileEnginePack, DryRunSizesTheRunAndSlotsAreEachFactorizedOnce) {
  for (const TileSchedulerOptions opt :
       {TileSchedulerOptions{}, TileSchedulerOptions{3, 1, true}, TileSchedulerOptions{8, 2, false}}) {
    std::vector<TileScheduler> s = mixed_schedulers(opt);
    const detail::TilePlan plan = detail::plan_tile_engine(s);
    ASSERT_EQ(plan.slot_base.size(), s.size());
    EXPECT_EQ(plan.slot_base[0], 0);
    std::vector<int> made(static_cast<std::size_t>(plan.slots), 0);
    std::int64_t max_tasks = 0, total = 0;
    std::int32_t max_bundle = 1;
    const std::int64_t launches = detail::run_tile_launches(s, [&](std::vector<TileTask>& tasks) {
      std::vector<TileTaskDesc> d;
      detail::pack_tile_tasks(tasks, plan.slot_base, d);
      ASSERT_EQ(d.size(), tasks.size());
      max_tasks = std::max<std::int64_t>(max_tasks, static_cast<std::int64_t>(tasks.size()));
      total += static_cast<std::int64_t>(tasks.size());
      for (std::size_t i = 0; i < d.size(); ++i) {
        const TileTask& t = tasks[i];
        EXPECT_EQ(d[i].kind, static_cast<int>(t.kind));
        EXPECT_EQ(d[i].matrix, t.matrix);
        EXPECT_EQ(d[i].slot, plan.slot_base[t.matrix] + t.bundle);
        EXPECT_EQ(d[i].col, t.col);
        ASSERT_EQ(d[i].nrows, static_cast<int>(t.rows.size()));
        for (std::size_t r = 0; r < t.rows.size(); ++r) EXPECT_EQ(d[i].rows[r], t.rows[r]);
        max_bundle = std::max({max_bundle, static_cast<std::int32_t>(t.rows.size()),
                               static_cast<std::int32_t>(t.next_rows.size())});
        if (t.kind == TileTaskKind::factorize) {
          EXPECT_EQ(d[i].c0, t.col);
          EXPECT_EQ(d[i].c1, t.col + 1);
          ++made[static_cast<std::size_t>(d[i].slot)];
        } else {
          EXPECT_EQ(d[i].c0, t.c0);
          EXPECT_EQ(d[i].c1, t.c1);
        }
        if (t.kind == TileTaskKind::apply_factorize) {
          EXPECT_EQ(d[i].next_slot, plan.slot_base[t.matrix] + t.next_bundle);
          ASSERT_EQ(d[i].next_nrows, static_cast<int>(t.next_rows.size()));
          for (std::size_t r = 0; r < t.next_rows.size(); ++r)
            EXPECT_EQ(d[i].next_rows[r], t.next_rows[r]);
          ++made[static_cast<std::size_t>(d[i].next_slot)];
        }
      }
    });
    EXPECT_EQ(launches, plan.launches);
    EXPECT_EQ(max_tasks, plan.max_tasks);
    EXPECT_EQ(total, plan.total_tasks);
    EXPECT_EQ(max_bundle, plan.max_bundle);
    EXPECT_LE(plan.max_bundle, opt.bundle);
    for (std::size_t i = 0; i < made.size(); ++i) EXPECT_EQ(made[i], 1) << "slot " << i;
  }
}

TEST(TileEnginePack, BadTasksAreAClearError) {
  const std::vector<std::int64_t> base{0, 10};
  auto pack = [&](const TileTask& t) {
    std::vector<TileTaskDesc> d;
    detail::pack_tile_tasks({t}, base, d);
  };
  TileTask t;
  t.bundle = 0;
  t.rows = {0, 1, 2};
  EXPECT_NO_THROW(pack(t));
  t.rows = std::vector<std::int32_t>(detail::kMaxTileBundle + 1);
  for (int i = 0; i <= detail::kMaxTileBundle; ++i) t.rows[i] = i;
  EXPECT_THROW(pack(t), InvalidArgument);  // too big a bundle for the device
  t.rows = {2, 1};
  EXPECT_THROW(pack(t), InvalidArgument);  // not ascending
  t.rows = {};
  EXPECT_THROW(pack(t), InvalidArgument);
  t.rows = {0};
  t.matrix = 2;
  EXPECT_THROW(pack(t), InvalidArgument);  // no such matrix
  t.matrix = 1;
  t.bundle = -1;
  EXPECT_THROW(pack(t), InvalidArgument);
  t.bundle = 0;
  t.kind = TileTaskKind::apply;
  t.col = 2;
  t.c0 = 2;
  t.c1 = 3;
  EXPECT_THROW(pack(t), InvalidArgument);  // an Apply on its own column
  t.kind = TileTaskKind::apply_factorize;
  t.c0 = 3;
  t.next_bundle = 1;
  t.next_rows = {};
  EXPECT_THROW(pack(t), InvalidArgument);  // no next bundle rows
  t.next_rows = {0};
  EXPECT_NO_THROW(pack(t));
}

// ---- device ------------------------------------------------------------------------------

class TileEngineCuda : public BackendTest {};

template <class T>
struct EngineBatch {
  std::vector<Matrix<T>> host, dev;
  std::vector<detail::TileMatrix<T>> mats;
  void add(const Context& gpu, const Matrix<T>& a) {
    host.push_back(a.clone());
    dev.push_back(device_copy(gpu, a));
    mats.push_back({dev.back().data(), dev.back().ld(), static_cast<std::int32_t>(a.rows()),
                    static_cast<std::int32_t>(a.cols())});
  }
};

TEST_P(TileEngineCuda, MatchesTheTwinLaunchByLaunch) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const double eps = accuracy::eps<T>();
    const std::vector<std::pair<int, int>> shapes{{37, 29}, {100, 64}, {257, 130}, {64, 300},
                                                  {1, 1},   {31, 40},  {300, 32}};
    for (const TileSchedulerOptions opt :
         {TileSchedulerOptions{}, TileSchedulerOptions{3, 1, true},
          TileSchedulerOptions{4, 2, false}, TileSchedulerOptions{8, 3, true},
          TileSchedulerOptions{2, 1, true}}) {
      SCOPED_TRACE("bundle " + std::to_string(opt.bundle) + ", apply_cols " +
                   std::to_string(opt.apply_cols) + (opt.pipeline ? ", pipelined" : ""));
      EngineBatch<T> batch;
      std::vector<Matrix<T>> input;
      std::vector<TileScheduler> s;
      std::mt19937_64 rng(2100 + opt.bundle);
      std::uint64_t seed = 2000;
      for (auto [m, n] : shapes) {
        const auto id = static_cast<std::int32_t>(input.size());
        input.push_back(random_matrix<T>(m, n, seed++));
        s.push_back(TileScheduler::dense(id, m, n, opt));
      }
      for (auto [m, n] : {std::pair<int, int>{250, 150}, {200, 70}}) {  // staircases
        Matrix<T> a = random_matrix<T>(m, n, seed++);
        std::vector<std::int32_t> left = make_staircase(a, rng);
        s.emplace_back(static_cast<std::int32_t>(input.size()), tiles(m), tiles(n), left, opt);
        input.push_back(std::move(a));
      }
      for (const Matrix<T>& a : input) batch.add(ctx(), a);
      std::vector<MatrixView<T>> views;
      for (Matrix<T>& h : batch.host) views.push_back(h.view());
      detail::TileEngineTwin<T> twin(views);
      double worst = 0;
      detail::TileFactors<T> factors;
      kernels::cuda::tile_qr<T>(
          ctx().impl(), batch.mats, s, factors, [&](std::int64_t k, const std::vector<TileTask>& tasks) {
            twin.run(tasks);
            for (std::size_t i = 0; i < input.size(); ++i) {
              const Matrix<T> got = to_host(ctx(), batch.dev[i]);
              double diff = 0;
              for (std::int64_t c = 0; c < got.cols(); ++c)
                for (std::int64_t r = 0; r < got.rows(); ++r)
                  diff = std::max(diff, std::abs(double(got(r, c)) - double(batch.host[i](r, c))));
              const double ratio = diff / (frob(input[i]) * eps);
              worst = std::max(worst, ratio);
              EXPECT_LT(ratio, 200.0) << "matrix " << i << " after launch " << k;
            }
          });
      for (const TileScheduler& x : s) EXPECT_TRUE(x.done());
      std::cout << "  bundle " << opt.bundle << ": worst |GPU - twin| = " << worst
                << " eps ||A||\n";
      // Both undo their factorizations: Q R = A, and the two agree.
      kernels::cuda::tile_multiply_by_q<T>(ctx().impl(), batch.mats, factors, opt.apply_cols);
      twin.multiply_by_q();
      for (std::size_t i = 0; i < input.size(); ++i) {
        const Matrix<T> got = to_host(ctx(), batch.dev[i]);
        double diff = 0;
        for (std::int64_t c = 0; c < got.cols(); ++c)
          for (std::int64_t r = 0; r < got.rows(); ++r)
            diff += std::pow(double(got(r, c)) - double(input[i](r, c)), 2);
        const double backward = std::sqrt(diff) /
                                (frob(input[i]) * std::max(got.rows(), got.cols()) * eps);
        EXPECT_LT(backward, 10.0) << "||A - QR|| of matrix " << i;
      }
    }
  }));
}

/// Runs the engine on one matrix and checks its result against invariants only.
/// `diag_rel_col`: compare |diag R| with LAPACK's relative to each column's norm (graded
/// columns, full rank); otherwise relative to ||A||.
template <class T>
void check_invariants(const Context& gpu, const Matrix<T>& a, TileSchedulerOptions opt,
                      bool diag_rel_col) {
  const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  const double eps = accuracy::eps<T>(), na = frob(a);
  EngineBatch<T> batch;
  batch.add(gpu, a);
  std::vector<TileScheduler> s{TileScheduler::dense(0, m, n, opt)};
  detail::TileFactors<T> factors;
  kernels::cuda::tile_qr<T>(gpu.impl(), batch.mats, s, factors, {});
  ASSERT_TRUE(s[0].done());
  const Matrix<T> f = to_host(gpu, batch.dev[0]);
  // R as LAPACK lays it out: block row j in row tile rr[j]; every other entry exactly zero.
  const std::vector<std::int32_t> rr = s[0].r_row_tiles();
  Matrix<T> r(k, n);
  std::vector<char> used(static_cast<std::size_t>(tiles(m)), 0);
  std::int64_t nonzero_outside = 0;
  for (std::int32_t j = 0; j < tiles(n) && std::int64_t{j} * kTile < k; ++j) {
    ASSERT_GE(rr[j], 0);
    used[rr[j]] = 1;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(kTile, m - std::int64_t{rr[j]} * kTile); ++i)
      for (std::int64_t c = 0; c < n; ++c) {
        const T x = f(std::int64_t{rr[j]} * kTile + i, c);
        const std::int64_t row = std::int64_t{j} * kTile + i;
        if (row < k && c >= row) r(row, c) = x;
        else nonzero_outside += x != T(0);
      }
  }
  for (std::int32_t t = 0; t < tiles(m); ++t)
    if (!used[t])
      for (std::int64_t i = std::int64_t{t} * kTile; i < std::min<std::int64_t>(m, (t + 1) * kTile); ++i)
        for (std::int64_t c = 0; c < n; ++c) nonzero_outside += f(i, c) != T(0);
  EXPECT_EQ(nonzero_outside, 0) << "entries outside R's triangle";
  // R^T R = A^T A (F^T F, F the factored matrix: R's rows wherever they are).
  double gram = 0;
  for (std::int64_t c1 = 0; c1 < n; ++c1)
    for (std::int64_t c2 = 0; c2 <= c1; ++c2) {
      double ff = 0, aa = 0;
      for (std::int64_t i = 0; i < m; ++i) {
        ff += double(f(i, c1)) * double(f(i, c2));
        aa += double(a(i, c1)) * double(a(i, c2));
      }
      gram = std::max(gram, std::abs(ff - aa));
    }
  EXPECT_LT(gram / (na * na * std::max(m, n) * eps), 10.0) << "R^T R vs A^T A";
  // |diag R| against LAPACK's.
  Context cpu = Context::cpu();
  Matrix<T> ref = a.clone(), tau(std::max<std::int64_t>(k, 1), 1);
  kernels::cpu::geqrf<T>(cpu.impl(), ref.view(), VectorView<T>(tau.data(), k, MemorySpace::host, 0));
  double worst = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    double col = 0;
    for (std::int64_t x = 0; x < m; ++x) col += double(a(x, i)) * double(a(x, i));
    const double unit = diag_rel_col ? std::sqrt(col) : na;
    worst = std::max(worst, std::abs(std::abs(double(r(i, i))) - std::abs(double(ref(i, i)))) /
                                (unit * std::max(m, n) * eps));
  }
  EXPECT_LT(worst, 10.0) << "|diag R| vs LAPACK's";
  // Q R = A, Q applied back on the device.
  kernels::cuda::tile_multiply_by_q<T>(gpu.impl(), batch.mats, factors, opt.apply_cols);
  const Matrix<T> qr = to_host(gpu, batch.dev[0]);
  double diff = 0;
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t i = 0; i < m; ++i) diff += std::pow(double(qr(i, c)) - double(a(i, c)), 2);
  EXPECT_LT(std::sqrt(diff) / (na * std::max(m, n) * eps), 10.0) << "||A - QR||";
}

TEST_P(TileEngineCuda, GradedRankDeficientAndWideKeepTheInvariants) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (const TileSchedulerOptions opt : {TileSchedulerOptions{}, TileSchedulerOptions{8, 2, true}}) {
      {
        SCOPED_TRACE("random 257 x 130");
        check_invariants<T>(ctx(), random_matrix<T>(257, 130, 2200), opt, false);
      }
      for (const bool up : {true, false}) {  // columns scaled 1e-8 .. 1e8 (or back)
        SCOPED_TRACE(up ? "graded up" : "graded down");
        Matrix<T> a = random_matrix<T>(300, 96, 2201);
        for (std::int64_t c = 0; c < 96; ++c) {
          const double e = -8.0 + 16.0 * double(up ? c : 95 - c) / 95.0;
          for (std::int64_t i = 0; i < 300; ++i) a(i, c) = T(double(a(i, c)) * std::pow(10.0, e));
        }
        check_invariants<T>(ctx(), a, opt, true);
      }
      {
        SCOPED_TRACE("rank 20 of 200 x 90");
        const Matrix<T> x = random_matrix<T>(200, 20, 2202), y = random_matrix<T>(20, 90, 2203);
        Matrix<T> a(200, 90);
        for (std::int64_t c = 0; c < 90; ++c)
          for (std::int64_t i = 0; i < 200; ++i) {
            double s = 0;
            for (std::int64_t q = 0; q < 20; ++q) s += double(x(i, q)) * double(y(q, c));
            a(i, c) = T(s);
          }
        check_invariants<T>(ctx(), a, opt, false);
      }
      {
        SCOPED_TRACE("wide 70 x 200");
        check_invariants<T>(ctx(), random_matrix<T>(70, 200, 2204), opt, false);
      }
    }
  }));
}

// Sized for compute-sanitizer (memcheck, racecheck): a few launches of the task kernel, plain
// and pipelined bundles, tall and wide, checked by the same invariants.
TEST_P(TileEngineCuda, SanitizerSizedRuns) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (const TileSchedulerOptions opt :
         {TileSchedulerOptions{}, TileSchedulerOptions{3, 1, true}}) {
      SCOPED_TRACE("bundle " + std::to_string(opt.bundle));
      check_invariants<T>(ctx(), random_matrix<T>(100, 70, 2400), opt, false);
      check_invariants<T>(ctx(), random_matrix<T>(40, 96, 2401), opt, false);
    }
  }));
}

TEST_P(TileEngineCuda, BadInputIsAClearError) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    EngineBatch<T> batch;
    batch.add(ctx(), random_matrix<T>(64, 64, 2300));
    detail::TileFactors<T> factors;
    std::vector<TileScheduler> none;
    EXPECT_THROW(kernels::cuda::tile_qr<T>(ctx().impl(), batch.mats, none, factors, {}),
                 InvalidArgument);
    std::vector<TileScheduler> wrong{TileScheduler::dense(0, 96, 64)};
    EXPECT_THROW(kernels::cuda::tile_qr<T>(ctx().impl(), batch.mats, wrong, factors, {}),
                 InvalidArgument);
    std::vector<TileScheduler> big{TileScheduler::dense(0, 64, 64, {9, 2, true})};
    EXPECT_NO_THROW(kernels::cuda::tile_qr<T>(ctx().impl(), batch.mats, big, factors, {}));
    EngineBatch<T> tall;
    tall.add(ctx(), random_matrix<T>(288, 32, 2301));  // one bundle of 9 row tiles
    std::vector<TileScheduler> too_big{TileScheduler::dense(0, 288, 32, {9, 2, true})};
    EXPECT_THROW(kernels::cuda::tile_qr<T>(ctx().impl(), tall.mats, too_big, factors, {}),
                 InvalidArgument);
  }));
}

INSTANTIATE_TEST_SUITE_P(Cuda, TileEngineCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
