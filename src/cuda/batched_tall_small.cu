// The cooperative register kernel of the batched QR: small tall matrices (n <= 32 with
// m <= 256, n <= 64 with m <= 128), a thread block per matrix, every column in registers.
//
// Layout: class (M, W) holds up to M rows and W columns. Column c is split over S = M / RL
// lanes ("segments") of one warp, lanes c * S .. c * S + S - 1 of the block (so a warp holds
// 32 / S whole columns and the dot products reduce by log2 S xor shuffles within it). A lane
// owns RL rows of its column as RL / kGe 16-byte granules, interleaved with the column's
// other lanes: granule g of segment s is rows (g * S + s) * kGe .. + kGe - 1. One warp
// instruction then moves S * 16 contiguous bytes of each of its columns (loads and stores are
// coalesced and 16-byte wide where the columns are 16-byte aligned), and lanes reading v's
// granule g from shared memory hit distinct banks (or broadcast, for lanes of other columns).
//
// Per column j (a runtime loop: the code is stamped once, so square roots and divisions stay
// out of any unrolled loop):
//   1. one block barrier: v_j and tau_j (written by column j's lanes) are visible; every lane
//      has also finished reading v_{j-1}, so its buffer may take v_{j+1} (two buffers, one
//      barrier per step);
//   2. each lane of a column c > j (warps whose columns are all done skip) forms its part of
//      v_j^T a_c from v in shared memory, the S parts meet by xor shuffles (the same bits on
//      every lane), and a_c -= tau (v^T a_c) v over its rows;
//   3. column j + 1's lanes, right after their own update, run LAPACK's larfg on it: alpha
//      read back from shared memory (the raw column goes there first), the sum of squares of
//      the rows below the diagonal by shuffles among the S lanes, then beta = -sign(alpha)
//      ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha - beta) (a reciprocal
//      square root and a reciprocal, hardware approximations refined by Newton steps: no
//      slow-path calls), v (zeros above, 1 at the diagonal) and tau into the next buffer,
//      tau, beta and v's scale into a per-column record in shared memory. The registers keep
//      x: R's diagonal and the scaled v are formed when the column is stored, off the chain
//      of steps. Columns whose squares under- or overflow take a scaled norm (exact
//      power-of-two scaling, LAPACK's safe scaling idea; rare); x == 0 gives tau = 0 and the
//      step is skipped by every lane.
// Rows past m are zeros in the registers (so they stay zeros: v is zero there) and columns
// past n are idle lanes; neither is read from or written to global memory.
//
// Persistent blocks: about as many blocks as stay resident loop over the batch; the blocks of
// an SM drift apart, so one's loads and stores overlap the others' arithmetic.
//
// GPUQR_BATCHED_TALL (read once; set_batched_tall for tests): 0 off (the routes before it),
// 1 on for the whole class (see tall_class), else (unset, 2) only the shapes outside the small
// register kernel's class (64x16 measured faster there, H100 2026-11-25).
// Two kernels, chosen by class (session 10's variants; the others were measured slower and
// removed in session 11): for the classes of 16 columns and more, two columns per lane
// (tall_geqrf_multi_kernel, see TallMultiCfg): column c and c + W / 2 on the same S lanes, so
// half the threads per matrix; the step loop runs in two phases (pivots in the first slot,
// then in the second), the update reads v once for both slots and interleaves their dot
// products' shuffles, and the launch bounds aim one block per SM below what registers allow
// (FP64 128 x 32: 168 registers, 3 blocks; fewer spills). The 8-column classes keep one
// column per lane (tall_geqrf_kernel): the pivot step is run by the whole warp with constant
// full masks, and the update skips v's leading zero granule rows (see reflector).
// Measured (H100, FP64 unless said, ms; ours against each other in the same run):
// * session 9 (0.5 GiB): the first version (pivot step on the column's lanes only, no skip)
//   against one column per lane as now: 128x32 1.851 / 1.740, 64x64 3.411 / 3.078; 8 or 32
//   rows per lane (128x32 2.05 / 2.04 at the first version); 2 or 4 blocks per SM in the
//   FP64 launch bounds (1.84 / 1.78 against 1.740).
// * session 10 run 1 (1 GiB), one column per lane / two without / with the lower launch
//   bounds: FP64 128x32 3.521 / 2.892 / 2.812 (cuBLAS 15.47: 4.39x / 5.36x / 5.50x), 64x64
//   6.241 / 5.292 / 5.445; FP32 128x32 3.360 / 2.597 / 2.361, 64x64 6.184 / 5.368 / 5.089.
//   ptxas (sm_90, CUDA 13), 128 x 32 registers / spill bytes (stores + loads) / SASS
//   instructions: FP64 80 / 116+96 / 2064, 128 / 412+488 / 3816, 168 / 104+140 / 3648; FP32
//   64 / 20+28 / 1296, 80 / 208+224 / 2448, 96 / 56+76 / 2312. Most spill code sits around
//   larfg's rare scaled path; on the step's hot path the kept FP64 kernel reloads one value.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda {
namespace {

std::atomic<int> tall_override{static_cast<int>(TallRoute::automatic)};
std::atomic<std::int64_t> tall_launches{0};

}  // namespace

