// Algorithm 2 of Tomas & Quintana-Orti (2020) on a b x b top block and the panel's Gram matrix,
// by one thread block of kThreads = 256 threads with everything in shared memory (b <= 32): the
// arithmetic shared by the QRF-AH panel leaf (qrf_ah_kernels.cu) and the blocked QR's AH panel
// (panel_qr_ah.cu), mirrored by the CPU twin (src/cpu/qrf_ah_kernels.cpp). Matrices are stored
// column by column ([col][row], padded). Thread t owns entries (i, j) with j = t % 32 and
// i = t / 32 + 8 q (q = 0..3) of X, D and G; every thread computes column k's scalars itself
// from broadcast reads. Per column k (two block barriers):
//   nu = sqrt(G(k, k)), sigma = X(k, k) + sign nu, tau = 1 + |X(k, k)| / nu, R(k, k) = -sign nu
//   w_j = X(k, j) + (G(k, j) - X(k, k) X(k, j)) / sigma                            (j > k)
//   c_i = X(i, k) / sigma (i > k), D(i, k) / sigma (i <= k): v's top part and D's column k
//   X(i, j) -= tau w_j c_i (i > k), D(i, j) -= tau w_j c_i (i <= k), R(k, j) = X(k, j) - tau w_j
//   -- barrier --   column k := c, R(k, k) and R's row k written; G(i, j) -= R(k, i) R(k, j)
//   (i, j > k; R's row k from a shared copy, since X's row k is still read before the barrier)
//   -- barrier, with the norm-update test: the panel ends after column k when a later
//   column's G(j, j) fell to `threshold` times its value at the start (cancellation in the
//   Gram-based norms; the next panel starts there from the data itself); and the
//   amplification test (detail::kAhMaxAmplification): the panel ends before column k when
//   sqrt(tau_k / 2) sum_i |D(i, k)| ||P(:, i)|| exceeds `max_amplification` (forming v_k's
//   bottom part P_B D(:, k) would cancel too much). Its partial sums are written by column
//   k's threads after the first barrier and read by all after the second.
// Divisions by sigma and nu are multiplications by reciprocals (rsqrt, rcp: within an ulp).
#pragma once

#include <cuda_runtime.h>

#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda::ah {

inline constexpr int kThreads = 256;

/// 1 / x and 1 / sqrt(x) without the division's slow-path branch (within an ulp).
__device__ __forceinline__ double recip(double x) { return __drcp_rn(x); }
__device__ __forceinline__ float recip(float x) { return __frcp_rn(x); }

