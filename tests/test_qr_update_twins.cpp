// Each CUDA leaf of QR updating (src/core/update_kernels.hpp) against its CPU twin on the same
// inputs, entry by entry within rounding. CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "src/core/update_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class QrUpdateCudaTwins : public BackendTest {};

template <class T>
double bound(std::int64_t length) {
  return 20.0 * std::sqrt(double(std::max<std::int64_t>(length, 1))) * accuracy::eps<T>();
}

TEST_P(QrUpdateCudaTwins, TpmqrtMatchesLapack) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const std::int64_t p = 37, k = 20, nc = 29;
    const Matrix<T> v = random_matrix<T>(p, k, 1);
    Matrix<T> t = random_matrix<T>(k, k, 2);
    zero_below_diagonal(t);
    for (Side side : {Side::left, Side::right}) {
      for (Op op : {Op::no_trans, Op::trans}) {
        const std::int64_t ar = side == Side::left ? k : nc, ac = side == Side::left ? nc : k;
        const std::int64_t br = side == Side::left ? p : nc, bc = side == Side::left ? nc : p;
        Matrix<T> a = random_matrix<T>(ar, ac, 3), b = random_matrix<T>(br, bc, 4);
        Matrix<T> w(ar, ac);
        Matrix<T> a_g = to_ctx<T>(ctx(), a.view()), b_g = to_ctx<T>(ctx(), b.view());
        Matrix<T> v_g = to_ctx<T>(ctx(), v.view()), t_g = to_ctx<T>(ctx(), t.view());
        Matrix<T> w_g = device_matrix<T>(ctx(), ar, ac);
        kernels::cpu::tpmqrt<T>(cpu.impl(), side, op, v.view(), t.view(), a.view(), b.view(),
                                w.view());
        kernels::cuda::tpmqrt<T>(ctx().impl(), side, op, v_g.view(), t_g.view(), a_g.view(),
                                 b_g.view(), w_g.view());
        EXPECT_LT(entry_diff(to_host(ctx(), a_g), a), bound<T>(p * k));
        EXPECT_LT(entry_diff(to_host(ctx(), b_g), b), bound<T>(p * k));
      }
    }
  }));
}

TEST_P(QrUpdateCudaTwins, GatherMoveTransposeAreExact) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    const Matrix<T> a = random_matrix<T>(50, 40, 5);
    const std::vector<std::int64_t> rows = {7, 0, 49, 23};
    const DeviceArray<std::int64_t> rows_d(rows, ctx().device());
    const Matrix<T> a_g = to_ctx<T>(ctx(), a.view());
    for (bool tr : {false, true}) {
      Matrix<T> z(tr ? 30 : 4, tr ? 4 : 30);
      Matrix<T> z_g = device_matrix<T>(ctx(), z.rows(), z.cols());
      kernels::cpu::gather_rows<T>(cpu.impl(), a.view(), VectorView<const std::int64_t>(rows.data(), 4),
                                   10, tr, z.view());
      kernels::cuda::gather_rows<T>(ctx().impl(), a_g.view(), rows_d.view(), 10, tr, z_g.view());
      EXPECT_EQ(entry_diff(to_host(ctx(), z_g), z), 0.0);
    }
    // Moves on a square 50 x 50 matrix (a is 50 x 40: column 45 would be out of range), the
    // column moves on a 50 x 49 block so that the leading dimension exceeds the width.
    const Matrix<T> sq = random_matrix<T>(50, 50, 6);
    const std::vector<std::int64_t> from = {45, 46, 48}, to = {3, 11, 20};
    const DeviceArray<std::int64_t> from_d(from, ctx().device()), to_d(to, ctx().device());
    for (bool as_rows : {true, false}) {
      Matrix<T> x = sq.clone();
      Matrix<T> x_g = to_ctx<T>(ctx(), sq.view());
      MatrixView<T> xv = as_rows ? x.view() : x.view().block(0, 0, 50, 49);
      MatrixView<T> xgv = as_rows ? x_g.view() : x_g.view().block(0, 0, 50, 49);
      kernels::cpu::move_lines<T>(cpu.impl(), xv, VectorView<const std::int64_t>(from.data(), 3),
                                  VectorView<const std::int64_t>(to.data(), 3), as_rows);
      kernels::cuda::move_lines<T>(ctx().impl(), xgv, from_d.view(), to_d.view(), as_rows);
      EXPECT_EQ(entry_diff(to_host(ctx(), x_g), x), 0.0);
    }
    Matrix<T> at(40, 50), at_g = device_matrix<T>(ctx(), 40, 50);
    kernels::cpu::transpose<T>(cpu.impl(), a.view(), at.view());
    kernels::cuda::transpose<T>(ctx().impl(), a_g.view(), at_g.view());
    EXPECT_EQ(entry_diff(to_host(ctx(), at_g), at), 0.0);
  }));
}

