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
// see the section below.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "src/cuda/check.hpp"
#include "src/cuda/gram_common.cuh"
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

// ---- FP64 on the tensor cores ---------------------------------------------------------------
//
// mma.m8n8k4.f64 (sm_80+): D (8 x 8) += A (8 x 4) B (4 x 8), one double of A and of B and two
// of D per lane; with g = lane / 4, t = lane % 4 the PTX ISA places A(g, t), B(t, g) and
// D(g, 2 t + i). Hopper adds m16n8k4, m16n8k8 and m16n8k16 (own SASS instructions: DMMA.16x8x4
// etc.), which are the same pieces put together: for k slot q (columns 4 q .. 4 q + 3) a lane
// holds A(g, 4 q + t), A(g + 8, 4 q + t), B(4 q + t, g), and D rows g and g + 8. So a kernel
// written in pairs of 8 x 8 tiles (rows 0-7 and 8-15 of an m16n8 mma) and k blocks of two
// slots runs on m8n8k4, m16n8k4 or m16n8k8 (`Mma`; GPUQR_GRAM_DMMA picks one, to be measured:
// m8n8k4 may issue at only A100's rate per SM, half of Hopper's FP64 tensor peak). m16n8k16
// would take k blocks of 16 rows, whose fragments next to the 64 accumulator registers spill
// (ptxas: up to 1 KiB at NP = 128).
//
// For a Gram tile G(I, J) (8 x 8, I and J blocks of 8 columns of A) the k index is a row of A:
// lane (g, t) gives A(row, 8 I + g) as its A element and A(row, 8 J + g) as its B element, the
// same load for both, so one fragment per 8-column block serves every tile of its block row
// and block column. Which row of the chunk a k slot stands for is ours to choose (the sum over
// k does not care) as long as both operands agree: slots 0 and 1 of lane t are rows 2 t and
// 2 t + 1 of an 8-row k block, so that one 16-byte load gives a lane both.
//
// Chunk layout in shared memory: column-major (column c at c * kRows), as in global memory,
// so that cp.async copies 16 bytes (two rows of a column) straight in, with no registers in
// between and kStages - 1 chunks in flight. The 16-byte units of column c are XOR-permuted by
// h(c) = (c & 6) ^ 5 (c & 1) within aligned groups of 8 units (128 bytes), which makes each of
// the three warp-wide access patterns take the minimum of 4 wavefronts (a quarter warp, 8
// lanes, per 128 bytes): the Gram fragment loads (lanes g = 0, 1 of a quarter: columns c, c+1,
// units 4q + t; bit 2 of h differs), the product's A loads (columns k + 2 t + s, units u + g:
// bits 1, 2 of h follow bits 1, 2 of c) and the product's W stores (columns c, c+1, units
// 2 t + i: bit 0 of h differs). Columns n .. NP-1 are zero (set once; never copied over).
//
// Work split: G's upper triangle is covered by 32 x 32 super-tiles (4 x 4 mma tiles, 32
// doubles of accumulators per lane), one per warp: a diagonal super-tile computes its 10
// tiles on or above the diagonal from 4 fragments (12 with the m16 shapes, which pair tiles),
// an off-diagonal one 16 tiles from 8. For n <= 64 kGroups copies of that set of warps take
// disjoint rows of each chunk.
//
// The product pass forms W = A X of the chunk in shared memory first (as W^T = X^T A^T, so
// that the accumulators land as 4 consecutive rows of a W column per lane, stored with two
// 16-byte stores), then takes W's Gram as above. A product item is a 32-column band of W times
// 16 rows (4 x 2 mma tiles), its k range cut at the band's last nonzero row of X (half the
// work for a triangular X); the items, at most one per warp, are dealt so that the four
// schedulers of an SM (warp % 4) get equal work for a triangular X. X sits in shared memory
// column-major, its 16-byte units XOR-permuted by 4 (c & 1).
//
// Expected on an H100 (a model, not a measurement; m = 2^20, n = 64, A 512 MiB): reading A
// takes ~0.17 ms at ~3 TB/s; the Gram computes 36 of G's 64 tiles, 2.4 GFLOP of mma (0.05 ms
// at the ~50 TFLOP/s DMMA peak), so that pass is bound by the read; the product pass adds
// W = A X for a triangular X, as much again, still under the read. Per SM and chunk of 64
// rows: 32 KiB read in ~2500 cycles against ~1200 (Gram) or ~2700 (both) cycles of mma at
// peak, with two chunks in flight. So ~0.2 and ~0.25 ms, against cuBLAS's whole-GEMM Gram
// (1.10 ms for CholeskyQR2's two passes and Cholesky steps). m8n8k4 at half rate would make
// the product pass compute-bound (hence the shape knob). At n = 128 both passes are bound by
// the mma (the product pass ~2x the read).