void set_batched_tall(TallRoute route) { tall_override.store(static_cast<int>(route)); }

std::int64_t batched_tall_launches() { return tall_launches.load(); }

namespace batched {
namespace {

constexpr unsigned kFull = 0xffffffffu;

/// Class (M rows, W columns) at RL rows per lane.
template <class T, int M, int W, int RL>
struct TallCfg {
  static constexpr int kM = M, kRL = RL;
  static constexpr int kGe = 16 / int(sizeof(T));  // elements per 16-byte granule
  static constexpr int kS = M / RL;                // lanes per column
  static constexpr int kG = RL / kGe;              // granules per lane
  static constexpr int kStride = kS * kGe;         // rows between a lane's granules
  // Lanes past W * S (classes narrower than a warp) hold columns >= W: idle.
  static constexpr int kThreads = W * kS < 32 ? 32 : W * kS;
  static constexpr int kCols = 32 / kS;  // columns per warp
  // Whether the update reads v from shared memory again rather than keeping the dot
  // product's copy (which would double the registers of a column).
  static constexpr bool kReload = RL * int(sizeof(T)) >= 128;
  static constexpr int kColumnRegs = RL * int(sizeof(T)) / 4;  // a column's registers
  static constexpr int kByThreads = 2048 / kThreads > 32 ? 32 : 2048 / kThreads;
  static_assert(M % RL == 0 && RL % kGe == 0 && kS <= 32 && 32 % kS == 0);
  static_assert(kThreads % 32 == 0 && kThreads <= 1024);
};

template <int S, class T>
__device__ __forceinline__ T group_sum(T v, unsigned mask) {
#pragma unroll
  for (int o = S / 2; o > 0; o /= 2) v += __shfl_xor_sync(mask, v, o);
  return v;
}
template <int S, class T>
__device__ __forceinline__ T group_max(T v, unsigned mask) {
#pragma unroll
  for (int o = S / 2; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(mask, v, o));
  return v;
}

__device__ __forceinline__ void load_granule(const double* p, double* v) {
  const double2 x = *reinterpret_cast<const double2*>(p);
  v[0] = x.x;
  v[1] = x.y;
}
__device__ __forceinline__ void load_granule(const float* p, float* v) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}
__device__ __forceinline__ void store_granule(double* p, const double* v) {
  *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
}
__device__ __forceinline__ void store_granule(float* p, const float* v) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
// A shared-memory granule the compiler may not merge with an earlier load of it (the update's
// second read of v, see TallCfg::kReload).
__device__ __forceinline__ void reload_granule(const double* p, double* v) {
  const auto a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ld.volatile.shared.v2.f64 {%0, %1}, [%2];" : "=d"(v[0]), "=d"(v[1]) : "r"(a));
}

/// Whether d's columns start on 16-byte boundaries (granule copies).
template <class C, class T>
__device__ __forceinline__ bool granules_ok(const Desc<T>& d) {
  return reinterpret_cast<std::uintptr_t>(d.a) % 16 == 0 && d.ld % C::kGe == 0;
}

/// larfg's results for one column, kept in shared memory until the matrix is stored: the
/// column's final entries are R above the diagonal, beta on it and v = x * scale below.
template <class T>
struct ColumnInfo {
  T tau, beta, scale, pad;
};

/// v, which the compiler must assume changed (see the 64-bit opaque below): predicates
/// derived from it are recomputed rather than packed into a register meanwhile.
__device__ __forceinline__ int opaque_int(int v) {
  asm volatile("" : "+r"(v));
  return v;
}

/// Offset of register i's row from the lane's first row: g * kStride + h for i = g * kGe + h.
template <class C>
__device__ __forceinline__ constexpr int row_off(int i) {
  return (i / C::kGe) * C::kStride + i % C::kGe;
}

/// This lane's rows of column `col` (zeros past m and for col >= n).
template <class C, class T>
__device__ __forceinline__ void load_column(const Desc<T>& d, bool whole, int col, int s,
                                            T (&a)[C::kRL]) {
  const bool mine = col < d.n;
  const T* p = d.a + std::int64_t(col) * d.ld;
#pragma unroll
  for (int g = 0; g < C::kG; ++g) {
    const int row = g * C::kStride + s * C::kGe;
    T* dst = a + g * C::kGe;
    if (mine && whole && row + C::kGe <= d.m) {
      load_granule(p + row, dst);
    } else {
#pragma unroll
      for (int h = 0; h < C::kGe; ++h) dst[h] = mine && row + h < d.m ? p[row + h] : T(0);
    }
  }
}

/// This lane's rows (< m) of column `col` (< n) back to global memory: for a factored
/// column (col < k) R above the diagonal, beta on it and x * scale below (see reflector).
template <class C, class T>
__device__ __forceinline__ void store_column(const Desc<T>& d, bool whole, int col, int s,
                                             const T (&a)[C::kRL], const ColumnInfo<T>* info) {
  if (col >= d.n) return;
  const bool factored = col < min(d.m, d.n);
  const ColumnInfo<T> f = factored ? info[col] : ColumnInfo<T>{0, 0, 1, 0};
  const int d0 = factored ? col - s * C::kGe : C::kM;  // no row is below or on it otherwise
  T* p = d.a + std::int64_t(col) * d.ld;
#pragma unroll
  for (int g = 0; g < C::kG; ++g) {
    const int row = g * C::kStride + s * C::kGe;
    T out[C::kGe];
#pragma unroll
    for (int h = 0; h < C::kGe; ++h) {
      const int i = g * C::kGe + h;
      out[h] = row_off<C>(i) > d0 ? a[i] * f.scale : (row_off<C>(i) == d0 ? f.beta : a[i]);
    }
    if (whole && row + C::kGe <= d.m) {
      store_granule(p + row, out);
    } else {
#pragma unroll
      for (int h = 0; h < C::kGe; ++h)
        if (row + h < d.m) p[row + h] = out[h];
    }
  }
  if (factored && s == 0) d.tau[col] = f.tau;
}

/// 2^e for e in the normal exponent range, built from its bits (exact, no call).
__device__ __forceinline__ double pow2(double, int e) {
  return __longlong_as_double(static_cast<long long>(e + 1023) << 52);
}
__device__ __forceinline__ float pow2(float, int e) { return __int_as_float((e + 127) << 23); }

/// e with 2^e <= v < 2^(e+1), for finite v > 0 (subnormals included).
__device__ __forceinline__ int exponent_of(double v) {
  if (v < 0x1p-1022) return exponent_of(v * 0x1p54) - 54;
  return static_cast<int>((__double_as_longlong(v) >> 52) & 0x7ff) - 1023;
}
__device__ __forceinline__ int exponent_of(float v) {
  if (v < 0x1p-126f) return exponent_of(v * 0x1p24f) - 24;
  return ((__float_as_int(v) >> 23) & 0xff) - 127;
}

/// Multiplies by 2^-e in two exact steps (2^-e alone may not be representable).
template <class T>
__device__ __forceinline__ T times_pow2_neg(T x, int e) {
  return x * pow2(x, -(e / 2)) * pow2(x, -(e - e / 2));
}

template <class T>
struct ScaledScalars {
  T beta, tau, denom;
};

/// larfg's beta, tau and alpha - beta from alpha and ||x|| = 2^e sqrt(sum) (the scaled path):
/// LAPACK's dlapy2 for beta. Out of line: square root, hypot and division are long sequences
/// with slow-path calls, needed only for the rare columns that take this path.
template <class T>
__device__ __noinline__ ScaledScalars<T> larfg_scaled_scalars(T alpha, T sum, int e) {
  const T xnorm = sqrt(sum) * pow2(sum, e / 2) * pow2(sum, e - e / 2);
  const T beta = -copysign(hypot(alpha, xnorm), alpha);
  return {beta, (beta - alpha) / beta, alpha - beta};
}

/// larfg on column p (p < k): v (0 above p, 1 at p) and tau into `buf` (v at buf[row], tau at
/// buf[M]), tau, beta and v's scale into `info`. The lanes' registers keep x (the scaled path
/// rescales it by a power of two): the column's final entries are formed when it is stored,
/// off the chain of steps every other column waits on.
///
/// Called by the whole warp holding column p; the lanes of its other columns (mine false)
/// compute along on harmless values and write nothing. Shuffles and warp barriers then take a
/// constant full mask (with a lane-dependent mask the compiler adds MATCH.ANY, REDUX and a
/// divergence check to each), and the row predicates are recomputed after the sum of squares
/// (rather than packed into a register across the scalars).
template <class C, class T>
__device__ __forceinline__ void reflector(T (&a)[C::kRL], int p, int m, int s, bool mine, T* buf,
                                          ColumnInfo<T>* info) {
  constexpr unsigned mask = kFull;
  // Register i holds row row_off(i) + s * kGe: below p iff row_off(i) > d0 = p - s * kGe.
  const int d0 = p - s * C::kGe;
  // alpha through shared memory (the column's raw rows, overwritten by v below): the owner's
  // register index is runtime, and selecting it costs more than the round trip.
  if (mine) {
#pragma unroll
    for (int g = 0; g < C::kG; ++g)
      store_granule(buf + g * C::kStride + s * C::kGe, a + g * C::kGe);
  }
  T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
  for (int i = 0; i < C::kRL; ++i) {
    const T x = row_off<C>(i) > d0 ? a[i] : T(0);
    part[i & 3] = fma(x, x, part[i & 3]);
  }
  // The row predicates again from here on (see above).
  const int d1 = opaque_int(d0);
  __syncwarp(mask);  // the raw rows are visible to the column's lanes
  const T alpha = buf[p];
  const T ss = group_sum<C::kS>((part[0] + part[1]) + (part[2] + part[3]), mask);
  T beta = alpha, tau = 0, scale = 1;
  if (p + 1 < m) {  // else no rows below the diagonal: H = I (LAPACK: tau = 0)
    const T total = fma(alpha, alpha, ss);
    bool fast = larfg_in_range(ss, total);  // false for NaN too
    fast = __all_sync(kFull, fast || !mine);
    if (fast) {
      // All in range here (larfg_scalars.cuh, shared with the other batched kernels).
      const Scalars<T> h = larfg_scalars(alpha, total);
      beta = h.beta;
      tau = h.tau;
      scale = h.scale;
    } else {
      // Squares under- or overflow (the same branch on all S lanes: ss and total are the
      // same bits there). ||x|| from x scaled by 2^-e, 2^e <= max |x_i| (exact scaling, no
      // divisions); v = x / (alpha - beta) as (x 2^-f) / ((alpha - beta) 2^-f), the divisor
      // then in [1, 2) (1 / (alpha - beta) alone may overflow when beta is tiny). The
      // other columns' lanes stand in x = 0, alpha = 1 (in range, no recursion at 0).
      T amax = 0;
#pragma unroll
      for (int i = 0; i < C::kRL; ++i)
        amax = mine && row_off<C>(i) > d1 ? fmax(amax, fabs(a[i])) : amax;
      amax = group_max<C::kS>(amax, mask);
      bool nonzero = amax > T(0);
      nonzero = __any_sync(kFull, nonzero && mine);
      if (nonzero) {  // else x == 0: tau = 0, x kept
        const T am = mine ? amax : T(1), al = mine ? alpha : T(1);
        const int e = exponent_of(am);
        const T lo = pow2(am, -(e / 2)), hi = pow2(am, -(e - e / 2));
        T sum = 0;
#pragma unroll
        for (int i = 0; i < C::kRL; ++i) {
          const T y = mine && row_off<C>(i) > d1 ? a[i] * lo * hi : T(0);
          sum = fma(y, y, sum);
        }
        const ScaledScalars<T> h = larfg_scaled_scalars(al, group_sum<C::kS>(sum, mask), e);
        beta = h.beta;
        tau = h.tau;
        const int f = exponent_of(fabs(h.denom));
        const T f_lo = pow2(am, -(f / 2)), f_hi = pow2(am, -(f - f / 2));
#pragma unroll
        for (int i = 0; i < C::kRL; ++i)
          a[i] = mine && row_off<C>(i) > d1 ? a[i] * f_lo * f_hi : a[i];
        scale = refined_rcp(h.denom * f_lo * f_hi);
      }
    }
  }
  __syncwarp(mask);  // every lane has read alpha before its granule is overwritten
  if (!mine) return;
  const int dv = opaque_int(d1);
#pragma unroll
  for (int g = 0; g < C::kG; ++g) {
    T v[C::kGe];
#pragma unroll
    for (int h = 0; h < C::kGe; ++h) {
      const int i = g * C::kGe + h;
      v[h] = a[i] * (row_off<C>(i) > dv ? scale : T(0));
    }
    store_granule(buf + g * C::kStride + s * C::kGe, v);
  }
  // The owner of row p writes v's unit entry over its own granule's (program order).
  if (s == (p / C::kGe) % C::kS) buf[p] = T(1);
  if (s == 0) {
    buf[C::kM] = tau;
    info[p] = ColumnInfo<T>{tau, beta, scale, T(0)};
  }
}

/// a -= tau (v^T a) v with v from `buf` (this lane's rows); lanes with apply false only join
/// the shuffles (the whole warp calls this). Granule rows wholly above row j (v_j is zero
/// there) are skipped, as LAPACK's larf skips v's leading zeros.
template <class C, class T>
__device__ __forceinline__ void apply_reflector(const T* buf, T tau, bool apply, int s, int j,
                                                T (&a)[C::kRL]) {
  T dot = 0;
  if (apply) {
    T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int g = 0; g < C::kG; ++g) {
      if ((g + 1) * C::kStride <= j) continue;
      T v[C::kGe];
      load_granule(buf + g * C::kStride + s * C::kGe, v);
#pragma unroll
      for (int h = 0; h < C::kGe; ++h) {
        const int i = g * C::kGe + h;
        part[i & 3] = fma(v[h], a[i], part[i & 3]);
      }
    }
    dot = (part[0] + part[1]) + (part[2] + part[3]);
  }
  dot = group_sum<C::kS>(dot, kFull);
  if (apply) {
    const T w = -tau * dot;
#pragma unroll
    for (int g = 0; g < C::kG; ++g) {
      if ((g + 1) * C::kStride <= j) continue;
      T v[C::kGe];
      if constexpr (C::kReload) {
        reload_granule(buf + g * C::kStride + s * C::kGe, v);
      } else {
        load_granule(buf + g * C::kStride + s * C::kGe, v);
      }
#pragma unroll
      for (int h = 0; h < C::kGe; ++h) a[g * C::kGe + h] = fma(w, v[h], a[g * C::kGe + h]);
    }
  }
}

