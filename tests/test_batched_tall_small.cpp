// The CUDA cooperative register kernel of the batched QR for small tall matrices
// (src/cuda/batched_tall_small.cu: n <= 32 with 32 < m <= 256, n <= 64 with m <= 128), forced
// on with the routing hook, against the CPU twin (LAPACK's geqrf per matrix). Invariants of
// every checked matrix: ||A - QR|| / (||A|| max(m, n) eps) and ||I - Q^T Q|| / (m eps) with Q
// formed on the host from the GPU's reflectors and tau, |diag R| against the CPU's, tau = 0
// exactly where the CPU's is, tau in [1, 2] elsewhere; on well-conditioned tiles also R, V
// and tau entry by entry (both follow larfg's sign conventions). Strided batches with aligned
// and unaligned columns (odd leading dimensions) whose padding rows and gaps must stay
// untouched, listed batches that mix shapes across the classes (m < n included) with zero
// columns and columns near under- and overflow, and batches of thousands of matrices, so
// that every persistent block factors several in turn.
// CUDA only: the cases skip with a message without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
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

using kernels::cuda::batched_tall_launches;
using kernels::cuda::set_batched_tall;
using kernels::cuda::TallRoute;

class BatchedTallSmallCuda : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    set_batched_tall(TallRoute::on);
  }
  void TearDown() override { set_batched_tall(TallRoute::automatic); }
};

constexpr double kBound = 30.0;       // backward error, orthogonality, |diag R|
constexpr double kTwinBound = 100.0;  // entry by entry, as test_batched_small.cpp

/// What a tile is made of besides random entries.
enum class Special { none, tiny, huge, graded, zero_column, zero_subcolumn, zero };

/// Random entries plus a diagonal of about 2 sqrt(max(m, n)) (well conditioned: the twins'
/// entries stay within rounding of each other), then `special`: every entry near the
/// underflow or overflow end (squares out of range: larfg's scaled path), columns scaled
/// alternately by 1e-150 and 1e150 (1e-18 and 1e18 in FP32), column min(3, n - 1) zero,
/// column 0 zero below its diagonal (tau = 0 at step 0), or all zero.
template <class T>
Matrix<T> tile(std::int64_t m, std::int64_t n, std::uint64_t seed, Special special) {
  Matrix<T> a = random_matrix<T>(m, n, seed);
  const double shift = 2.0 * std::sqrt(double(std::max(m, n)));
  for (std::int64_t j = 0; j < std::min(m, n); ++j)
    a(j, j) += static_cast<T>(a(j, j) < T(0) ? -shift : shift);
  const bool dbl = sizeof(T) == 8;
  const double tiny = dbl ? 1e-300 : 1e-30, huge = dbl ? 1e300 : 1e30;
  const double lo = dbl ? 1e-150 : 1e-18, hi = dbl ? 1e150 : 1e18;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double x = double(a(i, j));
      switch (special) {
        case Special::tiny:
          x *= tiny;
          break;
        case Special::huge:
          x *= huge;
          break;
        case Special::graded:
          x *= j % 2 == 0 ? lo : hi;
          break;
        case Special::zero_column:
          x = j == std::min<std::int64_t>(3, n - 1) ? 0.0 : x;
          break;
        case Special::zero_subcolumn:
          x = j == 0 && i > 0 ? 0.0 : x;
          break;
        case Special::zero:
          x = 0.0;
          break;
        case Special::none:
          break;
      }
      a(i, j) = static_cast<T>(x);
    }
  return a;
}

/// The worst value of each check over a batch, with the matrix that showed it (NaN counts
/// as the worst).
struct Worst {
  std::vector<std::string> names;
  std::vector<double> value;
  std::vector<std::int64_t> at;

  void note(const std::string& name, double v, std::int64_t index) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      names.push_back(name);
      value.push_back(-1.0);
      at.push_back(-1);
      it = names.end() - 1;
    }
    const auto k = static_cast<std::size_t>(it - names.begin());
    if (!(v <= value[k])) {
      value[k] = std::isnan(v) ? 1e300 : v;
      at[k] = index;
    }
  }
  void expect_within(const std::string& name, double bound) const {
    const auto it = std::find(names.begin(), names.end(), name);
    ASSERT_NE(it, names.end()) << name << " was never checked";
    const auto k = static_cast<std::size_t>(it - names.begin());
    EXPECT_LT(track("tall " + name, value[k]), bound) << name << ", matrix " << at[k];
  }
};

