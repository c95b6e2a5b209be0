// The largest accuracy ratio each test metric reached, per backend and precision, printed
// when the test program ends (the figures a closing note quotes). track() returns its value,
// so it wraps the expression inside an EXPECT.
#pragma once

#include <string>

namespace gpuqr::testing {

/// Records `value` under `metric` for the running test's parameter (cpu_double, ...).
double track(const std::string& metric, double value);

}  // namespace gpuqr::testing
