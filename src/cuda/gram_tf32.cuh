// The FP32 pieces of the streamed kernels on the TF32 tensor cores (3xTF32): the Gram kernels
// of src/cuda/gram_tf32.cu (whose opening notes describe the split, the accumulation and the
// layouts) and the product Q = A X of src/cuda/gram_product.cu. Internal to src/cuda/; each
// including .cu gets its own copies (an unnamed namespace), as with gram_common.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuqr::kernels::cuda {
namespace {

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

/// The product item of warp `warp` (< S::kItems): a 32-column band of W and 32 rows from
/// `row`. Bands in the order last, ..., first half, then first, ..., second half (3 3 2 2 0 0 1
/// 1 at NP = 128): warps w and w + 4 share a scheduler and get bands adding up to the same cost
/// for a triangular X.
template <class S>
__device__ __forceinline__ void product_item(int warp, int& band, int& row) {
  constexpr int kHalf = (S::kBands + 1) / 2;
  const int slot = warp / S::kItemsPerBand;
  row = 32 * (warp % S::kItemsPerBand);
  band = slot < kHalf ? S::kBands - 1 - slot : slot - kHalf;
}

/// acc := the k block [k0, k0 + 16) of src X for the item (band, row), in a fresh accumulator
/// (a short truncating mma chain: 6 mma per element). acc[p][j] = W^T rows (g, g + 8) of tile
/// p x columns (2 t, 2 t + 1) of row tile j, that is W(row + 4 n + j, 32 band + 16 p + g (+ 8))
/// for n = 2 t, 2 t + 1: acc[p][0..3][2 half + n] are rows row + 8 t + 4 n .. + 3 of column
/// 32 band + 16 p + 8 half + g, one 16-byte unit.
template <class S, int NP>
__device__ __forceinline__ void product_block(const float* src, const float* xs, int k0,
                                              int band, int row, int lane,
                                              float (&acc)[2][4][4]) {
  const int g = lane >> 2, t = lane & 3;
  const float* xsmall = xs + NP * NP;
#pragma unroll
  for (int p = 0; p < 2; ++p)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[p][j][e] = 0.0f;
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
}

/// sw := src X for the chunk (W^T = X^T A^T by mma), one item (product_item) per warp. Each k
/// block of 16 goes through a fresh acc and is added into sw (FP32 adds; sw's units are this
/// lane's alone, so no barrier): a running total in registers here would spill next to the
/// Gram's.
template <class S, int NP>
__device__ __forceinline__ void product(const float* src, const float* xs, float* sw,
                                        const int* band_end, int warp, int lane) {
  if (warp >= S::kItems) return;
  const int g = lane >> 2, t = lane & 3;
  int band, row;
  product_item<S>(warp, band, row);
  const int kend = band_end[band];
  float acc[2][4][4];
  for (int k0 = 0; k0 < kend; k0 += 16) {
    product_block<S, NP>(src, xs, k0, band, row, lane, acc);
    store_w<S>(sw, acc, row, band, g, t, k0 > 0);
  }
  if (kend == 0) {  // a band of zero columns of X: zero columns of W
    const float zero[2][4][4] = {};
    store_w<S>(sw, zero, row, band, g, t, false);
  }
}

/// X (n x n, ld ldx, zero past n; Upper: zero below the diagonal too, X's strictly lower part
/// never read) split into big and small halves of xs, in the fragment order
/// of x_frag; band_end[b] := the end of the 16-row k blocks that hold band b's last nonzero row
/// of X (X's rows past it are zero in the band's 32 columns).
template <int NP, int Threads, bool Upper>
__device__ __forceinline__ void load_x(const float* __restrict__ x, std::int64_t ldx, int n,
                                       float* xs, int* band_end) {
  const int tid = threadIdx.x;
  if (tid < NP / 32) band_end[tid] = 0;
  for (int e = tid; e < NP * NP; e += Threads) {  // consecutive threads: one column of X
    const int k = e % NP, c = e / NP;
    const float v = k < n && c < n && (!Upper || k <= c) ? x[k + c * ldx] : 0.0f;
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
    for (int k = Upper ? tid : n - 1; k >= 0; --k)
      if (x[k + tid * ldx] != 0.0f) {
        last = k + 1;
        break;
      }
    atomicMax(&band_end[tid / 32], (last + 15) & ~15);
  }
  // The first barrier of the chunk loop orders these before the product reads them.
}

}  // namespace
}  // namespace gpuqr::kernels::cuda
