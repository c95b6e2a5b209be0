// The single-block panel kernel: unblocked Householder QR of a short h x b panel (b <= 32,
// h <= W * RPT rows for W warps of RPT rows each: up to 512 rows in FP64, 640 in FP32, where
// it beats the cluster kernel) by ONE thread block with ONE block barrier per column, and the
// panel's T factor (as LAPACK's larft) from Gram entries gathered during the factorization.
//
// Why: the cluster kernel (panel_qr.cu) pays a cluster barrier, distributed-shared-memory
// loads and three block barriers per column (~3 us per column on an H200, whatever the
// height). A panel that one multiprocessor holds needs none of the cross-block exchange.
//
// Layout: thread (warp w, lane c) owns column c, rows w*RPT .. w*RPT+RPT-1, in registers.
// Warps whose rows all lie below the diagonal run unpredicated, vectorized loops.
// Column j's x (the entries below the diagonal), which every lane needs, is in shared memory:
// lane j of each warp publishes its own rows of it, and only its own warp reads them, so a
// warp barrier orders that exchange. Per column j:
//   * every thread forms d_c = sum_{i > j} x_i a(i, c) over its rows, and the warp owning row
//     j also publishes the pivot row a(j, :); the partial sums go to shared memory;
//     -- the block barrier --
//   * every thread adds the W warps' partials for its column c and for column j (the same
//     order everywhere, so every thread computes the same beta, tau and scale);
//   * y_c = a(j, c) + scale * d_c. For c > j that is v^T a_c, and a_c -= v (tau y_c); for
//     c < j, a(:, c) already holds v_c, so y_c = v_c^T v_j: column j of G = V^T V, which is
//     all larft needs. T costs no extra pass over the panel: lanes c < j would otherwise idle.
// Scaling: as the cluster kernel, a column whose squares over- or underflow takes LAPACK's
// scaled path (max |x|, a scaled sum of squares, the dots with v itself), uniform over the
// block because every thread saw the same sum.
#include <cuda_runtime.h>

#include <atomic>
#include <cfloat>
#include <cstdlib>
#include <mutex>

#include "src/core/blocked_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/pdl.cuh"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda {
namespace {

constexpr int kWidth = kPanelMaxWidth;

/// Sum of the W warps' values s[w][c], pairwise (short dependency chains, the same order in
/// every thread), written out so that nothing lands in local memory.
template <int W, class T>
__device__ __forceinline__ T sum_warps(const T (*s)[kWidth], int c) {
  static_assert(W == 4 || W == 8 || W == 16, "4, 8 or 16 warps");
  if constexpr (W == 4) {
    return (s[0][c] + s[2][c]) + (s[1][c] + s[3][c]);
  } else if constexpr (W == 8) {
    return ((s[0][c] + s[4][c]) + (s[2][c] + s[6][c])) +
           ((s[1][c] + s[5][c]) + (s[3][c] + s[7][c]));
  } else {
    const T a0 = s[0][c] + s[8][c], a1 = s[1][c] + s[9][c], a2 = s[2][c] + s[10][c],
            a3 = s[3][c] + s[11][c], a4 = s[4][c] + s[12][c], a5 = s[5][c] + s[13][c],
            a6 = s[6][c] + s[14][c], a7 = s[7][c] + s[15][c];
    return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7));
  }
}

/// kVec consecutive entries of shared memory at p (16-byte aligned where kVec > 1).
template <class T, int kVec>
struct Vec;
template <class T>
struct Vec<T, 1> {
  T v[1];
  __device__ __forceinline__ explicit Vec(const T* p) { v[0] = *p; }
};
template <>
struct Vec<double, 2> {
  double v[2];
  __device__ __forceinline__ explicit Vec(const double* p) {
    const double2 q = *reinterpret_cast<const double2*>(p);
    v[0] = q.x;
    v[1] = q.y;
  }
};
template <>
struct Vec<float, 4> {
  float v[4];
  __device__ __forceinline__ explicit Vec(const float* p) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  }
};

/// The widest vector load that a thread's RPT rows split into.
template <class T, int RPT>
__host__ __device__ constexpr int vec_width() {
  constexpr int w = 16 / static_cast<int>(sizeof(T));
  return RPT % w == 0 ? w : 1;
}

/// The leading dimension of the shared-memory stage: 16-byte aligned column starts.
template <class T, int W, int RPT>
__host__ __device__ constexpr int panel_ld() {
  return W * RPT + 16 / static_cast<int>(sizeof(T));
}