/// One factored matrix: the GPU's (got, ld got_ld, got_tau) and the CPU's (want, want_tau)
/// factors of `a`. `twin`: also entry by entry; `invariants`: Q formed and checked.
template <class T>
void check_one(const Context& cpu, Worst& w, std::int64_t index, const Matrix<T>& a, const T* got,
               std::int64_t got_ld, const T* got_tau, const T* want, std::int64_t want_ld,
               const T* want_tau, bool twin, bool invariants) {
  const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  const double unit = double(std::max(m, n)) * accuracy::eps<T>();
  const double anorm = accuracy::norm1<T>(a.view());
  const double r_scale = std::max(anorm, 1e-300) * unit;
  double diag = 0, r_diff = 0, v_diff = 0, t_diff = 0, tau_bad = 0;
  for (std::int64_t j = 0; j < k; ++j) {
    const double g = std::fabs(double(got[j + j * got_ld]));
    const double c = std::fabs(double(want[j + j * want_ld]));
    diag = std::max(diag, std::fabs(g - c) / r_scale);
    const double tg = double(got_tau[j]), tc = double(want_tau[j]);
    // LAPACK's real larfg: tau = 0 (H = I) or 1 <= tau <= 2; zero exactly where the CPU's is.
    const bool ok =
        (tg == 0.0) == (tc == 0.0) && (tg == 0.0 || (tg >= 1.0 - 4 * unit && tg <= 2.0 + 4 * unit));
    if (!ok) tau_bad = 1;
  }
  w.note("|diag R|", diag, index);
  w.note("tau form", tau_bad, index);
  if (twin) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        const double d = std::fabs(double(got[i + j * got_ld]) - double(want[i + j * want_ld]));
        (i <= j ? r_diff : v_diff) = std::max(i <= j ? r_diff : v_diff, d);
      }
    for (std::int64_t j = 0; j < k; ++j)
      t_diff = std::max(t_diff, std::fabs(double(got_tau[j]) - double(want_tau[j])));
    w.note("twin R", r_diff / r_scale, index);
    w.note("twin V", v_diff / unit, index);
    w.note("twin tau", t_diff / unit, index);
  }
  if (invariants && k > 0) {
    // Q from the GPU's reflectors by LAPACK (the CPU backend's orgqr), R its upper triangle.
    Matrix<T> q(m, k), r(k, n), tau(k, 1);
    for (std::int64_t j = 0; j < k; ++j) {
      for (std::int64_t i = 0; i < m; ++i) q(i, j) = got[i + j * got_ld];
      tau(j, 0) = got_tau[j];
    }
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? got[i + j * got_ld] : T(0);
    std::int64_t mm = m, kk = k, ldq = m;
    T* qp = q.data();
    const T* tp = tau.data();
    orgqr_vbatched<T>(cpu, &mm, &kk, &kk, &qp, &ldq, &tp, 1);
    w.note("backward error", accuracy::qr_backward_error<T>(a.view(), q.view(), r.view()), index);
    w.note("orthogonality", accuracy::orthogonality<T>(q.view()), index);
  }
}

struct StridedCase {
  std::int64_t m, n, count, pad_ld, pad_stride;
  Special special = Special::none;
};

/// Each case as one strided batch on `gpu` and on the CPU: padding (rows past m, gaps between
/// matrices, tau past k) untouched, every matrix's twin entries and |diag R| checked, and the
/// invariants of every `every`-th matrix.
template <class T>
void check_strided(const Context& gpu, const std::vector<StridedCase>& cases, std::int64_t every,
                   bool tall_expected = true) {
  const Context cpu = Context::cpu();
  for (const StridedCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + " x" + std::to_string(c.count) +
                 ", ld pad " + std::to_string(c.pad_ld) + ", stride pad " +
                 std::to_string(c.pad_stride));
    HostBatch<T> host;
    host.shapes.assign(static_cast<std::size_t>(c.count), BShape{c.m, c.n});
    for (std::int64_t q = 0; q < c.count; ++q)
      host.mats.push_back(tile<T>(c.m, c.n, 7000 + 13 * q + c.m * 31 + c.n, c.special));
    StridedBatch<T> dev = to_strided<T>(gpu, host, c.pad_ld, c.pad_stride);
    StridedBatch<T> ref = to_strided<T>(cpu, host, c.pad_ld, c.pad_stride);
    const std::int64_t launches = batched_tall_launches();
    geqrf_strided_batched<T>(gpu, c.m, c.n, dev.data.data(), dev.ld, dev.stride, dev.tau.data(),
                             dev.tau_stride, c.count);
    // The route under test ran (or, switched off, did not): else these checks prove nothing.
    EXPECT_EQ(batched_tall_launches() - launches, tall_expected ? 1 : 0);
    geqrf_strided_batched<T>(cpu, c.m, c.n, ref.data.data(), ref.ld, ref.stride, ref.tau.data(),
                             ref.tau_stride, c.count);
    const Matrix<T> got = to_host(gpu, dev.data), got_tau = to_host(gpu, dev.tau);
    EXPECT_EQ(touched_padding(got, got_tau, dev.ld, dev.stride, dev.tau_stride, c.m, c.n), 0)
        << "entries outside the matrices (or past tau) were written";
    Worst w;
    for (std::int64_t q = 0; q < c.count; ++q)
      check_one<T>(cpu, w, q, host.mats[static_cast<std::size_t>(q)], got.data() + q * dev.stride,
                   dev.ld, got_tau.data() + q * dev.tau_stride, ref.data.data() + q * ref.stride,
                   ref.ld, ref.tau.data() + q * ref.tau_stride, c.special == Special::none,
                   q % every == 0 || q == c.count - 1);
    w.expect_within("|diag R|", kBound);
    w.expect_within("tau form", 0.5);
    w.expect_within("backward error", kBound);
    w.expect_within("orthogonality", kBound);
    if (c.special == Special::none) {
      w.expect_within("twin R", kTwinBound);
      w.expect_within("twin V", kTwinBound);
      w.expect_within("twin tau", kTwinBound);
    }
  }
}

