// CUDA backend of the blocked-QR leaves (src/core/blocked_kernels.hpp): the fused panel
// kernel (panel_qr.cu), small kernels for V and T, and cuBLAS GEMMs for the rest. T's
// off-diagonal blocks come from doubling merges, by default two strided-batched GEMMs per
// level (GPUQR_LARFT_MERGE=trmm: two cuBLAS TRMMs per merge; =kernel: one merge kernel per
// level); larfb's op(T) W is a GEMM (its TRMM only with GPUQR_LARFB_TRMM=1). Everything is
// enqueued on the context's stream; nothing here synchronizes or allocates (the panel
// kernel's partial sums and larfb's second product live in the leaf workspace, grown once).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/larfb_small.hpp"
#include "src/cuda/larfb_tf32.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/panel_qr_ah_step.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;
constexpr int kTile = 32;  // larft's diagonal blocks: one thread block each

cublasHandle_t blas(const detail::ContextImpl& ctx) {
  return static_cast<cublasHandle_t>(ctx.cublas);
}

dim3 grid_2d(std::int64_t rows, std::int64_t cols) {
  const std::int64_t bx = std::min<std::int64_t>((rows + kThreads - 1) / kThreads, 65535);
  const std::int64_t by = std::min<std::int64_t>(cols, 65535);
  return dim3(static_cast<unsigned>(std::max<std::int64_t>(bx, 1)),
              static_cast<unsigned>(std::max<std::int64_t>(by, 1)));
}

// ---- device code ------------------------------------------------------------------------------

/// v(i, j) = qr(i, j) below the diagonal, 1 on it, 0 above (grid-stride, 64-bit indices).
template <class T>
__global__ void form_v_kernel(const T* qr, std::int64_t ldq, T* v, std::int64_t ldv,
                              std::int64_t m, std::int64_t k) {
  for (std::int64_t j = blockIdx.y; j < k; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < m;
         i += std::int64_t(gridDim.x) * blockDim.x)
      v[i + j * ldv] = i > j ? qr[i + j * ldq] : (i == j ? T(1) : T(0));
}

template <class T>
__global__ void laset_kernel(T* a, std::int64_t lda, std::int64_t m, std::int64_t n, T off,
                             T diag) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < m;
         i += std::int64_t(gridDim.x) * blockDim.x)
      a[i + j * lda] = i == j ? diag : off;
}

/// T's diagonal kTile x kTile blocks from the Gram matrix G = V^T V (upper triangle valid):
/// T = [T11 T12; 0 T22] with T12 = -T11 G12 T22 (the block form of LAPACK larft's recurrence
/// T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i), T(i, i) = tau_i), by doubling inside the tile:
/// blocks of 1, 2, 4, 8, 16 merged in log2(kTile) levels of short products (W = G12 T22,
/// then T12 = -T11 W) instead of kTile dependent steps of a serial recurrence. One thread
/// block of kTileThreads per diagonal block, all in shared memory; below the diagonal 0.
constexpr int kTileThreads = 256;
template <class T>
__global__ void __launch_bounds__(kTileThreads)
    larft_tiles_kernel(const T* g, std::int64_t ldg, const T* tau, T* t, std::int64_t ldt,
                       int k) {
  __shared__ T s_g[kTile][kTile + 1];  // [row][col]: lanes run over rows, stride 33
  __shared__ T s_t[kTile][kTile + 1];
  __shared__ T s_w[kTile][kTile + 1];
  const int base = blockIdx.x * kTile;
  const int nb = min(kTile, k - base);
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
    const int r = idx % kTile, c = idx / kTile;
    const bool in = r < nb && c < nb;
    s_g[r][c] = in ? g[(base + r) + std::int64_t(base + c) * ldg] : T(0);
    s_t[r][c] = in && r == c ? tau[base + r] : T(0);
  }
  __syncthreads();
  for (int sz = 1; sz < nb; sz *= 2) {
    // Entry (i, j) of an off-diagonal block of this level: i in [p, p + sz), j in
    // [p + sz, p + 2 sz) for p = i rounded down to a multiple of 2 sz.
    for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
      const int i = idx % kTile, j = idx / kTile, p = i / (2 * sz) * (2 * sz);
      if (i - p >= sz || j < p + sz || j >= p + 2 * sz || j >= nb) continue;
      T acc = 0;
      for (int l = p + sz; l <= j; ++l) acc += s_g[i][l] * s_t[l][j];  // G12 T22 (upper)
      s_w[i][j] = acc;
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
      const int i = idx % kTile, j = idx / kTile, p = i / (2 * sz) * (2 * sz);
      if (i - p >= sz || j < p + sz || j >= p + 2 * sz || j >= nb) continue;
      T acc = 0;
      for (int l = i; l < p + sz; ++l) acc += s_t[i][l] * s_w[l][j];  // T11 (upper) W
      s_t[i][j] = -acc;
    }
    __syncthreads();
  }
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
    const int r = idx % kTile, c = idx / kTile;
    if (r < nb && c < nb) t[(base + r) + std::int64_t(base + c) * ldt] = c >= r ? s_t[r][c] : T(0);
  }
}

