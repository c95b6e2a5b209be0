// The sparse QR's stage-arena driver (src/core/sparse_qr_device.hpp) against the CPU twin, on
// both backends: on the CPU (the driver forced onto a host arena with the CPU twins of the
// leaves, so CI checks its bookkeeping) and on a CUDA device (skipped with a message without
// one). Every run is checked on its own numbers (R's backward error, the least-squares
// optimality of its solutions) and against the twin's factorization of the same matrix (rank,
// zero pivots, nnz(R), R and solutions within rounding); forced staging must not change the
// result; a pivot at the rank-detection tolerance falls back to the twin, which says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpuqr/sparse_qr.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_qr_detail.hpp"
#include "src/core/sparse_stages.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;
using gpuqr::testing::BackendTest;
using gpuqr::InvalidArgument;
using gpuqr::SparseAnalysis;
using gpuqr::SparsePlacement;

/// Forces the arena driver onto the CPU for one scope (a CPU context otherwise takes the twin).
class ArenaOnCpu {
 public:
  explicit ArenaOnCpu(bool on) : was_(gpuqr::detail::sparse_arena_on_cpu().exchange(on)) {}
  ~ArenaOnCpu() { gpuqr::detail::sparse_arena_on_cpu() = was_; }

 private:
  bool was_;
};

/// Sets an environment variable for one scope (the driver's tuning knobs).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};


/// Row i's sign in R: that of its diagonal (1 for a zero diagonal). R is unique up to these
/// signs only: a reflector of a column whose part below the diagonal is exactly zero in one
/// computation and rounding noise in another is the identity (tau = 0, the sign kept) in the
/// first and flips the sign in the second (LAPACK's larfg).
template <class T>
std::vector<double> row_signs(const CscMatrix<T>& r) {
  std::vector<double> s(static_cast<std::size_t>(r.cols), 1.0);
  for (I j = 0; j < r.cols; ++j)
    if (r.col_ptr[j + 1] > r.col_ptr[j] && r.row_indices[r.col_ptr[j + 1] - 1] == j &&
        r.values[r.col_ptr[j + 1] - 1] < 0)
      s[j] = -1.0;
  return s;
}

