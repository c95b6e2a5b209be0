#include "tests/support/ratios.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>

namespace gpuqr::testing {
namespace {

std::mutex& mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, double>& table() {
  static std::map<std::string, double> t;
  return t;
}

/// "cuda_double" from "Backends/Dense.Geqrf/cuda_double", else "-".
std::string current_case() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "-";
  const std::string name = info->name();
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? "-" : name.substr(slash + 1);
}

class Report : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(mutex());
    if (table().empty()) return;
    std::printf("\nLargest accuracy ratios seen (bound 30):\n");
    for (const auto& [key, value] : table()) std::printf("  %-45s %.3g\n", key.c_str(), value);
  }
};

const auto* const kReport = ::testing::AddGlobalTestEnvironment(new Report);

}  // namespace

double track(const std::string& metric, double value) {
  std::lock_guard<std::mutex> lock(mutex());
  double& slot = table()[metric + " [" + current_case() + "]"];
  slot = std::max(slot, value);
  return value;
}

}  // namespace gpuqr::testing
