// CUDA backend of the CholeskyQR leaves (src/core/cholqr_kernels.hpp): the Gram matrix and
// Q = A R^{-1} by cuBLAS GEMM (never SYRK/TRSM on the tall matrix: both run far below the
// memory bandwidth on these shapes; TRSM is kept for ill-conditioned R, where the explicit
// inverse would cost accuracy), the n x n Cholesky and R^{-1} by one block for n <= 128
// (src/cuda/cholesky_small.cu), else by cuSOLVER potrf and a TRSM on the identity (n x n
// only), and small one-block kernels for the status (shift, norms,
// breakdown) so that nothing here waits for the GPU. orhr_col is in src/cuda/orhr_col.cu.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "src/core/blocked_kernels.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/cholesky_small.hpp"
#include "src/cuda/cholqr_blas.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "src/cuda/long_gemm.hpp"
#include "src/cuda/reduce_ops.cuh"
#include "src/cuda/triangle_gemm.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;
using cholqr_detail::grid_2d;
using cholqr_detail::trsm;
using cuda_detail::DeviceGuard;
using cuda_detail::to_cuda_int;

constexpr int kThreads = 256;

cusolverDnHandle_t solver(const detail::ContextImpl& ctx) {
  return static_cast<cusolverDnHandle_t>(ctx.cusolver);
}
int* dev_info(const detail::ContextImpl& ctx) {
  return reinterpret_cast<int*>(static_cast<char*>(ctx.scratch) +
                                cuda_detail::kScratchInfoOffset);
}

cusolverStatus_t potrf_size(cusolverDnHandle_t h, int n, float* a, int lda, int* lw) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, lw);
}
cusolverStatus_t potrf_size(cusolverDnHandle_t h, int n, double* a, int lda, int* lw) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, lw);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* a, int lda, float* w, int lw,
                       int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, w, lw, info);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* a, int lda, double* w, int lw,
                       int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, lda, w, lw, info);
}

// ---- device code ----------------------------------------------------------------------------