namespace dmma {

/// The mma shape the kernels are built on (the value is GPUQR_GRAM_DMMA's spelling).
enum class Mma { m8n8k4 = 884, m16n8k4 = 1684, m16n8k8 = 1688 };
/// k slots (of 4 rows) one mma of shape M takes: a k block's 2 in one or two mma.
constexpr int slots_per_mma(Mma m) { return m == Mma::m16n8k8 ? 2 : 1; }

template <int NP, bool Product, Mma M>
struct Shape {
  static constexpr int kBands = NP / 32;                  // 32-column bands of G
  static constexpr int kSuper = kBands * (kBands + 1) / 2;  // super-tiles on/above the diagonal
  static constexpr int kGroups = NP == 32 ? 8 : (NP == 64 ? 4 : 1);
  static constexpr int kWarps = kSuper * kGroups;        // 8, 12, 10
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = 32 * 128 / NP;            // 32 KiB a chunk: 128, 64, 32 rows
  static constexpr int kGroupRows = kRows / kGroups;     // 16, 16, 32
  static constexpr int kChunk = kRows * NP;              // doubles
  // Three stages (two chunks in flight while one is computed on: 64 KiB per block, enough for
  // the bandwidth); two for the product at NP = 128, where X alone takes 128 KiB.
  static constexpr int kStages = Product && NP == 128 ? 2 : 3;
  static constexpr int kPairs = kRows / 16;              // product items per band
  static constexpr int kItems = kBands * kPairs;         // 8 at every NP
  // Blocks per SM that the registers must allow: two of the small Gram-only kernel fit in
  // shared memory (96 KiB each); the others take one (registers or shared memory).
  static constexpr int kMinBlocks = NP == 32 && !Product ? 2 : 1;
  static constexpr std::size_t kSmemBytes =
      std::size_t(kStages * kChunk + (Product ? kChunk + NP * NP : 0)) * sizeof(double);
  static_assert(kGroupRows % 8 == 0 && kRows % 16 == 0, "chunk shape");
  static_assert(kItems <= kWarps, "one product item per warp at most");
  static_assert(kThreads >= NP, "the X scan takes a thread per column");
};

/// d0 += A0 B and (WantD1) d1 += A1 B over the k slots of one mma of shape M at a0, a1, b
/// (lane layout above); on devices before sm_90 the m8n8k4 pieces of it.
template <Mma M, bool WantD1>
__device__ __forceinline__ void mma(double (&d0)[2], double (&d1)[2], const double* a0,
                                    const double* a1, const double* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kSm90 = true;
#else
  constexpr bool kSm90 = false;
#endif
  if constexpr (kSm90 && M == Mma::m16n8k4) {
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
        : "d"(a0[0]), "d"(a1[0]), "d"(b[0]));
  } else if constexpr (kSm90 && M == Mma::m16n8k8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
        : "d"(a0[0]), "d"(a1[0]), "d"(a0[1]), "d"(a1[1]), "d"(b[0]), "d"(b[1]));
  } else {
#pragma unroll
    for (int q = 0; q < slots_per_mma(M); ++q) {
      asm volatile(
          "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
          : "+d"(d0[0]), "+d"(d0[1])
          : "d"(a0[q]), "d"(b[q]));
      if constexpr (WantD1)
        asm volatile(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
            : "+d"(d1[0]), "+d"(d1[1])
            : "d"(a1[q]), "d"(b[q]));
    }
  }
}

