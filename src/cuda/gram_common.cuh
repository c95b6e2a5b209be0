// Pieces shared by the streamed Gram kernels of src/cuda/gram_kernels.cu (FP32 FMAs, FP64 on
// the DMMA tensor cores) and src/cuda/gram_tf32.cu (FP32 on the TF32 tensor cores): the warps'
// 32 x 32 super-tiles of G, the fixed-order sum of the per-block partial Gram matrices, and the
// persistent grid's size. Internal to src/cuda/; each including .cu gets its own copies (an
// unnamed namespace), so no kernel is registered twice under one name.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

/// Super-tile s of the warps (bands bi <= bj). At NP = 128 the diagonal ones (10 tiles against
/// 16; 12 with the m16 shapes) go to warps 0, 1, 4, 5, so that the schedulers (warp % 4) get
/// 36, 36, 32, 32 tiles.
template <int NP>
__device__ __forceinline__ void super_tile(int s, int& bi, int& bj) {
  if constexpr (NP == 32) {
    bi = bj = 0;
  } else if constexpr (NP == 64) {  // (0,0) (1,1) (0,1)
    bi = s == 1 ? 1 : 0;
    bj = s == 0 ? 0 : 1;
  } else {  // (0,0) (1,1) (0,1) (0,2) (2,2) (3,3) (1,2) (0,3) (1,3) (2,3), two bits each
    constexpr unsigned kI = 0u | 1u << 2 | 0u << 4 | 0u << 6 | 2u << 8 | 3u << 10 | 1u << 12 |
                            0u << 14 | 1u << 16 | 2u << 18;
    constexpr unsigned kJ = 0u | 1u << 2 | 1u << 4 | 2u << 6 | 2u << 8 | 3u << 10 | 2u << 12 |
                            3u << 14 | 3u << 16 | 3u << 18;
    bi = (kI >> (2 * s)) & 3;
    bj = (kJ >> (2 * s)) & 3;
  }
}

/// g(i, j) = g(j, i) := sum over blocks p of parts[p](i, j), i <= j: the same sum as
/// gram_kernels.cu's sum_block_grams_kernel in another fixed order, with more threads on it. A block takes 32
/// rows i of column j (blockIdx.y); its 8 warps sum the blocks p = w, w + 8, ... in order
/// (32 consecutive i: coalesced), then one warp adds the 8 in order. Bitwise reproducible;
/// the grid's (count) latency is cut 8-fold, and the lower triangle is not read.
template <class T>
__global__ void __launch_bounds__(256)
    sum_block_grams_sliced_kernel(const T* parts, std::int64_t count, int np, int n, T* g,
                                  std::int64_t ldg) {
  __shared__ T slice_sum[8][32];
  const int e = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int i = blockIdx.x * 32 + e, j = blockIdx.y;
  if (blockIdx.x * 32 > j) return;  // the whole block below the diagonal (uniform)
  const std::int64_t stride = std::int64_t(np) * np;
  T sum = T(0);
  if (i <= j && i < n) {
    const T* p = parts + i + std::int64_t(j) * np;
    for (std::int64_t b = w; b < count; b += 8) sum += p[b * stride];
  }
  slice_sum[w][e] = sum;
  __syncthreads();  // the 8 slices are in shared memory
  if (w == 0 && i <= j && i < n) {
    T total = slice_sum[0][e];
    for (int s = 1; s < 8; ++s) total += slice_sum[s][e];
    g[i + std::int64_t(j) * ldg] = total;
    g[j + std::int64_t(i) * ldg] = total;
  }
}

constexpr int kMaxDevices = 64;

/// Blocks of `Kernel` per SM times the SM count, per device (cached: the occupancy query is
/// not free and the answer never changes). Keyed by the kernel itself: the instantiations
/// share one function type, and a cache per type would hand one's count to the others.
template <auto Kernel>
int resident_blocks(int threads, std::size_t smem, int device) {
  static std::atomic<int> cache[kMaxDevices] = {};
  if (device >= 0 && device < kMaxDevices) {
    const int known = cache[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int per_sm = 0, sms = 0;
  GPUQR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads, smem));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = std::max(per_sm, 1) * std::max(sms, 1);
  if (device >= 0 && device < kMaxDevices) cache[device].store(blocks, std::memory_order_relaxed);
  return blocks;
}

}  // namespace
}  // namespace gpuqr::kernels::cuda
