// Streamed Gram kernels for tall A (m x n, n <= 128): G = A^T A and G = (A X)^T (A X), each
// reading A once at the memory bandwidth (src/cuda/gram_kernels.hpp).
//
// Why not cuBLAS: the GEMM n x n x m has (n / tile)^2 output tiles, far too few for the GPU,
// and its split-K (by hand, src/cuda/cholqr_kernels.cu) writes W = A X whole for the second
// Gram matrix. Here a persistent grid (as many blocks as fit on the device) streams chunks of
// rows into shared memory; every block keeps its partial Gram matrix in registers and writes
// it once at the end; a second kernel sums the partials in a fixed order (no atomics: bitwise
// reproducible). Two kernels share that frame:
//
// FP32 (`streamed_gram_kernel`, plain FMAs). Shared layout: a chunk is row-major (row r at
// r * NP) so that a thread reads four consecutive columns of a row with 16-byte loads; the
// column index is XOR-swizzled by the row (`at`) so that the transposing stores from the
// column-major global loads do not conflict (8 lanes cover 8 * kVec rows of one column, 4
// columns per warp: 2 wavefronts per store, the minimum for 256 bytes). The swizzle permutes
// aligned groups of 4 columns within a 128-byte line, so the 4-column reads stay contiguous.
// Work split: G's upper triangle is covered by warp tiles of 16 x 32 entries (lanes 4 x 8,
// each lane 4 x 4 entries in registers); kGroups copies of that set of warps take disjoint row
// ranges of each chunk (enough warps to hide latency when n is small). The next chunk is
// loaded into registers while the current one is computed on (one chunk in flight per block).
//
// FP64 (`dmma_gram_kernel`, the FP64 tensor cores through mma.sync .f64): plain FP64 FMAs run
// at half of Hopper's DMMA rate, and an FMA kernel here lost to cuBLAS's DGEMM at every n;
// see the notes in src/cuda/gram_dmma.cuh (its device pieces, shared with gram_product.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "src/cuda/check.hpp"
#include "src/cuda/gram_common.cuh"
#include "src/cuda/gram_dmma.cuh"
#include "src/cuda/gram_kernels.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

template <class T, int NP>
struct Shape {
  static constexpr int kVec = 16 / int(sizeof(T));  // elements per 16-byte load
  static constexpr int kChunkBytes = 32768;          // one chunk of A in shared memory
  static constexpr int kRows = kChunkBytes / (NP * int(sizeof(T)));
  static constexpr int kBands = NP / 32;  // 32-column bands of G
  static constexpr int kTiles = kBands * (kBands + 1);  // 16 x 32 warp tiles on/above the diagonal
  static constexpr int kGroups = NP == 32 ? 4 : (NP == 64 ? 2 : 1);
  static constexpr int kWarps = kTiles * kGroups;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kGroupRows = kRows / kGroups;
  static constexpr int kLoads = kRows * NP / kVec;  // 16-byte loads per chunk at n = NP
  static constexpr int kPerThread = (kLoads + kThreads - 1) / kThreads;
  static constexpr int kSlabs = kRows / (8 * kVec);  // 8 lanes x kVec rows per column
  // The product W = A X: lane tiles 2 x 4, warp tiles 8 x 32.
  static constexpr int kProductTiles = (kRows / 8) * kBands;
  static_assert(kRows % (8 * kVec) == 0 && kRows % (16 * kGroups) == 0, "chunk shape");
  static_assert(kThreads <= 1024, "block size");
};

/// Column swizzle of row r: XOR on bits 2.. of the column, within one 128-byte line.
template <class T>
__device__ __forceinline__ int swizzle(int r) {
  constexpr int kVec = 16 / int(sizeof(T));
  constexpr int kMask = 32 / int(sizeof(T)) - 1;
  return ((r / kVec) & kMask) << 2;
}
template <class T, int NP>
__device__ __forceinline__ int at(int r, int c) {
  return r * NP + (c ^ swizzle<T>(r));
}

