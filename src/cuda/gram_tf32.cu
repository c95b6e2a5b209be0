// FP32 Gram matrices on the TF32 tensor cores with the 3xTF32 split (src/cuda/gram_kernels.hpp:
// streamed_gram_tf32): G = A^T A and G = (A X)^T (A X) for tall A (m x n, n <= 128), in the
// frame of the FP64 kernel of gram_kernels.cu (a persistent grid streams 32 KiB chunks of rows
// through a ring of shared-memory stages filled by cp.async; every warp keeps a 32 x 32
// super-tile of its block's partial G in registers; the partials are summed in a fixed order:
// bitwise reproducible). The plain FP32 FMA kernel there is compute-bound at n >= 64.
//
// 3xTF32. TF32 keeps 11 significant bits. x = big + small with big = tf32(x) (round to nearest,
// ties away: cvt.rna.tf32.f32, done here as (bits + 0x1000) & ~0x1fff, the same result for
// finite x in 2 instructions where ptxas emits 4 for the cvt on sm_90) and small = tf32(x - big)
// (x - big is exact); |x - big - small| <= 2^-22 |x|. A product is taken as small_a big_b +
// big_a small_b + big_a big_b (three mma, the small terms first), dropping small_a small_b
// (<= 2^-22 |ab|): each product errs by at most ~3 * 2^-22 = 12 u (u = 2^-24) of |ab|, a
// constant, against the ~sqrt(m) u of an FP32 dot product of m terms. Plain TF32 errs by
// 2^-11 |ab| per product (tests/test_gram_tf32.cpp catches that).
//
// Accumulation. The tensor cores add in FP32 but truncate (round toward zero) each mma's sum,
// which over a long chain in one accumulator is a bias, not a random walk: thousands of mma per
// block would cost ~1e-4 relative on G's diagonal. So an mma chain is kept short: a fresh
// accumulator takes 16 rows of a chunk (2 k steps x 3 terms: 6 mma), then is added to the
// warp's running total with ordinary FP32 adds (round to nearest). The small terms go into the
// same short chain first (a separate accumulator would take 32 more registers for nothing:
// within 6 mma the order barely matters). The product W = A X likewise: 16 rows of X per
// fresh accumulator, added into W's chunk in shared memory with FP32 adds.
//
// Chunk layout in shared memory: column-major (column c at c * kRows), as in global memory, so
// that cp.async copies 16 bytes (4 rows of a column) straight in. The 16-byte units of column c
// are XOR-permuted by h(c) = (c & 2) ^ 5 (c & 1) within aligned groups of 8 units (128 bytes),
// which gives each of the four warp-wide access patterns the minimum of wavefronts (a quarter
// warp, 8 lanes, per 128 bytes): the Gram fragment loads (lanes g = 0, 1 of a quarter: columns
// c, c + 1 with c even, units U + t, U a multiple of 4: bit 2 of h differs), the product's A
// loads (columns k + t, t = 0..3, k a multiple of 4, units V + g, V even: bits 1 and 2 of h
// take all four values), the product's W stores (columns c, c + 1, units 2 t + e: bit 0 of h
// differs) and the copies (8 consecutive units of one column). Columns n .. NP-1 stay zero.
//
// mma.m16n8k8.tf32 (sm_80+), lane (g, t) = (lane / 4, lane % 4): A (16 x 8) elements (g, t),
// (g + 8, t), (g, t + 4), (g + 8, t + 4); B (8 x 8) elements (t, g), (t + 4, g); D (16 x 8)
// elements (g, 2 t), (g, 2 t + 1), (g + 8, 2 t), (g + 8, 2 t + 1).
//
// Gram: the k index is a row of the chunk. A lane loads rows r + 4 t .. r + 4 t + 3 of a
// column (one 16-byte load) for a k block of 16 rows: k step h takes rows r + 4 t + 2 h as slot
// t and r + 4 t + 2 h + 1 as slot t + 4. Column 8 c + g of a band serves as the A operand
// (rows of G) and as the B operand (columns of G), so one split fragment per 8-column block
// serves every tile of its block row and column. A warp's super-tile (bands bi <= bj) is 4 x 4
// tiles of 8 x 8 (m16n8: pairs of tiles), 32 floats of running total per lane; a diagonal one
// computes its 6 pairs on or above the diagonal. kGroups copies of the warps take disjoint
// rows of each chunk (n <= 64).
//
// Product: W^T = X^T A^T by mma (M = W's columns, N = the chunk's rows, K = A's columns). An
// item is a 32-column band of W times 32 rows (2 x 4 tiles); row tile j, N index n is chunk row
// r + 4 n + j, so that a lane's 16-byte load of A (rows r + 4 g .. r + 4 g + 3 of column k)
// feeds all four row tiles, and its accumulators (n = 2 t, 2 t + 1) store as two 16-byte units
// per W column. X is split once per block into shared memory, big and small each in mma
// fragment order (one 16-byte load per lane per 16 x 8 piece). The k range of a band stops at
// its last nonzero row of X (half the work for a triangular X). Eight items at every NP, dealt
// so that the four schedulers (warp % 4) get equal work for a triangular X.
//
// Expected on an H100 (a model, not a measurement; m = 2^20, n = 128, A 512 MiB): the Gram of
// a chunk of 8 rows is ~72 m16n8k8 pairs x 3 = 216 mma, 28 M mma a pass, ~0.12 ms at one mma
// per SM and cycle (the TF32 dense peak) against ~0.18 ms to read A; the product pass adds
// ~190 mma per 8 rows for a triangular X. The splits cost 5 instructions per fragment element
// (each element of a chunk is split by up to 4 warps at NP = 128), about as many issue slots
// as the mma take at peak; mma.sync runs below that peak, so the passes should sit near the
// read (~0.2 ms) at n <= 64 and within ~2x of it at n = 128 (the FMA kernel: ~1.4 ms a pass).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/cuda/check.hpp"
#include "src/cuda/gram_common.cuh"
#include "src/cuda/gram_kernels.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

