// CUDA backend of the dense leaf operations (declared in src/core/dense_kernels.hpp):
// cuSOLVER for geqrf/orgqr/ormqr, cuBLAS for trsm, small kernels for the rest. The twin of
// src/cpu/dense_kernels.cpp, with the same semantics.
//
// Everything is enqueued on the context's stream and returns without waiting, except the
// three functions whose result is a host value (abs_diagonal, column_norms, all_finite),
// which synchronize the stream to read it.
//
// cuSOLVER's devInfo is written to the context's scratch and never read: the drivers in
// src/core/ have already checked every argument, so info < 0 cannot happen, and QR has no
// info > 0 outcome. Reading it would cost a synchronization per call.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "src/core/dense_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/trsm_few_rhs.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;
using cuda_detail::to_cuda_int;

constexpr int kThreads = 256;           // per block, a multiple of the warp size
constexpr std::int64_t kMaxGridX = 65535;  // kept modest: the kernels loop over the rest
constexpr std::int64_t kMaxGridY = 65535;  // the hardware limit of gridDim.y

// ---- handles and buffers of a context --------------------------------------------------------

cublasHandle_t blas(const detail::ContextImpl& ctx) {
  return static_cast<cublasHandle_t>(ctx.cublas);
}
cusolverDnHandle_t solver(const detail::ContextImpl& ctx) {
  return static_cast<cusolverDnHandle_t>(ctx.cusolver);
}
int* dev_info(const detail::ContextImpl& ctx) {
  return reinterpret_cast<int*>(static_cast<char*>(ctx.scratch) +
                                cuda_detail::kScratchInfoOffset);
}
/// The finite scan's flag (ContextImpl::finite_host), allocated on the first call.
volatile int* finite_flag(detail::ContextImpl& ctx) {
  if (ctx.finite_host == nullptr) {
    void* host = nullptr;
    GPUQR_CUDA_CHECK(
        cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    void* device = nullptr;
    const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0);
    if (e != cudaSuccess) {
      (void)cudaFreeHost(host);
      GPUQR_CUDA_CHECK(e);
    }
    ctx.finite_host = host;
    ctx.finite_device = static_cast<int*>(device);
  }
  return static_cast<volatile int*>(ctx.finite_host);
}

/// Device room for `count` doubles that will be read back: the scratch when they fit, else
/// the workspace (both only touched by work on this stream, so reuse is ordered).
double* result_buffer(detail::ContextImpl& ctx, std::int64_t count) {
  if (count <= static_cast<std::int64_t>(cuda_detail::kScratchResultDoubles)) {
    return reinterpret_cast<double*>(static_cast<char*>(ctx.scratch) +
                                     cuda_detail::kScratchResultOffset);
  }
  return static_cast<double*>(
      detail::cuda_workspace(ctx, static_cast<std::size_t>(count) * sizeof(double)));
}

/// Copies `count` doubles from the device to a host vector.
std::vector<double> read_back(const detail::ContextImpl& ctx, const double* values,
                              std::int64_t count) {
  std::vector<double> host(static_cast<std::size_t>(count));
  GPUQR_CUDA_CHECK(cudaMemcpyAsync(host.data(), values,
                                   static_cast<std::size_t>(count) * sizeof(double),
                                   cudaMemcpyDeviceToHost, ctx.stream));
  // The caller reads the vector as soon as we return: wait until the copy has landed.
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return host;
}

/// A grid for the 2-D kernels below: x over rows (threads), y over columns (blocks).
dim3 grid_2d(std::int64_t rows, std::int64_t cols) {
  const std::int64_t bx = std::min<std::int64_t>((rows + kThreads - 1) / kThreads, kMaxGridX);
  const std::int64_t by = std::min<std::int64_t>(cols, kMaxGridY);
  return dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
}

/// A grid for a 1-D grid-stride kernel over n items.
unsigned grid_1d(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, kMaxGridX));
}

// ---- device code -----------------------------------------------------------------------------
// Matrices are column-major with leading dimension ld; entry (i, j) is at i + j * ld. The 2-D
// kernels walk rows with threads (coalesced) and columns with blocks, both grid-stride, in
// 64-bit arithmetic so that i + j * ld cannot overflow.

/// dst(i, j) = src(i, j), or with upper_only the upper trapezoid and zeros below it.
template <class T>
__global__ void copy_kernel(const T* __restrict__ src, std::int64_t lds, T* __restrict__ dst,
                            std::int64_t ldd, std::int64_t rows, std::int64_t cols,
                            bool upper_only) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < rows; i += stride) {
      dst[i + j * ldd] = (!upper_only || i <= j) ? src[i + j * lds] : T(0);
    }
  }
}

