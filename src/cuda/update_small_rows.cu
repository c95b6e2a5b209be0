// CUDA backend of add_rows_small (src/core/update_kernels.hpp): the whole reduction of a few
// added rows (p <= kSmallAddRows = 16) into R, and into d, in ONE launch.
//
// The update is n reflectors of length p + 1, H_i = I - tau_i [e_i; v_i] [e_i; v_i]^T acting on
// row i of R and on the p rows of U: cheap arithmetic (2 p n^2 flops) but a chain of n
// dependent steps, which blocked code pays for with several launches per column block.
//
// Shape: the augmented columns [R d; U e] (n + k of them) are cut into tiles of 32; one warp
// (one thread block) owns a tile, lane c owns column c: its p entries of U in registers, the
// rows of R it is updating in shared memory (its own column of a 32 x 32 tile). Tiles are handed out in launch order by a ticket
// counter, so a warp only ever waits for warps that already run (no deadlock whatever the
// scheduler does). Warp t applies, in order, the reflectors of every tile s < t as tile s
// publishes them (V_s over U's columns, tau_s, then a flag), then factors its own 32 columns
// and publishes them. Columns are owned by one warp each, so R and d are never shared; only
// V and tau cross warps, read with __ldcg (L2) after the flag: never a stale L1 line.
//
// Scaling: where the squares of a column neither over- nor underflow, its norm is the plain
// sum of squares and tau and the scale come from reciprocals (the per-column chain is the
// kernel's critical path: each tile waits for the previous tile's 32 columns); elsewhere the
// scaled two-pass sum (max |x|, then sum (x / max)^2), as LAPACK's larfg avoids over- and
// underflow.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "src/core/update_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kTile = 32;
constexpr int kMaxP = static_cast<int>(kSmallAddRows);

/// 1 / x without the division's slow-path branch (correctly rounded).
__device__ __forceinline__ double reciprocal(double x) { return __drcp_rn(x); }
__device__ __forceinline__ float reciprocal(float x) { return __frcp_rn(x); }

template <class T>
struct SmallArgs {
  T* r;
  std::int64_t ldr;
  T* u;
  std::int64_t ldu;
  T* d;
  std::int64_t ldd;
  T* e;
  std::int64_t lde;
  T* tau;
  int* flags;  // [0]: ticket counter; [1 + s]: tile s published
  std::int64_t n;
  std::int64_t cols;  // n + k
  int p;
};

/// Column c of the augmented top [R d] / bottom [U e].
template <class T>
__device__ __forceinline__ T* top_col(const SmallArgs<T>& a, std::int64_t c) {
  return c < a.n ? a.r + c * a.ldr : a.d + (c - a.n) * a.ldd;
}
template <class T>
__device__ __forceinline__ T* bottom_col(const SmallArgs<T>& a, std::int64_t c) {
  return c < a.n ? a.u + c * a.ldu : a.e + (c - a.n) * a.lde;
}

/// Rows row0 .. row0+31 (those < n) of the tile's columns: fetch_rows issues all 32 loads of a
/// lane at once (into registers: one memory latency, not 32 in a row), commit_rows puts them in
/// s (s[i][lane]: lane = column, which each lane then reads and writes alone). The loads run
/// down columns (coalesced). store_rows writes s back.
template <class T>
__device__ __forceinline__ void fetch_rows(const SmallArgs<T>& a, std::int64_t row0,
                                           std::int64_t c0, T (&vals)[kTile]) {
#pragma unroll
  for (int k = 0; k < kTile; ++k) {
    const std::int64_t c = c0 + k;  // lane = row i, k = column: 32 lanes read one column
    vals[k] = (c < a.cols && row0 + threadIdx.x < a.n) ? top_col(a, c)[row0 + threadIdx.x] : T(0);
  }
}

template <class T>
__device__ __forceinline__ void commit_rows(const T (&vals)[kTile], T (*s)[kTile + 1]) {
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kTile; ++k) s[threadIdx.x][k] = vals[k];
  __syncwarp();
}

template <class T>
__device__ __forceinline__ void store_rows(const SmallArgs<T>& a, std::int64_t row0,
                                           std::int64_t c0, T (*s)[kTile + 1]) {
  __syncwarp();
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTile) {
    const int i = idx % kTile, col = idx / kTile;
    const std::int64_t c = c0 + col;
    if (c < a.cols && row0 + i < a.n) top_col(a, c)[row0 + i] = s[i][col];
  }
  __syncwarp();
}