/// Called by all kTh threads of the block (kTh = 32 * groups, groups dividing 32: thread t
/// owns rows t / 32 + groups q of column t % 32). x, g, d: [col][row] with kB + 1 padding; on
/// entry x = the top block, g = the Gram matrix (destroyed: downdated), d = I, and a barrier
/// has passed since they were written. On exit (after a barrier), for the first kb columns
/// (the returned width, the same in every thread; smaller than b when the norm-update test
/// ends the panel early): R on and above x's diagonal, the Householder vectors' top part
/// below it, D's columns, tau[k] (written by thread 0).
template <class T, int kB, int kTh = kThreads>
__device__ int factor_block(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1], T* tau, int b,
                            double threshold, double max_amplification) {
  static_assert(kB == 32, "32 columns");
  constexpr int kGroups = kTh / 32, kRows = 32 / kGroups;
  static_assert(kGroups * 32 == kTh && kRows * kGroups == 32, "row groups must divide 32");
  __shared__ T s_rk[kB];  // R's row k, read by the downdate (X's row k is read before it)
  __shared__ T s_cnorm[kB];  // ||P(:, i)||, the panel's column norms at the start
  __shared__ T s_kappa[kGroups];  // the amplification test's partial sums, one per row group
  const int tid = static_cast<int>(threadIdx.x), j = tid & 31, r0 = tid >> 5;
  const bool mine = j < b;
  const T norm0 = mine ? g[j][j] : T(0);
  if (r0 == 0) s_cnorm[j] = norm0 > T(0) ? sqrt(norm0) : T(0);  // read after a barrier
  for (int k = 0; k < b; ++k) {
    const T gkk = g[k][k], xkk = x[k][k];
    const bool zero = !(gkk > T(0));
    const T rnu = zero ? T(0) : rsqrt(gkk);
    const T nu = gkk * rnu;
    const T sg = xkk >= T(0) ? T(1) : T(-1);
    const T sigma = zero ? T(1) : xkk + sg * nu;
    const T t = zero ? T(0) : T(1) + fabs(xkk) * rnu;
    const T alpha = zero ? xkk : -sg * nu;
    const T rs = zero ? T(0) : recip(sigma);
    const bool later = mine && j > k;
    const bool row_k_owner = r0 == (k % kGroups);  // among column j's threads, row k's
    const T xjk = later ? x[j][k] : T(0);
    const T tw = later ? t * (xjk + (g[j][k] - xkk * xjk) * rs) : T(0);
    const T rkj = xjk - tw;  // R(k, j)
    if (tid == 0) tau[k] = t;
    if (later && row_k_owner) s_rk[j] = rkj;
    // Row i's entry of column k, and this thread's entry of column j: X below the diagonal,
    // D on and above it (one pointer each, no branch). Entries of rows >= b are padding:
    // read and written, never used.
    T c[kRows];
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
      const int i = r0 + kGroups * q;
      const T* src = i > k ? &x[k][i] : &d[k][i];
      c[q] = *src * rs;
      T* dst = i > k ? &x[j][i] : &d[j][i];
      if (later) *dst -= tw * c[q];
    }
    __syncthreads();  // column k and X's row k read by all; s_rk complete
    if (later && row_k_owner) x[j][k] = rkj;
    if (j == k) {
      T part = 0;  // sum over this thread's rows i <= k of |D(i, k)| ||P(:, i)||
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        const int i = r0 + kGroups * q;
        T* dst = i > k ? &x[k][i] : &d[k][i];
        *dst = c[q];
        if (i <= k) part += fabs(c[q]) * s_cnorm[i];
      }
      s_kappa[r0] = part;
      if (row_k_owner) x[k][k] = alpha;
    }
    bool low = false;
    if (later) {
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        const int i = r0 + kGroups * q;
        if (i > k && i < b) g[j][i] -= s_rk[i] * rkj;
      }
      if (j % kGroups == r0)  // this thread holds G(j, j)
        low = norm0 > T(0) &&
              static_cast<double>(g[j][j]) <= threshold * static_cast<double>(norm0);
    }
    const int any_low = __syncthreads_or(low);
    T kappa = 0;  // the same sum in the same order in every thread: a uniform decision
#pragma unroll
    for (int q = 0; q < kGroups; ++q) kappa += s_kappa[q];
    if (k > 0 && static_cast<double>(kappa) * sqrt(0.5 * static_cast<double>(t)) >
                     max_amplification)
      return k;  // uniform; column k is not part of the panel
    if (any_low) return k + 1;  // uniform
  }
  return b;
}