template <int NP, bool Product>
struct Tf32Shape {
  static constexpr int kBands = NP / 32;                    // 32-column bands of G
  static constexpr int kSuper = kBands * (kBands + 1) / 2;  // super-tiles on/above the diagonal
  static constexpr int kGroups = NP == 32 ? 8 : (NP == 64 ? 4 : 1);
  static constexpr int kWarps = kSuper * kGroups;  // 8, 12, 10
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = 8192 / NP;             // 32 KiB a chunk: 256, 128, 64 rows
  static constexpr int kGroupRows = kRows / kGroups;  // 32, 32, 64
  static constexpr int kChunk = kRows * NP;           // floats
  // Three stages (two chunks in flight while one is computed on); two for the product at
  // NP = 128, where X's two halves take 128 KiB.
  static constexpr int kStages = Product && NP == 128 ? 2 : 3;
  static constexpr int kItemsPerBand = kRows / 32;
  static constexpr int kItems = kBands * kItemsPerBand;  // 8 at every NP
  // Two blocks of the small Gram-only kernel fit in shared memory (96 KiB each).
  static constexpr int kMinBlocks = NP == 32 && !Product ? 2 : 1;
  static constexpr std::size_t kSmemBytes =
      std::size_t(kStages * kChunk + (Product ? kChunk + 2 * NP * NP : 0)) * sizeof(float);
  static_assert(kGroupRows % 16 == 0 && kRows % 32 == 0, "chunk shape");
  static_assert(kItems <= kWarps, "one product item per warp at most");
};

/// big + small = x to 2^-22 |x|, both TF32 (low 13 bits zero), big rounded to nearest (ties
/// away from zero) as cvt.rna.tf32.f32 does for finite x.
struct Split {
  unsigned big[4], small[4];
};
__device__ __forceinline__ unsigned tf32_rna(float x) {
  return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
}
__device__ __forceinline__ void split4(const float4& v, Split& s) {
  const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    s.big[e] = tf32_rna(x[e]);
    s.small[e] = tf32_rna(x[e] - __uint_as_float(s.big[e]));
  }
}

