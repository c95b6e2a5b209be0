// The three sides of gpuqr_sparse_gpu_bench on one problem: gpuqr's SparseQR (on the GPU or
// the CPU, by the options' context) and SuiteSparseQR, each timed as one whole call and
// checked by the least-squares residual of its solution (see sparse_gpu_bench.cpp).
#pragma once

#include <SuiteSparseQR.hpp>
#include <cstdint>
#include <string>

#include "bench/report.hpp"
#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_qr.hpp"

namespace gpuqr::bench {

/// kept: Householder vectors kept (SparseQR(A), SuiteSparseQR_factorize); qless: R only with
/// one right-hand side carried (SparseQR(A, b) without the vectors, SuiteSparseQR's
/// [C, R, E] = qr(A, b)).
enum class Mode { kept, qless };

inline const char* to_string(Mode mode) { return mode == Mode::kept ? "kept" : "qless"; }

/// How many times each side runs: `warmup` untimed, then `repeat` timed (the best is kept).
struct Plan {
  int warmup = 1;
  int repeat = 2;
};

/// One side's outcome; missing values are kMissing / -1.
struct SideResult {
  bool ran = false;
  std::string error;          ///< what() of an exception, or why SuiteSparseQR failed
  double seconds = kMissing;  ///< best of the timed runs
  std::int64_t nnz_r = -1;
  bool nnz_r_is_bound = false;  ///< SuiteSparseQR kept: its analysis' bound on nnz(R)
  std::int64_t rank = -1;
  double residual = kMissing;    ///< ||A x - b||_2 (not computed when m < n)
  double spqr_flops = kMissing;  ///< SuiteSparseQR's own flop count
  SparseFactorStats stats;       ///< ours: factor_stats()
  std::int64_t stored_bytes = -1;  ///< ours: stored_bytes() (R, C, and the kept reflectors)
};

/// b = A * ones + 1e-4 ||A * ones|| / sqrt(m) * u, u uniform in (-1, 1) from a fixed seed:
/// m x 1, host. A least-squares right-hand side whose residual is well above rounding when
/// m > n.
Matrix<double> make_rhs(const CscMatrix<double>& a);

/// gpuqr's SparseQR<double> in `mode` with `options` (its context picks GPU or CPU;
/// keep_householder is set by the mode), timed by `plan`; x from solve(b) (kept) or
/// solve_carried() (qless). Exceptions propagate.
SideResult run_ours(const CscMatrix<double>& a, const Matrix<double>& b, Mode mode,
                    const SparseQROptions& options, const Plan& plan);

/// SuiteSparseQR in `mode` with COLAMD and its default tolerance on `cc` (started by the
/// caller, its settings used as they are), timed by `plan`; x by SuiteSparseQR_qmult +
/// SuiteSparseQR_solve (kept) or from C, R and E (qless). A failure is reported in
/// SideResult::error.
SideResult run_spqr(const CscMatrix<double>& a, const Matrix<double>& b, Mode mode,
                    cholmod_common* cc, const Plan& plan);

}  // namespace gpuqr::bench
