// The panel kernel: unblocked Householder QR of a tall h x b panel (b <= 32) in ONE launch,
// with the panel's T factor (as LAPACK's larft) computed at the end.
//
// Layout: block r of the launch holds rows [r*rpb, (r+1)*rpb) of the panel in shared memory
// (column-major, ld = rpb) for the whole factorization, so the panel is read from and written
// to global memory once. Per column j, each block reduces its share of x^T [x, a_k] (x = the
// column below the diagonal, k > j): one Gram row gives LAPACK's norm and dot products in one
// pass. One exchange per column combines the blocks' partial sums; every block then sums them
// in the same order (deterministic, identical in all blocks), forms beta, tau and w = v^T A
// redundantly, and updates its rows. No host round trip.
//
// Two ways to exchange, one kernel body:
//  - cluster (kCluster): the blocks form one thread-block cluster (Hopper); partials stay in
//    each block's shared memory, a cluster barrier publishes them and blocks read each other's
//    through distributed shared memory. Fast; holds panels up to 16 blocks' shared memory.
//  - grid: a cooperative grid over up to one block per SM; partials go through global memory
//    (L2) and a grid barrier. For panels too tall for one cluster.
// Both double-buffer the exchange slots: exchange n+2 may overwrite slot n%2 only after every
// block passed exchange n+1's barrier, hence finished reading exchange n.
//
// Scaling: the fused pass squares entries, which over- or underflows for columns with entries
// beyond about 1e+-150 (double) / 1e+-18 (float), or sums to exactly zero. Such a column takes
// a slower path (uniform across blocks: all saw the same sum): max |x|, a scaled sum of
// squares, and v^T a_k from the scaled v, as LAPACK's larfg/larf do.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <mutex>
#include <string>

#include "src/core/blocked_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/panel_qr.hpp"

namespace cg = cooperative_groups;

namespace gpuqr::kernels::cuda {
namespace {

constexpr int kWidth = kPanelMaxWidth;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 16;
constexpr unsigned kFull = 0xffffffffu;

template <class T>
struct PanelArgs {
  T* a;
  std::int64_t lda;
  std::int64_t h;
  int b;
  T* tau;
  T* v;
  std::int64_t ldv;
  T* t;            // b x b T factor, or nullptr
  std::int64_t ldt;
  T* partial;      // grid mode: [2][grid][kWidth] exchange slots
  T* top;          // grid mode: [2][kWidth] pivot rows
  T* gram;         // grid mode: [grid][kWidth * kWidth] Gram partials
  int rpb;         // rows per block
};

template <class T>
struct Limits;
template <>
struct Limits<double> {
  static constexpr double small = DBL_MIN / DBL_EPSILON;
  static constexpr double big = DBL_MAX / 4;
};
template <>
struct Limits<float> {
  static constexpr float small = FLT_MIN / FLT_EPSILON;
  static constexpr float big = FLT_MAX / 4;
};

template <bool kMax, class T>
__device__ __forceinline__ T combine(T x, T y) {
  return kMax ? max(x, y) : x + y;
}

/// One step of the warp transpose-reduce: lanes pair across `kHalf`; each keeps the half of
/// its values its lane bit selects and adds the partner's copy of that half.
template <int kHalf, bool kMax, class T>
__device__ __forceinline__ void transpose_step(T (&a)[kWidth]) {
  const bool upper = (threadIdx.x & kHalf) != 0;
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {
    const T send = upper ? a[i] : a[i + kHalf];
    const T keep = upper ? a[i + kHalf] : a[i];
    a[i] = combine<kMax>(keep, __shfl_xor_sync(kFull, send, kHalf));
  }
}

/// Warp transpose-reduce: afterwards lane l holds the combination over the warp of a[l].
/// 31 shuffles for 32 values (a tree per value would take 160). Written out step by step so
/// that every index is a compile-time constant and `a` stays in registers.
template <bool kMax, class T>
__device__ __forceinline__ T warp_transpose_reduce(T (&a)[kWidth]) {
  transpose_step<16, kMax>(a);
  transpose_step<8, kMax>(a);
  transpose_step<4, kMax>(a);
  transpose_step<2, kMax>(a);
  transpose_step<1, kMax>(a);
  return a[0];
}

/// The block's combination of a[k] over its threads, returned to threads k < kWidth.
template <bool kMax, class T>
__device__ __forceinline__ T block_reduce(T (&a)[kWidth], T (*s_red)[kWidth]) {
  const T mine = warp_transpose_reduce<kMax>(a);
  s_red[threadIdx.x >> 5][threadIdx.x & 31] = mine;
  __syncthreads();
  T s = 0;
  if (threadIdx.x < kWidth) {
    s = s_red[0][threadIdx.x];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) s = combine<kMax>(s, s_red[w][threadIdx.x]);
  }
  return s;
}

/// The cross-block part of a reduction, and the pivot row's broadcast.
template <class T, bool kCluster>
struct Exchange {
  T (*s_slot)[kWidth];  // cluster: [2][kWidth] this block's published partials
  T (*s_top)[kWidth];   // cluster: [2][kWidth] the pivot row, when this block owns it
  const PanelArgs<T>* p;
  int slot = 0;