/// a(i, j) = value.
template <class T>
__global__ void fill_kernel(T* a, std::int64_t lda, std::int64_t rows, std::int64_t cols,
                            T value) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < rows; i += stride) {
      a[i + j * lda] = value;
    }
  }
}

/// a(i, j) = (i == j): the first columns of the identity.
template <class T>
__global__ void identity_kernel(T* a, std::int64_t lda, std::int64_t rows, std::int64_t cols) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < rows; i += stride) {
      a[i + j * lda] = i == j ? T(1) : T(0);
    }
  }
}

/// Sets *flag = 1 when some entry is NaN or Inf (every writer stores the same value, so the
/// race is benign). kFiniteUnroll independent loads per thread in flight: with one, the pass
/// over a 1048576 x 1024 FP64 matrix ran at 1.4 TB/s (H200, ncu, session 15).
constexpr int kFiniteUnroll = 8;
template <class T>
__global__ void nonfinite_kernel(const T* __restrict__ a, std::int64_t lda, std::int64_t rows,
                                 std::int64_t cols, int* flag) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  bool bad = false;
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    const T* col = a + j * lda;
    std::int64_t i = first;
    for (; i + (kFiniteUnroll - 1) * stride < rows; i += kFiniteUnroll * stride) {
      T v[kFiniteUnroll];
#pragma unroll
      for (int u = 0; u < kFiniteUnroll; ++u) v[u] = col[i + u * stride];
#pragma unroll
      for (int u = 0; u < kFiniteUnroll; ++u) bad |= !isfinite(v[u]);
    }
    for (; i < rows; i += stride) bad |= !isfinite(col[i]);
  }
  if (bad) *flag = 1;
}

/// The finite check's grid: blocks over rows of kThreads * kFiniteUnroll entries each, and
/// over columns as many as keep the grid near kFiniteBlocks blocks (the rest by the loops).
constexpr std::int64_t kFiniteBlocks = 8192;
dim3 finite_grid(std::int64_t rows, std::int64_t cols) {
  const std::int64_t per_block = std::int64_t(kThreads) * kFiniteUnroll;
  const std::int64_t bx = std::max<std::int64_t>(
      1, std::min<std::int64_t>((rows + per_block - 1) / per_block, kFiniteBlocks));
  const std::int64_t by = std::max<std::int64_t>(
      1, std::min<std::int64_t>({cols, kFiniteBlocks / bx, kMaxGridY}));
  return dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
}

/// out[i] = |a(i, i)| for i < k, as double.
template <class T>
__global__ void abs_diagonal_kernel(const T* __restrict__ a, std::int64_t lda, std::int64_t k,
                                    double* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < k; i += stride) {
    out[i] = fabs(static_cast<double>(a[i + i * lda]));
  }
}

/// max that propagates NaN (fmax would drop it), so a NaN column gets a NaN norm.
__device__ double nan_max(double a, double b) { return (a != a || a > b) ? a : b; }

/// The block-wide reduction of v by `op` (sum or nan_max), returned to every thread;
/// `identity` fills the lanes past the last warp. blockDim.x must be a multiple of 32 and
/// every thread of the block must call it.
template <class Op>
__device__ double block_reduce(double v, Op op, double identity) {
  __shared__ double partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  __syncthreads();  // a previous call may still be reading `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset >>= 1) {
      v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct MaxOp {
  __device__ double operator()(double a, double b) const { return nan_max(a, b); }
};

/// norms[j] = ||a(:, j)||_2, one block per column (grid-stride over columns).
/// float: the plain sum of squares in double cannot overflow or lose tiny entries (float's
/// range squared fits double's). double: two passes, max |a(i, j)| then the sum of squares
/// scaled by it, as LAPACK's nrm2, so entries near the overflow/underflow limits survive.
template <class T>
__global__ void column_norms_kernel(const T* __restrict__ a, std::int64_t lda,
                                    std::int64_t rows, std::int64_t cols,
                                    double* __restrict__ norms) {
  for (std::int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    const T* col = a + j * lda;
    double scale = 1.0;
    if constexpr (std::is_same_v<T, double>) {
      double m = 0.0;
      for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) m = nan_max(m, fabs(col[i]));
      scale = block_reduce(m, MaxOp{}, 0.0);  // 0 is neutral: values are |x|
      if (scale == 0.0 || isinf(scale)) {  // all zero, or an Inf: the norm is the scale
        if (threadIdx.x == 0) norms[j] = scale;
        continue;  // uniform across the block: `scale` is the same for every thread
      }
    }
    double sum = 0.0;
    for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
      const double x = static_cast<double>(col[i]) / scale;
      sum += x * x;
    }
    sum = block_reduce(sum, SumOp{}, 0.0);
    if (threadIdx.x == 0) norms[j] = scale * sqrt(sum);
  }
}

