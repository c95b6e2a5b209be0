// UpdatableQR column updates (issue 6): remove_columns, add_columns, update_rank_k. After each
// step the object is compared with a fresh factorization of the tracked A~ (||QR - A||,
// ||Q^T Q - I||, |diag R|, the solution and residuals). Every backend and precision; block
// widths are forced small (GPUQR_UPDATE_NB) so that the small test sizes cross many panels and
// windows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <string>

#include "src/core/dense_drivers.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/update_columns_checks.hpp"

namespace gpuqr::testing {
namespace {

class QrUpdateColumnsTest : public BackendTest {};

/// Sets GPUQR_UPDATE_NB for the scope (empty: the default).
class BlockWidth {
 public:
  explicit BlockWidth(const std::string& nb) {
    if (nb.empty()) {
      unsetenv("GPUQR_UPDATE_NB");
    } else {
      setenv("GPUQR_UPDATE_NB", nb.c_str(), 1);
    }
  }
  ~BlockWidth() { unsetenv("GPUQR_UPDATE_NB"); }
};

std::string mode_name(UpdateQ mode) {
  return mode == UpdateQ::full ? "full" : (mode == UpdateQ::thin ? "thin" : "none");
}

TEST_P(QrUpdateColumnsTest, RemoveColumnsAtEveryPositionAndSize) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 1000;
    for (const std::string nb : {"", "3"}) {
      BlockWidth width(nb);
      for (UpdateQ mode : {UpdateQ::full, UpdateQ::thin, UpdateQ::none}) {
        for (std::int64_t p : {1, 4, 17}) {
          for (int where = 0; where < 3; ++where) {
            const std::int64_t m = 50, n = 24;
            TrackedColumns<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 2, seed++)};
            UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), mode);
            const std::int64_t k = where == 0 ? 0 : (where == 1 ? (n - p) / 2 : n - p);
            SCOPED_TRACE("nb '" + nb + "' mode " + mode_name(mode) + " p " + std::to_string(p) +
                         " k " + std::to_string(k));
            const UpdateInfo info = qr.remove_columns(k, p);
            EXPECT_EQ(info.blocks > 0, k + p < n);
            EXPECT_FALSE(info.refactored);
            t.erase_cols(k, p);
            expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
          }
        }
      }
    }
  }));
}

// Wide enough for full default-width panels (64 on the CPU, 128 on CUDA), each Q mode.
TEST_P(QrUpdateColumnsTest, RemoveColumnsWithFullWidthPanels) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 1500;
    for (UpdateQ mode : {UpdateQ::none, UpdateQ::thin, UpdateQ::full}) {
      const std::int64_t m = 400, n = 300;
      TrackedColumns<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 1, seed++)};
      UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), mode);
      SCOPED_TRACE("mode " + mode_name(mode));
      qr.remove_columns(0, 7);
      t.erase_cols(0, 7);
      qr.remove_columns(100, 40);
      t.erase_cols(100, 40);
      expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
    }
  }));
}

TEST_P(QrUpdateColumnsTest, AddColumnsAtEveryPositionAndSize) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 2000;
    for (const std::string nb : {"", "4", "1"}) {
      BlockWidth width(nb);
      for (std::int64_t p : {1, 5, 23}) {
        for (int where = 0; where < 3; ++where) {
          const std::int64_t m = 60, n = 14;
          TrackedColumns<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 3, seed++)};
          UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
          // Rows added first, so that Q's storage order is not A~'s row order.
          const Matrix<T> rows = random_matrix<T>(3, n, seed++), e = random_matrix<T>(3, 3, seed++);
          qr.add_rows(7, rows.view(), e.view());
          t.insert_rows(7, rows, e);
          const std::int64_t k = where == 0 ? 0 : (where == 1 ? n / 2 : n);
          SCOPED_TRACE("nb '" + nb + "' p " + std::to_string(p) + " k " + std::to_string(k));
          const Matrix<T> u = random_matrix<T>(qr.rows(), p, seed++);
          const UpdateInfo info = qr.add_columns(k, u.view());
          EXPECT_GE(info.blocks, 1);
          t.insert_cols(k, u);
          expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
        }
      }
    }
  }));
}