TEST_P(QrUpdateCudaTwins, AddRowsSmallMatches) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    // Every kernel width (p = 1, 2, 3..4, 5..8, 9..16 rows), n and k on and off the 32-column
    // tiles, long hand-off chains (n = 640, 1000: 20 and 32 tiles waiting on each other).
    // The whole problem ([R d; U e]) scaled so that the squares of its columns underflow or
    // overflow: the scaled larfg path (the others take the plain sum of squares and
    // reciprocals). Scaling U alone would not do: U >> R makes the rows of U annihilate each
    // other after p reflectors, and the rest is rounding noise on either side.
    const double tiny = sizeof(T) == 8 ? 1e-170 : 1e-20, huge = sizeof(T) == 8 ? 1e160 : 1e20;
    for (auto [p, n, k, scale] :
         {std::tuple<std::int64_t, std::int64_t, std::int64_t, double>{1, 40, 1, 1.0},
          {16, 75, 2, 1.0},
          {12, 64, 0, 1.0},
          {5, 130, 37, 1.0},
          {16, 70, 1, tiny},
          {7, 45, 2, huge},
          {2, 33, 1, 1.0},
          {3, 97, 0, tiny},
          {4, 1000, 3, 1.0},
          {2, 300, 1, huge},
          {8, 100, 1, 1.0},
          // Chunks as a wavefront (p > 8: two of 8 rows up to 16, of 16 above): the last chunk
          // full or partial, many chunks on a few tiles, few on many, d's tiles waiting on
          // the chunk before too.
          {9, 640, 33, 1.0},
          {13, 200, 2, huge},
          {17, 70, 1, 1.0},
          {32, 33, 0, 1.0},
          {100, 64, 3, 1.0},
          {40, 300, 35, 1.0},
          {50, 90, 2, tiny},
          {23, 1000, 1, 1.0}}) {
      SCOPED_TRACE("p " + std::to_string(p) + " n " + std::to_string(n) + " k " +
                   std::to_string(k) + " scale " + std::to_string(scale));
      Matrix<T> r = random_matrix<T>(n, n, 30 + p);
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = j + 1; i < n; ++i) r(i, j) = T(0);
        r(j, j) += T(j % 2 == 0 ? 4 : -4);  // well conditioned, both signs on the diagonal
      }
      Matrix<T> u = random_matrix<T>(p, n, 31), d = random_matrix<T>(n, k, 32);
      auto scale_all = [scale](Matrix<T>& x) {
        for (std::int64_t j = 0; j < x.cols(); ++j)
          for (std::int64_t i = 0; i < x.rows(); ++i)
            x(i, j) = static_cast<T>(double(x(i, j)) * scale);
      };
      const std::int64_t chunks = kernels::add_rows_chunks(p);
      const std::int64_t scalars = kernels::add_rows_chained_scalars(n, p);
      Matrix<T> e = random_matrix<T>(p, k, 33), tau(scalars, 1);
      scale_all(r);
      scale_all(u);
      scale_all(d);
      scale_all(e);
      Matrix<T> r_g = to_ctx<T>(ctx(), r.view()), u_g = to_ctx<T>(ctx(), u.view());
      Matrix<T> d_g = to_ctx<T>(ctx(), d.view()), e_g = to_ctx<T>(ctx(), e.view());
      Matrix<T> tau_g = device_matrix<T>(ctx(), scalars, 1);
      // The kernel's int flags, in a buffer of doubles (matrices hold float or double).
      const std::int64_t nflags = kernels::add_rows_chained_flags(n, k, p);
      Matrix<double> flags_g = device_matrix<double>(ctx(), nflags / 2 + 1, 1);
      kernels::cpu::add_rows_chained<T>(cpu.impl(), r.view(), u.view(), d.view(), e.view(),
                                        VectorView<T>(tau.data(), scalars), VectorView<int>());
      kernels::cuda::add_rows_chained<T>(
          ctx().impl(), r_g.view(), u_g.view(), d_g.view(), e_g.view(), vec(tau_g),
          VectorView<int>(reinterpret_cast<int*>(flags_g.data()), nflags, MemorySpace::device,
                          ctx().device()));
      const double tol = bound<T>(10 * n * p);
      EXPECT_LT(entry_diff(to_host(ctx(), r_g), r), tol);
      EXPECT_LT(entry_diff(to_host(ctx(), u_g), u), tol);
      EXPECT_LT(entry_diff(lead(to_host(ctx(), tau_g), chunks * n, 1), lead(tau, chunks * n, 1)),
                tol);
      if (k > 0) {
        EXPECT_LT(entry_diff(to_host(ctx(), d_g), d), tol);
        EXPECT_LT(entry_diff(to_host(ctx(), e_g), e), tol);
      }
    }
  }));
}

