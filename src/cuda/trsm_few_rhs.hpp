// The CUDA trsm leaf's own kernel for B := A^{-1} B with A upper triangular and few columns
// in B (the least-squares solves: R x = Q^T b), src/cuda/trsm_few_rhs.cu.
#pragma once

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The most right-hand sides the kernel takes, and the largest n it is used for (a tile of
/// 32 rows visits every tile below it in turn; beyond this cuBLAS's trsm is as fast).
inline constexpr std::int64_t kFewRhs = 4;
inline constexpr std::int64_t kFewRhsMaxN = 32768;

/// B := A^{-1} B (A n x n upper triangular, unit or not; B n x k, k <= kFewRhs) on the stream.
/// False, with nothing enqueued, where the shape is outside the kernel's range.
template <class T>
bool trsm_upper_few_rhs(detail::ContextImpl& ctx, Diag diag, MatrixView<const T> a,
                        MatrixView<T> b);

}  // namespace gpuqr::kernels::cuda
