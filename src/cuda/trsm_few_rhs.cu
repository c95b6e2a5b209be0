// Back substitution R X = B for an upper triangular R and at most kFewRhs columns of B, in
// one launch. cuBLAS's trsm (and trsv) take ~0.22 ms for n = 3000 and one column, on a
// problem that reads 36 MB; its time is the chain of n dependent rows, not the bytes.
//
// Shape: rows are cut into tiles of 32; one warp owns a tile, lane i row i, the k sums
// s = b - R(i, i+1:) x in registers. Tiles are handed out by a ticket counter from the last
// tile up, so a warp only waits for warps that already run. Warp I subtracts R(I, J) x_J for
// every tile J > I in turn, as tile J publishes x_J, with R(I, J) loaded a step ahead (the
// diagonal block last, into the same registers); then it solves its 32 x 32 diagonal block
// (lane c divides, its x goes to the others by shuffles) and publishes x_I. The reciprocal of R(i, i) is formed once, off the chain;
// x_i = s_i * (1 / R(i, i)) differs from LAPACK's s_i / R(i, i) by at most one rounding.
//
// Publishing: x_I goes to B (the result) and to a scratch copy that the launch filled with a
// signaling NaN (kFill). No arithmetic result is a signaling NaN (an operation on one returns
// a quiet NaN), so a strong load that reads anything else has read the producer's x: the
// consumer polls x itself, with neither the producer's fence nor a flag's round trips (session
// 14: a flag, its acquire and then x took three L2 round trips a tile).
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

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
  int* ticket;  // the ticket counter, zero at launch
  T* xpub;      // x as published, n x k (leading dimension n), kFill until then
};

__device__ __forceinline__ bool is_fill(double x) {
  return __double_as_longlong(x) == static_cast<long long>(0x7FF000000000BAD1ULL);
}
__device__ __forceinline__ bool is_fill(float x) { return __float_as_uint(x) == 0x7F80BAD1u; }

/// The ticket to zero and the published x to kFill (bit patterns: no arithmetic on them).
template <class T>
__global__ void prepare_kernel(int* ticket, T* xpub, std::int64_t count) {
  using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
  const Bits fill = sizeof(T) == 8 ? static_cast<Bits>(0x7FF000000000BAD1ULL)
                                   : static_cast<Bits>(0x7F80BAD1u);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) *ticket = 0;
  for (; i < count; i += stride) reinterpret_cast<Bits*>(xpub)[i] = fill;
}

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
  if (lane == 0) ticket = atomicAdd(s.ticket, 1);
  const std::int64_t tiles = (s.n + kTile - 1) / kTile;
  const std::int64_t tile = tiles - 1 - __shfl_sync(0xffffffffu, ticket, 0);
  const std::int64_t i0 = tile * kTile, row = i0 + lane;
  const bool ok = row < s.n;

  T acc[K];
#pragma unroll
  for (int q = 0; q < K; ++q) acc[q] = (ok && q < s.k) ? s.b[row + q * s.ldb] : T(0);
  const T rinv = (!ok || s.unit) ? T(1) : T(1) / s.a[row + row * s.lda];

  // The tiles right of the diagonal block, last first (the order they are published in),
  // each loaded a step ahead; the diagonal block comes last, into the same registers (the
  // lane's row of it; entries left of the diagonal unused).
  T cur[kTile], nxt[kTile];
  load_block(s, row, ok, (tiles - 1) * kTile, cur);
  for (std::int64_t jt = tiles - 1; jt > tile; --jt) {
    load_block(s, row, ok, (jt - 1) * kTile, nxt);
    const std::int64_t xr = jt * kTile + lane;
    T xv[K];
    for (;;) {  // until every entry of x_J has come (see Publishing)
      bool ready = true;
#pragma unroll
      for (int q = 0; q < K; ++q) {
        const bool need = xr < s.n && q < s.k;
        xv[q] = need ? load_strong(s.xpub + xr + q * s.n) : T(0);
        ready &= !(need && is_fill(xv[q]));
      }
      if (__all_sync(0xffffffffu, ready)) break;
    }
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
      if (lane < c) acc[q] = fma(-cur[c], xc, acc[q]);
    }
  }
  if (ok) {
#pragma unroll
    for (int q = 0; q < K; ++q) {
      if (q < s.k) {
        const T x = acc[q] * rinv;
        store_strong(s.xpub + row + q * s.n, x);
        s.b[row + q * s.ldb] = x;
      }
    }
  }
}

}  // namespace

template <class T>
bool trsm_upper_few_rhs(detail::ContextImpl& ctx, Diag diag, MatrixView<const T> a,
                        MatrixView<T> b) {
  const std::int64_t n = b.rows(), k = b.cols();
  if (n == 0 || k == 0 || k > kFewRhs || n > kFewRhsMaxN) return false;
  DeviceGuard guard(ctx.device);
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  // The published x (n k entries), then the ticket.
  const std::size_t x_bytes = static_cast<std::size_t>(n * k) * sizeof(T);
  char* work = static_cast<char*>(detail::cuda_workspace(ctx, x_bytes + sizeof(int)));
  T* xpub = reinterpret_cast<T*>(work);
  int* ticket = reinterpret_cast<int*>(work + x_bytes);
  prepare_kernel<T><<<static_cast<unsigned>(std::min<std::int64_t>((n * k + 255) / 256, 1024)),
                      256, 0, ctx.stream>>>(ticket, xpub, n * k);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const SolveArgs<T> s{a.data(), a.ld(), b.data(), b.ld(), n, static_cast<int>(k),
                       diag == Diag::unit, ticket, xpub};
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