TEST_P(QrUpdateCudaTwins, DeletionRotationsMatch) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    // The segmented angle kernel: one segment of pivots per row (p <= 32), two (33), four
    // (96, 100: the batch size of remove_rows), five (130, float only: the rings of double
    // rotations exceed the shared memory there). Both angle kernels: GPUQR_REMOVE_ROTATIONS=0
    // selects the per-row one, read per call.
    std::vector<std::pair<std::int64_t, std::int64_t>> cases = {{1, 9}, {5, 40}, {17, 3},
                                                                {33, 70}, {96, 130}, {100, 211}};
    if (sizeof(T) == 4) cases.push_back({130, 150});
    for (int per_row = 0; per_row < 2; ++per_row)
    for (auto [p, n] : cases) {
      if (per_row == 1 && p > 100) continue;  // the per-row kernel's triangle does not fit
      SCOPED_TRACE("p " + std::to_string(p) + " n " + std::to_string(n) + " per-row " +
                   std::to_string(per_row));
      struct Knob {  // restores the default even when an expectation throws
        explicit Knob(bool on) { if (on) setenv("GPUQR_REMOVE_ROTATIONS", "0", 1); }
        ~Knob() { unsetenv("GPUQR_REMOVE_ROTATIONS"); }
      } knob(per_row == 1);
      Matrix<T> z = random_matrix<T>(p, n + p, 10 + p);
      const Matrix<T> z_g0 = to_ctx<T>(ctx(), z.view());
      Matrix<T> z_g = z_g0.clone();
      Matrix<T> c(n, p), s(n, p);
      Matrix<T> c_g = device_matrix<T>(ctx(), n, p), s_g = device_matrix<T>(ctx(), n, p);
      kernels::cpu::deletion_rotations<T>(cpu.impl(), z.view(), c.view(), s.view());
      kernels::cuda::deletion_rotations<T>(ctx().impl(), z_g.view(), c_g.view(), s_g.view());
      EXPECT_LT(entry_diff(to_host(ctx(), c_g), c), bound<T>(n * p));
      EXPECT_LT(entry_diff(to_host(ctx(), s_g), s), bound<T>(n * p));
      if (per_row == 1) continue;  // the application does not depend on the angle kernel
      // Their application: lines as rows (Q), as columns (d), triangular (R^T).
      const std::int64_t lines = 150;
      for (int variant = 0; variant < 3; ++variant) {
        const bool rows = variant != 1, tri = variant == 2;
        Matrix<T> x = rows ? random_matrix<T>(tri ? n : lines, n, 20) : random_matrix<T>(n, lines, 20);
        if (tri)
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < j; ++i) x(i, j) = T(0);  // R^T is lower triangular
        Matrix<T> acc = tri ? Matrix<T>() : (rows ? random_matrix<T>(lines, p, 21)
                                                  : random_matrix<T>(p, lines, 21));
        Matrix<T> x_g = to_ctx<T>(ctx(), x.view());
        Matrix<T> acc_g = tri ? Matrix<T>() : to_ctx<T>(ctx(), acc.view());
        kernels::cpu::apply_deletion_rotations<T>(cpu.impl(), c.view(), s.view(), x.view(),
                                                  acc.view(), rows, tri);
        const Matrix<T> c_h = to_ctx<T>(ctx(), c.view()), s_h = to_ctx<T>(ctx(), s.view());
        kernels::cuda::apply_deletion_rotations<T>(ctx().impl(), c_h.view(), s_h.view(),
                                                   x_g.view(), acc_g.view(), rows, tri);
        EXPECT_LT(entry_diff(to_host(ctx(), x_g), x), bound<T>(n * p)) << "variant " << variant;
        if (!tri) EXPECT_LT(entry_diff(to_host(ctx(), acc_g), acc), bound<T>(n * p));
      }
    }
  }));
}

