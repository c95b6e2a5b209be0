// Floating-point operation counts of LAPACK Working Note 41 (real arithmetic: a real
// operation count is the multiplications plus the additions), as LAPACK++ and MAGMA use them.
// GFLOP/s figures of the tester divide these by the measured time, so gpuqr and its baseline
// are credited with the same work for the same case whatever algorithm each runs.
#pragma once

namespace gpuqr::bench {

/// geqrf of an m x n matrix. For m >= n this is 2mn^2 - 2n^3/3 + mn + n^2 + 14n/3.
inline double flops_geqrf(double m, double n) {
  if (m <= 0 || n <= 0) return 0.0;
  const double third = 1.0 / 3.0;
  double muls, adds;
  if (m > n) {
    muls = n * (n * (0.5 - third * n + m) + m + 23.0 / 6.0);
    adds = n * (n * (0.5 - third * n + m) + 5.0 / 6.0);
  } else {
    muls = m * (m * (-0.5 - third * m + n) + 2.0 * n + 23.0 / 6.0);
    adds = m * (m * (-0.5 - third * m + n) + n + 5.0 / 6.0);
  }
  return muls + adds;
}

/// orgqr forming the m x n matrix Q from k reflectors (m >= n >= k).
inline double flops_orgqr(double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  const double muls = k * (2.0 * m * n + 2.0 * n - 5.0 / 3.0 + k * (2.0 / 3.0 * k - (m + n) - 1.0));
  const double adds = k * (2.0 * m * n + n - m + 1.0 / 3.0 + k * (2.0 / 3.0 * k - (m + n)));
  return muls + adds;
}

/// ormqr applying k reflectors from the left to an m x n matrix C (Q^T C or Q C).
inline double flops_ormqr_left(double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  const double muls = n * k * (2.0 * m - k + 2.0);
  const double adds = n * k * (2.0 * m - k + 1.0);
  return muls + adds;
}

/// trsm from the left with an m x m triangle and n right-hand sides (m^2 n in all).
inline double flops_trsm_left(double m, double n) {
  if (m <= 0 || n <= 0) return 0.0;
  return 0.5 * n * m * (m + 1.0) + 0.5 * n * m * (m - 1.0);
}

/// gels (m >= n) as gpuqr composes it: geqrf, then Q^T b (ormqr), then R x = c (trsm).
inline double flops_gels(double m, double n, double nrhs) {
  return flops_geqrf(m, n) + flops_ormqr_left(m, nrhs, n) + flops_trsm_left(n, nrhs);
}

}  // namespace gpuqr::bench