/// Four consecutive floats (16-byte aligned) from shared memory.
__device__ __forceinline__ void load4(const float* p, float (&v)[4]) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
}
__device__ __forceinline__ void store4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void load_global(const float* p, float (&v)[4]) {
  const float4 x = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
}

/// Which rows and column of a chunk the s-th 16-byte load of this thread covers: lanes
/// 8 x 4 = 8 row pieces of kVec rows x 4 columns, so that 8 lanes read 128 contiguous bytes.
template <class T, int NP>
struct LoadSlot {
  int row, col;
  bool valid;
  __device__ LoadSlot(int v, int n) {
    using S = Shape<T, NP>;
    const int p = v & 7, q = (v >> 3) & 3, rest = v >> 5;
    row = (rest % S::kSlabs) * 8 * S::kVec + p * S::kVec;
    col = (rest / S::kSlabs) * 4 + q;
    valid = v < S::kLoads && col < n;
  }
};

/// Rows [row0, row0 + kRows) of A into registers (zeros past m).
template <class T, int NP>
__device__ __forceinline__ void fetch(const T* __restrict__ a, std::int64_t lda, std::int64_t m,
                                      int n, std::int64_t row0, bool vec_ok,
                                      T (&buf)[Shape<T, NP>::kPerThread][Shape<T, NP>::kVec]) {
  using S = Shape<T, NP>;
#pragma unroll
  for (int s = 0; s < S::kPerThread; ++s) {
    const LoadSlot<T, NP> slot(threadIdx.x + s * S::kThreads, n);
    const std::int64_t r = row0 + slot.row;
    if (!slot.valid) continue;
    const T* src = a + slot.col * lda + r;
    if (vec_ok && r + S::kVec <= m) {
      load_global(src, buf[s]);
    } else {
#pragma unroll
      for (int e = 0; e < S::kVec; ++e) buf[s][e] = r + e < m ? src[e] : T(0);
    }
  }
}

/// The registers of `fetch` into the swizzled row-major chunk (columns >= n stay zero).
template <class T, int NP>
__device__ __forceinline__ void stash(const T (&buf)[Shape<T, NP>::kPerThread][Shape<T, NP>::kVec],
                                      T* sa, int n) {
  using S = Shape<T, NP>;
#pragma unroll
  for (int s = 0; s < S::kPerThread; ++s) {
    const LoadSlot<T, NP> slot(threadIdx.x + s * S::kThreads, n);
    if (!slot.valid) continue;
#pragma unroll
    for (int e = 0; e < S::kVec; ++e) sa[at<T, NP>(slot.row + e, slot.col)] = buf[s][e];
  }
}

/// acc += rows [r0, r1) of the chunk: columns i0..i0+3 times columns j0..j0+3.
template <class T, int NP>
__device__ __forceinline__ void gram_rows(const T* s, int r0, int r1, int i0, int j0,
                                          T (&acc)[4][4]) {
#pragma unroll 4
  for (int r = r0; r < r1; ++r) {
    T x[4], y[4];
    load4(s + at<T, NP>(r, i0), x);
    load4(s + at<T, NP>(r, j0), y);
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) acc[a][b] = fma(x[a], y[b], acc[a][b]);
  }
}

/// sw := sa * xs (chunk times X, X row-major NP x NP in shared memory); in each 32-column
/// band the rows of X past band_end (all zero) are skipped.
template <class T, int NP>
__device__ __forceinline__ void product(const T* sa, const T* xs, T* sw, const int* band_end,
                                        int warp, int lane) {
  using S = Shape<T, NP>;
  constexpr int kRowTiles = S::kRows / 8;
  for (int t = warp; t < S::kProductTiles; t += S::kWarps) {
    const int r0 = (t % kRowTiles) * 8 + 2 * (lane >> 3);
    const int band = t / kRowTiles;
    const int c0 = band * 32 + 4 * (lane & 7);
    const int kend = band_end[band];
    T acc[2][4] = {};
    for (int k = 0; k < kend; k += 4) {
      T av[2][4];
      load4(sa + at<T, NP>(r0, k), av[0]);
      load4(sa + at<T, NP>(r0 + 1, k), av[1]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        T xv[4];
        load4(xs + (k + kk) * NP + c0, xv);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int c = 0; c < 4; ++c) acc[i][c] = fma(av[i][kk], xv[c], acc[i][c]);
      }
    }
    store4(sw + at<T, NP>(r0, c0), acc[0]);
    store4(sw + at<T, NP>(r0 + 1, c0), acc[1]);
  }
}