template <class T>
__global__ void __launch_bounds__(kTile) add_rows_small_kernel(SmallArgs<T> a) {
  __shared__ T sv[kMaxP][kTile];        // the reflectors being applied: v_i in column i
  __shared__ T stau[kTile];
  __shared__ T srows[kTile][kTile + 1];  // staging of R's rows (padded: no bank conflicts)
  const int lane = threadIdx.x;
  int ticket = 0;
  if (lane == 0) ticket = atomicAdd(&a.flags[0], 1);
  const std::int64_t t = __shfl_sync(0xffffffffu, ticket, 0);
  const std::int64_t c0 = t * kTile, c = c0 + lane;
  const bool valid = c < a.cols;
  const int p = a.p;
  const std::int64_t factor_tiles = (a.n + kTile - 1) / kTile;

  T u[kMaxP];
  {
    const T* col = valid ? bottom_col(a, c) : nullptr;
#pragma unroll
    for (int r = 0; r < kMaxP; ++r) u[r] = (valid && r < p) ? col[r] : T(0);
  }

  // The reflectors of the tiles before this one, in order. The R rows a step needs are this
  // warp's own: they are fetched before waiting for the producer's flag.
  const std::int64_t producers = t < factor_tiles ? t : factor_tiles;
  T vals[kTile];
  if (producers > 0) fetch_rows(a, 0, c0, vals);
  for (std::int64_t s = 0; s < producers; ++s) {
    if (lane == 0) {
      volatile int* flag = a.flags + 1 + s;
      while (*flag == 0) __nanosleep(64);
    }
    __syncwarp();
    __threadfence();  // the flag was seen: the producer's V and tau are visible from here on
    const std::int64_t i0 = s * kTile;
    T vv[kMaxP];
#pragma unroll
    for (int k = 0; k < kMaxP; ++k) {  // all of V_s's loads in flight at once
      const int idx = lane + k * kTile, r = idx % p, i = idx / p;
      vv[k] = (k < p && i0 + i < a.n) ? __ldcg(a.u + r + (i0 + i) * a.ldu) : T(0);
    }
    const T tv = i0 + lane < a.n ? __ldcg(a.tau + i0 + lane) : T(0);
    commit_rows(vals, srows);
#pragma unroll
    for (int k = 0; k < kMaxP; ++k) {
      const int idx = lane + k * kTile;
      if (k < p) sv[idx % p][idx / p] = vv[k];
    }
    stau[lane] = tv;
    __syncwarp();
    // The next step's rows; after the last producer, rows c0.. (i0 + 32 = c0): this tile's own.
    if (s + 1 < producers || t < factor_tiles) fetch_rows(a, i0 + kTile, c0, vals);
#pragma unroll 1
    for (int i = 0; i < kTile; ++i) {
      T w[4] = {srows[i][lane], T(0), T(0), T(0)};
#pragma unroll
      for (int r = 0; r < kMaxP; ++r)
        if (r < p) w[r % 4] += sv[r][i] * u[r];
      const T wi = stau[i] * ((w[0] + w[1]) + (w[2] + w[3]));
      srows[i][lane] -= wi;
#pragma unroll
      for (int r = 0; r < kMaxP; ++r)
        if (r < p) u[r] -= sv[r][i] * wi;
    }
    store_rows(a, i0, c0, srows);
  }

  if (t < factor_tiles) {
    // This tile's own reflectors: column j's against row c0 + j of R.
    if (producers == 0) fetch_rows(a, c0, c0, vals);  // else fetched during the last step
    commit_rows(vals, srows);
#pragma unroll 1
    for (int j = 0; j < kTile; ++j) {
      if (c0 + j >= a.n) break;  // uniform across the warp
      if (lane == j) {
        // larfg on (alpha, u): the column's critical path. Fast path: the plain sum of
        // squares (four independent sums) and reciprocals when squares neither over- nor
        // underflow; otherwise the scaled two-pass sum (max |x|, then sum (x / max)^2).
        const T alpha = srows[j][j];
        T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
        for (int r = 0; r < kMaxP; ++r)
          if (r < p) part[r % 4] += u[r] * u[r];
        const T ss = (part[0] + part[1]) + (part[2] + part[3]);
        const T total = alpha * alpha + ss;
        T tau = 0, scale = 0, beta = alpha;
        if (ss >= SafeRange<T>::small && ss <= SafeRange<T>::big && total <= SafeRange<T>::big) {
          const T norm = sqrt(total);
          beta = alpha >= 0 ? -norm : norm;
          tau = (beta - alpha) * reciprocal(beta);
          scale = reciprocal(alpha - beta);
        } else {
          T amax = 0;
#pragma unroll
          for (int r = 0; r < kMaxP; ++r)
            if (r < p) amax = max(amax, abs(u[r]));
          if (amax > 0) {
            const T inv = T(1) / amax;
            T sc = 0;
#pragma unroll
            for (int r = 0; r < kMaxP; ++r)
              if (r < p) sc += (u[r] * inv) * (u[r] * inv);
            const T norm = hypot(alpha, amax * sqrt(sc));
            beta = alpha >= 0 ? -norm : norm;
            tau = (beta - alpha) / beta;
            scale = T(1) / (alpha - beta);
          }
        }
#pragma unroll
        for (int r = 0; r < kMaxP; ++r) {
          u[r] *= scale;
          if (r < p) sv[r][j] = u[r];
        }
        srows[j][j] = beta;
        stau[j] = tau;
      }
      __syncwarp();
      if (lane > j && valid) {
        T part[4] = {srows[j][lane], T(0), T(0), T(0)};
#pragma unroll
        for (int r = 0; r < kMaxP; ++r)
          if (r < p) part[r % 4] += sv[r][j] * u[r];
        const T w = stau[j] * ((part[0] + part[1]) + (part[2] + part[3]));
        srows[j][lane] -= w;
#pragma unroll
        for (int r = 0; r < kMaxP; ++r)
          if (r < p) u[r] -= sv[r][j] * w;
      }
      __syncwarp();
    }
    store_rows(a, c0, c0, srows);
    if (c < a.n) a.tau[c] = stau[lane];
  }

  if (valid) {
    T* col = bottom_col(a, c);
#pragma unroll
    for (int r = 0; r < kMaxP; ++r)
      if (r < p) col[r] = u[r];
  }
  if (t < factor_tiles) {
    __threadfence();  // V (U's columns) and tau reach L2 before the flag does
    __syncwarp();
    if (lane == 0) atomicExch(a.flags + 1 + t, 1);
  }
}

}  // namespace

