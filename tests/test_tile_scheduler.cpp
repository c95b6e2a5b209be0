// The bucket scheduler (src/core/tile_scheduler.hpp) driving the CPU twin of its tasks
// (src/core/tile_engine_twin.hpp): the schedule ends with one triangular row tile per column
// bucket and every other row tile zero; the R it leaves matches LAPACK's up to row signs; Q R
// reproduces the input; a launch's tasks touch disjoint tiles, so their order does not change
// a bit; a batch of different sizes shares launches. Dense, wide, odd and staircase shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/error.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/tile_engine_twin.hpp"
#include "src/core/tile_scheduler.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

using detail::kTile;
using detail::TileEngineTwin;
using detail::TileScheduler;
using detail::TileSchedulerOptions;
using detail::TileTask;

template <class T>
double frob(const Matrix<T>& a) {
  double s = 0;
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) s += double(a(i, j)) * double(a(i, j));
  return std::sqrt(s);
}

/// No two tasks of a launch touch the same (matrix, row tile, column tile).
void expect_disjoint(const std::vector<TileTask>& tasks) {
  std::set<std::tuple<int, int, int>> seen;
  for (const TileTask& t : tasks) {
    const int c0 = t.kind == detail::TileTaskKind::factorize ? t.col : t.c0;
    const int c1 = t.kind == detail::TileTaskKind::factorize ? t.col + 1 : t.c1;
    std::vector<std::pair<int, int>> tiles;
    for (const int r : t.rows)
      for (int c = c0; c < c1; ++c) tiles.push_back({r, c});
    for (const int r : t.next_rows)  // the delta: rows the Factorize adds at column c0
      if (std::find(t.rows.begin(), t.rows.end(), r) == t.rows.end()) tiles.push_back({r, t.c0});
    for (auto [r, c] : tiles)
      EXPECT_TRUE(seen.insert({t.matrix, r, c}).second)
          << "matrix " << t.matrix << " tile (" << r << ", " << c << ") twice in a launch";
  }
}

/// Factors `a` (a copy) with the scheduler and the twin, checks the result against LAPACK and
/// Q R against a; returns the number of launches. `reverse`: run each launch's tasks backwards.
/// `lapack_r`: compare R with LAPACK's up to row signs (R's block rows then follow the column
/// blocks as LAPACK's do: every bucket ends with a full triangle); otherwise only
/// R^T R = A^T A, which holds whatever rows R's blocks sit in (a staircase may empty a bucket).
template <class T>
std::int64_t check_tile_qr(const Matrix<T>& a, std::vector<std::int32_t> leftmost,
                           TileSchedulerOptions opt, bool reverse = false, bool lapack_r = true) {
  const std::int64_t m = a.rows(), n = a.cols();
  const auto rt = static_cast<std::int32_t>((m + kTile - 1) / kTile);
  const auto ct = static_cast<std::int32_t>((n + kTile - 1) / kTile);
  Matrix<T> f = a.clone();
  std::vector<TileScheduler> s{TileScheduler(0, rt, ct, std::move(leftmost), opt)};
  TileEngineTwin<T> twin({f.view()});
  const std::int64_t launches = detail::run_tile_launches(s, [&](std::vector<TileTask>& tasks) {
    expect_disjoint(tasks);
    if (reverse) std::reverse(tasks.begin(), tasks.end());
    twin.run(tasks);
  });
  EXPECT_TRUE(s[0].done());
  const std::vector<std::int32_t> rrows = s[0].r_row_tiles();
  // R as LAPACK lays it out: block row j from row tile rrows[j]; every other row tile zero.
  const std::int64_t k = std::min(m, n);
  Matrix<T> r(k, n);
  std::vector<char> used(static_cast<std::size_t>(rt), 0);
  for (std::int32_t j = 0; j < ct && std::int64_t{j} * kTile < k; ++j) {
    const std::int32_t src = rrows[j];
    if (src < 0) continue;  // an empty bucket: that block row of R is zero
    used[src] = 1;
    const std::int64_t h = std::min<std::int64_t>(kTile, m - std::int64_t{src} * kTile);
    for (std::int64_t i = 0; i < h; ++i)
      for (std::int64_t c = 0; c < n; ++c) {
        const T x = f(std::int64_t{src} * kTile + i, c);
        const std::int64_t row = std::int64_t{j} * kTile + i;
        if (row < k && c >= row)
          r(row, c) = x;
        else
          EXPECT_EQ(x, T(0)) << "row tile " << src << " entry (" << i << ", " << c << ")";
      }
  }
  for (std::int32_t t = 0; t < rt; ++t) {
    if (used[t]) continue;
    for (std::int64_t i = std::int64_t{t} * kTile; i < std::min<std::int64_t>(m, (t + 1) * kTile);
         ++i)
      for (std::int64_t c = 0; c < n; ++c) EXPECT_EQ(f(i, c), T(0)) << "row " << i << " col " << c;
  }
  const double scale = frob(a) > 0 ? frob(a) : 1.0;
  const double tol = 30.0 * static_cast<double>(std::max(m, n)) * accuracy::eps<T>();
  if (lapack_r) {  // LAPACK's R on the same matrix: equal up to the sign of each row
    Context cpu = Context::cpu();
    Matrix<T> ref = a.clone(), tau(std::max<std::int64_t>(k, 1), 1);
    if (k > 0)
      kernels::cpu::geqrf<T>(cpu.impl(), ref.view(),
                             VectorView<T>(tau.data(), k, MemorySpace::host, 0));
    double worst = 0;
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t c = i; c < n; ++c)
        worst = std::max(worst, std::abs(std::abs(double(r(i, c))) - std::abs(double(ref(i, c)))));
    EXPECT_LT(worst / scale, tol) << "R differs from LAPACK's beyond signs";
  } else {  // F^T F = A^T A (F: the factored matrix, R's rows where the buckets left them)
    double worst = 0;
    for (std::int64_t c1 = 0; c1 < n; ++c1)
      for (std::int64_t c2 = 0; c2 <= c1; ++c2) {
        double ff = 0, aa = 0;
        for (std::int64_t i = 0; i < m; ++i) {
          ff += double(f(i, c1)) * double(f(i, c2));
          aa += double(a(i, c1)) * double(a(i, c2));
        }
        worst = std::max(worst, std::abs(ff - aa));
      }
    EXPECT_LT(worst / (scale * scale), tol) << "R^T R differs from A^T A";
  }
  // Q R = A.
  twin.multiply_by_q();
  double diff = 0;
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t i = 0; i < m; ++i) diff += std::pow(double(f(i, c)) - double(a(i, c)), 2);
  EXPECT_LT(std::sqrt(diff) / scale, tol) << "||A - QR|| / ||A||";
  return launches;
}