template <class T, int W, int RPT>
__global__ void __launch_bounds__(W * 32, 1)
    panel_single_kernel(T* a, std::int64_t lda, int h, int b, T* tau_out, T* v, std::int64_t ldv,
                        T* t, std::int64_t ldt, const int* skip) {
  pdl::enter();
  if (skip != nullptr && *skip == 1) return;  // the AH panel (panel_qr_ah.cu) factored it
  constexpr int kThreads = W * 32;
  constexpr int kRows = W * RPT;
  constexpr int kVec = vec_width<T, RPT>();
  // Column starts 16-byte aligned (vector loads of x); the load and store phases see some
  // bank conflicts for it, the per-column loop none (x is a broadcast).
  constexpr int ld = panel_ld<T, W, RPT>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_a = reinterpret_cast<T*>(smem_raw);  // kRows x b: the load/store stage, and x
  __shared__ T s_red[2][W][kWidth];    // per-warp partial sums, double-buffered
  __shared__ T s_top[2][kWidth];            // the pivot row
  __shared__ T s_slow[W][kWidth];      // the scaled path's reductions
  __shared__ T s_g[kWidth][kWidth + 1];     // G(c, j) above the diagonal, then T
  __shared__ T s_tau[kWidth];
  __shared__ T s_diag[kWidth];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int row0 = warp * RPT;

  // Coalesced load through shared memory; padding rows are zero (they enter dot products).
  for (int e = tid; e < kRows * b; e += kThreads) {
    const int c = e / kRows, i = e - c * kRows;
    s_a[i + c * ld] = i < h ? a[i + c * lda] : T(0);
  }
  __syncthreads();
  T r[RPT];
#pragma unroll
  for (int u = 0; u < RPT; ++u) r[u] = lane < b ? s_a[row0 + u + lane * ld] : T(0);

  for (int j = 0; j < b; ++j) {
    const int buf = j & 1;
    const T* xcol = s_a + j * ld;  // rows > j current (this warp's rows written by lane j)
    T d0 = 0, d1 = 0, d2 = 0, d3 = 0, top = 0;
    if (row0 > j) {  // warp-uniform: every row of this warp is below the diagonal
#pragma unroll
      for (int u = 0; u < RPT; u += kVec) {
        const Vec<T, kVec> x(xcol + row0 + u);
#pragma unroll
        for (int q = 0; q < kVec; ++q) {
          const int k = (u + q) & 3;
          T& d = k == 0 ? d0 : (k == 1 ? d1 : (k == 2 ? d2 : d3));
          d += x.v[q] * r[u + q];
        }
      }
    } else if (row0 + RPT > j) {  // the warp holding the pivot row
#pragma unroll
      for (int u = 0; u < RPT; ++u) {
        const int i = row0 + u;
        if (i > j) d0 += xcol[i] * r[u];
        if (i == j) top = r[u];
      }
    }
    s_red[buf][warp][lane] = (d0 + d1) + (d2 + d3);
    if (row0 <= j && j < row0 + RPT) s_top[buf][lane] = top;
    __syncthreads();

    const T dsum = sum_warps<W, T>(s_red[buf], lane);
    // Column j's own sum is ||x||^2: lane j just added it up, in the same order as every
    // thread would.
    const T xn2 = __shfl_sync(0xffffffffu, dsum, j);
    const T alpha = s_top[buf][j];
    const T topc = s_top[buf][lane];
    const bool has_below = j + 1 < h;
    const bool rescale = has_below && !(xn2 >= SafeRange<T>::small && xn2 <= SafeRange<T>::big);
    T xnorm = 0;
    if (rescale) {  // uniform: every thread computed the same xn2
      T mx = 0;
#pragma unroll
      for (int u = 0; u < RPT; ++u)
        if (row0 + u > j) mx = max(mx, abs(xcol[row0 + u]));
      if (lane == 0) s_slow[warp][0] = mx;  // every lane of a warp has the same rows
      __syncthreads();
      T sc = 0;
      for (int w = 0; w < W; ++w) sc = max(sc, s_slow[w][0]);
      __syncthreads();
      T ss = 0;
      if (sc > 0) {
#pragma unroll
        for (int u = 0; u < RPT; ++u)
          if (row0 + u > j) {
            const T q = xcol[row0 + u] / sc;
            ss += q * q;
          }
      }
      if (lane == 0) s_slow[warp][0] = ss;
      __syncthreads();
      T tot = 0;
      for (int w = 0; w < W; ++w) tot += s_slow[w][0];
      xnorm = sc * sqrt(tot);
      __syncthreads();
    }

    T beta = alpha, tau = 0, scale = 0;
    const T a2 = alpha * alpha;
    if (has_below && (rescale ? xnorm != 0 : true)) {  // otherwise H = I, as LAPACK's larfg
      // In the safe range sqrt(alpha^2 + ||x||^2) needs no scaling (an alpha^2 that underflows
      // is below ||x||^2's rounding); otherwise hypot.
      const T norm = (!rescale && a2 <= SafeRange<T>::big) ? sqrt(a2 + xn2)
                                                         : hypot(alpha, rescale ? xnorm : sqrt(xn2));
      beta = alpha >= 0 ? -norm : norm;
      tau = (beta - alpha) / beta;
      scale = T(1) / (alpha - beta);
    }
    T y = topc + scale * dsum;
    if (rescale) {  // v^T a_c from v = scale x itself: no squares of tiny or huge entries
      T dd = 0;
#pragma unroll
      for (int u = 0; u < RPT; ++u)
        if (row0 + u > j) dd += (xcol[row0 + u] * scale) * r[u];
      s_slow[warp][lane] = dd;
      __syncthreads();
      y = topc + sum_warps<W, T>(s_slow, lane);
      __syncthreads();
    }

    const bool upd = lane > j && lane < b;
    const T w = tau * y;
    if (row0 > j) {
      // Warps wholly below the diagonal: lanes c > j take a_c -= x (scale w_c), lane j's
      // column becomes v_j = scale x, the other lanes keep theirs; one instruction stream for
      // all (no divergent branches): r = fma(x, -sw, r * keep) with (keep, sw) = (1, scale w)
      // for c > j, (scale, 0) for c = j and (1, 0) otherwise, which rounds exactly as the
      // separate updates would.
      const T sw = upd ? scale * w : T(0);
      const T keep = lane == j ? scale : T(1);
#pragma unroll
      for (int u = 0; u < RPT; u += kVec) {
        const Vec<T, kVec> x(xcol + row0 + u);
#pragma unroll
        for (int q = 0; q < kVec; ++q) r[u + q] = fma(x.v[q], -sw, r[u + q] * keep);
      }
    } else if (row0 + RPT > j) {  // the warp holding the pivot row
      if (upd) {
        const T sw = scale * w;
#pragma unroll
        for (int u = 0; u < RPT; ++u) {
          const int i = row0 + u;
          if (i > j) r[u] -= xcol[i] * sw;
          else if (i == j) r[u] = topc - w;
        }
      } else if (lane == j) {
#pragma unroll
        for (int u = 0; u < RPT; ++u) {
          const int i = row0 + u;
          if (i > j) r[u] *= scale;
          else if (i == j) r[u] = beta;
        }
      }
    }
    if (lane < j && warp == 0) s_g[lane][j] = y;  // G(lane, j) = v_lane^T v_j
    if (tid == 0) {
      s_tau[j] = tau;
      tau_out[j] = tau;
    }
    if (lane == j + 1 && lane < b) {  // publish the next x: this warp's rows only
      T* dst = s_a + row0 + lane * ld;
      if constexpr (kVec == 2) {
#pragma unroll
        for (int u = 0; u < RPT; u += 2)
          *reinterpret_cast<double2*>(dst + u) = make_double2(r[u], r[u + 1]);
      } else if constexpr (kVec == 4) {
#pragma unroll
        for (int u = 0; u < RPT; u += 4)
          *reinterpret_cast<float4*>(dst + u) = make_float4(r[u], r[u + 1], r[u + 2], r[u + 3]);
      } else {
#pragma unroll
        for (int u = 0; u < RPT; ++u) dst[u] = r[u];
      }
    }
    __syncwarp();
  }

  // Results back through shared memory, coalesced: R and V in place, the explicit V.
  if (lane < b) {
#pragma unroll
    for (int u = 0; u < RPT; ++u) s_a[row0 + u + lane * ld] = r[u];
  }
  __syncthreads();
  for (int e = tid; e < h * b; e += kThreads) {
    const int c = e / h, i = e - c * h;
    const T x = s_a[i + c * ld];
    a[i + c * lda] = x;
    v[i + c * ldv] = i > c ? x : (i == c ? T(1) : T(0));
  }
  if (t == nullptr || tid >= kWidth) return;
  // T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i), T(i, i) = tau_i (larft's recurrence). Row r of T
  // depends only on row r: thread r keeps T(r, c) (c > r) in s_g[c][r], below G's entries.
  const int rr = tid;
  for (int i = 0; i < b; ++i) {
    const T ti = s_tau[i];
    if (rr < i) {
      T acc0 = s_diag[rr] * s_g[rr][i], acc1 = 0;
      int c = rr + 1;
      for (; c + 1 < i; c += 2) {
        acc0 += s_g[c][rr] * s_g[c][i];
        acc1 += s_g[c + 1][rr] * s_g[c + 1][i];
      }
      if (c < i) acc0 += s_g[c][rr] * s_g[c][i];
      s_g[i][rr] = -ti * (acc0 + acc1);
    }
    if (rr == i) s_diag[rr] = ti;
  }
  if (rr < b)
    for (int c = 0; c < b; ++c)
      t[rr + c * ldt] = rr < c ? s_g[c][rr] : (rr == c ? s_diag[rr] : T(0));
}

