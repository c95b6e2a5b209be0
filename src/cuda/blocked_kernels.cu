// CUDA backend of the blocked-QR leaves (src/core/blocked_kernels.hpp): the fused panel
// kernel (panel_qr.cu), small kernels for V and T, and cuBLAS GEMM/SYRK/TRMM for the rest.
// Everything is enqueued on the context's stream; nothing here synchronizes or allocates
// (the panel kernel's partial sums live in the leaf workspace, grown once).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/panel_qr.hpp"

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

/// T's diagonal kTile x kTile blocks from the Gram matrix G = V^T V (upper triangle valid), by
/// LAPACK larft's recurrence T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i), T(i, i) = tau_i; one
/// thread block per diagonal block, all in shared memory.
template <class T>
__global__ void larft_tiles_kernel(const T* g, std::int64_t ldg, const T* tau, T* t,
                                   std::int64_t ldt, int k) {
  __shared__ T s_t[kTile][kTile + 1];
  __shared__ T s_g[kTile][kTile + 1];
  const int base = blockIdx.x * kTile;
  const int nb = min(kTile, k - base);
  const int r = threadIdx.x;  // a row of the tile
  for (int c = 0; c < nb; ++c) {
    s_g[r][c] = r < nb ? g[(base + r) + std::int64_t(base + c) * ldg] : T(0);
    s_t[r][c] = 0;
  }
  __syncwarp();
  for (int i = 0; i < nb; ++i) {
    const T ti = tau[base + i];
    if (r < i) {
      T acc = 0;
      for (int c = r; c < i; ++c) acc += s_t[r][c] * s_g[c][i];
      s_t[r][i] = -ti * acc;
    } else if (r == i) {
      s_t[r][i] = ti;
    }
    __syncwarp();
  }
  if (r < nb)
    for (int c = 0; c < nb; ++c) t[(base + r) + std::int64_t(base + c) * ldt] = c >= r ? s_t[r][c] : T(0);
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
      ctx, static_cast<std::size_t>(elems + panel_qr_ah_workspace_elems()) * sizeof(T)));
  // The AH panel first where the fused kernel can stand in for it (its status decides on
  // the device which of the two factors the panel).
  const int* skip = panel_qr_fused_fits(ctx.device, static_cast<int>(sizeof(T)), panel.rows(), b)
                        ? panel_qr_ah<T>(ctx, panel, tau, v, t, ws + elems)
                        : nullptr;
  if (panel_qr_fused<T>(ctx, panel, tau, v, t, ws, skip)) return;
  // Too tall for the fused kernel's shared memory: cuSOLVER's geqrf on the panel, V, then T
  // (its Gram scratch: the leaf workspace, free again once geqrf is enqueued before it).
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
bool panel_qr_ah_only(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                      MatrixView<T> v, MatrixView<T> t) {
  DeviceGuard guard(ctx.device);
  T* ws = static_cast<T*>(detail::cuda_workspace(
      ctx, static_cast<std::size_t>(panel_qr_ah_workspace_elems()) * sizeof(T)));
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

/// T's off-diagonal blocks from G (upper, with T's diagonal kTile blocks in place), by
/// doubling: T12 = -T11 G12 T22, two in-place TRMMs per merge.
template <class T>
void merge_tiles(detail::ContextImpl& ctx, MatrixView<T> t, MatrixView<T> gram) {
  const std::int64_t k = t.cols();
  if (k <= kTile) return;
  copy_offdiag_kernel<T><<<grid_2d(k, k), kThreads, 0, ctx.stream>>>(
      gram.data(), gram.ld(), t.data(), t.ld(), static_cast<int>(k));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  for (std::int64_t width = kTile; width < k; width *= 2) {
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
  larft_tiles_kernel<T><<<tiles, kTile, 0, ctx.stream>>>(gram.data(), gram.ld(), tau.data(),
                                                         t.data(), t.ld(), static_cast<int>(k));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  merge_tiles<T>(ctx, t, gram);
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
  merge_tiles<T>(ctx, t, gram);
}

template <class T>
void larfb(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> v,
           MatrixView<const T> t, MatrixView<T> c, MatrixView<T> work) {
  const std::int64_t k = v.cols();
  if (c.empty() || k == 0) return;
  DeviceGuard guard(ctx.device);
  cublasHandle_t h = blas(ctx);
  if (side == Side::left) {
    // C := (I - V op(T) V^T) C: W = V^T C; W = op(T) W; C -= V W.
    const std::int64_t m = c.rows(), n = c.cols();
    gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, T(1), v.data(), v.ld(), c.data(), c.ld(), T(0),
         work.data(), work.ld());
    trmm_upper(h, CUBLAS_SIDE_LEFT, to_cublas(op), k, n, T(1), t.data(), t.ld(), work.data(),
               work.ld());
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, T(-1), v.data(), v.ld(), work.data(), work.ld(),
         T(1), c.data(), c.ld());
  } else {
    // C := C (I - V op(T) V^T): W = C V; W = W op(T); C -= W V^T.
    const std::int64_t m = c.rows(), n = c.cols();
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, k, n, T(1), c.data(), c.ld(), v.data(), v.ld(), T(0),
         work.data(), work.ld());
    trmm_upper(h, CUBLAS_SIDE_RIGHT, to_cublas(op), m, k, T(1), t.data(), t.ld(), work.data(),
               work.ld());
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, T(-1), work.data(), work.ld(), v.data(), v.ld(),
         T(1), c.data(), c.ld());
  }
}

GPUQR_INSTANTIATE_BLOCKED_KERNELS(float)
GPUQR_INSTANTIATE_BLOCKED_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
