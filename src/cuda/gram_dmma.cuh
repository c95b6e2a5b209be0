// The FP64 tensor-core pieces (mma.sync .f64) of the streamed kernels: the Gram kernels of
// src/cuda/gram_kernels.cu and the product Q = A X of src/cuda/gram_product.cu. Internal to
// src/cuda/; each including .cu gets its own copies (an unnamed namespace), as with
// gram_common.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuqr::kernels::cuda {
namespace {

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

/// Doubles of X (NP x NP, upper triangular) stored by bands (the skewed product-Gram kernel):
/// band b (columns 32 b .. 32 b + 31) keeps rows 0 .. 32 b + 31 only, the rows an upper
/// triangle has there: 1024 (1 + 2 + ... + NP / 32) doubles, 80 KiB at NP = 128 against 128.
template <int NP>
constexpr int banded_x_size() {
  return 1024 * (NP / 32) * (NP / 32 + 1) / 2;
}
/// Offset of X(k, c), k even and < 32 (c / 32 + 1), and X(k + 1, c) in the banded X: the
/// columns of a band at a stride of its row count (a multiple of 256 bytes, so the 16-byte
/// units' XOR with 4 (c & 1) keeps x_at's bank pattern).
template <int NP>
__device__ __forceinline__ int xb_at(int k, int c) {
  const int b = c >> 5;
  return 512 * b * (b + 1) + (c & 31) * (32 * (b + 1)) + (((k >> 1) ^ ((c & 1) << 2)) << 1);
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
template <class S, Mma M, int Blocks, bool Diag, int Unroll = Blocks>
__device__ __forceinline__ void gram_rows(const double* s, int r0, int bi, int bj, int lane,
                                          double (&acc)[4][4][2]) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll Unroll
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

/// The product item of warp `warp` (< S::kItems): a 32-column band of W and 16 rows from
/// `row`. Bands in the order last, ..., first half, then first, ..., second half (3 3 2 2 0 0 1
/// 1 at NP = 128): warps w and w + 4 share a scheduler and get bands adding up to the same cost
/// for a triangular X.
template <class S>
__device__ __forceinline__ void product_item(int warp, int& band, int& row) {
  constexpr int kHalf = (S::kBands + 1) / 2;
  const int slot = warp / S::kPairs;
  row = 16 * (warp % S::kPairs);
  band = slot < kHalf ? S::kBands - 1 - slot : slot - kHalf;
}

/// acc := rows row .. row + 15 of src X in band `band`, X's rows [0, kend) (W^T = X^T A^T by
/// mma: M = W's columns, N = the chunk's rows, K = A's columns). acc[c][j][i] = W^T(8 c + g,
/// column 2 t + i of row tile j) = W(row + 4 t + 2 i + j, 32 band + 8 c + g): a lane holds rows
/// row + 4 t .. row + 4 t + 3 of one column per c.
template <class S, int NP, Mma M, bool Banded = false>
__device__ __forceinline__ void product_acc(const double* src, const double* xs, int kend, int band,
                                            int row, int lane, double (&acc)[4][2][2]) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int j = 0; j < 2; ++j) acc[c][j][0] = acc[c][j][1] = 0.0;
  // Slot e of lane (g, t) is k = k0 + 2 t + e: A element X(k, 32 band + 8 c + g), B element
  // of row tile j A(row + 2 g + j, k).
#pragma unroll 1
  for (int k0 = 0; k0 < kend; k0 += 8) {
    const int k = k0 + 2 * t;
    double xv[4][2], av[2][2];  // [column block or row tile][slot]
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int col = 32 * band + 8 * c + g;
      lds2(xs + (Banded ? xb_at<NP>(k, col) : x_at<NP>(k, col)), xv[c]);
    }
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
}

/// sw := src X for the chunk, one item (product_item) per warp.
template <class S, int NP, Mma M, bool Banded = false>
__device__ __forceinline__ void product(const double* src, const double* xs, double* sw,
                                        const int* band_end, int warp, int lane) {
  if (warp >= S::kItems) return;
  const int g = lane >> 2, t = lane & 3;
  int band, row;
  product_item<S>(warp, band, row);
  double acc[4][2][2];
  product_acc<S, NP, M, Banded>(src, xs, band_end[band], band, row, lane, acc);
  // Rows row + 4 t .. row + 4 t + 3 of one column: two 16-byte stores.
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int col = 32 * band + 8 * c + g;
    *reinterpret_cast<double2*>(sw + chunk_at<S::kRows>(row + 4 * t, col)) =
        make_double2(acc[c][0][0], acc[c][1][0]);
    *reinterpret_cast<double2*>(sw + chunk_at<S::kRows>(row + 4 * t + 2, col)) =
        make_double2(acc[c][0][1], acc[c][1][1]);
  }
}

/// X (n x n, ld ldx) into xs (NP x NP, zero past n; Upper: zero below the diagonal too, X's
/// strictly lower part never read), in x_at's layout; band_end[b] := the end of the 8-row k
/// blocks that hold band b's last nonzero row of xs. The caller's next barrier orders these
/// before any read.
template <int NP, int Threads, bool Upper>
__device__ __forceinline__ void load_x(const double* x, std::int64_t ldx, int n, double* xs,
                                       int* band_end) {
  const int tid = threadIdx.x;
  if (tid < NP / 32) band_end[tid] = 0;
  for (int e = tid; e < NP * NP; e += Threads) {
    const int c = e / NP, k = e % NP;
    const bool in = k < n && c < n && (!Upper || k <= c);
    xs[x_at<NP>(k & ~1, c) + (k & 1)] = in ? x[k + c * ldx] : 0.0;
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
}

/// X's upper triangle (n x n, ld ldx; its strictly lower part never read) into xs by bands
/// (xb_at; zero below the diagonal and past n within each band's rows), and band_end as
/// load_x's. The caller's next barrier orders these before any read.
template <int NP, int Threads>
__device__ __forceinline__ void load_x_banded(const double* x, std::int64_t ldx, int n, double* xs,
                                              int* band_end) {
  const int tid = threadIdx.x;
  if (tid < NP / 32) band_end[tid] = 0;
  for (int e = tid; e < NP * NP; e += Threads) {
    const int c = e / NP, k = e % NP;
    if (k >= 32 * ((c >> 5) + 1)) continue;  // not stored: below the band's rows
    const bool in = k < n && c < n && k <= c;
    xs[xb_at<NP>(k & ~1, c) + (k & 1)] = in ? x[k + c * ldx] : 0.0;
  }
  __syncthreads();  // xs and band_end are complete before the scan
  if (tid < n) {
    int last = 0;
    const int rows = 32 * ((tid >> 5) + 1);
    for (int k = (n < rows ? n : rows) - 1; k >= 0; --k)
      if (xs[xb_at<NP>(k & ~1, tid) + (k & 1)] != 0.0) {
        last = k + 1;
        break;
      }
    atomicMax(&band_end[tid / 32], (last + 7) & ~7);  // whole 8-row k blocks of the product
  }
}

}  // namespace dmma

}  // namespace
}  // namespace gpuqr::kernels::cuda
