// UpdatableQR (issue 5): after each row update, the object is compared with a fresh
// factorization of the updated matrix A~, which the test tracks on the host: ||Q~R~ - A~||,
// ||Q~^T Q~ - I||, the least-squares solution and residuals. Runs for every backend and
// precision (CUDA cases skip without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/update.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"
#include "tests/support/update_columns_checks.hpp"

namespace gpuqr::testing {
namespace {

constexpr double kBound = 30.0;

class QrUpdateTest : public BackendTest {};

/// A~ and b~ as the test sees them: host rows, in order.
template <class T>
struct Tracked {
  Matrix<T> a, b;
  void insert(std::int64_t k, const Matrix<T>& u, const Matrix<T>& e) {
    a = stack(a, k, u);
    b = stack(b, k, e);
  }
  void erase(std::int64_t k, std::int64_t p) {
    a = cut(a, k, p);
    b = cut(b, k, p);
  }
  static Matrix<T> stack(const Matrix<T>& x, std::int64_t k, const Matrix<T>& y) {
    return rows_inserted(x, k, y);
  }
  static Matrix<T> cut(const Matrix<T>& x, std::int64_t k, std::int64_t p) {
    return rows_erased(x, k, p);
  }
};

struct Checked {
  double backward = 0, orthogonality = 0, optimality = 0, x_diff = 0, res_diff = 0;
};

/// Compares the object with the tracked A~, b~ and with a fresh HouseholderQR of them.
template <class T>
Checked check_against_fresh(const Context& ctx, const UpdatableQR<T>& qr, const Tracked<T>& t) {
  Checked out;
  const std::int64_t m = t.a.rows(), n = t.a.cols();
  EXPECT_EQ(qr.rows(), m);
  EXPECT_EQ(qr.cols(), n);
  const Matrix<T> r = to_host(ctx, qr.matrix_r());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) EXPECT_EQ(r(i, j), T(0));
  if (qr.q_mode() != UpdateQ::none) {
    const Matrix<T> q = to_host(ctx, qr.matrix_q());
    EXPECT_EQ(q.cols(), qr.q_mode() == UpdateQ::full ? m : n);
    const Matrix<T> q1 = Matrix<T>::copy_of(MatrixView<const T>(q.view().block(0, 0, m, n)));
    out.backward = accuracy::qr_backward_error<T>(t.a.view(), q1.view(), r.view());
    out.orthogonality = accuracy::orthogonality<T>(q.view());
  }
  LstsqInfo info, fresh_info;
  const Matrix<T> x = to_host(ctx, qr.solve(&info));
  HouseholderQR<T> fresh(Context::cpu(), t.a.view());
  const Matrix<T> xf = fresh.solve(t.b.view(), &fresh_info);
  EXPECT_FALSE(info.singular());
  out.optimality = accuracy::lstsq_optimality_ratio<T>(t.a.view(), x.view(), t.b.view());
  // x and the residuals agree with the fresh solve up to the conditioning.
  const double scale = accuracy::eps<T>() / std::max(fresh_info.rcond_estimate, 1e-300);
  out.x_diff = accuracy::relative_difference<T>(x.view(), xf.view()) / scale;
  EXPECT_EQ(info.residual_norms.size(), fresh_info.residual_norms.size());
  for (std::size_t j = 0; j < info.residual_norms.size(); ++j) {
    double bnorm = 0;
    for (std::int64_t i = 0; i < m; ++i) bnorm += double(t.b(i, j)) * double(t.b(i, j));
    out.res_diff = std::max(out.res_diff, std::abs(info.residual_norms[j] -
                                                   fresh_info.residual_norms[j]) /
                                              (std::sqrt(bnorm) * scale));
  }
  return out;
}

template <class T>
void expect_good(const Checked& c, double drift_bound = kBound) {
  EXPECT_LT(track("update backward error", c.backward), drift_bound);
  EXPECT_LT(track("update orthogonality", c.orthogonality), drift_bound);
  EXPECT_LT(track("update lstsq optimality", c.optimality), drift_bound);
  EXPECT_LT(track("update x vs fresh (eps/rcond)", c.x_diff), 1000.0);
  EXPECT_LT(track("update residual vs fresh (eps/rcond)", c.res_diff), 1000.0);
}

TEST_P(QrUpdateTest, AddRowsAtEveryPositionAndSize) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 500;
    for (UpdateQ mode : {UpdateQ::full, UpdateQ::thin, UpdateQ::none}) {
      const std::int64_t m0 = 40, n = 12;
      Tracked<T> t{random_matrix<T>(m0, n, seed++), random_matrix<T>(m0, 2, seed++)};
      UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), mode);
      expect_good<T>(check_against_fresh(ctx(), qr, t));
      for (std::int64_t p : {1, 5, 70}) {
        for (int where = 0; where < 3; ++where) {
          const std::int64_t m = qr.rows();
          const std::int64_t k = where == 0 ? 0 : (where == 1 ? m / 2 : m);
          SCOPED_TRACE("mode " + std::to_string(int(mode)) + " p " + std::to_string(p) +
                       " k " + std::to_string(k));
          const Matrix<T> u = random_matrix<T>(p, n, seed++);
          const Matrix<T> e = random_matrix<T>(p, 2, seed++);
          const UpdateInfo info = qr.add_rows(k, u.view(), e.view());
          EXPECT_GE(info.blocks, 1);
          t.insert(k, u, e);
          expect_good<T>(check_against_fresh(ctx(), qr, t));
        }
      }
    }
  }));
}

