// LAPACK's larfg scalars on the fast path, shared by the batched kernels (batched_small.cu,
// batched_tall_small.cu, batched_blocked.cu): a refined reciprocal square root and reciprocal instead of the IEEE
// square root and divisions (long instruction sequences with slow paths in FP64). CUDA-only.
#pragma once

#include <cuda_runtime.h>

#include <limits>

namespace gpuqr::kernels::cuda::batched {

template <class T>
struct Scalars {
  T beta, tau, scale;
};

/// Smallest sum of squares of x (below the diagonal) larfg_scalars takes: below it, and above
/// the largest total, the callers take LAPACK's scaled path instead.
template <class T>
constexpr T kLarfgTiny = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();

/// Whether larfg_scalars applies: ss = ||x||^2 and total = alpha^2 + ss in range (false for
/// NaN too, and for x == 0, which the callers treat as tau = 0).
template <class T>
__device__ __forceinline__ bool larfg_in_range(T ss, T total) {
  return ss >= kLarfgTiny<T> && total <= std::numeric_limits<T>::max();
}

/// Hardware approximations (MUFU: from the high word of a double, so about 20 correct bits;
/// about 23 for float) that the Newton steps below refine. Only called on normal, finite
/// arguments.
__device__ __forceinline__ double rsqrt_approx(double x) {
  double y;
  // .ftz: no out-of-line path for subnormal arguments, which the callers never pass.
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return y;
}
__device__ __forceinline__ float rsqrt_approx(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ double rcp_approx(double x) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return y;
}
__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// Newton steps that take the hardware approximations to within about an ulp: two from the
/// ~20-bit FP64 estimates, one from FP32's.
template <class T>
constexpr int kNewtonSteps = sizeof(T) == 8 ? 2 : 1;

/// 1 / x for x normal and positive or negative, far from the ends of the range.
template <class T>
__device__ __forceinline__ T refined_rcp(T x) {
  T r = rcp_approx(x);
#pragma unroll
  for (int i = 0; i < kNewtonSteps<T>; ++i) r = fma(r, fma(-x, r, T(1)), r);
  return r;
}

/// 1 / sqrt(x) for x normal and positive, far from the ends of the range.
template <class T>
__device__ __forceinline__ T refined_rsqrt(T x) {
  const T half = T(0.5) * x;
  T y = rsqrt_approx(x);
#pragma unroll
  for (int i = 0; i < kNewtonSteps<T>; ++i) y = fma(y, fma(-half * y, y, T(0.5)), y);
  return y;
}

/// refined_rcp and refined_rsqrt with shorter dependent chains in FP64 (for latency-bound
/// callers): one third-order step from the ~20-bit estimate instead of two Newton steps
/// (truncation ~e^3 ~ 2^-57 relative; rounding within about an ulp). rcp: e = 1 - x y,
/// y (1 + e + e^2), 3 dependent operations instead of 4; rsqrt (Halley): e = 1 - x y^2,
/// y (1 + e / 2 + 3 e^2 / 8), 4 instead of 6. FP32 keeps its one Newton step.
template <class T>
__device__ __forceinline__ T short_chain_rcp(T x) {
  if constexpr (sizeof(T) == 8) {
    const T y = rcp_approx(x);
    const T e = fma(-x, y, T(1));
    return fma(y, fma(e, e, e), y);
  } else {
    return refined_rcp(x);
  }
}
template <class T>
__device__ __forceinline__ T short_chain_rsqrt(T x) {
  if constexpr (sizeof(T) == 8) {
    const T y = rsqrt_approx(x);
    const T e = fma(-(x * y), y, T(1));
    const T p = fma(e, T(0.375), T(0.5));
    return fma(y * e, p, y);
  } else {
    return refined_rsqrt(x);
  }
}

/// larfg's scalars from alpha and total = ||(alpha, x)||^2, for total in [tiny / eps, huge]
/// (larfg_in_range; so every value below is normal and finite): beta = -sign(alpha)
/// sqrt(total), tau = (beta - alpha) / beta = 1 + |alpha| / sqrt(total), and the scale
/// 1 / (alpha - beta) of v. Inline, from the refined reciprocal square root and reciprocal,
/// within about an ulp of the correctly rounded values: the IEEE square root and two
/// divisions it replaces were an out-of-line call of ~80 instructions per column plus their
/// slow paths, a quarter of the 16 x 16 FP64 register kernel's instructions.
template <class T>
__device__ __forceinline__ Scalars<T> larfg_scalars(T alpha, T total) {
  const T y = refined_rsqrt(total);  // 1 / sqrt(total)
  T norm = total * y;                // sqrt(total), one correction from total - norm^2
  norm = fma(fma(-norm, norm, total), T(0.5) * y, norm);
  const T denom = alpha + copysign(norm, alpha);  // alpha - beta: no cancellation
  return {-copysign(norm, alpha), fma(fabs(alpha), y, T(1)), refined_rcp(denom)};
}

}  // namespace gpuqr::kernels::cuda::batched