template <class T>
void add_rows_small(detail::ContextImpl& ctx, MatrixView<T> r, MatrixView<T> u,
                    MatrixView<T> d, MatrixView<T> e, VectorView<T> tau,
                    VectorView<int> flags) {
  const std::int64_t n = r.cols(), p = u.rows(), k = d.cols();
  if (n == 0 || p == 0) return;
  if (p > kSmallAddRows)
    GPUQR_THROW(InvalidArgument, "add_rows_small: p = " + std::to_string(p) + " > " +
                                     std::to_string(kSmallAddRows));
  DeviceGuard guard(ctx.device);
  const std::int64_t cols = n + k, tiles = (cols + kTile - 1) / kTile;
  GPUQR_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0,
                                   static_cast<std::size_t>(flags.size()) * sizeof(int),
                                   ctx.stream));
  SmallArgs<T> a{r.data(), r.ld(), u.data(), u.ld(), k > 0 ? d.data() : nullptr,
                 k > 0 ? d.ld() : 1, k > 0 ? e.data() : nullptr, k > 0 ? e.ld() : 1,
                 tau.data(), flags.data(), n, cols, static_cast<int>(p)};
  add_rows_small_kernel<T><<<static_cast<unsigned>(tiles), kTile, 0, ctx.stream>>>(a);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template void add_rows_small<float>(detail::ContextImpl&, MatrixView<float>, MatrixView<float>,
                                    MatrixView<float>, MatrixView<float>, VectorView<float>,
                                    VectorView<int>);
template void add_rows_small<double>(detail::ContextImpl&, MatrixView<double>,
                                     MatrixView<double>, MatrixView<double>, MatrixView<double>,
                                     VectorView<double>, VectorView<int>);

}  // namespace gpuqr::kernels::cuda