/// T(i, j) := G(i, j) for the entries right of the diagonal kTile blocks (j >= the end of
/// i's tile), where the merges (trmm) turn them into T's off-diagonal blocks, and 0 below
/// them. Rows are threads (coalesced), columns blocks.
template <class T>
__global__ void copy_offdiag_kernel(const T* g, std::int64_t ldg, T* t, std::int64_t ldt, int k) {
  for (std::int64_t j = blockIdx.y; j < k; j += gridDim.y) {
    const std::int64_t tile_start = j / kTile * kTile;  // rows before it are off-diagonal
    const std::int64_t tile_end = tile_start + kTile;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < k;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      if (i < tile_start) t[i + j * ldt] = g[i + j * ldg];
      else if (i >= tile_end) t[i + j * ldt] = T(0);
    }
  }
}

/// The widest T11 a merge kernel takes (its X = G12 T22 tile, kMergeRows x kTile, lives in
/// shared memory: 32 KB in FP64); wider levels (k > 2 kMergeRows) go through cuBLAS TRMM.
constexpr int kMergeRows = 128;
constexpr int kMergeThreads = 256;  // 8 warps: lanes over rows, warps over columns
constexpr int kMergeRowsPerThread = kMergeRows / 32;
constexpr int kMergeColsPerThread = kTile / (kMergeThreads / 32);