/// Algorithm 2 for the blocked QR's AH panel on a full 32-column block, all or nothing: the
/// same arithmetic as factor_block on the same shared matrices, by warp 0 alone with lane j
/// holding column j of X / D (`xd`: rows above the current column are D's, rows below X's)
/// and of G (`gc`) in registers (R's entries go to x as they come). Every exchange is a shuffle
/// (column k from lane k, R's row k from every lane), so the 32 steps, fully unrolled, are one
/// block of code with no barrier and no shared memory: the compiler can issue a step's updates of
/// the next pivot's row (its chain: the shuffled pivot, rsqrt, reciprocal, w, R(k, j)) ahead of the
/// rest. Lane k's column is scaled by 1 / sigma_k at the end (nothing reads it scaled before); the
/// lanes of finished columns apply zero updates rather than branch. The norm-update and
/// amplification tests are evaluated at the end: a later column's downdated G(j, j) only
/// falls, so the test on every step is the test on its pivot; NaN fails both. The caller
/// writes nothing when any fails, so where the panel would have ended does not matter.
/// Called by every thread of the block; returns (the same in every thread, after a barrier)
/// whether all 32 columns were factored. On true, x, d and tau hold what factor_block leaves.
template <class T, int kB>
__device__ bool factor_block_warp(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1], T* tau,
                                  double threshold, double max_amplification) {
  static_assert(kB == 32, "32 columns");
  __shared__ T s_cnorm[kB];                                // ||P(:, i)|| at the start
  __shared__ T s_t[kB], s_rs[kB], s_alpha[kB], s_piv[kB];  // step k's scalars, by lane 0
  __shared__ int s_good;
  if (threadIdx.x < 32) {
    constexpr unsigned kAll = 0xffffffffu;
    const int j = static_cast<int>(threadIdx.x);
    T xd[kB], gc[kB];
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      xd[i] = x[j][i];
      gc[i] = g[j][i];
    }
    const T norm0 = g[j][j];
    s_cnorm[j] = sqrt(norm0);  // in the safe range (the caller checked G's diagonal)
    // Step k's scalars from the pivot G(k, k) (downdated) and X(k, k). Pivots that fail the
    // norm-update test (including G(k, k) <= 0 and NaN) make the panel fail; what is
    // computed from them then is never written.
    T gkk, xkk, t, rs, alpha;
    auto scalars = [&](int k) {
      gkk = __shfl_sync(kAll, gc[k], k);
      xkk = __shfl_sync(kAll, xd[k], k);
      const T rnu = batched::refined_rsqrt(gkk);
      const T nu = gkk * rnu;
      const T sg = xkk >= T(0) ? T(1) : T(-1);
      t = fma(fabs(xkk), rnu, T(1));
      rs = batched::refined_rcp(fma(sg, nu, xkk));  // 1 / sigma
      alpha = -sg * nu;
    };
    scalars(0);
#pragma unroll
    for (int k = 0; k < kB; ++k) {
      const bool later = j > k;
      const T xjk = xd[k];
      const T tw = later ? t * fma(fma(-xkk, xjk, gc[k]), rs, xjk) : T(0);
      const T rkj = later ? xjk - tw : T(0);  // R(k, j)
      const T twr = tw * rs;
      if (j == 0) {
        s_t[k] = t;
        s_rs[k] = rs;
        s_alpha[k] = alpha;
        s_piv[k] = gkk;
      }
      if (later) x[j][k] = rkj;      // R's row k (nothing reads x during the steps)
      xd[k] = later ? -twr : xd[k];  // D(k, j); lane k's X(k, k) was read (xkk)
      // The next pivot's row, then the next step's scalars: the chain from step to step,
      // issued before this step's other updates so that its latency overlaps them.
      if (k + 1 < kB) {
        const T r1 = __shfl_sync(kAll, rkj, k + 1);
        gc[k + 1] = fma(-r1, rkj, gc[k + 1]);
        xd[k + 1] = fma(-twr, __shfl_sync(kAll, xd[k + 1], k), xd[k + 1]);
        scalars(k + 1);
      }
#pragma unroll
      for (int i = 0; i < kB; ++i) {
        if (i == k || i == k + 1) continue;
        xd[i] = fma(-twr, __shfl_sync(kAll, xd[i], k), xd[i]);
      }
#pragma unroll
      for (int i = k + 2; i < kB; ++i) gc[i] = fma(-__shfl_sync(kAll, rkj, i), rkj, gc[i]);
    }
    __syncwarp();  // s_cnorm and the steps' scalars
    const T my_rs = s_rs[j], my_t = s_t[j], my_alpha = s_alpha[j], my_piv = s_piv[j];
    // Column j's own scaling: V_T below the diagonal, D on and above it.
#pragma unroll
    for (int i = 0; i < kB; ++i) xd[i] = i == j ? my_rs : xd[i] * my_rs;
    bool bad = j > 0 && !(static_cast<double>(my_piv) > threshold * static_cast<double>(norm0));
    // The amplification test of column j (> 0): sum over rows i <= j of |D(i, j)| ||P(:, i)||.
    T kappa = 0;
#pragma unroll
    for (int i = 0; i < kB; ++i) kappa += i <= j ? fabs(xd[i]) * s_cnorm[i] : T(0);
    if (j > 0 && !(static_cast<double>(kappa) * sqrt(0.5 * static_cast<double>(my_t)) <=
                   max_amplification)) {
      bad = true;
    }
    // Column j as factor_block leaves it: R above the diagonal and alpha on it, V_T below it
    // in x; D on and above the diagonal in d.
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      if (i > j) {
        x[j][i] = xd[i];
      } else {
        if (i == j) x[j][i] = my_alpha;
        d[j][i] = xd[i];
      }
    }
    tau[j] = my_t;
    const bool any_bad = __any_sync(kAll, bad);
    if (j == 0) s_good = any_bad ? 0 : 1;
  }
  __syncthreads();
  return s_good != 0;
}