// Without Q, add_rows takes the chained reduction (one kernel on CUDA: tiles of 32 columns
// handed from warp to warp, chunks of 16 rows as a wavefront) for p <= 16 everywhere and for
// more rows on CUDA; GPUQR_ADD_CHAINED=0 forces the blocked path there, and both are checked.
// n = 100 spans four tiles, the last one partial and shared with d's columns; p = 16 is one
// full chunk, 17 and 33 a partial second / third, 150 ten chunks.
TEST_P(QrUpdateTest, AddRowsWithoutQSpanningTiles) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 700;
    for (const char* knob : {"1", "0"})
      for (std::int64_t nrhs : {3, 0, 40}) {
        struct Knob {  // restores the default even when an expectation throws
          explicit Knob(const char* v) { setenv("GPUQR_ADD_CHAINED", v, 1); }
          ~Knob() { unsetenv("GPUQR_ADD_CHAINED"); }
        } forced(knob);
        const std::int64_t m0 = 130, n = 100;
        Tracked<T> t{random_matrix<T>(m0, n, seed++), random_matrix<T>(m0, nrhs, seed++)};
        UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::none);
        for (std::int64_t p : {1, 16, 17, 33, 7, 150}) {
          const std::int64_t k = (qr.rows() * p) % (qr.rows() + 1);
          SCOPED_TRACE("GPUQR_ADD_CHAINED " + std::string(knob) + " nrhs " + std::to_string(nrhs) +
                       " p " + std::to_string(p));
          const Matrix<T> u = random_matrix<T>(p, n, seed++);
          const Matrix<T> e = random_matrix<T>(p, nrhs, seed++);
          qr.add_rows(k, u.view(), e.view());
          t.insert(k, u, e);
          if (nrhs > 0) {
            expect_good<T>(check_against_fresh(ctx(), qr, t));
          } else {  // no right-hand sides: R against a fresh R, by |diag R|
            const Matrix<T> r = to_host(ctx(), qr.matrix_r());
            HouseholderQR<T> fresh(Context::cpu(), t.a.view());
            const Matrix<T> rf = fresh.matrix_r();
            double worst = 0, size = 0;
            for (std::int64_t j = 0; j < n; ++j) {
              worst =
                  std::max(worst, std::abs(std::abs(double(r(j, j))) - std::abs(double(rf(j, j)))));
              size = std::max(size, std::abs(double(rf(j, j))));
            }
            EXPECT_LT(worst / size, 1000.0 * accuracy::eps<T>());
          }
        }
      }
  }));
}

TEST_P(QrUpdateTest, RemoveRowsAtEveryPositionAndSize) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 600;
    for (std::int64_t p : {1, 4, 30, 120}) {  // 120 > kRemoveBatch: two batches
      for (int where = 0; where < 3; ++where) {
        const std::int64_t m = 160, n = 14;
        Tracked<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 3, seed++)};
        UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
        const std::int64_t k = where == 0 ? 0 : (where == 1 ? (m - p) / 2 : m - p);
        SCOPED_TRACE("p " + std::to_string(p) + " k " + std::to_string(k));
        const UpdateInfo info = qr.remove_rows(k, p);
        EXPECT_EQ(info.rotations, n * p);
        EXPECT_EQ(info.batches, (p + UpdatableQR<T>::kRemoveBatch - 1) / UpdatableQR<T>::kRemoveBatch);
        t.erase(k, p);
        expect_good<T>(check_against_fresh(ctx(), qr, t));
      }
    }
    // Down to m = n exactly.
    const std::int64_t n = 9;
    Tracked<T> t{random_matrix<T>(20, n, seed++), random_matrix<T>(20, 1, seed++)};
    UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view());
    qr.remove_rows(3, 11);
    t.erase(3, 11);
    expect_good<T>(check_against_fresh(ctx(), qr, t));
  }));
}

