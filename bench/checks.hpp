// Accuracy checks of the tester, on host copies of the outputs, with the measures of
// gpuqr/accuracy.hpp (LAPACK's test ratios; a backward-stable result keeps them below ~30).
// Reference steps (forming Q, applying Q) use LAPACK directly, so that a check of one gpuqr
// routine does not depend on another.
#pragma once

#include <utility>

#include "bench/report.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::bench {

/// The two ratios reported per case; kMissing where a measure does not apply.
struct Accuracy {
  double error = kMissing;
  double orth = kMissing;
};

/// LAPACK's geqrf of `a`: the factors (m x n) and tau (min(m, n) x 1), host memory.
template <class T>
std::pair<Matrix<T>, Matrix<T>> reference_geqrf(MatrixView<const T> a);

/// R (min(m, n) x n): the upper trapezoid of geqrf's `factors`, zeros below.
template <class T>
Matrix<T> upper_r(MatrixView<const T> factors);

/// geqrf: Q is formed from `factors`/`tau` with LAPACK's orgqr, then
/// error = ||A - Q R||_1 / (||A||_1 max(m, n) eps), orth = ||I - Q^T Q||_1 / (m eps).
template <class T>
Accuracy check_geqrf(MatrixView<const T> a, MatrixView<const T> factors,
                     MatrixView<const T> tau);

/// orgqr: `q` (m x k) formed from the reference factorization `reference` (m x n) of `a`:
/// error = ||A - Q R||_1 / (||A||_1 max(m, n) eps) with R from `reference`, orth as geqrf.
template <class T>
Accuracy check_orgqr(MatrixView<const T> a, MatrixView<const T> reference,
                     MatrixView<const T> q);

/// ormqr (left, transposed): `y` should be Q^T C. Q y is formed with LAPACK's ormqr and
/// error = ||C - Q y||_1 / (||C||_1 max(m, nrhs) eps) (Q is orthogonal, so this is the
/// error of y relative to ||C||); orth does not apply.
template <class T>
Accuracy check_ormqr(MatrixView<const T> reflectors, MatrixView<const T> tau,
                     MatrixView<const T> c, MatrixView<const T> y);

/// gels: x is the first n rows of `b_out`; error = lstsq_optimality_ratio(A, x, B)
/// = ||A^T (B - A x)||_1 / (||A||_1 ||B||_1 max(m, n, nrhs) eps); orth does not apply.
template <class T>
Accuracy check_gels(MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> b_out);

}  // namespace gpuqr::bench