/// ||S1 R1 - S0 R0||_F / ||R0||_F (S: row_signs) on the union of the two patterns.
template <class T>
double r_difference(const SparseQR<T>& r0q, const SparseQR<T>& r1q) {
  const CscMatrix<T> r0 = r0q.r(), r1 = r1q.r();
  const std::vector<double> s0 = row_signs(r0), s1 = row_signs(r1);
  Matrix<double> d0 = to_double(r0.to_dense()), d1 = to_double(r1.to_dense());
  double diff = 0, norm = 0;
  for (I j = 0; j < d0.cols(); ++j)
    for (I i = 0; i < d0.rows(); ++i) {
      const double x0 = s0[i] * d0(i, j), x1 = s1[i] * d1(i, j);
      diff += (x1 - x0) * (x1 - x0);
      norm += x0 * x0;
    }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// C = Q^T B of two factorizations of a full-rank A: its R rows (the first n) up to R's row
/// signs, and the norm of each column's remaining rows (the residual; the basis of those rows
/// depends on the reflectors' signs too). Relative to ||C||_F.
template <class T>
double c_difference(const SparseQR<T>& q0, const Matrix<T>& c0, const SparseQR<T>& q1,
                    const Matrix<T>& c1) {
  const std::vector<double> s0 = row_signs(q0.r()), s1 = row_signs(q1.r());
  const I n = q0.cols();
  double diff = 0, norm = 0;
  for (I j = 0; j < c0.cols(); ++j) {
    double t0 = 0, t1 = 0;
    for (I i = 0; i < c0.rows(); ++i) {
      const double x0 = c0(i, j), x1 = c1(i, j);
      norm += x0 * x0;
      if (i < n) {
        diff += (s1[i] * x1 - s0[i] * x0) * (s1[i] * x1 - s0[i] * x0);
      } else {
        t0 += x0 * x0;
        t1 += x1 * x1;
      }
    }
    diff += (std::sqrt(t1) - std::sqrt(t0)) * (std::sqrt(t1) - std::sqrt(t0));
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

class SparseArena : public BackendTest {
 protected:
  /// Options that put the numeric factorization on this test's backend's arena.
  SparseQROptions arena_options(SparseQROptions opt) {
    opt.context = ctx();
    opt.placement = SparsePlacement::device;  // small test problems too
    return opt;
  }
  bool on_cpu() { return !ctx().is_cuda(); }

  /// Factors `a` with the twin and on the arena; checks the arena's result on its own and
  /// against the twin's. Returns whether the arena run fell back.
  template <class T>
  bool compare_with_twin(const CscMatrix<T>& a, SparseQROptions opt, const std::string& what) {
    SCOPED_TRACE(what);
    ArenaOnCpu force(on_cpu());
    const SparseQR<T> twin = [&] {
      ArenaOnCpu off(false);
      return SparseQR<T>(a, opt);
    }();
    const SparseQR<T> dev(a, arena_options(opt));
    const bool fell_back = !dev.factor_stats().fallback.empty();
    if (fell_back) {
      EXPECT_EQ(dev.factor_stats().ran_on, "cpu");
      EXPECT_GE(opt.tolerance, -2.0);  // only rank detection falls back
      EXPECT_LT(twin.rank(), a.cols) << "fell back without a dead column on the CPU";
    } else {
      EXPECT_EQ(dev.factor_stats().ran_on, to_string(ctx().backend()));
    }
    EXPECT_EQ(dev.rank(), twin.rank());
    EXPECT_EQ(dev.zero_pivots(), twin.zero_pivots());
    EXPECT_EQ(dev.factor_stats().stages, twin.factor_stats().stages);
    EXPECT_EQ(dev.factor_stats().launches, twin.factor_stats().launches);
    if (twin.zero_pivots().empty()) {
      // Entries inside R's structure that cancel to exactly zero in one computation and to
      // rounding noise in the other are not stored / stored: a few may differ.
      EXPECT_NEAR(static_cast<double>(dev.nnz_r()), static_cast<double>(twin.nnz_r()),
                  std::max(2.0, 0.01 * static_cast<double>(twin.nnz_r())));
      // R is unique up to rounding (LAPACK's sign convention on both sides) for a full-rank
      // A; its perturbation is within eps times A's condition (grid and corpus: modest).
      const double cond_guard = 1.0 / std::max(twin.rcond_estimate(), 1e-30);
      EXPECT_LT(r_difference(twin, dev),
                1e3 * gpuqr::accuracy::eps<T>() * std::max(1.0, std::min(cond_guard, 1e6)))
          << "R differs from the twin's";
      EXPECT_LT(rtr_ratio(a, dev), 30.0);
      if (a.rows >= a.cols && opt.keep_householder) {
        const Matrix<T> b = random_dense<T>(a.rows, 2, 5);
        const Matrix<T> x = dev.solve(b.view());
        std::vector<double> xs(a.cols), bs(a.rows);
        for (I i = 0; i < a.cols; ++i) xs[i] = x(i, 1);
        for (I i = 0; i < a.rows; ++i) bs[i] = b(i, 1);
        EXPECT_LT(sparse_optimality_ratio(a, xs, bs), 30.0);
      }
    }
    return fell_back;
  }

  template <class T>
  void corpus() {
    int ran = 0, fell = 0;
    for (const auto& [name, a0] : gpuqr::testing::sparse_corpus()) {
      if (a0.cols == 0 || a0.nnz() == 0) continue;
      const CscMatrix<T> a = a0.template cast<T>();
      for (const double tol : {-1.0, -2.0}) {
        SparseQROptions opt = any_ordering();
        opt.tolerance = tol;
        const bool f = compare_with_twin(a, opt, name + " tol " + std::to_string(tol));
        fell += f ? 1 : 0;
        ran += f ? 0 : 1;
      }
    }
    EXPECT_GT(ran, 20) << "too few corpus runs stayed on the arena";
    EXPECT_GT(fell, 0) << "the corpus' rank-deficient matrices should fall back";
  }

  template <class T>
  void grid_both_routes() {
    const CscMatrix<T> a = grid_gradient<T>(20);
    SparseQROptions opt = any_ordering();
    EXPECT_FALSE(compare_with_twin(a, opt, "grid 20, default routes"));
    {  // every front by the blocked dense QR on its staircase, in blocks of 8 columns
      ScopedEnv dense("GPUQR_SPARSE_DENSE_MIN", "1");
      ScopedEnv block("GPUQR_SPARSE_BLOCK", "8");
      ArenaOnCpu force(on_cpu());
      const SparseQR<T> dev(a, arena_options(opt));
      EXPECT_EQ(dev.factor_stats().batched_fronts, 0);
      EXPECT_GT(dev.factor_stats().dense_fronts, 0);
      EXPECT_FALSE(compare_with_twin(a, opt, "grid 20, all dense"));
    }
    {  // Q-less with host slots so small that most launches wait for the full-size ones, and
       // R's rows taken a few rows per piece (several pieces per front)
      ScopedEnv slot("GPUQR_SPARSE_SMALL_SLOT", "64");
      ScopedEnv piece("GPUQR_SPARSE_PIECE", "100");
      SparseQROptions qless = opt;
      qless.keep_householder = false;
      EXPECT_FALSE(compare_with_twin(a, qless, "grid 20, Q-less, small slots, small pieces"));
    }
    {  // every front by the batched QR
      ScopedEnv dense("GPUQR_SPARSE_DENSE_MIN", "1000000");
      ArenaOnCpu force(on_cpu());
      const SparseQR<T> dev(a, arena_options(opt));
      EXPECT_EQ(dev.factor_stats().dense_fronts, 0);
      EXPECT_GT(dev.factor_stats().batched_fronts, 0);
      EXPECT_FALSE(compare_with_twin(a, opt, "grid 20, all batched"));
    }
  }

  /// Kept reflectors of fronts with several reflector blocks: a random sparse A fills in to a
  /// root front of some 200 columns, whose blocks the copy cuts into several items (on the
  /// CPU arena a block taller than 32 rows is its own item) spread over the copier threads.
  /// Their solutions and Q^T B agree with the twin's, with or without the two halves.
  template <class T>
  void kept_large_fronts() {
    const CscMatrix<T> a = random_sparse<T>(500, 240, 12, 17);
    SparseQROptions opt = any_ordering();
    opt.tolerance = -1;
    I widest = 0;
    {
      ArenaOnCpu off(false);
      const SparseQR<T> twin(a, opt);
      for (const auto& fr : twin.analysis().fronts)
        widest = std::max(widest, std::min<I>(fr.rows, static_cast<I>(fr.cols.size())));
    }
    ASSERT_GT(widest, 2 * 64) << "no front with three reflector blocks (64 columns each)";
    for (const char* halves : {"1", "0"}) {
      ScopedEnv db("GPUQR_SPARSE_DOUBLE_BUFFER", halves);
      EXPECT_FALSE(compare_with_twin(a, opt, std::string("random 500 x 240, halves ") + halves));
      ArenaOnCpu force(on_cpu());
      const SparseQR<T> dev(a, arena_options(opt));
      const SparseQR<T> twin = [&] {
        ArenaOnCpu off(false);
        return SparseQR<T>(a, opt);
      }();
      const Matrix<T> b = random_dense<T>(a.rows, 2, 23);
      const Matrix<T> c0 = twin.apply_qt(b.view()), c1 = dev.apply_qt(b.view());
      EXPECT_LT(c_difference(twin, c0, dev, c1), 1e3 * gpuqr::accuracy::eps<T>())
          << "Q^T B by the kept reflectors differs";
    }
  }

  /// Staging on the arena: the smallest cap the planner accepts gives several stages and the
  /// same factorization (to rounding; each front's QR is the same call either way).
  template <class T>
  void staged() {
    const CscMatrix<T> a = grid_gradient<T>(22);
    ArenaOnCpu force(on_cpu());
    SparseQROptions opt = arena_options(any_ordering());
    const SparseQR<T> whole(a, opt);
    const gpuqr::detail::CscPattern pat{a.rows, a.cols, a.col_ptr.data(), a.row_indices.data()};
    const auto maps = gpuqr::detail::build_sparse_assembly_maps(whole.analysis(), pat);
    I need = 0;
    for (I f = 0; f < static_cast<I>(whole.analysis().fronts.size()); ++f)
      need = std::max(need, gpuqr::detail::front_min_stage_bytes(whole.analysis(), maps, f,
                                                                 {static_cast<I>(sizeof(T)), 0}));
    opt.memory_cap_bytes = need;
    const SparseQR<T> st(a, opt);
    EXPECT_GE(st.factor_stats().stages, 4);
    EXPECT_GT(st.factor_stats().carried_bytes, 0);
    EXPECT_LE(st.factor_stats().peak_stage_bytes, need);
    EXPECT_EQ(st.rank(), whole.rank());
    EXPECT_EQ(st.nnz_r(), whole.nnz_r());
    EXPECT_LT(r_difference(whole, st), 1e2 * gpuqr::accuracy::eps<T>());
    EXPECT_LT(rtr_ratio(a, st), 30.0);
    const Matrix<T> b = random_dense<T>(a.rows, 1, 9);
    const Matrix<T> x = st.solve(b.view());
    std::vector<double> xs(a.cols), bs(a.rows);
    for (I i = 0; i < a.cols; ++i) xs[i] = x(i, 0);
    for (I i = 0; i < a.rows; ++i) bs[i] = b(i, 0);
    EXPECT_LT(sparse_optimality_ratio(a, xs, bs), 30.0);
  }

  /// Right-hand sides carried through the fronts, reflectors kept or not, staged or not:
  /// C = Q^T B agrees with the twin's and its solutions are least-squares optimal.
  template <class T>
  void carried() {
    const CscMatrix<T> a = grid_gradient<T>(14);
    const Matrix<T> b = random_dense<T>(a.rows, 3, 13);
    ArenaOnCpu force(on_cpu());
    for (const bool keep : {true, false}) {
      for (const bool stage : {false, true}) {
        SCOPED_TRACE(std::string(keep ? "kept" : "Q-less") + (stage ? ", staged" : ""));
        SparseQROptions opt = any_ordering();
        opt.keep_householder = keep;
        const SparseQR<T> twin = [&] {
          ArenaOnCpu off(false);
          return SparseQR<T>(a, b.view(), opt);
        }();
        opt = arena_options(opt);
        if (stage) opt.memory_cap_bytes = twin.factor_stats().peak_stage_bytes / 3;
        const SparseQR<T> dev(a, b.view(), opt);
        EXPECT_TRUE(dev.factor_stats().fallback.empty());
        if (stage) EXPECT_GT(dev.factor_stats().stages, 1);
        EXPECT_EQ(dev.keeps_householder(), keep);
        const Matrix<T>& c0 = twin.qtb();
        const Matrix<T>& c1 = dev.qtb();
        ASSERT_EQ(c1.rows(), c0.rows());
        ASSERT_EQ(c1.cols(), c0.cols());
        ASSERT_EQ(twin.rank(), a.cols);
        EXPECT_LT(c_difference(twin, c0, dev, c1), 1e3 * gpuqr::accuracy::eps<T>())
            << "Q^T B differs";
        const Matrix<T> x = dev.solve_carried();
        for (I j = 0; j < 3; ++j) {
          std::vector<double> xs(a.cols), bs(a.rows);
          for (I i = 0; i < a.cols; ++i) xs[i] = x(i, j);
          for (I i = 0; i < a.rows; ++i) bs[i] = b(i, j);
          EXPECT_LT(sparse_optimality_ratio(a, xs, bs), 30.0) << "right-hand side " << j;
        }
        if (keep) {  // the kept reflectors give the same C
          const Matrix<T> c2 = dev.apply_qt(b.view());
          double d2 = 0, norm = 0;
          for (I j = 0; j < c1.cols(); ++j)
            for (I i = 0; i < c1.rows(); ++i) {
              const double d = static_cast<double>(c2(i, j)) - static_cast<double>(c1(i, j));
              d2 += d * d;
              norm += static_cast<double>(c1(i, j)) * static_cast<double>(c1(i, j));
            }
          EXPECT_LT(std::sqrt(d2 / norm), 1e3 * gpuqr::accuracy::eps<T>());
        }
      }
    }
  }

  /// A duplicated column: dead on the CPU; the arena run must fall back and say so, and give
  /// exactly the twin's factorization.
  template <class T>
  void rank_deficient_falls_back() {
    CscMatrix<T> g = grid_gradient<T>(10);
    std::vector<I> ii, jj;
    std::vector<T> vv;
    for (I c = 0; c < g.cols; ++c)
      for (I p = g.col_ptr[c]; p < g.col_ptr[c + 1]; ++p) {
        ii.push_back(g.row_indices[p]);
        jj.push_back(c);
        vv.push_back(g.values[p]);
        if (c == 7) {  // column n is a copy of column 7
          ii.push_back(g.row_indices[p]);
          jj.push_back(g.cols);
          vv.push_back(g.values[p]);
        }
      }
    const CscMatrix<T> a = CscMatrix<T>::from_triplets(g.rows, g.cols + 1, ii, jj, vv);
    ArenaOnCpu force(on_cpu());
    const SparseQR<T> dev(a, arena_options(any_ordering()));
    EXPECT_FALSE(dev.factor_stats().fallback.empty());
    EXPECT_EQ(dev.rank(), a.cols - 1);
    const SparseQR<T> twin = [&] {
      ArenaOnCpu off(false);
      return SparseQR<T>(a, any_ordering());
    }();
    EXPECT_EQ(dev.zero_pivots(), twin.zero_pivots());
    EXPECT_EQ(r_difference(twin, dev), 0.0);
    // Rank detection off: no fallback; the exact zero pivot (if any) is reported as the twin.
    SparseQROptions off = arena_options(any_ordering());
    off.tolerance = -1;
    const SparseQR<T> dev_off(a, off);
    EXPECT_TRUE(dev_off.factor_stats().fallback.empty());
    EXPECT_EQ(dev_off.factor_stats().ran_on, to_string(ctx().backend()));
  }
};

/// SparsePlacement: the rule on its own (no device needed), then on this test's backend.
TEST(SparsePlacementRule, BarsAndForcedSides) {
  const CscMatrix<double> small = grid_gradient<double>(10);
  const SparseAnalysis an = gpuqr::analyze_sparse_qr(small, any_ordering().analysis);
  ASSERT_GT(an.flops, 0.0);
  ASSERT_GT(an.intensity, 0.0);
  SparseQROptions opt;
  // The defaults send a 10 x 10 grid (some 1e5 flops) to the CPU, naming the flops bar.
  ASSERT_LT(an.flops, opt.gpu_min_flops);
  EXPECT_NE(gpuqr::detail::sparse_cpu_placement_reason(an, opt, true).find("gpu_min_flops"),
            std::string::npos);
  EXPECT_EQ(gpuqr::detail::sparse_cpu_placement_reason(an, opt, false), "");  // a CPU context
  // Bars at the problem's own flops and intensity: the device (each bar is "at least").
  opt.gpu_min_flops = an.flops;
  opt.gpu_min_intensity = an.intensity;
  EXPECT_EQ(gpuqr::detail::sparse_cpu_placement_reason(an, opt, true), "");
  // Just above its intensity: the CPU, naming that bar.
  opt.gpu_min_intensity = an.intensity * 1.01;
  EXPECT_NE(gpuqr::detail::sparse_cpu_placement_reason(an, opt, true).find("gpu_min_intensity"),
            std::string::npos);
  // Forced sides ignore the bars.
  opt.placement = SparsePlacement::device;
  EXPECT_EQ(gpuqr::detail::sparse_cpu_placement_reason(an, opt, true), "");
  opt = SparseQROptions();
  opt.gpu_min_flops = 0;
  opt.gpu_min_intensity = 0;
  opt.placement = SparsePlacement::cpu;
  EXPECT_NE(gpuqr::detail::sparse_cpu_placement_reason(an, opt, true).find("SparsePlacement::cpu"),
            std::string::npos);
  // Negative bars are refused.
  SparseQROptions bad = any_ordering();
  bad.gpu_min_flops = -1;
  EXPECT_THROW(SparseQR<double>(small, bad), InvalidArgument);
  bad = any_ordering();
  bad.gpu_min_intensity = -0.5;
  EXPECT_THROW(SparseQR<double>(small, bad), InvalidArgument);
}

/// On a CUDA context a small problem goes to the CPU by default (and says why), to the device
/// when forced or when the bars are lowered, with the same R; on a CPU context placement
/// changes nothing.
TEST_P(SparseArena, AutomaticPlacement) {
  const CscMatrix<double> a = grid_gradient<double>(12);
  SparseQROptions opt = any_ordering();
  opt.context = ctx();
  const SparseQR<double> automatic(a, opt);
  const bool cuda = ctx().is_cuda();
  EXPECT_EQ(automatic.factor_stats().ran_on, "cpu");
  if (cuda)
    EXPECT_NE(automatic.factor_stats().fallback.find("automatic placement"), std::string::npos)
        << automatic.factor_stats().fallback;
  else
    EXPECT_EQ(automatic.factor_stats().fallback, "");
  opt.gpu_min_flops = 0;
  opt.gpu_min_intensity = 0;
  const SparseQR<double> lowered(a, opt);
  EXPECT_EQ(lowered.factor_stats().ran_on, cuda ? "cuda" : "cpu");
  EXPECT_EQ(lowered.factor_stats().fallback, "");
  opt = any_ordering();
  opt.context = ctx();
  opt.placement = SparsePlacement::cpu;
  const SparseQR<double> forced_cpu(a, opt);
  EXPECT_EQ(forced_cpu.factor_stats().ran_on, "cpu");
  EXPECT_EQ(forced_cpu.factor_stats().fallback.empty(), !cuda);
  for (const SparseQR<double>* q : {&lowered, &forced_cpu}) {
    EXPECT_EQ(q->rank(), automatic.rank());
    EXPECT_LT(r_difference(automatic, *q), 1e3 * gpuqr::accuracy::eps<double>());
    EXPECT_LT(rtr_ratio(a, *q), 30.0);
  }
}

TEST_P(SparseArena, CorpusAgreesWithTwin) {
  if (is_double()) corpus<double>();
  else corpus<float>();
}
TEST_P(SparseArena, GridBothRoutes) {
  if (is_double()) grid_both_routes<double>();
  else grid_both_routes<float>();
}
TEST_P(SparseArena, KeptLargeFrontsCopiedInPieces) {
  if (is_double())
    kept_large_fronts<double>();
  else
    kept_large_fronts<float>();
}
TEST_P(SparseArena, StagedSameResult) {
  if (is_double()) staged<double>();
  else staged<float>();
}
TEST_P(SparseArena, CarriedRhsKeptAndQless) {
  if (is_double()) carried<double>();
  else carried<float>();
}
TEST_P(SparseArena, RankDeficientFallsBack) {
  if (is_double()) rank_deficient_falls_back<double>();
  else rank_deficient_falls_back<float>();
}

INSTANTIATE_TEST_SUITE_P(Backends, SparseArena, gpuqr::testing::all_backend_cases(),
                         gpuqr::testing::case_name);

}  // namespace