/// The 16 x 32 warp tile (bi, bj) of G numbered `tile`: bands bj = 0, 1, ... with 2 bj + 2
/// tiles each (rows 0 .. 32 bj + 31 of the band's 32 columns).
__device__ __forceinline__ void tile_coords(int tile, int& bi, int& bj) {
  bj = 0;
  while (tile >= 2 * bj + 2) {
    tile -= 2 * bj + 2;
    ++bj;
  }
  bi = tile;
}

/// One block's partial Gram matrix (NP x NP, column-major, upper triangle and the diagonal
/// tiles' lower parts) of the chunks blockIdx.x, blockIdx.x + gridDim.x, ... of A (or of A X).
template <class T, int NP, bool Product>
__global__ void __launch_bounds__(Shape<T, NP>::kThreads)
    streamed_gram_kernel(const T* __restrict__ a, std::int64_t lda, std::int64_t m, int n,
                         bool vec_ok, const T* __restrict__ x, std::int64_t ldx,
                         T* __restrict__ parts, std::int64_t chunks) {
  using S = Shape<T, NP>;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sa = reinterpret_cast<T*>(smem);
  T* sw = sa + S::kRows * NP;  // Product only: W = A X of the chunk
  T* xs = sw + S::kRows * NP;  // Product only: X, row-major, zero past n
  __shared__ int band_end[S::kBands];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int e = tid; e < (Product ? 2 : 1) * S::kRows * NP; e += S::kThreads) sa[e] = T(0);
  if constexpr (Product) {
    if (tid < S::kBands) band_end[tid] = 0;
    for (int e = tid; e < NP * NP; e += S::kThreads) {
      const int k = e / NP, c = e % NP;
      xs[e] = k < n && c < n ? x[k + c * ldx] : T(0);
    }
    __syncthreads();  // xs and band_end are complete before the scan
    if (tid < n) {
      int last = 0;
      for (int k = n - 1; k >= 0; --k)
        if (xs[k * NP + tid] != T(0)) {
          last = k + 1;
          break;
        }
      atomicMax(&band_end[tid / 32], (last + 3) & ~3);
    }
    // The first barrier of the chunk loop orders these before the product reads band_end.
  }
  const int group = warp / S::kTiles;
  int bi, bj;
  tile_coords(warp % S::kTiles, bi, bj);
  const int i0 = bi * 16 + 4 * (lane >> 3), j0 = bj * 32 + 4 * (lane & 7);
  T acc[4][4] = {};
  T buf[S::kPerThread][S::kVec];
  std::int64_t chunk = blockIdx.x;  // the grid is never larger than `chunks`
  fetch<T, NP>(a, lda, m, n, chunk * S::kRows, vec_ok, buf);
  for (; chunk < chunks; chunk += gridDim.x) {
    __syncthreads();  // every read of the previous chunk (sa, sw) is done
    stash<T, NP>(buf, sa, n);
    __syncthreads();  // the chunk is complete
    if (chunk + gridDim.x < chunks)  // in flight while this chunk is computed on
      fetch<T, NP>(a, lda, m, n, (chunk + gridDim.x) * S::kRows, vec_ok, buf);
    const T* src = sa;
    if constexpr (Product) {
      product<T, NP>(sa, xs, sw, band_end, warp, lane);
      __syncthreads();  // W's chunk is complete
      src = sw;
    }
    gram_rows<T, NP>(src, group * S::kGroupRows, (group + 1) * S::kGroupRows, i0, j0, acc);
  }
  // The groups' partial sums in a fixed order (a barrier between groups orders their global
  // writes within the block).
  T* out = parts + static_cast<std::int64_t>(blockIdx.x) * NP * NP;
  for (int g = 0; g < S::kGroups; ++g) {
    if (group == g)
#pragma unroll
      for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          T* o = out + (i0 + p) + (j0 + q) * NP;
          *o = g == 0 ? acc[p][q] : *o + acc[p][q];
        }
    __syncthreads();
  }
}