/// Block-wide reduction returned to every thread (blockDim.x a multiple of 32, <= 1024);
/// `identity` fills the lanes past the last warp.
template <class Op>
__device__ double block_reduce(double v, Op op, double identity) {
  __shared__ double partial[32];
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // an earlier call may still read `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x >> 5;
    v = lane < warps ? partial[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

/// Status of the Gram matrix before factoring (||G - I||_F, trace), then G += s I with
/// s = shift_factor * trace: partial sums by kStatusBlocks blocks (a column per block and
/// stride), then one block. Session 21 (ncu, H100): the one-block kernel took 0.6 ms on
/// n = 1024 at base clocks, twice per CholeskyQR2.
constexpr int kStatusBlocks = 128;
constexpr int kGramParts = 2;  // ||G - I||_F^2, trace

template <class T>
__global__ void gram_status_partial_kernel(const T* g, std::int64_t ldg, std::int64_t n,
                                           double* part) {
  double off = 0.0, tr = 0.0;
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const double v = static_cast<double>(g[i + j * ldg]);
      const double e = v - (i == j ? 1.0 : 0.0);
      off += e * e;
      if (i == j) tr += v;
    }
  off = block_reduce(off, SumOp(), 0.0);
  tr = block_reduce(tr, SumOp(), 0.0);
  if (threadIdx.x == 0) {
    part[kGramParts * blockIdx.x] = off;
    part[kGramParts * blockIdx.x + 1] = tr;
  }
}

template <class T>
__global__ void gram_status_finish_kernel(T* g, std::int64_t ldg, std::int64_t n,
                                          double shift_factor, const double* part, int parts,
                                          double* status) {
  double off = 0.0, tr = 0.0;
  for (int b = threadIdx.x; b < parts; b += blockDim.x) {
    off += part[kGramParts * b];
    tr += part[kGramParts * b + 1];
  }
  off = block_reduce(off, SumOp(), 0.0);
  tr = block_reduce(tr, SumOp(), 0.0);
  // No shift asked, none added (a NaN trace must not turn "none" into NaN).
  const double shift = shift_factor != 0.0 ? shift_factor * tr : 0.0;
  if (threadIdx.x == 0) {
    for (int k = 0; k < detail::kStatusSize; ++k) status[k] = 0.0;
    status[detail::kStatusOffset] = sqrt(off);
    status[detail::kStatusTrace] = tr;
    status[detail::kStatusShift] = shift;
  }
  if (shift != 0.0)
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
      g[i + i * ldg] = static_cast<T>(static_cast<double>(g[i + i * ldg]) + shift);
}

/// max that keeps a NaN from either side (a NaN row sum must not read as a small one).
struct NanMaxOp {
  __device__ double operator()(double a, double b) const { return (a > b || a != a) ? a : b; }
};

/// gram_status: ||G - I||_F^2, trace and the largest column sum of |G - I| (G symmetric:
/// the row sums), partial results by blocks (a column per block and stride), then one block.
constexpr int kRowSumParts = 3;

template <class T>
__global__ void gram_row_sum_partial_kernel(const T* g, std::int64_t ldg, std::int64_t n,
                                            double* part) {
  double off = 0.0, tr = 0.0, most = 0.0;
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {  // uniform across the block
    double column = 0.0;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const double v = static_cast<double>(g[i + j * ldg]);
      const double e = v - (i == j ? 1.0 : 0.0);
      off += e * e;
      column += fabs(e);
      if (i == j) tr += v;
    }
    most = NanMaxOp()(most, block_reduce(column, SumOp(), 0.0));
  }
  off = block_reduce(off, SumOp(), 0.0);
  tr = block_reduce(tr, SumOp(), 0.0);
  if (threadIdx.x == 0) {
    part[kRowSumParts * blockIdx.x] = off;
    part[kRowSumParts * blockIdx.x + 1] = tr;
    part[kRowSumParts * blockIdx.x + 2] = most;
  }
}

__global__ void gram_row_sum_finish_kernel(const double* part, int parts, double* status) {
  double off = 0.0, tr = 0.0, most = 0.0;
  for (int b = threadIdx.x; b < parts; b += blockDim.x) {
    off += part[kRowSumParts * b];
    tr += part[kRowSumParts * b + 1];
    most = NanMaxOp()(most, part[kRowSumParts * b + 2]);
  }
  off = block_reduce(off, SumOp(), 0.0);
  tr = block_reduce(tr, SumOp(), 0.0);
  most = block_reduce(most, NanMaxOp(), 0.0);
  if (threadIdx.x == 0) {
    for (int k = 0; k < detail::kStatusSize; ++k) status[k] = 0.0;
    status[detail::kStatusOffset] = sqrt(off);
    status[detail::kStatusTrace] = tr;
    status[detail::kStatusRowSum] = most;
  }
}

/// After potrf and the inverse: zeros below both diagonals, ||R^{-1}||_F, min/max |R(i,i)|,
/// and the breakdown entry (potrf's info, or n + 1 when R^{-1} is not finite): partial
/// results by kStatusBlocks blocks, then one block.
constexpr int kPostParts = 4;  // ||R^{-1}||_F^2, not finite, min |R(i,i)|, max |R(i,i)|

template <class T>
__global__ void cholesky_post_partial_kernel(T* r, std::int64_t ldr, T* rinv, std::int64_t ldi,
                                             std::int64_t n, double* part) {
  double inv = 0.0, bad = 0.0, lo = INFINITY, hi = 0.0;
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      if (i > j) {
        r[i + j * ldr] = T(0);
        rinv[i + j * ldi] = T(0);
        continue;
      }
      const double v = static_cast<double>(rinv[i + j * ldi]);
      if (!isfinite(v)) bad = 1.0;
      inv += v * v;
      if (i == j) {
        const double d = fabs(static_cast<double>(r[i + i * ldr]));
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
      }
    }
  inv = block_reduce(inv, SumOp(), 0.0);
  bad = block_reduce(bad, MaxOp(), 0.0);
  lo = block_reduce(lo, MinOp(), INFINITY);
  hi = block_reduce(hi, MaxOp(), 0.0);
  if (threadIdx.x == 0) {
    double* p = part + kPostParts * blockIdx.x;
    p[0] = inv;
    p[1] = bad;
    p[2] = lo;
    p[3] = hi;
  }
}