/// Offset (doubles) of row r (even) and r + 1 of column c in a chunk of Rows rows.
template <int Rows>
__device__ __forceinline__ int chunk_at(int r, int c) {
  const int h = (c & 6) ^ ((c & 1) * 5);
  return c * Rows + (((r >> 1) ^ h) << 1);
}
/// Offset of X(k, c), k even, and X(k + 1, c) in the NP x NP X.
template <int NP>
__device__ __forceinline__ int x_at(int k, int c) {
  return c * NP + (((k >> 1) ^ ((c & 1) << 2)) << 1);
}

/// Two doubles from shared memory (16-byte aligned) into v[0], v[1].
__device__ __forceinline__ void lds2(const double* p, double* v) {
  const double2 x = *reinterpret_cast<const double2*>(p);
  v[0] = x.x;
  v[1] = x.y;
}

__device__ __forceinline__ void cp_async16(double* dst, const double* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async8(double* dst, const double* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// Starts copying rows [row0, row0 + Rows) of A's first n columns into `buf` (rows past m
/// zero-filled by the copies themselves). 16-byte copies where A allows them (`vec_ok`: A and
/// lda keep every column 16-byte aligned), else 8-byte ones.
template <int Rows, int Threads>
__device__ __forceinline__ void fetch(const double* __restrict__ a, std::int64_t lda,
                                      std::int64_t m, int n, std::int64_t row0, bool vec_ok,
                                      double* buf) {
  constexpr int kUnits = Rows / 2;
  if (vec_ok) {
    for (int v = threadIdx.x; v < n * kUnits; v += Threads) {
      const int c = v / kUnits, u = v % kUnits;
      const std::int64_t r = row0 + 2 * u;
      const int bytes = r + 2 <= m ? 16 : (r < m ? 8 : 0);
      cp_async16(buf + chunk_at<Rows>(2 * u, c), bytes > 0 ? a + c * lda + r : a, bytes);
    }
  } else {
    for (int v = threadIdx.x; v < n * Rows; v += Threads) {
      const int c = v / Rows, rr = v % Rows;
      const std::int64_t r = row0 + rr;
      cp_async8(buf + chunk_at<Rows>(rr & ~1, c) + (rr & 1), r < m ? a + c * lda + r : a,
                r < m ? 8 : 0);
    }
  }
}

/// acc += rows [r0, r0 + 8 Blocks) of the chunk: bands bi x bj of G (Diag: bi == bj,
/// tiles on or above the diagonal only). acc[c1][c2] is the tile (4 bi + c1, 4 bj + c2); tiles
/// 2 p and 2 p + 1 of band bi share an mma (rows 0-7 and 8-15).
template <class S, Mma M, int Blocks, bool Diag>
__device__ __forceinline__ void gram_rows(const double* s, int r0, int bi, int bj, int lane,
                                          double (&acc)[4][4][2]) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int blk = 0; blk < Blocks; ++blk) {
    const int r = r0 + 8 * blk + 2 * t;
    double fi[4][2], fj[4][2];  // [column block][slot]
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      lds2(s + chunk_at<S::kRows>(r, 32 * bi + 8 * c + g), fi[c]);
      if constexpr (!Diag) lds2(s + chunk_at<S::kRows>(r, 32 * bj + 8 * c + g), fj[c]);
    }
#pragma unroll
    for (int q = 0; q < 2; q += slots_per_mma(M))
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int c2 = Diag ? 2 * p : 0; c2 < 4; ++c2) {
          // Diagonal: the pair's lower tile (2 p + 1, c2) is needed from c2 = 2 p + 1 on (the
          // m16 shapes compute it anyway; it is not written out).
          constexpr bool kAll = !Diag;
          const double* b = Diag ? &fi[c2][q] : &fj[c2][q];
          if (kAll || c2 > 2 * p)
            mma<M, true>(acc[2 * p][c2], acc[2 * p + 1][c2], &fi[2 * p][q], &fi[2 * p + 1][q], b);
          else
            mma<M, false>(acc[2 * p][c2], acc[2 * p + 1][c2], &fi[2 * p][q], &fi[2 * p + 1][q], b);
        }
  }
}

