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
/// (224 KiB at n > 64: Hopper, not A100), or FP32 (elem_bytes 4) on the TF32 tensor cores
/// (gram_tf32_enabled()) at any n <= 128 where it fits likewise, or with plain FMAs at n <= 64,
/// where they beat cuBLAS's n x n x m GEMM (FMA kernel measured; the tensor-core ones expected,
/// see the .cu files). Call with the context's device current. Read on every call, so that a
/// test or a benchmark may switch it between calls.
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
/// x_upper: X is upper triangular (its strictly lower part is not read); FP64 at n > 64 then
/// takes the skewed product pass (GPUQR_GRAM_SKEW), bitwise the same result.
template <class T>
void streamed_gram(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x, std::int64_t ldx,
                   MatrixView<T> g, bool x_upper = false);

/// Whether the CUDA leaf gram_low takes the streamed TF32 kernel (src/cuda/gram_low_streamed.cu)
/// for an FP64 A of m x n: n <= 128 where the device has its shared memory (112 KiB), and
/// m >= 65536; GPUQR_GRAM_LOW_STREAMED=1 forces it at any m >= 1 (tests), =0 keeps the
/// conversion path (A/B measurements). Read on every call. Call with the context's device
/// current.
bool streamed_gram_low_wanted(std::int64_t m, std::int64_t n);

/// G (n x n, full symmetric) := A^T A with A's entries rounded to TF32 (FP64 -> FP32 -> TF32,
/// to nearest) and FP32 sums, for FP64 A (m >= 1, 1 <= n <= 128), in one read of A: gram_low's
/// contract (the CPU twin's rounding), bitwise reproducible run to run on one device.
/// Asynchronous on the context's stream; G in device memory.
void streamed_gram_low(detail::ContextImpl& ctx, MatrixView<const double> a, MatrixView<double> g);

/// Whether FP32 runs on the TF32 tensor cores with the 3xTF32 split (src/cuda/gram_tf32.cu)
/// rather than on FP32 FMAs: gram_tf32_mode's override if set, else GPUQR_GRAM_TF32 (1 or
/// unset: yes, 0: no; read on every call, for A/B runs). FP64 is not affected.
bool gram_tf32_enabled();

/// Test hook: 1 forces the 3xTF32 FP32 kernels, 0 the FMA kernel, -1 (the default) leaves the
/// choice to GPUQR_GRAM_TF32. Process-wide (atomic); a test resets it to -1 however it ends.
void gram_tf32_mode(int mode);

/// Test hook for the CUDA leaf tall_times_upper_wanted (src/cuda/gram_product.cu): 1 forces
/// the streamed Q = A X kernel wherever it applies (any m >= 1, n <= 128, the shared memory
/// fits; FP32 with gram_tf32_enabled()), 0 forces cuBLAS's GEMM (today's path), -1 (the
/// default) leaves it to GPUQR_QPROD (0: off; 1 or unset: the Gram kernels' rule,
/// gram_kernel_wanted). Process-wide (atomic); a test resets it to -1 however it ends.
void tall_times_upper_mode(int mode);

/// Whether the current device has the shared memory of the 3xTF32 kernels for n columns (the
/// product pass at n > 64 takes 224 KiB: Hopper, not A100).
bool gram_tf32_fits(std::int64_t n);

/// streamed_gram<float> on the TF32 tensor cores (same contract: G := A^T A, or with x not
/// null (A X)^T (A X), bitwise reproducible run to run, asynchronous on the context's stream).
/// Each FP32 value is split as big + small (both TF32) and a product taken as big big + big
/// small + small big, accumulated in FP32: FP32-level accuracy (see the .cu). Call with the
/// context's device current.
void streamed_gram_tf32(detail::ContextImpl& ctx, MatrixView<const float> a, const float* x,
                        std::int64_t ldx, MatrixView<float> g);

}  // namespace gpuqr::kernels::cuda