template <class T, int W, int RPT>
std::size_t smem_bytes(int b) {
  return static_cast<std::size_t>(panel_ld<T, W, RPT>()) * b * sizeof(T);
}

/// Opts every instantiation in to the shared memory its widest panel needs, once per device.
template <class T, int W, int RPT>
void allow(int device) {
  static std::mutex mutex;
  static bool done[64] = {};
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= 0 && device < 64 && done[device]) return;
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(panel_single_kernel<T, W, RPT>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem_bytes<T, W, RPT>(kWidth))));
  if (device >= 0 && device < 64) done[device] = true;
}

template <class T, int W, int RPT>
void launch(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau, MatrixView<T> v,
            MatrixView<T> t, const int* skip) {
  allow<T, W, RPT>(ctx.device);
  const int b = static_cast<int>(panel.cols());
  pdl::launch(ctx.device, panel_single_kernel<T, W, RPT>, dim3(1), dim3(W * 32),
              smem_bytes<T, W, RPT>(b), ctx.stream, panel.data(), panel.ld(),
              static_cast<int>(panel.rows()), b, tau.data(), v.data(), v.ld(),
              t.empty() ? nullptr : t.data(), t.ld(), skip);
}

std::atomic<int> mode_override{-1};  // panel_qr_single_block(): -1 default, 0 off, 1 on