__global__ void cholesky_post_finish_kernel(std::int64_t n, const double* part, int parts,
                                            const int* info, double* status) {
  double inv = 0.0, bad = 0.0, lo = INFINITY, hi = 0.0;
  for (int b = threadIdx.x; b < parts; b += blockDim.x) {
    const double* p = part + kPostParts * b;
    inv += p[0];
    bad = fmax(bad, p[1]);
    lo = fmin(lo, p[2]);
    hi = fmax(hi, p[3]);
  }
  inv = block_reduce(inv, SumOp(), 0.0);
  bad = block_reduce(bad, MaxOp(), 0.0);
  lo = block_reduce(lo, MinOp(), INFINITY);
  hi = block_reduce(hi, MaxOp(), 0.0);
  if (threadIdx.x == 0) {
    const int k = *info;
    status[detail::kStatusBreakdown] =
        k > 0 ? double(k) : (bad != 0.0 || !isfinite(inv) ? double(n + 1) : 0.0);
    status[detail::kStatusInverseNorm] = sqrt(inv);
    status[detail::kStatusMinDiag] = lo;
    status[detail::kStatusMaxDiag] = hi;
  }
}

/// a(i, j) := d_i r(i, j) on and above the diagonal; tau_j := t(j, j).
template <class T>
__global__ void finish_geqrf_kernel(const T* r, std::int64_t ldr, const T* d, const T* t,
                                    std::int64_t ldt, T* a, std::int64_t lda, T* tau,
                                    std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= j;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      a[i + j * lda] = d[i] * r[i + j * ldr];
      if (i == j) tau[j] = t[j + j * ldt];
    }
}

cublasOperation_t to_cublas(Op op) { return op == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The Gram matrix of m x n (m huge, n small) by hand-made split-K (long_gemm.hpp): cuBLAS's
// single GEMM of shape n x n x m has only (n / tile)^2 output tiles to spread over the GPU.
// Its own split rule (gram_split, measured for the Gram matrix: n <= 128 only).
constexpr std::int64_t kMinBlockRows = 4096;
constexpr std::int64_t kMaxBlocks = 128;
constexpr std::size_t kPartialBytes = std::size_t(64) << 20;
constexpr std::int64_t kMaxSplitCols = 128;
// The W = A X chunk of gram_of_product: small enough to stay in L2 between the GEMM that
// writes it and the one that reads it.
constexpr std::size_t kChunkBytes = std::size_t(24) << 20;

struct GramSplit {
  std::int64_t rows = 0;    // rows per block, a multiple of 256
  std::int64_t blocks = 0;  // ceil(m / rows); 1 means one plain GEMM
};

/// GPUQR_GRAM_SPLIT=0 turns the split off (one plain GEMM), for measurements.
bool gram_split_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GPUQR_GRAM_SPLIT");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

GramSplit gram_split(std::int64_t m, std::int64_t n, std::size_t elem) {
  if (!gram_split_enabled()) return {std::max<std::int64_t>(m, 1), 1};
  const std::size_t one = std::size_t(n) * std::size_t(n) * elem;
  const std::int64_t max_blocks = std::max<std::int64_t>(
      1, std::min<std::int64_t>(kMaxBlocks, static_cast<std::int64_t>(kPartialBytes / one)));
  const std::int64_t rows = ceil_div(std::max(kMinBlockRows, ceil_div(m, max_blocks)), 256) * 256;
  return {rows, ceil_div(m, rows)};
}

}  // namespace