/// D += A B, one m16n8k8 TF32 mma with FP32 accumulation: d0, d1 row g, d2, d3 row g + 8.
__device__ __forceinline__ void mma(float& d0, float& d1, float& d2, float& d3, unsigned a0,
                                    unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                    unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// Offset (floats) of rows r .. r + 3 (r a multiple of 4) of column c in a chunk of Rows rows.
template <int Rows>
__device__ __forceinline__ int chunk_at(int r, int c) {
  const int h = (c & 2) ^ ((c & 1) * 5);
  return c * Rows + (((r >> 2) ^ h) << 2);
}

__device__ __forceinline__ float4 lds4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src),
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
/// lda keep every column 16-byte aligned), else 4-byte ones.
template <int Rows, int Threads>
__device__ __forceinline__ void fetch(const float* __restrict__ a, std::int64_t lda,
                                      std::int64_t m, int n, std::int64_t row0, bool vec_ok,
                                      float* buf) {
  constexpr int kUnits = Rows / 4;
  if (vec_ok) {
    for (int v = threadIdx.x; v < n * kUnits; v += Threads) {
      const int c = v / kUnits, u = v % kUnits;
      const std::int64_t r = row0 + 4 * u;
      const int bytes = r + 4 <= m ? 16 : (r < m ? static_cast<int>(4 * (m - r)) : 0);
      cp_async16(buf + chunk_at<Rows>(4 * u, c), bytes > 0 ? a + c * lda + r : a, bytes);
    }
  } else {
    for (int v = threadIdx.x; v < n * Rows; v += Threads) {
      const int c = v / Rows, rr = v % Rows;
      const std::int64_t r = row0 + rr;
      cp_async4(buf + chunk_at<Rows>(rr & ~3, c) + (rr & 3), r < m ? a + c * lda + r : a,
                r < m ? 4 : 0);
    }
  }
}

/// total += rows [r0, r0 + kGroupRows) of the chunk: bands bi x bj of G (Diag: bi == bj, the
/// tile pairs on or above the diagonal only). total[c1][c2] is the tile (4 bi + c1, 4 bj + c2);
/// tiles 2 p and 2 p + 1 of band bi share an mma (rows 0-7 and 8-15). Each k block of 16 rows
/// goes through a fresh accumulator (a short truncating mma chain), then into the total.
template <class S, bool Diag>
__device__ __forceinline__ void gram_rows(const float* s, int r0, int bi, int bj, int lane,
                                          float (&total)[4][4][2]) {
  const int g = lane >> 2, t = lane & 3;
  // Not unrolled: loads of the next k block hoisted into this one spill at NP = 128 (ptxas's
  // cap there is 168 registers: 3 of the 10 warps share a quarter of the register file).
#pragma unroll 1
  for (int blk = 0; blk < S::kGroupRows / 16; ++blk) {
    const int r = r0 + 16 * blk + 4 * t;
    Split fi[4], fj[Diag ? 1 : 4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      split4(lds4(s + chunk_at<S::kRows>(r, 32 * bi + 8 * c + g)), fi[c]);
      if constexpr (!Diag) split4(lds4(s + chunk_at<S::kRows>(r, 32 * bj + 8 * c + g)), fj[c]);
    }
    float acc[4][4][2] = {};
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int c2 = Diag ? 2 * p : 0; c2 < 4; ++c2) {
          const Split& a0 = fi[2 * p];
          const Split& a1 = fi[2 * p + 1];
          const Split& b = Diag ? fi[c2] : fj[Diag ? 0 : c2];
          const int x = 2 * h, y = 2 * h + 1;  // slots t and t + 4
          float(&d0)[2] = acc[2 * p][c2];
          float(&d1)[2] = acc[2 * p + 1][c2];
          mma(d0[0], d0[1], d1[0], d1[1], a0.small[x], a1.small[x], a0.small[y], a1.small[y],
              b.big[x], b.big[y]);
          mma(d0[0], d0[1], d1[0], d1[1], a0.big[x], a1.big[x], a0.big[y], a1.big[y],
              b.small[x], b.small[y]);
          mma(d0[0], d0[1], d1[0], d1[1], a0.big[x], a1.big[x], a0.big[y], a1.big[y], b.big[x],
              b.big[y]);
        }
#pragma unroll
    for (int c1 = 0; c1 < 4; ++c1)
#pragma unroll
      for (int c2 = Diag ? (c1 & ~1) : 0; c2 < 4; ++c2)
#pragma unroll
        for (int i = 0; i < 2; ++i) total[c1][c2][i] += acc[c1][c2][i];
  }
}

