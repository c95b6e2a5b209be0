// The rows kernel of the batched QR: 32 < m <= 64, 8 < n <= 16 (the small register kernel's
// class 7, batched_small.cu routes it here), a matrix per warp, lane L holds rows L and L + 32
// of every column in registers.
//
// The small kernel's layout keeps a column per lane pair, so every step rereads v from shared
// memory element by element and half the lanes idle once their columns are done. Here v_J is
// in the registers of column J and the update touches only the columns right of J, on every
// lane. What it costs instead is the dot products' sum over the warp: each lane writes its
// partial sums (its two rows' share of v^T a_c for every column c > J) into a table in shared
// memory, a quarter of the lanes sums each granule of columns, xor shuffles join the parts,
// and the products w_c = tau v^T a_c go back through shared memory to every lane.
//
// Per column J (a compile-time step):
//  1. larfg: x = column J's rows > J from the registers, the sum of squares by a warp
//     reduction, alpha from lane J, LAPACK's scalars (the refined reciprocals of
//     larfg_scalars.cuh on the common path, the scaled norm out of line), v in the registers;
//  2. partial sums p_c = v_L a_Lc + v_{L+32} a_{L+32,c} for c > J into the table (rows padded
//     so that the lanes' 16-byte stores and the sums hit distinct banks);
//  3. sums, w_c = tau * sum into a row of W values; every lane reads the row back and updates
//     a_c -= v w_c on its two rows.
// Column J's registers then hold R above the diagonal (untouched: v is zero there), beta on
// it and v below it, as geqrf leaves them.
//
// The registers are loaded from and stored to global memory directly (no staging buffers, so
// registers alone bound the warps an SM keeps); the next matrix is prefetched into L2. A
// version staged through shared memory like the small kernel measured 1.253-1.279 ms for
// 64 x 16 FP64 against 1.091-1.110 (H100, session 10 runs 2-3) and was removed.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>

#include "src/core/batched_kernels.hpp"
#include "src/cuda/batched_internal.hpp"
#include "src/cuda/batched_warp.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda {
namespace {
std::atomic<int> rows_fast_override{-1};
std::atomic<int> rows_stage_override{-1};
std::atomic<int> rows_legacy_override{-1};
}  // namespace

void set_batched_rows_fast(int fast) { rows_fast_override.store(fast); }
void set_batched_rows_stage(int stage) { rows_stage_override.store(stage); }
void set_batched_rows_legacy(int legacy) { rows_legacy_override.store(legacy); }