/// v, which the compiler must assume changed: values derived from v earlier are recomputed
/// rather than kept in registers meanwhile.
__device__ __forceinline__ std::int64_t opaque(std::int64_t v) {
  asm volatile("" : "+l"(v));
  return v;
}

template <class C>
__device__ __forceinline__ void block_barrier() {
  if constexpr (C::kThreads > 32) {
    __syncthreads();
  } else {
    __syncwarp();
  }
}

/// Blocks per SM the one-column kernel's launch bounds aim at, from a register budget per
/// thread: the column, v's granules in flight, addresses and scalars.
template <class C>
constexpr int single_min_blocks() {
  constexpr int regs = C::kColumnRegs + (C::kReload ? 16 : C::kColumnRegs) + 32;
  constexpr int by_regs = 65536 / (C::kThreads * regs);
  return by_regs < 1 ? 1 : (by_regs < C::kByThreads ? by_regs : C::kByThreads);
}

/// One column per lane (the 8-column classes).
template <class T, int M, int W, int RL>
__global__ void __launch_bounds__(TallCfg<T, M, W, RL>::kThreads,
                                  single_min_blocks<TallCfg<T, M, W, RL>>())
    tall_geqrf_kernel(DeviceBatch<T> batch) {
  using C = TallCfg<T, M, W, RL>;
  // Two buffers of v (M rows) and tau (one granule after them), alternating by step.
  __shared__ __align__(16) T bufs[2][M + C::kGe];
  __shared__ ColumnInfo<T> info[W];
  const int tid = static_cast<int>(threadIdx.x);
  const int col = tid / C::kS, s = tid % C::kS;
  const int warp_first = (tid >> 5) * C::kCols, warp_last = warp_first + C::kCols - 1;
  int cur = 0;
  for (std::int64_t q = blockIdx.x; q < batch.count; q += gridDim.x) {
    const Desc<T> d = batch.at(q);
    const int m = d.m, n = d.n, k = min(m, n);
    if (k <= 0) continue;  // block-uniform
    T a[RL];
    load_column<C>(d, granules_ok<C>(d), col, s, a);
    // Step j = -1 only factors column 0; each later step applies H_j, then factors j + 1.
    for (int j = -1; j < k; ++j) {
      if (j >= 0) {
        // v_j and tau_j are visible; every lane is past its reads of v_{j-1}, whose buffer
        // (the other one) column j + 1 fills below.
        block_barrier<C>();
        const T* v = bufs[cur];
        const T tau = v[M];
        cur ^= 1;
        if (tau != T(0) && warp_last > j && warp_first < n)  // block- and warp-uniform
          apply_reflector<C>(v, tau, col > j && col < n, s, j, a);
      }
      // The whole warp holding column j + 1 (warp-uniform).
      if (j + 1 < k && warp_first <= j + 1 && j + 1 <= warp_last)
        reflector<C>(a, j + 1, m, s, col == j + 1, bufs[cur], info);
    }
    // The descriptor is read again (opaque q) rather than held across the factorization,
    // where its registers would crowd the column's. Every info entry was written before the
    // barrier of the step after it.
    const Desc<T> e = batch.at(opaque(q));
    store_column<C>(e, granules_ok<C>(e), col, s, a, info);
    // The next matrix's column 0 (no barrier before its reflector) rewrites info[0] only once
    // every lane of this warp has read it.
    __syncwarp();
  }
}

