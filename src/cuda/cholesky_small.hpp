// CholeskyQR's n x n step for n <= 128 in one launch of one block (src/cuda/cholesky_small.cu):
// the Gram matrix's status and shift, its Cholesky factor R, R^{-1}, and the post status, all
// in shared memory. The cuSOLVER potrf + cuBLAS TRSM route it replaces is a dozen launches
// of latency-bound kernels, ~170 us a step on an H200 at n = 128 (ncu, session 16 run 1),
// against ~1 ms for the whole of CholeskyQR2's tall passes at n = 64. src/cuda/ only.
#pragma once

#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The widest Gram matrix the one-block kernel takes (its shared memory: G padded to np =
/// 32 ceil(n / 32) with ld np + 1, the diagonal blocks' inverses and one block column of
/// products, 186 KiB in double at n = 128).
inline constexpr std::int64_t kSmallCholeskyMaxCols = 128;

/// 1 <= n <= kSmallCholeskyMaxCols, unless GPUQR_SMALL_CHOLESKY=0 (read once) keeps the
/// cuSOLVER route (measurements).
bool small_cholesky_wanted(std::int64_t n);

/// cholesky_inverse's contract (src/core/cholqr_kernels.hpp) for 1 <= n <= 128: the status of
/// G (||G - I||_F, trace, shift), G += shift I, G := R (upper, zeros below), R^{-1} into rinv
/// (zeros below), the status of R (breakdown column as potrf's info, or n + 1 when R^{-1} is
/// not finite; ||R^{-1}||_F; min/max |R(i, i)|). On a breakdown rinv is left as it was and
/// the norms are 0, as the CPU twin leaves them. Blocked by 32 columns: each diagonal block
/// factored and inverted by one warp in registers, the rest by the block from shared memory.
template <class T>
void small_cholesky_inverse(detail::ContextImpl& ctx, MatrixView<T> g, MatrixView<T> rinv,
                            double shift_factor, VectorView<double> status);

}  // namespace gpuqr::kernels::cuda