TEST_P(QrUpdateColumnsTest, TallInnerQrByCertifiedCholeskyQr) {
  // The inner QRs of tall blocks (the lower part of Q^T U when adding columns, the removed
  // rows' part of Q when removing rows) go on CUDA through tsqr_geqrf's certified CholeskyQR2
  // with the Householder vectors reconstructed (by default only for 128..256 columns and 30x as
  // many rows; forced here for small shapes). Nearly dependent new columns make that block
  // ill-conditioned, so the certificate's fallback (shifted CholeskyQR3, then Householder)
  // runs as well. On the CPU the same steps use LAPACK throughout: the test compares both with
  // a fresh factorization.
  struct Reset {
    ~Reset() { detail::run_geqrf_tall_mode(-1); }
  } reset;
  detail::run_geqrf_tall_mode(1);
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 2700;
    // Condition numbers past CholeskyQR2's reach (so its certificate fails), pivots still
    // above the update's dependence check (max(m, n) eps).
    const double tiny = sizeof(T) == 8 ? 1e-9 : 1e-3;
    for (bool dependent : {false, true}) {
      const std::int64_t m = 240, n = 30, p = 12;
      SCOPED_TRACE(dependent ? "nearly dependent new columns" : "random new columns");
      TrackedColumns<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 2, seed++)};
      UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
      Matrix<T> u = random_matrix<T>(m, p, seed++);
      if (dependent) {
        const Matrix<T> noise = random_matrix<T>(m, p, seed++);
        for (std::int64_t j = 1; j < p; ++j)
          for (std::int64_t i = 0; i < m; ++i)
            u(i, j) = static_cast<T>(double(u(i, 0)) + tiny * double(noise(i, j)) * (j + 1));
      }
      // The factorization itself (backward error, orthogonality) must be as good as ever; the
      // least-squares comparisons of expect_close_to_fresh assume a well-conditioned A~.
      auto check = [&]() {
        const ColumnChecks c = compare_with_fresh(ctx(), qr, t);
        if (dependent) {
          EXPECT_LT(c.backward, 30.0);
          EXPECT_LT(c.orthogonality, 30.0);
        } else {
          expect_close_to_fresh(c);
        }
      };
      qr.add_columns(n, u.view());
      t.insert_cols(n, u);
      check();
      qr.remove_rows(17, 20);  // the removed rows' part of Q: 198 x 20, tall
      t.erase_rows(17, 20);
      check();
    }
  }));
}

TEST_P(QrUpdateColumnsTest, AddColumnsUpToSquare) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 30, n = 20;
    TrackedColumns<T> t{random_matrix<T>(m, n, 2500), random_matrix<T>(m, 1, 2501)};
    UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
    const Matrix<T> u = random_matrix<T>(m, m - n, 2502);
    qr.add_columns(9, u.view());  // m = n after the update: no residual left
    t.insert_cols(9, u);
    const ColumnChecks c = compare_with_fresh(ctx(), qr, t);
    EXPECT_LT(c.backward, 30.0);
    EXPECT_LT(c.orthogonality, 30.0);
    EXPECT_LT(c.diag_diff, 1e4);
  }));
}

TEST_P(QrUpdateColumnsTest, RankKUpdates) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 3000;
    for (const std::string nb : {"", "4"}) {
      BlockWidth width(nb);
      // (m, n, r): r < m - n, r > m - n, m = n (no complement), r > n.
      const std::int64_t shapes[][3] = {{40, 12, 1}, {40, 12, 5}, {20, 17, 6}, {16, 16, 3},
                                        {30, 6, 9}};
      for (const auto& s : shapes) {
        const std::int64_t m = s[0], n = s[1], r = s[2];
        SCOPED_TRACE("nb '" + nb + "' m " + std::to_string(m) + " n " + std::to_string(n) +
                     " r " + std::to_string(r));
        TrackedColumns<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 2, seed++)};
        UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
        // Small U V^T keeps A~ well conditioned.
        Matrix<T> u = random_matrix<T>(m, r, seed++);
        const Matrix<T> v = random_matrix<T>(n, r, seed++);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < r; ++j) u(i, j) = T(0.3) * u(i, j);
        qr.update_rank_k(u.view(), v.view());
        t.add_rank_k(u, v);
        expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
      }
    }
  }));
}