  /// Publishes `mine` (threads k in [k0, k1) hold the block's value for k) and, from the
  /// owner, top_src[k * rpb]; then tot[k] = the combination over blocks, top[k] the pivot row.
  template <bool kMax>
  __device__ __forceinline__ void run(T mine, int k0, int k1, int owner, const T* top_src, T* tot,
                                     T* top) {
    const int k = threadIdx.x;
    const bool is_owner = static_cast<int>(blockIdx.x) == owner;
    const int nblocks = static_cast<int>(gridDim.x);
    if constexpr (kCluster) {
      if (k >= k0 && k < k1) {
        s_slot[slot][k] = mine;
        if (is_owner && top_src != nullptr) s_top[slot][k] = top_src[k * p->rpb];
      }
      cg::this_cluster().sync();
      if (k >= k0 && k < k1) {
        cg::cluster_group cluster = cg::this_cluster();
        T vals[kMaxCluster];
#pragma unroll
        for (int r = 0; r < kMaxCluster; ++r)  // independent loads, all in flight at once
          vals[r] = r < nblocks ? cluster.map_shared_rank(&s_slot[slot][k], r)[0] : T(0);
        T s = vals[0];
#pragma unroll
        for (int r = 1; r < kMaxCluster; ++r)
          if (r < nblocks) s = combine<kMax>(s, vals[r]);
        tot[k] = s;
        if (top != nullptr) top[k] = cluster.map_shared_rank(&s_top[slot][k], owner)[0];
      }
    } else {
      T* partial = p->partial + static_cast<std::int64_t>(slot) * nblocks * kWidth;
      T* gtop = p->top + slot * kWidth;
      if (k >= k0 && k < k1) {
        partial[static_cast<std::int64_t>(blockIdx.x) * kWidth + k] = mine;
        if (is_owner && top_src != nullptr) gtop[k] = top_src[k * p->rpb];
      }
      cg::this_grid().sync();
      if (k >= k0 && k < k1) {
        // __ldcg: written by other blocks; read from L2, never a stale L1 line.
        T s = __ldcg(partial + k);
        for (int g = 1; g < nblocks; ++g)
          s = combine<kMax>(s, __ldcg(partial + static_cast<std::int64_t>(g) * kWidth + k));
        tot[k] = s;
        if (top != nullptr) top[k] = __ldcg(gtop + k);
      }
    }
    slot ^= 1;
    __syncthreads();
  }
};

template <class T, bool kCluster>
__global__ void __launch_bounds__(kThreads) panel_kernel(PanelArgs<T> p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_a = reinterpret_cast<T*>(smem_raw);
  __shared__ T s_red[kWarps][kWidth];
  __shared__ T s_slot[2][kWidth];
  __shared__ T s_pivot[2][kWidth];
  __shared__ T s_tot[kWidth];  // x^T a_k (k = j: ||x||^2), or v^T a_k on the slow path
  __shared__ T s_top[kWidth];  // the pivot row a(j, k)
  __shared__ T s_aux[kWidth];
  __shared__ T s_g[kWidth][kWidth + 1];  // Gram partials, then (block 0) G and T

  Exchange<T, kCluster> xch{s_slot, s_pivot, &p};
  const int rpb = p.rpb, b = p.b, tid = threadIdx.x;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rpb;
  const int nr = static_cast<int>(min(static_cast<std::int64_t>(rpb), p.h - r0));

  for (int c = 0; c < b; ++c)
    for (int i = tid; i < nr; i += kThreads) s_a[i + c * rpb] = p.a[(r0 + i) + c * p.lda];
  __syncthreads();

  for (int j = 0; j < b; ++j) {
    const int i0 = static_cast<int>(max(static_cast<std::int64_t>(0), j + 1 - r0));
    const int owner = j / rpb;
    const bool is_owner = static_cast<int>(blockIdx.x) == owner;
    const T* top_src = is_owner ? s_a + (j - r0) : nullptr;
    T acc[kWidth];
#pragma unroll
    for (int k = 0; k < kWidth; ++k) acc[k] = 0;
    for (int i = i0 + tid; i < nr; i += kThreads) {
      const T x = s_a[i + j * rpb];
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        if (k >= j && k < b) acc[k] += x * s_a[i + k * rpb];
    }
    xch.template run<false>(block_reduce<false>(acc, s_red), j, b, owner, top_src, s_tot, s_top);

    const T alpha = s_top[j];
    const bool has_below = j + 1 < p.h;
    const T xnorm2 = s_tot[j];
    const bool rescale = has_below && !(xnorm2 >= Limits<T>::small && xnorm2 <= Limits<T>::big);
    T xnorm = sqrt(xnorm2);
    if (rescale) {  // uniform: every block saw the same xnorm2
      T m[kWidth];
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = 0;
      T local = 0;
      for (int i = i0 + tid; i < nr; i += kThreads) local = max(local, abs(s_a[i + j * rpb]));
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = k == j ? local : T(0);
      xch.template run<true>(block_reduce<true>(m, s_red), j, j + 1, owner, nullptr, s_aux,
                             nullptr);
      const T s = s_aux[j];
      local = 0;
      if (s > 0)
        for (int i = i0 + tid; i < nr; i += kThreads) {
          const T y = s_a[i + j * rpb] / s;
          local += y * y;
        }
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = k == j ? local : T(0);
      xch.template run<false>(block_reduce<false>(m, s_red), j, j + 1, owner, nullptr, s_aux,
                              nullptr);
      xnorm = s * sqrt(s_aux[j]);
    }

    T beta = alpha, tau = 0, scale = 0;
    if (has_below && xnorm != 0) {  // otherwise H = I, as LAPACK's larfg
      const T norm = hypot(alpha, xnorm);
      beta = alpha >= 0 ? -norm : norm;
      tau = (beta - alpha) / beta;
      scale = T(1) / (alpha - beta);
    }
    if (rescale) {
      // v^T a_k from the scaled v itself (no squares of tiny or huge entries).
      T d[kWidth];
#pragma unroll
      for (int k = 0; k < kWidth; ++k) d[k] = 0;
      for (int i = i0 + tid; i < nr; i += kThreads) {
        const T vi = s_a[i + j * rpb] * scale;
#pragma unroll
        for (int k = 0; k < kWidth; ++k)
          if (k > j && k < b) d[k] += vi * s_a[i + k * rpb];
      }
      xch.template run<false>(block_reduce<false>(d, s_red), j + 1, b, owner, nullptr, s_tot,
                              nullptr);
    }
    // w_k = tau v^T a_k with v = [1; scale x]; the update is a_k -= v w_k.
    T w[kWidth];
#pragma unroll
    for (int k = 0; k < kWidth; ++k)
      w[k] = (k > j && k < b) ? tau * (s_top[k] + (rescale ? s_tot[k] : scale * s_tot[k])) : T(0);
    for (int i = i0 + tid; i < nr; i += kThreads) {
      const T vi = s_a[i + j * rpb] * scale;
      s_a[i + j * rpb] = vi;
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        if (k > j && k < b) s_a[i + k * rpb] -= vi * w[k];
    }
    if (is_owner) {
      const int lj = static_cast<int>(j - r0);
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        if (k == tid && k > j && k < b) s_a[lj + k * rpb] = s_top[k] - w[k];
      if (tid == j) s_a[lj + j * rpb] = beta;
    }
    if (blockIdx.x == 0 && tid == 0) p.tau[j] = tau;
    __syncthreads();
  }

  for (int c = 0; c < b; ++c) {
    for (int i = tid; i < nr; i += kThreads) {
      const std::int64_t gi = r0 + i;
      const T x = s_a[i + c * rpb];
      p.a[gi + c * p.lda] = x;
      p.v[gi + c * p.ldv] = gi > c ? x : (gi == c ? T(1) : T(0));
    }
  }
  // Cluster: no block may exit while another can still read its shared memory (the last
  // exchange's slots); this barrier ends those reads.
  if constexpr (kCluster) cg::this_cluster().sync();
  if (p.t == nullptr) return;  // uniform

  // T = larft(V, tau): G = V^T V over all blocks, then LAPACK's recurrence on block 0.
  // This block's share of G: warp w takes rows c1 = w, w + 8, ... of G; its lanes walk the
  // block's rows (consecutive addresses: no bank conflicts), each lane accumulating a whole
  // row of G, which a transpose-reduce then sums over the lanes (lane c2 gets G(c1, c2)).
  {
    const int lane = tid & 31, warp = tid >> 5;
    for (int c1 = warp; c1 < b; c1 += kWarps) {
      T g[kWidth];
#pragma unroll
      for (int c2 = 0; c2 < kWidth; ++c2) g[c2] = 0;
      for (int i = lane; i < nr; i += 32) {
        const std::int64_t gi = r0 + i;
        const T v1 = gi > c1 ? s_a[i + c1 * rpb] : (gi == c1 ? T(1) : T(0));
        if (v1 == T(0)) continue;
#pragma unroll
        for (int c2 = 0; c2 < kWidth; ++c2)
          if (c2 < b) g[c2] += v1 * (gi > c2 ? s_a[i + c2 * rpb] : (gi == c2 ? T(1) : T(0)));
      }
      s_g[c1][lane] = warp_transpose_reduce<false>(g);
    }
  }
  __syncthreads();
  if constexpr (kCluster) {
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every block's s_g is complete
    if (blockIdx.x == 0) {
      const int nblocks = static_cast<int>(gridDim.x);
      constexpr int kPer = (kWidth * kWidth + kThreads - 1) / kThreads;
      T sums[kPer];
#pragma unroll
      for (int q = 0; q < kPer; ++q) {
        const int e = tid + q * kThreads;
        sums[q] = 0;
        if (e < b * b)
          for (int r = 0; r < nblocks; ++r)
            sums[q] += cluster.map_shared_rank(&s_g[e % b][e / b], r)[0];
      }
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kPer; ++q) {
        const int e = tid + q * kThreads;
        if (e < b * b) s_g[e % b][e / b] = sums[q];
      }
    }
    cluster.sync();  // block 0 has read everyone's s_g; the others may now exit
  } else {
    T* mine = p.gram + static_cast<std::int64_t>(blockIdx.x) * kWidth * kWidth;
    for (int e = tid; e < b * b; e += kThreads) mine[e] = s_g[e % b][e / b];
    cg::this_grid().sync();
    if (blockIdx.x == 0) {
      for (int e = tid; e < b * b; e += kThreads) {
        T s = 0;
        for (int g = 0; g < static_cast<int>(gridDim.x); ++g)
          s += __ldcg(p.gram + static_cast<std::int64_t>(g) * kWidth * kWidth + e);
        s_g[e % b][e / b] = s;
      }
    }
  }
  if (blockIdx.x != 0) return;
  __syncthreads();
  // T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i), T(i, i) = tau_i. T's strictly upper part is
  // kept transposed in G's unused strictly lower part (s_g[c][r] = T(r, c) for c > r) while
  // s_g[r][c] (r < c) still holds G(r, c); its diagonal in s_aux. Warp 0: a row per thread,
  // each thread reading only what it wrote itself, so __syncwarp orders the columns.
  if (tid < kWidth) {
    const int r = tid;
    for (int i = 0; i < b; ++i) {
      const T ti = p.tau[i];  // written by this block's thread 0 above (same block: visible
                              // after the __syncthreads that ended column i)
      if (r < i) {
        T acc = 0;
        for (int c = r; c < i; ++c) {
          const T trc = c == r ? s_aux[r] : s_g[c][r];  // T(r, c)
          acc += trc * s_g[c][i];
        }
        s_g[i][r] = -ti * acc;  // T(r, i)
      }
      if (r == i) s_aux[r] = ti;  // T(i, i)
      __syncwarp();
    }
    for (int c = 0; c < b; ++c)
      if (r < b) p.t[r + c * p.ldt] = r < c ? s_g[c][r] : (r == c ? s_aux[r] : T(0));
  }
}

