// The QRF-AH panel's device code shared by its kernels (panel_qr_ah.cu: the Gram pass and the
// b x b kernel; panel_qr_ah_step.cu: the step kernel that fuses them with the scaling and the
// update of the outer panel's next columns in one cluster). src/cuda/ only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/qrf_ah_panel.cuh"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda::ah {

inline constexpr int kB = kPanelMaxWidth;  // 32

/// acc := this thread's 4 entries of P(r0:r1, 0:b)^T P(r0:r1, 0:b) (zeros past b), by the
/// block's 256 threads: thread t owns entries (t % 32, t / 32 + 8 q), accumulated over 32-row
/// tiles staged in `tile` ([row][col]), the next tile loaded into registers while this one is
/// multiplied. Ends with a block barrier (the tile may be reused).
template <class T>
__device__ void gram_rows(const T* a, std::int64_t lda, std::int64_t r0, std::int64_t r1, int b,
                          T (*tile)[kB + 1], T* acc) {
  constexpr int kThreads = 256;
  const int tid = threadIdx.x;
  const int gi = tid % 32, gj = tid / 32;
#pragma unroll
  for (int q = 0; q < 4; ++q) acc[q] = T(0);
  T next[4];
  auto load = [&](std::int64_t base) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int idx = tid + kThreads * q;
      const int rr = idx % 32, c = idx / 32;
      const std::int64_t row = base + rr;
      next[q] = (row < r1 && c < b) ? a[row + c * lda] : T(0);
    }
  };
  if (r0 < r1) load(r0);
  for (std::int64_t base = r0; base < r1; base += 32) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int idx = tid + kThreads * q;
      tile[idx % 32][idx / 32] = next[q];
    }
    __syncthreads();
    if (base + 32 < r1) load(base + 32);
#pragma unroll 8
    for (int rr = 0; rr < 32; ++rr) {
      const T xi = tile[rr][gi];
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[q] += xi * tile[rr][gj + 8 * q];
    }
    __syncthreads();
  }
}