/// sw := src X for the chunk (W^T = X^T A^T by mma: M = W's columns, N = the chunk's rows,
/// K = A's columns). Item: band b of W's columns, rows 16 p .. 16 p + 15.
template <class S, int NP, Mma M>
__device__ __forceinline__ void product(const double* src, const double* xs, double* sw,
                                        const int* band_end, int warp, int lane) {
  constexpr int kHalf = (S::kBands + 1) / 2;
  const int g = lane >> 2, t = lane & 3;
  if (warp >= S::kItems) return;
  // Bands in the order last, ..., first half, then first, ..., second half (3 3 2 2 0 0 1 1 at
  // NP = 128): warps w and w + 4 share a scheduler and get bands adding up to the same cost.
  const int slot = warp / S::kPairs, row = 16 * (warp % S::kPairs);
  const int band = slot < kHalf ? S::kBands - 1 - slot : slot - kHalf;
  const int kend = band_end[band];
  double acc[4][2][2] = {};  // [column block c][row tile j]: tile (band 4 + c, rows of j)
  // Slot e of lane (g, t) is k = k0 + 2 t + e: A element X(k, 32 band + 8 c + g), B element
  // of row tile j A(row + 2 g + j, k).
#pragma unroll 1
  for (int k0 = 0; k0 < kend; k0 += 8) {
    const int k = k0 + 2 * t;
    double xv[4][2], av[2][2];  // [column block or row tile][slot]
#pragma unroll
    for (int c = 0; c < 4; ++c) lds2(xs + x_at<NP>(k, 32 * band + 8 * c + g), xv[c]);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      double v[2];
      lds2(src + chunk_at<S::kRows>(row + 2 * g, k + e), v);
      av[0][e] = v[0];
      av[1][e] = v[1];
    }
#pragma unroll
    for (int q = 0; q < 2; q += slots_per_mma(M))
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int j = 0; j < 2; ++j)
          mma<M, true>(acc[2 * p][j], acc[2 * p + 1][j], &xv[2 * p][q], &xv[2 * p + 1][q],
                       &av[j][q]);
  }
  // acc[c][j][i] = W^T(8 c + g, column 2 t + i of tile j) = W(row + 4 t + 2 i + j, 32 band +
  // 8 c + g): rows row + 4 t .. row + 4 t + 3 of one column, two 16-byte stores.
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int col = 32 * band + 8 * c + g;
    *reinterpret_cast<double2*>(sw + chunk_at<S::kRows>(row + 4 * t, col)) =
        make_double2(acc[c][0][0], acc[c][1][0]);
    *reinterpret_cast<double2*>(sw + chunk_at<S::kRows>(row + 4 * t + 2, col)) =
        make_double2(acc[c][0][1], acc[c][1][1]);
  }
}

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
  if constexpr (Product) {
    if (tid < S::kBands) band_end[tid] = 0;
    for (int e = tid; e < NP * NP; e += S::kThreads) {
      const int c = e / NP, k = e % NP;
      xs[x_at<NP>(k & ~1, c) + (k & 1)] = k < n && c < n ? x[k + c * ldx] : 0.0;
    }
    __syncthreads();  // xs and band_end are complete before the scan
    if (tid < n) {
      int last = 0;
      for (int k = n - 1; k >= 0; --k)
        if (xs[x_at<NP>(k & ~1, tid) + (k & 1)] != 0.0) {
          last = k + 1;
          break;
        }
      atomicMax(&band_end[tid / 32], (last + 7) & ~7);  // whole 8-row k blocks of the product
    }
    // The first barrier of the chunk loop orders these before the product reads band_end.
  }

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

