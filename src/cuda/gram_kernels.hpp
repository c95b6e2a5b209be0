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
/// (any m >= 1, n <= 128), =0 forces cuBLAS; unset, m >= 65536 and FP64 (elem_bytes 8, the
/// tensor-core kernel) at any n <= 128 where the current device has the shared memory for it
/// (224 KiB at n > 64: Hopper, not A100), or FP32 (elem_bytes 4, plain FMAs) with n <= 64,
/// where they beat cuBLAS's n x n x m GEMM (FP32 measured; FP64 expected, see the .cu). Call
/// with the context's device current. Read on every call, so that a test or a benchmark may
/// switch it between calls.
bool gram_kernel_wanted(std::int64_t m, std::int64_t n, int elem_bytes);

/// G (n x n, full symmetric) := A^T A for A m x n (m >= 1, 1 <= n <= 128), or, with x not
/// null, G := (A X)^T (A X) for X n x n (ld ldx; any X, its zero rows below each column's
/// last nonzero are skipped, so an upper triangular X costs half). One read of A by a
/// persistent grid, per-block partial Gram matrices in the leaf workspace, then a fixed-order
/// sum over the blocks: bitwise reproducible run to run on the same device. FP64 runs on the
/// FP64 tensor cores (mma.sync; sm_80+), in the mma shape GPUQR_GRAM_DMMA names: 884
/// (m8n8k4), 1684 (m16n8k4) or 1688 (m16n8k8, the default; the m16 shapes are sm_90
/// instructions, run as m8n8k4 pieces before sm_90); results differ in rounding between
/// shapes, never between runs of one. Asynchronous on the context's stream; G in device
/// memory.
template <class T>
void streamed_gram(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x,
                   std::int64_t ldx, MatrixView<T> g);

}  // namespace gpuqr::kernels::cuda
