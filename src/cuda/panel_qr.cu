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
#include "src/cuda/cluster_launch.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/pdl.cuh"
#include "src/cuda/safe_range.cuh"

namespace cg = cooperative_groups;

namespace gpuqr::kernels::cuda {
namespace {

constexpr int kWidth = kPanelMaxWidth;
constexpr int kThreads = 512;  // 16 warps: rows spread thin, latency hidden
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 16;

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
  const int* skip;  // device flag: 1 = the AH panel (panel_qr_ah.cu) factored it, return
};

template <bool kMax, class T>
__device__ __forceinline__ T combine(T x, T y) {
  return kMax ? max(x, y) : x + y;
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
                                     T* top, int top_ld) {
    const int k = threadIdx.x;
    const bool is_owner = static_cast<int>(blockIdx.x) == owner;
    const int nblocks = static_cast<int>(gridDim.x);
    if constexpr (kCluster) {
      if (k >= k0 && k < k1) {
        s_slot[slot][k] = mine;
        if (is_owner && top_src != nullptr) s_top[slot][k] = top_src[k * top_ld];
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
        if (is_owner && top_src != nullptr) gtop[k] = top_src[k * top_ld];
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
  pdl::enter();
  if (p.skip != nullptr && *p.skip == 1) return;  // uniform: before any barrier
  // Thread (warp w, lane k) owns column k of the rows i = w, w + 8, ... of this block: dot
  // products and updates run down columns with no per-column loop in a thread, x_i is a
  // broadcast load, and the padded leading dimension (rpb + 1) keeps the lanes' loads of one
  // row in distinct banks.
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_a = reinterpret_cast<T*>(smem_raw);
  __shared__ T s_red[kWarps][kWidth];
  __shared__ T s_slot[2][kWidth];
  __shared__ T s_pivot[2][kWidth];
  __shared__ T s_tot[kWidth];  // x^T a_k (k = j: ||x||^2), or v^T a_k on the slow path
  __shared__ T s_top[kWidth];  // the pivot row a(j, k)
  __shared__ T s_aux[kWidth];
  __shared__ T s_g[kWidth][kWidth + 1];  // G = V^T V, then T (block 0)

  Exchange<T, kCluster> xch{s_slot, s_pivot, &p};
  const int rpb = p.rpb, ld = rpb + 1, b = p.b, tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rpb;
  const int nr = static_cast<int>(min(static_cast<std::int64_t>(rpb), p.h - r0));
  const bool active = lane < b;  // this thread's column exists
  T* col = s_a + lane * ld;      // this thread's column

  // One flat loop over the block's nr x b entries, unrolled: several independent global loads
  // in flight per thread instead of one load-to-store round trip per column.
#pragma unroll 4
  for (int e = tid; e < nr * b; e += kThreads) {
    const int c = e / nr, i = e - c * nr;
    s_a[i + c * ld] = p.a[(r0 + i) + c * p.lda];
  }
  __syncthreads();

  // Block-wide combination of one value per (warp, lane); lanes k < kWidth of warp 0... any
  // thread with tid < kWidth receives the combination for k = tid.
  auto block_combine = [&](T mine, bool is_max) -> T {
    s_red[warp][lane] = mine;
    __syncthreads();
    T s = 0;
    if (tid < kWidth) {
      s = s_red[0][tid];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) s = is_max ? max(s, s_red[w][tid]) : s + s_red[w][tid];
    }
    return s;
  };

  // Column j - 1's deferred scaling x := scale x, over this thread's rows from `from`.
  T prev_scale = 0;
  int prev_first = 0;
  auto scale_rows = [&](int from, T sc) {
    for (int i = from; i < nr; i += kWarps) col[i] *= sc;
  };

  for (int j = 0; j < b; ++j) {
    const int i0 = static_cast<int>(max(static_cast<std::int64_t>(0), j + 1 - r0));
    const int owner = j / rpb;
    const bool is_owner = static_cast<int>(blockIdx.x) == owner;
    const T* xcol = s_a + j * ld;
    const int first = i0 + ((warp - i0) % kWarps + kWarps) % kWarps;  // first row = warp mod 16
    // Partial x^T a_k over this thread's rows, four rows at a time (independent loads, four
    // accumulators).
    T acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
    if (active && lane >= j) {
      int i = first;
      for (; i + 3 * kWarps < nr; i += 4 * kWarps) {
        const T x0 = xcol[i], x1 = xcol[i + kWarps], x2 = xcol[i + 2 * kWarps],
                x3 = xcol[i + 3 * kWarps];
        const T c0 = col[i], c1 = col[i + kWarps], c2 = col[i + 2 * kWarps],
                c3 = col[i + 3 * kWarps];
        acc0 += x0 * c0;
        acc1 += x1 * c1;
        acc2 += x2 * c2;
        acc3 += x3 * c3;
      }
      for (; i < nr; i += kWarps) acc0 += xcol[i] * col[i];
    }
    const T mine = block_combine((acc0 + acc1) + (acc2 + acc3), false);
    xch.template run<false>(mine, j, b, owner, is_owner ? s_a + (j - r0) : nullptr, s_tot,
                            s_top, ld);

    const T alpha = s_top[j];
    const bool has_below = j + 1 < p.h;
    const T xnorm2 = s_tot[j];
    const bool rescale = has_below && !(xnorm2 >= SafeRange<T>::small && xnorm2 <= SafeRange<T>::big);
    T xnorm = sqrt(xnorm2);
    if (rescale) {  // uniform: every block saw the same xnorm2
      T local = 0;
      for (int i = first; i < nr; i += kWarps) local = max(local, abs(xcol[i]));
      xch.template run<true>(block_combine(local, true), j, j + 1, owner, nullptr, s_aux,
                             nullptr, ld);
      const T sc = s_aux[j];
      local = 0;
      if (sc > 0)
        for (int i = first; i < nr; i += kWarps) {
          const T y = xcol[i] / sc;
          local += y * y;
        }
      xch.template run<false>(block_combine(local, false), j, j + 1, owner, nullptr, s_aux,
                              nullptr, ld);
      xnorm = sc * sqrt(s_aux[j]);
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
      T d = 0;
      if (active && lane > j)
        for (int i = first; i < nr; i += kWarps) d += (xcol[i] * scale) * col[i];
      xch.template run<false>(block_combine(d, false), j + 1, b, owner, nullptr, s_tot,
                              nullptr, ld);
    }
    // w_k = tau v^T a_k with v = [1; scale x]; the update is a_k -= v w_k. Column j itself
    // becomes v = scale x later: lane j scales it during the next column's update, when no
    // lane reads it any more and lane j would otherwise idle.
    const T w = (active && lane > j)
                    ? tau * (s_top[lane] + (rescale ? s_tot[lane] : scale * s_tot[lane]))
                    : T(0);
    if (active && lane > j) {
      const T sw = scale * w;
      int i = first;
      for (; i + 3 * kWarps < nr; i += 4 * kWarps) {
        const T x0 = xcol[i], x1 = xcol[i + kWarps], x2 = xcol[i + 2 * kWarps],
                x3 = xcol[i + 3 * kWarps];
        const T c0 = col[i], c1 = col[i + kWarps], c2 = col[i + 2 * kWarps],
                c3 = col[i + 3 * kWarps];
        col[i] = c0 - x0 * sw;
        col[i + kWarps] = c1 - x1 * sw;
        col[i + 2 * kWarps] = c2 - x2 * sw;
        col[i + 3 * kWarps] = c3 - x3 * sw;
      }
      for (; i < nr; i += kWarps) col[i] -= xcol[i] * sw;
    } else if (j > 0 && lane == j - 1) {
      scale_rows(prev_first, prev_scale);
    }
    if (is_owner && warp == 0 && active && lane >= j)
      col[j - r0] = lane == j ? beta : s_top[lane] - w;  // row j: R's entries
    if (blockIdx.x == 0 && tid == 0) p.tau[j] = tau;
    prev_scale = scale;
    prev_first = first;
    __syncthreads();
  }
  if (lane == b - 1) scale_rows(prev_first, prev_scale);
  __syncthreads();

  for (int c = 0; c < b; ++c) {
    for (int i = tid; i < nr; i += kThreads) {
      const std::int64_t gi = r0 + i;
      const T x = s_a[i + c * ld];
      p.a[gi + c * p.lda] = x;
      p.v[gi + c * p.ldv] = gi > c ? x : (gi == c ? T(1) : T(0));
    }
  }
  // Cluster: no block may exit while another can still read its shared memory (the last
  // exchange's slots); this barrier ends those reads.
  if constexpr (kCluster) cg::this_cluster().sync();
  if (p.t == nullptr) return;  // uniform

  // T = larft(V, tau): G = V^T V over all blocks, then LAPACK's recurrence on block 0.
  // Thread (w, c2) accumulates G(c1, c2) for every c1 over its rows (v(i, c1) broadcast);
  // the warps then add their shares into s_g one after another.
  {
    T g[kWidth];
#pragma unroll
    for (int c1 = 0; c1 < kWidth; ++c1) g[c1] = 0;
    if (active) {
      for (int i = warp; i < nr; i += kWarps) {
        const std::int64_t gi = r0 + i;
        const T v2 = gi > lane ? col[i] : (gi == lane ? T(1) : T(0));
        if (v2 == T(0)) continue;
#pragma unroll
        for (int c1 = 0; c1 < kWidth; ++c1)
          if (c1 < b) g[c1] += (gi > c1 ? s_a[i + c1 * ld] : (gi == c1 ? T(1) : T(0))) * v2;
      }
    }
    for (int w = 0; w < kWarps; ++w) {
      if (warp == w) {
#pragma unroll
        for (int c1 = 0; c1 < kWidth; ++c1) s_g[c1][lane] = (w == 0 ? T(0) : s_g[c1][lane]) + g[c1];
      }
      __syncthreads();
    }
  }
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
      const T ti = p.tau[i];  // written by this block's thread 0 during column i
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
  // 32 when one cluster holds the panel, or else the cooperative grid does (its barrier is
  // slower, but narrower panels cost more: more launches and thinner updates, measured);
  // only panels too tall for both get 16 or 8 on a cluster.
  const auto fits = [&](std::int64_t rpb, int b) {
    return static_cast<std::size_t>(rpb + 1) * b * elem_bytes <= d.smem;
  };
  if (fits(rows_for(h, d.max_cluster), kWidth) || fits(rows_for(h, d.sms), kWidth)) return kWidth;
  for (int b = kWidth / 2; b >= 8; b /= 2)
    if (fits(rows_for(h, d.max_cluster), b)) return b;
  return kWidth;
}

template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, MatrixView<T> t, T* workspace, const int* skip) {
  const std::int64_t h = panel.rows();
  const int b = static_cast<int>(panel.cols());
  if (h == 0 || b == 0) return true;
  if (b > kWidth) return false;
  if (panel_qr_single<T>(ctx, panel, tau, v, t, skip)) return true;
  const DeviceLimits d = device_limits<T>(ctx.device);
  const std::size_t row_bytes = static_cast<std::size_t>(b) * sizeof(T);
  PanelArgs<T> args{panel.data(), panel.ld(), h, b, tau.data(), v.data(), v.ld(),
                    t.empty() ? nullptr : t.data(), t.ld(), workspace,
                    workspace + 2LL * 1024 * kWidth, workspace + 2LL * 1024 * kWidth + 2 * kWidth,
                    0, skip};
  void* params[] = {&args};
  // Cluster: as few blocks as hold the panel at about GPUQR_PANEL_ROWS rows each (512).
  static const int target_rows = env_int("GPUQR_PANEL_ROWS", 64);
  int blocks = static_cast<int>(std::min<std::int64_t>((h + target_rows - 1) / target_rows,
                                                       d.max_cluster));
  blocks = std::max(blocks, 1);
  while (blocks <= d.max_cluster &&
         static_cast<std::size_t>(rows_for(h, blocks) + 1) * row_bytes > d.smem) {
    ++blocks;
  }
  // GPUQR_PANEL_MODE=grid forces the cooperative-grid variant (for measurements).
  static const bool force_grid = [] {
    const char* text = std::getenv("GPUQR_PANEL_MODE");
    return text != nullptr && std::string(text) == "grid";
  }();
  if (blocks <= d.max_cluster && !force_grid) {
    args.rpb = rows_for(h, blocks);
    blocks = static_cast<int>((h + args.rpb - 1) / args.rpb);
    launch_one_cluster(reinterpret_cast<const void*>(panel_kernel<T, true>), blocks, kThreads,
                       static_cast<std::size_t>(args.rpb + 1) * row_bytes, ctx.stream, params,
                       pdl::enabled(ctx.device));
    return true;
  }
  // Grid: one block per SM at most (so the cooperative grid is co-resident), about
  // GPUQR_PANEL_ROWS rows each when the panel is short enough to leave SMs idle.
  blocks = static_cast<int>(std::min<std::int64_t>(d.sms, (h + target_rows - 1) / target_rows));
  blocks = std::max(blocks, 1);
  args.rpb = rows_for(h, blocks);
  if (static_cast<std::size_t>(args.rpb + 1) * row_bytes > d.smem) args.rpb = rows_for(h, d.sms);
  if (static_cast<std::size_t>(args.rpb + 1) * row_bytes > d.smem) return false;
  blocks = static_cast<int>((h + args.rpb - 1) / args.rpb);
  GPUQR_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(panel_kernel<T, false>), dim3(blocks), dim3(kThreads), params,
      static_cast<std::size_t>(args.rpb + 1) * row_bytes, ctx.stream));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

bool panel_qr_fused_fits(int device, int elem_bytes, std::int64_t h, int b) {
  if (b < 1 || b > kWidth) return false;
  if (h >= b && h <= panel_qr_single_rows(elem_bytes)) return true;
  const DeviceLimits d = elem_bytes == 8 ? device_limits<double>(device)
                                         : device_limits<float>(device);
  // The cooperative grid over every SM is the most permissive of the fused launches.
  return static_cast<std::size_t>(rows_for(h, d.sms) + 1) * b * elem_bytes <= d.smem;
}

template bool panel_qr_fused<float>(detail::ContextImpl&, MatrixView<float>, VectorView<float>,
                                    MatrixView<float>, MatrixView<float>, float*, const int*);
template bool panel_qr_fused<double>(detail::ContextImpl&, MatrixView<double>,
                                     VectorView<double>, MatrixView<double>, MatrixView<double>,
                                     double*, const int*);

}  // namespace gpuqr::kernels::cuda