template <class T>
void gram(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<T> g) {
  const std::int64_t n = a.cols();
  if (n == 0) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t m = a.rows();
  if (gram_kernel_wanted(m, n, static_cast<int>(sizeof(T)))) {  // one read of A by a persistent grid (gram_kernels.cu)
    streamed_gram<T>(ctx, a, nullptr, 0, g);
    return;
  }
  // Measured on the H200 (m = 2^20, FP64): the split beats one GEMM for n <= 128 (explicit Q
  // at n = 64: 1.20 ms against 1.34) and loses above (n = 512: 47.4 against 41.2 ms).
  const GramSplit split = n <= kMaxSplitCols ? gram_split(m, n, sizeof(T))
                                             : GramSplit{std::max<std::int64_t>(m, 1), 1};
  if (split.blocks <= 1 && n > kTriangleBlock) {  // the upper block columns, mirrored
    gram_blocked<T>(ctx, a.data(), a.ld(), m, n, g.data(), g.ld());
    return;
  }
  if (split.blocks <= 1) {  // k = m = 0 included: beta = 0 writes G = 0
    gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, T(1), a.data(), a.ld(), a.data(), a.ld(),
         T(0), g.data(), g.ld());
    return;
  }
  T* parts = static_cast<T*>(
      detail::cuda_workspace(ctx, std::size_t(split.blocks) * n * n * sizeof(T)));
  partial_products<T>(ctx, n, n, m, a.data(), a.ld(), a.data(), a.ld(), split.rows, parts, 0);
  sum_partials<T>(ctx, parts, split.blocks, n, n, g.data(), g.ld());
}

template <class T>
bool gram_low(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<T> g) {
  if (a.cols() == 0) return true;
  DeviceGuard guard(ctx.device);
  if constexpr (std::is_same_v<T, double>) {
    // One read of A (gram_low_streamed.cu) where the conversion path would read it, write its
    // FP32 copy and read that again.
    if (streamed_gram_low_wanted(a.rows(), a.cols())) {
      streamed_gram_low(ctx, a, g);
      return true;
    }
  }
  return gram_low_tf32(ctx, a.data(), a.ld(), a.rows(), a.cols(), g.data(), g.ld());
}

template <class T>
bool gram_low_wanted(detail::ContextImpl&, std::int64_t m, std::int64_t n) {
  // Below 256 columns the Gram matrix is the streamed kernels' (n <= 128: memory-bound, one
  // read of A) or cheap next to the FP64 conversion pass.
  return m > 0 && n >= low_gram_from();
}

namespace {

/// gram_of_product's body; x_upper: X is upper triangular (gram_of_upper_product), which the
/// streamed FP64 kernel's skewed pass needs.
template <class T>
void product_gram(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,
                  MatrixView<T> g, bool x_upper) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return;
  DeviceGuard guard(ctx.device);
  if (m == 0) {
    laset<T>(ctx, T(0), T(0), g);
    return;
  }
  if (gram_kernel_wanted(m, n, static_cast<int>(sizeof(T)))) {  // A X formed chunk by chunk in shared memory, never stored
    streamed_gram<T>(ctx, a, x.data(), x.ld(), g, x_upper);
    return;
  }
  // No split here, and so one chunk of m rows (W = A X whole in the leaf workspace): measured
  // on the H200 faster than the chunked, split form (R-only 1M x 64 FP64: 2.01 ms against 3.19).
  const GramSplit split{m, 1};
  const std::int64_t per_chunk = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(kChunkBytes / (std::size_t(split.rows) * n * sizeof(T))));
  const std::int64_t chunk = std::min(split.rows * per_chunk, split.rows * split.blocks);
  const std::size_t chunk_elems = std::size_t(chunk) * std::size_t(n);
  const std::size_t part_elems = split.blocks > 1 ? std::size_t(split.blocks) * n * n : 0;
  // One leaf-workspace request for both (the chunk's size is a multiple of 256 elements, so
  // the partials after it stay aligned).
  T* w = static_cast<T*>(detail::cuda_workspace(ctx, (chunk_elems + part_elems) * sizeof(T)));
  T* parts = w + chunk_elems;
  for (std::int64_t s = 0; s < m; s += chunk) {
    const std::int64_t h = std::min(chunk, m - s);
    gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, h, n, n, T(1), a.data() + s, a.ld(), x.data(),
         x.ld(), T(0), w, chunk);
    if (split.blocks <= 1) {  // then chunk >= m: this is the only chunk
      gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, n, n, h, T(1), w, chunk, w, chunk, T(0),
           g.data(), g.ld());
    } else {
      partial_products<T>(ctx, n, n, h, w, chunk, w, chunk, split.rows, parts, s / split.rows);
    }
  }
  if (split.blocks > 1) sum_partials<T>(ctx, parts, split.blocks, n, n, g.data(), g.ld());
}

}  // namespace

