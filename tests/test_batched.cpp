// Batched QR (gpuqr/batched.hpp), run for every backend and precision: every matrix of a
// batch is checked with the dense test ratios (backward error, orthogonality, Q^T A = R,
// least-squares optimality), on batches of equal and of mixed sizes that reach every route of
// the CUDA backend (register kernel, shared-memory kernel, dense fallback).
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "gpuqr/error.hpp"
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

/// Sets an environment variable for a scope (unset when value is null), restoring it after.
class EnvScope {
 public:
  EnvScope(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) unsetenv(name);
    else setenv(name, value, 1);
  }
  ~EnvScope() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// LAPACK's gels on the host (A, B copied): X (n x nrhs) and the residual norm per column.
template <class T>
std::pair<Matrix<T>, std::vector<double>> lapack_gels(const Matrix<T>& a, const Matrix<T>& b) {
  const std::int64_t m = a.rows(), n = a.cols(), nrhs = b.cols();
  Matrix<T> ac = a.clone(), bc = b.clone();
  int info = 0;
  if constexpr (sizeof(T) == sizeof(double)) {
    info = LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', static_cast<int>(m), static_cast<int>(n),
                         static_cast<int>(nrhs), ac.data(), static_cast<int>(ac.ld()), bc.data(),
                         static_cast<int>(bc.ld()));
  } else {
    info = LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', static_cast<int>(m), static_cast<int>(n),
                         static_cast<int>(nrhs), ac.data(), static_cast<int>(ac.ld()), bc.data(),
                         static_cast<int>(bc.ld()));
  }
  EXPECT_EQ(info, 0);
  Matrix<T> x = Matrix<T>::copy_of(MatrixView<const T>(bc.data(), n, nrhs, bc.ld()));
  std::vector<double> res;
  for (std::int64_t j = 0; j < nrhs; ++j)
    res.push_back(accuracy::residual_norm<T>(a.view(), x.view().col(j), b.view().col(j)));
  return {std::move(x), std::move(res)};
}

double frob_of(const auto& m) {
  double s = 0;
  for (std::int64_t j = 0; j < m.cols(); ++j)
    for (std::int64_t i = 0; i < m.rows(); ++i) s += double(m(i, j)) * double(m(i, j));
  return std::sqrt(s);
}