/// T (larft's, T(r, c) at g[c][r]) of a panel that Algorithm 2 factored, from its top block
/// x (V_T strictly below the diagonal; what is on and above it is multiplied by zeros), D, B =
/// P_B^T P_B (bg) and tau: M = V^T V = V_T^T V_T + D^T B D (V_B = P_B D), then T = (diag(1 /
/// tau) + strictly_upper(M))^{-1}. By all kTop threads, after a block barrier that published
/// the inputs; ends with one. Overwrites g, wb and bg's strictly upper part. The same bits for
/// any kTop (each entry's sums run in a fixed order), so the b x b kernel (top_finish) and the
/// T kernel beside the scaling (panel_qr_ah.cu) agree. `clocks` (may be null): clock64 at the
/// boundary between the two phases (index 4).
template <class T, int kTop>
__device__ void vtv_and_t(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1], T (*bg)[kB + 1],
                          T (*wb)[kB + 1], const T* s_tau, int b, long long* clocks) {
  constexpr int kQ = kB * kB / kTop;
  const int tid = threadIdx.x;
  // M = V^T V = V_T^T V_T + D^T B D (V_B = P_B D, so V_B^T V_B = D^T B D), strictly upper
  // part (all larft reads): g := E = B D first (D upper triangular), then M into bg's
  // strictly upper part, which E's products no longer read.
  // Both products over all 32 terms, unrolled: D is zero below its diagonal and past b, B
  // and X past b (thread t: entries i = t / 32 + 8 q of column j = t % 32).
  {
    const int j = tid % kB, i0 = tid / kB;
    T e[kQ];
#pragma unroll
    for (int q = 0; q < kQ; ++q) e[q] = T(0);
#pragma unroll 8
    for (int k = 0; k < kB; ++k) {
      const T dkj = d[j][k];
#pragma unroll
      for (int q = 0; q < kQ; ++q) e[q] = fma(bg[k][i0 + (kTop / kB) * q], dkj, e[q]);
    }
#pragma unroll
    for (int q = 0; q < kQ; ++q) g[j][i0 + (kTop / kB) * q] = e[q];
  }
  __syncthreads();
  {
    const int j = tid % kB, i0 = tid / kB;
    // V_T(r, c) is 1 for r == c, X(r, c) below the diagonal, 0 above: rows r >= j count.
    T s[kQ];
#pragma unroll
    for (int q = 0; q < kQ; ++q) s[q] = x[i0 + (kTop / kB) * q][j];
#pragma unroll 8
    for (int r = 0; r < kB; ++r) {
      const T xjr = r > j ? x[j][r] : T(0), gjr = g[j][r];
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const int i = i0 + (kTop / kB) * q;
        s[q] = fma(x[i][r], xjr, fma(d[i][r], gjr, s[q]));
      }
    }
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const int i = i0 + (kTop / kB) * q;
      if (i < j && j < b) bg[j][i] = s[q];
    }
  }
  __syncthreads();
  if (clocks != nullptr && threadIdx.x == 0) clocks[4] = clock64();
  // T = (diag(1 / tau) + strictly_upper(M))^{-1} (larft's T), into g (T(r, c) at g[c][r]).
  if (b == kB) {
    // Full panels: by rows, one lane each. Row i of T is the recurrence T(i, j) = -tau_j
    // sum_{i <= l < j} T(i, l) M(l, j) over j in order, with no data from the other rows:
    // one warp, no barrier (measured: 6.9k cycles by the doubling below, FP64, session 17).
    if (tid < kB) {
      const int i = tid;
      T trow[kB];  // T(i, :); zero left of the diagonal, so the sums can run from l = 0
#pragma unroll
      for (int j = 0; j < kB; ++j) {
        T s0 = 0, s1 = 0;
#pragma unroll
        for (int l = 0; l + 1 < j; l += 2) {
          s0 = fma(trow[l], bg[j][l], s0);
          s1 = fma(trow[l + 1], bg[j][l + 1], s1);
        }
        if (j % 2 == 1) s0 = fma(trow[j - 1], bg[j][j - 1], s0);
        const T tj = s_tau[j];
        trow[j] = j > i ? -tj * (s0 + s1) : (j == i ? tj : T(0));
      }
#pragma unroll
      for (int j = 0; j < kB; ++j) g[j][i] = trow[j];
    }
    __syncthreads();
  } else {
    // Otherwise by doubling: with T's diagonal blocks of size s known, each off-diagonal block
    // of the 2s blocks is T12 = -T11 (M12 T22), all blocks of a level at once (W = M12 T22 in
    // wb): log2(b) levels of short products instead of b dependent steps.
    for (int idx = tid; idx < b * b; idx += kTop) {
      const int i = idx % b, j = idx / b;
      g[j][i] = i == j ? s_tau[i] : T(0);
    }
    __syncthreads();
    // Entry e of a level (sz = 2^lg) maps to block e / sz^2 (rows p .. p + sz - 1, columns
    // p + sz .. p + 2 sz - 1, p = 2 sz block) and, within it, row e % sz, column (e % sz^2) / sz:
    // at most b sz / 2 <= 256 entries, about one per thread.
    for (int lg = 0; (1 << lg) < b; ++lg) {
      const int sz = 1 << lg;
      const int total = ((b + 2 * sz - 1) >> (lg + 1)) << (2 * lg);
      for (int e = tid; e < total; e += kTop) {
        const int p = (e >> (2 * lg)) << (lg + 1), i = p + (e & (sz - 1));
        const int j = p + sz + ((e >> lg) & (sz - 1));
        if (j >= b) continue;
        T s = 0;
#pragma unroll 4
        for (int l = p + sz; l <= j; ++l) s += bg[l][i] * g[j][l];  // M(i, l) T(l, j)
        wb[j][i] = s;
      }
      __syncthreads();
      for (int e = tid; e < total; e += kTop) {
        const int p = (e >> (2 * lg)) << (lg + 1), i = p + (e & (sz - 1));
        const int j = p + sz + ((e >> lg) & (sz - 1));
        if (j >= b) continue;
        T s = 0;
#pragma unroll 4
        for (int l = i; l < p + sz; ++l) s += g[l][i] * wb[j][l];  // T(i, l) W(l, j)
        g[j][i] = -s;
      }
      __syncthreads();
    }
  }
}

