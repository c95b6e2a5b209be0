// The refactoring baseline of the updating benchmark (the paper's "TUS"): cuSOLVER geqrf of
// the updated matrix, ormqr for Q^T b and cuBLAS trsm for x, timed on a stream of its own.
#pragma once

#include <cstdint>

namespace gpuqr::bench {

/// Milliseconds (median of `repeat`) of geqrf + ormqr + trsm on a copy of the host matrix
/// a (m x n, column-major, ld m) and b (m x 1); the inputs are restored before each run
/// outside the timing. `residual` receives ||b - A x|| (from Q^T b's trailing part), for the
/// benchmark's cross-check. Throws std::runtime_error on a CUDA failure.
template <class T>
double time_refactor_cusolver(const T* a, const T* b, std::int64_t m, std::int64_t n,
                              int repeat, double* residual);

/// True when the baseline was compiled (a CUDA build).
bool cusolver_baseline_available();

/// cudaProfilerStart / cudaProfilerStop: brackets the timed updates for
/// `ncu --profile-from-start off` when the bench runs with GPUQR_BENCH_PROFILE set.
void profiler_range(bool start);

}  // namespace gpuqr::bench