/// g(i, j) = g(j, i) := sum over blocks p, in order, of parts[p](min(i,j), max(i,j)).
template <class T>
__global__ void sum_block_grams_kernel(const T* parts, std::int64_t count, int np, int n, T* g,
                                       std::int64_t ldg) {
  const std::int64_t nn = std::int64_t(n) * n, stride = std::int64_t(np) * np;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < nn;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(idx % n), j = static_cast<int>(idx / n);
    const int lo = i < j ? i : j, hi = i < j ? j : i;
    const T* p = parts + lo + std::int64_t(hi) * np;
    T sum = T(0);
    for (std::int64_t b = 0; b < count; ++b) sum += p[b * stride];
    g[i + j * ldg] = sum;
  }
}

// ---- FP64 on the tensor cores (the device pieces and their notes: src/cuda/gram_dmma.cuh) ----

namespace dmma {

/// One block's partial Gram matrix (NP x NP, column-major, upper triangle and the diagonal
/// tiles' lower parts) of the chunks blockIdx.x, blockIdx.x + gridDim.x, ... of A (or of A X).
template <int NP, bool Product, Mma M>
__global__ void __launch_bounds__(Shape<NP, Product, M>::kThreads,
                                  Shape<NP, Product, M>::kMinBlocks)
    dmma_gram_kernel(const double* __restrict__ a, std::int64_t lda, std::int64_t m, int n,
                     bool vec_ok, const double* __restrict__ x, std::int64_t ldx,
                     double* __restrict__ parts, std::int64_t chunks) {
  using S = Shape<NP, Product, M>;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);
  double* sw = stages + S::kStages * S::kChunk;  // Product only: W = A X of the chunk
  double* xs = sw + S::kChunk;                   // Product only: X, zero past n
  __shared__ int band_end[S::kBands];            // Product only: X's rows past it are zero
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  // Columns n .. NP-1 of every stage stay zero: the copies never write there (no race with
  // them), and the first barrier of the loop orders these stores before any read.
  for (int e = tid; e < S::kStages * S::kChunk; e += S::kThreads)
    if ((e % S::kChunk) / S::kRows >= n) stages[e] = 0.0;
  // The first barrier of the chunk loop orders these before the product reads them.
  if constexpr (Product) load_x<NP, S::kThreads, false>(x, ldx, n, xs, band_end);