// lstsq_vbatched (A destroyed): for each route setting (CUDA: thresholds, engine forced off,
// engine forced on, so that the engine also runs the small shapes), every solution is checked
// by the least-squares optimality ratio, its residual against LAPACK gels' residual, and the
// residual norms left below X in B against ||B - A X|| recomputed. Mixed sizes: m = n, m = 4n,
// sizes off multiples of 32, n = 1, nrhs 1 and 3, empty ones, and sizes past the engine's
// thresholds (FP64 n >= 128 or tall n >= 64; FP32 n >= 256) so the default mixes both routes.
TEST_P(Batched, LstsqAgainstLapackGels) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::vector<BShape> shapes = {
        {1, 1},    {37, 37},  {148, 37}, {40, 1},   {33, 1},   {7, 0},    {0, 0},
        {64, 64},  {256, 64}, {100, 70}, {130, 130}, {520, 130}, {300, 75}, {45, 45},
        {260, 257}, {96, 33}, {31, 30},  {129, 1}};
    const std::vector<std::int64_t> nrhs_of = {1, 3, 1, 3, 1, 2, 1, 3, 1, 3, 1, 3, 1, 2, 3, 1, 3, 2};
    HostBatch<T> a = make_batch<T>(shapes, 707, 1);
    std::vector<BShape> rhs_shapes;
    for (std::size_t i = 0; i < shapes.size(); ++i) rhs_shapes.push_back({shapes[i].m, nrhs_of[i]});
    HostBatch<T> b = make_batch<T>(rhs_shapes, 808, 1);
    std::vector<const char*> settings = {nullptr};
    if (ctx().is_cuda()) settings = {nullptr, "0", "1"};
    std::vector<std::vector<Matrix<T>>> outs;
    for (const char* knob : settings) {
      SCOPED_TRACE(std::string("GPUQR_BATCHED_ENGINE=") + (knob ? knob : "(unset)"));
      EnvScope env("GPUQR_BATCHED_ENGINE", knob);
      CtxBatch<T> da = to_ctx_batch<T>(ctx(), a), db = to_ctx_batch<T>(ctx(), b);
      lstsq_vbatched<T>(ctx(), da.m.data(), da.n.data(), db.n.data(), da.a_ptrs.data(),
                        da.ld.data(), db.a_ptrs.data(), db.ld.data(), da.count());
      outs.emplace_back();
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        const std::int64_t m = shapes[i].m, n = shapes[i].n, nrhs = rhs_shapes[i].n;
        Matrix<T> bx = to_host(ctx(), db.mats[i]);
        outs.back().push_back(bx.clone());
        if (n == 0) continue;
        SCOPED_TRACE("matrix " + std::to_string(i) + ": " + std::to_string(m) + "x" +
                     std::to_string(n) + ", nrhs " + std::to_string(nrhs));
        Matrix<T> x = Matrix<T>::copy_of(MatrixView<const T>(bx.data(), n, nrhs, bx.ld()));
        ASSERT_GT(frob_of(x), 0.0);  // never zeros
        EXPECT_LT(track("lstsq optimality", accuracy::lstsq_optimality_ratio<T>(
                                                a.mats[i].view(), x.view(), b.mats[i].view())),
                  kBound);
        const std::vector<double> res_lapack = lapack_gels<T>(a.mats[i], b.mats[i]).second;
        const double scale = frob_of(a.mats[i]) * frob_of(x) + frob_of(b.mats[i]);
        const double tol = 100.0 * double(std::max(m, n)) * accuracy::eps<T>() * scale;
        for (std::int64_t j = 0; j < nrhs; ++j) {
          const double res = accuracy::residual_norm<T>(a.mats[i].view(), x.view().col(j),
                                                        b.mats[i].view().col(j));
          // Ours is as good as LAPACK's (both minimize; they agree to rounding).
          EXPECT_LE(res, res_lapack[static_cast<std::size_t>(j)] + tol) << "rhs " << j;
          // The residual norm reported below X.
          double below = 0;
          for (std::int64_t r = n; r < m; ++r) below += double(bx(r, j)) * double(bx(r, j));
          EXPECT_NEAR(std::sqrt(below), res, tol) << "rhs " << j;
          if (m > n) EXPECT_GT(res, 0.0) << "rhs " << j;  // random b is not in range(A)
        }
      }
    }
    if (outs.size() == 3) {
      // Engine on vs off: different algorithms, so the results must differ in rounding for
      // some matrix (they would be bitwise equal if the knob did not reach the engine).
      bool differs = false;
      for (std::size_t i = 0; i < shapes.size() && !differs; ++i) {
        const Matrix<T>& on = outs[2][i];
        const Matrix<T>& off = outs[1][i];
        for (std::int64_t j = 0; j < on.cols() && !differs; ++j)
          for (std::int64_t r = 0; r < std::min(on.rows(), shapes[i].n); ++r)
            if (on(r, j) != off(r, j)) {
              differs = true;
              break;
            }
      }
      EXPECT_TRUE(differs) << "GPUQR_BATCHED_ENGINE=1 gave bitwise the results of =0";
    }
  }));
}

TEST_P(Batched, LstsqRejectsWide) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    CtxBatch<T> da = to_ctx_batch<T>(ctx(), make_batch<T>({{4, 4}, {3, 5}}, 1, 1));
    CtxBatch<T> db = to_ctx_batch<T>(ctx(), make_batch<T>({{4, 1}, {3, 1}}, 2, 1));
    EXPECT_THROW(lstsq_vbatched<T>(ctx(), da.m.data(), da.n.data(), db.n.data(),
                                   da.a_ptrs.data(), da.ld.data(), db.a_ptrs.data(),
                                   db.ld.data(), da.count()),
                 InvalidArgument);
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
