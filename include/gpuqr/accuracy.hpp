// gpuqr/accuracy.hpp: the accuracy measures of LAPACK's test suite, for checking results.
//
// All take host matrices and compute in double on the CPU (BLAS), whatever T is; `eps` is
// T's machine epsilon (2^-52 for double, 2^-23 for float). Norms are 1-norms as in LAPACK's
// xQRT01/xQRT17 unless named otherwise. A backward-stable QR keeps the ratios below a
// modest constant (LAPACK's tester uses a threshold of 30).
#pragma once

#include <cstdint>
#include <limits>

#include "gpuqr/matrix.hpp"

namespace gpuqr::accuracy {

template <class T>
constexpr double eps() {
  return static_cast<double>(std::numeric_limits<T>::epsilon());
}

/// ||A - Q R||_1 / (||A||_1 max(m, n) eps), Q m x k, R k x n (0 for an empty or zero A).
template <class T>
double qr_backward_error(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r);

/// ||I - Q^T Q||_1 / (m eps) for Q m x k with orthonormal columns.
template <class T>
double orthogonality(MatrixView<const T> q);

/// LAPACK xQRT17's least-squares optimality ratio
/// ||A^T (b - A x)||_1 / (||A||_1 ||b||_1 max(m, n, nrhs) eps), with x n x nrhs.
template <class T>
double lstsq_optimality_ratio(MatrixView<const T> a, MatrixView<const T> x,
                              MatrixView<const T> b);

/// ||A^T r||_2 / (||A||_F ||r||_2), r = b - A x, for one right-hand side (b, x columns):
/// the sine-like measure a user reads (0 when r = 0).
template <class T>
double normal_equations_residual(MatrixView<const T> a, MatrixView<const T> x,
                                 MatrixView<const T> b);

/// ||b - A x||_2 for one right-hand side.
template <class T>
double residual_norm(MatrixView<const T> a, MatrixView<const T> x, MatrixView<const T> b);

/// ||x - y||_F / ||y||_F (||x||_F when y = 0).
template <class T>
double relative_difference(MatrixView<const T> x, MatrixView<const T> y);

/// ||A||_1 (maximum absolute column sum).
template <class T>
double norm1(MatrixView<const T> a);

}  // namespace gpuqr::accuracy