/// Offset (floats) of the 4 fragment elements of lane `lane` for X's 16 x 8 piece (k step kb,
/// 16-column tile mt) in either half (big or small) of the split X.
template <int NP>
__device__ __forceinline__ int x_frag(int kb, int mt, int lane) {
  return ((kb * (NP / 16) + mt) * 32 + lane) * 4;
}

/// The product's acc (see product) into the item's units of sw, added to them if `add`.
template <class S>
__device__ __forceinline__ void store_w(float* sw, const float (&acc)[2][4][4], int row,
                                        int band, int g, int t, bool add) {
#pragma unroll
  for (int p = 0; p < 2; ++p)
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const int e = 2 * half + n;
        float* o = sw + chunk_at<S::kRows>(row + 8 * t + 4 * n, 32 * band + 16 * p + g + 8 * half);
        float4 v = make_float4(acc[p][0][e], acc[p][1][e], acc[p][2][e], acc[p][3][e]);
        if (add) {
          const float4 w = lds4(o);
          v = make_float4(w.x + v.x, w.y + v.y, w.z + v.z, w.w + v.w);
        }
        *reinterpret_cast<float4*>(o) = v;
      }
}

/// sw := src X for the chunk (W^T = X^T A^T by mma). Item: band of W's columns x 32 rows.
template <class S, int NP>
__device__ __forceinline__ void product(const float* src, const float* xs, float* sw,
                                        const int* band_end, int warp, int lane) {
  constexpr int kHalf = (S::kBands + 1) / 2;
  const int g = lane >> 2, t = lane & 3;
  if (warp >= S::kItems) return;
  // Bands in the order last, ..., first half, then first, ..., second half (3 3 2 2 0 0 1 1 at
  // NP = 128): warps w and w + 4 share a scheduler and get bands adding up to the same cost.
  const int slot = warp / S::kItemsPerBand, row = 32 * (warp % S::kItemsPerBand);
  const int band = slot < kHalf ? S::kBands - 1 - slot : slot - kHalf;
  const int kend = band_end[band];
  const float* xsmall = xs + NP * NP;
  // acc[p][j] = W^T rows (g, g + 8) of tile p x columns (2 t, 2 t + 1) of row tile j, that is
  // W(row + 4 n + j, 32 band + 16 p + g (+ 8)) for n = 2 t, 2 t + 1: rows row + 8 t + j and
  // row + 8 t + 4 + j, j = 0..3, two 16-byte units per column of sw. Each k block of 16 goes
  // through a fresh acc and is added into sw (FP32 adds; sw's units are this lane's alone, so
  // no barrier): a running total in registers here would spill next to the Gram's.
  for (int k0 = 0; k0 < kend; k0 += 16) {
    float acc[2][4][4] = {};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int kb = k0 / 8 + h;
      Split xv[2], av[2];  // X: [p] fragment elements; A: [slot t / t + 4] rows 4 g .. 4 g + 3
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        const int off = x_frag<NP>(kb, 2 * band + p, lane);
        const float4 xb = lds4(xs + off), xl = lds4(xsmall + off);
        xv[p].big[0] = __float_as_uint(xb.x), xv[p].big[1] = __float_as_uint(xb.y);
        xv[p].big[2] = __float_as_uint(xb.z), xv[p].big[3] = __float_as_uint(xb.w);
        xv[p].small[0] = __float_as_uint(xl.x), xv[p].small[1] = __float_as_uint(xl.y);
        xv[p].small[2] = __float_as_uint(xl.z), xv[p].small[3] = __float_as_uint(xl.w);
      }
#pragma unroll
      for (int e = 0; e < 2; ++e)
        split4(lds4(src + chunk_at<S::kRows>(row + 4 * g, 8 * kb + t + 4 * e)), av[e]);
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          float(&d)[4] = acc[p][j];
          const Split& x = xv[p];
          mma(d[0], d[1], d[2], d[3], x.small[0], x.small[1], x.small[2], x.small[3],
              av[0].big[j], av[1].big[j]);
          mma(d[0], d[1], d[2], d[3], x.big[0], x.big[1], x.big[2], x.big[3], av[0].small[j],
              av[1].small[j]);
          mma(d[0], d[1], d[2], d[3], x.big[0], x.big[1], x.big[2], x.big[3], av[0].big[j],
              av[1].big[j]);
        }
    }
    store_w<S>(sw, acc, row, band, g, t, k0 > 0);
  }
  if (kend == 0) {  // a band of zero columns of X: zero columns of W
    const float acc[2][4][4] = {};
    store_w<S>(sw, acc, row, band, g, t, false);
  }
}

