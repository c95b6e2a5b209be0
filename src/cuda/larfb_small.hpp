// larfb (left side) for a few reflectors on a short C in one launch: the blocked QR's
// in-panel update (32 reflectors of an inner panel applied to the rest of its outer panel),
// which cuBLAS does in three or four dependent GEMM launches of a few microseconds each.
// src/cuda/ only.
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The most reflectors (V's columns) larfb_small takes, and the most rows of C for which larfb
/// takes it by default. Measured (H200, session 27 run 1, gpuqr_tester geqrf against
/// GPUQR_LARFB_SMALL=0 in the same call): n = 1024 and 2048 gained 6-9% (FP64) and 10-20%
/// (FP32), n = 4096 lost up to 10% (FP64), its one SM per four columns then doing 4k rows.
inline constexpr std::int64_t kLarfbSmallMaxK = 32;
inline constexpr std::int64_t kLarfbSmallDefaultRows = 2048;

/// Whether larfb's left-side call with C m x n and k reflectors takes larfb_small:
/// larfb_small_mode's override if set (1: wherever it can: k <= 32), else not with
/// GPUQR_LARFB_SMALL=0, else k <= 32, m <= GPUQR_LARFB_SMALL_ROWS (kLarfbSmallDefaultRows) and
/// n <= 256.
bool larfb_small_wanted(std::int64_t m, std::int64_t n, std::int64_t k);

/// larfb_small_mode's override (-1 when unset), for the graph cache's key.
int larfb_small_override();

/// C := (I - V op(T) V^T) C for V m x k (explicit: unit diagonal and zeros above it stored;
/// k <= kLarfbSmallMaxK), T k x k (upper, explicit zeros below its diagonal: the full T is
/// multiplied, as larfb's GEMM path does), C m x n, all in device memory. One launch of
/// ceil(n / 4) blocks, each W = V^T C for four columns, op(T) W and C -= V (op(T) W), with
/// no workspace. Asynchronous on the context's stream.
template <class T>
void larfb_small(detail::ContextImpl& ctx, Op op, MatrixView<const T> v, MatrixView<const T> t,
                 MatrixView<T> c);

}  // namespace gpuqr::kernels::cuda