/// One doubling level of T's off-diagonal blocks, all merges at once: merge blockIdx.x joins
/// the width x width T11 at s = 2 width blockIdx.x with the w2 x w2 T22 after it (both
/// final from the levels before: only their upper triangles are read), and writes
/// T12 = -T11 (G12 T22) for its kTile columns (blockIdx.y) and 0 into the matching rows of
/// T21. G12 is read from the Gram matrix (T and G share no memory), so no block reads what
/// another one writes. X = G12 T22 goes through shared memory, T11, G12 and T22 straight from
/// global memory: lanes over rows make their loads coalesced, the other factor's entry is
/// the same across a warp (a broadcast).
template <class T>
__global__ void __launch_bounds__(kMergeThreads)
    merge_level_kernel(const T* __restrict__ g, std::int64_t ldg, T* __restrict__ t,
                       std::int64_t ldt, int k, int width) {
  __shared__ T s_x[kTile][kMergeRows];  // X(i, j) at s_x[j][i]: lanes write consecutive i
  const int s = 2 * width * blockIdx.x;
  const int w2 = min(width, k - s - width);
  const int c0 = kTile * blockIdx.y;
  if (c0 >= w2) return;  // the whole block: the last merge can be narrower than the first
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int ra = width / 32;  // rows per lane (width is a multiple of 32, <= kMergeRows)
  const T* g12 = g + s + std::int64_t(s + width) * ldg;
  const T* t11 = t + s + std::int64_t(s) * ldt;
  const T* t22 = t + (s + width) + std::int64_t(s + width) * ldt;
  T acc[kMergeRowsPerThread][kMergeColsPerThread];
  // X(i, j) = sum_{l <= j} G12(i, l) T22(l, j) for the tile's columns j (T22 upper).
#pragma unroll
  for (int a = 0; a < kMergeRowsPerThread; ++a)
#pragma unroll
    for (int b = 0; b < kMergeColsPerThread; ++b) acc[a][b] = T(0);
  const int lend = min(c0 + kTile, w2);
#pragma unroll 4  // several iterations' loads in flight: the loop is latency-bound
  for (int l = 0; l < lend; ++l) {
    T tv[kMergeColsPerThread];
#pragma unroll
    for (int b = 0; b < kMergeColsPerThread; ++b) {
      const int j = c0 + warp + 8 * b;
      tv[b] = (j < w2 && l <= j) ? t22[l + std::int64_t(j) * ldt] : T(0);
    }
#pragma unroll
    for (int a = 0; a < kMergeRowsPerThread; ++a) {
      if (a >= ra) break;
      const T gv = g12[(lane + 32 * a) + std::int64_t(l) * ldg];
#pragma unroll
      for (int b = 0; b < kMergeColsPerThread; ++b) acc[a][b] += gv * tv[b];
    }
  }
#pragma unroll
  for (int a = 0; a < kMergeRowsPerThread; ++a) {
    if (a >= ra) break;
#pragma unroll
    for (int b = 0; b < kMergeColsPerThread; ++b) s_x[warp + 8 * b][lane + 32 * a] = acc[a][b];
  }
  __syncthreads();
  // T12(i, j) = -sum_{l >= i} T11(i, l) X(l, j) (T11 upper).
#pragma unroll
  for (int a = 0; a < kMergeRowsPerThread; ++a)
#pragma unroll
    for (int b = 0; b < kMergeColsPerThread; ++b) acc[a][b] = T(0);
#pragma unroll 4
  for (int l = 0; l < width; ++l) {
    T xv[kMergeColsPerThread];
#pragma unroll
    for (int b = 0; b < kMergeColsPerThread; ++b) xv[b] = s_x[warp + 8 * b][l];
#pragma unroll
    for (int a = 0; a < kMergeRowsPerThread; ++a) {
      if (a >= ra) break;
      const int i = lane + 32 * a;
      const T tv = i <= l ? t11[i + std::int64_t(l) * ldt] : T(0);
#pragma unroll
      for (int b = 0; b < kMergeColsPerThread; ++b) acc[a][b] += tv * xv[b];
    }
  }
#pragma unroll
  for (int b = 0; b < kMergeColsPerThread; ++b) {
    const int j = c0 + warp + 8 * b;
    if (j >= w2) continue;
#pragma unroll
    for (int a = 0; a < kMergeRowsPerThread; ++a) {
      if (a >= ra) break;
      t[(s + lane + 32 * a) + std::int64_t(s + width + j) * ldt] = -acc[a][b];
    }
  }
  // T21 = 0: its rows s + width + c0 .. (the tile's columns of T12, mirrored), lanes over
  // rows for coalescing; the rest of the code (larfb's GEMM with T) relies on these zeros.
  const int j = c0 + lane;
  if (j < w2)
    for (int c = warp; c < width; c += kMergeThreads / 32)
      t[(s + width + j) + std::int64_t(s + c) * ldt] = T(0);
}

// ---- cuBLAS overloads (the _64 forms take 64-bit sizes) --------------------------------------

void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
          std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasSgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
          std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda,
          const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasDgemm_64(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}
void gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                  std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                  std::int64_t sa, const float* b, std::int64_t ldb, std::int64_t sb, float beta,
                  float* c, std::int64_t ldc, std::int64_t sc, std::int64_t batch) {
  GPUQR_CUBLAS_CHECK(cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb,
                                                  sb, &beta, c, ldc, sc, batch));
}
void gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                  std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda,
                  std::int64_t sa, const double* b, std::int64_t ldb, std::int64_t sb,
                  double beta, double* c, std::int64_t ldc, std::int64_t sc, std::int64_t batch) {
  GPUQR_CUBLAS_CHECK(cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb,
                                                  sb, &beta, c, ldc, sc, batch));
}
// G = A^T A through GEMM rather than SYRK: for the tall-thin A here (k >> n) cuBLAS's SYRK
// runs far below the memory bandwidth, while GEMM splits the long reduction (twice the flops
// of SYRK, negligible next to the rest of a factorization).
void syrk_upper_t(cublasHandle_t h, std::int64_t n, std::int64_t k, const float* a,
                  std::int64_t lda, float* c, std::int64_t ldc) {
  gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, k, 1.0f, a, lda, a, lda, 0.0f, c, ldc);
}
void syrk_upper_t(cublasHandle_t h, std::int64_t n, std::int64_t k, const double* a,
                  std::int64_t lda, double* c, std::int64_t ldc) {
  gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, k, 1.0, a, lda, a, lda, 0.0, c, ldc);
}
/// C := alpha op(A) C (left) or alpha C op(A) (right), A upper triangular, in place.
void trmm_upper(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, std::int64_t m,
                std::int64_t n, float alpha, const float* a, std::int64_t lda, float* c,
                std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasStrmm_64(h, side, CUBLAS_FILL_MODE_UPPER, op, CUBLAS_DIAG_NON_UNIT, m,
                                    n, &alpha, a, lda, c, ldc, c, ldc));
}
void trmm_upper(cublasHandle_t h, cublasSideMode_t side, cublasOperation_t op, std::int64_t m,
                std::int64_t n, double alpha, const double* a, std::int64_t lda, double* c,
                std::int64_t ldc) {
  GPUQR_CUBLAS_CHECK(cublasDtrmm_64(h, side, CUBLAS_FILL_MODE_UPPER, op, CUBLAS_DIAG_NON_UNIT, m,
                                    n, &alpha, a, lda, c, ldc, c, ldc));
}