namespace batched {
namespace {

using namespace warp;

template <class T, int W>
struct RowsCfg {
  static constexpr int kGe = 16 / int(sizeof(T));  // elements per 16-byte granule
  static constexpr int kGran = W / kGe;            // granules of a lane's row of the table
  static constexpr int kStride = W + kGe;          // the row padded by a granule (banks below)
  static constexpr int kParts = 32 / kGran;        // lanes summing one granule of columns
  static constexpr int kPartRows = 32 / kParts;    // table rows each of them sums
  static_assert(kGran >= 4 && kGran <= 8 && (kGran & (kGran - 1)) == 0);
};

// The table: lane l's partial sums of step J at l * kStride + c. The padding granule makes
// the eight lanes of one 16-byte store's wavefront (rows l .. l + 7, one granule each) and
// the summing lanes (kGran granules of one row, a row apiece per part) hit distinct banks,
// with addresses that are a lane's base plus constants.

/// larfg for rows-kernel columns whose squares under- or overflow: the scaled norm over the
/// warp, as larfg_scaled. Out of line and rare; all lanes call it.
template <class T>
struct RowsReflector {
  bool reflect;
  T beta, tau, v0, v1;
};

template <class T>
__device__ __noinline__ RowsReflector<T> rows_larfg_scaled(T alpha, T x0, T x1) {
  const T amax = group_max<32>(fmax(fabs(x0), fabs(x1)));
  T scaled = 0;
  if (amax > T(0)) {
    const T y0 = x0 / amax, y1 = x1 / amax;
    scaled = y0 * y0 + y1 * y1;
  }
  const T xnorm = amax * sqrt(group_sum<32>(scaled));
  RowsReflector<T> h{xnorm != T(0), alpha, T(0), x0, x1};
  if (h.reflect) {
    h.beta = -copysign(hypot(alpha, xnorm), alpha);
    h.tau = (h.beta - alpha) / h.beta;
    const T denom = alpha - h.beta;
    h.v0 = x0 / denom;
    h.v1 = x1 / denom;
  }
  return h;
}

/// What a rows-kernel step knows of its matrix and lane.
template <class T>
struct RowsLane {
  int m, kmax, lane;
  T* put;        // this lane's row of the table
  const T* sum;  // the first table row this lane sums, at its granule
  T* wrow;       // the row of w
};

/// Step J of the rows kernel (see above).
/// kFast: the branch-free form for a matrix with k = W (every step runs; m > 32 > W, so no
/// column is empty), which assumes every column takes larfg's common path and records in
/// `bad` any that did not (the caller then factors the matrix again with kFast false).
/// Otherwise the common path is the same straight line, and a column that leaves it (empty,
/// or ||x||^2 out of range: LAPACK's scaled path, tau = 0 for x = 0; warp-uniform, since
/// every lane holds the same sums) redoes its scalars out of line.
template <class R, int W, int J, bool kFast, bool kLegacy, class T>
__device__ __forceinline__ void rows_step(const RowsLane<T>& q, T (&a0)[W], T (&a1)[W], T& my_tau,
                                          bool& bad) {
  if constexpr (!kFast) {
    if (J >= q.kmax) return;  // warp-uniform (k is the same on every lane)
  }
  constexpr int kE = R::kGe;
  const int lane = q.lane;
  // 1. larfg on column J.
  const T x0 = lane > J ? a0[J] : T(0), x1 = a1[J];
  const T ss = group_sum<32>(x0 * x0 + x1 * x1);
  const T alpha = __shfl_sync(kFull, a0[J], J);
  const T total = alpha * alpha + ss;
  const bool fast = larfg_in_range(ss, total);
  T tau, beta, v0, v1;
  if constexpr (kLegacy && !kFast) {  // session 10's form, for the A/B (temporary)
    const bool empty = J + 1 >= q.m;
    bool reflect = false;
    tau = 0;
    beta = alpha;
    v0 = x0;
    v1 = x1;
    if (!empty && fast) {
      const Scalars<T> h = larfg_scalars(alpha, total);
      beta = h.beta;
      tau = h.tau;
      v0 = x0 * h.scale;
      v1 = x1 * h.scale;
      reflect = true;
    }
    if (__any_sync(kFull, !empty && !fast)) {
      const RowsReflector<T> s = rows_larfg_scaled(alpha, x0, x1);
      if (!empty && !fast) {
        reflect = s.reflect;
        beta = s.beta;
        tau = s.tau;
        v0 = s.v0;
        v1 = s.v1;
      }
    }
    if (lane == J) my_tau = tau;
    if (!__any_sync(kFull, reflect)) return;
  } else {
  const Scalars<T> h = larfg_scalars(alpha, total);
  tau = h.tau;
  beta = h.beta;
  v0 = x0 * h.scale;
  v1 = x1 * h.scale;
  if constexpr (kFast) {
    bad = bad || !fast;
  } else {
    const bool empty = J + 1 >= q.m;  // no rows below the diagonal: H = I
    if (__any_sync(kFull, empty || !fast)) {  // rare: warp-uniform, out of line
      bool reflect = false;
      tau = 0;
      beta = alpha;
      v0 = x0;
      v1 = x1;
      if (!empty) {
        const RowsReflector<T> s = rows_larfg_scaled(alpha, x0, x1);
        reflect = s.reflect;
        beta = s.beta;
        tau = s.tau;
        v0 = s.v0;
        v1 = s.v1;
      }
      if (!reflect) {  // x stays, as LAPACK's tau = 0
        if (lane == J) my_tau = T(0);
        return;
      }
    }
  }
  if (lane == J) my_tau = tau;
  }
  v0 = lane > J ? v0 : (lane == J ? T(1) : T(0));
  // Column J becomes R's diagonal and v.
  a0[J] = lane > J ? v0 : (lane == J ? beta : a0[J]);
  a1[J] = v1;
  if constexpr (J + 1 < W) {
    // 2. This lane's partial sums of v^T a_c for c > J (whole granules from J + 1's).
    constexpr int g0 = (J + 1) / kE;
#pragma unroll
    for (int g = g0; g < R::kGran; ++g) {
      T p[kE];
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int c = g * kE + e;
        p[e] = c > J ? fma(v0, a0[c], v1 * a1[c]) : T(0);
      }
      store_granule(q.put + g * kE, p);
    }
    __syncwarp();
    // 3. Lane L sums granule L % kGran of kPartRows rows; xor shuffles join the parts; the
    // lanes of part 0 write w = tau * (v^T a) for their granule.
    // Lanes of granules left of J + 1's sit out the loads (a shared-memory load costs by the
    // addresses of its active lanes: about half the wavefronts over a factorization).
    const int gq = lane % R::kGran;
    T sums[kE] = {};
    if (gq >= g0) {
      T acc[2][kE];
#pragma unroll
      for (int i = 0; i < R::kPartRows; ++i) {
        T x[kE];
        load_granule(q.sum + i * R::kStride, x);
#pragma unroll
        for (int e = 0; e < kE; ++e) acc[i & 1][e] = i < 2 ? x[e] : acc[i & 1][e] + x[e];
      }
#pragma unroll
      for (int e = 0; e < kE; ++e) sums[e] = acc[0][e] + acc[1][e];
    }
#pragma unroll
    for (int o = R::kGran; o < 32; o *= 2) {
#pragma unroll
      for (int e = 0; e < kE; ++e) sums[e] += __shfl_xor_sync(kFull, sums[e], o);
    }
    if (lane < R::kGran && gq >= g0) {
#pragma unroll
      for (int e = 0; e < kE; ++e) sums[e] *= tau;
      store_granule(q.wrow + gq * kE, sums);
    }
    __syncwarp();
#pragma unroll
    for (int g = g0; g < R::kGran; ++g) {
      T w[kE];
      load_granule(q.wrow + g * kE, w);
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int c = g * kE + e;
        if (c > J) {
          a0[c] = fma(-v0, w[e], a0[c]);
          a1[c] = fma(-v1, w[e], a1[c]);
        }
      }
    }
    __syncwarp();  // the table and w are read before the next step writes them
  }
}