/// CPL columns per lane (the classes of 16 columns and more). Slot p of a lane holds column
/// p * W / CPL + tid / S (the same rows as tall_geqrf_kernel's layout), so a block has 1 / CPL of
/// the one-column kernel's threads, each with CPL columns in registers. Why: the step is one warp's
/// chain (the pivot column's update, then larfg, ~320 dependent instructions at ~7 cycles each on
/// the H100) while the block's other warps wait at the barrier, and registers, not warps,
/// bound the chains in flight per SM (one column per lane, 128 x 32 FP64: 3 blocks of 80 registers,
/// 40% of them the column). Two columns per lane share v's shared-memory loads and their dot
/// products' shuffles interleave, so the chain grows little, while the per-thread overhead
/// (addresses, scalars, v in flight) is paid once for both: 4 blocks of 4 warps per SM
/// (128 registers) instead of 3 of 8, and half the warps at each barrier.
template <class T, int M, int W, int RL, int CPL, int Fewer = 0>
struct TallMultiCfg : TallCfg<T, M, W / CPL, RL> {
  using Base = TallCfg<T, M, W / CPL, RL>;
  static constexpr int kCpl = CPL;
  static constexpr int kSlotCols = W / CPL;      // columns of one slot: the pivots of one phase
  static constexpr int kAcc = CPL >= 2 ? 2 : 4;  // dot product accumulators per slot
  // The CPL columns, v's granules in flight, the accumulators, addresses and scalars.
  static constexpr int kRegs = CPL * Base::kColumnRegs + (Base::kReload ? 16 : Base::kColumnRegs) +
                               kAcc * CPL * int(sizeof(T)) / 4 + 32;
  static constexpr int kByRegs = 65536 / (Base::kThreads * kRegs);
  // Fewer: blocks per SM below that aim in the launch bounds (1 as launched), so that the
  // compiler has more registers and spills less (ptxas -v, see the file comment).
  static constexpr int kAim = kByRegs < Base::kByThreads ? kByRegs : Base::kByThreads;
  static constexpr int kMinBlocks = kAim - Fewer < 1 ? 1 : kAim - Fewer;
  // Lanes past kSlotCols * S would alias the next slot's columns.
  static_assert(W % CPL == 0 && kSlotCols * Base::kS >= 32);
};