TEST_P(QrUpdateTest, RemoveRowsBlockedRotationsAcrossSeveralBlocks) {
  // n = 300 spans three blocks of positions (128 each) in the blocked application of the
  // deletion's rotations (p >= 8); p = 130 also splits into two batches. Every position. The
  // blocks' G's are built max(m, nrhs) / (128 + p) blocks per launch: one launch for p = 8
  // and 17, two for p = 41, 100 and 130 (both batches), so the group loop is exercised.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    std::uint64_t seed = 650;
    for (std::int64_t p : {8, 17, 41, 100, 130}) {
      for (int where = 0; where < 3; ++where) {
        const std::int64_t m = 460, n = 300;
        Tracked<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 2, seed++)};
        UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
        const std::int64_t k = where == 0 ? 0 : (where == 1 ? (m - p) / 2 : m - p);
        SCOPED_TRACE("p " + std::to_string(p) + " k " + std::to_string(k));
        const UpdateInfo info = qr.remove_rows(k, p);
        EXPECT_EQ(info.rotations, n * p);
        t.erase(k, p);
        expect_good<T>(check_against_fresh(ctx(), qr, t));
      }
    }
  }));
}

TEST_P(QrUpdateTest, RemoveRowsPerBlockRotationsKnob) {
  // GPUQR_REMOVE_ROTATIONS=0 (a measurement knob): each block's G by its own launch, and on
  // CUDA the per-row angle kernel; the result must be as good as the default's.
  GPUQR_FOR_PRECISION(([&]<class T>() {
    struct Knob {  // restores the default even when an expectation throws
      Knob() { setenv("GPUQR_REMOVE_ROTATIONS", "0", 1); }
      ~Knob() { unsetenv("GPUQR_REMOVE_ROTATIONS"); }
    } knob;
    std::uint64_t seed = 680;
    for (std::int64_t p : {17, 100}) {
      const std::int64_t m = 420, n = 260, k = p == 17 ? 5 : m - p;
      Tracked<T> t{random_matrix<T>(m, n, seed++), random_matrix<T>(m, 2, seed++)};
      UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
      SCOPED_TRACE("p " + std::to_string(p) + " k " + std::to_string(k));
      qr.remove_rows(k, p);
      t.erase(k, p);
      expect_good<T>(check_against_fresh(ctx(), qr, t));
    }
  }));
}

TEST_P(QrUpdateTest, LongMixedSequenceKeepsOrthogonality) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t n = 7, steps = 300;
    std::mt19937_64 rng(77);
    std::uint64_t seed = 700;
    Tracked<T> t{random_matrix<T>(24, n, seed++), random_matrix<T>(24, 2, seed++)};
    UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
    double worst_orth = 0, worst_backward = 0;
    for (std::int64_t step = 1; step <= steps; ++step) {
      const std::int64_t m = qr.rows();
      const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 6);
      const bool add = m - p < n + 3 || (m <= 60 && rng() % 2 == 0);
      const std::int64_t k = static_cast<std::int64_t>(rng() % (add ? m + 1 : m - p + 1));
      if (add) {
        const Matrix<T> u = random_matrix<T>(p, n, seed++);
        const Matrix<T> e = random_matrix<T>(p, 2, seed++);
        qr.add_rows(k, u.view(), e.view());
        t.insert(k, u, e);
      } else {
        qr.remove_rows(k, p);
        t.erase(k, p);
      }
      if (step % 10 == 0 || step == steps) {
        const Checked c = check_against_fresh(ctx(), qr, t);
        worst_orth = std::max(worst_orth, c.orthogonality);
        worst_backward = std::max(worst_backward, c.backward);
        if (step % 50 == 0) {
          std::cout << "  step " << step << ": m = " << qr.rows() << ", orthogonality "
                    << c.orthogonality << ", backward error " << c.backward << "\n";
        }
        // Drift: rounding accumulates over the sequence, so the bound grows with it.
        expect_good<T>(c, 10.0 * kBound);
      }
    }
    track("sequence orthogonality drift (300 steps)", worst_orth);
    track("sequence backward error (300 steps)", worst_backward);
  }));
}