bool enabled() {
  const int mode = mode_override.load();
  if (mode >= 0) return mode == 1;
  static const bool on = [] {
    const char* text = std::getenv("GPUQR_PANEL_SINGLE");
    return text == nullptr || std::atoi(text) != 0;
  }();
  return on;
}

}  // namespace

void panel_qr_single_block(int mode) { mode_override.store(mode); }
int panel_qr_single_override() { return mode_override.load(); }

std::int64_t panel_qr_single_rows(int elem_bytes) {
  if (!enabled()) return 0;
  // Where it beat the cluster kernel on an H100 (gpuqr_panel_bench, b = 32): FP64 1.1x at
  // 512 rows but 0.9x at 640; FP32 1.2x at 640 but 0.85x at 1024.
  return elem_bytes == 8 ? 512 : 640;
}

template <class T>
bool panel_qr_single(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                     MatrixView<T> v, MatrixView<T> t, const int* skip) {
  const std::int64_t h = panel.rows(), b = panel.cols();
  if (b < 1 || b > kWidth || h < b || h > panel_qr_single_rows(sizeof(T))) return false;
  // Every warp repeats the per-column scalar work (sums, norm, tau), so short panels take as
  // few warps as hold them; taller ones take more warps rather than more rows per thread
  // (measured: 4 warps x 64 rows ran 1.2x slower than 16 x 16 at 256 rows).
  if (h <= 16) launch<T, 4, 4>(ctx, panel, tau, v, t, skip);
  else if (h <= 32) launch<T, 4, 8>(ctx, panel, tau, v, t, skip);
  else if (h <= 64) launch<T, 4, 16>(ctx, panel, tau, v, t, skip);
  else if (h <= 128) launch<T, 8, 16>(ctx, panel, tau, v, t, skip);
  else if (h <= 256) launch<T, 16, 16>(ctx, panel, tau, v, t, skip);
  else if (h <= 512) launch<T, 16, 32>(ctx, panel, tau, v, t, skip);
  else if constexpr (sizeof(T) == 4) launch<T, 16, 40>(ctx, panel, tau, v, t, skip);
  else return false;
  return true;
}

template bool panel_qr_single<float>(detail::ContextImpl&, MatrixView<float>, VectorView<float>,
                                     MatrixView<float>, MatrixView<float>, const int*);
template bool panel_qr_single<double>(detail::ContextImpl&, MatrixView<double>,
                                      VectorView<double>, MatrixView<double>, MatrixView<double>,
                                      const int*);

}  // namespace gpuqr::kernels::cuda
