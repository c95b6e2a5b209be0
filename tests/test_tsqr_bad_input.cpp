// Bad input to the tall-skinny QR API: a clear error (InvalidArgument) and every output
// untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/tsqr.hpp"
#include "tests/support/env_knob.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/bad_input.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

class TsqrBadInput : public BackendTest {};

TEST(TsqrMethodNames, ParseAndPrint) {
  for (TsqrMethod m : {TsqrMethod::automatic, TsqrMethod::householder, TsqrMethod::qrf_ah,
                       TsqrMethod::tsqr, TsqrMethod::cholesky_qr2,
                       TsqrMethod::shifted_cholesky_qr3}) {
    EXPECT_EQ(parse_tsqr_method(to_string(m)), m);
  }
  EXPECT_EQ(parse_tsqr_method("auto"), TsqrMethod::automatic);
  expect_throw<InvalidArgument>([] { parse_tsqr_method("cholesky"); }, "unknown tall-skinny");
}

TEST_P(TsqrBadInput, ErrorsLeaveOutputsUntouched) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a_host = random_matrix<T>(40, 6, 1);
    const Matrix<T> r_host = random_matrix<T>(6, 6, 2);
    const Matrix<T> tau_host = random_matrix<T>(6, 1, 3);
    Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
    Matrix<T> r = to_ctx<T>(ctx(), r_host.view());
    Matrix<T> tau = to_ctx<T>(ctx(), tau_host.view());
    auto untouched = [&] {
      EXPECT_TRUE(same_bits(to_host(ctx(), a), a_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), r), r_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), tau), tau_host));
    };
    TsqrOptions cqr2;
    cqr2.method = TsqrMethod::cholesky_qr2;
    // m < n.
    MatrixView<T> wide = a.view().block(0, 0, 5, 6);
    expect_throw<InvalidArgument>([&] { tsqr_explicit<T>(ctx(), wide, r.view(), cqr2); },
                                  "m >= n");
    expect_throw<InvalidArgument>([&] { tsqr_geqrf<T>(ctx(), wide, vec(tau, 6)); }, "m >= n");
    expect_throw<InvalidArgument>([&] { TallSkinnyQR<T>(ctx(), MatrixView<const T>(wide)); },
                                  "m >= n");
    untouched();
    // R of the wrong size, tau too short.
    expect_throw<InvalidArgument>(
        [&] { tsqr_explicit<T>(ctx(), a.view(), r.view().block(0, 0, 5, 6)); }, "R is 5x6");
    expect_throw<InvalidArgument>([&] { tsqr_geqrf<T>(ctx(), a.view(), vec(tau, 5)); },
                                  "tau has 5 entries");
    untouched();
    // Negative block.
    TsqrOptions neg;
    neg.block = -1;
    expect_throw<InvalidArgument>([&] { tsqr_explicit<T>(ctx(), a.view(), r.view(), neg); },
                                  "negative");
    untouched();
    // Wrong memory space: host views on a CUDA context, "device" views on the CPU one.
    Matrix<T> other = a_host.clone();
    const MemorySpace wrong = ctx().is_cuda() ? MemorySpace::host : MemorySpace::device;
    MatrixView<T> misplaced(other.data(), 40, 6, 40, wrong, ctx().is_cuda() ? -1 : 0);
    expect_throw<InvalidArgument>([&] { tsqr_explicit<T>(ctx(), misplaced, r.view()); },
                                  "memory");
    expect_throw<InvalidArgument>([&] { tsqr_geqrf<T>(ctx(), misplaced, vec(tau, 6)); },
                                  "memory");
    EXPECT_TRUE(same_bits(other, a_host));
    untouched();
  }));
}

