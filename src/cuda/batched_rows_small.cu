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
// registers alone bound the warps an SM keeps), with no prefetch of the next matrix: the other
// warps of the SM hide a load's latency. Measured for 64 x 16 on the H100 (session 11, runs
// 1-2, 1 GiB; session 10 for the first): a version staged through shared memory like the
// small kernel, 1.25-1.28 ms against 1.09-1.11; the next matrix prefetched into L2 when the
// current one starts (session 10's default, GPUQR_BATCHED_ROWS_PREFETCH=1) 1.08-1.11 ms
// against 0.94-0.97 without: its lines left L2 before they were read, so DRAM reads doubled
// (468 against 269 MB for 0.25 GiB, ncu); prefetched halfway through, 0.96; copied into a
// shared-memory slot per warp by cp.async, 0.99-1.03; column J + 1's larfg sum downdated
// from step J's table pass, 1.14-1.22.
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
std::atomic<int> rows_prefetch_override{-1};
}  // namespace

void set_batched_rows_fast(int fast) { rows_fast_override.store(fast); }
void set_batched_rows_prefetch(int prefetch) { rows_prefetch_override.store(prefetch); }

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
template <class R, int W, int J, bool kFast, class T>
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
  const Scalars<T> h = larfg_scalars(alpha, total);
  T tau = h.tau, beta = h.beta, v0 = x0 * h.scale, v1 = x1 * h.scale;
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

template <class R, int W, bool kFast, class T, int... Js>
__device__ __forceinline__ void rows_all(std::integer_sequence<int, Js...>, const RowsLane<T>& q,
                                         T (&a0)[W], T (&a1)[W], T& my_tau, bool& bad) {
  (rows_step<R, W, Js, kFast>(q, a0, a1, my_tau, bad), ...);
}

/// The kernel (GPUQR_BATCHED_SMALL_TALL=3, the default for its class): a lane loads its two
/// rows of every column straight into registers (each column one or two coalesced accesses of
/// the warp) and stores them back the same way, so shared memory holds only the steps' table
/// (FP64: 4.7 KB a warp) and registers alone bound the warps an SM keeps.
/// The launch bounds aim at 16 resident warps per SM in FP64 (128 registers; 20 warps at 96
/// registers spilled and measured 1.31 ms against 1.10 for 64 x 16, session 10 run 4) and 20
/// in FP32. kFast: a matrix with k = W first takes rows_step's branch-free form (the default
/// in both precisions; FP64 64 x 16 0.88 ms against 0.95-0.97 for the general form only,
/// session 11 run 2; GPUQR_BATCHED_ROWS_FAST=0 gives FP64 the general form only).
template <class T, int W>
struct RowsDirectCfg {
  using Rows = RowsCfg<T, W>;
  static constexpr int kWarps = 4;
  static constexpr int kWarpElems = 32 * Rows::kStride + W;  // table and w
  static constexpr int kTargetWarps = sizeof(T) == 8 ? 16 : 20;
};

/// The lines of matrix d into L2 (GPUQR_BATCHED_ROWS_PREFETCH=1 only), a matrix's worth of
/// 128-byte lines spread over the lanes: per column the lines of bytes 0, 128, ... and of its
/// last byte (a column need not start on a line), every address inside the column.
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

template <class T, int W, bool kFast>
__global__ void __launch_bounds__(RowsDirectCfg<T, W>::kWarps * 32,
                                  RowsDirectCfg<T, W>::kTargetWarps / RowsDirectCfg<T, W>::kWarps)
    rows_direct_geqrf_kernel(DeviceBatch<T> batch, bool prefetch) {
  using D = RowsDirectCfg<T, W>;
  using R = typename D::Rows;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  T* const table = reinterpret_cast<T*>(smem_raw) + warp * D::kWarpElems;
  const std::int64_t step = std::int64_t(gridDim.x) * D::kWarps;
  const int gq = lane % R::kGran, part = lane / R::kGran;
  for (std::int64_t base = std::int64_t(blockIdx.x) * D::kWarps + warp; base < batch.count;
       base += step) {
    const Desc<T> cur = desc_at(batch, base);
    const int m = cur.m, n = cur.n, k = min(m, n);
    T a0[W], a1[W];
#pragma unroll
    for (int c = 0; c < W; ++c) {
      const T* col = cur.a + c * cur.ld;
      a0[c] = c < n && lane < m ? col[lane] : T(0);
      a1[c] = c < n && lane + 32 < m ? col[lane + 32] : T(0);
    }
    if (prefetch) prefetch_lines(desc_at(batch, base + step), lane);
    prefetch_desc(batch, base + 2 * step);
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
      if (!bad) {
        rows_all<R, W, true>(std::make_integer_sequence<int, W>{}, q, a0, a1, my_tau, bad);
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
      if (bad) rows_all<R, W, false>(std::make_integer_sequence<int, W>{}, q, a0, a1, my_tau, bad);
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

template <class T, int W, bool kFast>
void launch_rows_direct_kernel(const DeviceBatch<T>& b, bool prefetch, cudaStream_t stream) {
  using D = RowsDirectCfg<T, W>;
  auto kernel = rows_direct_geqrf_kernel<T, W, kFast>;
  const int bytes = D::kWarps * D::kWarpElems * int(sizeof(T));
  int device = 0, sms = 0, per_sm = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUQR_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, D::kWarps * 32, bytes));
  const std::int64_t needed = (b.count + D::kWarps - 1) / D::kWarps;
  const std::int64_t resident = std::int64_t(std::max(sms, 1)) * std::max(per_sm, 1);
  const std::int64_t blocks = std::min(needed, resident);
  kernel<<<static_cast<unsigned>(blocks), D::kWarps * 32, bytes, stream>>>(b, prefetch);
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

/// GPUQR_BATCHED_ROWS_FAST (tests: set_batched_rows_fast): 0 gives the FP64 kernel the
/// general form only, else the branch-free form first (see RowsDirectCfg).
bool rows_fast() {
  static const int env = env_int("GPUQR_BATCHED_ROWS_FAST", 1);
  return knob(rows_fast_override, env) != 0;
}

/// GPUQR_BATCHED_ROWS_PREFETCH (tests: set_batched_rows_prefetch): 1 prefetches each warp's
/// next matrix into L2 (session 10's default, measured slower), else nothing.
bool rows_prefetch() {
  static const int env = env_int("GPUQR_BATCHED_ROWS_PREFETCH", 0);
  return knob(rows_prefetch_override, env) == 1;
}

}  // namespace

template <class T>
void launch_rows_small_geqrf(const DeviceBatch<T>& b, cudaStream_t stream) {
  const bool prefetch = rows_prefetch();
  if constexpr (sizeof(T) == 4) {
    launch_rows_direct_kernel<T, 16, true>(b, prefetch, stream);
  } else {
    if (rows_fast())
      launch_rows_direct_kernel<T, 16, true>(b, prefetch, stream);
    else
      launch_rows_direct_kernel<T, 16, false>(b, prefetch, stream);
  }
}

template void launch_rows_small_geqrf<float>(const DeviceBatch<float>&, cudaStream_t);
template void launch_rows_small_geqrf<double>(const DeviceBatch<double>&, cudaStream_t);

}  // namespace batched
}  // namespace gpuqr::kernels::cuda