/// The b x b kernel's work after its inputs are in shared memory (bg = B, x = the top block,
/// zeros past b, d = I, *s_ok = 1, and a block barrier passed), by all kTop threads: G =
/// P_T^T P_T + B, Algorithm 2, then (when it factored all b columns) V^T V and T, and the
/// outputs: R and V_T into a's top block, the explicit V's top rows into v, tau, T (t_out,
/// when not null), D (d_out, kB x kB, when not null), *status = 1. Otherwise *status = 0 and
/// nothing is written. Returns whether it factored (the same in every thread). `clocks`
/// (may be null): clock64 at the phase boundaries 2..6 (measurements). `b_out` (kB x kB, may
/// be null): when given, V^T V and T are left to the T kernel that runs beside the scaling
/// (t_out is then not written) and B is written there for it instead.
template <class T, int kTop>
__device__ bool top_finish(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1], T (*bg)[kB + 1],
                           T (*wb)[kB + 1], T* s_tau, int* s_ok, T* a, std::int64_t lda, int b,
                           T* tau_out, T* v, std::int64_t ldv, T* t_out, std::int64_t ldt, T* d_out,
                           int* status, double threshold, int warp_factor, long long* clocks,
                           T* b_out = nullptr) {
  constexpr int kQ = kB * kB / kTop;
  const int tid = threadIdx.x;
  auto mark = [&](int p) {
    if (clocks != nullptr && tid == 0) clocks[p] = clock64();
  };
  // G = P_T^T P_T + B, all 32 x 32 entries (the top block's padding is zero: so is G's),
  // thread t's four entries in column t % 32.
  {
    const int i = tid % kB, j0 = tid / kB;  // entries (i, j0 + (kTop / kB) q)
    T s[kQ];
#pragma unroll
    for (int q = 0; q < kQ; ++q) s[q] = bg[j0 + (kTop / kB) * q][i];
#pragma unroll 8
    for (int r = 0; r < kB; ++r) {
      const T xir = x[i][r];
#pragma unroll
      for (int q = 0; q < kQ; ++q) s[q] = fma(xir, x[j0 + (kTop / kB) * q][r], s[q]);
    }
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const int j = j0 + (kTop / kB) * q;
      g[j][i] = s[q];
      // Squares that over- or underflow (or a zero column): the Householder kernel's scaled
      // path handles those columns.
      if (i == j && j < b && !(s[q] >= SafeRange<T>::small && s[q] <= SafeRange<T>::big)) *s_ok = 0;
    }
  }
  __syncthreads();
  mark(2);
  if (*s_ok == 0) {
    if (tid == 0) *status = 0;
    return false;  // uniform
  }
  // Algorithm 2 by the whole block, by warp 0 with the columns in registers, or by four
  // warps with a quarter of the rows each, in blocks of 8 or interleaved (warp_factor 0, 1,
  // 4, 6; 7: interleaved with the shorter reciprocal chains; 10: 7 with shadow warps fetching
  // its code ahead). The warps' versions take full 32-column panels only (they are unrolled
  // over them).
  __shared__ ah::WarpsShared<T, kB> s_warps;  // the four warps' versions' scalars
  bool factored;
  if (warp_factor == 1 && b == kB)
    factored = ah::factor_block_warp<T, kB>(x, g, d, s_tau, threshold, detail::kAhMaxAmplification);
  else if (warp_factor == 4 && b == kB && kTop >= 128)
    factored = ah::factor_block_warps<T, kB>(x, g, d, s_tau, threshold, detail::kAhMaxAmplification,
                                             s_warps);
  else if (warp_factor == 6 && b == kB && kTop >= 128)
    factored = ah::factor_block_warps_interleaved<T, kB>(x, g, d, s_tau, threshold,
                                                         detail::kAhMaxAmplification, s_warps);
  else if (warp_factor == 7 && b == kB && kTop >= 128)
    factored = ah::factor_block_warps_interleaved<T, kB, true>(
        x, g, d, s_tau, threshold, detail::kAhMaxAmplification, s_warps);
  else if (warp_factor == 10 && b == kB && kTop >= 128)  // wb: the shadows' scratch
    factored = ah::factor_block_warps_interleaved<T, kB, true, true>(
        x, g, d, s_tau, threshold, detail::kAhMaxAmplification, s_warps, &wb[0][0]);
  else
    factored = ah::factor_block<T, kB, kTop>(x, g, d, s_tau, b, threshold,
                                             detail::kAhMaxAmplification) == b;
  mark(3);
  if (!factored) {
    if (tid == 0) *status = 0;
    return false;  // uniform: nothing of the panel was written
  }
  if (b_out != nullptr) {
    mark(4);  // the phases below are the T kernel's (panel_qr_ah.cu): none here
  } else {
    vtv_and_t<T, kTop>(x, g, d, bg, wb, s_tau, b, clocks);
  }
  mark(5);
  // R and V_T in place, the explicit V's top rows, tau, T, D for the scaling kernel.
  auto put = [&](int i, int j) {
    const T xv = x[j][i];
    a[i + j * lda] = xv;
    v[i + j * ldv] = i > j ? xv : (i == j ? T(1) : T(0));
    if (d_out != nullptr) d_out[i + j * kB] = d[j][i];
    if (b_out != nullptr) {
      b_out[i + j * kB] = bg[j][i];
    } else if (t_out != nullptr) {
      t_out[i + j * ldt] = g[j][i];
    }
  };
  if (b == kB) {  // full panels: constant indices, every store of a thread issued together
#pragma unroll
    for (int q = 0; q < kQ; ++q) put((tid + kTop * q) % kB, (tid + kTop * q) / kB);
  } else {
    for (int idx = tid; idx < b * b; idx += kTop) put(idx % b, idx / b);
  }
  if (tid < b) tau_out[tid] = s_tau[tid];
  if (tid == 0) *status = 1;
  mark(6);
  return true;
}

}  // namespace gpuqr::kernels::cuda::ah