// NaN, +Inf and -Inf anywhere (first, middle and last entries) through every entry point and
// method: the CholeskyQR methods leave the check to their first Gram matrix's trace (the
// deferred check of check_tall_skinny), in full and in reduced precision
// (GPUQR_CHOLQR_LOW_GRAM=1), and TallSkinnyQR also with a borrowed input.
TEST_P(TsqrBadInput, NanAndInfAreRejected) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 50, n = 5;
    struct Spot {
      std::int64_t i, j;
    };
    for (const char* low : {"0", "1"})
    for (const Spot spot : {Spot{17, 3}, Spot{0, 0}, Spot{m - 1, n - 1}})
    for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                  -std::numeric_limits<T>::infinity()}) {
      const EnvKnob low_gram("GPUQR_CHOLQR_LOW_GRAM", low);
      SCOPED_TRACE(std::string("low gram ") + low + ", A(" + std::to_string(spot.i) + ", " +
                   std::to_string(spot.j) + ") = " + std::to_string(double(bad)));
      Matrix<T> a_host = random_matrix<T>(m, n, 4);
      a_host(spot.i, spot.j) = bad;
      const Matrix<T> r_host = random_matrix<T>(n, n, 5);
      Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
      Matrix<T> r = to_ctx<T>(ctx(), r_host.view());
      const Matrix<T> tau_host = random_matrix<T>(n, 1, 6);
      Matrix<T> tau = to_ctx<T>(ctx(), tau_host.view());
      for (TsqrMethod method : {TsqrMethod::automatic, TsqrMethod::cholesky_qr2,
                                TsqrMethod::shifted_cholesky_qr3, TsqrMethod::householder}) {
        for (bool fallback : {true, false}) {
          TsqrOptions o;
          o.method = method;
          o.fallback = fallback;
          expect_throw<InvalidArgument>([&] { tsqr_explicit<T>(ctx(), a.view(), r.view(), o); },
                                        "NaN or Inf");
          expect_throw<InvalidArgument>([&] { tsqr_geqrf<T>(ctx(), a.view(), vec(tau, n), o); },
                                        "NaN or Inf");
          expect_throw<InvalidArgument>(
              [&] { TallSkinnyQR<T>(ctx(), MatrixView<const T>(a.view()), o); }, "NaN or Inf");
          o.borrow_input = true;
          expect_throw<InvalidArgument>(
              [&] { TallSkinnyQR<T>(ctx(), MatrixView<const T>(a.view()), o); }, "NaN or Inf");
        }
      }
      EXPECT_TRUE(same_bits(to_host(ctx(), a), a_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), r), r_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), tau), tau_host));
    }
  }));
}

// Finite entries whose squares overflow (the Gram matrix's trace is Inf) are not NaN/Inf
// input: the deferred check reads A itself before it says so, finds it finite, and the
// factorization goes on (CholeskyQR breaks down on the overflowed Gram matrix and Householder
// QR, whose norms are scaled, gives the result). Without that full read this input would be
// rejected as "NaN or Inf".
TEST_P(TsqrBadInput, OverflowingGramMatrixIsNotRejected) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 200, n = 6;
    const T big = sizeof(T) == 8 ? T(1e155) : T(1e20);  // squares beyond the largest T
    Matrix<T> a_host = random_matrix<T>(m, n, 8);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) a_host(i, j) *= big;
    Matrix<T> q = to_ctx<T>(ctx(), a_host.view());
    Matrix<T> r(n, n, q.space(), q.device());
    const TsqrInfo info = tsqr_explicit<T>(ctx(), q.view(), r.view());
    EXPECT_EQ(info.method, TsqrMethod::householder) << info.fallback_reason;
    EXPECT_FALSE(info.fallback_reason.empty());
    const Matrix<T> qh = to_host(ctx(), q), rh = to_host(ctx(), r);
    EXPECT_LT(accuracy::qr_backward_error<T>(a_host.view(), qh.view(), rh.view()), 30.0);
    EXPECT_LT(accuracy::orthogonality<T>(qh.view()), 30.0);
    const Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
    TsqrOptions borrowed;
    borrowed.borrow_input = true;
    const TallSkinnyQR<T> qr(ctx(), a.view(), borrowed);
    const Matrix<T> r2 = to_host(ctx(), qr.matrix_r());
    for (std::int64_t j = 0; j < n; ++j) EXPECT_TRUE(std::isfinite(double(r2(j, j))));
  }));
}

TEST_P(TsqrBadInput, TallSkinnyQRArgumentChecks) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(60, 4, 7).view()));
    const TallSkinnyQR<T> qr(ctx(), a.view());
    const Matrix<T> c = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(59, 2, 8).view()));
    expect_throw<InvalidArgument>([&] { qr.apply_qt(c.view()); }, "C has 59 rows");
    expect_throw<InvalidArgument>([&] { qr.solve(c.view()); }, "B has 59 rows");
    expect_throw<InvalidArgument>([&] { qr.apply_q(c.view()); }, "Y has 59 rows");
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, TsqrBadInput, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