/// Rows per block for an h-row panel of width b split over `blocks` blocks.
int rows_for(std::int64_t h, int blocks) {
  const std::int64_t rpb = (h + blocks - 1) / blocks;
  return static_cast<int>((rpb + 31) / 32 * 32);
}

struct DeviceLimits {
  int sms = 0;
  std::size_t smem = 0;      // dynamic shared memory a block may use (opt-in minus statics)
  int max_cluster = 0;       // cluster size the cluster kernel can launch with
};

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  const int v = text != nullptr ? std::atoi(text) : 0;
  return v > 0 ? v : fallback;
}

template <class T>
DeviceLimits device_limits(int device) {
  // Per device, once: attributes set on the kernels and the limits they imply.
  static std::mutex mutex;
  static DeviceLimits cache[64];
  static bool done[64] = {};
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= 0 && device < 64 && done[device]) return cache[device];
  DeviceLimits d;
  int v = 0;
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  d.sms = v;
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr{};
  GPUQR_CUDA_CHECK(cudaFuncGetAttributes(&attr, panel_kernel<T, true>));
  d.smem = static_cast<std::size_t>(v) - attr.sharedSizeBytes - 1024;
  for (auto kernel : {panel_kernel<T, true>, panel_kernel<T, false>}) {
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(d.smem)));
  }
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(panel_kernel<T, true>,
                                        cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  // The largest cluster that fits with a full-size block on each SM.
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kMaxCluster);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = d.smem;
  cudaLaunchAttribute cluster_attr{};
  cluster_attr.id = cudaLaunchAttributeClusterDimension;
  cluster_attr.val.clusterDim.x = kMaxCluster;
  cluster_attr.val.clusterDim.y = 1;
  cluster_attr.val.clusterDim.z = 1;
  cfg.attrs = &cluster_attr;
  cfg.numAttrs = 1;
  int max_cluster = 0;
  if (cudaOccupancyMaxPotentialClusterSize(&max_cluster, panel_kernel<T, true>, &cfg) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    max_cluster = 8;  // the portable size
  }
  d.max_cluster = std::min(max_cluster, kMaxCluster);
  if (device >= 0 && device < 64) {
    cache[device] = d;
    done[device] = true;
  }
  return d;
}

}  // namespace