// ---- typed library calls ----------------------------------------------------------------------
// One overload per precision; the checks name the exact library function on failure.

int geqrf_buffer_size(cusolverDnHandle_t h, int m, int n, float* a, int lda) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, &lwork));
  return lwork;
}
int geqrf_buffer_size(cusolverDnHandle_t h, int m, int n, double* a, int lda) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, &lwork));
  return lwork;
}
void geqrf_call(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau, float* work,
                int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(cusolverDnSgeqrf(h, m, n, a, lda, tau, work, lwork, info));
}
void geqrf_call(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau,
                double* work, int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(cusolverDnDgeqrf(h, m, n, a, lda, tau, work, lwork, info));
}

int orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                      const float* tau) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, &lwork));
  return lwork;
}
int orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                      const double* tau) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, &lwork));
  return lwork;
}
void orgqr_call(cusolverDnHandle_t h, int m, int n, int k, float* a, int lda, const float* tau,
                float* work, int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(cusolverDnSorgqr(h, m, n, k, a, lda, tau, work, lwork, info));
}
void orgqr_call(cusolverDnHandle_t h, int m, int n, int k, double* a, int lda,
                const double* tau, double* work, int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(cusolverDnDorgqr(h, m, n, k, a, lda, tau, work, lwork, info));
}

int ormqr_buffer_size(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans,
                      int m, int n, int k, const float* a, int lda, const float* tau,
                      const float* c, int ldc) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(
      cusolverDnSormqr_bufferSize(h, side, trans, m, n, k, a, lda, tau, c, ldc, &lwork));
  return lwork;
}
int ormqr_buffer_size(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans,
                      int m, int n, int k, const double* a, int lda, const double* tau,
                      const double* c, int ldc) {
  int lwork = 0;
  GPUQR_CUSOLVER_CHECK(
      cusolverDnDormqr_bufferSize(h, side, trans, m, n, k, a, lda, tau, c, ldc, &lwork));
  return lwork;
}
void ormqr_call(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans, int m,
                int n, int k, const float* a, int lda, const float* tau, float* c, int ldc,
                float* work, int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(
      cusolverDnSormqr(h, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info));
}
void ormqr_call(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans, int m,
                int n, int k, const double* a, int lda, const double* tau, double* c, int ldc,
                double* work, int lwork, int* info) {
  GPUQR_CUSOLVER_CHECK(
      cusolverDnDormqr(h, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info));
}

// The _64 variants take 64-bit sizes, so trsm needs no int range check.
void trsm_call(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,
               cublasDiagType_t diag, std::int64_t m, std::int64_t n, const float* a,
               std::int64_t lda, float* b, std::int64_t ldb) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(cublasStrsm_64(h, CUBLAS_SIDE_LEFT, uplo, trans, diag, m, n, &one, a, lda,
                                    b, ldb));
}
void trsm_call(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,
               cublasDiagType_t diag, std::int64_t m, std::int64_t n, const double* a,
               std::int64_t lda, double* b, std::int64_t ldb) {
  const double one = 1.0;
  GPUQR_CUBLAS_CHECK(cublasDtrsm_64(h, CUBLAS_SIDE_LEFT, uplo, trans, diag, m, n, &one, a, lda,
                                    b, ldb));
}

/// The workspace for `lwork` elements of T (cuSOLVER counts its workspace in elements).
template <class T>
T* solver_workspace(detail::ContextImpl& ctx, int lwork) {
  return static_cast<T*>(
      detail::cuda_workspace(ctx, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T)));
}

