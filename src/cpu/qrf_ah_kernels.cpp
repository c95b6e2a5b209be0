// CPU twin of the QRF-AH panel leaf (src/core/qrf_ah_kernels.hpp): Algorithm 2 of Tomas &
// Quintana-Orti in plain loops. Notation: column k's reflector is H = I - tau v v^T with
// v_k = 1; the panel's columns below the top block are P_B c_j (c_j starts as e_j), so the
// vectors' bottom part is P_B D with D(:, k) = c_k / sigma_k; `g` is the Gram matrix of rows
// >= k of the updated panel (orthogonal updates keep it, minus R's row k).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "src/core/qrf_ah_kernels.hpp"

namespace gpuqr::kernels::cpu {

template <class T>
void ah_panel(detail::ContextImpl&, MatrixView<T> top, MatrixView<T> gram, MatrixView<T> d,
              VectorView<T> tau, VectorView<double> status) {
  const std::int64_t b = top.cols();
  const double threshold = std::max(detail::kAhRemainingFraction,
                                    std::sqrt(double(std::numeric_limits<T>::epsilon())));
  std::vector<T> x(b * b), norm0(b), w(b);
  auto X = [&](std::int64_t i, std::int64_t j) -> T& { return x[i + j * b]; };
  for (std::int64_t j = 0; j < b; ++j) {
    norm0[j] = gram(j, j);
    for (std::int64_t i = 0; i < b; ++i) {
      X(i, j) = top(i, j);
      d(i, j) = i == j ? T(1) : T(0);
    }
  }
  std::int64_t kb = b;
  for (std::int64_t k = 0; k < b; ++k) {
    const T nu = std::sqrt(std::max(gram(k, k), T(0)));
    const T xkk = X(k, k);
    const T sg = xkk >= T(0) ? T(1) : T(-1);
    const bool zero = nu == T(0);
    const T sigma = zero ? T(1) : xkk + sg * nu;
    const T t = zero ? T(0) : T(1) + std::abs(xkk) / nu;
    for (std::int64_t j = k + 1; j < b; ++j)
      w[j] = X(k, j) + (gram(k, j) - xkk * X(k, j)) / sigma;  // v^T x_j from the Gram matrix
    for (std::int64_t j = k + 1; j < b; ++j) {
      for (std::int64_t i = k + 1; i < b; ++i) X(i, j) -= t * (X(i, k) / sigma) * w[j];
      for (std::int64_t i = 0; i <= k; ++i) d(i, j) -= t * w[j] * d(i, k) / sigma;
      X(k, j) -= t * w[j];
    }
    for (std::int64_t i = k + 1; i < b; ++i) X(i, k) = zero ? T(0) : X(i, k) / sigma;
    for (std::int64_t i = 0; i <= k; ++i) d(i, k) = zero ? T(0) : d(i, k) / sigma;
    if (!zero) X(k, k) = -sg * nu;
    tau[k] = t;
    // The amplification test: the vector's bottom part P_B D(:, k) loses kappa_k eps of its
    // norm to cancellation; too much, and the panel ends before column k (kappa_0 <= 1).
    double kappa = 0;
    for (std::int64_t i = 0; i <= k; ++i)
      kappa += std::abs(double(d(i, k))) * std::sqrt(std::max(double(norm0[i]), 0.0));
    if (k > 0 && kappa * std::sqrt(double(t) / 2) > detail::kAhMaxAmplification) {
      kb = k;
      break;
    }
    for (std::int64_t j = k + 1; j < b; ++j)
      for (std::int64_t i = k + 1; i < b; ++i) gram(i, j) -= X(k, i) * X(k, j);
    // The norm-update test: a later column whose remaining norm^2 fell below sqrt(eps) of its
    // original has lost its digits to cancellation; the panel ends after column k.
    bool stop = false;
    for (std::int64_t j = k + 1; j < b; ++j)
      stop = stop || (norm0[j] > T(0) && double(gram(j, j)) <= threshold * double(norm0[j]));
    if (stop) {
      kb = k + 1;
      break;
    }
  }
  for (std::int64_t j = 0; j < b; ++j)
    for (std::int64_t i = 0; i < b; ++i) {
      if (j < kb) top(i, j) = X(i, j);
      if (j >= kb) d(i, j) = T(0);
    }
  status[0] = double(kb);
}

GPUQR_INSTANTIATE_QRF_AH_KERNELS(float)
GPUQR_INSTANTIATE_QRF_AH_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