TEST_P(QrUpdateTest, InputsFromEitherSpaceGiveTheSameFactors) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = random_matrix<T>(30, 6, 800), b = random_matrix<T>(30, 1, 801);
    const Matrix<T> u = random_matrix<T>(4, 6, 802), e = random_matrix<T>(4, 1, 803);
    UpdatableQR<T> from_host(ctx(), a.view(), b.view());
    from_host.add_rows(7, u.view(), e.view());
    const Matrix<T> a_c = to_ctx<T>(ctx(), a.view()), b_c = to_ctx<T>(ctx(), b.view());
    const Matrix<T> u_c = to_ctx<T>(ctx(), u.view()), e_c = to_ctx<T>(ctx(), e.view());
    UpdatableQR<T> from_ctx(ctx(), a_c.view(), b_c.view());
    from_ctx.add_rows(7, u_c.view(), e_c.view());
    const Matrix<T> r1 = to_host(ctx(), from_host.matrix_r());
    const Matrix<T> r2 = to_host(ctx(), from_ctx.matrix_r());
    EXPECT_EQ(accuracy::relative_difference<T>(r1.view(), r2.view()), 0.0);
    EXPECT_EQ(from_host.row_order(), from_ctx.row_order());
  }));
}

/// R, d (bitwise), m and the row order, to show that a failed call changed nothing.
template <class T>
struct Snapshot {
  Matrix<T> r, d;
  std::int64_t m;
  std::vector<std::int64_t> order;
  Snapshot(const Context& ctx, const UpdatableQR<T>& qr)
      : r(to_host(ctx, qr.matrix_r())), d(to_host(ctx, qr.matrix_d())), m(qr.rows()),
        order(qr.row_order()) {}
  void expect_same(const Context& ctx, const UpdatableQR<T>& qr) const {
    const Matrix<T> r2 = to_host(ctx, qr.matrix_r()), d2 = to_host(ctx, qr.matrix_d());
    ASSERT_EQ(qr.rows(), m);
    EXPECT_EQ(qr.row_order(), order);
    EXPECT_EQ(std::memcmp(r.data(), r2.data(), sizeof(T) * r.rows() * r.cols()), 0);
    EXPECT_EQ(std::memcmp(d.data(), d2.data(), sizeof(T) * d.rows() * d.cols()), 0);
  }
};

TEST_P(QrUpdateTest, BadInputIsAClearErrorAndChangesNothing) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 25, n = 6;
    const Matrix<T> a = random_matrix<T>(m, n, 900), b = random_matrix<T>(m, 2, 901);
    UpdatableQR<T> qr(ctx(), a.view(), b.view(), UpdateQ::full);
    qr.add_rows(3, random_matrix<T>(2, n, 902).view(), random_matrix<T>(2, 2, 903).view());
    const Snapshot<T> before(ctx(), qr);
    const Matrix<T> u = random_matrix<T>(3, n, 904), e = random_matrix<T>(3, 2, 905);
    EXPECT_THROW(qr.add_rows(-1, u.view(), e.view()), InvalidArgument);
    EXPECT_THROW(qr.add_rows(qr.rows() + 1, u.view(), e.view()), InvalidArgument);
    EXPECT_THROW(qr.add_rows(0, random_matrix<T>(3, n + 1, 906).view(), e.view()), InvalidArgument);
    EXPECT_THROW(qr.add_rows(0, u.view(), random_matrix<T>(2, 2, 907).view()), InvalidArgument);
    EXPECT_THROW(qr.add_rows(0, u.view(), random_matrix<T>(3, 1, 908).view()), InvalidArgument);
    Matrix<T> bad_u = u.clone(), bad_e = e.clone();
    bad_u(1, 2) = std::numeric_limits<T>::quiet_NaN();
    bad_e(2, 1) = std::numeric_limits<T>::infinity();
    // U and e are checked in one pass; the message names the one at fault.
    auto message = [&](const Matrix<T>& uu, const Matrix<T>& ee) -> std::string {
      try {
        qr.add_rows(1, uu.view(), ee.view());
      } catch (const InvalidArgument& error) {
        return error.what();
      }
      return "no error";
    };
    EXPECT_NE(message(bad_u, e).find("U contains NaN or Inf"), std::string::npos)
        << message(bad_u, e);
    EXPECT_NE(message(u, bad_e).find("e contains NaN or Inf"), std::string::npos)
        << message(u, bad_e);
    EXPECT_THROW(qr.remove_rows(-1, 1), InvalidArgument);
    EXPECT_THROW(qr.remove_rows(0, -1), InvalidArgument);
    EXPECT_THROW(qr.remove_rows(qr.rows() - 2, 3), InvalidArgument);
    EXPECT_THROW(qr.remove_rows(0, qr.rows() - n + 1), InvalidArgument);  // fewer than n left
    before.expect_same(ctx(), qr);
    // Operations the Q mode cannot do.
    UpdatableQR<T> thin(ctx(), a.view(), b.view(), UpdateQ::thin);
    UpdatableQR<T> none(ctx(), a.view(), b.view(), UpdateQ::none);
    const Snapshot<T> thin_before(ctx(), thin);
    EXPECT_THROW(thin.remove_rows(0, 1), InvalidArgument);
    EXPECT_THROW(none.remove_rows(0, 1), InvalidArgument);
    EXPECT_THROW(none.matrix_q(), InvalidArgument);
    thin_before.expect_same(ctx(), thin);
    // Bad construction.
    EXPECT_THROW(UpdatableQR<T>(ctx(), random_matrix<T>(4, 5, 909).view(), MatrixView<const T>()),
                 InvalidArgument);
    EXPECT_THROW(UpdatableQR<T>(ctx(), a.view(), random_matrix<T>(m - 1, 1, 910).view()),
                 InvalidArgument);
    Matrix<T> bad_a = a.clone();
    bad_a(0, 0) = std::numeric_limits<T>::quiet_NaN();
    EXPECT_THROW(UpdatableQR<T>(ctx(), bad_a.view(), b.view()), InvalidArgument);
  }));
}