cublasOperation_t to_cublas(Op op) { return op == Op::trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

// ---- the leaf operations ---------------------------------------------------------------------

/// A = QR in place on the stream; tau receives min(m, n) scalars.
template <class T>
void geqrf(detail::ContextImpl& ctx, MatrixView<T> a, VectorView<T> tau) {
  if (a.empty()) return;
  const int m = to_cuda_int(a.rows(), "m", "cusolverDn geqrf");
  const int n = to_cuda_int(a.cols(), "n", "cusolverDn geqrf");
  const int lda = to_cuda_int(a.ld(), "lda", "cusolverDn geqrf");
  DeviceGuard guard(ctx.device);
  const int lwork = geqrf_buffer_size(solver(ctx), m, n, a.data(), lda);
  T* work = solver_workspace<T>(ctx, lwork);
  geqrf_call(solver(ctx), m, n, a.data(), lda, tau.data(), work, lwork, dev_info(ctx));
}

/// Q's first n columns from k reflectors, in place on the stream.
template <class T>
void orgqr(detail::ContextImpl& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau) {
  if (a.empty()) return;
  const int m = to_cuda_int(a.rows(), "m", "cusolverDn orgqr");
  const int n = to_cuda_int(a.cols(), "n", "cusolverDn orgqr");
  const int kk = to_cuda_int(k, "k", "cusolverDn orgqr");
  const int lda = to_cuda_int(a.ld(), "lda", "cusolverDn orgqr");
  DeviceGuard guard(ctx.device);
  if (kk == 0) {
    // No reflectors: Q = I, as LAPACK's orgqr gives; done here rather than relying on
    // cuSOLVER to accept k = 0.
    identity_kernel<T><<<grid_2d(a.rows(), a.cols()), kThreads, 0, ctx.stream>>>(
        a.data(), a.ld(), a.rows(), a.cols());
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    return;
  }
  const int lwork = orgqr_buffer_size(solver(ctx), m, n, kk, a.data(), lda, tau.data());
  T* work = solver_workspace<T>(ctx, lwork);
  orgqr_call(solver(ctx), m, n, kk, a.data(), lda, tau.data(), work, lwork, dev_info(ctx));
}

/// C := op(Q) C or C op(Q) on the stream; a holds the k = a.cols() reflectors.
template <class T>
void ormqr(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> a,
           VectorView<const T> tau, MatrixView<T> c) {
  if (c.empty() || a.cols() == 0) return;  // no reflectors: Q = I, as LAPACK's quick return
  // As LAPACK: m x n is C's shape, k the number of reflectors; a is (m or n) x k.
  const int m = to_cuda_int(c.rows(), "m", "cusolverDn ormqr");
  const int n = to_cuda_int(c.cols(), "n", "cusolverDn ormqr");
  const int k = to_cuda_int(a.cols(), "k", "cusolverDn ormqr");
  const int lda = to_cuda_int(a.ld(), "lda", "cusolverDn ormqr");
  const int ldc = to_cuda_int(c.ld(), "ldc", "cusolverDn ormqr");
  const cublasSideMode_t s = side == Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  const cublasOperation_t t = to_cublas(op);
  DeviceGuard guard(ctx.device);
  const int lwork =
      ormqr_buffer_size(solver(ctx), s, t, m, n, k, a.data(), lda, tau.data(), c.data(), ldc);
  T* work = solver_workspace<T>(ctx, lwork);
  ormqr_call(solver(ctx), s, t, m, n, k, a.data(), lda, tau.data(), c.data(), ldc, work, lwork,
             dev_info(ctx));
}

/// B := op(A)^{-1} B on the stream (left side, alpha = 1).
template <class T>
void trsm(detail::ContextImpl& ctx, Uplo uplo, Op op, Diag diag, MatrixView<const T> a,
          MatrixView<T> b) {
  if (b.empty()) return;
  // R x = Q^T b with few right-hand sides: our back substitution (src/cuda/trsm_few_rhs.cu).
  if (uplo == Uplo::upper && op == Op::no_trans && trsm_upper_few_rhs<T>(ctx, diag, a, b)) return;
  DeviceGuard guard(ctx.device);
  trsm_call(blas(ctx), uplo == Uplo::upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
            to_cublas(op), diag == Diag::unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT,
            b.rows(), b.cols(), a.data(), a.ld(), b.data(), b.ld());
}

/// |a(i, i)| for i < min(m, n), on the host; synchronizes.
template <class T>
std::vector<double> abs_diagonal(detail::ContextImpl& ctx, MatrixView<const T> a) {
  const std::int64_t k = std::min(a.rows(), a.cols());
  if (k == 0) return {};
  DeviceGuard guard(ctx.device);
  double* out = result_buffer(ctx, k);
  abs_diagonal_kernel<T><<<grid_1d(k), kThreads, 0, ctx.stream>>>(a.data(), a.ld(), k, out);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return read_back(ctx, out, k);
}

/// ||a(:, j)||_2 for each column, on the host; synchronizes.
template <class T>
std::vector<double> column_norms(detail::ContextImpl& ctx, MatrixView<const T> a) {
  if (a.rows() == 0 || a.cols() == 0) return std::vector<double>(static_cast<std::size_t>(a.cols()), 0.0);
  DeviceGuard guard(ctx.device);
  double* out = result_buffer(ctx, a.cols());
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(a.cols(), kMaxGridX));
  column_norms_kernel<T>
      <<<blocks, kThreads, 0, ctx.stream>>>(a.data(), a.ld(), a.rows(), a.cols(), out);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return read_back(ctx, out, a.cols());
}