  // Prologue: the block's first kStages - 1 chunks in flight, one commit group each (empty
  // groups past the end keep the count that cp_async_wait relies on).
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok, stages + s * S::kChunk);
    cp_async_commit();
  }
  int bi, bj;
  super_tile<NP>(warp % S::kSuper, bi, bj);
  const int group = warp / S::kSuper;
  const bool diag = bi == bj;
  double acc[4][4][2] = {};
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    cp_async_wait<S::kStages - 2>();  // this thread's copies of `chunk` have landed
    // Everyone's copies of `chunk` have landed, and every read of the stage refilled next (the
    // previous chunk's, and in the product pass sw's previous W) is done.
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                   stages + refill * S::kChunk);
    cp_async_commit();
    const double* src = stages + slot * S::kChunk;
    if constexpr (Product) {
      product<S, NP, M>(src, xs, sw, band_end, warp, lane);
      __syncthreads();  // W's chunk is complete
      src = sw;
    }
    constexpr int kBlocks = S::kGroupRows / 8;
    if (diag) {
      gram_rows<S, M, kBlocks, true>(src, group * S::kGroupRows, bi, bj, lane, acc);
    } else {
      gram_rows<S, M, kBlocks, false>(src, group * S::kGroupRows, bi, bj, lane, acc);
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
  // The groups' partial sums in a fixed order (a barrier between groups orders their global
  // writes within the block). acc[c1][c2][i] = G(32 bi + 8 c1 + g, 32 bj + 8 c2 + 2 t + i).
  const int g = lane >> 2, t = lane & 3;
  double* out = parts + std::int64_t(blockIdx.x) * NP * NP;
  for (int gg = 0; gg < S::kGroups; ++gg) {
    if (group == gg)
#pragma unroll
      for (int c1 = 0; c1 < 4; ++c1)
#pragma unroll
        for (int c2 = 0; c2 < 4; ++c2)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            if (diag && c2 < c1) continue;
            double* o = out + (32 * bi + 8 * c1 + g) + (32 * bj + 8 * c2 + 2 * t + i) * NP;
            *o = gg == 0 ? acc[c1][c2][i] : *o + acc[c1][c2][i];
          }
    if (S::kGroups > 1) __syncthreads();
  }
}

/// The product pass for an upper triangular X (gram_of_upper_product), skewed: iteration i
/// forms W of chunk i (the product items, warps 0 .. 7) and takes the Gram matrix of chunk
/// i - 1's W (every warp's super-tile), with one barrier an iteration instead of two, so that
/// a warp with a short product item (or none: warps 8 and 9) goes on to its Gram work while
/// the long items run, and the DP tensor pipe of each scheduler is fed by all its warps
/// through the iteration (run 3 of session 35: the two-phase kernel keeps it ~53% busy). W
/// is double-buffered; X is stored by bands (80 KiB at NP = 128, xb_at) to make room; two
/// stages of A (one chunk in flight). Same partials, same sums per entry in the same order as
/// dmma_gram_kernel<NP, true, M>: bitwise the same results.
template <int NP, Mma M>
struct SkewShape : Shape<NP, true, M> {
  // Two stages of A, two W buffers, X by bands.
  static constexpr std::size_t kSkewSmemBytes =
      std::size_t(2 * Shape<NP, true, M>::kChunk + 2 * Shape<NP, true, M>::kChunk +
                  banded_x_size<NP>()) *
      sizeof(double);
};

