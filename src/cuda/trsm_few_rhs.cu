// Back substitution R X = B for an upper triangular R and at most kFewRhs columns of B, in
// one launch. cuBLAS's trsm (and trsv) take ~0.22 ms for n = 3000 and one column, on a
// problem that reads 36 MB; its time is the chain of n dependent rows, not the bytes.
//
// Shape: rows are cut into tiles of 32; one warp owns a tile, lane i row i, the k sums
// s = b - R(i, i+1:) x in registers. Tiles are handed out by a ticket counter from the last
// tile up, so a warp only waits for warps that already run. Warp I subtracts R(I, J) x_J for
// every tile J > I in turn, as tile J publishes x_J (the flag, then x_J read from L2), with
// R(I, J) loaded a step ahead; then it solves its 32 x 32 diagonal block (lane c divides, its
// x goes to the others by shuffles) and publishes x_I. The reciprocal of R(i, i) is formed
// once, off the chain; x_i = s_i * (1 / R(i, i)) differs from LAPACK's s_i / R(i, i) by at most
// one rounding.
#include <cuda_runtime.h>

#include <algorithm>

#include "src/cuda/chained_tiles.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/trsm_few_rhs.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kTile = 32;

template <class T>
struct SolveArgs {
  const T* a;
  std::int64_t lda;
  T* b;
  std::int64_t ldb;
  std::int64_t n;
  int k;
  bool unit;
  int* flags;  // [0]: ticket counter; [1 + J]: x_J published
};

/// R(row, J*32 .. J*32 + 31), zeros outside R (the lane's row of the tile block).
template <class T>
__device__ __forceinline__ void load_block(const SolveArgs<T>& s, std::int64_t row, bool ok,
                                           std::int64_t j0, T (&out)[kTile]) {
#pragma unroll
  for (int c = 0; c < kTile; ++c)
    out[c] = (ok && j0 + c < s.n) ? s.a[row + (j0 + c) * s.lda] : T(0);
}

template <class T, int K>
__global__ void __launch_bounds__(kTile) trsm_upper_kernel(SolveArgs<T> s) {
  __shared__ T sx[kTile][K];
  const int lane = threadIdx.x;
  int ticket = 0;
  if (lane == 0) ticket = atomicAdd(&s.flags[0], 1);
  const std::int64_t tiles = (s.n + kTile - 1) / kTile;
  const std::int64_t tile = tiles - 1 - __shfl_sync(0xffffffffu, ticket, 0);
  const std::int64_t i0 = tile * kTile, row = i0 + lane;
  const bool ok = row < s.n;

  T acc[K];
#pragma unroll
  for (int q = 0; q < K; ++q) acc[q] = (ok && q < s.k) ? s.b[row + q * s.ldb] : T(0);
  T diag[kTile];  // the lane's row of the diagonal block; entries left of the diagonal unused
  load_block(s, row, ok, i0, diag);
  const T rinv = (!ok || s.unit) ? T(1) : T(1) / s.a[row + row * s.lda];

  // The tiles right of the diagonal block, last first (the order they are published in).
  T cur[kTile], nxt[kTile];
  if (tile + 1 < tiles) load_block(s, row, ok, (tiles - 1) * kTile, cur);
  for (std::int64_t jt = tiles - 1; jt > tile; --jt) {
    if (jt - 1 > tile) load_block(s, row, ok, (jt - 1) * kTile, nxt);
    const int* flag = s.flags + 1 + jt;
    wait_published(flag);
    const std::int64_t xr = jt * kTile + lane;
    T xv[K];
#pragma unroll
    for (int q = 0; q < K; ++q) xv[q] = (xr < s.n && q < s.k) ? __ldcg(s.b + xr + q * s.ldb) : T(0);
    __syncwarp();  // the previous step's reads of sx are done
#pragma unroll
    for (int q = 0; q < K; ++q) sx[lane][q] = xv[q];
    __syncwarp();
#pragma unroll
    for (int q = 0; q < K; ++q) {
      T part[4] = {acc[q], T(0), T(0), T(0)};
#pragma unroll
      for (int c = 0; c < kTile; ++c) part[c % 4] = fma(-cur[c], sx[c][q], part[c % 4]);
      acc[q] = (part[0] + part[1]) + (part[2] + part[3]);
    }
#pragma unroll
    for (int c = 0; c < kTile; ++c) cur[c] = nxt[c];
  }

  // The diagonal block, bottom row first: lane c's x goes to the lanes above it.
#pragma unroll
  for (int c = kTile - 1; c >= 0; --c) {
#pragma unroll
    for (int q = 0; q < K; ++q) {
      const T xc = __shfl_sync(0xffffffffu, acc[q] * rinv, c);
      if (lane < c) acc[q] = fma(-diag[c], xc, acc[q]);
    }
  }
  if (ok) {
#pragma unroll
    for (int q = 0; q < K; ++q)
      if (q < s.k) s.b[row + q * s.ldb] = acc[q] * rinv;
  }
  release_fence();  // x_I reaches L2 before the flag does
  __syncwarp();
  if (lane == 0) atomicExch(s.flags + 1 + tile, 1);
}

}  // namespace

template <class T>
bool trsm_upper_few_rhs(detail::ContextImpl& ctx, Diag diag, MatrixView<const T> a,
                        MatrixView<T> b) {
  const std::int64_t n = b.rows(), k = b.cols();
  if (n == 0 || k == 0 || k > kFewRhs || n > kFewRhsMaxN) return false;
  DeviceGuard guard(ctx.device);
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  const std::size_t flag_bytes = static_cast<std::size_t>(tiles + 1) * sizeof(int);
  int* flags = static_cast<int*>(detail::cuda_workspace(ctx, flag_bytes));
  GPUQR_CUDA_CHECK(cudaMemsetAsync(flags, 0, flag_bytes, ctx.stream));
  const SolveArgs<T> s{a.data(), a.ld(), b.data(), b.ld(), n, static_cast<int>(k),
                       diag == Diag::unit, flags};
  if (k == 1)
    trsm_upper_kernel<T, 1><<<static_cast<unsigned>(tiles), kTile, 0, ctx.stream>>>(s);
  else
    trsm_upper_kernel<T, kFewRhs><<<static_cast<unsigned>(tiles), kTile, 0, ctx.stream>>>(s);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

template bool trsm_upper_few_rhs<float>(detail::ContextImpl&, Diag, MatrixView<const float>,
                                        MatrixView<float>);
template bool trsm_upper_few_rhs<double>(detail::ContextImpl&, Diag, MatrixView<const double>,
                                         MatrixView<double>);

}  // namespace gpuqr::kernels::cuda