TEST_P(QrUpdateColumnsTest, LongMixedRowAndColumnSequence) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    BlockWidth width("5");
    const std::int64_t steps = 300;
    std::mt19937_64 rng(4242);
    std::uint64_t seed = 5000;
    TrackedColumns<T> t{random_matrix<T>(40, 10, seed++), random_matrix<T>(40, 2, seed++)};
    UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
    double worst_orth = 0, worst_backward = 0;
    for (std::int64_t step = 1; step <= steps; ++step) {
      const std::int64_t m = qr.rows(), n = qr.cols();
      const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 4);
      switch (rng() % 5) {
        case 0: {  // add rows
          if (m > 70) break;
          const std::int64_t k = static_cast<std::int64_t>(rng() % (m + 1));
          const Matrix<T> u = random_matrix<T>(p, n, seed++), e = random_matrix<T>(p, 2, seed++);
          qr.add_rows(k, u.view(), e.view());
          t.insert_rows(k, u, e);
          break;
        }
        case 1: {  // remove rows
          if (m - p < n + 8) break;
          const std::int64_t k = static_cast<std::int64_t>(rng() % (m - p + 1));
          qr.remove_rows(k, p);
          t.erase_rows(k, p);
          break;
        }
        case 2: {  // add columns
          if (n + p > 18 || n + p + 8 > m) break;
          const std::int64_t k = static_cast<std::int64_t>(rng() % (n + 1));
          const Matrix<T> u = random_matrix<T>(m, p, seed++);
          qr.add_columns(k, u.view());
          t.insert_cols(k, u);
          break;
        }
        case 3: {  // remove columns
          if (n - p < 3) break;
          const std::int64_t k = static_cast<std::int64_t>(rng() % (n - p + 1));
          qr.remove_columns(k, p);
          t.erase_cols(k, p);
          break;
        }
        default: {  // rank k, small
          Matrix<T> u = random_matrix<T>(m, p, seed++);
          const Matrix<T> v = random_matrix<T>(n, p, seed++);
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < p; ++j) u(i, j) = T(0.1) * u(i, j);
          qr.update_rank_k(u.view(), v.view());
          t.add_rank_k(u, v);
        }
      }
      if (step % 20 == 0 || step == steps) {
        const ColumnChecks c = compare_with_fresh(ctx(), qr, t);
        worst_orth = std::max(worst_orth, c.orthogonality);
        worst_backward = std::max(worst_backward, c.backward);
        if (step % 100 == 0) {
          std::cout << "  step " << step << ": " << qr.rows() << " x " << qr.cols()
                    << ", orthogonality " << c.orthogonality << ", backward error "
                    << c.backward << "\n";
        }
        expect_close_to_fresh(c, 10.0);  // drift: the bound grows with the sequence
      }
    }
    track("columns sequence orthogonality drift (300 steps)", worst_orth);
    track("columns sequence backward error (300 steps)", worst_backward);
  }));
}

