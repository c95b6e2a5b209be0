// Checks of the bad-input tests: the exception's type and message, and outputs left untouched.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gpuqr/error.hpp"
#include "gpuqr/matrix.hpp"
#include "tests/support/twins.hpp"  // same_bits

namespace gpuqr::testing {

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