TEST(TileScheduler, DenseShapesMatchLapackAndReproduceA) {
  auto body = [&]<class T>() {
    std::uint64_t seed = 1500;
    for (auto [m, n] : {std::pair<int, int>{1, 1},
                        {32, 32},
                        {33, 31},
                        {100, 64},
                        {256, 160},
                        {500, 96},
                        {64, 300},
                        {97, 200},
                        {1000, 32},
                        {45, 77}}) {
      for (int variant = 0; variant < 3; ++variant) {
        TileSchedulerOptions opt;
        if (variant == 1) opt = {3, 1, true};
        if (variant == 2) opt = {4, 2, false};
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " variant " +
                     std::to_string(variant));
        const Matrix<T> a = random_matrix<T>(m, n, seed++);
        const auto rt = static_cast<std::int32_t>((m + kTile - 1) / kTile);
        check_tile_qr<T>(a, std::vector<std::int32_t>(rt, 0), opt);
      }
    }
  };
  body.template operator()<double>();
  body.template operator()<float>();
}

TEST(TileScheduler, PipeliningTakesFewerLaunches) {
  // The paper's Fig. 7/8 shape (256 x 160, bundles of 3) and a tall one: with Apply/Factorize
  // a bundle advances one bucket per launch.
  for (auto [m, n] : {std::pair<int, int>{256, 160}, {2048, 256}}) {
    const Matrix<double> a = random_matrix<double>(m, n, 1600 + m);
    const auto rt = static_cast<std::int32_t>(m / kTile), ct = static_cast<std::int32_t>(n / kTile);
    const std::int64_t plain =
        check_tile_qr<double>(a, std::vector<std::int32_t>(rt, 0), {3, 2, false});
    const std::int64_t piped =
        check_tile_qr<double>(a, std::vector<std::int32_t>(rt, 0), {3, 2, true});
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + ": " + std::to_string(plain) +
                 " launches plain, " + std::to_string(piped) + " pipelined");
    std::cout << "  " << m << " x " << n << ", bundles of 3: " << plain << " launches, " << piped
              << " with Apply/Factorize pipelining\n";
    EXPECT_LT(piped, plain);
    // One launch per bucket along the critical path, plus the reduction of a bucket's
    // triangles (a tree of bundles) at the start.
    EXPECT_LE(piped, 2 * ct + 2 * static_cast<std::int64_t>(std::ceil(std::log2(rt + 1.0))) + 2);
  }
}