template <class R, int W, bool kFast, bool kLegacy, int kFrom, class T, int... Js>
__device__ __forceinline__ void rows_range(std::integer_sequence<int, Js...>, const RowsLane<T>& q,
                                           T (&a0)[W], T (&a1)[W], T& my_tau, bool& bad) {
  (rows_step<R, W, kFrom + Js, kFast, kLegacy>(q, a0, a1, my_tau, bad), ...);
}

/// How the rows kernel gets the next matrix while it factors the current one
/// (GPUQR_BATCHED_ROWS_STAGE; tests: set_batched_rows_stage).
enum RowsStage : int {
  kStageL2 = 0,    // its lines prefetched into L2 when the current matrix starts
  kStageNone = 1,  // not at all: loads straight from memory
  kStageSmem = 2,  // copied into a shared-memory slot of the warp (cp.async), read from there
  kStageL2Mid = 3  // its lines prefetched into L2 halfway through the current matrix
};

/// The kernel (GPUQR_BATCHED_SMALL_TALL=3, the default for its class): a lane holds its two
/// rows of every column in registers and stores them back straight to global memory (each
/// column one or two coalesced accesses of the warp), so shared memory holds only the steps'
/// table (FP64: 4.7 KB a warp), plus with kStageSmem one 8 KB slot for the next matrix, and
/// registers bound the warps an SM keeps.
/// The launch bounds aim at 16 resident warps per SM in FP64 (128 registers, no spills; 20
/// warps at 96 registers spilled and measured 1.31 ms against 1.10 for 64 x 16, session 10
/// run 4) and 20 in FP32. kFast: a matrix with k = W first takes rows_step's branch-free form
/// (measured faster in FP32; in FP64 selectable by GPUQR_BATCHED_ROWS_FAST=1 for the A/B).
template <class T, int W>
struct RowsDirectCfg {
  using Rows = RowsCfg<T, W>;
  static constexpr int kWarps = 4;
  static constexpr int kWarpElems = 32 * Rows::kStride + W;  // table and w
  static constexpr int kSlotLd = 64;                         // rows of a slot's column
  static constexpr int kSlotElems = kSlotLd * W;
  static constexpr int kTargetWarps = sizeof(T) == 8 ? 16 : 20;
  static constexpr int warp_elems(int stage) {
    return kWarpElems + (stage == kStageSmem ? kSlotElems : 0);
  }
};

