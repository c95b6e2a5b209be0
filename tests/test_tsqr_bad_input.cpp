// Bad input to the tall-skinny QR API: a clear error (InvalidArgument) and every output
// untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "gpuqr/tsqr.hpp"
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

TEST_P(TsqrBadInput, NanAndInfAreRejected) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
      Matrix<T> a_host = random_matrix<T>(50, 5, 4);
      a_host(17, 3) = bad;
      const Matrix<T> r_host = random_matrix<T>(5, 5, 5);
      Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
      Matrix<T> r = to_ctx<T>(ctx(), r_host.view());
      Matrix<T> tau = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(5, 1, 6).view()));
      for (TsqrMethod method : {TsqrMethod::automatic, TsqrMethod::cholesky_qr2,
                                TsqrMethod::shifted_cholesky_qr3, TsqrMethod::householder}) {
        TsqrOptions o;
        o.method = method;
        expect_throw<InvalidArgument>([&] { tsqr_explicit<T>(ctx(), a.view(), r.view(), o); },
                                      "NaN or Inf");
        expect_throw<InvalidArgument>([&] { tsqr_geqrf<T>(ctx(), a.view(), vec(tau, 5), o); },
                                      "NaN or Inf");
        expect_throw<InvalidArgument>(
            [&] { TallSkinnyQR<T>(ctx(), MatrixView<const T>(a.view()), o); }, "NaN or Inf");
      }
      EXPECT_TRUE(same_bits(to_host(ctx(), a), a_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), r), r_host));
    }
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