template <int NP, Mma M>
__global__ void __launch_bounds__(SkewShape<NP, M>::kThreads, 1)
    dmma_gram_skew_kernel(const double* __restrict__ a, std::int64_t lda, std::int64_t m, int n,
                          bool vec_ok, const double* __restrict__ x, std::int64_t ldx,
                          double* __restrict__ parts, std::int64_t chunks) {
  using S = SkewShape<NP, M>;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);  // chunk i in stage i & 1
  double* sws = stages + 2 * S::kChunk;              // W of chunk i in sws + (i & 1) kChunk
  double* xs = sws + 2 * S::kChunk;                  // X by bands
  __shared__ int band_end[S::kBands];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int e = tid; e < 2 * S::kChunk; e += S::kThreads)
    if ((e % S::kChunk) / S::kRows >= n) stages[e] = 0.0;
  load_x_banded<NP, S::kThreads>(x, ldx, n, xs, band_end);
  if (blockIdx.x < chunks)
    fetch<S::kRows, S::kThreads>(a, lda, m, n, std::int64_t(blockIdx.x) * S::kRows, vec_ok, stages);
  cp_async_commit();
  int bi, bj;
  super_tile<NP>(warp % S::kSuper, bi, bj);
  const int group = warp / S::kSuper;
  const bool diag = bi == bj;
  double acc[4][4][2] = {};
  for (std::int64_t i = 0;; ++i) {
    const std::int64_t chunk = blockIdx.x + i * gridDim.x;
    // Chunk i and chunk i - 1 exist (the same for the whole block).
    const bool cur = chunk<chunks, prev = i> 0 && chunk - gridDim.x < chunks;
    if (!cur && !prev) break;
    cp_async_wait<0>();  // this thread's copies of chunk i have landed
    // Everyone's copies of chunk i have landed; iteration i - 1's reads of the stage refilled
    // next (its product) and of the W buffer written next (its Gram work, on chunk i - 2's W)
    // are done; chunk i - 1's W is complete.
    __syncthreads();
    const std::int64_t next = chunk + gridDim.x;
    if (next < chunks)
      fetch<S::kRows, S::kThreads>(a, lda, m, n, next * S::kRows, vec_ok,
                                   stages + ((i + 1) & 1) * S::kChunk);
    cp_async_commit();
    if (cur)
      product<S, NP, M, true>(stages + (i & 1) * S::kChunk, xs, sws + (i & 1) * S::kChunk, band_end,
                              warp, lane);
    if (prev) {
      const double* src = sws + ((i - 1) & 1) * S::kChunk;
      constexpr int kBlocks = S::kGroupRows / 8;
      // Not unrolled: the product's registers are live beside the accumulators here.
      if (diag) {
        gram_rows<S, M, kBlocks, true, 1>(src, group * S::kGroupRows, bi, bj, lane, acc);
      } else {
        gram_rows<S, M, kBlocks, false, 1>(src, group * S::kGroupRows, bi, bj, lane, acc);
      }
    }
  }
  const int g = lane >> 2, t = lane & 3;
  double* out = parts + std::int64_t(blockIdx.x) * NP * NP;
  for (int gg = 0; gg < S::kGroups; ++gg) {
    if (group == gg)
#pragma unroll
      for (int c1 = 0; c1 < 4; ++c1)
#pragma unroll
        for (int c2 = 0; c2 < 4; ++c2)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            if (diag && c2 < c1) continue;
            double* o = out + (32 * bi + 8 * c1 + g) + (32 * bj + 8 * c2 + 2 * t + i) * NP;
            *o = gg == 0 ? acc[c1][c2][i] : *o + acc[c1][c2][i];
          }
    if (S::kGroups > 1) __syncthreads();
  }
}

}  // namespace dmma