/// A listed batch of the shapes (each repeated `count` times, interleaved), every 29th matrix
/// special; checked as check_strided (no padding here: each matrix has ld = m).
template <class T>
void check_listed(const Context& gpu, const std::vector<std::pair<BShape, std::int64_t>>& groups,
                  std::int64_t every) {
  const Special specials[] = {Special::tiny,        Special::huge,           Special::graded,
                              Special::zero_column, Special::zero_subcolumn, Special::zero};
  const std::vector<BShape> shapes = interleaved_shapes(groups);
  HostBatch<T> host;
  host.shapes = shapes;
  std::vector<Special> kind;
  for (std::size_t q = 0; q < shapes.size(); ++q) {
    kind.push_back(q % 29 == 3 ? specials[(q / 29) % 6] : Special::none);
    host.mats.push_back(tile<T>(shapes[q].m, shapes[q].n, 300 + 11 * q, kind.back()));
  }
  const Context cpu = Context::cpu();
  CtxBatch<T> ref = to_ctx_batch<T>(cpu, host), dev = to_ctx_batch<T>(gpu, host);
  geqrf_vbatched<T>(cpu, ref.m.data(), ref.n.data(), ref.a_ptrs.data(), ref.ld.data(),
                    ref.tau_ptrs.data(), ref.count());
  const std::int64_t launches = batched_tall_launches();
  geqrf_vbatched<T>(gpu, dev.m.data(), dev.n.data(), dev.a_ptrs.data(), dev.ld.data(),
                    dev.tau_ptrs.data(), dev.count());
  // One launch per tall class present (all of the groups' shapes are tall).
  EXPECT_GE(batched_tall_launches() - launches, 1);
  gpu.synchronize();
  Worst plain, special;
  for (std::size_t q = 0; q < shapes.size(); ++q) {
    const Matrix<T> got = to_host(gpu, dev.mats[q]), tau = to_host(gpu, dev.taus[q]);
    const bool is_special = kind[q] != Special::none;
    check_one<T>(cpu, is_special ? special : plain, static_cast<std::int64_t>(q), host.mats[q],
                 got.data(), got.ld(), tau.data(), ref.mats[q].data(), ref.mats[q].ld(),
                 ref.taus[q].data(), !is_special,
                 is_special || q % static_cast<std::size_t>(every) == 0);
  }
  {
    SCOPED_TRACE("random tiles");
    for (const char* name : {"|diag R|", "backward error", "orthogonality"})
      plain.expect_within(name, kBound);
    plain.expect_within("tau form", 0.5);
    for (const char* name : {"twin R", "twin V", "twin tau"}) plain.expect_within(name, kTwinBound);
  }
  {
    SCOPED_TRACE("tiny, huge, graded and zero columns");
    for (const char* name : {"|diag R|", "backward error", "orthogonality"})
      special.expect_within(name, kBound);
    special.expect_within("tau form", 0.5);
  }
}

TEST_P(BatchedTallSmallCuda, StridedBatchesOfEveryClassMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Odd m and n across the classes (m up to 64, 128, 256; n up to 8, 16, 32, 64), columns
    // 16-byte aligned (ld pad 0 with even m) or not (odd ld), partial last granules, padding
    // rows (ld > m) that must stay untouched; counts past the resident blocks.
    check_strided<T>(ctx(),
                     {{65, 7, 3000, 0, 0},
                      {97, 16, 2500, 1, 0},
                      {127, 31, 1500, 2, 3},
                      {128, 32, 2000, 0, 0},
                      {200, 32, 800, 3, 1},
                      {256, 17, 600, 0, 0},
                      {256, 1, 2000, 1, 0},
                      {64, 16, 4000, 0, 0},
                      {33, 9, 3000, 0, 0},
                      {64, 64, 1500, 0, 0},
                      {100, 40, 800, 1, 0},
                      {128, 64, 500, 2, 2},
                      {129, 5, 1000, 0, 0},
                      {40, 64, 600, 1, 0}},
                     7);
  }));
}

