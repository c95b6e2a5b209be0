// Bad input to the dense functions: a clear InvalidArgument, and every output untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/bad_input.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {
namespace {

class BadInput : public BackendTest {};

TEST_P(BadInput, WrongDimensionsLeaveOutputsUntouched) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a_host = random_matrix<T>(12, 7, 1);
    const Matrix<T> b_host = random_matrix<T>(12, 2, 2);
    const Matrix<T> tau_host = random_matrix<T>(7, 1, 3);
    Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
    Matrix<T> b = to_ctx<T>(ctx(), b_host.view());
    Matrix<T> tau = to_ctx<T>(ctx(), tau_host.view());
    expect_invalid([&] { geqrf<T>(ctx(), a.view(), vec(tau, 6)); }, "tau needs min(m, n) = 7");
    expect_invalid([&] { orgqr<T>(ctx(), 8, a.view(), VectorView<const T>(vec(tau, 7))); },
                   "k = 8 reflectors");
    expect_invalid([&] {
      Matrix<T> wide = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(3, 5, 4).view()));
      orgqr<T>(ctx(), 2, wide.view(), VectorView<const T>(vec(tau, 7)));
    }, "m >= n");
    Matrix<T> c = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(11, 3, 5).view()));
    const Matrix<T> c_before = to_host(ctx(), c);
    expect_invalid([&] {
      ormqr<T>(ctx(), Side::left, Op::trans, MatrixView<const T>(a.view()),
               VectorView<const T>(vec(tau, 7)), c.view());
    }, "reflectors have 12 rows");
    expect_invalid([&] {
      ormqr<T>(ctx(), Side::left, Op::trans, MatrixView<const T>(a.view()),
               VectorView<const T>(vec(tau, 5)), b.view());
    }, "tau has 5 entries");
    expect_invalid([&] {
      Matrix<T> wide = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(5, 9, 6).view()));
      Matrix<T> rhs = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(5, 1, 7).view()));
      gels<T>(ctx(), wide.view(), rhs.view());
    }, "least squares needs m >= n");
    expect_invalid([&] {
      Matrix<T> rhs = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(11, 1, 8).view()));
      gels<T>(ctx(), a.view(), rhs.view());
    }, "B has 11 rows");
    expect_invalid([&] {
      trtrs<T>(ctx(), Uplo::upper, Op::no_trans, Diag::non_unit, MatrixView<const T>(a.view()),
               b.view());
    }, "not square");
    EXPECT_TRUE(same_bits(to_host(ctx(), a), a_host));
    EXPECT_TRUE(same_bits(to_host(ctx(), b), b_host));
    EXPECT_TRUE(same_bits(to_host(ctx(), tau), tau_host));
    EXPECT_TRUE(same_bits(to_host(ctx(), c), c_before));
  }));
}

TEST_P(BadInput, NanOrInfIsRejectedBeforeAnyWrite) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    for (T poison : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                     -std::numeric_limits<T>::infinity()}) {
      Matrix<T> a_host = random_matrix<T>(20, 6, 9);
      a_host(17, 4) = poison;
      const Matrix<T> b_host = random_matrix<T>(20, 1, 10);
      const Matrix<T> tau_host = random_matrix<T>(6, 1, 11);
      Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
      Matrix<T> b = to_ctx<T>(ctx(), b_host.view());
      Matrix<T> tau = to_ctx<T>(ctx(), tau_host.view());
      expect_invalid([&] { geqrf<T>(ctx(), a.view(), vec(tau, 6)); }, "NaN or Inf");
      expect_invalid([&] { gels<T>(ctx(), a.view(), b.view()); }, "A contains NaN or Inf");
      EXPECT_TRUE(same_bits(to_host(ctx(), a), a_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), b), b_host));
      EXPECT_TRUE(same_bits(to_host(ctx(), tau), tau_host));
      // In B too.
      Matrix<T> good = to_ctx<T>(ctx(), MatrixView<const T>(random_matrix<T>(20, 6, 12).view()));
      Matrix<T> b_bad_host = b_host.clone();
      b_bad_host(0, 0) = poison;
      Matrix<T> b_bad = to_ctx<T>(ctx(), b_bad_host.view());
      const Matrix<T> good_before = to_host(ctx(), good);
      expect_invalid([&] { gels<T>(ctx(), good.view(), b_bad.view()); }, "B contains NaN");
      EXPECT_TRUE(same_bits(to_host(ctx(), good), good_before));
    }
    // The check can be turned off (then LAPACK's NaN propagation is the caller's business).
    ctx().set_check_finite(false);
    Matrix<T> a_host = random_matrix<T>(5, 3, 13);
    a_host(0, 0) = std::numeric_limits<T>::quiet_NaN();
    Matrix<T> a = to_ctx<T>(ctx(), a_host.view());
    Matrix<T> tau(3, 1, a.space(), a.device());
    EXPECT_NO_THROW(geqrf<T>(ctx(), a.view(), vec(tau, 3)));
    ctx().set_check_finite(true);
  }));
}

// The check finds a single NaN or Inf wherever it sits in a tall matrix: first and last entry,
// inside the CUDA kernel's unrolled loads and in its tail loop (40001 rows, odd ld).
TEST_P(BadInput, NanOrInfFoundAnywhereInATallMatrix) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 40001, n = 3;
    const Matrix<T> clean = random_matrix<T>(m + 3, n, 21);
    for (auto [i, j] : {std::pair<std::int64_t, std::int64_t>{0, 0},
                        {m - 1, n - 1},
                        {5119, 0},
                        {20000, 1},
                        {39999, 2}}) {
      for (T poison : {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::infinity()}) {
        SCOPED_TRACE("(" + std::to_string(i) + ", " + std::to_string(j) + ")");
        Matrix<T> host = clean.clone();
        host(i, j) = poison;
        Matrix<T> buf = to_ctx<T>(ctx(), host.view());
        const MatrixView<T> a = buf.view().block(0, 0, m, n);  // ld m + 3
        Matrix<T> tau(n, 1, buf.space(), buf.device());
        expect_invalid([&] { geqrf<T>(ctx(), a, vec(tau, n)); }, "NaN or Inf");
        EXPECT_TRUE(same_bits(to_host(ctx(), buf), host));
      }
    }
  }));
}

TEST_P(BadInput, WrongMemorySpaceIsNamed) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    if (!ctx().is_cuda()) {
      // A CPU context given device memory is only constructible with a GPU; test the view check.
      Matrix<T> a = random_matrix<T>(4, 4, 1);
      MatrixView<T> fake(a.data(), 4, 4, 4, MemorySpace::device, 0);
      Matrix<T> tau(4, 1);
      expect_invalid([&] { geqrf<T>(ctx(), fake, vec(tau, 4)); }, "is in device memory");
      return;
    }
    // Host views are staged on a CUDA context (tests/test_staging.cpp); a view on another
    // device is refused before anything is touched (the fake pointer is never dereferenced).
    Matrix<T> a = random_matrix<T>(4, 4, 1);
    MatrixView<T> elsewhere(a.data(), 4, 4, 4, MemorySpace::device, 7);
    Matrix<T> tau(4, 1);
    expect_invalid([&] { geqrf<T>(ctx(), elsewhere, vec(tau, 4)); }, "is on device 7");
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, BadInput, all_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