/// a[sl] -= tau (v^T a[sl]) v for the slots P .. CPL - 1 (those that may hold columns > j),
/// v from `buf` read once for all of them; apply[sl]: whether slot sl's column takes it (its
/// lanes only join the shuffles otherwise). The slots' dot products and shuffles are
/// independent: the compiler interleaves them. Granule rows wholly above row j are skipped
/// (v_j is zero there), as apply_reflector.
template <class C, int P, class T>
__device__ __forceinline__ void apply_reflector_slots(const T* buf, T tau, const bool* apply, int s,
                                                      int j, T (&a)[C::kCpl][C::kRL]) {
  constexpr int kCpl = C::kCpl, kAcc = C::kAcc;
  T part[kCpl][kAcc];
#pragma unroll
  for (int sl = P; sl < kCpl; ++sl)
#pragma unroll
    for (int u = 0; u < kAcc; ++u) part[sl][u] = T(0);
#pragma unroll
  for (int g = 0; g < C::kG; ++g) {
    if ((g + 1) * C::kStride <= j) continue;
    T v[C::kGe];
    load_granule(buf + g * C::kStride + s * C::kGe, v);
#pragma unroll
    for (int h = 0; h < C::kGe; ++h) {
      const int i = g * C::kGe + h;
#pragma unroll
      for (int sl = P; sl < kCpl; ++sl)
        part[sl][i % kAcc] = fma(v[h], a[sl][i], part[sl][i % kAcc]);
    }
  }
  T w[kCpl];
#pragma unroll
  for (int sl = P; sl < kCpl; ++sl) {
    w[sl] = part[sl][0];
#pragma unroll
    for (int u = 1; u < kAcc; ++u) w[sl] += part[sl][u];
  }
  // The slots' reductions level by level (independent shuffles in flight together).
#pragma unroll
  for (int o = C::kS / 2; o > 0; o /= 2)
#pragma unroll
    for (int sl = P; sl < kCpl; ++sl) w[sl] += __shfl_xor_sync(kFull, w[sl], o);
#pragma unroll
  for (int sl = P; sl < kCpl; ++sl) w[sl] = apply[sl] ? -tau * w[sl] : T(0);
#pragma unroll
  for (int g = 0; g < C::kG; ++g) {
    if ((g + 1) * C::kStride <= j) continue;
    T v[C::kGe];
    if constexpr (C::kReload) {
      reload_granule(buf + g * C::kStride + s * C::kGe, v);
    } else {
      load_granule(buf + g * C::kStride + s * C::kGe, v);
    }
#pragma unroll
    for (int h = 0; h < C::kGe; ++h)
#pragma unroll
      for (int sl = P; sl < kCpl; ++sl)
        if (apply[sl]) a[sl][g * C::kGe + h] = fma(w[sl], v[h], a[sl][g * C::kGe + h]);
  }
}