TEST_P(BatchedTallSmallCuda, ListedMixedBatchMatchesTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Shapes of every class interleaved (the batch is bucketed by class on the way in), m < n
    // (20x50, 40x64, 60x61), and matrices for larfg's special paths.
    check_listed<T>(ctx(),
                    {{{65, 1}, 200},
                     {{97, 7}, 300},
                     {{127, 16}, 300},
                     {{128, 31}, 400},
                     {{200, 32}, 200},
                     {{256, 32}, 200},
                     {{33, 33}, 200},
                     {{64, 64}, 300},
                     {{20, 50}, 100},
                     {{40, 64}, 100},
                     {{60, 61}, 100},
                     {{100, 37}, 200},
                     {{255, 3}, 100},
                     {{48, 24}, 300}},
                    5);
  }));
}

TEST_P(BatchedTallSmallCuda, SpecialColumnsInStridedBatches) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Every matrix special, in both copy paths (aligned and not): the scaled larfg path on
    // whole batches, tau = 0 steps skipped by every lane.
    check_strided<T>(ctx(),
                     {{128, 32, 300, 0, 0, Special::tiny},
                      {127, 31, 300, 1, 0, Special::huge},
                      {96, 20, 300, 0, 0, Special::graded},
                      {128, 32, 300, 0, 0, Special::zero_column},
                      {65, 64, 300, 1, 0, Special::zero_subcolumn},
                      {200, 16, 300, 0, 0, Special::zero}},
                     1);
  }));
}

TEST_P(BatchedTallSmallCuda, BothRoutingsGiveTheSameInvariants) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // The A/B the knob exists for: on, off (the routes before it) and outside_small.
    for (const TallRoute route : {TallRoute::on, TallRoute::off, TallRoute::outside_small}) {
      SCOPED_TRACE("route " + std::to_string(static_cast<int>(route)));
      set_batched_tall(route);
      // 128x32 and 64x64 are tall unless off; 64x16 (the small kernel's class) only when on.
      check_strided<T>(ctx(), {{128, 32, 300, 0, 0}, {64, 64, 100, 0, 0}}, 3,
                       route != TallRoute::off);
      check_strided<T>(ctx(), {{64, 16, 300, 0, 0}}, 3, route == TallRoute::on);
    }
  }));
}

TEST_P(BatchedTallSmallCuda, BothKernelsMatchTheCpuTwin) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Both kernels: two columns per lane (classes of 16 columns and more) and one (8-column
    // classes). Odd and unaligned shapes, m < n, and the special columns (scaled larfg path,
    // tau = 0); n just past a slot (17, 33: the second slot holds one column), k ending in
    // either slot (40x64, 33x50: m < n, the last step H_{k-1} alone), the 16-column classes
    // (one warp at 64 rows).
    check_strided<T>(ctx(),
                     {{128, 32, 900, 0, 0},
                      {127, 31, 500, 1, 3},
                      {64, 64, 500, 0, 0},
                      {63, 61, 300, 1, 0},
                      {40, 64, 200, 1, 0},
                      {97, 7, 400, 1, 2},
                      {256, 32, 200, 0, 0},
                      {128, 17, 300, 0, 0},
                      {120, 33, 300, 1, 0},
                      {33, 50, 200, 0, 0},
                      {65, 16, 300, 1, 0},
                      {200, 20, 200, 0, 1},
                      {128, 64, 200, 0, 0}},
                     11);
    check_strided<T>(ctx(),
                     {{128, 32, 200, 0, 0, Special::tiny},
                      {127, 31, 200, 1, 0, Special::huge},
                      {64, 64, 200, 0, 0, Special::graded},
                      {128, 32, 200, 0, 0, Special::zero_column},
                      {65, 64, 200, 1, 0, Special::zero_subcolumn},
                      {64, 64, 100, 0, 0, Special::zero}},
                     13);
  }));
}

// Sized for compute-sanitizer (memcheck, racecheck, synccheck): more matrices than resident
// blocks in a few classes (so blocks wrap and reuse their v buffers across matrices), both
// kernels (97 x 7: one column per lane), both copy paths, m < n.
TEST_P(BatchedTallSmallCuda, SanitizerSizedBatches) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    check_strided<T>(
        ctx(), {{128, 32, 600, 0, 0}, {97, 7, 400, 1, 2}, {64, 64, 300, 0, 0}, {40, 50, 200, 1, 0}},
        5);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedTallSmallCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
