// Inputs that stress a QR computed from Gram matrices (the blocked QR's AH panel, the QRF-AH
// method): shared by tests/test_blocked_qr.cpp and tests/test_tsqr_methods.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::testing {

/// Inputs that stress a panel factored from its Gram matrix (the AH panel, forced on every
/// panel below): chains of columns each close to the one before (remaining squared norms near
/// 3%, just above the norm-update test's 1%), a Kahan-like triangle behind a random tall
/// factor, and columns whose scales alternate between 10^e and 10^-e.
template <class T>
inline Matrix<T> gram_stress_matrix(int which, std::int64_t m, std::int64_t n, std::uint64_t seed) {
  Matrix<T> a = random_matrix<T>(m, n, seed);
  if (which == 0) {
    const Matrix<T> noise = random_matrix<T>(m, n, seed + 1);
    for (std::int64_t j = 1; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        a(i, j) = static_cast<T>(double(a(i, j - 1)) + 0.17 * double(noise(i, j)));
  } else if (which == 1) {
    const double th = 1.2, c = std::cos(th), sn = std::sin(th);
    std::vector<double> k(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      const double si = std::pow(sn, double(i));
      k[static_cast<std::size_t>(i + i * n)] = si;
      for (std::int64_t j = i + 1; j < n; ++j) k[static_cast<std::size_t>(i + j * n)] = -c * si;
    }
    const Matrix<T> g = random_matrix<T>(m, n, seed + 2);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        double s = 0;
        for (std::int64_t l = 0; l <= j; ++l) s += double(g(i, l)) * k[static_cast<std::size_t>(l + j * n)];
        a(i, j) = static_cast<T>(s);
      }
  } else {
    const double e = sizeof(T) == 8 ? 100.0 : 12.0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double scale = std::pow(10.0, (j % 2 == 0 ? e : -e) * double(j % 5) / 4.0);
      for (std::int64_t i = 0; i < m; ++i) a(i, j) = static_cast<T>(double(a(i, j)) * scale);
    }
  }
  return a;
}

}  // namespace gpuqr::testing
