// The panel kernel: unblocked Householder QR of a tall h x b panel (b <= 32) in ONE launch.
//
// Layout: a cooperative grid; block g holds rows [g*rpb, (g+1)*rpb) of the panel in shared
// memory (column-major, ld = rpb) for the whole factorization, so the panel is read from and
// written to global memory once. Per column j, each block reduces its share of x^T [x, a_k]
// (x = column j below the diagonal, k > j): one Gram row, LAPACK's norm and dot products in a
// single pass. One grid-wide barrier per column publishes the per-block partial sums; every
// block then sums them in the same order (deterministic, identical in all blocks), forms
// beta, tau and w = v^T A redundantly, and updates its rows. No host round trip.
//
// Scaling: the fused pass squares entries, which over- or underflows for columns with
// entries beyond about 1e+-154 (double) / 1e+-19 (float). Such a column takes a slower path
// (uniform across the grid): max |x|, a scaled sum of squares, and v^T a_k from the scaled v,
// as LAPACK's larfg/larf do; three more barriers for that column only.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <string>

#include "src/core/blocked_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/panel_qr.hpp"

namespace cg = cooperative_groups;

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kWidth = kPanelMaxWidth;  // columns per panel, at most
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <class T>
struct PanelArgs {
  T* a;
  std::int64_t lda;
  std::int64_t h;
  int b;
  T* tau;
  T* v;
  std::int64_t ldv;
  T* partial;  // [4][b][grid][kWidth]: fast path, then the three slow-path reductions
  T* top;      // [b][kWidth]: the pivot row of each column, published by its owner
  int rpb;     // rows per block
};

template <class T>
struct Limits;
template <>
struct Limits<double> {
  // Sums of squares inside [small, big] are exact enough; outside, rescale.
  static constexpr double small = DBL_MIN / DBL_EPSILON;
  static constexpr double big = DBL_MAX / 4;
};
template <>
struct Limits<float> {
  static constexpr float small = FLT_MIN / FLT_EPSILON;
  static constexpr float big = FLT_MAX / 4;
};

/// Sums acc[k] (k in [k0, b)) over the block and writes the block's partials to `out`
/// (out[k]); s_red is kWarps x kWidth shared scratch. Ends with the block synchronized.
template <class T, bool kMax>
__device__ void block_reduce_store(const T (&acc)[kWidth], int k0, int b, T (*s_red)[kWidth],
                                   T* out) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < kWidth; ++k) {
    if (k >= k0 && k < b) {  // uniform across the block
      T v = acc[k];
      for (int off = 16; off > 0; off >>= 1) {
        const T o = __shfl_down_sync(0xffffffffu, v, off);
        v = kMax ? max(v, o) : v + o;
      }
      if (lane == 0) s_red[warp][k] = v;
    }
  }
  __syncthreads();
  const int k = threadIdx.x;
  if (k >= k0 && k < b) {
    T s = s_red[0][k];
    for (int w = 1; w < kWarps; ++w) s = kMax ? max(s, s_red[w][k]) : s + s_red[w][k];
    out[k] = s;
  }
}

/// After the grid barrier: totals[k] = the sum (or max) over blocks of partial[g][k], for
/// k in [k0, b), in the same order in every block. Ends with the block synchronized.
template <class T, bool kMax>
__device__ void gather_totals(const T* partial, int grid, int k0, int b, T* totals) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = k0 + warp; k < b; k += kWarps) {
    T s = 0;
    // __ldcg: other blocks wrote these; read them from L2, not a stale L1 line.
    for (int g = lane; g < grid; g += 32) {
      const T x = __ldcg(partial + static_cast<std::int64_t>(g) * kWidth + k);
      s = kMax ? max(s, x) : s + x;
    }
    for (int off = 16; off > 0; off >>= 1) {
      const T o = __shfl_down_sync(0xffffffffu, s, off);
      s = kMax ? max(s, o) : s + o;
    }
    if (lane == 0) totals[k] = s;
  }
  __syncthreads();
}