TEST_P(QrUpdateCudaTwins, AccumulatedRotationBlocksMatch) {
  // Rotations as deletion_rotations makes them (c^2 + s^2 = 1), blocks of nb positions from
  // the last one down, the first block partial unless nb divides n; the G buffer is wider
  // than the blocks need (its last columns stay as they were, on both sides).
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    for (auto [p, n, nb] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 9, 4},
                            {17, 300, 128}, {100, 260, 128}, {5, 40, 40}, {130, 70, 32}}) {
      SCOPED_TRACE("p " + std::to_string(p) + " n " + std::to_string(n) + " nb " +
                   std::to_string(nb));
      Matrix<T> z = random_matrix<T>(p, n + p, 40 + p), c(n, p), s(n, p);
      kernels::cpu::deletion_rotations<T>(cpu.impl(), z.view(), c.view(), s.view());
      const std::int64_t blocks = (n + nb - 1) / nb;
      Matrix<T> g = random_matrix<T>(nb + p, (blocks + 1) * (nb + p), 41);
      Matrix<T> g_g = to_ctx<T>(ctx(), g.view());
      const Matrix<T> c_g = to_ctx<T>(ctx(), c.view()), s_g = to_ctx<T>(ctx(), s.view());
      kernels::cpu::accumulate_deletion_rotations<T>(cpu.impl(), c.view(), s.view(), nb, g.view());
      kernels::cuda::accumulate_deletion_rotations<T>(ctx().impl(), c_g.view(), s_g.view(), nb,
                                                      g_g.view());
      EXPECT_LT(entry_diff(to_host(ctx(), g_g), g), bound<T>(nb * p));
      // And the twin itself: G_0 applied to lines equals the rotations applied to them.
      const std::int64_t w = std::min(nb, n), wp = w + p;
      Matrix<T> x = random_matrix<T>(7, w, 42), acc = random_matrix<T>(7, p, 43), xa(7, wp);
      for (std::int64_t i = 0; i < 7; ++i) {
        for (std::int64_t k = 0; k < wp; ++k) {
          double sum = 0;
          for (std::int64_t l = 0; l < wp; ++l)
            sum += double(l < w ? x(i, l) : acc(i, l - w)) * double(g(l, k));
          xa(i, k) = T(sum);
        }
      }
      kernels::cpu::apply_deletion_rotations<T>(cpu.impl(), c.view().block(n - w, 0, w, p),
                                                s.view().block(n - w, 0, w, p), x.view(),
                                                acc.view(), true, false);
      double diff = 0;
      for (std::int64_t i = 0; i < 7; ++i)
        for (std::int64_t k = 0; k < wp; ++k)
          diff = std::max(diff, std::abs(double(xa(i, k)) - double(k < w ? x(i, k) : acc(i, k - w))));
      EXPECT_LT(diff, bound<T>(w * p) * std::sqrt(double(wp)));
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, QrUpdateCudaTwins, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