/// X (n x n, ld ldx, zero past n) split into big and small halves of xs, in the fragment order
/// of x_frag; band_end[b] := the end of the 16-row k blocks that hold band b's last nonzero row
/// of X (X's rows past it are zero in the band's 32 columns).
template <int NP, int Threads>
__device__ __forceinline__ void load_x(const float* __restrict__ x, std::int64_t ldx, int n,
                                       float* xs, int* band_end) {
  const int tid = threadIdx.x;
  if (tid < NP / 32) band_end[tid] = 0;
  for (int e = tid; e < NP * NP; e += Threads) {  // consecutive threads: one column of X
    const int k = e % NP, c = e / NP;
    const float v = k < n && c < n ? x[k + c * ldx] : 0.0f;
    const int kk = k % 8, cc = c % 16;
    const int lane = (cc & 7) * 4 + (kk & 3), elem = 2 * (kk >> 2) + (cc >> 3);
    const int off = x_frag<NP>(k / 8, c / 16, lane) + elem;
    const unsigned big = tf32_rna(v);
    xs[off] = __uint_as_float(big);
    xs[NP * NP + off] = __uint_as_float(tf32_rna(v - __uint_as_float(big)));
  }
  __syncthreads();  // band_end is zero before the scan
  if (tid < n) {
    int last = 0;
    for (int k = n - 1; k >= 0; --k)
      if (x[k + tid * ldx] != 0.0f) {
        last = k + 1;
        break;
      }
    atomicMax(&band_end[tid / 32], (last + 15) & ~15);
  }
  // The first barrier of the chunk loop orders these before the product reads them.
}

/// One block's partial Gram matrix (NP x NP, column-major, upper triangle and the diagonal
/// tiles' lower parts) of the chunks blockIdx.x, blockIdx.x + gridDim.x, ... of A (or of A X).
template <int NP, bool Product>
__global__ void __launch_bounds__(Tf32Shape<NP, Product>::kThreads,
                                  Tf32Shape<NP, Product>::kMinBlocks)
    tf32_gram_kernel(const float* __restrict__ a, std::int64_t lda, std::int64_t m, int n,
                     bool vec_ok, const float* __restrict__ x, std::int64_t ldx,
                     float* __restrict__ parts, std::int64_t chunks) {
  using S = Tf32Shape<NP, Product>;
  extern __shared__ __align__(16) unsigned char smem[];
  float* stages = reinterpret_cast<float*>(smem);
  float* sw = stages + S::kStages * S::kChunk;  // Product only: W = A X of the chunk
  float* xs = sw + S::kChunk;                   // Product only: X split, 2 NP^2 floats
  __shared__ int band_end[S::kBands];           // Product only
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  // Columns n .. NP-1 of every stage stay zero: the copies never write there (no race with
  // them), and the first barrier of the loop orders these stores before any read.
  for (int e = tid; e < S::kStages * S::kChunk; e += S::kThreads)
    if ((e % S::kChunk) / S::kRows >= n) stages[e] = 0.0f;
  if constexpr (Product) load_x<NP, S::kThreads>(x, ldx, n, xs, band_end);

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
  float total[4][4][2] = {};
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
    const float* src = stages + slot * S::kChunk;
    if constexpr (Product) {
      product<S, NP>(src, xs, sw, band_end, warp, lane);
      __syncthreads();  // W's chunk is complete
      src = sw;
    }
    if (S::kBands == 1 || diag) {
      gram_rows<S, true>(src, group * S::kGroupRows, bi, bj, lane, total);
    } else {
      gram_rows<S, false>(src, group * S::kGroupRows, bi, bj, lane, total);
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
  // The groups' partial sums in a fixed order (a barrier between groups orders their global
  // writes within the block). total[c1][c2][i] = G(32 bi + 8 c1 + g, 32 bj + 8 c2 + 2 t + i).
  const int g = lane >> 2, t = lane & 3;
  float* out = parts + std::int64_t(blockIdx.x) * NP * NP;
  for (int gg = 0; gg < S::kGroups; ++gg) {
    if (group == gg)
#pragma unroll
      for (int c1 = 0; c1 < 4; ++c1)
#pragma unroll
        for (int c2 = 0; c2 < 4; ++c2)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            if (diag && c2 < c1) continue;
            float* o = out + (32 * bi + 8 * c1 + g) + (32 * bj + 8 * c2 + 2 * t + i) * NP;
            *o = gg == 0 ? total[c1][c2][i] : *o + total[c1][c2][i];
          }
    if (S::kGroups > 1) __syncthreads();
  }
}