/// The shared scalars of factor_block_warps and factor_block_warps_interleaved, declared once
/// by their caller (static shared arrays inside each would be allocated for both, past the
/// 48 KB of static shared memory in FP64): the column norms, each step's scalars, the last
/// steps' w_j / sigma and R(k, j) (by k mod 3; factor_block_warps uses two), the
/// amplification test's partial sums, the verdict.
template <class T, int kB>
struct WarpsShared {
  T cnorm[kB], t[kB], rs[kB], alpha[kB], piv[kB];
  T twr[3][kB], rk[3][kB];
  T kappa[4][kB];
  int good;
};

/// factor_block_warp's arithmetic by kW = 4 warps, warp w holding rows 8w..8w+7 of every
/// column (lane j: column j) of X / D and G, so that a step's bulk updates are a quarter of
/// the single warp's. The warp holding row k (the step's owner) brings that row up to date,
/// computes the step's scalars, w and R(k, :) for every column, and publishes w / sigma and
/// R(k, j) per lane in shared memory (two buffers, by step parity); one barrier per step, after
/// which every warp applies the step to its rows (column k's entries by shuffles within the warp,
/// R's row k from the published row). The owner updates row k before its other rows, so the chain
/// from step to step is the owner's pivot, scalars and publication plus one block barrier. Same
/// contract as factor_block_warp; the block has at least 128 threads.
template <class T, int kB>
__device__ bool factor_block_warps(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1], T* tau,
                                   double threshold, double max_amplification,
                                   WarpsShared<T, kB>& sh) {
  static_assert(kB == 32, "32 columns");
  constexpr int kW = 4, kR = kB / kW;  // warps, rows per warp
  constexpr unsigned kAll = 0xffffffffu;
  T* s_cnorm = sh.cnorm;
  T *s_t = sh.t, *s_rs = sh.rs, *s_alpha = sh.alpha, *s_piv = sh.piv;
  T(*s_twr)[kB] = sh.twr;  // step k's w_j / sigma and R(k, j), by parity
  T(*s_rk)[kB] = sh.rk;
  T(*s_kappa)[kB] = sh.kappa;
  int& s_good = sh.good;
  const int tid = static_cast<int>(threadIdx.x);
  // The block's other warps only take part in the barriers (block barriers: with a named
  // barrier of the four warps, compute-sanitizer's racecheck reported races across the
  // block barriers after it, session 17 run 3).
  const bool active = tid < kW * 32;
  const int j = tid & 31, w = tid >> 5, row0 = w * kR;
  T xd[kR], gc[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    xd[r] = active ? x[j][row0 + r] : T(0);
    gc[r] = active ? g[j][row0 + r] : T(0);
  }
  if (w == 0) s_cnorm[j] = sqrt(g[j][j]);  // in the safe range (the caller checked)
  T twr_prev = 0, rkj_prev = 0;            // this lane's step k - 1 values
  // Step k1's update of this warp's row r (its global row i = row0 + r); row k1 itself was
  // set by its owner.
  auto update_row = [&](int k1, int r) {
    const int i = row0 + r;
    const T c = __shfl_sync(kAll, xd[r], k1);  // column k1's entry in row i (lane k1)
    if (i != k1) xd[r] = fma(-twr_prev, c, xd[r]);
    if (i > k1) gc[r] = fma(-s_rk[k1 & 1][i], rkj_prev, gc[r]);
  };
#pragma unroll
  for (int k = 0; k < kB; ++k) {
    const int rk = k % kR;  // row k's place in its owner warp
    if (w == k / kR) {      // uniform per warp
      if (k > 0) update_row(k - 1, rk);
      const T gkk = __shfl_sync(kAll, gc[rk], k);
      const T xkk = __shfl_sync(kAll, xd[rk], k);
      const T rnu = batched::refined_rsqrt(gkk);
      const T nu = gkk * rnu;
      const T sg = xkk >= T(0) ? T(1) : T(-1);
      const T t = fma(fabs(xkk), rnu, T(1));
      const T rs = batched::refined_rcp(fma(sg, nu, xkk));
      const bool later = j > k;
      const T xjk = xd[rk];
      const T tw = later ? t * fma(fma(-xkk, xjk, gc[rk]), rs, xjk) : T(0);
      const T rkj = later ? xjk - tw : T(0);
      const T twr = tw * rs;
      s_twr[k & 1][j] = twr;
      s_rk[k & 1][j] = rkj;
      if (later) x[j][k] = rkj;  // R's row k
      if (j == 0) {
        s_t[k] = t;
        s_rs[k] = rs;
        s_alpha[k] = -sg * nu;
        s_piv[k] = gkk;
      }
      xd[rk] = later ? -twr : xd[rk];  // D(k, j)
      if (k > 0) {
#pragma unroll
        for (int r = 0; r < kR; ++r)
          if (r != rk) update_row(k - 1, r);
      }
    } else if (k > 0 && active) {
#pragma unroll
      for (int r = 0; r < kR; ++r) update_row(k - 1, r);
    }
    __syncthreads();
    twr_prev = s_twr[k & 1][j];
    rkj_prev = s_rk[k & 1][j];
  }
  if (active) {
    // Step 31's update.
#pragma unroll
    for (int r = 0; r < kR; ++r) update_row(kB - 1, r);
    const T my_rs = s_rs[j];
    T kappa = 0;
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int i = row0 + r;
      xd[r] = i == j ? my_rs : xd[r] * my_rs;
      if (i <= j) kappa += fabs(xd[r]) * s_cnorm[i];
      if (i > j) {
        x[j][i] = xd[r];
      } else {
        if (i == j) x[j][i] = s_alpha[j];
        d[j][i] = xd[r];
      }
    }
    s_kappa[w][j] = kappa;
  }
  __syncthreads();
  if (w == 0) {
    T kap = 0;
#pragma unroll
    for (int q = 0; q < kW; ++q) kap += s_kappa[q][j];
    const T my_t = s_t[j];
    tau[j] = my_t;
    bool bad = j > 0 && !(static_cast<double>(s_piv[j]) > threshold * static_cast<double>(g[j][j]));
    if (j > 0 &&
        !(static_cast<double>(kap) * sqrt(0.5 * static_cast<double>(my_t)) <= max_amplification))
      bad = true;
    const bool any_bad = __any_sync(kAll, bad);
    if (j == 0) s_good = any_bad ? 0 : 1;
  }
  __syncthreads();
  return s_good != 0;
}