/// The lines of matrix d into L2, a matrix's worth of 128-byte lines spread over the lanes:
/// per column the lines of bytes 0, 128, ... and of its last byte (a column need not start
/// on a line), every address inside the column.
template <class T>
__device__ __forceinline__ void prefetch_lines(const Desc<T>& d, int lane) {
  const int bytes = d.m * int(sizeof(T)), lines = (bytes + 127) / 128 + 1;
  const int total = d.m > 0 ? lines * d.n : 0;
  for (int e = lane; e < total; e += 32) {
    const int c = e / lines, l = e - c * lines;
    const char* p =
        reinterpret_cast<const char*>(d.a + c * d.ld) + (l < lines - 1 ? l * 128 : bytes - 1);
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
  }
}

/// Starts the copy of matrix d (m <= 64, n <= W) into the warp's slot (cp.async; the caller
/// commits): whole 16-byte granules where the columns are 16-byte aligned, then the rows
/// past the last whole granule (and every row of unaligned columns) element by element.
/// Nothing past row m or column n is read.
template <class C, class T>
__device__ __forceinline__ void fetch_rows(const Desc<T>& d, T* slot, int lane) {
  constexpr int kE = 16 / int(sizeof(T));
  const int m = d.m, cols = d.n;
  if (m <= 0 || cols <= 0) return;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(d.a) % 16 == 0) &&
                       ((d.ld * std::int64_t(sizeof(T))) % 16 == 0);
  const int whole = aligned ? m / kE : 0;  // whole granules per column
  for (int e = lane; e < whole * cols; e += 32) {
    const int c = e / whole, g = e - c * whole;
    __pipeline_memcpy_async(slot + c * C::kSlotLd + g * kE, d.a + c * d.ld + g * kE, 16);
  }
  const int rest = m - whole * kE;  // rows copied one by one, per column
  for (int e = lane; e < rest * cols; e += 32) {
    const int c = e / rest, i = whole * kE + (e - c * rest);
    __pipeline_memcpy_async(slot + c * C::kSlotLd + i, d.a + c * d.ld + i, sizeof(T));
  }
}

template <class R, int W, bool kFast, bool kLegacy, int kFrom, int kTo, class T>
__device__ __forceinline__ void rows_steps(const RowsLane<T>& q, T (&a0)[W], T (&a1)[W],
                                           T& my_tau, bool& bad) {
  rows_range<R, W, kFast, kLegacy, kFrom>(std::make_integer_sequence<int, kTo - kFrom>{}, q, a0, a1,
                                 my_tau, bad);
}

