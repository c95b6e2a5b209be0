// Driver pieces shared between the dense functions and the factorization objects.
#pragma once

#include <utility>
#include <vector>

#include "gpuqr/dense.hpp"

namespace gpuqr::detail {

/// Throws InvalidArgument (naming `what` and `routine`) when ctx.check_finite() and `a`
/// holds a NaN or Inf.
template <class T>
void check_finite(const Context& ctx, MatrixView<const T> a, const char* what,
                  const char* routine);

/// Q^T B, R^{-1} on B's top n rows, residual norms from the rest; `qr` is geqrf's m x n
/// output (m >= n). On a singular R, B holds Q^T B and the info says where.
template <class T>
LstsqInfo solve_factored(const Context& ctx, MatrixView<const T> qr, VectorView<const T> tau,
                         MatrixView<T> b);

/// The factorization engines, after argument checks: on CUDA the blocked Householder
/// driver (src/core/blocked_qr.cpp, our panel kernel + cuBLAS); on the CPU LAPACK's own.
template <class T>
void run_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau);
template <class T>
void run_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
               VectorView<const T> tau, MatrixView<T> c);

/// run_geqrf for the factorization objects' inner QRs of tall blocks (a lower part of Q^T U,
/// the removed rows' part of Q), where the caller already waits on the host: on CUDA, for
/// 128 <= cols <= 256 and rows >= 30 cols (where it measured faster), tsqr_geqrf's
/// certified CholeskyQR2 with the Householder
/// vectors reconstructed (Householder QR when the certificate fails; the same output form);
/// otherwise run_geqrf. GPUQR_TALL_INNER_QR=0 turns it off (measurements).
template <class T>
void run_geqrf_tall(const Context& ctx, MatrixView<T> a, VectorView<T> tau);
/// Tests: -1 = the default above, 0 = never the CholeskyQR2 path, 1 = always where rows >= 4
/// cols (so that small test shapes reach it and its fallback).
void run_geqrf_tall_mode(int mode);
template <class T>
void run_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau);

/// (min |d_i| / max |d_i|, first i with d_i == 0 or -1).
std::pair<double, std::int64_t> diagonal_summary(const std::vector<double>& d);

}  // namespace gpuqr::detail
