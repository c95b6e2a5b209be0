// The TF32 Gram matrix of a tall FP64 A (m x n, n <= 128) in one streamed read of A: the CUDA
// leaf `gram_low` (src/cuda/cholqr_kernels.cu) where it applies, CholeskyQR2's first-step
// preconditioner for the FP64 panels of geqrf's form by CholeskyQR panels (src/core/tsqr.cpp).
//
// Why: gram_low's general path (triangle_gemm.cu, gram_low_tf32) converts A to FP32 in the
// split workspace chunk by chunk and hands the copy to cuBLAS's TF32 GEMMs: per entry it reads
// 8 bytes, writes 4 and reads those 4 again, 16 bytes of traffic where the input is 8. At
// 2^22 x 128 that is 8.6 GB a panel, eight panels a call of geqrf's form at n = 1024, on an
// H200 that runs that call at its power cap (docs/PERF.md, session 26). Here A is read once.
//
// The frame is the FP64 Gram kernel's (gram_kernels.cu, gram_dmma.cuh): a persistent grid
// streams 32-row chunks of A (32 KiB of doubles, all 128 padded columns) through a ring of
// three shared-memory stages filled by cp.async (two chunks in flight), columns n .. 127 zero.
// Each chunk is then rounded once, FP64 -> FP32 (to nearest) -> TF32 (to nearest, ties away:
// cvt.rna's rule, as the CPU twin rounds), into a float buffer, and the ten warps take G's
// upper triangle in 32 x 32 super-tiles (super_tile), each with m16n8k8 TF32 mma and FP32
// accumulators in registers over the block's chunks. The per-block partials (widened to FP64)
// are summed in a fixed order by sum_block_grams_sliced_kernel: bitwise reproducible run to
// run on one device. The sums are FP32 over each block's rows (m / grid of them), as cuBLAS's
// TF32 GEMM's are over its split: errors of TF32's order (2^-11 per input) plus FP32 sums.
//
// Float buffer layout (fs): column c of the chunk at c * 32; its 8-row groups (32 bytes)
// permuted by XOR with c & 3 (low_at). A lane (g, t) of an mma reads two consecutive rows
// 2 t, 2 t + 1 of an 8-row block (its k slots t and t + 4: which row a k slot stands for is
// ours to choose, as long as both operands agree) for column 8 c + g: 8 bytes. Lanes g and
// g + 4 meet in the same banks, others not: 2 wavefronts for a warp's 256 bytes, the minimum.
// The conversion writes 8 bytes per thread, 16 threads over one column's 128 bytes: 2
// wavefronts a warp.
//
// Expected on an H100 / H200 (a model, not a measurement; m = 2^22, n = 128): A read once is
// 4.3 GB, ~1.1 ms at ~4 TB/s, against ~2.2 ms for the conversion path's 8.6 GB. Per SM and
// chunk (~1700 cycles of the read at that rate): 4096 conversions (~256 cycles at 16 FP64
// conversions a cycle), 288 mma of m16n8k8 TF32, ~900 wavefronts of shared memory; two blocks
// an SM (112 KiB each) overlap one's arithmetic with the other's waits.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/cuda/check.hpp"
#include "src/cuda/gram_common.cuh"
#include "src/cuda/gram_dmma.cuh"
#include "src/cuda/gram_kernels.hpp"
#include "src/cuda/gram_tf32.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

struct LowShape {
  static constexpr int kNP = 128;    // padded columns
  static constexpr int kWarps = 10;  // super-tiles of G's upper triangle
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = 32;            // 32 KiB of doubles a chunk
  static constexpr int kChunk = kRows * kNP;  // doubles (and floats in fs)
  static constexpr int kStages = 3;
  static constexpr int kMinBlocks = 2;
  static constexpr std::size_t kSmemBytes =
      std::size_t(kStages * kChunk) * sizeof(double) + std::size_t(kChunk) * sizeof(float);
};

/// Offset (floats) of row r of column c in the float buffer (layout above).
__device__ __forceinline__ int low_at(int r, int c) {
  return c * LowShape::kRows + (r & 7) + ((((r >> 3) ^ c) & 3) << 3);
}

/// acc += the chunk's rows (fs): bands bi x bj of G (Diag: bi == bj; its tiles below the
/// diagonal are computed with their pair and not written out). acc[c1][c2][i] = G(32 bi + 8
/// c1 + g, 32 bj + 8 c2 + 2 t + i).
template <bool Diag>
__device__ __forceinline__ void low_gram_rows(const float* fs, int bi, int bj, int lane,
                                              float (&acc)[4][4][2]) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int blk = 0; blk < LowShape::kRows / 8; ++blk) {
    const int r = 8 * blk + 2 * t;
    unsigned fi[4][2], fj[4][2];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const uint2 v = *reinterpret_cast<const uint2*>(fs + low_at(r, 32 * bi + 8 * c + g));
      fi[c][0] = v.x;
      fi[c][1] = v.y;
      if constexpr (!Diag) {
        const uint2 w = *reinterpret_cast<const uint2*>(fs + low_at(r, 32 * bj + 8 * c + g));
        fj[c][0] = w.x;
        fj[c][1] = w.y;
      }
    }
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int c2 = Diag ? 2 * p : 0; c2 < 4; ++c2) {
        const unsigned* b = Diag ? fi[c2] : fj[c2];
        mma(acc[2 * p][c2][0], acc[2 * p][c2][1], acc[2 * p + 1][c2][0], acc[2 * p + 1][c2][1],
            fi[2 * p][0], fi[2 * p + 1][0], fi[2 * p][1], fi[2 * p + 1][1], b[0], b[1]);
      }
  }
}