TEST_P(QrUpdateTest, NoRightHandSidesAndEmptyUpdates) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = random_matrix<T>(20, 5, 950);
    UpdatableQR<T> qr(ctx(), a.view(), MatrixView<const T>());
    EXPECT_EQ(qr.rhs_count(), 0);
    const Snapshot<T> before(ctx(), qr);
    qr.add_rows(4, MatrixView<const T>(nullptr, 0, 5, 1), MatrixView<const T>());
    qr.remove_rows(2, 0);
    before.expect_same(ctx(), qr);
    const Matrix<T> u = random_matrix<T>(3, 5, 951);
    qr.add_rows(20, u.view(), MatrixView<const T>());
    qr.remove_rows(0, 4);
    Tracked<T> t{a.clone(), Matrix<T>(20, 0)};
    t.a = Tracked<T>::stack(t.a, 20, u);
    t.a = Tracked<T>::cut(t.a, 0, 4);
    const Matrix<T> r = to_host(ctx(), qr.matrix_r());
    const Matrix<T> q = to_host(ctx(), qr.matrix_q());
    const Matrix<T> q1 = Matrix<T>::copy_of(MatrixView<const T>(q.view().block(0, 0, 19, 5)));
    EXPECT_LT(accuracy::qr_backward_error<T>(t.a.view(), q1.view(), r.view()), kBound);
    EXPECT_EQ(qr.solve().cols(), 0);
  }));
}

TEST_P(QrUpdateTest, ExactlySingularRIsReportedNotSolved) {
  // A zero column gives R(3, 3) = 0 exactly, and rows added with a zero there keep it so: the
  // solve says where (info) or throws (no info), and x is NaN, never the substitution's
  // infinities or garbage (the solve is enqueued before the diagonal is read back).
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 40, n = 10, zero = 3;
    Matrix<T> a = random_matrix<T>(m, n, 950), u = random_matrix<T>(4, n, 951);
    for (std::int64_t i = 0; i < m; ++i) a(i, zero) = T(0);
    for (std::int64_t i = 0; i < 4; ++i) u(i, zero) = T(0);
    const Matrix<T> b = random_matrix<T>(m, 2, 952), e = random_matrix<T>(4, 2, 953);
    UpdatableQR<T> qr(ctx(), a.view(), b.view(), UpdateQ::none);
    for (int step = 0; step < 2; ++step) {
      LstsqInfo info;
      const Matrix<T> x = to_host(ctx(), qr.solve(&info));
      EXPECT_TRUE(info.singular()) << "step " << step;
      EXPECT_EQ(info.singular_at, zero);
      for (std::int64_t j = 0; j < x.cols(); ++j)
        for (std::int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(double(x(i, j))));
      ASSERT_EQ(info.residual_norms.size(), 2u);
      for (double r : info.residual_norms) EXPECT_TRUE(std::isfinite(r) && r > 0);
      EXPECT_THROW((void)qr.solve(), InvalidArgument);
      qr.add_rows(5, u.view(), e.view());  // the few-rows path (no Q, p = 4)
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, QrUpdateTest, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
