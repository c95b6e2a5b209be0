// Products with a triangular factor or a symmetric result by GEMMs, for the wide tall-skinny
// shapes (n > 128) where cuBLAS's SYRK and TRMM/TRSM run far below the GEMM rate: G = W^T W
// computes only the upper triangle, by recursive halves (one GEMM for the off-diagonal block
// of each range, down to diagonal blocks of kTriangleBlock columns) and mirrors it; Q = A X
// (X upper, zeros below) computes block column j from A's first j1 columns. Both do about
// (1 + nb / n) / 2 of the full GEMM's flops (0.5625 at n = 1024 with blocks of 128).
// src/cuda/ only.
#pragma once

#include <cstdint>

#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The block columns' width by default, and the width from which the drivers use them.
inline constexpr std::int64_t kTriangleBlock = 128;

/// The block columns' width: kTriangleBlock, or GPUQR_TRI_BLOCK (32 to 1024, measurements).
std::int64_t triangle_block_width();

/// G (n x n, ld ldg, the full symmetric matrix) := W^T W for W m x n (ld ldw), by recursive
/// halves (the upper triangle) and a mirror.
template <class T>
void gram_blocked(detail::ContextImpl& ctx, const T* w, std::int64_t ldw, std::int64_t m,
                  std::int64_t n, T* g, std::int64_t ldg);

/// G (n x n, ld ldg, the full symmetric matrix) ~ A^T A for A m x n (ld lda) on the TF32
/// tensor cores: inputs rounded to TF32, FP32 sums (cuBLAS's TF32 GEMMs by recursive halves,
/// mirrored); FP64 A is rounded to FP32 chunk by chunk in the split workspace first and G
/// widened at the end. CholeskyQR2's first-step preconditioner only (gram_low). False
/// (nothing written) when the FP64 chunk's workspace cannot be allocated.
bool gram_low_tf32(detail::ContextImpl& ctx, const float* a, std::int64_t lda, std::int64_t m,
                   std::int64_t n, float* g, std::int64_t ldg);
bool gram_low_tf32(detail::ContextImpl& ctx, const double* a, std::int64_t lda, std::int64_t m,
                   std::int64_t n, double* g, std::int64_t ldg);
/// The width from which gram_low_wanted says yes: GPUQR_CHOLQR_LOW_GRAM_FROM (256 by default),
/// read on every call.
std::int64_t low_gram_from();

/// Q (m x n, ld ldq) := A X for A m x n (ld lda) and X n x n upper triangular with zeros
/// below its diagonal (ld ldx); Q must not overlap A or X.
template <class T>
void upper_product_blocked(detail::ContextImpl& ctx, const T* a, std::int64_t lda,
                           std::int64_t m, std::int64_t n, const T* x, std::int64_t ldx, T* q,
                           std::int64_t ldq);

/// A := A X in place, X as above: block columns from the last to the first (each reads only
/// A's columns to its left and its own, not yet overwritten), row chunk by row chunk through
/// `w` (chunk_rows x triangle_block_width() elements).
template <class T>
void upper_product_blocked_in_place(detail::ContextImpl& ctx, T* a, std::int64_t lda,
                                    std::int64_t m, std::int64_t n, const T* x, std::int64_t ldx,
                                    T* w, std::int64_t chunk_rows);

}  // namespace gpuqr::kernels::cuda
