// Algorithm 2's outputs for a full 32-column AH panel by another route: the Cholesky factor of
// the panel's Gram matrix, then Householder reconstruction of the top block (orhr_col's
// modified LU; Ballard et al., "Reconstructing Householder vectors from Tall-Skinny QR").
// With P = [P_T; P_B] (P_T the 32 x 32 top block), G = P^T P and
//   G = R_c^T R_c                  (Cholesky, R_c upper with a positive diagonal)
//   Q_T = P_T R_c^{-1}             (the top block of P's orthonormal factor)
//   Q_T - S = L U                  (LU without pivoting, S(k, k) = -sign of the pivot, so that
//                                   |U(k, k)| = 1 + |pivot| >= 1)
// the Householder QR of P (geqrf's signs) is V_T = L, R = S R_c, tau_k = |U(k, k)|,
// V_B = P_B D with D = (U R_c)^{-1}, and T = -U S L^{-T}: the same numbers Algorithm 2
// computes column by column (qrf_ah_panel.cuh), in exact arithmetic.
// Its dependent chains are two of 32 short steps (a pivot, one reciprocal square root or
// reciprocal, one product and one FMA each, exchanged by shuffles) and triangular solves
// whose steps are a single FMA: one warp runs them with everything in registers, where
// Algorithm 2's step (two reciprocals in sequence, then the update of X, D and G) is a block
// barrier and ~900 cycles (session 17). Cholesky's pivots are Algorithm 2's downdated norms,
// so its norm-update test is the same test; the amplification test reads the same D.
#pragma once

#include <cuda_runtime.h>

#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda::ah {

/// clock64 into clocks[p] by thread 0 (measurements; clocks may be null).
__device__ __forceinline__ void mark(long long* clocks, int p) {
  if (clocks != nullptr && threadIdx.x == 0) clocks[p] = clock64();
}