/// One shared-memory load at a 32-bit shared address, as written (no other address loaded
/// in its place, none loaded ahead of a branch): factor_block_warps_interleaved's shadows
/// select their scratch per thread, and the compiler otherwise loads both candidates and
/// keeps one (seen in session 34's SASS), so that a shadow would read the entries the
/// working warps write (a hazard racecheck reports; the value unused).
template <class T>
__device__ __forceinline__ T load_shared_exact(unsigned addr) {
  T v;
  if constexpr (sizeof(T) == 8) {
    asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(addr));
  } else {
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr));
  }
  return v;
}

/// factor_block_warps with the rows interleaved over the four warps (row i on warp i mod 4,
/// lane j: column j), so that step k's owner (warp k mod 4) changes every step and updates
/// only its pivot row before the step's barrier; its other rows take step k - 1 in the next
/// step, beside step k, while the next owner runs the chain (s_twr / s_rk keep three steps).
/// At the start of step k every warp has taken steps 0..k-2 on all its rows and step k - 1
/// on none, except the owner of step k - 1, which has taken k - 2 only on its pivot row
/// (k - 1). So in step k the owner takes k - 1 on row k alone, the previous owner k - 2 and
/// k - 1 on its other rows, every other warp k - 1. Each entry gets the same operations in
/// the same order as in factor_block_warps; the amplification sums add the rows in another
/// order. Same contract as factor_block_warps. kShortChain: the step's reciprocal square root
/// and reciprocal by batched::short_chain_rsqrt / short_chain_rcp (FP64: 3 fewer dependent
/// operations on the step's chain). kShadow: the block's warps kW..2kW - 1 (when it has them)
/// each run the instructions of their twin (warp w - kW) without its barriers (the four warps
/// meet at a named barrier instead of the block's) and without stores, so they run ahead of
/// it and bring the unrolled steps' code (~3 KB each, run once per launch) into the SM's
/// instruction caches before the twin needs it; their values are never used. The shadows
/// read `scratch` (at least 6 kB entries of shared memory that nothing writes until the
/// function's last barrier) where their twins read the published steps, and nothing else,
/// every such read by load_shared_exact, so that no shared entry is read by one warp while
/// another writes it (compute-sanitizer racecheck is clean).
template <class T, int kB, bool kShortChain = false, bool kShadow = false>
__device__ bool factor_block_warps_interleaved(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1],
                                               T* tau, double threshold, double max_amplification,
                                               WarpsShared<T, kB>& sh, T* scratch = nullptr) {
  static_assert(kB == 32, "32 columns");
  constexpr int kW = 4, kR = kB / kW;  // warps, rows per warp
  constexpr unsigned kAll = 0xffffffffu;
  T* s_cnorm = sh.cnorm;
  T *s_t = sh.t, *s_rs = sh.rs, *s_alpha = sh.alpha, *s_piv = sh.piv;
  const int tid = static_cast<int>(threadIdx.x);
  const bool active = tid < kW * 32;
  // Steps' w_j / sigma and R(k, j), by k mod 3 (a shadow: in scratch).
  const bool private_reads = kShadow && !active;
  const int j = tid & 31;
  T(*s_twr)[kB] = private_reads ? reinterpret_cast<T(*)[kB]>(scratch) : sh.twr;
  T(*s_rk)[kB] = private_reads ? reinterpret_cast<T(*)[kB]>(scratch + 3 * kB) : sh.rk;
  const unsigned twr_addr = static_cast<unsigned>(__cvta_generic_to_shared(&s_twr[0][0]));
  const unsigned rk_addr = static_cast<unsigned>(__cvta_generic_to_shared(&s_rk[0][0]));
  // Step k1's published w_j / sigma of this lane and R(k1, i) (kShadow: exact loads).
  auto twr_at = [&](int k1) -> T {
    return kShadow ? load_shared_exact<T>(twr_addr + sizeof(T) * ((k1 % 3) * kB + j))
                   : s_twr[k1 % 3][j];
  };
  auto rk_at = [&](int k1, int i) -> T {
    return kShadow ? load_shared_exact<T>(rk_addr + sizeof(T) * ((k1 % 3) * kB + i))
                   : s_rk[k1 % 3][i];
  };
  T(*s_kappa)[kB] = sh.kappa;
  int& s_good = sh.good;
  const bool writes = !kShadow || active;  // kShadow: the shadows store nothing
  // The shadows (kShadow: warps kW..2kW - 1) and the four warps run the steps; a shadow's w is
  // its twin's. Warps past them (a larger block) only meet the barriers.
  const bool runs = active || (kShadow && tid < 2 * kW * 32);
  const int w = kShadow && runs ? (tid >> 5) & (kW - 1) : tid >> 5;
  T xd[kR], gc[kR];  // rows w + kW r
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    // kShadow: an exact load, so that no shadow loads x ahead of the branch.
    const unsigned xa = static_cast<unsigned>(__cvta_generic_to_shared(&x[j][w + kW * r]));
    xd[r] = active ? (kShadow ? load_shared_exact<T>(xa) : x[j][w + kW * r]) : T(0);
    gc[r] = active ? g[j][w + kW * r] : T(0);
  }
  if (writes && w == 0) s_cnorm[j] = sqrt(g[j][j]);  // in the safe range (the caller checked)
  // Step k1 on this warp's row r, from this lane's w_j / sigma and R(k1, j) of that step.
  auto take = [&](int k1, int r, T twr, T rkj) {
    const int i = w + kW * r;
    const T c = __shfl_sync(kAll, xd[r], k1);  // column k1's entry in row i (lane k1)
    if (i != k1) xd[r] = fma(-twr, c, xd[r]);
    if (i > k1) {
      gc[r] = fma(-rk_at(k1, i), rkj, gc[r]);
    }
  };