/// Phase P of the two-columns kernel: the steps j whose pivot j + 1 lies in slot P (P * kSlotCols
/// <= j + 1 < (P + 1) * kSlotCols), and the step j = k - 1 (H_{k-1} alone, for m < n) where it
/// falls here. Each step: the barrier, H_j on slots P .. CPL - 1 (slots below P hold only finished
/// columns), then larfg on column j + 1 by the whole warp holding it.
template <class C, int P, class T>
__device__ __forceinline__ void tall_multi_phase(T (&a)[C::kCpl][C::kRL], int m, int n, int k,
                                                 int col0, int s, int warp_first, int& cur,
                                                 T (*bufs)[C::kM + C::kGe], ColumnInfo<T>* info) {
  constexpr int kSC = C::kSlotCols;
  const int warp_last = warp_first + C::kCols - 1;
  // The last phase runs through j = k - 1 even when k fills the slots (k = W): that step's
  // barrier and buffer toggle come after the last reflector's writes (v_{k-1}, info[k-1]), so
  // the columns' stores read complete info, and the next matrix's column 0 writes the other
  // buffer. (Without it, racecheck found the last reflector and the next matrix's first one
  // writing the same buffer from different warps with no barrier between them.)
  const int j_end = P == C::kCpl - 1 ? k : min((P + 1) * kSC - 1, k);
  for (int j = P * kSC - 1; j < j_end; ++j) {
    if (j >= 0) {
      // As tall_geqrf_kernel: v_j and tau_j are visible; v_{j-1}'s buffer is free.
      block_barrier<C>();
      const T* v = bufs[cur];
      const T tau = v[C::kM];
      cur ^= 1;
      // Warp-uniform: some column of this warp in slots P .. is past j and below n.
      bool any = false;
#pragma unroll
      for (int sl = P; sl < C::kCpl; ++sl)
        any = any || (sl * kSC + warp_last > j && sl * kSC + warp_first < n);
      if (tau != T(0) && any) {
        bool apply[C::kCpl];
#pragma unroll
        for (int sl = 0; sl < C::kCpl; ++sl) {
          const int c = sl * kSC + col0;
          apply[sl] = c > j && c < n;
        }
        apply_reflector_slots<C, P>(v, tau, apply, s, j, a);
      }
    }
    const int l = j + 1 - P * kSC;                       // the pivot's index within slot P
    if (j + 1 < k && warp_first <= l && l <= warp_last)  // warp-uniform
      reflector<C>(a[P], j + 1, m, s, col0 == l, bufs[cur], info);
  }
}