template <int NP, bool Product>
void launch_tf32(detail::ContextImpl& ctx, MatrixView<const float> a, const float* x,
                 std::int64_t ldx, MatrixView<float> g) {
  using S = Tf32Shape<NP, Product>;
  constexpr auto kernel = tf32_gram_kernel<NP, Product>;
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(S::kSmemBytes)));
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid = std::min<std::int64_t>(
      chunks, resident_blocks<kernel>(S::kThreads, S::kSmemBytes, ctx.device));
  float* parts = static_cast<float*>(
      detail::cuda_workspace(ctx, std::size_t(grid) * NP * NP * sizeof(float)));
  // 16-byte copies need every column start 16-byte aligned (chunks start at rows % 4 == 0).
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 && a.ld() % 4 == 0;
  kernel<<<static_cast<unsigned>(grid), S::kThreads, S::kSmemBytes, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, x, ldx, parts, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const dim3 sum_grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(n));
  sum_block_grams_sliced_kernel<float><<<sum_grid, 256, 0, ctx.stream>>>(parts, grid, NP, n,
                                                                        g.data(), g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <bool Product>
void dispatch_tf32(detail::ContextImpl& ctx, MatrixView<const float> a, const float* x,
                   std::int64_t ldx, MatrixView<float> g) {
  const std::int64_t n = a.cols();
  if (n <= 32) {
    launch_tf32<32, Product>(ctx, a, x, ldx, g);
  } else if (n <= 64) {
    launch_tf32<64, Product>(ctx, a, x, ldx, g);
  } else {
    launch_tf32<128, Product>(ctx, a, x, ldx, g);
  }
}

std::atomic<int> tf32_override{-1};  // gram_tf32_mode(): -1 GPUQR_GRAM_TF32, 0 off, 1 on

}  // namespace

void gram_tf32_mode(int mode) { tf32_override.store(mode); }

bool gram_tf32_enabled() {
  const int mode = tf32_override.load();
  if (mode >= 0) return mode == 1;
  const char* v = std::getenv("GPUQR_GRAM_TF32");
  if (v == nullptr || *v == '\0') return true;
  const std::string s(v);
  GPUQR_CHECK_ARG(s == "0" || s == "1", "GPUQR_GRAM_TF32 is '" + s + "': 0 or 1");
  return s == "1";
}

bool gram_tf32_fits(std::int64_t n) {
  const std::size_t need = n <= 32   ? Tf32Shape<32, true>::kSmemBytes
                           : n <= 64 ? Tf32Shape<64, true>::kSmemBytes
                                     : Tf32Shape<128, true>::kSmemBytes;
  int device = 0, optin = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return need + 64 <= std::size_t(optin);  // + the kernel's static shared memory
}

void streamed_gram_tf32(detail::ContextImpl& ctx, MatrixView<const float> a, const float* x,
                        std::int64_t ldx, MatrixView<float> g) {
  GPUQR_CHECK_ARG(a.rows() >= 1 && a.cols() >= 1 && a.cols() <= kGramKernelMaxCols,
                  "streamed_gram_tf32: A is " + std::to_string(a.rows()) + " x " +
                      std::to_string(a.cols()) + ", needs m >= 1 and 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  if (x != nullptr) {
    dispatch_tf32<true>(ctx, a, x, ldx, g);
  } else {
    dispatch_tf32<false>(ctx, a, nullptr, 0, g);
  }
}

}  // namespace gpuqr::kernels::cuda
