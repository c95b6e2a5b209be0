// Checks of the bad-input tests: the exception's type and message, and outputs left untouched.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gpuqr/error.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::testing {

/// Bitwise equality of two host matrices (NaN equal to NaN).
template <class T>
bool same_bits(const Matrix<T>& x, const Matrix<T>& y) {
  if (x.rows() != y.rows() || x.cols() != y.cols()) return false;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      if (std::memcmp(&x(i, j), &y(i, j), sizeof(T)) != 0) return false;
  return true;
}

/// Runs `call`, expects an exception of type E whose message contains `needle`.
template <class E, class F>
void expect_throw(F&& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "expected an exception containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

/// Runs `call`, expects InvalidArgument whose message contains `needle`.
template <class F>
void expect_invalid(F&& call, const std::string& needle) {
  expect_throw<InvalidArgument>(call, needle);
}

}  // namespace gpuqr::testing