template <class T, int M, int W, int RL, int CPL, int Fewer>
__global__ void __launch_bounds__(TallMultiCfg<T, M, W, RL, CPL, Fewer>::kThreads,
                                  TallMultiCfg<T, M, W, RL, CPL, Fewer>::kMinBlocks)
    tall_geqrf_multi_kernel(DeviceBatch<T> batch) {
  using C = TallMultiCfg<T, M, W, RL, CPL, Fewer>;
  constexpr int kSC = C::kSlotCols;
  __shared__ __align__(16) T bufs[2][M + C::kGe];
  __shared__ ColumnInfo<T> info[W];
  const int tid = static_cast<int>(threadIdx.x);
  const int col0 = tid / C::kS, s = tid % C::kS;
  const int warp_first = (tid >> 5) * C::kCols;  // the warp's first column within a slot
  int cur = 0;
  for (std::int64_t q = blockIdx.x; q < batch.count; q += gridDim.x) {
    const Desc<T> d = batch.at(q);
    const int m = d.m, n = d.n, k = min(m, n);
    if (k <= 0) continue;  // block-uniform
    T a[CPL][RL];
    const bool whole = granules_ok<C>(d);
#pragma unroll
    for (int p = 0; p < CPL; ++p) load_column<C>(d, whole, p * kSC + col0, s, a[p]);
    tall_multi_phase<C, 0>(a, m, n, k, col0, s, warp_first, cur, bufs, info);
    if constexpr (CPL > 1) tall_multi_phase<C, 1>(a, m, n, k, col0, s, warp_first, cur, bufs, info);
    static_assert(CPL <= 2, "one tall_multi_phase per slot");
    // As tall_geqrf_kernel: the descriptor read again; info complete.
    const Desc<T> e = batch.at(opaque(q));
    const bool whole_e = granules_ok<C>(e);
#pragma unroll
    for (int p = 0; p < CPL; ++p) store_column<C>(e, whole_e, p * kSC + col0, s, a[p], info);
    // The next matrix's column 0 rewrites info[0] (read by this warp's slot 0 above).
    __syncwarp();
  }
}

