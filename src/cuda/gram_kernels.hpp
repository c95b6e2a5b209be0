// The streamed Gram kernels of src/cuda/gram_kernels.cu, behind the CUDA leaves `gram` and
// `gram_of_product` (src/cuda/cholqr_kernels.cu) for tall A with at most 128 columns.
// src/cuda/ only; no CUDA headers here.
#pragma once

#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The widest A the streamed kernels take (n <= kGramKernelMaxCols).
constexpr std::int64_t kGramKernelMaxCols = 128;

/// Whether the leaves use the streamed kernels for an m x n A: GPUQR_GRAM_KERNEL=1 forces them
/// (any m >= 1, n <= 128), =0 forces cuBLAS; unset, FP32 (elem_bytes 4) with n <= 64 and
/// m >= 65536, where they were measured faster than cuBLAS's n x n x m GEMM (FP64 runs on
/// plain FMAs here and loses to cuBLAS's FP64 tensor cores; see the .cu). Read on every call, so that a test or a benchmark may switch it between calls.
bool gram_kernel_wanted(std::int64_t m, std::int64_t n, int elem_bytes);

/// G (n x n, full symmetric) := A^T A for A m x n (m >= 1, 1 <= n <= 128), or, with x not
/// null, G := (A X)^T (A X) for X n x n (ld ldx; any X, its zero rows below each column's
/// last nonzero are skipped, so an upper triangular X costs half). One read of A by a
/// persistent grid, per-block partial Gram matrices in the leaf workspace, then a fixed-order
/// sum over the blocks: bitwise reproducible run to run on the same device. Asynchronous on
/// the context's stream; G in device memory.
template <class T>
void streamed_gram(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x,
                   std::int64_t ldx, MatrixView<T> g);

}  // namespace gpuqr::kernels::cuda