template <class T>
void gram_of_product(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,
                     MatrixView<T> g) {
  product_gram<T>(ctx, a, x, g, false);
}

template <class T>
void gram_of_upper_product(detail::ContextImpl& ctx, MatrixView<const T> a,
                           MatrixView<const T> x, MatrixView<T> g) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (m == 0 || n <= kTriangleBlock || gram_kernel_wanted(m, n, static_cast<int>(sizeof(T)))) {
    product_gram<T>(ctx, a, x, g, true);
    return;
  }
  DeviceGuard guard(ctx.device);
  // W = A X whole in the leaf workspace (as gram_of_product's one chunk), both products by
  // block columns: X's zero blocks and G's lower half are skipped.
  T* w = static_cast<T*>(detail::cuda_workspace(ctx, std::size_t(m) * std::size_t(n) * sizeof(T)));
  upper_product_blocked<T>(ctx, a.data(), a.ld(), m, n, x.data(), x.ld(), w, m);
  gram_blocked<T>(ctx, w, m, m, n, g.data(), g.ld());
}

template <class T>
void cholesky_inverse(detail::ContextImpl& ctx, MatrixView<T> g, MatrixView<T> rinv,
                      double shift_factor, VectorView<double> status) {
  const std::int64_t n = g.rows();
  DeviceGuard guard(ctx.device);
  if (n == 0) {
    GPUQR_CUDA_CHECK(cudaMemsetAsync(status.data(), 0, detail::kStatusSize * sizeof(double),
                                     ctx.stream));
    return;
  }
  if (small_cholesky_wanted(n)) {  // one launch instead of a dozen (cholesky_small.hpp)
    small_cholesky_inverse<T>(ctx, g, rinv, shift_factor, status);
    return;
  }
  const int ni = to_cuda_int(n, "n", "cholesky_inverse");
  const int ldg = to_cuda_int(g.ld(), "ldg", "cholesky_inverse");
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(potrf_size(solver(ctx), ni, g.data(), ldg, &lwork));
  // One leaf-workspace request: potrf's work, then the status kernels' partial sums.
  const int blocks = static_cast<int>(std::min<std::int64_t>(n, kStatusBlocks));
  const std::size_t work_bytes =
      (static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T) + 255) / 256 * 256;
  char* base = static_cast<char*>(detail::cuda_workspace(
      ctx, work_bytes + std::size_t(kStatusBlocks) * kPostParts * sizeof(double)));
  T* work = reinterpret_cast<T*>(base);
  double* part = reinterpret_cast<double*>(base + work_bytes);
  gram_status_partial_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(g.data(), g.ld(), n, part);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  gram_status_finish_kernel<T><<<1, kThreads, 0, ctx.stream>>>(g.data(), g.ld(), n, shift_factor,
                                                               part, blocks, status.data());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  // devInfo > 0 is the breakdown we report; the post kernel copies it into the status.
  GPUQR_CUSOLVER_CHECK(potrf(solver(ctx), ni, g.data(), ldg, work, lwork, dev_info(ctx)));
  laset<T>(ctx, T(0), T(1), rinv);
  trsm(blas(ctx), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n,
       n, T(1), g.data(), g.ld(), rinv.data(), rinv.ld());
  cholesky_post_partial_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(
      g.data(), g.ld(), rinv.data(), rinv.ld(), n, part);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  cholesky_post_finish_kernel<<<1, kThreads, 0, ctx.stream>>>(n, part, blocks, dev_info(ctx),
                                                              status.data());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void gram_status(detail::ContextImpl& ctx, MatrixView<const T> g, VectorView<double> status) {
  const std::int64_t n = g.rows();
  DeviceGuard guard(ctx.device);
  const int blocks =
      static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(n, kStatusBlocks)));
  double* part = static_cast<double*>(
      detail::cuda_workspace(ctx, std::size_t(blocks) * kRowSumParts * sizeof(double)));
  gram_row_sum_partial_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(g.data(), g.ld(), n, part);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  gram_row_sum_finish_kernel<<<1, kThreads, 0, ctx.stream>>>(part, blocks, status.data());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void multiply(detail::ContextImpl& ctx, Op op_a, MatrixView<const T> a, MatrixView<const T> b,
              MatrixView<T> c, double alpha) {
  if (c.empty()) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t k = op_a == Op::trans ? a.rows() : a.cols();
  // k = 0 still runs: GEMM with beta = 0 writes C = 0.
  gemm(blas(ctx), to_cublas(op_a), CUBLAS_OP_N, c.rows(), c.cols(), k, static_cast<T>(alpha),
       a.data(), a.ld(), b.data(), std::max<std::int64_t>(b.ld(), 1), T(0), c.data(), c.ld());
}