/// Called by every thread of the block (warp 0 computes; the others wait at the final
/// barrier). On entry x = the top block, g = G (both [col][row], kB + 1 padding), a block
/// barrier has passed since they were written, and G's diagonal is in the safe range. `wb`
/// is scratch. Returns (the same in every thread, after a barrier) whether all 32 columns
/// pass the norm-update test (every pivot above `threshold` times its column's squared norm;
/// NaN fails) and the amplification test. On true: R on and above x's diagonal, V_T below it,
/// D on and above d's diagonal (zeros below), tau; and, when `form_t`, T in g (T(r, c) at
/// g[c][r]). On false the shared matrices hold intermediate values (the caller writes nothing).
/// `clocks` (may be null; measurements): clock64 after each step, in slots 8..13.
template <class T, int kB>
__device__ bool factor_block_chol(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1],
                                  T (*wb)[kB + 1], T* tau, bool form_t, double threshold,
                                  double max_amplification, long long* clocks) {
  static_assert(kB == 32, "32 columns, one a lane");
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ T s_rinv[kB];   // 1 / R_c(k, k)
  __shared__ T s_minv[kB];   // 1 / (U R_c)(k, k)
  __shared__ T s_sgn[kB];    // sign of the LU's pivot k (S(k, k) = -s_sgn[k])
  __shared__ T s_cnorm[kB];  // ||P(:, k)||
  __shared__ int s_good;
  if (threadIdx.x < 32) {
    const int lane = static_cast<int>(threadIdx.x);
    const T norm0 = g[lane][lane];
    s_cnorm[lane] = sqrt(norm0);
    T pivot = 0;  // this lane's Cholesky pivot (the downdated G(lane, lane))
    // 1. Cholesky, right-looking, lane j holding column j of G (rows above the diagonal are
    //    its own; those below receive harmless updates and are never read). Every exchange is
    //    a shuffle (no barrier or shared memory in the loop), so the compiler can overlap a
    //    step's bulk update with the next steps' pivot chain. R_c's rows go to g[k][*]
    //    (row-major from here on: g is free once in registers), read after the loop.
    {
      T gc[kB];
#pragma unroll
      for (int i = 0; i < kB; ++i) gc[i] = g[lane][i];
      __syncwarp();  // every lane has read g before any lane writes R_c into it
#pragma unroll
      for (int k = 0; k < kB; ++k) {
        const T piv = __shfl_sync(kAll, gc[k], k);
        if (lane == k) pivot = piv;
        const T rs = batched::refined_rsqrt(piv);
        const T r = lane >= k ? gc[k] * rs : T(0);  // R_c(k, lane)
        g[k][lane] = r;
        if (lane == 0) s_rinv[k] = rs;
#pragma unroll
        for (int i = k + 1; i < kB; ++i) gc[i] = fma(-__shfl_sync(kAll, r, i), r, gc[i]);
      }
    }
    mark(clocks, 8);
    __syncwarp();
    // 2. Q_T = P_T R_c^{-1}, lane i holding row i (right-looking: q_c final, then subtracted
    //    from the later entries).
    T qr[kB];
#pragma unroll
    for (int c = 0; c < kB; ++c) qr[c] = x[c][lane];
#pragma unroll
    for (int c = 0; c < kB; ++c) {
      qr[c] *= s_rinv[c];
#pragma unroll
      for (int l = c + 1; l < kB; ++l) qr[l] = fma(-qr[c], g[c][l], qr[l]);
    }
    mark(clocks, 9);
    // 3. Q_T - S = L U by rows: step k's pivot and U's row k from lane k by shuffles, each
    //    later row's multiplier L(i, k) its own entry over U(k, k).
    T my_sgn = 0;
#pragma unroll
    for (int k = 0; k < kB; ++k) {
      const T qkk = __shfl_sync(kAll, qr[k], k);
      const T sg = qkk >= T(0) ? T(1) : T(-1);
      const T ukk = qkk + sg;  // U(k, k) = Q(k, k) - S(k, k), |U(k, k)| >= 1
      const T ru = batched::refined_rcp(ukk);
      if (lane == 0) {
        s_sgn[k] = sg;
        s_minv[k] = ru * s_rinv[k];
        tau[k] = sg * qkk + T(1);  // = |U(k, k)|
      }
      const T l = lane > k ? qr[k] * ru : T(0);  // L(lane, k)
      my_sgn = lane == k ? sg : my_sgn;
      qr[k] = lane == k ? ukk : (lane > k ? l : qr[k]);
#pragma unroll
      for (int c = k + 1; c < kB; ++c) qr[c] = fma(-l, __shfl_sync(kAll, qr[c], k), qr[c]);
    }
    mark(clocks, 10);
    // U's rows into wb (zeros left of the diagonal), read by M and T's solve below.
#pragma unroll
    for (int c = 0; c < kB; ++c) wb[lane][c] = c >= lane ? qr[c] : T(0);
    __syncwarp();
    // 4. M = U R_c (row `lane`), into d as rows (d[i][c] = M(i, c)); 1 / M(k, k) is
    //    s_minv[k].
    {
      T mr[kB];
#pragma unroll
      for (int c = 0; c < kB; ++c) mr[c] = T(0);
#pragma unroll
      for (int l = 0; l < kB; ++l) {
        const T u = wb[lane][l];
#pragma unroll
        for (int c = l; c < kB; ++c) mr[c] = fma(u, g[l][c], mr[c]);
      }
#pragma unroll
      for (int c = 0; c < kB; ++c) d[lane][c] = mr[c];
    }
    mark(clocks, 11);
    __syncwarp();
    // 5. D = M^{-1}, lane c solving M y = e_c from the bottom up (right-looking).
    T y[kB];
#pragma unroll
    for (int i = 0; i < kB; ++i) y[i] = i == lane ? T(1) : T(0);
#pragma unroll
    for (int i = kB - 1; i >= 0; --i) {
      y[i] *= s_minv[i];
#pragma unroll
      for (int l = 0; l < i; ++l) y[l] = fma(-d[l][i], y[i], y[l]);
    }
    T kappa = 0;  // the amplification test's sum over rows i <= lane of |D(i, lane)| ||P(:, i)||
#pragma unroll
    for (int i = 0; i < kB; ++i) kappa += fabs(y[i]) * s_cnorm[i];
    __syncwarp();  // every lane has read M
#pragma unroll
    for (int i = 0; i < kB; ++i) d[lane][i] = y[i];  // D(i, lane) at d[lane][i]
    // R = S R_c and V_T = L into x, row `lane` (x's P_T was read in step 2).
    const T s_r = -my_sgn;
#pragma unroll
    for (int c = 0; c < kB; ++c) x[c][lane] = c < lane ? qr[c] : s_r * g[lane][c];
    const T my_tau = tau[lane];
    mark(clocks, 12);
    bool bad = lane > 0 && !(static_cast<double>(pivot) > threshold * static_cast<double>(norm0));
    if (lane > 0 && !(static_cast<double>(kappa) * sqrt(0.5 * static_cast<double>(my_tau)) <=
                      max_amplification))
      bad = true;
    if (form_t) {
      // 6. T = -U S L^{-T}, row `lane`: L z = -S U(lane, :)^T by forward substitution (L unit
      //    lower, from x below its diagonal), T(lane, c) = z_c.
      __syncwarp();  // L in x, U in wb
      T z[kB];
#pragma unroll
      for (int c = 0; c < kB; ++c) z[c] = s_sgn[c] * wb[lane][c];
#pragma unroll
      for (int c = 0; c < kB; ++c) {
#pragma unroll
        for (int m = c + 1; m < kB; ++m) z[m] = fma(-x[c][m], z[c], z[m]);
      }
      __syncwarp();  // g's R_c rows were read above (x's R entries)
#pragma unroll
      for (int c = 0; c < kB; ++c) g[c][lane] = z[c];
      mark(clocks, 13);
    }
    const bool any_bad = __any_sync(kAll, bad);
    if (lane == 0) s_good = any_bad ? 0 : 1;
  }
  __syncthreads();
  return s_good != 0;
}

}  // namespace gpuqr::kernels::cuda::ah