template <class T>
__global__ void __launch_bounds__(kThreads) panel_qr_kernel(PanelArgs<T> p) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_a = reinterpret_cast<T*>(smem_raw);
  __shared__ T s_red[kWarps][kWidth];
  __shared__ T s_sum[kWidth];  // x^T a_k totals (k = j: ||x||^2), or v^T a_k on the slow path
  __shared__ T s_top[kWidth];  // the pivot row a(j, k)
  __shared__ T s_aux[kWidth];  // slow path: max |x| and the scaled sum of squares

  const int rpb = p.rpb, b = p.b, G = static_cast<int>(gridDim.x);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rpb;
  const int nr = static_cast<int>(min(static_cast<std::int64_t>(rpb), p.h - r0));
  const int tid = threadIdx.x;
  const std::int64_t column_slots = static_cast<std::int64_t>(G) * kWidth;
  const std::int64_t path_slots = column_slots * b;

  for (int c = 0; c < b; ++c)
    for (int i = tid; i < nr; i += kThreads) s_a[i + c * rpb] = p.a[(r0 + i) + c * p.lda];
  __syncthreads();

  for (int j = 0; j < b; ++j) {
    // Local rows strictly below the diagonal (global row > j).
    const int i0 = static_cast<int>(max(static_cast<std::int64_t>(0), j + 1 - r0));
    const bool owner = r0 <= j && j < r0 + nr;
    T* partial_j = p.partial + j * column_slots;
    T acc[kWidth];
#pragma unroll
    for (int k = 0; k < kWidth; ++k) acc[k] = 0;
    for (int i = i0 + tid; i < nr; i += kThreads) {
      const T x = s_a[i + j * rpb];
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        if (k >= j && k < b) acc[k] += x * s_a[i + k * rpb];
    }
    block_reduce_store<T, false>(acc, j, b, s_red, partial_j + blockIdx.x * kWidth);
    if (owner && tid >= j && tid < b) p.top[j * kWidth + tid] = s_a[(j - r0) + tid * rpb];
    grid.sync();
    gather_totals<T, false>(partial_j, G, j, b, s_sum);
    if (tid >= j && tid < b) s_top[tid] = __ldcg(p.top + j * kWidth + tid);
    __syncthreads();

    const T alpha = s_top[j];
    T xnorm2 = s_sum[j];
    const bool rescale = !(xnorm2 <= Limits<T>::big) || (xnorm2 > 0 && xnorm2 < Limits<T>::small);
    T xnorm = sqrt(xnorm2);
    if (rescale) {  // uniform: every block computed the same xnorm2
      T m[kWidth];
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = 0;
      T local_max = 0;
      for (int i = i0 + tid; i < nr; i += kThreads) local_max = max(local_max, abs(s_a[i + j * rpb]));
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = (k == j) ? local_max : T(0);
      T* slot1 = p.partial + path_slots + j * column_slots;
      block_reduce_store<T, true>(m, j, j + 1, s_red, slot1 + blockIdx.x * kWidth);
      grid.sync();
      gather_totals<T, true>(slot1, G, j, j + 1, s_aux);
      const T s = s_aux[j];
      T local_sq = 0;
      if (s > 0) {
        for (int i = i0 + tid; i < nr; i += kThreads) {
          const T y = s_a[i + j * rpb] / s;
          local_sq += y * y;
        }
      }
#pragma unroll
      for (int k = 0; k < kWidth; ++k) m[k] = (k == j) ? local_sq : T(0);
      T* slot2 = p.partial + 2 * path_slots + j * column_slots;
      block_reduce_store<T, false>(m, j, j + 1, s_red, slot2 + blockIdx.x * kWidth);
      grid.sync();
      gather_totals<T, false>(slot2, G, j, j + 1, s_aux);
      xnorm = s * sqrt(s_aux[j]);
      xnorm2 = xnorm > 0 ? T(1) : T(0);  // only its sign (zero or not) is used below
    }

    T beta = alpha, tau = 0, scale = 0;
    if (xnorm2 != 0) {  // otherwise H = I, as LAPACK's larfg
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
      T* slot3 = p.partial + 3 * path_slots + j * column_slots;
      block_reduce_store<T, false>(d, j + 1, b, s_red, slot3 + blockIdx.x * kWidth);
      grid.sync();
      gather_totals<T, false>(slot3, G, j + 1, b, s_sum);
    }
    // w_k = v^T a_k (v = [1; scale x]); the update is a_k -= tau v w_k.
    T w[kWidth];
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      w[k] = 0;
      if (k > j && k < b) w[k] = tau * (s_top[k] + (rescale ? s_sum[k] : scale * s_sum[k]));
    }
    for (int i = i0 + tid; i < nr; i += kThreads) {
      const T vi = s_a[i + j * rpb] * scale;
      s_a[i + j * rpb] = vi;
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        if (k > j && k < b) s_a[i + k * rpb] -= vi * w[k];
    }
    if (owner) {
      const int lj = static_cast<int>(j - r0);
      if (tid > j && tid < b) {
#pragma unroll
        for (int k = 0; k < kWidth; ++k)
          if (k == tid) s_a[lj + k * rpb] = s_top[k] - w[k];
      }
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
}