/// abs_diagonal(a), then column_norms(b): both kernels write one buffer, read back once.
template <class T>
std::vector<double> diagonal_and_norms(detail::ContextImpl& ctx, MatrixView<const T> a,
                                       MatrixView<const T> b) {
  const std::int64_t k = std::min(a.rows(), a.cols()), cols = b.cols();
  if (k + cols == 0) return {};
  DeviceGuard guard(ctx.device);
  double* out = result_buffer(ctx, k + cols);
  if (k > 0) {
    abs_diagonal_kernel<T><<<grid_1d(k), kThreads, 0, ctx.stream>>>(a.data(), a.ld(), k, out);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  }
  if (cols > 0 && b.rows() == 0) {
    GPUQR_CUDA_CHECK(cudaMemsetAsync(out + k, 0, static_cast<std::size_t>(cols) * sizeof(double),
                                     ctx.stream));
  } else if (cols > 0) {
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(cols, kMaxGridX));
    column_norms_kernel<T>
        <<<blocks, kThreads, 0, ctx.stream>>>(b.data(), b.ld(), b.rows(), cols, out + k);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  }
  return read_back(ctx, out, k + cols);
}

/// True when no entry is NaN or Inf; synchronizes.
template <class T>
bool all_finite(detail::ContextImpl& ctx, MatrixView<const T> a) {
  if (a.empty()) return true;
  DeviceGuard guard(ctx.device);
  // The kernel writes the flag in host memory (mapped): no memset and no copy back, only the
  // wait (the scan of a 1024 x 1024 matrix took ~30 us with both on an H200; session 34).
  // The previous scan on this context has finished (it was waited for), so nothing else
  // writes the flag now.
  volatile int* flag = finite_flag(ctx);
  *flag = 0;
  nonfinite_kernel<T><<<finite_grid(a.rows(), a.cols()), kThreads, 0, ctx.stream>>>(
      a.data(), a.ld(), a.rows(), a.cols(), ctx.finite_device);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  // The flag decides what the caller does next on the host: wait for it.
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return *flag == 0;
}

/// dst := src on the stream (both device memory, same shape).
template <class T>
void copy(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t max_pitch = std::numeric_limits<int>::max();
  const std::int64_t lds_bytes = src.ld() * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t ldd_bytes = dst.ld() * static_cast<std::int64_t>(sizeof(T));
  if (lds_bytes <= max_pitch && ldd_bytes <= max_pitch) {
    GPUQR_CUDA_CHECK(cudaMemcpy2DAsync(dst.data(), static_cast<std::size_t>(ldd_bytes),
                                       src.data(), static_cast<std::size_t>(lds_bytes),
                                       static_cast<std::size_t>(src.rows()) * sizeof(T),
                                       static_cast<std::size_t>(src.cols()),
                                       cudaMemcpyDeviceToDevice, ctx.stream));
    return;
  }
  // Pitches beyond what cudaMemcpy2D accepts (cudaDevAttrMaxPitch): a kernel has no limit.
  copy_kernel<T><<<grid_2d(src.rows(), src.cols()), kThreads, 0, ctx.stream>>>(
      src.data(), src.ld(), dst.data(), dst.ld(), src.rows(), src.cols(), false);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

/// dst := src's upper trapezoid, zeros below the diagonal, on the stream.
template <class T>
void copy_upper(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  DeviceGuard guard(ctx.device);
  copy_kernel<T><<<grid_2d(src.rows(), src.cols()), kThreads, 0, ctx.stream>>>(
      src.data(), src.ld(), dst.data(), dst.ld(), src.rows(), src.cols(), true);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

/// Every entry of a := value, on the stream.
template <class T>
void fill(detail::ContextImpl& ctx, MatrixView<T> a, T value) {
  if (a.empty()) return;
  DeviceGuard guard(ctx.device);
  fill_kernel<T><<<grid_2d(a.rows(), a.cols()), kThreads, 0, ctx.stream>>>(
      a.data(), a.ld(), a.rows(), a.cols(), value);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

GPUQR_INSTANTIATE_DENSE_KERNELS(float)
GPUQR_INSTANTIATE_DENSE_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
