// larfb's C -= V Y on the TF32 tensor cores with the 3xTF32 split (src/cuda/larfb_tf32.cu),
// for the FP32 trailing updates of tall Householder QR. src/cuda/ only.
#pragma once

#include <cstdint>

#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// Whether the FP32 larfb (left side) of an m x n C with k reflectors takes
/// minus_product_3xtf32: larfb_tf32_mode's override if set; else not with GPUQR_LARFB_TF32=0
/// or GPUQR_GRAM_TF32=0; else m >= GPUQR_LARFB_TF32_ROWS (131072), k >= GPUQR_LARFB_TF32_MIN_K
/// (128) and n >= GPUQR_LARFB_TF32_MIN_N (128). Read on every call.
bool larfb_tf32_wanted(std::int64_t m, std::int64_t n, std::int64_t k);

/// larfb_tf32_mode's override (-1 when unset), for the graph cache's key.
int larfb_tf32_override();

/// C (m x n, ld ldc) -= V Y for V m x k (ld ldv) and Y k x n (ld ldy), FP32 in and out, on the
/// TF32 tensor cores: each operand split as hi + lo (both TF32), products lo hi + hi lo + hi hi,
/// one GEMM of inner dimension 3k per row chunk of V (split into the split workspace).
/// Asynchronous on the context's stream. False (nothing done) when the workspace cannot be
/// allocated.
bool minus_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                          std::int64_t m, std::int64_t k, const float* y, std::int64_t ldy,
                          std::int64_t n, float* c, std::int64_t ldc);

}  // namespace gpuqr::kernels::cuda