/// Rows per block: at least GPUQR_PANEL_ROWS (default 256) so that short panels use few
/// blocks (fewer partials, a cheaper barrier); more when the panel must spread over every
/// multiprocessor. 0 when even one block per SM cannot hold its share in shared memory.
int rows_per_block(std::int64_t h, int sms, int elem, std::size_t smem_limit) {
  static const int min_rows = [] {
    const char* text = std::getenv("GPUQR_PANEL_ROWS");
    const int v = text != nullptr ? std::atoi(text) : 0;
    return v > 0 ? v : 256;
  }();
  std::int64_t rpb = std::max<std::int64_t>(min_rows, (h + sms - 1) / sms);
  rpb = (rpb + 31) / 32 * 32;
  const std::size_t bytes = static_cast<std::size_t>(rpb) * kWidth * elem;
  return bytes <= smem_limit ? static_cast<int>(rpb) : 0;
}

struct DeviceLimits {
  int sms = 0;
  std::size_t smem_optin = 0;
};

DeviceLimits device_limits(int device) {
  DeviceLimits d;
  int v = 0;
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  d.sms = v;
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Leave room for the kernel's static shared arrays.
  d.smem_optin = static_cast<std::size_t>(v) - 4096;
  return d;
}

}  // namespace

std::int64_t panel_qr_workspace_elems(std::int64_t h, int b) {
  (void)h;
  // Four partial sets of b columns x (at most) 1024 blocks x kWidth, plus the pivot rows.
  return 4LL * b * 1024 * kWidth + static_cast<std::int64_t>(b) * kWidth;
}

template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, T* workspace) {
  const std::int64_t h = panel.rows();
  const int b = static_cast<int>(panel.cols());
  if (h == 0 || b == 0) return true;
  static const DeviceLimits lim = [&] {
    const DeviceLimits d = device_limits(ctx.device);
    // Once: allow the kernel the whole opt-in shared memory (it asks only for what it uses).
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(panel_qr_kernel<T>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(d.smem_optin)));
    return d;
  }();
  const int rpb = rows_per_block(h, lim.sms, sizeof(T), lim.smem_optin);
  if (rpb == 0 || b > kWidth) return false;
  // rpb >= ceil(h / SMs), so the grid has at most one block per multiprocessor and is
  // co-resident, as a cooperative launch requires (the launch fails cleanly otherwise).
  const int grid = static_cast<int>((h + rpb - 1) / rpb);
  const std::size_t smem = static_cast<std::size_t>(rpb) * kWidth * sizeof(T);
  PanelArgs<T> args{panel.data(), panel.ld(), h,         b,
                    tau.data(),   v.data(),   v.ld(),    workspace,
                    workspace + 4LL * b * 1024 * kWidth, rpb};
  void* params[] = {&args};
  GPUQR_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(panel_qr_kernel<T>),
                                               dim3(grid), dim3(kThreads), params, smem,
                                               ctx.stream));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

template bool panel_qr_fused<float>(detail::ContextImpl&, MatrixView<float>,
                                    VectorView<float>, MatrixView<float>, float*);
template bool panel_qr_fused<double>(detail::ContextImpl&, MatrixView<double>,
                                     VectorView<double>, MatrixView<double>, double*);

}  // namespace gpuqr::kernels::cuda