#pragma unroll
  for (int k = 0; k < kB; ++k) {
    if (w == k % kW && (!kShadow || runs)) {  // the owner (uniform per warp)
      const int s = k / kW;  // row k's place
      if (k > 0) take(k - 1, s, twr_at(k - 1), rk_at(k - 1, j));
      const T gkk = __shfl_sync(kAll, gc[s], k);
      const T xkk = __shfl_sync(kAll, xd[s], k);
      const T rnu = kShortChain ? batched::short_chain_rsqrt(gkk) : batched::refined_rsqrt(gkk);
      const T nu = gkk * rnu;
      const T sg = xkk >= T(0) ? T(1) : T(-1);
      const T t = fma(fabs(xkk), rnu, T(1));
      const T sigma = fma(sg, nu, xkk);
      const T rs = kShortChain ? batched::short_chain_rcp(sigma) : batched::refined_rcp(sigma);
      const bool later = j > k;
      const T xjk = xd[s];
      const T tw = later ? t * fma(fma(-xkk, xjk, gc[s]), rs, xjk) : T(0);
      const T rkj = later ? xjk - tw : T(0);
      const T twr = tw * rs;
      if (writes) {
        s_twr[k % 3][j] = twr;
        s_rk[k % 3][j] = rkj;
      }
      if (later && writes) x[j][k] = rkj;  // R's row k
      if (j == 0 && writes) {
        s_t[k] = t;
        s_rs[k] = rs;
        s_alpha[k] = -sg * nu;
        s_piv[k] = gkk;
      }
      xd[s] = later ? -twr : xd[s];  // D(k, j)
    } else if (runs && k > 0) {
      if (k >= 2 && w == (k - 1) % kW) {  // owned step k - 1: step k - 2 on its other rows
        const T twr2 = twr_at(k - 2), rk2 = rk_at(k - 2, j);
#pragma unroll
        for (int r = 0; r < kR; ++r)
          if (r != (k - 1) / kW) take(k - 2, r, twr2, rk2);
      }
      const T twr1 = twr_at(k - 1), rk1 = rk_at(k - 1, j);
#pragma unroll
      for (int r = 0; r < kR; ++r) take(k - 1, r, twr1, rk1);
    }
    if constexpr (kShadow) {  // the four warps only: their shadows run on
      if (active) asm volatile("bar.sync 1, %0;" ::"n"(kW * 32) : "memory");
    } else {
      __syncthreads();
    }
  }
  if constexpr (kShadow) {
    // The warps past the four (the shadows, after their steps) meet barrier 2 as many times as
    // the four met barrier 1, so that every warp of the block has passed as many barriers when
    // they meet at the block's next. The four do not wait for it. Without it compute-sanitizer
    // racecheck reports, now and then, a hazard on the flag s_good between the last two
    // block barriers that does not exist (session 34, scripts/dev/racecheck_probe.cu).
    if (!active) {
      const unsigned others = blockDim.x - kW * 32;
#pragma unroll 1
      for (int k = 0; k < kB; ++k) asm volatile("bar.sync 2, %0;" ::"r"(others) : "memory");
    }
  }
  if (active) {
    // The last steps: the owner of step 31 takes 30 on its other rows, then every warp 31.
    if (w == (kB - 1) % kW) {
      const T twr2 = s_twr[(kB - 2) % 3][j], rk2 = s_rk[(kB - 2) % 3][j];
#pragma unroll
      for (int r = 0; r < kR; ++r)
        if (r != (kB - 1) / kW) take(kB - 2, r, twr2, rk2);
    }
    const T twr1 = s_twr[(kB - 1) % 3][j], rk1 = s_rk[(kB - 1) % 3][j];
#pragma unroll
    for (int r = 0; r < kR; ++r) take(kB - 1, r, twr1, rk1);
    const T my_rs = s_rs[j];
    T kappa = 0;
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int i = w + kW * r;
      xd[r] = i == j ? my_rs : xd[r] * my_rs;
      if (i <= j) kappa += fabs(xd[r]) * s_cnorm[i];
      if (i > j) {
        x[j][i] = xd[r];
      } else {
        if (i == j) x[j][i] = s_alpha[j];
        d[j][i] = xd[r];
      }
    }
    s_kappa[w][j] = kappa;
  }
  __syncthreads();
  if (writes && w == 0) {
    T kap = 0;
#pragma unroll
    for (int q = 0; q < kW; ++q) kap += s_kappa[q][j];
    const T my_t = s_t[j];
    tau[j] = my_t;
    bool bad = j > 0 && !(static_cast<double>(s_piv[j]) > threshold * static_cast<double>(g[j][j]));
    if (j > 0 &&
        !(static_cast<double>(kap) * sqrt(0.5 * static_cast<double>(my_t)) <= max_amplification))
      bad = true;
    const bool any_bad = __any_sync(kAll, bad);
    if (j == 0) s_good = any_bad ? 0 : 1;
  }
  __syncthreads();
  return s_good != 0;
}

}  // namespace gpuqr::kernels::cuda::ah