template <class T, int W, bool kFast, bool kLegacy>
__global__ void __launch_bounds__(RowsDirectCfg<T, W>::kWarps * 32,
                                  RowsDirectCfg<T, W>::kTargetWarps / RowsDirectCfg<T, W>::kWarps)
    rows_direct_geqrf_kernel(DeviceBatch<T> batch, int stage) {
  using D = RowsDirectCfg<T, W>;
  using R = typename D::Rows;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  T* const table = reinterpret_cast<T*>(smem_raw) + warp * D::warp_elems(stage);
  T* const slot = table + D::kWarpElems;  // kStageSmem only
  const std::int64_t step = std::int64_t(gridDim.x) * D::kWarps;
  const int gq = lane % R::kGran, part = lane / R::kGran;
  const std::int64_t first = std::int64_t(blockIdx.x) * D::kWarps + warp;
  if (stage == kStageSmem && first < batch.count) {
    fetch_rows<D>(desc_at(batch, first), slot, lane);
    __pipeline_commit();
  }
  for (std::int64_t base = first; base < batch.count; base += step) {
    const Desc<T> cur = desc_at(batch, base);
    const int m = cur.m, n = cur.n, k = min(m, n);
    T a0[W], a1[W];
    if (stage == kStageSmem) {
      __pipeline_wait_prior(0);
      __syncwarp();
#pragma unroll
      for (int c = 0; c < W; ++c) {
        a0[c] = c < n && lane < m ? slot[c * D::kSlotLd + lane] : T(0);
        a1[c] = c < n && lane + 32 < m ? slot[c * D::kSlotLd + lane + 32] : T(0);
      }
      __syncwarp();  // the slot is read before the next matrix's copy overwrites it
      if (base + step < batch.count) {
        prefetch_desc(batch, base + 2 * step);
        fetch_rows<D>(desc_at(batch, base + step), slot, lane);
        __pipeline_commit();
      }
    } else {
#pragma unroll
      for (int c = 0; c < W; ++c) {
        const T* col = cur.a + c * cur.ld;
        a0[c] = c < n && lane < m ? col[lane] : T(0);
        a1[c] = c < n && lane + 32 < m ? col[lane + 32] : T(0);
      }
      if (stage == kStageL2) prefetch_lines(desc_at(batch, base + step), lane);
      prefetch_desc(batch, base + 2 * step);
    }
    T my_tau = 0;
    {
      const RowsLane<T> q{m,
                          __reduce_max_sync(kFull, k),
                          lane,
                          table + lane * R::kStride,
                          table + part * R::kPartRows * R::kStride + gq * R::kGe,
                          table + 32 * R::kStride};
      // The branch-free form first where it applies; the general one (one copy of the code)
      // where it does not, or where a column left larfg's common path (entries near under-
      // or overflow, a zero subcolumn, NaN): then the matrix again from global memory (still
      // the input), with LAPACK's scaled path where needed.
      bool bad = !kFast || q.kmax != W;
      bool mid = stage == kStageL2Mid;  // the next matrix's prefetch still to issue
      if (!bad) {
        rows_steps<R, W, true, kLegacy, 0, W / 2>(q, a0, a1, my_tau, bad);
        if (mid) {
          prefetch_lines(desc_at(batch, base + step), lane);
          mid = false;
        }
        rows_steps<R, W, true, kLegacy, W / 2, W>(q, a0, a1, my_tau, bad);
        bad = __any_sync(kFull, bad);
        if (bad) {
          const Desc<T> again = desc_at(batch, opaque(base));
#pragma unroll
          for (int c = 0; c < W; ++c) {
            const T* col = again.a + c * again.ld;
            a0[c] = c < n && lane < m ? col[lane] : T(0);
            a1[c] = c < n && lane + 32 < m ? col[lane + 32] : T(0);
          }
          my_tau = 0;
        }
      }
      if (bad) {
        rows_steps<R, W, false, kLegacy, 0, W / 2>(q, a0, a1, my_tau, bad);
        if (mid) prefetch_lines(desc_at(batch, base + step), lane);
        rows_steps<R, W, false, kLegacy, W / 2, W>(q, a0, a1, my_tau, bad);
      }
    }
    const Desc<T> out = desc_at(batch, opaque(base));
#pragma unroll
    for (int c = 0; c < W; ++c) {
      T* col = out.a + c * out.ld;
      if (c < n && lane < m) col[lane] = a0[c];
      if (c < n && lane + 32 < m) col[lane + 32] = a1[c];
    }
    if (lane < k) out.tau[lane] = my_tau;
    __syncwarp();  // the table is read before the next matrix's first step writes it
  }
}