TEST_P(QrUpdateColumnsTest, BadInputIsAClearErrorAndChangesNothing) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 25, n = 6;
    const Matrix<T> a = random_matrix<T>(m, n, 6000), b = random_matrix<T>(m, 2, 6001);
    UpdatableQR<T> qr(ctx(), a.view(), b.view(), UpdateQ::full);
    const ColumnSnapshot<T> before(ctx(), qr);
    EXPECT_THROW(qr.remove_columns(-1, 1), InvalidArgument);
    EXPECT_THROW(qr.remove_columns(0, -1), InvalidArgument);
    EXPECT_THROW(qr.remove_columns(4, 3), InvalidArgument);
    EXPECT_THROW(qr.remove_columns(0, n), InvalidArgument);  // all columns
    const Matrix<T> u = random_matrix<T>(m, 2, 6002);
    EXPECT_THROW(qr.add_columns(-1, u.view()), InvalidArgument);
    EXPECT_THROW(qr.add_columns(n + 1, u.view()), InvalidArgument);
    EXPECT_THROW(qr.add_columns(0, random_matrix<T>(m - 1, 2, 6003).view()), InvalidArgument);
    EXPECT_THROW(qr.add_columns(0, random_matrix<T>(m, m - n + 1, 6004).view()), InvalidArgument);
    Matrix<T> bad = u.clone();
    bad(3, 1) = std::numeric_limits<T>::quiet_NaN();
    EXPECT_THROW(qr.add_columns(2, bad.view()), InvalidArgument);
    bad(3, 1) = std::numeric_limits<T>::infinity();
    EXPECT_THROW(qr.add_columns(2, bad.view()), InvalidArgument);
    // Rank deficient: a copy of A's column 4, a combination of columns, a zero column.
    Matrix<T> dep = u.clone();
    for (std::int64_t i = 0; i < m; ++i) dep(i, 1) = a(i, 4);
    try {
      qr.add_columns(2, dep.view());
      ADD_FAILURE() << "a column of A~ added again was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("rank deficient"), std::string::npos) << e.what();
    }
    for (std::int64_t i = 0; i < m; ++i) dep(i, 1) = T(2) * dep(i, 0) - a(i, 1);
    EXPECT_THROW(qr.add_columns(0, dep.view()), InvalidArgument);
    for (std::int64_t i = 0; i < m; ++i) dep(i, 1) = T(0);
    EXPECT_THROW(qr.add_columns(n, dep.view()), InvalidArgument);
    // Rank k: shapes and values.
    const Matrix<T> v = random_matrix<T>(n, 2, 6005);
    EXPECT_THROW(qr.update_rank_k(u.view(), random_matrix<T>(n + 1, 2, 6006).view()), InvalidArgument);
    EXPECT_THROW(qr.update_rank_k(u.view(), random_matrix<T>(n, 1, 6007).view()), InvalidArgument);
    EXPECT_THROW(qr.update_rank_k(random_matrix<T>(m + 1, 2, 6008).view(), v.view()), InvalidArgument);
    Matrix<T> bad_v = v.clone();
    bad_v(0, 0) = std::numeric_limits<T>::quiet_NaN();
    EXPECT_THROW(qr.update_rank_k(u.view(), bad_v.view()), InvalidArgument);
    before.expect_same(ctx(), qr);
    // Q modes that cannot add columns.
    for (UpdateQ mode : {UpdateQ::thin, UpdateQ::none}) {
      UpdatableQR<T> other(ctx(), a.view(), b.view(), mode);
      const ColumnSnapshot<T> other_before(ctx(), other);
      try {
        other.add_columns(1, u.view());
        ADD_FAILURE() << "add_columns without the full Q was accepted";
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("UpdateQ::full"), std::string::npos) << e.what();
      }
      EXPECT_THROW(other.update_rank_k(u.view(), v.view()), InvalidArgument);
      EXPECT_THROW(other.set_policy(UpdatePolicy::automatic), InvalidArgument);
      other_before.expect_same(ctx(), other);
    }
    // Empty updates are no-ops.
    qr.remove_columns(3, 0);
    qr.add_columns(2, MatrixView<const T>(nullptr, m, 0, m));
    qr.update_rank_k(MatrixView<const T>(nullptr, m, 0, m), MatrixView<const T>(nullptr, n, 0, n));
    before.expect_same(ctx(), qr);
  }));
}

TEST_P(QrUpdateColumnsTest, InputsFromEitherSpaceGiveTheSameFactors) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = random_matrix<T>(30, 6, 7000), b = random_matrix<T>(30, 1, 7001);
    const Matrix<T> u = random_matrix<T>(30, 3, 7002);
    UpdatableQR<T> from_host(ctx(), a.view(), b.view());
    from_host.add_columns(2, u.view());
    const Matrix<T> u_c = to_ctx<T>(ctx(), u.view());
    UpdatableQR<T> from_ctx(ctx(), a.view(), b.view());
    from_ctx.add_columns(2, u_c.view());
    const Matrix<T> r1 = to_host(ctx(), from_host.matrix_r());
    const Matrix<T> r2 = to_host(ctx(), from_ctx.matrix_r());
    EXPECT_EQ(accuracy::relative_difference<T>(r1.view(), r2.view()), 0.0);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, QrUpdateColumnsTest, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