template <class T, int NP, bool Product>
void launch(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x, std::int64_t ldx,
            MatrixView<T> g) {
  using S = Shape<T, NP>;
  constexpr auto kernel = streamed_gram_kernel<T, NP, Product>;
  const std::size_t smem =
      std::size_t(Product ? 2 * S::kRows * NP + NP * NP : S::kRows * NP) * sizeof(T);
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid = std::min<std::int64_t>(
      chunks, resident_blocks<kernel>(S::kThreads, smem, ctx.device));
  T* parts = static_cast<T*>(
      detail::cuda_workspace(ctx, std::size_t(grid) * NP * NP * sizeof(T)));
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 &&
                      a.ld() % S::kVec == 0;
  kernel<<<static_cast<unsigned>(grid), S::kThreads, smem, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, x, ldx, parts, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const int threads = 256;
  const int blocks = static_cast<int>((std::int64_t(n) * n + threads - 1) / threads);
  sum_block_grams_kernel<T><<<blocks, threads, 0, ctx.stream>>>(parts, grid, NP, n, g.data(),
                                                                g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <int NP, bool Product, dmma::Mma M, bool Skew = false>
void launch_dmma(detail::ContextImpl& ctx, MatrixView<const double> a, const double* x,
                 std::int64_t ldx, MatrixView<double> g) {
  static_assert(!Skew || Product, "the skewed kernel is the product pass's");
  using S = dmma::Shape<NP, Product, M>;
  constexpr auto kernel = [] {
    if constexpr (Skew) {
      return dmma::dmma_gram_skew_kernel<NP, M>;
    } else {
      return dmma::dmma_gram_kernel<NP, Product, M>;
    }
  }();
  constexpr std::size_t kSmem = Skew ? dmma::SkewShape<NP, M>::kSkewSmemBytes : S::kSmemBytes;
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kSmem)));
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid =
      std::min<std::int64_t>(chunks, resident_blocks<kernel>(S::kThreads, kSmem, ctx.device));
  double* parts = static_cast<double*>(
      detail::cuda_workspace(ctx, std::size_t(grid) * NP * NP * sizeof(double)));
  // 16-byte copies need every column start 16-byte aligned (chunks start at even rows).
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 && a.ld() % 2 == 0;
  kernel<<<static_cast<unsigned>(grid), S::kThreads, kSmem, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, x, ldx, parts, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const dim3 sum_grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(n));
  sum_block_grams_sliced_kernel<double><<<sum_grid, 256, 0, ctx.stream>>>(parts, grid, NP, n,
                                                                          g.data(), g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

/// GPUQR_GRAM_DMMA: the FP64 kernels' mma shape, 884, 1684 or 1688; read on every call, so
/// that a benchmark can compare them in one run. Default: m16n8k4 at NP = 128, m16n8k8 below.
/// CholeskyQR2 on 1048576 x 128 (R alone / explicit Q, ms): H200 (session 16 run 1) 1684
/// 2.168 / 2.944, 1688 2.292 / 3.072, 884 2.827 / 3.616; H100 (session 7) R alone 1684
/// 2.154, 1688 2.307; at n = 64 the H100 had 1688 ahead (0.893 against 0.920).
dmma::Mma dmma_shape(int np) {
  const char* v = std::getenv("GPUQR_GRAM_DMMA");
  if (v == nullptr || *v == '\0') return np == 128 ? dmma::Mma::m16n8k4 : dmma::Mma::m16n8k8;
  const std::string s(v);
  for (dmma::Mma m : {dmma::Mma::m8n8k4, dmma::Mma::m16n8k4, dmma::Mma::m16n8k8})
    if (s == std::to_string(static_cast<int>(m))) return m;
  GPUQR_CHECK_ARG(false, "GPUQR_GRAM_DMMA is '" + s + "': 884, 1684 or 1688");
  return dmma::Mma::m16n8k8;
}

template <int NP, bool Product, bool Skew = false>
void launch_dmma(detail::ContextImpl& ctx, MatrixView<const double> a, const double* x,
                 std::int64_t ldx, MatrixView<double> g) {
  switch (dmma_shape(NP)) {
    case dmma::Mma::m8n8k4:
      return launch_dmma<NP, Product, dmma::Mma::m8n8k4, Skew>(ctx, a, x, ldx, g);
    case dmma::Mma::m16n8k4:
      return launch_dmma<NP, Product, dmma::Mma::m16n8k4, Skew>(ctx, a, x, ldx, g);
    case dmma::Mma::m16n8k8:
      return launch_dmma<NP, Product, dmma::Mma::m16n8k8, Skew>(ctx, a, x, ldx, g);
  }
}

/// GPUQR_GRAM_SKEW: 0 keeps the two-phase product pass for an upper triangular X at NP = 128
/// (A/B measurements); unset or 1: the skewed kernel. Read on every call.
bool skew_wanted() {
  const char* v = std::getenv("GPUQR_GRAM_SKEW");
  return v == nullptr || *v == '\0' || std::string(v) != "0";
}

template <class T, bool Product>
void dispatch(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x, std::int64_t ldx,
              MatrixView<T> g, bool x_upper) {
  const std::int64_t n = a.cols();
  if constexpr (std::is_same_v<T, double>) {
    if (n <= 32) {
      launch_dmma<32, Product>(ctx, a, x, ldx, g);
    } else if (n <= 64) {
      launch_dmma<64, Product>(ctx, a, x, ldx, g);
    } else if (Product && x_upper && skew_wanted()) {
      launch_dmma<128, true, true>(ctx, a, x, ldx, g);
    } else {
      launch_dmma<128, Product>(ctx, a, x, ldx, g);
    }
  } else {
    if (gram_tf32_enabled()) return streamed_gram_tf32(ctx, a, x, ldx, g);  // gram_tf32.cu
    if (n <= 32) {
      launch<T, 32, Product>(ctx, a, x, ldx, g);
    } else if (n <= 64) {
      launch<T, 64, Product>(ctx, a, x, ldx, g);
    } else {
      launch<T, 128, Product>(ctx, a, x, ldx, g);
    }
  }
}

/// Whether the current device lets the FP64 kernels for n columns opt in to their shared
/// memory (the product pass at n > 64 takes 224 KiB: Hopper's 227, not A100's 163).
bool dmma_fits(std::int64_t n) {
  const std::size_t need = n <= 32   ? dmma::Shape<32, true, dmma::Mma::m8n8k4>::kSmemBytes
                           : n <= 64 ? dmma::Shape<64, true, dmma::Mma::m8n8k4>::kSmemBytes
                                     : dmma::Shape<128, true, dmma::Mma::m8n8k4>::kSmemBytes;
  int device = 0, optin = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return need + 64 <= std::size_t(optin);  // + the kernel's static shared memory
}

}  // namespace