cublasOperation_t to_cublas(Op op) { return op == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

std::int64_t max_panel_width(detail::ContextImpl& ctx, int elem_bytes, std::int64_t h) {
  return panel_qr_max_width(ctx.device, elem_bytes, h);
}

namespace {
/// Whether the AH panel can take an h x b panel too tall for the fused kernels (it then runs
/// with a host check of its status, panel_qr_ah_only, where no fused kernel can stand in).
bool tall_ah_panel(int device, int elem_bytes, std::int64_t h, std::int64_t b) {
  const std::int64_t min_rows = panel_qr_ah_min_rows(elem_bytes);
  return b >= 2 && b <= kPanelMaxWidth && h >= 2 * b && min_rows > 0 && h >= min_rows &&
         !panel_qr_fused_fits(device, elem_bytes, h, static_cast<int>(b));
}
}  // namespace

bool panel_waits_for_host(detail::ContextImpl& ctx, int elem_bytes, std::int64_t h,
                          std::int64_t b) {
  return tall_ah_panel(ctx.device, elem_bytes, h, b);
}

template <class T>
void form_v(detail::ContextImpl& ctx, MatrixView<const T> qr, MatrixView<T> v) {
  if (qr.empty()) return;
  DeviceGuard guard(ctx.device);
  form_v_kernel<T><<<grid_2d(qr.rows(), qr.cols()), kThreads, 0, ctx.stream>>>(
      qr.data(), qr.ld(), v.data(), v.ld(), qr.rows(), qr.cols());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void laset(detail::ContextImpl& ctx, T off, T diag, MatrixView<T> a) {
  if (a.empty()) return;
  DeviceGuard guard(ctx.device);
  laset_kernel<T><<<grid_2d(a.rows(), a.cols()), kThreads, 0, ctx.stream>>>(
      a.data(), a.ld(), a.rows(), a.cols(), off, diag);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void panel_qr(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
              MatrixView<T> v, MatrixView<T> t) {
  if (panel.empty()) return;
  DeviceGuard guard(ctx.device);
  const int b = static_cast<int>(panel.cols());
  const std::int64_t elems = panel_qr_workspace_elems(panel.rows(), b);
  T* ws = static_cast<T*>(detail::cuda_workspace(
      ctx, static_cast<std::size_t>(elems + panel_qr_ah_workspace_elems(panel.rows())) *
               sizeof(T)));
  // The AH panel first where the fused kernel can stand in for it (its status decides on
  // the device which of the two factors the panel).
  const int* skip = panel_qr_fused_fits(ctx.device, static_cast<int>(sizeof(T)), panel.rows(), b)
                        ? panel_qr_ah<T>(ctx, panel, tau, v, t, ws + elems)
                        : nullptr;
  if (panel_qr_fused<T>(ctx, panel, tau, v, t, ws, skip)) return;
  // Too tall for the fused kernels' shared memory (over ~115k rows in FP64, ~230k in FP32 at
  // 32 columns): the AH panel, whose status is read back here (the one wait: nothing on the
  // device can take over where it declines), else cuSOLVER's geqrf on the panel, V, then T
  // (its Gram scratch: the leaf workspace, free again once geqrf is enqueued before it).
  // cuSOLVER's geqrf on these panels is a batched QR of row blocks and their Q formed
  // (measured on an H200, 1048576 x 32 FP64: about 5 ms a panel; the AH panel reads the panel
  // twice and writes it once, ~0.3 ms). A graph capture cannot wait: it runs directly.
  if (tall_ah_panel(ctx.device, static_cast<int>(sizeof(T)), panel.rows(), b)) {
    if (ctx.capturing) throw detail::GraphCaptureAbort{"a tall panel's status is read back"};
    if (panel_qr_ah_only<T>(ctx, panel, tau, v, t)) return;
  }
  geqrf<T>(ctx, panel, tau);
  form_v<T>(ctx, MatrixView<const T>(panel), v);
  if (!t.empty()) {
    const std::int64_t b = panel.cols();
    T* g = static_cast<T*>(detail::cuda_workspace(ctx, static_cast<std::size_t>(b * b) * sizeof(T)));
    larft<T>(ctx, MatrixView<const T>(v), VectorView<const T>(tau), t,
             MatrixView<T>(g, b, b, b, MemorySpace::device, ctx.device));
  }
}

template <class T>
void panel_qr_update(detail::ContextImpl& ctx, MatrixView<T> panel, std::int64_t ib,
                     VectorView<T> tau, MatrixView<T> v, MatrixView<T> t, MatrixView<T> work) {
  if (panel.empty()) return;
  const std::int64_t h = panel.rows(), w = panel.cols();
  if (!t.empty() &&
      panel_qr_ah_step_wanted(ctx.device, static_cast<int>(sizeof(T)), h, ib, w - ib)) {
    DeviceGuard guard(ctx.device);
    const std::int64_t step = panel_qr_ah_step_workspace_elems();
    const std::int64_t elems = step + panel_qr_workspace_elems(h, static_cast<int>(ib));
    T* ws =
        static_cast<T*>(detail::cuda_workspace(ctx, static_cast<std::size_t>(elems) * sizeof(T)));
    if (panel_qr_ah_step<T>(ctx, panel, tau, v, t, ws, ws + step)) return;
  }
  panel_qr<T>(ctx, panel.block(0, 0, h, ib), tau, v, t);
  if (w > ib) {
    larfb<T>(ctx, Side::left, Op::trans, MatrixView<const T>(v), MatrixView<const T>(t),
             panel.block(0, ib, h, w - ib), work);
  }
}

template <class T>
bool panel_qr_ah_only(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                      MatrixView<T> v, MatrixView<T> t) {
  DeviceGuard guard(ctx.device);
  T* ws = static_cast<T*>(detail::cuda_workspace(
      ctx, static_cast<std::size_t>(panel_qr_ah_workspace_elems(panel.rows())) * sizeof(T)));
  const int* status = panel_qr_ah<T>(ctx, panel, tau, v, t, ws);
  if (status == nullptr) return false;
  int host = -1;
  GPUQR_CUDA_CHECK(cudaMemcpyAsync(&host, status, sizeof(int), cudaMemcpyDeviceToHost, ctx.stream));
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return host == 1;
}

template bool panel_qr_ah_only<float>(detail::ContextImpl&, MatrixView<float>,
                                      VectorView<float>, MatrixView<float>, MatrixView<float>);
template bool panel_qr_ah_only<double>(detail::ContextImpl&, MatrixView<double>,
                                       VectorView<double>, MatrixView<double>,
                                       MatrixView<double>);

namespace {

std::atomic<int> trmm_override{-1};   // larfb_trmm_mode(): -1 default, 0 off, 1 on
std::atomic<int> merge_override{-1};  // larft_merge_mode(): -1 default, else a LarftMerge

/// How larft builds T's off-diagonal blocks. Batched GEMMs by default: per doubling level two
/// launches whatever the number of merges, where cuBLAS TRMM costs two launches of 5-17 us
/// per merge (14 for k = 256: ncu, H100, session 5) and the merge kernel is latency-bound
/// (4 blocks per level at k = 256; it measured slower than the TRMMs). GPUQR_LARFT_MERGE
/// selects another (A/B measurements).
/// Session 7 (H100) kept the TRMMs for V under 2048 rows (geqrf 1024 then took 3.5 ms with the
/// GEMMs against 3.0). Since the in-panel updates and panels got faster, the GEMMs win there
/// too (session 27 run 2, H200, gpuqr_tester geqrf, same call as the TRMMs' default): FP64
/// 1024 1.79-1.83 ms against 1.91-1.92, 2048 4.11-4.18 against 4.32-4.39, 4096 9.75-9.89
/// against 10.18-10.30; FP32 1024 1.60-1.64 against 1.63-1.66, 4096 9.23-9.40 against
/// 9.54-9.66. The merge kernel was slower everywhere (FP64 1024 2.18-2.20 ms, 4096 12.9).
/// `rows` (V's height) no longer decides; kept for a rule by height should one be measured.
LarftMerge merge_method(std::int64_t rows) {
  const int mode = merge_override.load();
  if (mode >= 0) return static_cast<LarftMerge>(mode);
  static const int env = [] {
    const char* text = std::getenv("GPUQR_LARFT_MERGE");
    const std::string name = text == nullptr ? "" : text;
    if (name == "trmm") return static_cast<int>(LarftMerge::trmm);
    if (name == "kernel") return static_cast<int>(LarftMerge::kernel);
    if (name == "gemm") return static_cast<int>(LarftMerge::gemm);
    return -1;
  }();
  if (env >= 0) return static_cast<LarftMerge>(env);
  (void)rows;
  return LarftMerge::gemm;
}
/// Whether larfb multiplies by T with cuBLAS TRMM (GPUQR_LARFB_TRMM=1) instead of a GEMM.
bool use_trmm_larfb() {
  const int mode = trmm_override.load();
  if (mode >= 0) return mode == 1;
  static const bool env = [] {
    const char* text = std::getenv("GPUQR_LARFB_TRMM");
    return text != nullptr && std::atoi(text) == 1;
  }();
  return env;
}

/// One doubling level of T's off-diagonal blocks (T11, T22 of `width` columns final, zeros
/// below their diagonals) as two strided-batched GEMMs over all its merges: X^T = T22^T
/// G12^T, then T12 = -T11 X. X^T goes into G's lower triangle, at G21's place: G is
/// symmetric and only its upper triangle is read, at this level and later, so no scratch
/// is needed and no GEMM reads what it writes. Merge i starts at s = 2 width i, so every
/// operand lies a constant stride 2 width (ld + 1) after the one before. A narrower last
/// merge (k not a multiple of 2 width) gets its own pair.
template <class T>
void merge_level_gemm(detail::ContextImpl& ctx, MatrixView<T> t, MatrixView<T> g,
                      std::int64_t width) {
  const std::int64_t k = t.cols(), ldt = t.ld(), ldg = g.ld();
  cublasHandle_t h = blas(ctx);
  auto merges = [&](std::int64_t s, std::int64_t w2, std::int64_t count) {
    const std::int64_t st = 2 * width * (ldt + 1), sg = 2 * width * (ldg + 1);
    const T* t11 = t.data() + s * (ldt + 1);
    const T* t22 = t.data() + (s + width) * (ldt + 1);
    T* t12 = t.data() + s + (s + width) * ldt;
    const T* g12 = g.data() + s + (s + width) * ldg;
    T* xt = g.data() + (s + width) + s * ldg;  // X^T, w2 x width
    gemm_strided(h, CUBLAS_OP_T, CUBLAS_OP_T, w2, width, w2, T(1), t22, ldt, st, g12, ldg, sg,
                 T(0), xt, ldg, sg, count);
    gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_T, width, w2, width, T(-1), t11, ldt, st, xt, ldg, sg,
                 T(0), t12, ldt, st, count);
  };
  const std::int64_t full = k / (2 * width);  // merges whose T22 is `width` wide
  if (full > 0) merges(0, width, full);
  const std::int64_t s = full * 2 * width;
  if (s + width < k) merges(s, k - s - width, 1);
}

/// T's off-diagonal blocks from G (upper, with T's diagonal kTile blocks in place), by
/// doubling: T12 = -T11 G12 T22 for blocks of kTile, 2 kTile, ... columns, by the method of
/// merge_method(rows): two batched GEMMs per level; or one merge kernel per level (T11 up to
/// kMergeRows wide, writing T's zeros below the diagonal blocks too) with cuBLAS TRMMs for
/// wider levels; or two TRMMs in place per merge. G's lower triangle is overwritten.
template <class T>
void merge_tiles(detail::ContextImpl& ctx, MatrixView<T> t, MatrixView<T> gram,
                 std::int64_t rows) {
  const std::int64_t k = t.cols();
  if (k <= kTile) return;
  const LarftMerge method = merge_method(rows);
  // Every path but the merge kernel needs T21 = 0 written (the GEMMs and TRMMs read T11 and
  // T22 whole), the TRMMs also T12 = G12 to work in place on: the copy kernel does both.
  if (method != LarftMerge::kernel || k > 2 * kMergeRows) {
    copy_offdiag_kernel<T><<<grid_2d(k, k), kThreads, 0, ctx.stream>>>(
        gram.data(), gram.ld(), t.data(), t.ld(), static_cast<int>(k));
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  }
  for (std::int64_t width = kTile; width < k; width *= 2) {
    if (method == LarftMerge::gemm) {
      merge_level_gemm<T>(ctx, t, gram, width);
      continue;
    }
    if (method == LarftMerge::kernel && width <= kMergeRows) {
      const std::int64_t merges = (k - width + 2 * width - 1) / (2 * width);
      const std::int64_t w2max = std::min(width, k - width);  // the first merge's T22
      const dim3 grid(static_cast<unsigned>(merges),
                      static_cast<unsigned>((w2max + kTile - 1) / kTile));
      merge_level_kernel<T><<<grid, kMergeThreads, 0, ctx.stream>>>(
          gram.data(), gram.ld(), t.data(), t.ld(), static_cast<int>(k),
          static_cast<int>(width));
      GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
      continue;
    }
    for (std::int64_t s = 0; s + width < k; s += 2 * width) {
      const std::int64_t w2 = std::min(width, k - s - width);
      T* t11 = t.data() + s + s * t.ld();
      T* t12 = t.data() + s + (s + width) * t.ld();
      T* t22 = t.data() + (s + width) + (s + width) * t.ld();
      trmm_upper(blas(ctx), CUBLAS_SIDE_LEFT, CUBLAS_OP_N, width, w2, T(1), t11, t.ld(), t12,
                 t.ld());
      trmm_upper(blas(ctx), CUBLAS_SIDE_RIGHT, CUBLAS_OP_N, width, w2, T(-1), t22, t.ld(), t12,
                 t.ld());
    }
  }
}

}  // namespace

template <class T>
void larft(detail::ContextImpl& ctx, MatrixView<const T> v, VectorView<const T> tau,
           MatrixView<T> t, MatrixView<T> gram) {
  const std::int64_t k = v.cols();
  if (k == 0) return;
  DeviceGuard guard(ctx.device);
  // One SYRK: G = V^T V (upper). Then T's diagonal tiles by LAPACK's recurrence, and the
  // off-diagonal blocks by merging.
  syrk_upper_t(blas(ctx), k, v.rows(), v.data(), v.ld(), gram.data(), gram.ld());
  const int tiles = static_cast<int>((k + kTile - 1) / kTile);
  larft_tiles_kernel<T><<<tiles, kTileThreads, 0, ctx.stream>>>(gram.data(), gram.ld(), tau.data(),
                                                         t.data(), t.ld(), static_cast<int>(k));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  merge_tiles<T>(ctx, t, gram, v.rows());
}

template <class T>
void larft_known_diagonal(detail::ContextImpl& ctx, MatrixView<const T> v,
                          VectorView<const T> tau, MatrixView<T> t, MatrixView<T> gram,
                          std::int64_t tile) {
  if (tile != kTile) return larft<T>(ctx, v, tau, t, gram);
  const std::int64_t k = v.cols();
  if (k <= kTile) return;  // T is its one diagonal block, already there
  DeviceGuard guard(ctx.device);
  syrk_upper_t(blas(ctx), k, v.rows(), v.data(), v.ld(), gram.data(), gram.ld());
  merge_tiles<T>(ctx, t, gram, v.rows());
}

void larfb_trmm_mode(int mode) { trmm_override.store(mode); }
void larft_merge_mode(int mode) { merge_override.store(mode); }

std::int64_t knob_signature() {
  // Each override is -1..7: four bits each after adding 1.
  const int values[] = {
      trmm_override.load(),       merge_override.load(),       panel_qr_single_override(),
      panel_qr_ah_override(),     panel_qr_ah_warp_override(), panel_qr_ah_step_override(),
      larfb_tf32_override(),      larfb_small_override(),      panel_qr_ah_t_beside_override(),
      panel_qr_ah_read_override()};
  std::int64_t signature = 0;
  for (const int v : values) signature = signature * 16 + (v + 1);
  return signature;
}

template <class T>
void larfb(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> v,
           MatrixView<const T> t, MatrixView<T> c, MatrixView<T> work) {
  const std::int64_t k = v.cols();
  if (c.empty() || k == 0) return;
  DeviceGuard guard(ctx.device);
  cublasHandle_t h = blas(ctx);
  const std::int64_t m = c.rows(), n = c.cols();
  const bool trmm = use_trmm_larfb();
  // op(T) W as one GEMM with the full k x k T rather than an in-place TRMM: cuBLAS's TRMM
  // has a high fixed cost (10-17 us on an H100 even for k = 32), the GEMM's extra flops on
  // T's zeros are few (k^2 n against the 2 m k n of each big GEMM). Every producer of T
  // (larft, larft_known_diagonal, the panel kernels) writes explicit zeros below its
  // diagonal. The product goes into a second k x n (or m x k) scratch: the leaf workspace,
  // which nothing else on this stream holds across leaf calls (grown once, then reused).
  const std::int64_t w2_elems = side == Side::left ? k * n : m * k;
  T* w2 = trmm ? nullptr
               : static_cast<T*>(detail::cuda_workspace(
                     ctx, static_cast<std::size_t>(w2_elems) * sizeof(T)));
  // larfb_tf32_mode(1) asks for the 3xTF32 products on every FP32 left-side call (tests).
  const bool tf32_forced = std::is_same_v<T, float> && larfb_tf32_override() == 1;
  if (side == Side::left && !trmm && !tf32_forced && larfb_small_wanted(m, n, k)) {
    // A few reflectors on a short C (the blocked QR's in-panel updates): one launch instead
    // of three or four GEMMs, each bound by its launch and ramp at these sizes.
    larfb_small<T>(ctx, op, v, t, c);
    return;
  }
  if (side == Side::left) {
    // C := (I - V op(T) V^T) C: W = V^T C; W = op(T) W; C -= V W. FP32 with tall C: both
    // big products on the TF32 tensor cores by the 3xTF32 split (larfb_tf32.cu) where
    // larfb_tf32_wanted says so, each on SGEMM where CUTLASS cannot take it.
    bool tf32 = false, w_done = false;
    if constexpr (std::is_same_v<T, float>) {
      tf32 = larfb_tf32_wanted(m, n, k);
      if (tf32)
        w_done = transposed_product_3xtf32(ctx, v.data(), v.ld(), m, k, c.data(), c.ld(), n,
                                           work.data(), work.ld());
    }
    if (!w_done)
      gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, T(1), v.data(), v.ld(), c.data(), c.ld(), T(0),
           work.data(), work.ld());
    const T* wt = work.data();
    std::int64_t ldwt = work.ld();
    if (trmm) {
      trmm_upper(h, CUBLAS_SIDE_LEFT, to_cublas(op), k, n, T(1), t.data(), t.ld(), work.data(),
                 work.ld());
    } else {
      gemm(h, to_cublas(op), CUBLAS_OP_N, k, n, k, T(1), t.data(), t.ld(), work.data(),
           work.ld(), T(0), w2, k);
      wt = w2;
      ldwt = k;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (tf32 && minus_product_3xtf32(ctx, v.data(), v.ld(), m, k, wt, ldwt, n, c.data(), c.ld()))
        return;
    }
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, T(-1), v.data(), v.ld(), wt, ldwt, T(1),
         c.data(), c.ld());
  } else {
    // C := C (I - V op(T) V^T): W = C V; W = W op(T); C -= W V^T.
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, k, n, T(1), c.data(), c.ld(), v.data(), v.ld(), T(0),
         work.data(), work.ld());
    const T* wt = work.data();
    std::int64_t ldwt = work.ld();
    if (trmm) {
      trmm_upper(h, CUBLAS_SIDE_RIGHT, to_cublas(op), m, k, T(1), t.data(), t.ld(), work.data(),
                 work.ld());
    } else {
      const std::int64_t ldw2 = std::max<std::int64_t>(m, 1);
      gemm(h, CUBLAS_OP_N, to_cublas(op), m, k, k, T(1), work.data(), work.ld(), t.data(),
           t.ld(), T(0), w2, ldw2);
      wt = w2;
      ldwt = ldw2;
    }
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, T(-1), wt, ldwt, v.data(), v.ld(), T(1),
         c.data(), c.ld());
  }
}

GPUQR_INSTANTIATE_BLOCKED_KERNELS(float)
GPUQR_INSTANTIATE_BLOCKED_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