template <class T>
void multiply_in_place(detail::ContextImpl& ctx, MatrixView<T> a, MatrixView<const T> x) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (m == 0 || n == 0) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t chunk = std::min<std::int64_t>(
      m, std::max<std::int64_t>(256, static_cast<std::int64_t>(kChunkBytes / (n * sizeof(T)))));
  T* w = static_cast<T*>(detail::cuda_workspace(ctx, std::size_t(chunk) * n * sizeof(T)));
  for (std::int64_t s = 0; s < m; s += chunk) {
    const std::int64_t h = std::min(chunk, m - s);
    gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, h, n, n, T(1), a.data() + s, a.ld(), x.data(),
         x.ld(), T(0), w, chunk);
    // The chunk was just written, so it is read back from L2.
    GPUQR_CUDA_CHECK(cudaMemcpy2DAsync(a.data() + s, a.ld() * sizeof(T), w, chunk * sizeof(T),
                                       h * sizeof(T), n, cudaMemcpyDeviceToDevice, ctx.stream));
  }
}

template <class T>
void trsm_right_upper(detail::ContextImpl& ctx, MatrixView<const T> r, MatrixView<T> b) {
  if (b.empty()) return;
  DeviceGuard guard(ctx.device);
  trsm(blas(ctx), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
       b.rows(), b.cols(), T(1), r.data(), r.ld(), b.data(), b.ld());
}

template <class T>
void finish_geqrf(detail::ContextImpl& ctx, MatrixView<const T> r, VectorView<const T> d,
                  MatrixView<const T> t, MatrixView<T> a, VectorView<T> tau) {
  const std::int64_t n = r.cols();
  if (n == 0) return;
  DeviceGuard guard(ctx.device);
  finish_geqrf_kernel<T><<<grid_2d(n, n, kThreads), kThreads, 0, ctx.stream>>>(
      r.data(), r.ld(), d.data(), t.data(), t.ld(), a.data(), a.ld(), tau.data(), n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

GPUQR_INSTANTIATE_CHOLQR_KERNELS(float)
GPUQR_INSTANTIATE_CHOLQR_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