bool gram_kernel_wanted(std::int64_t m, std::int64_t n, int elem_bytes) {
  if (n < 1 || n > kGramKernelMaxCols || m < 1) return false;
  const char* v = std::getenv("GPUQR_GRAM_KERNEL");
  if (v != nullptr && std::string(v) == "0") return false;
  if (v != nullptr && std::string(v) == "1") return true;
  // Measured on an H100 (session 5, m = 2^20, CholeskyQR2 R-only with A borrowed, cuBLAS ->
  // the FP32 kernel): n = 16 / 32 / 64: 0.53 -> 0.43, 0.85 -> 0.55, 1.28 -> 1.15 ms, n = 128
  // 2.88 -> 3.17 ms. So FP32 with n <= 64 only. FP64 runs on the tensor cores (DMMA) as
  // cuBLAS's DGEMM does, but reads A once and skips G's lower triangle and X's zero rows, so it
  // is taken at every n <= 128 (expected from the model in the .cu, not yet measured; the FMA
  // kernel it replaced lost at every n: n = 64 1.10 -> 2.54 ms).
  // The leaves call this with their context's device current (DeviceGuard).
  if (elem_bytes == 8) return m >= 65536 && dmma_fits(n);
  // FP32 on the TF32 tensor cores (3xTF32, gram_tf32.cu): at every n <= 128, as FP64's DMMA
  // kernel (expected from its model, to be measured); the FMA kernel only where it won.
  if (gram_tf32_enabled()) return m >= 65536 && gram_tf32_fits(n);
  return n <= 64 && m >= 65536;
}

template <class T>
void streamed_gram(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x, std::int64_t ldx,
                   MatrixView<T> g, bool x_upper) {
  GPUQR_CHECK_ARG(a.rows() >= 1 && a.cols() >= 1 && a.cols() <= kGramKernelMaxCols,
                  "streamed_gram: A is " + std::to_string(a.rows()) + " x " +
                      std::to_string(a.cols()) + ", needs m >= 1 and 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  if (x != nullptr) {
    dispatch<T, true>(ctx, a, x, ldx, g, x_upper);
  } else {
    dispatch<T, false>(ctx, a, nullptr, 0, g, false);
  }
}

template void streamed_gram<float>(detail::ContextImpl&, MatrixView<const float>, const float*,
                                   std::int64_t, MatrixView<float>, bool);
template void streamed_gram<double>(detail::ContextImpl&, MatrixView<const double>, const double*,
                                    std::int64_t, MatrixView<double>, bool);

}  // namespace gpuqr::kernels::cuda