template <int NP, bool Product, dmma::Mma M>
void launch_dmma(detail::ContextImpl& ctx, MatrixView<const double> a, const double* x,
                 std::int64_t ldx, MatrixView<double> g) {
  using S = dmma::Shape<NP, Product, M>;
  constexpr auto kernel = dmma::dmma_gram_kernel<NP, Product, M>;
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(S::kSmemBytes)));
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid = std::min<std::int64_t>(
      chunks, resident_blocks<kernel>(S::kThreads, S::kSmemBytes, ctx.device));
  double* parts = static_cast<double*>(
      detail::cuda_workspace(ctx, std::size_t(grid) * NP * NP * sizeof(double)));
  // 16-byte copies need every column start 16-byte aligned (chunks start at even rows).
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 && a.ld() % 2 == 0;
  kernel<<<static_cast<unsigned>(grid), S::kThreads, S::kSmemBytes, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, x, ldx, parts, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const dim3 sum_grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(n));
  sum_block_grams_sliced_kernel<double><<<sum_grid, 256, 0, ctx.stream>>>(parts, grid, NP, n,
                                                                          g.data(), g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

/// GPUQR_GRAM_DMMA: the FP64 kernels' mma shape, 884, 1684 or 1688 (default); read on every
/// call, so that a benchmark can compare them in one run.
dmma::Mma dmma_shape() {
  const char* v = std::getenv("GPUQR_GRAM_DMMA");
  if (v == nullptr || *v == '\0') return dmma::Mma::m16n8k8;
  const std::string s(v);
  for (dmma::Mma m : {dmma::Mma::m8n8k4, dmma::Mma::m16n8k4, dmma::Mma::m16n8k8})
    if (s == std::to_string(static_cast<int>(m))) return m;
  GPUQR_CHECK_ARG(false, "GPUQR_GRAM_DMMA is '" + s + "': 884, 1684 or 1688");
  return dmma::Mma::m16n8k8;
}

template <int NP, bool Product>
void launch_dmma(detail::ContextImpl& ctx, MatrixView<const double> a, const double* x,
                 std::int64_t ldx, MatrixView<double> g) {
  switch (dmma_shape()) {
    case dmma::Mma::m8n8k4:
      return launch_dmma<NP, Product, dmma::Mma::m8n8k4>(ctx, a, x, ldx, g);
    case dmma::Mma::m16n8k4:
      return launch_dmma<NP, Product, dmma::Mma::m16n8k4>(ctx, a, x, ldx, g);
    case dmma::Mma::m16n8k8:
      return launch_dmma<NP, Product, dmma::Mma::m16n8k8>(ctx, a, x, ldx, g);
  }
}

template <class T, bool Product>
void dispatch(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x, std::int64_t ldx,
              MatrixView<T> g) {
  const std::int64_t n = a.cols();
  if constexpr (std::is_same_v<T, double>) {
    if (n <= 32) {
      launch_dmma<32, Product>(ctx, a, x, ldx, g);
    } else if (n <= 64) {
      launch_dmma<64, Product>(ctx, a, x, ldx, g);
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
void streamed_gram(detail::ContextImpl& ctx, MatrixView<const T> a, const T* x,
                   std::int64_t ldx, MatrixView<T> g) {
  GPUQR_CHECK_ARG(a.rows() >= 1 && a.cols() >= 1 && a.cols() <= kGramKernelMaxCols,
                  "streamed_gram: A is " + std::to_string(a.rows()) + " x " +
                      std::to_string(a.cols()) + ", needs m >= 1 and 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  if (x != nullptr) {
    dispatch<T, true>(ctx, a, x, ldx, g);
  } else {
    dispatch<T, false>(ctx, a, nullptr, 0, g);
  }
}

template void streamed_gram<float>(detail::ContextImpl&, MatrixView<const float>, const float*,
                                   std::int64_t, MatrixView<float>);
template void streamed_gram<double>(detail::ContextImpl&, MatrixView<const double>,
                                    const double*, std::int64_t, MatrixView<double>);

}  // namespace gpuqr::kernels::cuda
