// larfb's two big FP32 products on the TF32 tensor cores with the 3xTF32 split done in
// registers (CUTLASS's OpMultiplyAddFastF32; src/cuda/larfb_tf32.cu), for the trailing updates
// of tall FP32 Householder QR. src/cuda/ only.
#pragma once

#include <cstdint>

#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// Whether the FP32 larfb (left side) of an m x n C with k reflectors takes the 3xTF32
/// products: larfb_tf32_mode's override if set (1: wherever built); else not with
/// GPUQR_LARFB_TF32=0 or GPUQR_GRAM_TF32=0; else m >= GPUQR_LARFB_TF32_ROWS (131072),
/// k >= GPUQR_LARFB_TF32_MIN_K (64) and n >= GPUQR_LARFB_TF32_MIN_N (64). Read on every call.
bool larfb_tf32_wanted(std::int64_t m, std::int64_t n, std::int64_t k);

/// larfb_tf32_mode's override (-1 when unset), for the graph cache's key.
int larfb_tf32_override();

/// W (k x n, ld ldw) := V^T C for V m x k (ld ldv) and C m x n (ld ldc), m long: split-K over
/// chains of at most GPUQR_LARFB_TF32_CHAIN rows (1024), the slices' partial products summed
/// in FP32 in order, row chunks adding into W when the slices' workspace (the split workspace,
/// GPUQR_LARFB_TF32_WS_MB, 256) would be exceeded. Asynchronous on the context's stream. False
/// (nothing written) where CUTLASS cannot take the operands (alignment) or the workspace
/// cannot be had.
bool transposed_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                               std::int64_t m, std::int64_t k, const float* c, std::int64_t ldc,
                               std::int64_t n, float* w, std::int64_t ldw);

/// C (m x n, ld ldc) -= V Y for V m x k (ld ldv) and Y k x n (ld ldy). Asynchronous on the
/// context's stream. False (nothing done) where CUTLASS cannot take the operands (alignment).
bool minus_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                          std::int64_t m, std::int64_t k, const float* y, std::int64_t ldy,
                          std::int64_t n, float* c, std::int64_t ldc);

}  // namespace gpuqr::kernels::cuda