/// Launches `kernel` (threads per block) with no more blocks than stay resident: each block
/// loops over its matrices (persistent).
template <class T>
void launch_persistent(void (*kernel)(DeviceBatch<T>), int threads, const DeviceBatch<T>& b,
                       cudaStream_t stream) {
  int device = 0, sms = 0, per_sm = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUQR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  const std::int64_t resident = std::int64_t(std::max(sms, 1)) * std::max(per_sm, 1);
  const std::int64_t blocks = std::min(b.count, resident);
  kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(b);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

/// Two columns per lane (tall_geqrf_multi_kernel, one block per SM fewer in the launch
/// bounds) for classes of 16 columns and more; one (tall_geqrf_kernel) for the 8-column ones.
template <class T, int M, int W, int RL>
void launch_one(const DeviceBatch<T>& b, cudaStream_t stream) {
  if constexpr (W >= 16) {
    using C = TallMultiCfg<T, M, W, RL, 2, 1>;
    launch_persistent<T>(tall_geqrf_multi_kernel<T, M, W, RL, 2, 1>, C::kThreads, b, stream);
  } else {
    launch_persistent<T>(tall_geqrf_kernel<T, M, W, RL>, TallCfg<T, M, W, RL>::kThreads, b, stream);
  }
}

template <class T, int RL>
void launch_rl(const DeviceBatch<T>& b, int cls, cudaStream_t stream) {
  switch (cls) {
    case 0:
      launch_one<T, 64, 8, RL>(b, stream);
      break;
    case 1:
      launch_one<T, 64, 16, RL>(b, stream);
      break;
    case 2:
      launch_one<T, 64, 32, RL>(b, stream);
      break;
    case 3:
      launch_one<T, 64, 64, RL>(b, stream);
      break;
    case 4:
      launch_one<T, 128, 8, RL>(b, stream);
      break;
    case 5:
      launch_one<T, 128, 16, RL>(b, stream);
      break;
    case 6:
      launch_one<T, 128, 32, RL>(b, stream);
      break;
    case 7:
      launch_one<T, 128, 64, RL>(b, stream);
      break;
    case 8:
      launch_one<T, 256, 8, RL>(b, stream);
      break;
    case 9:
      launch_one<T, 256, 16, RL>(b, stream);
      break;
    default:
      launch_one<T, 256, 32, RL>(b, stream);
      break;
  }
}

/// GPUQR_BATCHED_TALL, read once: 0 off, 1 on, else (unset, 2) outside the small class only.
TallRoute env_tall() {
  static const TallRoute route = [] {
    const char* v = std::getenv("GPUQR_BATCHED_TALL");
    if (v != nullptr && std::strcmp(v, "0") == 0) return TallRoute::off;
    if (v != nullptr && std::strcmp(v, "1") == 0) return TallRoute::on;
    return TallRoute::outside_small;
  }();
  return route;
}

TallRoute current_tall() {
  const auto r = static_cast<TallRoute>(tall_override.load());
  return r != TallRoute::automatic ? r : env_tall();
}

}  // namespace

int tall_class(std::int64_t m, std::int64_t n) {
  if (m <= 0 || n <= 0 || n > 64 || m > 256 || (n > 32 && m > 128)) return -1;
  const TallRoute route = current_tall();
  if (route == TallRoute::off) return -1;
  // The small kernel keeps m <= 32 (one lane per column there); with outside_small, all of
  // its class.
  if (small_class(m, n) >= 0 && (m <= 32 || route == TallRoute::outside_small)) return -1;
  const int rows = m <= 64 ? 0 : (m <= 128 ? 1 : 2);
  const int cols = n <= 8 ? 0 : (n <= 16 ? 1 : (n <= 32 ? 2 : 3));
  return rows * 4 + cols;
}

template <class T>
void launch_tall_geqrf(const DeviceBatch<T>& b, int cls, cudaStream_t stream) {
  if (b.count == 0) return;
  if (b.list == nullptr && (b.shape.m == 0 || b.shape.n == 0)) return;
  if (b.count > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument,
                "batched geqrf: " + std::to_string(b.count) + " matrices exceed one launch");
  }
  tall_launches.fetch_add(1);
  // Rows per lane: 16 (8 and 32 measured slower, see the file comment).
  launch_rl<T, 16>(b, cls, stream);
}

template void launch_tall_geqrf<float>(const DeviceBatch<float>&, int, cudaStream_t);
template void launch_tall_geqrf<double>(const DeviceBatch<double>&, int, cudaStream_t);

}  // namespace batched
}  // namespace gpuqr::kernels::cuda