/// One block's partial TF32 Gram matrix (128 x 128, column-major, FP64; upper triangle and
/// the diagonal tiles' lower parts) of the chunks blockIdx.x, blockIdx.x + gridDim.x, ... of A.
__global__ void __launch_bounds__(LowShape::kThreads, LowShape::kMinBlocks)
    tf32_gram_of_fp64_kernel(const double* __restrict__ a, std::int64_t lda, std::int64_t m, int n,
                             bool vec_ok, double* __restrict__ parts, std::int64_t chunks) {
  using S = LowShape;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);
  float* fs = reinterpret_cast<float*>(stages + S::kStages * S::kChunk);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  // Columns n .. 127 of every stage stay zero (the copies never write there); the first
  // barrier of the chunk loop orders these stores before any read.
  for (int e = tid; e < S::kStages * S::kChunk; e += S::kThreads)
    if ((e % S::kChunk) / S::kRows >= n) stages[e] = 0.0;
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      dmma::fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok,
                                         stages + s * S::kChunk);
    dmma::cp_async_commit();
  }
  int bi, bj;
  super_tile<S::kNP>(warp, bi, bj);
  const bool diag = bi == bj;
  float acc[4][4][2] = {};
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    dmma::cp_async_wait<S::kStages - 2>();  // this thread's copies of `chunk` have landed
    // Everyone's copies of `chunk` have landed; every read of fs (the previous chunk's mma)
    // and of the stage refilled next (its conversion) is done.
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      dmma::fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                         stages + refill * S::kChunk);
    dmma::cp_async_commit();
    // The chunk rounded to TF32 into fs, two rows of a column per thread and step.
    const double* src = stages + slot * S::kChunk;
    for (int e = tid; e < S::kChunk / 2; e += S::kThreads) {
      const int c = e / (S::kRows / 2), r = 2 * (e % (S::kRows / 2));
      double v[2];
      dmma::lds2(src + dmma::chunk_at<S::kRows>(r, c), v);
      *reinterpret_cast<uint2*>(fs + low_at(r, c)) =
          make_uint2(tf32_rna(__double2float_rn(v[0])), tf32_rna(__double2float_rn(v[1])));
    }
    __syncthreads();  // fs holds the chunk
    if (diag) {
      low_gram_rows<true>(fs, bi, bj, lane, acc);
    } else {
      low_gram_rows<false>(fs, bi, bj, lane, acc);
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
  const int g = lane >> 2, t = lane & 3;
  double* out = parts + std::int64_t(blockIdx.x) * S::kNP * S::kNP;
#pragma unroll
  for (int c1 = 0; c1 < 4; ++c1)
#pragma unroll
    for (int c2 = 0; c2 < 4; ++c2)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (diag && c2 < c1) continue;
        out[(32 * bi + 8 * c1 + g) + std::int64_t(32 * bj + 8 * c2 + 2 * t + i) * S::kNP] =
            double(acc[c1][c2][i]);
      }
}

/// Whether the current device lets the kernel opt in to its shared memory (112 KiB).
bool low_kernel_fits() {
  int device = 0, optin = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return LowShape::kSmemBytes + 64 <= std::size_t(optin);
}

}  // namespace

bool streamed_gram_low_wanted(std::int64_t m, std::int64_t n) {
  if (m < 1 || n < 1 || n > kGramKernelMaxCols) return false;
  const char* v = std::getenv("GPUQR_GRAM_LOW_STREAMED");
  if (v != nullptr && *v != '\0') {
    const std::string s(v);
    GPUQR_CHECK_ARG(s == "0" || s == "1", "GPUQR_GRAM_LOW_STREAMED is '" + s + "': 0 or 1");
    if (s == "0") return false;
    return low_kernel_fits();  // forced: any m >= 1 (tests)
  }
  // The streamed Gram kernels' threshold (gram_kernel_wanted): below it the whole A fits in
  // L2 and the conversion path's extra traffic costs little.
  return m >= 65536 && low_kernel_fits();
}

void streamed_gram_low(detail::ContextImpl& ctx, MatrixView<const double> a, MatrixView<double> g) {
  using S = LowShape;
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  GPUQR_CHECK_ARG(m >= 1 && n >= 1 && n <= kGramKernelMaxCols,
                  "streamed_gram_low: A is " + std::to_string(m) + " x " + std::to_string(n) +
                      ", needs m >= 1 and 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  constexpr auto kernel = tf32_gram_of_fp64_kernel;
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(S::kSmemBytes)));
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid = std::min<std::int64_t>(
      chunks, resident_blocks<kernel>(S::kThreads, S::kSmemBytes, ctx.device));
  double* parts = static_cast<double*>(
      detail::cuda_workspace(ctx, std::size_t(grid) * S::kNP * S::kNP * sizeof(double)));
  // 16-byte copies need every column start 16-byte aligned (chunks start at even rows).
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 && a.ld() % 2 == 0;
  kernel<<<static_cast<unsigned>(grid), S::kThreads, S::kSmemBytes, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, parts, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  const dim3 sum_grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(n));
  sum_block_grams_sliced_kernel<double>
      <<<sum_grid, 256, 0, ctx.stream>>>(parts, grid, S::kNP, n, g.data(), g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

}  // namespace gpuqr::kernels::cuda
