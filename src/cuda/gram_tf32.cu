// FP32 Gram matrices on the TF32 tensor cores with the 3xTF32 split (src/cuda/gram_kernels.hpp:
// streamed_gram_tf32): G = A^T A and G = (A X)^T (A X) for tall A (m x n, n <= 128), in the
// frame of the FP64 kernel of gram_kernels.cu (a persistent grid streams 32 KiB chunks of rows
// through a ring of shared-memory stages filled by cp.async; every warp keeps a 32 x 32
// super-tile of its block's partial G in registers; the partials are summed in a fixed order:
// bitwise reproducible). The plain FP32 FMA kernel there is compute-bound at n >= 64.
//
// The device pieces (split, mma, layouts, copies, the product) are in src/cuda/gram_tf32.cuh,
// shared with the streamed Q = A X of src/cuda/gram_product.cu.
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
#include "src/cuda/gram_tf32.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

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