TEST(TileScheduler, StaircaseFronts) {
  // Row tiles whose leftmost column tile grows (a sparse front's staircase), zeros to its left.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 12; ++trial) {
    const std::int32_t rt = 1 + static_cast<std::int32_t>(rng() % 12);
    const std::int32_t ct = 1 + static_cast<std::int32_t>(rng() % 6);
    const std::int64_t m = std::int64_t{rt} * kTile - static_cast<std::int64_t>(rng() % 20);
    const std::int64_t n = std::int64_t{ct} * kTile - static_cast<std::int64_t>(rng() % 20);
    std::vector<std::int32_t> leftmost(static_cast<std::size_t>(rt));
    std::int32_t at = 0;
    for (std::int32_t r = 0; r < rt; ++r) {
      if (rng() % 3 == 0 && at < ct - 1) ++at;
      leftmost[r] = at;
    }
    Matrix<double> a = random_matrix<double>(m, n, 1700 + trial);
    for (std::int32_t r = 0; r < rt; ++r)
      for (std::int64_t i = std::int64_t{r} * kTile; i < std::min<std::int64_t>(m, (r + 1) * kTile);
           ++i)
        for (std::int64_t c = 0; c < std::min<std::int64_t>(n, std::int64_t{leftmost[r]} * kTile);
             ++c)
          a(i, c) = 0;
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(m) + "x" +
                 std::to_string(n));
    check_tile_qr<double>(a, leftmost, {}, false, false);
  }
}

TEST(TileScheduler, TaskOrderWithinALaunchDoesNotMatter) {
  const Matrix<double> a = random_matrix<double>(300, 130, 1800);
  const auto rt = static_cast<std::int32_t>((300 + kTile - 1) / kTile);
  Matrix<double> f1 = a.clone(), f2 = a.clone();
  for (int pass = 0; pass < 2; ++pass) {
    Matrix<double>& f = pass == 0 ? f1 : f2;
    std::vector<TileScheduler> s{TileScheduler(0, rt, 5, std::vector<std::int32_t>(rt, 0))};
    TileEngineTwin<double> twin({f.view()});
    detail::run_tile_launches(s, [&](std::vector<TileTask>& tasks) {
      if (pass == 1) std::reverse(tasks.begin(), tasks.end());
      twin.run(tasks);
    });
  }
  for (std::int64_t c = 0; c < 130; ++c)
    for (std::int64_t i = 0; i < 300; ++i) ASSERT_EQ(f1(i, c), f2(i, c));
}

TEST(TileScheduler, ABatchOfMixedSizesSharesLaunches) {
  const std::vector<std::pair<int, int>> shapes{{40, 20}, {512, 128}, {96, 96}, {7, 3}, {300, 64}};
  std::vector<Matrix<double>> in, f;
  std::vector<TileScheduler> s;
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    in.push_back(random_matrix<double>(shapes[i].first, shapes[i].second, 1900 + i));
    f.push_back(in.back().clone());
    s.push_back(
        TileScheduler::dense(static_cast<std::int32_t>(i), shapes[i].first, shapes[i].second));
    std::vector<TileScheduler> alone{TileScheduler::dense(0, shapes[i].first, shapes[i].second)};
    longest = std::max(longest, detail::run_tile_launches(alone, [](std::vector<TileTask>&) {}));
  }
  std::vector<MatrixView<double>> views;
  for (auto& x : f) views.push_back(x.view());
  TileEngineTwin<double> twin(views);
  std::int64_t mixed_launches = 0;
  const std::int64_t launches = detail::run_tile_launches(s, [&](std::vector<TileTask>& tasks) {
    expect_disjoint(tasks);
    std::set<int> mats;
    for (const TileTask& t : tasks) mats.insert(t.matrix);
    mixed_launches += mats.size() > 1 ? 1 : 0;
    twin.run(tasks);
  });
  EXPECT_EQ(launches, longest) << "the batch takes as many launches as its slowest matrix";
  EXPECT_GT(mixed_launches, 1);
  twin.multiply_by_q();
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_TRUE(s[i].done());
    double diff = 0;
    for (std::int64_t c = 0; c < in[i].cols(); ++c)
      for (std::int64_t r = 0; r < in[i].rows(); ++r) diff += std::pow(f[i](r, c) - in[i](r, c), 2);
    EXPECT_LT(std::sqrt(diff) / frob(in[i]), 1e-13) << "matrix " << i;
  }
}

TEST(TileScheduler, BadInputIsAClearError) {
  EXPECT_THROW(TileScheduler(0, 3, 2, {0, 0}), InvalidArgument);  // sizes disagree
  EXPECT_THROW(TileScheduler(0, 2, 2, {0, 3}), InvalidArgument);  // beyond the columns
  EXPECT_THROW(TileScheduler(0, 2, 2, {0, -1}), InvalidArgument);
  EXPECT_THROW(TileScheduler(0, 2, 2, {0, 0}, {0, 1, true}), InvalidArgument);
  EXPECT_THROW(TileScheduler::dense(0, -1, 4), InvalidArgument);
  TileScheduler fresh = TileScheduler::dense(0, 64, 64);
  EXPECT_THROW(fresh.r_row_tiles(), InvalidArgument);  // not factored yet
}

}  // namespace
}  // namespace gpuqr::testing