template <class T, int W, bool kFast, bool kLegacy>
void launch_rows_direct_kernel(const DeviceBatch<T>& b, int stage, cudaStream_t stream) {
  using D = RowsDirectCfg<T, W>;
  auto kernel = rows_direct_geqrf_kernel<T, W, kFast, kLegacy>;
  const int bytes = D::kWarps * D::warp_elems(stage) * int(sizeof(T));
  int device = 0, sms = 0, per_sm = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUQR_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  GPUQR_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, D::kWarps * 32, bytes));
  const std::int64_t needed = (b.count + D::kWarps - 1) / D::kWarps;
  const std::int64_t resident = std::int64_t(std::max(sms, 1)) * std::max(per_sm, 1);
  const std::int64_t blocks = std::min(needed, resident);
  kernel<<<static_cast<unsigned>(blocks), D::kWarps * 32, bytes, stream>>>(b, stage);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

/// An integer environment variable, `fallback` where unset or empty.
int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text == nullptr || *text == '\0' ? fallback : std::atoi(text);
}

/// The test hook's value where set (>= 0), else the environment's (read once by the caller).
int knob(const std::atomic<int>& forced, int env) {
  const int f = forced.load();
  return f >= 0 ? f : env;
}

/// GPUQR_BATCHED_ROWS_FAST (tests: set_batched_rows_fast): 1 gives the FP64 kernel the
/// branch-free form first (see RowsDirectCfg), else the general form only.
bool rows_fast() {
  static const int env = env_int("GPUQR_BATCHED_ROWS_FAST", 0);
  return knob(rows_fast_override, env) == 1;
}

/// GPUQR_BATCHED_ROWS_STAGE (tests: set_batched_rows_stage): a RowsStage.
int rows_stage() {
  static const int env = env_int("GPUQR_BATCHED_ROWS_STAGE", kStageNone);
  const int s = knob(rows_stage_override, env);
  return s >= kStageL2 && s <= kStageL2Mid ? s : kStageL2;
}

/// GPUQR_BATCHED_ROWS_LEGACY (tests: set_batched_rows_legacy): 1 gives the FP64 general
/// steps session 10's form (larfg's scalars merged with the rare path), for the A/B.
bool rows_legacy() {
  static const int env = env_int("GPUQR_BATCHED_ROWS_LEGACY", 0);
  return knob(rows_legacy_override, env) == 1;
}

}  // namespace

template <class T>
void launch_rows_small_geqrf(const DeviceBatch<T>& b, cudaStream_t stream) {
  const int stage = rows_stage();
  if constexpr (sizeof(T) == 4) {
    launch_rows_direct_kernel<T, 16, true, false>(b, stage, stream);
  } else {
    if (rows_fast())
      launch_rows_direct_kernel<T, 16, true, false>(b, stage, stream);
    else if (rows_legacy())
      launch_rows_direct_kernel<T, 16, false, true>(b, stage, stream);
    else
      launch_rows_direct_kernel<T, 16, false, false>(b, stage, stream);
  }
}

template void launch_rows_small_geqrf<float>(const DeviceBatch<float>&, cudaStream_t);
template void launch_rows_small_geqrf<double>(const DeviceBatch<double>&, cudaStream_t);

}  // namespace batched
}  // namespace gpuqr::kernels::cuda