std::int64_t panel_qr_workspace_elems(std::int64_t, int) {
  // Grid mode: two exchange slots and the Gram partials for up to 1024 blocks, pivot rows.
  return 2LL * 1024 * kWidth + 2LL * kWidth + 1024LL * kWidth * kWidth;
}

std::int64_t panel_qr_max_width(int device, int elem_bytes, std::int64_t h) {
  const DeviceLimits d = elem_bytes == 8 ? device_limits<double>(device)
                                         : device_limits<float>(device);
  // The widest of 32, 16, 8 whose panel fits one cluster; else 32 on the grid kernel.
  for (int b = kWidth; b >= 8; b /= 2) {
    const std::int64_t rpb = rows_for(h, d.max_cluster);
    if (static_cast<std::size_t>(rpb) * b * elem_bytes <= d.smem) return b;
  }
  return kWidth;
}

template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, MatrixView<T> t, T* workspace) {
  const std::int64_t h = panel.rows();
  const int b = static_cast<int>(panel.cols());
  if (h == 0 || b == 0) return true;
  if (b > kWidth) return false;
  const DeviceLimits d = device_limits<T>(ctx.device);
  const std::size_t row_bytes = static_cast<std::size_t>(b) * sizeof(T);
  PanelArgs<T> args{panel.data(), panel.ld(), h, b, tau.data(), v.data(), v.ld(),
                    t.empty() ? nullptr : t.data(), t.ld(), workspace,
                    workspace + 2LL * 1024 * kWidth, workspace + 2LL * 1024 * kWidth + 2 * kWidth,
                    0};
  void* params[] = {&args};
  // Cluster: as few blocks as hold the panel at about GPUQR_PANEL_ROWS rows each (512).
  static const int target_rows = env_int("GPUQR_PANEL_ROWS", 512);
  int blocks = static_cast<int>(std::min<std::int64_t>((h + target_rows - 1) / target_rows,
                                                       d.max_cluster));
  blocks = std::max(blocks, 1);
  while (blocks <= d.max_cluster &&
         static_cast<std::size_t>(rows_for(h, blocks)) * row_bytes > d.smem) {
    ++blocks;
  }
  if (blocks <= d.max_cluster) {
    args.rpb = rows_for(h, blocks);
    blocks = static_cast<int>((h + args.rpb - 1) / args.rpb);
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = static_cast<std::size_t>(args.rpb) * row_bytes;
    cfg.stream = ctx.stream;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(blocks);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    GPUQR_CUDA_CHECK(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(panel_kernel<T, true>),
                                         params));
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    return true;
  }
  // Grid: one block per SM at most (so the cooperative grid is co-resident), rows spread.
  blocks = d.sms;
  args.rpb = rows_for(h, blocks);
  if (static_cast<std::size_t>(args.rpb) * row_bytes > d.smem) return false;
  blocks = static_cast<int>((h + args.rpb - 1) / args.rpb);
  GPUQR_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(panel_kernel<T, false>), dim3(blocks), dim3(kThreads), params,
      static_cast<std::size_t>(args.rpb) * row_bytes, ctx.stream));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

template bool panel_qr_fused<float>(detail::ContextImpl&, MatrixView<float>, VectorView<float>,
                                    MatrixView<float>, MatrixView<float>, float*);
template bool panel_qr_fused<double>(detail::ContextImpl&, MatrixView<double>,
                                     VectorView<double>, MatrixView<double>, MatrixView<double>,
                                     double*);

}  // namespace gpuqr::kernels::cuda
